"""The expected band: what comparable published runs reached of their own ceilings, applied to a ceiling.

For a group of runs (one engine, one hardware class, one phase) with efficiencies e_i = measured_i /
ceiling_i, the band beside a ceiling X is (q_10(e) X, q_50(e) X, q_90(e) X), q_p the p-th percentile with
linear interpolation between order statistics (numpy's default). It is an estimate of where a run lands,
never a bound: the ceiling stays the bound. Fewer than :data:`BAND_MIN_RUNS` runs give no band.
Calibration: leave each run out, build the band from the others, and count the runs that land inside
their own 10th-90th percentile band (:func:`leave_one_out_inside`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from servebound.core.fields import documented

#: The fewest runs a band rests on; below it the band is null.
BAND_MIN_RUNS = 5
#: The percentiles the band reports.
BAND_QUANTILES = (0.1, 0.5, 0.9)


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile of a non-empty sample, linear between order statistics (numpy's default)."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True)
class ExpectedBand:
    """Where runs of one engine on one hardware class land against a ceiling: an estimate, never a bound."""

    p10_tok_s: float = documented(
        "10th percentile of the group's measured / ceiling, times this ceiling", "tok/s"
    )
    p50_tok_s: float = documented("median of the group's measured / ceiling, times this ceiling", "tok/s")
    p90_tok_s: float = documented(
        "90th percentile of the group's measured / ceiling, times this ceiling", "tok/s"
    )
    runs: int = documented("reported runs the band rests on (at least 5)")
    engine: str = documented("the engine whose runs were used")
    hardware_class: str = documented("the hardware class whose runs were used (the catalog's class)")
    phase: str = documented("`decode` (per-session runs at batch 1) or `prefill`")
    run_ids: tuple[str, ...] = documented("the reported runs' ids (catalog/data/reported_runs.toml)")
    runs_url: str = documented("where the runs are listed, each with its source")
    reading: str = documented("always `estimate`: a band of published results, never a bound")


def expected_band(
    ceiling_tok_per_s: float,
    efficiencies: Sequence[float],
    *,
    engine: str,
    hardware_class: str,
    phase: str,
    run_ids: Sequence[str],
    runs_url: str,
) -> ExpectedBand | None:
    """The band beside ``ceiling_tok_per_s`` from a group's efficiencies; None under BAND_MIN_RUNS runs
    or for a ceiling that is not a positive finite rate."""
    if len(efficiencies) < BAND_MIN_RUNS or not (math.isfinite(ceiling_tok_per_s) and ceiling_tok_per_s > 0):
        return None
    p10, p50, p90 = (quantile(efficiencies, q) * ceiling_tok_per_s for q in BAND_QUANTILES)
    return ExpectedBand(
        p10_tok_s=p10,
        p50_tok_s=p50,
        p90_tok_s=p90,
        runs=len(efficiencies),
        engine=engine,
        hardware_class=hardware_class,
        phase=phase,
        run_ids=tuple(run_ids),
        runs_url=runs_url,
        reading="estimate",
    )


def leave_one_out_inside(efficiencies: Sequence[float]) -> tuple[int, int]:
    """(inside, evaluated): each run left out in turn, whether its efficiency lies within the
    10th-90th percentile band of the others. Runs whose others number under BAND_MIN_RUNS are not
    evaluated (no band would be given)."""
    if len(efficiencies) - 1 < BAND_MIN_RUNS:
        return 0, 0
    inside = 0
    for index, value in enumerate(efficiencies):
        others = [*efficiencies[:index], *efficiencies[index + 1 :]]
        low, high = quantile(others, BAND_QUANTILES[0]), quantile(others, BAND_QUANTILES[-1])
        inside += low <= value <= high
    return inside, len(efficiencies)
