"""Cost per token from the two-line roofline: a step costs the same whatever the batch.

Renting (or owning) the whole system for one decode step of t(b) seconds costs p t(b), with p the
price per second of the system, and the step emits b rho tokens, so

    cost per output token = p t(b) / (b rho) = p / T(b).

T(b) never falls, so the cost per token never rises with the batch. As the batch grows the weight
fetch (the hyperbola W_batch(b) / (b R)) vanishes and what is left is the cost floor: the private
terms no batch amortizes, the KV read K_read / (rho R) and the compute c / rho per emitted token,
under the same max as the step (p max(K_read / R, c) / rho at rho = 1). The latency floor is the
weight fetch itself: a step cannot take less than W_batch(1) / R, however much is paid.

Prefill prices input tokens the same way: p / T_pf at the stated prompt length.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from servebound.core.arith import np
from servebound.core.decode import StepCurve, step_curve
from servebound.core.decode_compute import seconds_per_session_step_over_contexts
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.search import largest_true
from servebound.core.traffic import private_read_bytes
from servebound.core.workload import Workload

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

SECONDS_PER_HOUR = 3600.0
#: Hours in a year of 365.25 days, for amortization.
HOURS_PER_YEAR = 8766.0
TOKENS_PER_MTOK = 1e6

#: Owned-hardware defaults, stated with every owned price.
DEFAULT_AMORTIZATION_YEARS = 3.0
DEFAULT_UTILIZATION = 1.0
DEFAULT_USD_PER_KWH = 0.15


def usd_per_mtok(usd_per_hour: float, seconds: ArrayLike, tokens: ArrayLike) -> NDArray[np.float64]:
    """USD per million tokens for ``tokens`` produced in ``seconds`` of a system at ``usd_per_hour``."""
    s = np.asarray(seconds, dtype=np.float64)
    n = np.asarray(tokens, dtype=np.float64)
    result: NDArray[np.float64] = usd_per_hour / SECONDS_PER_HOUR * s / n * TOKENS_PER_MTOK
    return result


def usd_per_mtok_at_rate(usd_per_hour: float, tok_s: float) -> float:
    """USD per million tokens of a system at ``usd_per_hour`` emitting ``tok_s``."""
    return usd_per_hour / (tok_s * SECONDS_PER_HOUR) * TOKENS_PER_MTOK


@dataclass(frozen=True)
class OwnedCost:
    """Owned hardware per hour of use: purchase / (years * 8,766 h * utilization) + power * USD/kWh.

    ``power_w`` is None when the row has no board power and none was given: the power term is then
    not counted, and ``power_counted`` says so.
    """

    purchase_usd: float
    amortization_years: float
    utilization: float
    power_w: float | None
    usd_per_kwh: float

    @property
    def capital_usd_per_hour(self) -> float:
        return self.purchase_usd / (self.amortization_years * HOURS_PER_YEAR * self.utilization)

    @property
    def power_usd_per_hour(self) -> float:
        return 0.0 if self.power_w is None else self.power_w / 1000.0 * self.usd_per_kwh

    @property
    def power_counted(self) -> bool:
        return self.power_w is not None

    @property
    def usd_per_hour(self) -> float:
        return self.capital_usd_per_hour + self.power_usd_per_hour


@dataclass(frozen=True)
class CostCurve:
    """Cost per million output tokens along a step curve, with the floors.

    ``usd_per_mtok_output`` = p t(b) / (b rho) per batch. ``floor_usd_per_mtok`` is the limit no
    batch passes (KV read and compute per emitted token, under the step's max), split into its
    ``floor_kv_s_per_token`` and ``floor_compute_s_per_token`` (None without compute).
    ``latency_floor_s`` is the weight fetch W_batch(1) / R, the shortest step.
    """

    usd_per_hour: float
    steps: StepCurve
    usd_per_mtok_output: NDArray[np.float64]
    floor_kv_s_per_token: float
    floor_compute_s_per_token: float | None
    floor_usd_per_mtok: float
    latency_floor_s: float


def cost_curve(
    hardware: Hardware, model: ModelAdapter, workload: Workload, batches: ArrayLike, usd_per_hour: float
) -> CostCurve:
    """The cost of output tokens over an array of batches (vectorized), with the cost and latency floors."""
    steps = step_curve(hardware, model, workload, batches)
    rho = workload.tokens_per_step
    cost = usd_per_mtok(usd_per_hour, steps.step_time_s, steps.batch * rho)
    bandwidth = hardware.bandwidth_bytes_per_s
    context = workload.read_context_tokens
    kv_s = private_read_bytes(model, workload.speculation, context) / (rho * bandwidth)
    c = steps.compute.seconds_per_session_step if steps.compute.available else None
    compute_s = None if c is None else c / rho
    floor_s = kv_s if compute_s is None else max(kv_s, compute_s)
    weights_one = float(model.weights.batch(1, workload.expert_traffic))
    return CostCurve(
        usd_per_hour=usd_per_hour,
        steps=steps,
        usd_per_mtok_output=cost,
        floor_kv_s_per_token=kv_s,
        floor_compute_s_per_token=compute_s,
        floor_usd_per_mtok=float(usd_per_mtok(usd_per_hour, floor_s, 1.0)),
        latency_floor_s=weights_one / bandwidth,
    )


def batch_grid(batch_max: int, points: int = 24, extra: tuple[int | None, ...] = ()) -> NDArray[np.int64]:
    """Integer batches 1..batch_max on a log grid of about ``points`` values, plus ``extra`` ones."""
    if batch_max < 1:
        return np.zeros(0, dtype=np.int64)
    grid = np.unique(np.round(np.geomspace(1, batch_max, points)).astype(np.int64))
    more = np.asarray([b for b in extra if b is not None and 1 <= b <= batch_max], dtype=np.int64)
    return np.unique(np.concatenate([grid, more]))


@dataclass(frozen=True)
class ContextCurve:
    """At a fixed batch, over read contexts L: t_mem(L) = (W_batch(b) + b K_read(L)) / R (grows with
    the cache), t_cmp(L) = b c(L) (nearly flat), their max and the cost per million output tokens.
    ``crossover_tokens`` is the smallest sampled-range L with t_mem >= t_cmp (found by bisection on
    integers), None when one line stays above the other over the whole range or compute is off."""

    batch: int
    contexts: NDArray[np.float64]
    memory_time_s: NDArray[np.float64]
    compute_time_s: NDArray[np.float64] | None
    step_time_s: NDArray[np.float64]
    usd_per_mtok_output: NDArray[np.float64]
    crossover_tokens: int | None


def context_curve(
    hardware: Hardware,
    model: ModelAdapter,
    workload: Workload,
    batch: int,
    contexts: ArrayLike,
    usd_per_hour: float,
) -> ContextCurve:
    """Ordinary decoding at batch ``batch`` over an array of read contexts (vectorized)."""

    L = np.asarray(contexts, dtype=np.float64)
    r = hardware.bandwidth_bytes_per_s
    sweep = float(model.weights.batch(batch, workload.expert_traffic))

    def t_mem(at: NDArray[np.float64]) -> NDArray[np.float64]:
        out: NDArray[np.float64] = (sweep + batch * model.kv_read.bytes_over(at)) / r
        return out

    def t_cmp(at: NDArray[np.float64]) -> NDArray[np.float64] | None:
        c = seconds_per_session_step_over_contexts(hardware, model, workload, at)
        return None if c is None else batch * c

    mem, cmp_ = t_mem(L), t_cmp(L)
    step = mem if cmp_ is None else np.maximum(mem, cmp_)
    crossover: int | None = None
    if cmp_ is not None and L.size:

        def memory_ahead(tokens: int) -> bool:
            at = np.asarray([float(tokens)])
            c = t_cmp(at)
            return c is not None and bool(t_mem(at)[0] >= c[0])

        lo, hi = max(1, int(L.min())), int(L.max())
        if not memory_ahead(lo) and memory_ahead(hi):
            crossover = largest_true(lambda t: not memory_ahead(t), lo, hi) + 1
    return ContextCurve(
        batch=batch,
        contexts=L,
        memory_time_s=mem,
        compute_time_s=cmp_,
        step_time_s=step,
        usd_per_mtok_output=usd_per_mtok(usd_per_hour, step, batch),
        crossover_tokens=crossover,
    )
