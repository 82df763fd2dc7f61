"""One parallel layout's answers in decode's and prefill's JSON field names, for the CLI's ``--layout``
and the API's ``layout=`` alike (``decode --layout``, ``prefill --layout``, ``/api/decode``,
``/api/prefill``)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Literal

from servebound.core.advice import Note, Setting
from servebound.core.layout import LayoutResult, per_device_bytes, prefill_communication, times_at
from servebound.core.model import ModelAdapter
from servebound.core.prefill import prefill
from servebound.core.workload import Workload
from servebound.errors import InputError
from servebound.inputs.declared import AnyWorkload
from servebound.inputs.scenario import resolve_on_system, resolve_scenario
from servebound.views.parallel import (
    ResolvedSystem,
    compute_seconds_per_session_step,
    layout_assumptions,
    layout_json,
    parse_layout,
    replica_prefill_hardware,
    resolve_system,
    run_layout,
    system_json,
)
from servebound.views.report import NOTHING_FITS, prefill_json


def decode_layout_json(
    ref: str | ResolvedSystem,
    model: ModelAdapter,
    workload: Workload,
    layout: str,
    *,
    context_range: bool = False,
) -> tuple[ResolvedSystem, LayoutResult, dict[str, Any]]:
    """Decode on one parallel layout: the layout's ceilings in decode's field names, plus its own, and
    the forced micro-batch when the workload has one. A layout evaluates one read context: the context
    range is refused, not dropped."""
    if context_range:
        raise InputError(
            "range",
            Note.of(
                Setting("range", True),
                " is not computed for a parallel layout (it would be dropped); ask for the range without ",
                Setting("layout"),
                ", or for the layout at the ",
                Setting("read_context"),
                " values you want",
            ),
        )
    resolved = resolve_system(ref)
    _, result = run_layout(resolved, model, workload, layout)
    forced = None
    if workload.forced_batch is not None:
        b = workload.forced_batch
        c = compute_seconds_per_session_step(resolved.system.device, model, workload)
        times = times_at(resolved.system, model, result.layout, b, workload, compute_s_per_session_step=c)
        lay = result.layout
        forced = {
            "batch": b,
            "sessions": lay.dp * lay.pp * b,
            "aggregate_tok_s": lay.dp * lay.pp * b / times.token_s,
            "per_session_tok_s": 1.0 / times.token_s,
            "clears_floor": 1.0 / times.token_s >= workload.floor_tok_per_s,
            "fits_memory": result.batch_mem is not None and b <= result.batch_mem,
        }
    out = {
        **layout_json(result),
        "system": system_json(resolved),
        "kv_alloc_bytes": model.kv_alloc.bytes_at(workload.held_context_tokens),
        "kv_read_bytes": model.kv_read.bytes_at(workload.read_context_tokens),
        "resident_margin_bytes": result.per_device.free_bytes + result.per_device.kv_bytes,
        "forced": forced,
        "assumptions": layout_assumptions(workload, result, resolved),
    }
    return resolved, result, out


def layout_prefill_json(
    hardware: str | ResolvedSystem,
    mdl: ModelAdapter,
    workload: AnyWorkload,
    layout: str,
    prompt: int | None,
    batch: int | Literal["max"],
    chunk: int | None,
    *,
    prompt_range: bool = False,
) -> dict[str, Any]:
    """Prefill on one replica of a layout: the replica's stages in turn (compute and memory of G devices),
    plus the link time of the tokens' all-reduces, dispatches and hops. The ceiling is b L / (t_pf + t_link)
    when the link cannot overlap the math, so it only lowers the single-device-style ceiling. A layout
    evaluates one prompt setting: a range or the largest batch is refused."""
    if prompt_range or batch == "max":
        raise InputError(
            "layout",
            Note.of(
                "a layout evaluates one prompt setting: drop ",
                Setting("range", True),
                " and give ",
                Setting("batch", placeholder="N"),
            ),
        )
    if prompt is None:
        raise InputError("prompt", Note.of("give ", Setting("prompt", placeholder="L")))
    resolved = resolve_system(hardware)
    system = resolved.system
    chosen = parse_layout(layout, system, mdl)
    on_system = resolve_on_system(workload, system, mdl)
    replica = replica_prefill_hardware(system, chosen)
    pf = prefill(
        replica,
        mdl,
        prompt,
        workload=resolve_scenario(workload, hardware=replica, model=mdl).workload,  # the replica's own pair
        batch=batch,
        chunk_tokens=chunk,
    )
    link = prefill_communication(system, mdl, chosen, batch * prompt, on_system)
    time_s = max(pf.time_s, link.all_reduce_s + link.all_to_all_s) + link.hop_s
    out = prefill_json(pf)
    bound = "communication" if link.all_reduce_s + link.all_to_all_s > pf.time_s else out["bound_by"]
    per_device = per_device_bytes(system, mdl, chosen, batch, on_system)
    out.update(
        {
            "system": system_json(resolved),
            "layout": {**asdict(chosen), "label": chosen.label},
            "time_s": time_s,
            "tok_s": batch * prompt / time_s,
            "bound_by": bound,
            "communication_time_s": link.communication_s,
            "all_reduce_time_s": link.all_reduce_s,
            "all_to_all_time_s": link.all_to_all_s,
            "pipeline_hop_time_s": link.hop_s,
            "per_device": {k: v for k, v in asdict(per_device).items() if k != "kv_bytes_per_session"},
        }
    )
    if pf.verdict.value in NOTHING_FITS:  # no replica holds a session: no wait, as prefill --json says
        out.update({"time_s": None, "tok_s": None, "bound_by": None})
    return out
