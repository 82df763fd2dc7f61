"""Prefill on a system of devices, at the scenario's layout (``Scenario.layout``): one replica of the
layout prefills a prompt, its stages in turn (compute and memory of G devices), plus the link time of
the tokens' all-reduces, dispatches and hops. ``servebound prefill``, ``prefill()`` and /api/prefill
answer it, and the pair page's first-token wait. Decode on a layout is ``questions.system_decode``."""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal

from servebound.core.advice import Note, Setting
from servebound.core.fields import documented
from servebound.core.layout import PerDevice, PrefillCommunication, per_device_bytes, prefill_communication
from servebound.core.model import ModelAdapter
from servebound.core.prefill import prefill
from servebound.core.prefill_records import PrefillResult
from servebound.errors import InputError
from servebound.inputs.declared import AnyWorkload
from servebound.inputs.layout import LayoutChoice
from servebound.inputs.scenario import resolve_on_system, resolve_scenario
from servebound.questions.layout import replica_prefill_hardware


@dataclass(frozen=True, repr=False)
class SystemPrefill(PrefillResult):
    """Prefill on a system at one layout: one replica's prefill (its record's fields), with the time
    and rate including the link time the layout's communication adds."""

    layout: LayoutChoice | None = documented(
        "the layout answered (given, the engine's split, or the best valid one) and why; the JSON gives "
        "it as `layout`",
        json=None,
        default=None,
    )
    link: PrefillCommunication | None = documented(
        "the link seconds of the prompt's all-reduces, dispatches and stage hops", json=None, default=None
    )
    per_device: PerDevice | None = documented(
        "one device's bytes (weights, cache, free) at the batch", json=None, default=None
    )
    replica_time_s: float | None = documented(
        "t_pf,min of the replica alone, before the link time", "s", json=None, default=None
    )


def layout_prefill(
    choice: LayoutChoice,
    mdl: ModelAdapter,
    workload: AnyWorkload,
    prompt: int | None,
    batch: int | Literal["max"],
    chunk: int | None,
    *,
    prompt_range: bool = False,
    ttft_budget_s: float | None = None,
    linear_mode: str | None = None,
    attention_mode: str | None = None,
) -> SystemPrefill:
    """Prefill of ``prompt`` on one replica of ``choice``'s layout under the declared ``workload``. The
    ceiling is b L / (t_pf + t_link) where the link cannot overlap the math (``max`` where it can), so it
    only lowers the single-device-style ceiling. A layout evaluates one prompt setting: a range or the
    largest batch is refused."""
    if prompt_range or batch == "max":
        raise InputError(
            "layout",
            Note.of(
                f"a parallel layout ({choice.label}) evaluates one prompt setting: drop ",
                Setting("range", True),
                " and give ",
                Setting("batch", placeholder="N"),
            ),
        )
    if prompt is None:
        raise InputError("prompt", Note.of("give ", Setting("prompt", placeholder="L")))
    system, chosen = choice.system.system, choice.layout
    on_system = resolve_on_system(workload, system, mdl)
    replica = replica_prefill_hardware(system, chosen)
    pf = prefill(
        replica,
        mdl,
        prompt,
        workload=resolve_scenario(workload, hardware=replica, model=mdl).workload,  # the replica's own pair
        batch=batch,
        chunk_tokens=chunk,
        ttft_budget_s=ttft_budget_s,
        linear_mode=linear_mode,
        attention_mode=attention_mode,
    )
    link = prefill_communication(system, mdl, chosen, batch * prompt, on_system)
    time_s = max(pf.time_s, link.all_reduce_s + link.all_to_all_s) + link.hop_s
    kept = {f.name: getattr(pf, f.name) for f in fields(pf) if f.init}
    return SystemPrefill(
        **{
            **kept,
            "time_s": time_s,
            "tok_s": batch * prompt / time_s,
            "ttft_ok": None if ttft_budget_s is None else time_s <= ttft_budget_s,
        },
        layout=choice,
        link=link,
        per_device=per_device_bytes(system, mdl, chosen, batch, on_system),
        replica_time_s=pf.time_s,
    )
