"""Decode on a system of devices, answered at the scenario's layout (``Scenario.layout``).

A system does not decode as one pooled device: the layout splits the model, each device streams its
share, links carry the activations, a pipeline passes a token stage by stage. The answer is decode's
record with decode's fields at that layout (``core.layout``'s ceilings), so every surface that reads a
decode answer reads the layout's numbers, and says which layout it answered at:

* b_mem and b* count sessions, as decode's do: dp pp times the layout's micro-batch (``layout.micro_batch``);
* T(b*), r(b*), the single session, the step and its bound are the layout's;
* the pooled device's closed forms (b_rate, memory-power, the large-memory limit) stay as bounds no
  layout passes; ``pooled`` keeps the pooled answer itself.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import TYPE_CHECKING, Any

from servebound.core.advice import Note
from servebound.core.decode import BatchLimit, DecodeResult, Forced
from servebound.core.fields import documented, documented_property
from servebound.core.layout import BoundBy, LayoutResult, evaluate_layout, times_at
from servebound.core.nearest_records import NearestFit, suggestions
from servebound.core.search import largest_true
from servebound.core.workload import MAX_BATCH, Workload
from servebound.questions.nearest import applied

if TYPE_CHECKING:  # a system's scenario brings its layout: a decode on one device resolves none
    from servebound.inputs.layout import LayoutChoice


@dataclass(frozen=True, repr=False)
class SystemDecode(DecodeResult):
    """Decode on a system of devices at one layout: decode's fields at the layout, the layout and why
    it was chosen (``layout``), and the system as one pooled device (``pooled``)."""

    layout: LayoutChoice | None = documented(
        "the layout answered (given, the engine's split, or the best valid one) and why; the JSON "
        "gives it as `layout` with the layout's own fields beside decode's",
        json=None,
        default=None,
    )
    pooled: DecodeResult | None = documented(
        "the system as one pooled device (summed capacity, bandwidth and rates): a bound no layout "
        "passes, for comparison",
        json=None,
        default=None,
    )
    pooled_because: str | None = documented(
        "why the system answers as one pooled device (what its layouts do not model), where it does",
        json=None,
        default=None,
    )

    @documented_property(
        "where no session fits: the nearest settings that fit, best first, each answered by decode there "
        "(`{change, value, single_session_tok_s, aggregate_tok_s, batch_star, host, floor_fit}`); empty "
        "where one fits"
    )
    def nearest_fit(self) -> tuple[NearestFit, ...]:
        """The pooled answer's context changes, answered again at the same layout (another format or
        an offload would need a layout of its own: not suggested on a system)."""
        if self.layout is None:  # answered pooled: the pooled answer's own suggestions
            return suggestions(self)
        if self.pooled is None or self.fits:
            return ()
        out = []
        for fit in self.pooled.nearest_fit:
            if fit.change not in ("alloc_context", "read_context"):
                continue
            _, model, workload = applied(self.pooled, fit)
            result = _evaluate(self.layout, model, workload)
            lanes = result.layout.dp * result.layout.pp
            out.append(
                replace(
                    fit,
                    single_session_tok_s=result.single_session_tok_s,
                    aggregate_tok_s=result.aggregate_tok_s,
                    batch_star=None if result.batch_star is None else lanes * result.batch_star,
                    floor_fit=result.aggregate_tok_s is not None,
                )
            )
        return tuple(out)

    @property
    def layout_notes(self) -> tuple[Note, ...]:
        """What the answer is: the layout and why, the pooled bound beside it, and the choice's notes."""
        choice, pooled = self.layout, self.pooled
        if choice is None:
            because = f"the system's parallel layouts do not model {self.pooled_because or 'this question'}"
            return (
                Note.of(f"Answered as one pooled device with summed bandwidth (a looser bound): {because}."),
            )
        system = choice.system.system
        said = Note.of(
            f"Answered at {choice.label} on {system.count} x {system.device.name} ({choice.why}); "
            "servebound layout lists every layout of the system."
        )
        notes = [said, *choice.notes]
        if pooled is not None and pooled.single_session_tok_s is not None:
            aggregate = pooled.aggregate_tok_s
            notes.append(
                Note.of(
                    f"As one pooled device with summed bandwidth the system would give "
                    f"{pooled.single_session_tok_s:,.1f} tok/s to one session"
                    + ("" if aggregate is None else f" and {aggregate:,.0f} tok/s in all")
                    + ": a bound no layout reaches, since each device streams only its own share."
                )
            )
        return tuple(notes)


def pooled_on_system(pooled: DecodeResult, because: str) -> SystemDecode:
    """``pooled`` (decode on a system's pooled row) as a system's answer that says why it is pooled."""
    kept = {f.name: getattr(pooled, f.name) for f in fields(pooled) if f.init}
    return SystemDecode(**kept, pooled_because=because)


def _evaluate(choice: LayoutChoice, model: Any, workload: Workload) -> LayoutResult:
    system = choice.system.system
    return evaluate_layout(
        system, model, choice.layout, workload, compute_s_per_session_step=choice.compute_s_per_session_step
    )


def at_layout(pooled: DecodeResult, choice: LayoutChoice) -> SystemDecode:
    """``pooled`` (decode on the system's pooled row) answered at ``choice``'s layout instead."""
    r, lay = choice.result, choice.layout
    lanes = lay.dp * lay.pp
    times = r.times if r.batch_star is not None else None
    star = None if r.batch_star is None else lanes * r.batch_star
    compute_s = None if times is None else times.compute_s
    kept = {f.name: getattr(pooled, f.name) for f in fields(pooled) if f.init}
    at = dict(
        verdict=r.verdict,
        resident_margin_bytes=(r.per_device.free_bytes + r.per_device.kv_bytes) * lay.devices,
        batch_mem=None if r.batch_mem is None else lanes * r.batch_mem,
        batch_mem_capped=False,
        batch_floor=None,
        batch_star=star,
        batch_limited_by=_limited_by(r),
        single_session_tok_s=r.single_session_tok_s,
        aggregate_tok_s=r.aggregate_tok_s,
        per_session_tok_s=r.per_session_tok_s,
        bytes_per_token_at_star=None,
        forced=_forced(choice, pooled.model, pooled.workload),
        balance_batch=_balance(choice, pooled.model, pooled.workload),
        bound_by=None if times is None else times.bound_by,
        step_time_s=None if times is None else times.stage_s,
        compute_tok_s_at_star=None if star is None or not compute_s else star / (lay.pp * compute_s),
        memory_tok_s_at_star=None if times is None or star is None else star / (lay.pp * times.memory_s),
    )
    return SystemDecode(**{**kept, **at}, layout=choice, pooled=pooled)


def _limited_by(r: LayoutResult) -> BatchLimit | None:
    """What stopped the layout's micro-batch from growing: memory, compute (the aggregate is flat past
    it), else the floor (or, where links bind, the smallest batch reaching the flat aggregate)."""
    if r.batch_star is None or r.times is None:
        return None
    if r.batch_star == r.batch_mem:
        return BatchLimit.MEMORY
    return BatchLimit.COMPUTE if r.times.bound_by is BoundBy.COMPUTE else BatchLimit.FLOOR


def _balance(choice: LayoutChoice, model: Any, workload: Workload) -> int | None:
    """The smallest batch of sessions whose stage compute time reaches its memory time within those
    that fit (dp pp times the micro-batch); None where compute never catches up or is not charged."""
    r, lay = choice.result, choice.layout
    c = choice.compute_s_per_session_step
    if c is None or not r.batch_mem:
        return None
    system = choice.system.system

    def memory_bound(batch: int) -> bool:
        t = times_at(system, model, lay, batch, workload, compute_s_per_session_step=c)
        return t.compute_s is None or t.compute_s < t.memory_s

    top = min(r.batch_mem, MAX_BATCH)
    if memory_bound(top):
        return None
    if not memory_bound(1):
        return lay.dp * lay.pp
    return lay.dp * lay.pp * (largest_true(memory_bound, 1, top) + 1)


def _forced(choice: LayoutChoice, model: Any, workload: Workload) -> Forced | None:
    """``--batch B`` on a layout: B sessions over its dp pp lanes, a micro-batch of ceil(B / (dp pp))
    each, every session at 1 / tau."""
    if workload.forced_batch is None:
        return None
    sessions, lay, r = workload.forced_batch, choice.layout, choice.result
    batch = max(1, -(-sessions // (lay.dp * lay.pp)))
    system = choice.system.system
    c = choice.compute_s_per_session_step
    times = times_at(system, model, lay, batch, workload, compute_s_per_session_step=c)
    per_session = 1.0 / times.token_s
    return Forced(
        batch=sessions,
        aggregate_tok_s=sessions * per_session,
        per_session_tok_s=per_session,
        clears_floor=per_session >= workload.floor_tok_s,
        fits_memory=r.batch_mem is not None and batch <= r.batch_mem,
    )
