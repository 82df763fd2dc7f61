"""Every group's fitted band, precomputed: what a ceiling's band is read from at run time.

Fitting a group means evaluating each of its reported runs (a decode or prefill per run, after reading
and validating ``reported_runs.toml``): about half a second for the catalog, more than a whole cold
decode. The fits change only when the runs or the ceilings do, so ``scripts/build_snapshot.py`` writes
them to ``catalog/data/snapshot/bands.json`` (``runs.band_fit.band_table_text``) and a band beside a
ceiling is then one lookup and three quantiles: cheap enough for every row of a ranking.
``tests/test_band_table.py`` checks the file equals a refit, so a run or a ceiling that moves a band
without a rebuild fails there.

The file: ``{"groups": [{engine, hardware_class, phase, regime, run_ids, slope, fixed_s, residuals},
...]}`` in group order, ``slope`` null where the group has fewer runs than a band needs.
"""

from __future__ import annotations

import json
from functools import cache
from typing import Any, NamedTuple

from servebound.core.band import TimeModel
from servebound.inputs import package_data

#: Where the table lives, below the ``servebound.catalog`` package (beside the catalog snapshot).
TABLE = ("data", "snapshot", "bands.json")

GroupKey = tuple[str, str, str, str]


class FittedGroup(NamedTuple):
    """One group's runs and fitted time model (None under the runs a band needs). A named tuple: made
    when a decode first asks for a band, where a dataclass would cost the cold command its creation."""

    engine: str
    hardware_class: str
    phase: str
    regime: str
    run_ids: tuple[str, ...]
    model: TimeModel | None

    @property
    def runs(self) -> int:
        return len(self.run_ids)


def group_json(group: FittedGroup) -> dict[str, Any]:
    """A group as the table writes it."""
    model = group.model
    return {
        "engine": group.engine,
        "hardware_class": group.hardware_class,
        "phase": group.phase,
        "regime": group.regime,
        "run_ids": list(group.run_ids),
        "slope": None if model is None else model.slope,
        "fixed_s": None if model is None else model.fixed_s,
        "residuals": None if model is None else list(model.residuals),
    }


def table_text(groups: list[FittedGroup]) -> str:
    """The table's text: one group per line, sorted keys (the same bytes every build)."""
    lines = [json.dumps(group_json(g), sort_keys=True, allow_nan=False) for g in groups]
    return '{"groups": [\n' + ",\n".join(lines) + "\n]}\n"


def _group(row: dict[str, Any]) -> FittedGroup:
    model = None
    if row["slope"] is not None:
        model = TimeModel(row["slope"], row["fixed_s"], tuple(row["residuals"]))
    return FittedGroup(
        row["engine"], row["hardware_class"], row["phase"], row["regime"], tuple(row["run_ids"]), model
    )


@cache
def fitted_groups() -> dict[GroupKey, FittedGroup]:
    """The shipped table, read once per process."""
    rows = json.loads(package_data.read_text("servebound.catalog", *TABLE))["groups"]
    groups = (_group(row) for row in rows)
    return {(g.engine, g.hardware_class, g.phase, g.regime): g for g in groups}


def fitted(engine: str, hardware_class: str, phase: str, regime: str) -> FittedGroup | None:
    """The group's fit, or None where the engine has no published run of this class, phase and regime."""
    return fitted_groups().get((engine, hardware_class, phase, regime))
