"""One parallel layout's prefill in prefill's JSON field names, for the CLI's ``--layout`` and the API's
``layout=`` alike (``prefill --layout``, ``/api/prefill``). Decode on a layout is
``views.system_decode``."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Literal

from servebound.core.advice import Note, Setting
from servebound.core.layout import per_device_bytes, prefill_communication
from servebound.core.model import ModelAdapter
from servebound.core.prefill import prefill
from servebound.core.workload import Workload
from servebound.errors import InputError
from servebound.inputs.scenario import resolve_on_system, resolve_scenario
from servebound.views.parallel import (
    ResolvedSystem,
    parse_layout,
    replica_prefill_hardware,
    resolve_system,
    system_json,
)
from servebound.views.report import NOTHING_FITS, prefill_json


def layout_prefill_json(
    hardware: str | ResolvedSystem,
    mdl: ModelAdapter,
    workload: Workload,
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
