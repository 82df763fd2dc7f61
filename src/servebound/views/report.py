"""Views of results: the contract's JSON and the assumptions block. Formatting lives here, not in the core."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from servebound.core.decode import BatchLimit, DecodeResult, Verdict
from servebound.core.decode_compute import ComputeStatus, DecodeCompute, compute_statement
from servebound.core.experts import ExpertTraffic
from servebound.core.fields import documented_json, json_value
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.reading import is_estimate
from servebound.core.units import GB, TFLOPS
from servebound.core.workload import MAX_BATCH, Workload
from servebound.errors import InputError

if TYPE_CHECKING:  # prefill's and the range's views need no code at import: `servebound decode` skips it
    from servebound.core.decode_range import DecodeContextRange
    from servebound.core.prefill import PrefillRange, PrefillResult

#: One sentence per decode verdict, shared by the CLI, the notes and the site (which capitalises it).
VERDICT_TEXT: dict[str, str] = {
    "floor_fit": "fits, and a batch clears the floor",
    "no_floor": "fits, but no batch satisfies the floor",
    "no_session_fit": "the weights fit, but no session fits",
    "no_resident_fit": "does not fit in memory",
}

#: One sentence per prefill verdict.
PREFILL_VERDICT_TEXT: dict[str, str] = {
    "fits": "fits",
    "over_budget": "fits, but no setting meets the TTFT budget",
    "no_batch_fit": "the requested batch does not fit in memory",
    "no_session_fit": "the weights fit, but no session fits",
    "no_resident_fit": "does not fit in memory",
}


def sentence(text: str) -> str:
    """A verdict sentence as the start of a sentence (capital first letter)."""
    return text[:1].upper() + text[1:]


def hardware_json(hw: Hardware) -> dict[str, Any]:
    return {
        "id": hw.id,
        "name": hw.name,
        "memory_gb": hw.memory_bytes / GB,
        "bandwidth_gb_per_s": hw.bandwidth_bytes_per_s / GB,
        "memory_power_gb2_per_s": hw.memory_power_bytes2_per_s / GB**2,
        "compute_tflops": {mode: rate / TFLOPS for mode, rate in hw.compute_flop_per_s.items()},
        "provenance": hw.provenance,
    }


def workload_assumptions(
    workload: Workload, *, hardware: Hardware, model: ModelAdapter, compute: DecodeCompute | None = None
) -> dict[str, Any]:
    """Every input that moves a decode or prefill result, named as the CLI flags name them."""
    spec = workload.speculation
    moe = model.weights.experts is not None
    mode = workload.expert_traffic
    estimate = is_estimate(hardware, model, mode)
    out: dict[str, Any] = {
        "overhead_gb": workload.overhead_bytes / GB,
        "overhead_source": workload.overhead_source or f"workload: {workload.overhead_bytes / GB:g} GB",
        "alloc_context_tokens": workload.alloc_context_tokens,
        "read_context_tokens": workload.read_context_tokens,
        "kv_allocation": workload.kv_allocation.value,
        "engine": workload.engine,
        "floor_tok_s": workload.floor_tok_per_s,
        "tokens_per_step": workload.tokens_per_step,
        "weight_precision": model.weight_precision,
        "kv_precision": model.kv_precision,
        "expert_traffic": mode.value if moe else "dense (no routed experts)",
        "reading": "estimate" if estimate else "bound",
        "reading_why": _reading_why(moe, mode, hardware.provenance),
        "bandwidth_source": hardware.provenance,
        "memory_gb": hardware.memory_bytes / GB,
        "bandwidth_gb_per_s": hardware.bandwidth_bytes_per_s / GB,
        # decode's compute roof, as the result computed it (prefill's views pass none)
        **({} if compute is None else {"decode_compute": compute_statement(compute)}),
        "memory_only": workload.memory_only,
        "prefix_sharing": "none: private caches per session",
        "max_batch_searched": MAX_BATCH,
    }
    if workload.forced_batch is not None:
        out["forced_batch"] = workload.forced_batch
    if spec is not None:
        out["speculation"] = {
            "draft": spec.draft.id,
            "draft_tokens": spec.draft_tokens,
            "tokens_per_step": spec.tokens_per_step,
            "acceptance": spec.acceptance,
            "draft_resident_gb": spec.draft.weights.resident / GB,
        }
    return out


def _reading_why(moe: bool, mode: ExpertTraffic, provenance: str) -> str:
    parts = []
    if moe:
        parts.append(
            "expected distinct experts m(n) under uniform routing (an expectation, not a minimum)"
            if mode is ExpertTraffic.EXPECTED
            else "routed-expert traffic at its minimum k per iteration (a guaranteed lower bound)"
        )
    parts.append(
        "vendor peak bandwidth (an upper limit)" if provenance == "peak" else "measured sustained bandwidth"
    )
    return "; ".join(parts)


def decode_json(result: DecodeResult, range_result: DecodeContextRange | None = None) -> dict[str, Any]:
    """The contract's `servebound decode --json` object, plus our own extra fields (``context_range``
    with ``--range``)."""
    remedies = {k: json_value(v) for k, v in vars(result.remedies).items() if v not in (None, ())}
    out = {
        "verdict": result.verdict.value,
        "hardware": hardware_json(result.hardware),
        "model": {"id": result.model.id, "name": result.model.name},
        **documented_json(result),
        "decode_compute": _compute_json(result),
        "remedies": remedies,
        "notes": decode_notes(result),
        "assumptions": workload_assumptions(
            result.workload, hardware=result.hardware, model=result.model, compute=result.compute
        ),
    }
    if range_result is not None:
        out["context_range"] = context_range_json(range_result)
    return out


def _nullable(values: Any) -> list[Any]:
    return [None if not math.isfinite(v) else float(v) for v in values]


def range_ends_json(rng: DecodeContextRange) -> dict[str, Any]:
    """The extremes of `decode --range`: ``single_session`` from read context 0 to the longest, and
    ``aggregate`` from 0 to the floor's edge; each only where both its ends exist."""
    out: dict[str, Any] = {}
    short, long_, edge = rng.at_shortest, rng.at_longest, rng.at_floor_edge
    if short is not None and long_ is not None:
        out["single_session"] = {
            "hi_tok_s": short.single_session_tok_per_s,
            "hi_read_context_tokens": 0,
            "lo_tok_s": long_.single_session_tok_per_s,
            "lo_read_context_tokens": rng.max_read_context_tokens,
        }
    if short is not None and edge is not None:
        out["aggregate"] = {
            "hi_tok_s": short.aggregate_tok_per_s,
            "hi_read_context_tokens": 0,
            "hi_batch_star": short.batch_star,
            "lo_tok_s": edge.aggregate_tok_per_s,
            "lo_read_context_tokens": rng.floor_read_context_tokens,
            "lo_batch_star": edge.batch_star,
        }
    return out


def context_range_json(rng: DecodeContextRange) -> dict[str, Any]:
    """`decode --range`: the single-session ceiling and the b* aggregate over every read context
    0..max_read_context_tokens (each reserving max(alloc context, read context)), with their extremes
    and the sampled curve for figures."""
    out: dict[str, Any] = {
        "verdict": rng.verdict.value,
        "min_read_context_tokens": 0,
        "max_read_context_tokens": rng.max_read_context_tokens,
        "limited_by": rng.limited_by.value if rng.limited_by else None,
        "alloc_context_rule": "each read context L reserves max(alloc_context_tokens, L) per session",
        "floor_read_context_tokens": rng.floor_read_context_tokens,
        "single_session": None,
        "aggregate": None,
        "points": None,
    }
    if rng.at_shortest is None or rng.at_longest is None or rng.curve is None:
        return out
    out.update(range_ends_json(rng))
    c = rng.curve
    out["points"] = {
        "read_context_tokens": [int(v) for v in c.read_context_tokens],
        "single_session_tok_s": _nullable(c.single_session_tok_per_s),
        "batch_star": [int(v) if v > 0 else None for v in c.batch_star],
        "aggregate_tok_s": _nullable(c.aggregate_tok_per_s),
        "per_session_tok_s": _nullable(c.per_session_tok_per_s),
    }
    return out


def _gb(value: float) -> str:
    return f"{value / GB:,.2f} GB"


def _tflops(rate: float | None) -> float | None:
    return None if rate is None else rate / TFLOPS


def _compute_json(result: DecodeResult) -> dict[str, Any]:
    """The compute roof's inputs: status, modes, rates (TFLOPS), per-step FLOPs and seconds."""
    compute = result.compute
    assert compute is not None  # decode() always records its compute roof
    rates = compute.rates

    def rate(name: str) -> Any:
        return None if rates is None else getattr(rates, name)

    return {
        "status": compute.status.value,
        "linear_mode": rate("linear_mode"),
        "linear_mode_choice": rate("linear_mode_choice"),
        "attention_mode": rate("attention_mode"),
        "linear_tflops": _tflops(rate("linear_flop_per_s")),
        "attention_tflops": _tflops(rate("attention_flop_per_s")),
        "missing_modes": list(rate("missing_modes") or ()),
        "linear_mode_charged": rate("linear_mode_charged"),
        "attention_mode_charged": rate("attention_mode_charged"),
        "charge_note": rate("charge_note") or None,
        "tokens_per_session_step": compute.tokens_per_session_step,
        "flops_per_session_step": compute.flops_per_session_step,
        "seconds_per_session_step": compute.seconds_per_session_step,
        "ceiling_tok_s": compute.ceiling_tok_per_s,
        "draft": compute.draft,
    }


def _compute_notes(r: DecodeResult) -> list[str]:
    """What the compute roof did: where it bound b*, or why the balance batch is absent."""
    compute = r.compute
    notes: list[str] = []
    if compute is None or compute.status is not ComputeStatus.CHARGED:
        return notes
    if r.batch_limited_by is BatchLimit.COMPUTE and r.batch_star is not None:
        notes.append(
            f"Compute binds: past the balance batch {r.batch_star:,} the step time grows with the batch, so the "
            f"aggregate stays at {r.aggregate_tok_per_s or 0:,.0f} tok/s; b* is the smallest batch reaching it "
            "(a larger batch only lowers per-session speed)."
        )
    elif r.balance_batch is None and r.batch_mem:
        notes.append(
            f"Compute never catches up with memory within the {r.batch_mem:,} sessions that fit: no balance batch "
            "(memory time exceeds compute time at every fitting batch)."
        )
    return notes


def _engine_notes(r: DecodeResult) -> list[str]:
    """The weight format's support on this device, and where the bytes sit when weights are offloaded."""
    notes: list[str] = draft_notes(r.model, r.workload)
    if r.format_support.value != "native":
        notes.append(f"Weight format {r.format_support.value}: {r.format_support_why}.")
    off = r.offload
    if off is not None:
        dev_s, host_s = off.step_time_split_s
        notes.append(
            f"Offload ({off.mode}): {off.device_resident_bytes / GB:,.2f} GB of weights on the device, "
            f"{off.host_resident_bytes / GB:,.2f} GB in host RAM ({off.host_memory_bytes / GB:,.0f} GB at "
            f"{off.host_bandwidth_bytes_per_s / GB:,.1f} GB/s{', ' + off.host if off.host else ''})"
            + ("" if off.host_fits else ": the host's share does not fit in host RAM")
            + f". A step at b = {off.batch:,} reads {dev_s * 1e3:,.2f} ms on the device plus "
            f"{host_s * 1e3:,.2f} ms in host memory (t = B_dev/R_dev + B_host/R_host)."
        )
        unified = _unified_memory(r.hardware.id)
        if unified:
            notes.append(
                f"{r.hardware.name}'s memory is unified ({unified}): its CPU reads the same memory as its GPU, "
                "so there is no separate host RAM to offload to; this answer models a host tier attached as "
                "to a discrete card, which this machine does not have."
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
            f"The draft reads {_gb(draft.weights.active)} per token, {draft.weights.active / target.weights.active:,.1f}x "
            f"the target's {_gb(target.weights.active)}: drafting costs more than it saves; a draft is "
            "usually under a tenth of the target."
        )
    vocab = [_vocab_size(m.id) for m in (target, draft)]
    if None not in vocab and vocab[0] != vocab[1]:
        notes.append(
            f"The draft's vocabulary ({vocab[1]:,} tokens) differs from the target's ({vocab[0]:,}): a draft must "
            "share the target's tokenizer for its tokens to be verified (engines refuse such a pair)."
        )
    return notes


def _vocab_size(model_id: str) -> int | None:
    """A catalog model's vocabulary size (None: not in the catalog, or not stated)."""
    from servebound.catalog.models import get_model

    try:
        value = get_model(model_id).imported.facts.get("vocab_size")
    except InputError:
        return None
    return value if isinstance(value, int) else None


def _unified_memory(hardware_id: str) -> str | None:
    """The memory type of a catalog row whose CPU and GPU share one memory (None: not one, or no row)."""
    from servebound.catalog.hardware import get_hardware

    try:
        row = get_hardware(hardware_id)
    except InputError:
        return None
    memory = row.memory_type or ""
    return memory if "unified" in memory.lower() or row.device_class == "unified-memory SoC" else None


def decode_notes(result: DecodeResult) -> list[str]:
    """Plain sentences explaining the verdict and what would pass a failed gate."""
    r = result
    rem = r.remedies
    w = r.workload
    notes: list[str] = []
    if r.verdict is Verdict.NO_RESIDENT_FIT:
        notes.append(
            f"Does not fit: weights {_gb(r.resident_bytes)} + overhead {_gb(w.overhead_bytes)} exceed "
            f"capacity {_gb(r.hardware.memory_bytes)} by {_gb(-r.resident_margin_bytes)}."
        )
        if rem.capacity_needed_bytes is not None:
            notes.append(
                f"One session at {w.alloc_context_tokens:,} reserved tokens needs {_gb(rem.capacity_needed_bytes)} "
                "of memory; a smaller weight format or a machine with that capacity would pass."
            )
    elif r.verdict is Verdict.NO_SESSION_FIT:
        notes.append(
            f"The weights fit ({_gb(r.resident_margin_bytes)} left after overhead), but one session's cache at "
            f"{w.alloc_context_tokens:,} reserved tokens needs {_gb(r.kv_alloc_bytes)}."
        )
        if rem.max_alloc_context_tokens is not None:
            notes.append(
                f"One session fits at up to {rem.max_alloc_context_tokens:,} reserved tokens (--alloc-context)."
            )
        if rem.max_overhead_bytes is not None and rem.max_overhead_bytes >= 0:
            notes.append(f"Or with runtime overhead at most {_gb(rem.max_overhead_bytes)} (--overhead-gb).")
        if rem.capacity_needed_bytes is not None:
            notes.append(f"Or with {_gb(rem.capacity_needed_bytes)} of memory.")
        if rem.kv_precisions_that_fit:
            notes.append(f"Or with a KV cache in {', '.join(rem.kv_precisions_that_fit)} (--kv-precision).")
    elif r.verdict is Verdict.NO_FLOOR:
        notes.append(
            f"{sentence(VERDICT_TEXT['no_floor'])}: batch 1 reaches {rem.batch1_tok_per_s:,.1f} tok/s, "
            f"below {w.floor_tok_per_s:g} tok/s/session."
        )
        if rem.max_read_context_tokens is not None:
            notes.append(
                f"Batch 1 clears the floor at up to {rem.max_read_context_tokens:,} read tokens (--read-context)."
            )
        else:
            notes.append("Even an empty context cannot clear the floor: the weight sweep alone is too slow.")
        if rem.bandwidth_needed_bytes_per_s is not None:
            notes.append(f"Or with {rem.bandwidth_needed_bytes_per_s / GB:,.1f} GB/s of bandwidth.")
    else:
        assert r.batch_star is not None
        by = r.batch_limited_by
        if by is BatchLimit.MEMORY:
            notes.append(
                f"b* = b_mem = {r.batch_star:,}: memory bounds the batch; every fitting batch clears the floor."
            )
        elif by is BatchLimit.FLOOR:
            notes.append(
                f"b* = {r.batch_star:,}: the per-session floor bounds the batch ({r.batch_mem:,} sessions fit in memory)."
            )
        elif by is not BatchLimit.COMPUTE:  # a compute bound is said by the compute notes below
            notes.append(
                f"Memory does not bound the batch (the cache does not grow with context or is tiny); the search "
                f"stops at {MAX_BATCH:,} sessions. Compute, kernels and the scheduler bound this model, not memory: "
                "treat the aggregate as a memory-side ceiling only."
            )
    limit = r.model.context_limit_tokens
    if w.contexts_capped_from is not None and limit is not None:
        alloc, read = w.contexts_capped_from
        notes.append(
            f"The default contexts ({alloc:,} reserved, {read:,} read) exceed the model's {limit:,}-token context "
            f"limit: reserved {w.alloc_context_tokens:,}, read {w.read_context_tokens:,} (set --alloc-context to override)."
        )
    elif limit is not None and w.alloc_context_tokens > limit:
        notes.append(
            f"The reserved context ({w.alloc_context_tokens:,}) exceeds the model's stated limit ({limit:,} tokens, "
            "max_position_embeddings); computed as asked, as rope scaling can extend it."
        )
    if (
        r.fits
        and not r.model.kv_alloc.grows_with_context
        and r.verdict is Verdict.FLOOR_FIT
        and r.batch_limited_by is not BatchLimit.SEARCH_CAP
    ):
        notes.append(
            "The cache does not grow with context (recurrent or fixed state only): almost nothing in the "
            "per-token traffic grows with the batch, so the memory-side aggregate is huge. Compute, kernels, "
            "the scheduler and recurrent-state details bound such a model first; read the aggregate as a "
            "memory-side ceiling only."
        )
    notes.extend(_compute_notes(r))
    notes.extend(_engine_notes(r))
    if r.memory_power_tok_per_s is None and r.fits:
        notes.append("Memory-power ceiling undefined: the reserved cache per session is zero.")
    if r.forced is not None:
        f = r.forced
        state = "clears" if f.clears_floor else "does not clear"
        fit = (
            ""
            if f.fits_memory
            else f" Batch {f.batch:,} does not fit in memory (b_mem = {r.batch_mem or 0:,})."
        )
        notes.append(
            f"Forced batch {f.batch:,} {state} the floor at {f.per_session_tok_per_s:,.1f} tok/s/session.{fit}"
        )
    return notes


def prefill_assumptions(result: PrefillResult) -> dict[str, Any]:
    """The shared workload assumptions plus what moves a prefill result."""
    a = result.assumptions
    out = workload_assumptions(result.workload, hardware=result.hardware, model=result.model)
    out.pop("memory_only", None)
    out.update(
        {
            "prompt_tokens": result.prompt_tokens,
            "chunk_mode": result.chunk_mode.value,
            "batch_mode": result.batch_mode.value,
            "overhead_gb": a.overhead_bytes / GB,
            "alloc_context_tokens": a.alloc_context_tokens,
            "linear_mode": a.linear_mode,
            "linear_mode_choice": a.linear_mode_choice,
            "attention_mode": a.attention_mode,
            "linear_tflops": _tflops(a.linear_flop_per_s),
            "attention_tflops": _tflops(a.attention_flop_per_s),
            "compute_available": a.compute_available,
            "missing_modes": list(a.missing_modes),
            "linear_mode_charged": a.linear_mode_charged,
            "attention_mode_charged": a.attention_mode_charged,
            "linear_charge_reason": a.linear_charge_reason or None,
            "attention_charge_reason": a.attention_charge_reason or None,
            "workspace_gb": a.workspace_bytes / GB,
            "kernel_terms": "dropped (attention-kernel and activation traffic left out: ceiling-safe)"
            if a.kernel_terms_dropped
            else "included",
            "expert_traffic": a.expert_traffic.value,
            "reading": "estimate" if a.is_estimate else "bound",
            "bandwidth_source": a.hardware_provenance,
        }
    )
    modes = (a.linear_mode, a.attention_mode)
    sources = {k: v for k, v in result.hardware.sources.items() if "compute" in k or k in modes}
    if sources:
        out["compute_sources"] = sources
    return out


#: Prefill verdicts under which nothing runs: no session fits in memory, so there is no wait to report.
NOTHING_FITS = frozenset({"no_resident_fit", "no_session_fit"})
#: The fields of a wait that does not exist where nothing fits: null, not the formula's number.
_WAIT_FIELDS = (
    "memory_tok_s",
    "compute_tok_s",
    "tok_s",
    "time_s",
    "memory_time_s",
    "compute_time_s",
    "linear_time_s",
    "attention_time_s",
    "bound_by",
    "ttft_ok",
)


def prefill_json(result: PrefillResult | None, range_result: PrefillRange | None = None) -> dict[str, Any]:
    """The contract's `servebound prefill --json` object, plus our own extra fields. Where nothing
    fits (``no_resident_fit``, ``no_session_fit``) the rates and times are null: there is no wait.
    Without a prompt (``--range`` alone), the range alone."""
    if result is None:
        assert range_result is not None, "a prefill answer has a prompt's ceiling, a range or both"
        return {"range": range_json(range_result)}
    r = result
    out: dict[str, Any] = {
        "verdict": r.verdict.value,
        "hardware": hardware_json(r.hardware),
        "model": {"id": r.model.id, "name": r.model.name},
        **documented_json(r),
        "assumptions": prefill_assumptions(r),
    }
    if r.verdict.value in NOTHING_FITS:
        out.update(dict.fromkeys(_WAIT_FIELDS))
    if range_result is not None:
        out["range"] = range_json(range_result)
    return out


def range_json(rng: PrefillRange) -> dict[str, Any]:
    """The contract's `range` object: the two ends of T_pf,max(L) over every prompt length that fits."""
    return {
        "lo_tok_s": rng.lo_tok_per_s,
        "lo_prompt_tokens": rng.lo_prompt_tokens,
        "lo_bound_by": rng.lo_bound_by.value if rng.lo_bound_by else None,
        "hi_tok_s": rng.hi_tok_per_s,
        "hi_prompt_tokens": rng.hi_prompt_tokens,
        "hi_bound_by": rng.hi_bound_by.value if rng.hi_bound_by else None,
        "max_prompt_tokens": rng.max_prompt_tokens,
        "limited_by": rng.limited_by.value,
        "batch": rng.batch,
        "verdict": rng.verdict.value,
    }


# --- number formats shared by the CLI and the site, so both print the same digits ---


def fmt_rate(value: float | None, unit: str = "tok/s") -> str:
    if value is None:
        return "n/a"
    return f"{value:,.0f} {unit}" if value >= 100 else f"{value:,.1f} {unit}"


def fmt_wait(seconds: float | None) -> str:
    """A wait in a unit that shows its digits: µs, ms or s, three significant figures."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    scale, unit = (1.0, "s") if seconds >= 1 else (1e-3, "ms") if seconds >= 1e-3 else (1e-6, "µs")
    value = seconds / scale
    return f"{value:,.3g} {unit}" if value < 1000 else f"{value:,.0f} {unit}"


def fmt_gb(value_bytes: float | None) -> str:
    return "n/a" if value_bytes is None else f"{value_bytes / GB:,.3f} GB"


def fmt_int(value: int | None) -> str:
    return "n/a" if value is None else f"{value:,}"


def fmt_params(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value / 1e9:,.2f} B" if value >= 1e9 else f"{value / 1e6:,.1f} M"


def fmt_seconds(value: float | None) -> str:
    if value is None:
        return "n/a"
    return f"{value:,.2f} s" if value >= 1 else f"{value * 1e3:,.1f} ms"
