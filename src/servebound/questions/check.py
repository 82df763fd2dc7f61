"""`servebound check`: measured runs against their ceilings. Each run's ceiling is computed at the run's
own setting (``runs.ceiling.check_run``); runs that differ only in where they came from share one."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from servebound.runs.ceiling import check_run


def checked_runs(hardware: str, model: str, runs: list[Any], overhead_gb: float | None) -> list[Any]:
    """Each run checked; runs that differ only in where they came from share one ceiling computation
    (a 60,000-record file of a few settings computes a few ceilings)."""
    done: dict[Any, Any] = {}
    out = []
    for r in runs:
        key = replace(r, source="")
        if key not in done:
            done[key] = check_run(hardware, model, key, overhead_gb=overhead_gb)
        out.append(replace(done[key], run=r))
    return out
