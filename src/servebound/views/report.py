"""Views of results: the contract's JSON and the assumptions block. Formatting lives here, not in the core."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from servebound.core.decode import DecodeResult
from servebound.core.decode_compute import DecodeCompute, compute_statement
from servebound.core.experts import ExpertTraffic
from servebound.core.fields import documented_json, json_value, json_view, qualified_name
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.rates import MISSING_RATE_RULE
from servebound.core.reading import is_estimate
from servebound.core.units import GB, TFLOPS
from servebound.core.workload import MAX_BATCH, Workload
from servebound.views.layout_view import layout_assumptions, layout_json, system_json
from servebound.views.notes import decode_notes, notes_json

if TYPE_CHECKING:  # prefill's and the range's views need no code at import: `servebound decode` skips it
    from servebound.core.decode_range import DecodeContextRange
    from servebound.core.prefill import PrefillRange, PrefillResult
    from servebound.questions.system_decode import SystemDecode
    from servebound.questions.system_prefill import SystemPrefill

#: One sentence per prefill verdict.
PREFILL_VERDICT_TEXT: dict[str, str] = {
    "fits": "fits",
    "over_budget": "fits, but no setting meets the TTFT budget",
    "no_batch_fit": "the requested batch does not fit in memory",
    "no_session_fit": "the weights fit, but no session fits",
    "no_resident_fit": "does not fit in memory",
}


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
        "floor_tok_s": workload.floor_tok_s,
        "tokens_per_step": workload.tokens_per_step,
        "weight_precision": model.weight_precision,
        "kv_precision": model.kv_precision,
        "kv_precision_source": model.sources.get("kv_precision"),
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
    if "weight_format" in model.sources:  # a bare name's format, chosen for the engine named
        out["weight_precision_source"] = model.sources["weight_format"]
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


#: The views of decode and prefill answers that add to their command's object, by the record's
#: qualified name (a system's answer adds the layout it answered at: ``system_decode_json`` and
#: ``system_prefill_json`` below).
_ANSWER_VIEWS: dict[str, Callable[[Any, Any], dict[str, Any]]] = {}


def answer_view(record: str, view: Callable[[Any, Any], dict[str, Any]]) -> None:
    """Register ``view`` as the ``--json`` object (with its range) of an answer whose record's qualified
    name is ``record``, and as the record's ``to_dict()``."""
    _ANSWER_VIEWS[record] = view
    json_view(record, lambda result: view(result, None))


def decode_json(result: DecodeResult, range_result: DecodeContextRange | None = None) -> dict[str, Any]:
    """The contract's `servebound decode --json` object, plus our own extra fields (``context_range``
    with ``--range``; on a system, the layout it answered at)."""
    view = _ANSWER_VIEWS.get(qualified_name(type(result)))
    return plain_decode_json(result, range_result) if view is None else view(result, range_result)


def plain_decode_json(result: DecodeResult, range_result: DecodeContextRange | None = None) -> dict[str, Any]:
    """Decode's object from the decode record's own fields."""
    remedies = {k: json_value(v) for k, v in vars(result.remedies).items() if v not in (None, ())}
    out = {
        "verdict": result.verdict.value,
        "hardware": hardware_json(result.hardware),
        "model": {"id": result.model.id, "name": result.model.name},
        **documented_json(result),
        "decode_compute": _compute_json(result),
        "remedies": remedies,
        **notes_json(decode_notes(result)),
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
            "hi_tok_s": short.single_session_tok_s,
            "hi_read_context_tokens": 0,
            "lo_tok_s": long_.single_session_tok_s,
            "lo_read_context_tokens": rng.max_read_context_tokens,
        }
    if short is not None and edge is not None:
        out["aggregate"] = {
            "hi_tok_s": short.aggregate_tok_s,
            "hi_read_context_tokens": 0,
            "hi_batch_star": short.batch_star,
            "lo_tok_s": edge.aggregate_tok_s,
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
        "single_session_tok_s": _nullable(c.single_session_tok_s),
        "batch_star": [int(v) if v > 0 else None for v in c.batch_star],
        "aggregate_tok_s": _nullable(c.aggregate_tok_s),
        "per_session_tok_s": _nullable(c.per_session_tok_s),
    }
    return out


def _tflops(rate: float | None) -> float | None:
    return None if rate is None else rate / TFLOPS


def _split_json(split: Any) -> list[dict[str, Any]] | None:
    """Mixed-precision linear math, part by part: its mode, parameters, the mode and TFLOPS charged."""
    if not split:
        return None
    return [
        {"mode": mode, "params": params, "mode_charged": charged, "tflops": _tflops(rate)}
        for mode, params, charged, rate in split
    ]


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
        "missing_rate_rule": MISSING_RATE_RULE if rate("missing_modes") else None,
        "linear_split": _split_json(rate("linear_split") or ()),
        "tokens_per_session_step": compute.tokens_per_session_step,
        "flops_per_session_step": compute.flops_per_session_step,
        "seconds_per_session_step": compute.seconds_per_session_step,
        "ceiling_tok_s": compute.ceiling_tok_s,
        "draft": compute.draft,
    }


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
            "missing_rate_rule": MISSING_RATE_RULE if a.missing_modes else None,
            "linear_split": _split_json(a.linear_split),
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
    """The contract's `servebound prefill --json` object, plus our own extra fields (on a system, the
    layout it answered at). Where nothing fits (``no_resident_fit``, ``no_session_fit``) the rates
    and times are null: there is no wait. Without a prompt (``--range`` alone), the range alone."""
    view = _ANSWER_VIEWS.get(qualified_name(type(result)))
    return plain_prefill_json(result, range_result) if view is None else view(result, range_result)


def plain_prefill_json(
    result: PrefillResult | None, range_result: PrefillRange | None = None
) -> dict[str, Any]:
    """Prefill's object from the prefill record's own fields."""
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
    if r.unrestricted is not None:
        # Beside the budget's answer, the same question without it: its numbers, not its inputs again.
        free = r.unrestricted
        out["unrestricted"] = {
            "verdict": free.verdict.value,
            **{k: v for k, v in documented_json(free).items() if k not in ("unrestricted", "expected")},
        }
        if free.verdict.value in NOTHING_FITS:
            out["unrestricted"].update(dict.fromkeys(_WAIT_FIELDS))
    if range_result is not None:
        out["range"] = range_json(range_result)
    return out


def range_json(rng: PrefillRange) -> dict[str, Any]:
    """The contract's `range` object: the two ends of T_pf,max(L) over every prompt length that fits."""
    return {
        "lo_tok_s": rng.lo_tok_s,
        "lo_prompt_tokens": rng.lo_prompt_tokens,
        "lo_bound_by": rng.lo_bound_by.value if rng.lo_bound_by else None,
        "hi_tok_s": rng.hi_tok_s,
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
    shown = f"{value:,.0f}" if value >= 100 else f"{value:,.1f}"
    return f"{shown} {unit}" if unit else shown


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


# --------------------------------------------------------------------------------------------------
# A system's answers: decode's and prefill's objects at the layout answered, with the layout's fields
# --------------------------------------------------------------------------------------------------


def layout_fields(result: SystemDecode) -> dict[str, Any]:
    """What decode's JSON adds on a system: the layout answered (with where it came from), its own
    fields (per device, links, communication), the system and its link, and the pooled bound."""
    choice = result.layout
    assert choice is not None
    out = layout_json(choice.result)
    for key in (
        "verdict",
        "batch_mem",
        "batch_star",
        "single_session_tok_s",
        "aggregate_tok_s",
        "per_session_tok_s",
    ):
        out.pop(key)  # decode's own fields, at the layout (b_mem and b* in sessions)
    r = choice.result
    pooled = result.pooled
    out["layout"] = {
        **out["layout"],
        "source": choice.source,
        "why": choice.why,
        "micro_batch": r.batch_star,
        "micro_batch_mem": r.batch_mem,
    }
    out["system"] = system_json(choice.system)
    out["pooled"] = (
        None
        if pooled is None
        else {
            "verdict": pooled.verdict.value,
            "single_session_tok_s": pooled.single_session_tok_s,
            "aggregate_tok_s": pooled.aggregate_tok_s,
            "batch_star": pooled.batch_star,
            "why": "the system as one device with summed bandwidth: an upper bound no layout reaches",
        }
    )
    return out


def system_decode_json(result: SystemDecode, range_result: Any = None) -> dict[str, Any]:
    """``decode --json`` on a system: decode's object at the layout, plus the layout's fields."""
    out = plain_decode_json(result, range_result)
    if result.layout is None:  # answered pooled, and says why
        out["assumptions"]["layout"] = (
            f"none: layouts do not model {result.pooled_because}; one pooled device"
        )
        return {**out, "layout": None}
    extra = layout_fields(result)
    assumptions = {
        **out["assumptions"],
        **layout_assumptions(result.workload, result.layout.result, result.layout.system),
        "layout": f"{result.layout.label}: {result.layout.why}",
    }
    return {**out, **extra, "assumptions": assumptions}


def system_prefill_json(result: SystemPrefill, range_result: Any = None) -> dict[str, Any]:
    """``prefill --json`` on a system: prefill's object for the replica at the layout, the time with the
    link's, and the layout's own fields."""
    out = plain_prefill_json(result, range_result)
    choice, link, per_device = result.layout, result.link, result.per_device
    assert choice is not None and link is not None and per_device is not None
    replica = result.replica_time_s or 0.0
    bound = "communication" if link.all_reduce_s + link.all_to_all_s > replica else None
    out.update(
        {
            "system": system_json(choice.system),
            "layout": {
                **asdict(choice.layout),
                "label": choice.label,
                "source": choice.source,
                "why": choice.why,
            },
            "bound_by": bound or out["bound_by"],
            "communication_time_s": link.communication_s,
            "all_reduce_time_s": link.all_reduce_s,
            "all_to_all_time_s": link.all_to_all_s,
            "pipeline_hop_time_s": link.hop_s,
            "per_device": {k: v for k, v in asdict(per_device).items() if k != "kv_bytes_per_session"},
        }
    )
    if result.verdict.value in NOTHING_FITS:  # no replica holds a session: no wait, as prefill --json says
        out.update({"time_s": None, "tok_s": None, "bound_by": None})
    return out


json_view(DecodeResult, decode_json)
json_view("servebound.core.prefill_records.PrefillResult", prefill_json)  # (a decode imports no prefill)
# by name: a decode on one device imports neither a system's answers nor prefill
answer_view("servebound.questions.system_decode.SystemDecode", system_decode_json)
answer_view("servebound.questions.system_prefill.SystemPrefill", system_prefill_json)
