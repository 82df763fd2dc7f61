"""Decode's notes as records (``servebound.core.advice``): what the verdict means, and for a failed
gate the inputs that would pass it, with the values and what they would change. The terminal, the JSON
answer and the pair page render the same records, each in its own spelling."""

from __future__ import annotations

from typing import Any

from servebound.catalog import snapshot
from servebound.catalog.hardware_names import normalize_ref
from servebound.core.advice import Note, Setting
from servebound.core.decode import BatchLimit, DecodeResult, Verdict
from servebound.core.decode_compute import ComputeStatus
from servebound.core.formats import format_words
from servebound.core.model import ModelAdapter
from servebound.core.nearest_records import NearestFit
from servebound.core.offload import OffloadSpec
from servebound.core.units import GB
from servebound.core.workload import MAX_BATCH, Workload
from servebound.questions import nearest as _nearest  # noqa: F401 (registers decode's nearest-fit suggestions)

#: One sentence per decode verdict, shared by the CLI, the notes and the site (which capitalises it).
VERDICT_TEXT: dict[str, str] = {
    "floor_fit": "fits, and a batch clears the floor",
    "no_floor": "fits, but no batch satisfies the floor",
    "no_session_fit": "the weights fit, but no session fits",
    "no_resident_fit": "does not fit in memory",
}


#: The verdict in a table's cell: a few plain words (the JSON keeps the enum).
VERDICT_WORDS: dict[str, str] = {
    "floor_fit": "serves",
    "no_floor": "below floor",
    "no_session_fit": "no session fits",
    "no_resident_fit": "does not fit",
}


def verdict_said(r: DecodeResult) -> str:
    """The verdict as the terminal's headline says it: a floor miss with its speed first, then the floor
    (a session that fits at 10 tok/s is an answer, not a failure)."""
    single = r.remedies.batch1_tok_per_s
    if r.verdict is Verdict.NO_FLOOR and single is not None:
        return f"fits, at {single:,.1f} tok/s per session, below the {r.workload.floor_tok_s:g} tok/s floor"
    return VERDICT_TEXT[r.verdict.value]


def sentence(text: str) -> str:
    """A verdict sentence as the start of a sentence (capital first letter)."""
    return text[:1].upper() + text[1:]


def _gb(value: float) -> str:
    return f"{value / GB:,.2f} GB"


def _said(text: str) -> Note:
    return Note((text,))


def _compute_notes(r: DecodeResult) -> list[Note]:
    """What the compute roof did: where it bound b*, or why the balance batch is absent."""
    compute = r.compute
    if compute is None or compute.status is not ComputeStatus.CHARGED:
        return []
    if r.batch_limited_by is BatchLimit.COMPUTE and r.batch_star is not None:
        return [
            _said(
                f"Compute binds: past the balance batch {r.batch_star:,} the step time grows with the batch, "
                f"so the aggregate stays at {r.aggregate_tok_s or 0:,.0f} tok/s; b* is the smallest batch "
                "reaching it (a larger batch only lowers per-session speed)."
            )
        ]
    if r.balance_batch is None and r.batch_mem:
        return [
            _said(
                f"Compute never catches up with memory within the {r.batch_mem:,} sessions that fit: no "
                "balance batch (memory time exceeds compute time at every fitting batch)."
            )
        ]
    return []


def _placed(spec: OffloadSpec | None) -> str:
    """What the offload puts in host RAM, in words every surface shares."""
    if spec is None or spec.cpu_moe:
        return "every routed expert in host RAM"
    if spec.n_cpu_moe is not None:
        return f"the experts of {spec.n_cpu_moe:,} MoE layers in host RAM"
    return f"{spec.gpu_layers or 0:,} layers on the device, the rest in host RAM"


def _engine_notes(r: DecodeResult) -> list[Note]:
    """The weight format's support on this device, and where the bytes sit when weights are offloaded."""
    notes: list[Note] = [_said(text) for text in draft_notes(r.model, r.workload)]
    if r.format_support.value != "native":
        notes.append(_said(f"Weight format {r.format_support.value}: {r.format_support_why}."))
    off = r.offload
    if off is not None:
        dev_s, host_s = off.step_time_split_s
        notes.append(
            _said(
                f"Offload ({_placed(r.workload.offload)}): {off.device_resident_bytes / GB:,.2f} GB of weights on the device, "
                f"{off.host_resident_bytes / GB:,.2f} GB in host RAM ({off.host_memory_bytes / GB:,.0f} GB at "
                f"{off.host_bandwidth_bytes_per_s / GB:,.1f} GB/s{', ' + off.host if off.host else ''})"
                + ("" if off.host_fits else ": the host's share does not fit in host RAM")
                + f". A step at b = {off.batch:,} reads {dev_s * 1e3:,.2f} ms on the device plus "
                f"{host_s * 1e3:,.2f} ms in host memory (t = B_dev/R_dev + B_host/R_host)."
            )
        )
        unified = _unified_memory(r.hardware.id)
        if unified:
            notes.append(
                _said(
                    f"{r.hardware.name}'s memory is unified ({unified}): its CPU reads the same memory as its "
                    "GPU, so there is no separate host RAM to offload to; this answer models a host tier "
                    "attached as to a discrete card, which this machine does not have."
                )
            )
    return notes


def draft_notes(target: ModelAdapter, workload: Workload) -> list[str]:
    """What is odd about a speculative draft: the target itself, one not smaller than the target, or
    one whose vocabulary differs (the answer is computed as asked; these say why it may not hold)."""
    spec = workload.speculation
    if spec is None:
        return []
    draft, notes = spec.draft, []
    if draft.id == target.id:
        notes.append(
            f"The draft is the target itself ({target.id}): each drafted token costs a full target pass, so "
            "speculation cannot speed decode; pick a much smaller model of the same family."
        )
    elif draft.weights.active >= target.weights.active:
        notes.append(
            f"The draft reads {_gb(draft.weights.active)} per token, "
            f"{draft.weights.active / target.weights.active:,.1f}x the target's {_gb(target.weights.active)}: "
            "drafting costs more than it saves; a draft is usually under a tenth of the target."
        )
    vocab = [_vocab_size(m.id) for m in (target, draft)]
    if None not in vocab and vocab[0] != vocab[1]:
        notes.append(
            f"The draft's vocabulary ({vocab[1]:,} tokens) differs from the target's ({vocab[0]:,}): a draft "
            "must share the target's tokenizer for its tokens to be verified (engines refuse such a pair)."
        )
    return notes


def _vocab_size(model_id: str) -> int | None:
    """A catalog model's vocabulary size (None: not in the catalog, or not stated)."""
    value = snapshot.profile_fact(model_id, "vocab_size")
    return value if isinstance(value, int) else None


def _unified_memory(hardware_id: str) -> str | None:
    """The memory type of a catalog row whose CPU and GPU share one memory (None: not one, or no row)."""
    entry_id = snapshot.hardware_index().get(normalize_ref(hardware_id))
    fields = None if entry_id is None else snapshot.hardware_fields(entry_id)
    if fields is None:
        return None
    memory = str(fields.get("memory_type") or "")
    unified = "unified" in memory.lower() or fields.get("device_class") == "unified-memory SoC"
    return memory if unified else None


def _no_resident_fit(r: DecodeResult) -> list[Note]:
    w, rem = r.workload, r.remedies
    notes = [
        _said(
            f"Does not fit: weights {_gb(r.resident_bytes)} + overhead {_gb(w.overhead_bytes)} exceed "
            f"capacity {_gb(r.hardware.memory_bytes)} by {_gb(-r.resident_margin_bytes)}."
        )
    ]
    if rem.capacity_needed_bytes is not None:
        notes.append(
            _said(
                f"One session at {w.alloc_context_tokens:,} reserved tokens needs {_gb(rem.capacity_needed_bytes)} "
                "of memory; a smaller weight format or a machine with that capacity would pass."
            )
        )
    notes.extend(_nearest_notes(r))
    return notes


def _speeds(fit: NearestFit, floor: float) -> str:
    """The speeds decode gives at a suggestion: one session, and b* and the aggregate where a batch
    clears the floor; else the speed first, then the floor."""
    single = fit.single_session_tok_s or 0.0
    if fit.batch_star is None or fit.aggregate_tok_s is None:
        return f"{single:,.1f} tok/s per session, below the {floor:g} tok/s floor"
    return (
        f"{single:,.1f} tok/s for one session, {fit.aggregate_tok_s:,.1f} tok/s aggregate at "
        f"b* = {fit.batch_star:,}"
    )


def _nearest_notes(r: DecodeResult) -> list[Note]:
    """One sentence per ``nearest_fit`` suggestion, best first, with decode's speeds there."""
    w, notes = r.workload, []
    for i, fit in enumerate(r.nearest_fit):
        lead = "One session fits" if i == 0 else "Or one session fits"
        speeds = _speeds(fit, w.floor_tok_s)
        host = Setting("host", fit.host) if fit.host else None
        if fit.change in ("alloc_context", "read_context"):
            assert isinstance(fit.value, int)
            also = (
                (Setting("read_context", fit.value),)
                if fit.change == "alloc_context" and w.read_context_tokens > fit.value
                else ()
            )
            kind = "reserved" if fit.change == "alloc_context" else "read"
            where = f"at up to {fit.value:,} {kind} tokens"
            setting = Setting(fit.change, fit.value, also=also)
        elif fit.change == "weight_format":
            where = f"in the {fit.value!s} format"
            setting = Setting("model", str(fit.value))
        elif fit.change == "cpu_moe":
            where = "with every routed expert in host RAM"
            setting = Setting("cpu_moe", True, also=(host,) if host else ())
        else:
            where = f"with {fit.value} layers on the device and the rest in host RAM"
            assert isinstance(fit.value, int)
            setting = Setting("gpu_layers", fit.value, also=(host,) if host else ())
        notes.append(
            Note.of(
                f"{lead} {where} (",
                setting,
                f"; {fit.host}: the catalog's host row for this device class" if fit.host else "",
                f"): {speeds}.",
                effect=f"one session fits {where}: {speeds}",
            )
        )
    return notes


def _no_session_fit(r: DecodeResult) -> list[Note]:
    w, rem = r.workload, r.remedies
    notes = [
        _said(
            f"The weights fit ({_gb(r.resident_margin_bytes)} left after overhead), but one session's cache at "
            f"{w.alloc_context_tokens:,} reserved tokens needs {_gb(r.kv_alloc_bytes)}."
        )
    ]
    top = rem.max_alloc_context_tokens
    nearest = _nearest_notes(r)
    if nearest:
        notes.extend(nearest)
    elif top is not None and top >= 1:
        read = w.read_context_tokens
        also = (Setting("read_context", top),) if read > top else ()
        fits = f"one session fits at up to {top:,} reserved tokens"
        notes.append(
            Note.of(sentence(fits), " (", Setting("alloc_context", top, also=also), ").", effect=fits)
        )
    elif top is not None:
        notes.append(_said("No reservation fits one session: the cache's fixed state alone is too large."))
    if rem.max_overhead_bytes is not None and rem.max_overhead_bytes >= 0:
        most = int(rem.max_overhead_bytes / GB * 100) / 100  # rounded down: the value passes the gate
        notes.append(
            Note.of(
                f"Or with runtime overhead at most {most:,.2f} GB (",
                Setting("overhead_gb", most),
                ").",
                effect=f"one session fits with {most:g} GB of runtime overhead",
            )
        )
    if rem.capacity_needed_bytes is not None:
        notes.append(_said(f"Or with {_gb(rem.capacity_needed_bytes)} of memory."))
    if rem.kv_precisions_that_fit:
        first = rem.kv_precisions_that_fit[0]  # the first the catalog lists
        notes.append(
            Note.of(
                f"Or with a KV cache in {', '.join(map(format_words, rem.kv_precisions_that_fit))} (",
                Setting("kv_precision", first),
                ").",
                effect=f"one session fits with a KV cache in {format_words(first)}",
            )
        )
    return notes


def _no_floor(r: DecodeResult) -> list[Note]:
    w, rem = r.workload, r.remedies
    single = rem.batch1_tok_per_s or 0.0
    notes = [
        _said(
            f"{single:,.1f} tok/s per session, below the {w.floor_tok_s:g} tok/s floor: one session fits "
            "and runs at that speed, and no batch reaches the floor."
        )
    ]
    top = rem.max_read_context_tokens
    if top is not None and top >= 1:
        clears = f"batch 1 clears the floor at up to {top:,} read tokens"
        notes.append(Note.of(sentence(clears), " (", Setting("read_context", top), ").", effect=clears))
    elif top is None:
        notes.append(
            _said("Even an empty context cannot clear the floor: the weight sweep alone is too slow.")
        )
    floor = int(single * 10) / 10  # rounded down: batch 1 clears it
    if floor > 0:
        notes.append(
            Note.of(
                f"Or with a floor of at most {floor:g} tok/s (",
                Setting("floor", floor),
                ").",
                effect=f"batch 1 clears a floor of {floor:g} tok/s",
            )
        )
    if rem.bandwidth_needed_bytes_per_s is not None:
        notes.append(_said(f"Or with {rem.bandwidth_needed_bytes_per_s / GB:,.1f} GB/s of bandwidth."))
    return notes


def _fits(r: DecodeResult) -> list[Note]:
    assert r.batch_star is not None
    by = r.batch_limited_by
    if by is BatchLimit.MEMORY:
        return [
            _said(
                f"b* = b_mem = {r.batch_star:,}: memory bounds the batch; every fitting batch clears the floor."
            )
        ]
    if by is BatchLimit.FLOOR:
        return [
            _said(
                f"b* = {r.batch_star:,}: the per-session floor bounds the batch ({r.batch_mem:,} sessions fit "
                "in memory)."
            )
        ]
    if by is BatchLimit.COMPUTE:  # said by the compute notes
        return []
    return [
        _said(
            "Memory does not bound the batch (the cache does not grow with context or is tiny); the search "
            f"stops at {MAX_BATCH:,} sessions. Compute, kernels and the scheduler bound this model, not memory: "
            "treat the aggregate as a memory-side ceiling only."
        )
    ]


def _context_notes(r: DecodeResult) -> list[Note]:
    w = r.workload
    limit = r.model.context_limit_tokens
    if w.contexts_capped_from is not None and limit is not None:
        alloc, read = w.contexts_capped_from
        return [
            Note.of(
                f"The default contexts ({alloc:,} reserved, {read:,} read) exceed the model's {limit:,}-token "
                f"context limit: reserved {w.alloc_context_tokens:,}, read {w.read_context_tokens:,} (set ",
                Setting("alloc_context"),
                " to override).",
            )
        ]
    if limit is not None and w.alloc_context_tokens > limit:
        return [
            _said(
                f"The reserved context ({w.alloc_context_tokens:,}) exceeds the model's stated limit ({limit:,} "
                "tokens, max_position_embeddings); computed as asked, as rope scaling can extend it."
            )
        ]
    return []


_BY_VERDICT = {
    Verdict.NO_RESIDENT_FIT: _no_resident_fit,
    Verdict.NO_SESSION_FIT: _no_session_fit,
    Verdict.NO_FLOOR: _no_floor,
    Verdict.FLOOR_FIT: _fits,
}


def decode_notes(result: DecodeResult) -> list[Note]:
    """The notes explaining the verdict and the settings that would pass a failed gate."""
    r = result
    # a system's answer (questions.system_decode) says first which layout it answered at
    notes = [*getattr(r, "layout_notes", ()), *_BY_VERDICT[r.verdict](r), *_context_notes(r)]
    if (
        r.fits
        and not r.model.kv_alloc.grows_with_context
        and r.verdict is Verdict.FLOOR_FIT
        and r.batch_limited_by is not BatchLimit.SEARCH_CAP
    ):
        notes.append(
            _said(
                "The cache does not grow with context (recurrent or fixed state only): almost nothing in the "
                "per-token traffic grows with the batch, so the memory-side aggregate is huge. Compute, kernels, "
                "the scheduler and recurrent-state details bound such a model first; read the aggregate as a "
                "memory-side ceiling only."
            )
        )
    notes.extend(_compute_notes(r))
    notes.extend(_engine_notes(r))
    if r.memory_power_tok_s is None and r.fits:
        notes.append(_said("Memory-power ceiling undefined: the reserved cache per session is zero."))
    if r.forced is not None:
        f = r.forced
        state = "clears" if f.clears_floor else "does not clear"
        fit = (
            ""
            if f.fits_memory
            else f" Batch {f.batch:,} does not fit in memory (b_mem = {r.batch_mem or 0:,})."
        )
        notes.append(
            _said(
                f"Forced batch {f.batch:,} {state} the floor at {f.per_session_tok_s:,.1f} tok/s/session.{fit}"
            )
        )
    return notes


def notes_json(notes: list[Note]) -> dict[str, Any]:
    """A JSON answer's ``notes`` (the sentences, settings spelt as the API's parameters) and beside them
    ``note_settings``: each setting a note names as a record, with the note's index."""
    settings = [{**record, "note": i} for i, n in enumerate(notes) for record in n.json()]
    return {"notes": [n.api for n in notes], "note_settings": settings}
