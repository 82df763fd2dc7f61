"""Decode ceilings against read context: the single-session ceiling and the b* aggregate over every
read context from 0 to the model's limit (benchmark tables read speed by depth: ``tg128 @ d32768``).

Each read context ``L`` reserves ``max(L_alloc, L)`` per session: the workload's reservation, grown
to hold the context being read when that is longer. Exact over every integer context without a loop
over contexts, from three monotonicity facts:

* K_read(L) never falls as L grows, so q(b, L) never falls and both the single-session ceiling
  R / q(1, L) and the aggregate T(b, L) at any fixed batch never rise.
* The floor test R / (b q(b, L)) >= r* is monotone in L, so the contexts where some batch clears it
  form a prefix 0..L_floor, found by bisection on batch 1.
* b_mem(L) and the floor-clearing set both shrink as L grows, so b*(L) never rises and the aggregate
  at b* never rises: its highest value is at L = 0 and its lowest at L_floor.

The extremes are therefore :func:`servebound.core.decode.decode` itself at those contexts; the curve
for figures is one vectorized pass (a bisection over batches run on a whole array of contexts at once).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from servebound.core.arith import np
from servebound.core.decode import DecodeResult, Verdict, decode
from servebound.core.decode_compute import decode_compute, seconds_per_session_step_over_contexts
from servebound.core.experts import ExpertTraffic
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter, Weights
from servebound.core.offload import offloaded
from servebound.core.search import largest_true
from servebound.core.traffic import _Traffic, private_read_bytes
from servebound.core.workload import (
    MAX_BATCH,
    KVAllocation,
    RangeLimit,
    Workload,
    memory_fit_batch,
    range_top,
)

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, NDArray

    Float = NDArray[np.float64]
    Int = NDArray[np.int64]

#: Contexts sampled for the curve (log-spaced), besides 0, the top and the floor's edge.
CURVE_POINTS = 96


@dataclass(frozen=True)
class ContextCurve:
    """The ceilings at sampled read contexts (vectorized; None entries are NaN / -1 in the arrays).

    ``batch_star`` is 0 where no batch clears the floor; ``aggregate_tok_s`` and
    ``per_session_tok_s`` are NaN there.
    """

    read_context_tokens: Int
    single_session_tok_s: Float
    batch_star: Int
    aggregate_tok_s: Float
    per_session_tok_s: Float


@dataclass(frozen=True)
class DecodeContextRange:
    """The single-session ceiling and the b* aggregate over every read context 0..``max_read_context``.

    ``at_shortest`` and ``at_longest`` are the decode results at 0 and at the top of the range; the
    single-session ceiling is highest at the first and lowest at the second. ``floor_read_context``
    is the longest context at which some batch clears the floor (None when none does, even at 0);
    the aggregate is highest at 0 and lowest there (``at_floor_edge``). ``verdict`` is the result's
    at L = 0; when no session fits there the range is empty and every other field but the verdict
    is None.
    """

    workload: Workload
    verdict: Verdict
    max_read_context_tokens: int | None
    limited_by: RangeLimit | None  # what set the longest read context of the range
    floor_read_context_tokens: int | None
    at_shortest: DecodeResult | None
    at_longest: DecodeResult | None
    at_floor_edge: DecodeResult | None
    curve: ContextCurve | None


def _at(workload: Workload, read_context: int) -> Workload:
    """The workload at one read context: the reservation grows to hold it when it is longer."""
    return replace(
        workload,
        read_context_tokens=read_context,
        alloc_context_tokens=max(workload.alloc_context_tokens, read_context),
        forced_batch=None,
    )


def decode_context_range(
    hardware: Hardware, model: ModelAdapter, workload: Workload | None = None
) -> DecodeContextRange:
    """The decode ceilings over every read context from 0 to the model's context limit (the
    workload's alloc context when the model states none), cut where one session stops fitting."""
    workload = workload or Workload()
    if workload.offload is not None:
        # Two tiers: the same range on the effective single-tier adapter (core.offload).
        eff, _, _ = offloaded(hardware, model, workload.offload, workload.overhead_bytes)
        return decode_context_range(hardware, eff, replace(workload, offload=None))
    base = decode(hardware, model, _at(workload, 0))
    if not base.fits:
        return DecodeContextRange(workload, base.verdict, None, None, None, None, None, None, None)

    top, limited_by = range_top(model, workload)
    spec = workload.speculation
    margin = base.resident_margin_bytes

    def session_fits(context: int) -> bool:
        alloc = (
            context
            if workload.kv_allocation is KVAllocation.PAGED
            else max(workload.alloc_context_tokens, context)
        )
        kv = model.kv_alloc.bytes_at(alloc) + (spec.draft.kv_alloc.bytes_at(alloc) if spec else 0.0)
        return memory_fit_batch(margin, kv)[0] >= 1

    if not session_fits(top):
        # The reservation fits at 0 (base fits), so the edge lies in [alloc context, top).
        top = largest_true(session_fits, min(workload.alloc_context_tokens, top), top)
        limited_by = RangeLimit.MEMORY

    bandwidth = hardware.bandwidth_bytes_per_s
    floor = workload.floor_tok_s

    def batch1_clears(context: int) -> bool:
        at = _at(workload, context)
        compute_bytes = decode_compute(hardware, model, at).bytes_equivalent(bandwidth)
        return _Traffic(model, at, compute_bytes).per_session_scalar(1, bandwidth) >= floor

    floor_edge: int | None
    if base.verdict is not Verdict.FLOOR_FIT:
        floor_edge = None
    elif batch1_clears(top):
        floor_edge = top
    else:
        floor_edge = largest_true(batch1_clears, 0, top)

    longest = decode(hardware, model, _at(workload, top))
    at_floor = None if floor_edge is None else decode(hardware, model, _at(workload, floor_edge))
    contexts = _curve_contexts(top, floor_edge)
    return DecodeContextRange(
        workload=workload,
        verdict=base.verdict,
        max_read_context_tokens=top,
        limited_by=limited_by,
        floor_read_context_tokens=floor_edge,
        at_shortest=base,
        at_longest=longest,
        at_floor_edge=at_floor,
        curve=context_curve(hardware, model, workload, contexts),
    )


def _curve_contexts(top: int, floor_edge: int | None) -> Int:
    sampled = np.unique(np.rint(np.geomspace(1, max(top, 1), CURVE_POINTS)).astype(np.int64))
    extra = [0, top]
    if floor_edge is not None:
        extra += [floor_edge, min(floor_edge + 1, top)]
    return np.unique(np.concatenate([sampled[sampled <= top], np.asarray(extra, dtype=np.int64)]))


def _memory_fit_batches(margin_bytes: float, kv_alloc_bytes: Float) -> Int:
    """memory_fit_batch over an array of reservations: floor(margin / K_alloc), capped at MAX_BATCH."""
    if margin_bytes < 0:
        return np.zeros(kv_alloc_bytes.shape, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        ratio = margin_bytes / kv_alloc_bytes
    capped = (kv_alloc_bytes <= 0) | ~(ratio <= MAX_BATCH)
    batches: Int = np.where(capped, MAX_BATCH, np.floor(np.where(capped, 0.0, ratio))).astype(np.int64)
    return batches


def batch_bytes(weights: Weights, batches: NDArray[np.float64], mode: ExpertTraffic) -> Float:
    """W_batch at each batch, each the float :func:`decode` computes at that batch: numpy's expm1
    is not libm's in the last bit on some inputs, so routed experts' expected traffic is taken one
    count at a time (a curve holds about a hundred contexts); other weights on the array."""
    experts = weights.experts
    if experts is None or mode is not ExpertTraffic.EXPECTED or experts.per_token >= experts.routed:
        out: Float = weights.batch(batches, mode)
        return out
    return np.fromiter((weights.batch(b, mode) for b in batches.tolist()), np.float64, batches.size)


def context_curve(
    hardware: Hardware, model: ModelAdapter, workload: Workload, read_contexts: ArrayLike
) -> ContextCurve:
    """Single-session ceiling, b* and the aggregate at b* over an array of read contexts, vectorized.

    The same arithmetic as :func:`decode` at each context (the reservation max(L_alloc, L), b_mem,
    the closed-form b_rate, the exact floor test with the compute roof, b* by bisection, the balance
    batch), run on every context at once. The compute roof's seconds per session step c(L) come from
    decode_compute's own vectorized form; with speculation, from decode_compute at each sampled context.
    """
    contexts = np.asarray(read_contexts, dtype=np.int64)
    lf = contexts.astype(np.float64)
    spec = workload.speculation
    mode = workload.expert_traffic
    bandwidth = hardware.bandwidth_bytes_per_s
    floor = workload.floor_tok_s
    weights = model.weights

    private = private_read_bytes(model, spec, lf)
    alloc = (
        lf
        if workload.kv_allocation is KVAllocation.PAGED
        else np.maximum(float(workload.alloc_context_tokens), lf)
    )
    kv_alloc = model.kv_alloc.bytes_at(alloc)
    if spec is not None:
        kv_alloc = kv_alloc + spec.draft.kv_alloc.bytes_at(alloc)
    resident = weights.resident + (spec.draft.weights.resident if spec else 0.0)
    margin = hardware.memory_bytes - resident - workload.overhead_bytes

    rho = workload.tokens_per_step
    if spec is None:
        seconds = seconds_per_session_step_over_contexts(hardware, model, workload, lf)
        compute_bytes = np.zeros_like(lf) if seconds is None else bandwidth * seconds / rho
    else:
        compute_bytes = np.asarray(
            [
                decode_compute(hardware, model, _at(workload, int(c))).bytes_equivalent(bandwidth)
                for c in contexts
            ],
            dtype=np.float64,
        )
    charged = compute_bytes > 0.0

    def per_token(batch: NDArray[np.float64]) -> Float:
        # _Traffic.per_token, with the private read an array over contexts.
        if spec is None:
            q: Float = batch_bytes(weights, batch, mode) / batch + private
            return q
        gamma, rho = spec.draft_tokens, spec.tokens_per_step
        shared = batch_bytes(weights, batch * (gamma + 1), mode) + gamma * batch_bytes(
            spec.draft.weights, batch, mode
        )
        q = shared / (batch * rho) + private / rho
        return q

    def effective(batch: NDArray[np.float64]) -> Float:
        q = per_token(batch)
        out: Float = np.where(charged, np.maximum(q, compute_bytes), q)
        return out

    def clears(batch: Int) -> NDArray[np.bool_]:
        bf = batch.astype(np.float64)
        ok: NDArray[np.bool_] = bandwidth / (bf * effective(bf)) >= floor
        return ok

    def catches_up(batch: Int) -> NDArray[np.bool_]:
        ok: NDArray[np.bool_] = charged & (per_token(batch.astype(np.float64)) <= compute_bytes)
        return ok

    ones = np.ones_like(contexts)
    single = bandwidth / effective(ones.astype(np.float64))
    batch_mem = _memory_fit_batches(margin, kv_alloc)
    upper = batch_mem.copy()
    if spec is None and floor > 0:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            closed_form = (bandwidth / floor - weights.active) / private
        limited = (private > 0) & (closed_form <= MAX_BATCH)
        rate = np.where(limited, np.maximum(0.0, np.floor(np.where(limited, closed_form, 0.0))), 0.0)
        upper = np.where(limited, np.maximum(1, np.minimum(upper, rate.astype(np.int64))), upper)
    live = (batch_mem >= 1) & clears(ones)
    upper = np.where(live, np.maximum(upper, 1), 1)
    lo = ones.copy()
    hi = np.where(clears(upper), lo, upper)
    lo = np.where(clears(upper), upper, lo)
    while np.any(lo < hi):
        open_ = lo < hi
        mid = (lo + hi + 1) // 2
        ok = clears(mid)
        lo, hi = np.where(open_ & ok, mid, lo), np.where(open_ & ~ok, mid - 1, hi)
    usable = np.maximum(lo, 1)
    # The balance batch: the smallest b <= b_mem with t_cmp(b) >= t_mem(b) (a suffix of the batches).
    top = np.maximum(batch_mem, 1)
    has_balance = (batch_mem >= 1) & catches_up(top)
    b_lo, b_hi = ones.copy(), top.copy()
    at_one = catches_up(ones)
    b_hi = np.where(at_one, 1, b_hi)
    while np.any(has_balance & ~at_one & (b_hi - b_lo > 1)):
        open_ = has_balance & ~at_one & (b_hi - b_lo > 1)
        mid = (b_lo + b_hi) // 2
        ok = catches_up(mid)
        b_lo, b_hi = np.where(open_ & ~ok, mid, b_lo), np.where(open_ & ok, mid, b_hi)
    # Past the balance batch the aggregate is flat at rho / c: b* is the smallest batch reaching it.
    flat = has_balance & (per_token(usable.astype(np.float64)) < compute_bytes) & (b_hi < usable)
    star = np.where(live, np.where(flat, b_hi, usable), 0)
    aggregate = np.where(live, bandwidth / effective(np.maximum(star, 1).astype(np.float64)), np.nan)
    return ContextCurve(
        read_context_tokens=contexts,
        single_session_tok_s=np.where(batch_mem >= 1, single, np.nan),
        batch_star=star,
        aggregate_tok_s=aggregate,
        per_session_tok_s=aggregate / np.maximum(star, 1),
    )
