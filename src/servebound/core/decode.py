"""Decode ceilings, exactly as the derivation's calculator procedure (ordinary and speculative).

Everything follows from two monotonicity facts the derivation's adapters guarantee:
``b * q(b)`` (bytes an iteration moves per emitted token per session) never falls as the batch grows,
so the per-session rate r(b) never rises and the floor set is a prefix {1..b_floor}; and ``q(b)`` never
rises, so the aggregate T(b) never falls and the best usable batch is the largest one. The search is a
bisection over [1, min(b_mem, b_rate)], never a walk over every batch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from servebound.core.experts import ExpertTraffic
from servebound.core.formats import KV_FORMATS
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.workload import MAX_BATCH, Workload, memory_fit_batch


class Verdict(StrEnum):
    """The stack of gates; the first that fails names the verdict."""

    FLOOR_FIT = "floor_fit"
    NO_FLOOR = "no_floor"
    NO_SESSION_FIT = "no_session_fit"
    NO_RESIDENT_FIT = "no_resident_fit"


class BatchLimit(StrEnum):
    """What stopped b* from growing: memory (b_mem), the per-session floor, or the search cap."""

    MEMORY = "memory"
    FLOOR = "floor"
    SEARCH_CAP = "search_cap"


@dataclass(frozen=True)
class Forced:
    """The ceilings at a batch fixed by policy."""

    batch: int
    aggregate_tok_per_s: float
    per_session_tok_per_s: float
    clears_floor: bool
    fits_memory: bool


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


@dataclass(frozen=True)
class DecodeResult:
    """Every decode ceiling for one (hardware, model, workload) with the inputs that produced it.

    Batches: ``batch_mem`` fits in memory (capped at MAX_BATCH, ``batch_mem_capped``), ``batch_rate`` is
    the closed-form necessary floor condition, ``batch_floor`` the exact largest batch clearing the floor
    when the floor bound, ``batch_star`` the usable batch with the largest aggregate.
    """

    hardware: Hardware
    model: ModelAdapter
    workload: Workload
    verdict: Verdict
    resident_bytes: float
    resident_margin_bytes: float
    kv_alloc_bytes: float
    kv_read_bytes: float
    weight_active_bytes: float
    is_estimate: bool
    remedies: Remedies = Remedies()
    batch_mem: int | None = None
    batch_mem_capped: bool = False
    batch_rate: int | None = None
    batch_floor: int | None = None
    batch_star: int | None = None
    batch_limited_by: BatchLimit | None = None
    single_session_tok_per_s: float | None = None
    aggregate_tok_per_s: float | None = None
    per_session_tok_per_s: float | None = None
    bytes_per_token_at_star: float | None = None
    memory_power_tok_per_s: float | None = None
    large_memory_limit_tok_per_s: float | None = None
    forced: Forced | None = None

    @property
    def fits(self) -> bool:
        """A session fits (the verdict is floor_fit or no_floor)."""
        return self.verdict in (Verdict.FLOOR_FIT, Verdict.NO_FLOOR)


class _Traffic:
    """q(b) and b*q(b) for one setting: the only place per-token decode traffic is computed."""

    def __init__(self, model: ModelAdapter, workload: Workload) -> None:
        self.model = model
        self.mode = workload.expert_traffic
        self.kv_read = model.kv_read.bytes_at(workload.read_context_tokens)
        spec = workload.speculation
        self.spec = spec
        if spec is not None:
            self.draft_kv_read = spec.draft.kv_read.bytes_at(workload.read_context_tokens)

    def per_token(self, batch: ArrayLike) -> NDArray[np.float64]:
        """q_KV(b) = W_batch(b)/b + K_read, or q_spec(b) with a draft."""
        b = np.asarray(batch, dtype=np.float64)
        spec = self.spec
        if spec is None:
            return self.model.weights.batch(b, self.mode) / b + self.kv_read
        gamma = spec.draft_tokens
        rho = spec.tokens_per_step
        shared = self.model.weights.batch(b * (gamma + 1), self.mode) + gamma * spec.draft.weights.batch(
            b, self.mode
        )
        private = self.kv_read + gamma * self.draft_kv_read
        return shared / (b * rho) + private / rho

    def per_session_scalar(self, batch: int, bandwidth: float) -> float:
        return float(bandwidth / (batch * self.per_token(batch)))


def curve(
    hardware: Hardware, model: ModelAdapter, workload: Workload, batches: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Aggregate T(b) and per-session r(b) over an array of batches, vectorized (for figures and tables)."""
    traffic = _Traffic(model, workload)
    b = np.asarray(batches, dtype=np.float64)
    aggregate = hardware.bandwidth_bytes_per_s / traffic.per_token(b)
    return aggregate, aggregate / b


def _largest_true(ok: object, lo: int, hi: int) -> int:
    """Largest b in [lo, hi] with ok(b), given ok(lo) holds and ok is monotone (true then false)."""
    assert callable(ok)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if ok(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def decode(hardware: Hardware, model: ModelAdapter, workload: Workload | None = None) -> DecodeResult:
    """Run the derivation's decode procedure: gates, b_mem, b_rate, the exact floor test, b*, ceilings."""
    workload = (workload or Workload()).for_model(model)
    capacity = hardware.memory_bytes
    bandwidth = hardware.bandwidth_bytes_per_s
    floor = workload.floor_tok_per_s
    spec = workload.speculation

    resident = model.weights.resident + (spec.draft.weights.resident if spec else 0.0)
    margin = capacity - resident - workload.overhead_bytes
    kv_alloc = model.kv_alloc.bytes_at(workload.alloc_context_tokens)
    if spec is not None:
        kv_alloc += spec.draft.kv_alloc.bytes_at(workload.alloc_context_tokens)
    traffic = _Traffic(model, workload)
    w_active = model.weights.active
    is_estimate = (
        model.weights.experts is not None and workload.expert_traffic is ExpertTraffic.EXPECTED
    ) or hardware.provenance != "peak"

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
            is_estimate=is_estimate,
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

    single = float(bandwidth / traffic.per_token(1))
    large_memory = memory_power = None
    if kv_alloc > 0 and w_active > 0:
        large_memory = capacity * bandwidth / (kv_alloc * w_active)
        memory_power = bandwidth * margin / (kv_alloc * w_active)

    # b_rate: the closed-form necessary condition with W_active, ordinary decoding with positive K_read.
    batch_rate: int | None = None
    if spec is None and traffic.kv_read > 0 and floor > 0:
        closed_form = (bandwidth / floor - w_active) / traffic.kv_read
        # A vanishing floor or read size sends the ratio past any batch (or to inf): no rate limit.
        batch_rate = max(0, math.floor(closed_form)) if closed_form <= MAX_BATCH else None

    def clears(batch: int) -> bool:
        return traffic.per_session_scalar(batch, bandwidth) >= floor

    forced = _forced(workload, traffic, bandwidth, batch_mem)
    reached = dict(
        batch_mem=batch_mem,
        batch_mem_capped=batch_mem_capped,
        batch_rate=batch_rate,
        single_session_tok_per_s=single,
        memory_power_tok_per_s=memory_power,
        large_memory_limit_tok_per_s=large_memory,
        forced=forced,
    )
    if not clears(1):
        return result(
            Verdict.NO_FLOOR, remedies=_floor_remedies(model, workload, traffic, bandwidth, single), **reached
        )

    upper = batch_mem if batch_rate is None else max(1, min(batch_mem, batch_rate))
    batch_star = upper if clears(upper) else _largest_true(clears, 1, upper)
    if batch_star < batch_mem:
        limited_by = BatchLimit.FLOOR
    elif batch_mem_capped:
        limited_by = BatchLimit.SEARCH_CAP
    else:
        limited_by = BatchLimit.MEMORY
    q_star = float(traffic.per_token(batch_star))
    aggregate = bandwidth / q_star
    return result(
        Verdict.FLOOR_FIT,
        # b_floor beyond b_mem is never searched: it is reported only when the floor bound the batch.
        batch_floor=batch_star if limited_by is BatchLimit.FLOOR else None,
        batch_star=batch_star,
        batch_limited_by=limited_by,
        aggregate_tok_per_s=aggregate,
        per_session_tok_per_s=aggregate / batch_star,
        bytes_per_token_at_star=q_star,
        **reached,
    )


def _forced(workload: Workload, traffic: _Traffic, bandwidth: float, batch_mem: int) -> Forced | None:
    batch = workload.forced_batch
    if batch is None:
        return None
    aggregate = float(bandwidth / traffic.per_token(batch))
    per_session = aggregate / batch
    return Forced(
        batch=batch,
        aggregate_tok_per_s=aggregate,
        per_session_tok_per_s=per_session,
        clears_floor=per_session >= workload.floor_tok_per_s,
        fits_memory=batch <= batch_mem,
    )


def _session_remedies(
    model: ModelAdapter, workload: Workload, margin: float, resident: float, capacity: float, kv_alloc: float
) -> Remedies:
    """No session fits: the longest reservation that fits, the capacity or overhead needed, and the
    KV precisions at which one session of the stated reservation fits."""
    target_alloc = model.kv_alloc.bytes_at(workload.alloc_context_tokens)
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
    floor = workload.floor_tok_per_s
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
