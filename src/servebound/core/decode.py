"""Decode ceilings, exactly as the derivation's calculator procedure (ordinary and speculative).

Everything follows from two monotonicity facts the derivation's adapters guarantee:
``b * q(b)`` (bytes an iteration moves per emitted token per session) never falls as the batch grows,
so the per-session rate r(b) never rises and the floor set is a prefix {1..b_floor}; and ``q(b)`` never
rises, so the aggregate T(b) never falls and the best usable batch is the largest one. The search is a
bisection over [1, min(b_mem, b_rate)], never a walk over every batch.

The compute roof (:mod:`servebound.core.decode_compute`) adds the step's second line: a step takes at
least t(b) = max(t_mem(b), t_cmp(b)) with t_mem(b) = b rho q(b) / R and t_cmp(b) = b c, so per emitted
token the step charges q_eff(b) = max(q(b), R c / rho) bytes-equivalent. That constant floor keeps both
monotonicity facts, and where compute is unavailable it is zero, so every number is exactly the
memory-only one. Past the balance batch (the smallest b with t_cmp(b) >= t_mem(b)) the aggregate is
flat at rho / c, so b* becomes the smallest batch reaching the largest aggregate: a larger batch only
costs per-session speed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from servebound.core.arith import as_values, maximum
from servebound.core.band import BASIS_HELP, BandBasis, ExpectedBand
from servebound.core.decode_compute import DecodeCompute, decode_compute
from servebound.core.engines import FormatSupport
from servebound.core.fields import ResultRecord, documented, documented_property
from servebound.core.formats import KV_FORMATS
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.nearest_records import NearestFit, suggestions
from servebound.core.offload import OffloadReport, offloaded
from servebound.core.offload import report as offload_report
from servebound.core.rates import BoundBy, bound_by
from servebound.core.reading import is_estimate
from servebound.core.search import largest_true
from servebound.core.traffic import _Traffic
from servebound.core.workload import MAX_BATCH, NOT_CHECKED, Workload, memory_fit_batch

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from servebound.core.arith import Floats


class Verdict(StrEnum):
    """The stack of gates; the first that fails names the verdict."""

    FLOOR_FIT = "floor_fit"
    NO_FLOOR = "no_floor"
    NO_SESSION_FIT = "no_session_fit"
    NO_RESIDENT_FIT = "no_resident_fit"


#: Best first, for sorting results: the gates in the order they are passed (floor_fit first).
VERDICT_ORDER: dict[Verdict, int] = {verdict: rank for rank, verdict in enumerate(Verdict)}


class BatchLimit(StrEnum):
    """What stopped b* from growing: memory (b_mem), the per-session floor, the search cap, or the
    compute roof (past the balance batch the aggregate is flat, so b* is the balance batch)."""

    MEMORY = "memory"
    FLOOR = "floor"
    SEARCH_CAP = "search_cap"
    COMPUTE = "compute"


@dataclass(frozen=True)
class Forced:
    """The ceilings at a batch fixed by policy."""

    batch: int = documented("B, the concurrency fixed by --batch", "sessions")
    aggregate_tok_s: float = documented("T(B), the aggregate decode ceiling at B", "tok/s")
    per_session_tok_s: float = documented("r(B) = T(B) / B, the per-session ceiling at B", "tok/s")
    clears_floor: bool = documented("whether r(B) reaches the floor r*")
    fits_memory: bool = documented("whether B sessions fit in memory (B <= b_mem)")


@dataclass(frozen=True)
class Remedies:
    """What would pass the gate that failed, computed from the same formulas (None: not applicable)."""

    capacity_needed_bytes: float | None = None
    max_overhead_bytes: float | None = None
    max_alloc_context_tokens: int | None = None
    max_kv_bytes_per_element: float | None = None
    kv_precisions_that_fit: tuple[str, ...] = ()
    batch1_tok_per_s: float | None = None
    max_read_context_tokens: int | None = None
    bandwidth_needed_bytes_per_s: float | None = None


@dataclass(frozen=True, repr=False)
class DecodeResult(ResultRecord):
    """Every decode ceiling for one (hardware, model, workload) with the inputs that produced it.

    Batches: ``batch_mem`` fits in memory (capped at MAX_BATCH, ``batch_mem_capped``), ``batch_rate`` is
    the closed-form necessary floor condition, ``batch_floor`` the exact largest batch clearing the floor
    when the floor bound, ``batch_star`` the smallest usable batch with the largest aggregate.

    Compute: ``compute`` is the step's compute roof (its ``status`` says whether it was charged);
    ``balance_batch`` the smallest b <= b_mem with t_cmp(b) >= t_mem(b) (None when compute never catches
    up within the batches that fit, or is unavailable); ``bound_by`` the line setting t(b*);
    ``step_time_s`` t(b*); ``compute_tok_s_at_star`` b* rho / t_cmp(b*) (None without a rate).
    """

    __repr_fields__ = ("verdict", "batch_mem", "batch_star", "single_session_tok_s", "aggregate_tok_s")

    hardware: Hardware
    model: ModelAdapter
    workload: Workload
    verdict: Verdict = documented(
        "`floor_fit`, `no_floor`, `no_session_fit` or `no_resident_fit`: the first gate that fails"
    )
    resident_bytes: float = documented("W_resident, the weights held in memory", "bytes")
    resident_margin_bytes: float = documented("C - W_resident - O, the memory left for caches", "bytes")
    kv_alloc_bytes: float = documented("K_alloc(L_alloc), the cache reserved per session", "bytes")
    kv_read_bytes: float = documented("K_read(L_read), the cache read per session per step", "bytes")
    weight_active_bytes: float = documented("W_active, the weights one token sweeps", "bytes")
    is_estimate: bool = documented(
        "an estimate (expected expert traffic or measured rates) rather than a bound; "
        "the JSON gives it as `assumptions.reading`",
        json=None,
    )
    remedies: Remedies = documented(
        "what would pass the gate that failed (capacity, overhead, contexts, KV formats, bandwidth); "
        "only the applicable ones",
        json=None,
        default=Remedies(),
    )
    batch_mem: int | None = documented(
        "b_mem, the sessions that fit in memory (null when none does)", "sessions", default=None
    )
    batch_mem_capped: bool = documented(
        "b_mem reached the search cap (the cache does not grow with context or is tiny)", default=False
    )
    batch_rate: int | None = documented(
        "b_rate, the closed-form necessary floor condition", "sessions", default=None
    )
    batch_floor: int | None = documented(
        "b_floor, the largest batch whose per-session rate clears the floor", "sessions", default=None
    )
    batch_star: int | None = documented(
        "b*, the usable batch with the largest aggregate (null unless floor_fit)", "sessions", default=None
    )
    batch_limited_by: BatchLimit | None = documented(
        "what stopped b* from growing: `memory`, `floor` or `search_cap`", default=None
    )
    single_session_tok_s: float | None = documented(
        "R / (W_batch(1) + K_read), one session alone", "tok/s", default=None
    )
    aggregate_tok_s: float | None = documented(
        "T(b*), the KV-aware aggregate ceiling at b* (null unless floor_fit)",
        "tok/s",
        default=None,
    )
    per_session_tok_s: float | None = documented(
        "r(b*), the per-session ceiling at b* (null unless floor_fit)",
        "tok/s",
        default=None,
    )
    bytes_per_token_at_star: float | None = documented(
        "q(b*), the bytes moved per generated token at b*", "bytes", default=None
    )
    memory_power_tok_s: float | None = documented(
        "D / (K_alloc W_active) x (1 - (W_resident + O) / C)",
        "tok/s",
        default=None,
    )
    large_memory_limit_tok_s: float | None = documented(
        "D / (K_alloc W_active), the limit as capacity grows",
        "tok/s",
        default=None,
    )
    forced: Forced | None = documented(
        "with --batch: `{batch, aggregate_tok_s, per_session_tok_s, clears_floor, fits_memory}`", default=None
    )
    compute: DecodeCompute | None = documented(
        "the step's compute roof (FLOPs per token, modes, rates, status); the JSON gives it as "
        "`decode_compute`",
        json=None,
        default=None,
    )
    balance_batch: int | None = documented(
        "the smallest b <= b_mem with t_cmp(b) >= t_mem(b) (null when compute never catches up or is "
        "unavailable)",
        "sessions",
        default=None,
    )
    bound_by: BoundBy | None = documented(
        "`memory` or `compute`: the line of the two-line roofline that sets t(b*)", default=None
    )
    step_time_s: float | None = documented(
        "t(b*) = max(t_mem(b*), t_cmp(b*)), one decode step", "s", default=None
    )
    compute_tok_s_at_star: float | None = documented(
        "b* rho / t_cmp(b*), the compute line at b* (null without a rate)",
        "tok/s",
        default=None,
    )
    memory_tok_s_at_star: float | None = documented(
        "b* rho / t_mem(b*), the memory line at b*", "tok/s", default=None
    )
    offload: OffloadReport | None = documented(
        "with --cpu-moe, --n-cpu-moe or --gpu-layers: where the bytes sit and what each tier moves per token "
        "(null without offload)",
        default=None,
    )
    expected: ExpectedBand | None = documented(
        "`{p10_tok_s, p50_tok_s, p90_tok_s, runs, engine, hardware_class, phase, scope, ceiling_tok_s, "
        "label, ...}`, the band of a per-token time t = a t_ceiling + t_0 fitted on published batch-1 runs of "
        "the engine (--engine, else the one usually run here: `expected_from`) and hardware class, beside the "
        "single-session ceiling (with --batch B: per session beside r(B)); never above its ceiling; an "
        "estimate, never a bound (null under 5 runs)",
        default=None,
    )
    expected_aggregate: ExpectedBand | None = documented(
        "with a b*: the aggregate band at b* (b* times the per-session band beside r(b*)), beside T(b*); an "
        "estimate, never a bound (null where `expected` is, or without b*)",
        default=None,
    )
    expected_from: BandBasis | None = documented(BASIS_HELP, default=None)

    @documented_property(
        "FLOPs per emitted token at L_read (null when the model has no prefill fields)", "FLOP"
    )
    def decode_flops_per_token(self) -> float | None:
        """FLOPs per emitted token at L_read (None when the model has no prefill fields)."""
        return None if self.compute is None else self.compute.flops_per_token

    @documented_property(
        "`native`, `dequantized` or `unsupported`: whether the device (and --engine) runs the weight format"
    )
    def format_support(self) -> FormatSupport:
        return (self.workload.format_support or NOT_CHECKED)[0]

    @documented_property("why the weight format is native, dequantized or unsupported here, with the source")
    def format_support_why(self) -> str:
        return (self.workload.format_support or NOT_CHECKED)[1]

    @documented_property(
        "where no session fits: the nearest settings that fit, best first, each answered by decode there "
        "(`{change, value, single_session_tok_s, aggregate_tok_s, batch_star, host, floor_fit}`); empty "
        "where one fits"
    )
    def nearest_fit(self) -> tuple[NearestFit, ...]:
        return suggestions(self)

    @property
    def fits(self) -> bool:
        """A session fits (the verdict is floor_fit or no_floor)."""
        return self.verdict in (Verdict.FLOOR_FIT, Verdict.NO_FLOOR)


def curve(
    hardware: Hardware, model: ModelAdapter, workload: Workload, batches: ArrayLike
) -> tuple[Floats, Floats]:
    """Aggregate T(b) and per-session r(b) over an array of batches, vectorized (for figures and tables).

    With the compute roof unless the workload is memory-only (or compute is unavailable)."""
    compute = decode_compute(hardware, model, workload)
    traffic = _Traffic(model, workload, compute.bytes_equivalent(hardware.bandwidth_bytes_per_s))
    b = as_values(batches)
    aggregate = hardware.bandwidth_bytes_per_s / traffic.effective(b)
    return aggregate, aggregate / b


@dataclass(frozen=True)
class StepCurve:
    """The two lines of the roofline over an array of batches: t_mem(b), t_cmp(b) (None without
    compute) and t(b) = max of the two, seconds per step; T(b) = b rho / t(b) and r(b) = T(b) / b."""

    batch: Floats
    memory_time_s: Floats
    compute_time_s: Floats | None
    step_time_s: Floats
    tok_s: Floats
    per_session_tok_s: Floats
    compute: DecodeCompute


def step_curve(hardware: Hardware, model: ModelAdapter, workload: Workload, batches: ArrayLike) -> StepCurve:
    """t_mem, t_cmp and t over an array of batches, vectorized (cost curves and figures)."""
    compute = decode_compute(hardware, model, workload)
    traffic = _Traffic(model, workload)
    b = as_values(batches)
    rho = workload.tokens_per_step
    t_mem = b * rho * traffic.per_token(b) / hardware.bandwidth_bytes_per_s
    t_cmp = compute.time_s(b)
    t = t_mem if t_cmp is None else maximum(t_mem, t_cmp)
    aggregate = b * rho / t
    return StepCurve(b, t_mem, t_cmp, t, aggregate, aggregate / b, compute)


def _batch_star(
    traffic: _Traffic, usable: int, batch_mem: int, batch_mem_capped: bool, balance: int | None
) -> tuple[int, BatchLimit]:
    """b* and what limited it, from the largest usable batch: the floor, memory or the search cap, or,
    past the balance batch where the aggregate is flat at rho / c, compute (the smallest batch reaching
    the plateau is b*)."""
    if usable < batch_mem:
        limited_by = BatchLimit.FLOOR
    elif batch_mem_capped:
        limited_by = BatchLimit.SEARCH_CAP
    else:
        limited_by = BatchLimit.MEMORY
    if float(traffic.per_token(usable)) < traffic.compute_bytes and balance is not None and balance < usable:
        return balance, BatchLimit.COMPUTE
    return usable, limited_by


def _offloaded_decode(hardware: Hardware, model: ModelAdapter, workload: Workload) -> DecodeResult:
    """Decode over two tiers: the procedure on the effective adapter, with the ``offload`` object."""
    spec = workload.offload
    assert spec is not None
    eff, where, host_margin = offloaded(hardware, model, spec, workload.overhead_bytes)
    inner = decode(hardware, eff, replace(workload, offload=None))
    at = inner.batch_star or 1
    off = offload_report(
        hardware, model, spec, where, host_margin, at, workload.read_context_tokens, workload.expert_traffic
    )
    # The model asked for, and the workload with its offload: rerunning from the result gives the same.
    return replace(inner, model=model, workload=workload, offload=off)


def decode(hardware: Hardware, model: ModelAdapter, workload: Workload | None = None) -> DecodeResult:
    """Run the derivation's decode procedure: gates, b_mem, b_rate, the exact floor test, b*, ceilings
    (with ``workload.offload``, on the two-tier effective adapter of :mod:`servebound.core.offload`)."""
    workload = workload or Workload()
    if workload.offload is not None:
        return _offloaded_decode(hardware, model, workload)
    capacity = hardware.memory_bytes
    bandwidth = hardware.bandwidth_bytes_per_s
    floor = workload.floor_tok_s
    spec = workload.speculation

    resident = model.weights.resident + (spec.draft.weights.resident if spec else 0.0)
    margin = capacity - resident - workload.overhead_bytes
    # K_alloc(L_alloc) reserved; paged caches hold what a session has read, K_alloc(L_read) on average.
    kv_alloc = model.kv_alloc.bytes_at(workload.held_context_tokens)
    if spec is not None:
        kv_alloc += spec.draft.kv_alloc.bytes_at(workload.held_context_tokens)
    compute = decode_compute(hardware, model, workload)
    traffic = _Traffic(model, workload, compute.bytes_equivalent(bandwidth))
    w_active = model.weights.active
    estimate = is_estimate(hardware, model, workload.expert_traffic)

    def result(verdict: Verdict, **fields: Any) -> DecodeResult:
        return DecodeResult(
            hardware=hardware,
            model=model,
            workload=workload,
            verdict=verdict,
            resident_bytes=resident,
            resident_margin_bytes=margin,
            kv_alloc_bytes=kv_alloc,
            kv_read_bytes=traffic.kv_read,
            weight_active_bytes=w_active,
            is_estimate=estimate,
            compute=compute,
            **fields,
        )

    if margin < 0:
        return result(
            Verdict.NO_RESIDENT_FIT,
            forced=_forced(workload, traffic, bandwidth, 0),
            remedies=Remedies(
                capacity_needed_bytes=resident + workload.overhead_bytes + kv_alloc,
                max_overhead_bytes=capacity - resident - kv_alloc,
            ),
        )

    batch_mem, batch_mem_capped = memory_fit_batch(margin, kv_alloc)

    if batch_mem == 0:
        return result(
            Verdict.NO_SESSION_FIT,
            batch_mem=0,
            forced=_forced(workload, traffic, bandwidth, 0),
            remedies=_session_remedies(model, workload, margin, resident, capacity, kv_alloc),
        )

    single = float(bandwidth / traffic.effective(1))
    balance = _balance_batch(traffic, batch_mem)
    large_memory = memory_power = None
    if kv_alloc > 0 and w_active > 0:
        large_memory = capacity * bandwidth / (kv_alloc * w_active)
        memory_power = bandwidth * margin / (kv_alloc * w_active)

    # b_rate: the closed-form necessary condition with W_active, ordinary decoding with positive K_read.
    batch_rate: int | None = None
    if spec is None and traffic.kv_read > 0 and floor > 0:
        closed_form = (bandwidth / floor - w_active) / traffic.kv_read
        # A vanishing floor or read size sends the ratio past any batch (or to inf): no rate limit; an
        # unreachable floor with a vanishing read size sends it to -inf: no batch clears it.
        batch_rate = max(0, math.floor(max(closed_form, -1.0))) if closed_form <= MAX_BATCH else None

    def clears(batch: int) -> bool:
        return traffic.per_session_scalar(batch, bandwidth) >= floor

    forced = _forced(workload, traffic, bandwidth, batch_mem)
    reached = dict(
        batch_mem=batch_mem,
        batch_mem_capped=batch_mem_capped,
        batch_rate=batch_rate,
        single_session_tok_s=single,
        memory_power_tok_s=memory_power,
        large_memory_limit_tok_s=large_memory,
        forced=forced,
        balance_batch=balance,
    )
    if not clears(1):
        return result(
            Verdict.NO_FLOOR, remedies=_floor_remedies(model, workload, traffic, bandwidth, single), **reached
        )

    upper = batch_mem if batch_rate is None else max(1, min(batch_mem, batch_rate))
    usable = upper if clears(upper) else largest_true(clears, 1, upper)
    batch_star, limited_by = _batch_star(traffic, usable, batch_mem, batch_mem_capped, balance)
    q_star = float(traffic.per_token(batch_star))
    aggregate = bandwidth / float(traffic.effective(batch_star))
    rho = workload.tokens_per_step
    t_mem = batch_star * rho * q_star / bandwidth
    t_cmp_arr = compute.time_s(batch_star)
    t_cmp = None if t_cmp_arr is None else float(t_cmp_arr)
    return result(
        Verdict.FLOOR_FIT,
        # b_floor beyond b_mem is never searched: it is reported only when the floor bound the batch.
        batch_floor=usable if usable < batch_mem else None,
        batch_star=batch_star,
        batch_limited_by=limited_by,
        aggregate_tok_s=aggregate,
        per_session_tok_s=aggregate / batch_star,
        bytes_per_token_at_star=q_star,
        bound_by=bound_by(t_mem, t_cmp),
        step_time_s=t_mem if t_cmp is None else max(t_mem, t_cmp),
        compute_tok_s_at_star=None if t_cmp is None else batch_star * rho / t_cmp,
        memory_tok_s_at_star=bandwidth / q_star,
        **reached,
    )


def _balance_batch(traffic: _Traffic, batch_mem: int) -> int | None:
    """The smallest b in [1, b_mem] with t_cmp(b) >= t_mem(b) (q(b) never rises, so the set is a
    suffix and bisection finds its start); None when compute never catches up there."""
    if batch_mem < 1 or not traffic.compute_catches_up(batch_mem):
        return None
    if traffic.compute_catches_up(1):
        return 1
    # Not at 1, yes at b_mem: one past the largest batch where memory is still ahead.
    return largest_true(lambda b: not traffic.compute_catches_up(b), 1, batch_mem) + 1


def _forced(workload: Workload, traffic: _Traffic, bandwidth: float, batch_mem: int) -> Forced | None:
    batch = workload.forced_batch
    if batch is None:
        return None
    aggregate = float(bandwidth / traffic.effective(batch))
    per_session = aggregate / batch
    return Forced(
        batch=batch,
        aggregate_tok_s=aggregate,
        per_session_tok_s=per_session,
        clears_floor=per_session >= workload.floor_tok_s,
        fits_memory=batch <= batch_mem,
    )


def _session_remedies(
    model: ModelAdapter, workload: Workload, margin: float, resident: float, capacity: float, kv_alloc: float
) -> Remedies:
    """No session fits: the longest reservation that fits, the capacity or overhead needed, and the
    KV precisions at which one session of the stated reservation fits."""
    target_alloc = model.kv_alloc.bytes_at(workload.held_context_tokens)
    fixed = kv_alloc - target_alloc + model.kv_alloc.state_bytes  # draft cache and recurrent state
    scalable = target_alloc - model.kv_alloc.state_bytes
    max_context = model.kv_alloc.max_context_within(margin - (kv_alloc - target_alloc))
    max_width: float | None = None
    fitting: tuple[str, ...] = ()
    if model.kv_bytes_per_element is not None and scalable > 0:
        max_width = max(0.0, model.kv_bytes_per_element * (margin - fixed) / scalable)
        fitting = tuple(name for name, layout in KV_FORMATS.items() if layout.bytes_per_element <= max_width)
    return Remedies(
        capacity_needed_bytes=resident + workload.overhead_bytes + kv_alloc,
        max_overhead_bytes=capacity - resident - kv_alloc,
        max_alloc_context_tokens=None if max_context is None else max(max_context, 0),
        max_kv_bytes_per_element=max_width,
        kv_precisions_that_fit=fitting,
    )


def _floor_remedies(
    model: ModelAdapter, workload: Workload, traffic: _Traffic, bandwidth: float, single: float
) -> Remedies:
    """No batch clears the floor: what batch 1 reaches, the longest read context at which batch 1 would
    clear it (None when the weights alone are too slow), and the bandwidth that would clear it."""
    floor = workload.floor_tok_s
    max_read: int | None = None
    if workload.speculation is None:
        budget = (bandwidth / floor if floor > 0 else math.inf) - float(
            model.weights.batch(1, workload.expert_traffic)
        )
        found = model.kv_read.max_context_within(budget)
        max_read = found if found is not None and found >= 0 else None
    return Remedies(
        batch1_tok_per_s=single,
        max_read_context_tokens=max_read,
        bandwidth_needed_bytes_per_s=floor * float(traffic.per_token(1)),
    )
