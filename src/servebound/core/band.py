"""The expected band: a per-token time model fitted on published runs, applied to a ceiling.

For a group of runs (one engine, one hardware class, one phase and regime) with ceilings C_i and
measured rates m_i, the per-token times t_i = 1 / m_i are fitted as

    t = a t_ceiling + t_0,        t_ceiling = 1 / C

a bandwidth (or compute) efficiency 1 / a and a fixed per-token cost t_0 of the engine (launches,
sampling, synchronisation), by least squares on the relative error (t_i - a x_i - t_0) / t_i: the rows
(x_i / t_i, 1 / t_i) = (m_i / C_i, m_i) against 1, closed form (the 2 x 2 normal equations, whose sums
also give every leave-one-out fit by subtraction). A negative t_0 is refitted through the
origin, a non-positive a as a constant time. Slow, bandwidth-bound steps then land near 1 / a of their
ceiling and fast steps with few bytes lower, as the runs do; a band of ``ceiling x constant`` cannot
follow that.

The spread is the residuals in log time, r_i = ln(t_i / prediction), each from the fit without run i
(jackknife: a run's own residual understates a new run's). The band beside a ceiling C is the
prediction times exp of their quantiles, at the split-conformal levels for n residuals (upper q (n+1)/n,
lower 1 - (1 - q)(n + 1)/n; the median at 1/2), so that p10-p90 holds a new run about 80 % of the time
on as few as 5 runs. No band is ever above its ceiling: a quantile past it is clipped there and the band
says so. It is an estimate, never a bound; fewer than :data:`BAND_MIN_RUNS` runs give none.
Calibration: leave each run out, fit the others, and count the runs inside their own p10-p90
(:func:`leave_one_out`), with the band's median width p90 / p10.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from servebound.core.fields import documented

#: The fewest runs a band rests on; below it there is no band (2 parameters, 3 residual degrees left).
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


def conformal_level(q: float, n: int) -> float:
    """The level at which n residuals' empirical quantile bounds a new one's q-quantile."""
    if q > 0.5:
        return min(1.0, q * (n + 1) / n)
    if q < 0.5:
        return max(0.0, 1.0 - (1.0 - q) * (n + 1) / n)
    return 0.5


Sums = tuple[float, float, float, float, float]


def _terms(ceiling: float, measured: float) -> Sums:
    """One run's terms of the normal equations: its row (u, v) = (x / t, 1 / t) = (m / C, m)."""
    u, v = measured / ceiling, measured
    return u * u, u * v, v * v, u, v


def _sums(ceilings: Sequence[float], measured: Sequence[float]) -> Sums:
    rows = [_terms(c, m) for c, m in zip(ceilings, measured, strict=True)]
    return (
        math.fsum(r[0] for r in rows),
        math.fsum(r[1] for r in rows),
        math.fsum(r[2] for r in rows),
        math.fsum(r[3] for r in rows),
        math.fsum(r[4] for r in rows),
    )


def _less(sums: Sums, *rows: Sums) -> Sums:
    out = list(sums)
    for row in rows:
        for k in range(5):
            out[k] -= row[k]
    return out[0], out[1], out[2], out[3], out[4]


def _solve(sums: Sums) -> tuple[float, float]:
    """The least-squares (a, t_0) from the normal equations [[Suu, Suv], [Suv, Svv]] (a, t_0) =
    (Su, Sv), closed form; t_0 >= 0 (else through the origin) and a >= 0 (else a constant time)."""
    suu, suv, svv, su, sv = sums
    det = suu * svv - suv * suv
    if det > 1e-12 * suu * svv:
        a, t0 = (su * svv - sv * suv) / det, (suu * sv - suv * su) / det
        if a > 0 and t0 >= 0:
            return a, t0
        if a > 0:
            return su / suu, 0.0  # no fixed cost the data can carry: through the origin
    elif su > 0:
        return su / suu, 0.0
    return 0.0, sv / svv  # the time does not grow with the ceiling's


def _residual(sums: Sums, ceiling: float, measured: float) -> float:
    a, t0 = _solve(sums)
    return math.log((1.0 / measured) / (a / ceiling + t0))


@dataclass(frozen=True)
class TimeModel:
    """t = a t_ceiling + t_0 on a group's runs, with each run's residual in log time from the fit
    without it."""

    slope: float
    fixed_s: float
    residuals: tuple[float, ...]

    @property
    def runs(self) -> int:
        return len(self.residuals)

    @cached_property
    def time_factors(self) -> tuple[float, ...]:
        """exp of the residuals' quantiles at each of BAND_QUANTILES (a high time quantile is a low
        rate), computed once per model: a band beside a ceiling is then three divisions."""
        n = len(self.residuals)
        return tuple(math.exp(quantile(self.residuals, conformal_level(1.0 - q, n))) for q in BAND_QUANTILES)

    def band(self, ceiling_tok_s: float) -> tuple[tuple[float, float, float], bool]:
        """(p10, p50, p90) tok/s beside a ceiling, and whether any was clipped at the ceiling."""
        time = self.slope / ceiling_tok_s + self.fixed_s
        rates = [1.0 / (time * factor) for factor in self.time_factors]
        clipped = any(rate > ceiling_tok_s for rate in rates)
        p10, p50, p90 = (min(rate, ceiling_tok_s) for rate in rates)
        return (p10, p50, p90), clipped


def fit_time_model(ceilings: Sequence[float], measured: Sequence[float]) -> TimeModel | None:
    """The group's time model with jackknife residuals; None under BAND_MIN_RUNS runs."""
    if len(ceilings) < BAND_MIN_RUNS or len(ceilings) != len(measured):
        return None
    return _model(_sums(ceilings, measured), list(zip(ceilings, measured, strict=True)))


def _model(sums: Sums, runs: list[tuple[float, float]]) -> TimeModel:
    slope, fixed = _solve(sums)
    residuals = tuple(_residual(_less(sums, _terms(c, m)), c, m) for c, m in runs)
    return TimeModel(slope, fixed, residuals)


@dataclass(frozen=True)
class ExpectedBand:
    """Where runs of one engine on one hardware class land beside a ceiling: an estimate, never a bound."""

    p10_tok_s: float = documented("10th percentile of the fitted per-token time model's band", "tok/s")
    p50_tok_s: float = documented("median of the fitted per-token time model's band", "tok/s")
    p90_tok_s: float = documented(
        "90th percentile of the fitted per-token time model's band, never above the ceiling", "tok/s"
    )
    runs: int = documented("reported runs the band rests on (at least 5)")
    engine: str = documented("the engine whose runs were used")
    hardware_class: str = documented("the hardware class whose runs were used (the catalog's class)")
    phase: str = documented(
        "`decode` (per-session runs at batch 1), `serving` (runs at a concurrency above 1, per session) "
        "or `prefill`"
    )
    run_ids: tuple[str, ...] = documented("the reported runs' ids (catalog/data/reported_runs.toml)")
    runs_url: str = documented("where the runs are listed, each with its source")
    reading: str = documented("always `estimate`: a band of published results, never a bound")
    scope: str = documented(
        "what the band and its ceiling measure: `single session`, `per session at batch B`, "
        "`aggregate at b* = B` or `prefill tok/s`",
        default="single session",
    )
    ceiling_tok_s: float = documented(
        "the ceiling the band sits beside (the same scope)", "tok/s", default=0.0
    )
    label: str = documented("`an estimate from N published runs of ENGINE on CLASS`", default="")
    slope: float = documented("a in t = a t_ceiling + t_0: the inverse of the runs' efficiency", default=0.0)
    fixed_ms_per_token: float = documented(
        "t_0 in t = a t_ceiling + t_0, the engine's fixed cost", "ms", default=0.0
    )
    clipped_at_ceiling: bool = documented(
        "a percentile was above the ceiling and is clipped to it", default=False
    )


#: The ``expected_from`` field of a result with a band (decode's and prefill's): one help, one JSON shape.
BASIS_HELP = (
    "which runs the band comes from: `{engine, engine_assumed, engine_why, hardware_class, phase, runs, "
    "min_runs, regime}`; with runs under min_runs `expected` is null (null: a hardware file, or no engine "
    "runs the format here)"
)


@dataclass(frozen=True)
class BandBasis:
    """Which published runs a ceiling's band comes from: the engine (given, or the one people usually run
    on this class of hardware, assumed and said), the hardware class, the phase and how many runs there
    are. Under BAND_MIN_RUNS runs there is no band, and this record says so."""

    engine: str = documented("the engine whose published runs the band is read from")
    engine_assumed: bool = documented(
        "true where no engine was given: the engine is the one usually run on this hardware class for this "
        "weight format (`engine_why` says which rule)"
    )
    engine_why: str = documented("why this engine: `given` or the rule that assumed it")
    hardware_class: str = documented("the hardware class whose runs are used (the catalog's class)")
    phase: str = documented("`decode`, `prefill`, or `serving` (runs at a concurrency above one)")
    runs: int = documented("published runs of that engine on that class, phase and regime")
    min_runs: int = documented("the fewest runs a band is given on; under it `expected` is null")
    regime: str = documented("empty, or `weights in host RAM` for an offload run's group", default="")

    @property
    def has_band(self) -> bool:
        return self.runs >= self.min_runs


def expected_band(
    ceiling_tok_s: float,
    model: TimeModel | None,
    *,
    engine: str,
    hardware_class: str,
    phase: str,
    run_ids: Sequence[str],
    runs_url: str,
    scope: str = "single session",
    sessions: int = 1,
    engine_name: str | None = None,
) -> ExpectedBand | None:
    """The band beside ``ceiling_tok_s`` (a per-session rate; ``sessions`` > 1 scales band and
    ceiling to an aggregate of that many sessions; ``engine_name``: the engine as its label writes it);
    None without a model (under BAND_MIN_RUNS runs) or
    for a ceiling that is not a positive finite rate."""
    if model is None or not (math.isfinite(ceiling_tok_s) and ceiling_tok_s > 0):
        return None
    (p10, p50, p90), clipped = model.band(ceiling_tok_s)
    return ExpectedBand(
        p10_tok_s=p10 * sessions,
        p50_tok_s=p50 * sessions,
        p90_tok_s=p90 * sessions,
        runs=model.runs,
        engine=engine,
        hardware_class=hardware_class,
        phase=phase,
        run_ids=tuple(run_ids),
        runs_url=runs_url,
        reading="estimate",
        scope=scope,
        ceiling_tok_s=ceiling_tok_s * sessions,
        label=f"an estimate from {model.runs} published runs of {engine_name or engine} on {hardware_class}s",
        slope=model.slope,
        fixed_ms_per_token=1000 * model.fixed_s,
        clipped_at_ceiling=clipped,
    )


@dataclass(frozen=True)
class LeaveOneOut:
    """Each run left out in turn: how many land inside the p10-p90 the others give, and the median
    width p90 / p10 of those bands."""

    inside: int
    evaluated: int
    median_width: float | None


def leave_one_out(ceilings: Sequence[float], measured: Sequence[float]) -> LeaveOneOut:
    """Runs whose others number under BAND_MIN_RUNS are not evaluated (no band would be given)."""
    n = len(ceilings)
    if n - 1 < BAND_MIN_RUNS:
        return LeaveOneOut(0, 0, None)
    runs = list(zip(ceilings, measured, strict=True))
    sums = _sums(ceilings, measured)
    inside, widths = 0, []
    for i, (ceiling, rate) in enumerate(runs):
        model = _model(_less(sums, _terms(ceiling, rate)), [*runs[:i], *runs[i + 1 :]])
        (p10, _, p90), _ = model.band(ceiling)
        inside += p10 <= rate <= p90
        widths.append(p90 / p10)
    return LeaveOneOut(inside, n, quantile(widths, 0.5))
