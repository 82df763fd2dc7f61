"""The Python API: typed entry points a notebook can call in a loop. The CLI is a thin layer on top.

Each entry point is an edge: it resolves the workload once against the pair it names (a system's
layouts against the system) and hands the core the resolved workload, which the core never resolves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from servebound.core.advice import Note, Setting
from servebound.core.decode import DecodeResult
from servebound.core.decode import decode as _decode
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.units import GB
from servebound.core.workload import DEFAULT_FLOOR_TOK_PER_S, Workload
from servebound.errors import InputError
from servebound.inputs.declared import DeclaredWorkload
from servebound.inputs.scenario import (
    Scenario,
    default_workload,
    load_hardware,
    load_model,
    make_workload,
    pooled_only,
    resolve_scenario,
    with_kv_precision,
)
from servebound.inputs.workload import BY_NAME, WorkloadInputs
from servebound.runs.band import with_band
from servebound.views import report as _report  # noqa: F401 (registers the results' JSON views)

if TYPE_CHECKING:  # imported on use: `servebound decode` loads none of them
    from servebound.catalog.hardware import CatalogHardware
    from servebound.core.decode_range import DecodeContextRange
    from servebound.core.prefill import PrefillRange, PrefillResult
    from servebound.views.parallel import LayoutSearch, PlanResult


def decode(
    hardware: str | Hardware | CatalogHardware,
    model: str | ModelAdapter,
    workload: Workload | DeclaredWorkload | WorkloadInputs | None = None,
    *,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> DecodeResult:
    """Decode ceilings for a hardware and model (records, file paths or catalog ids), as ``servebound
    decode``: under ``workload`` (a Workload or the declared inputs), or one built from
    ``make_workload``'s keywords (``decode("nvidia-rtx-4090", "qwen3-8b", read_context=8000)``), or the
    default answer for the pair. ``kv_precision`` re-expresses the target's and the draft's caches. On
    a system it answers at a parallel layout (``layout="tp=8"``, else the best valid one) and says which."""
    scenario = resolve_scenario(
        workload, hardware=hardware, model=model, kv_precision=kv_precision, **workload_keywords
    )
    return decode_answer(scenario)[0]


def prefill(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    prompt_tokens: int,
    workload: Workload | DeclaredWorkload | WorkloadInputs | None = None,
    *,
    batch: int | Literal["max"] = 1,
    chunk_tokens: int | None = None,
    ttft_budget_s: float | None = None,
    linear_mode: str | None = None,
    attention_mode: str | None = None,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> PrefillResult:
    """Prefill ceilings, as ``servebound prefill``: records or ids, the workload as a record or keywords
    (the default answer for the pair without either). The core's keywords (batch, chunk, budget, modes)
    as in :func:`servebound.core.prefill.prefill`."""
    given = {
        "prompt": prompt_tokens,
        "batch": batch,
        "chunk": chunk_tokens,
        "ttft_budget": ttft_budget_s,
        "linear_mode": linear_mode,
        "attention_mode": attention_mode,
    }
    for name, value in given.items():  # the declared bounds, as the CLI and the API check them
        BY_NAME[name].check(value)
    scenario = resolve_scenario(
        workload, hardware=hardware, model=model, kv_precision=kv_precision, **workload_keywords
    )
    result, _ = prefill_answer(
        scenario,
        prompt_tokens,
        batch=batch,
        chunk_tokens=chunk_tokens,
        ttft_budget_s=ttft_budget_s,
        linear_mode=linear_mode,
        attention_mode=attention_mode,
    )
    assert result is not None  # a prompt was given
    return result


def decode_answer(
    scenario: Scenario, *, context_range: bool = False
) -> tuple[DecodeResult, DecodeContextRange | None]:
    """What `servebound decode`, ``decode()`` and /api/decode answer for a scenario, computed once for
    all: the decode ceilings (with the engine's band) and, with ``context_range``, the ceilings over
    every read context."""
    result = _decode(scenario.hardware, scenario.model, scenario.workload)
    if scenario.layout is not None:  # a system answers at its layout
        if context_range:
            raise InputError(
                "range",
                Note.of(
                    Setting("range", True),
                    f" is not computed for a parallel layout (it would be dropped): {scenario.hardware.id} "
                    f"answers at {scenario.layout.label}; ask for the range on one device, or for the layout "
                    "at the ",
                    Setting("read_context"),
                    " values you want",
                ),
            )
        from servebound.views.system_decode import at_layout  # the layout's views: only on a system

        result = at_layout(result, scenario.layout)
    elif "layout" in scenario.sources:  # a system asked what its layouts do not model: pooled, said so
        from servebound.views.system_decode import pooled_on_system

        result = pooled_on_system(result, pooled_only(scenario.workload))

    result = with_band(result)
    if not context_range:
        return result, None
    from servebound.core.decode_range import decode_context_range  # only where --range asks for it

    return result, decode_context_range(scenario.hardware, scenario.model, scenario.workload)


def prefill_answer(
    scenario: Scenario,
    prompt_tokens: int | None,
    *,
    batch: int | Literal["max"] = 1,
    prompt_range: bool = False,
    chunk_tokens: int | None = None,
    ttft_budget_s: float | None = None,
    linear_mode: str | None = None,
    attention_mode: str | None = None,
) -> tuple[PrefillResult | None, PrefillRange | None]:
    """What `servebound prefill`, ``prefill()`` and /api/prefill answer for a scenario, computed once
    for all: the ceiling at ``prompt_tokens`` (with the engine's band) and, with ``prompt_range``, the
    range over every prompt length (of one sequence where ``batch`` is max); at least one is asked."""
    from servebound.core.prefill import prefill as _prefill
    from servebound.core.prefill import prefill_range

    if prompt_tokens is None and not prompt_range:
        raise InputError(
            "prompt",
            Note.of(
                "give ",
                Setting("prompt", placeholder="L"),
                " (or ",
                Setting("range", True),
                " for every prompt length)",
            ),
        )
    hw, mdl, work = scenario.hardware, scenario.model, scenario.workload
    modes = {"linear_mode": linear_mode, "attention_mode": attention_mode}
    if scenario.layout is not None:  # a system prefills on one replica of the layout it answers at
        from servebound.views.layout_report import layout_prefill

        at = layout_prefill(
            scenario.layout,
            mdl,
            scenario.declared,
            prompt_tokens,
            batch,
            chunk_tokens,
            prompt_range=prompt_range,
            ttft_budget_s=ttft_budget_s,
            **modes,
        )
        return at, None
    rng = None
    if prompt_range:
        rng = prefill_range(hw, mdl, workload=work, batch=1 if batch == "max" else batch, **modes)
    if prompt_tokens is None:
        return None, rng
    result = _prefill(
        hw,
        mdl,
        prompt_tokens,
        workload=work,
        batch=batch,
        chunk_tokens=chunk_tokens,
        ttft_budget_s=ttft_budget_s,
        **modes,
    )

    return with_band(result), rng


def layout(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    workload: Workload | DeclaredWorkload | WorkloadInputs | None = None,
    *,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> LayoutSearch:
    """Every valid parallel layout of a system for a model, best first, as ``servebound layout``."""
    from servebound.views.parallel import search_system

    scenario = resolve_scenario(
        workload, hardware=hardware, model=model, kv_precision=kv_precision, **workload_keywords
    )
    return search_system(hardware, scenario.model, scenario.workload)


def plan(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    *,
    prompt_tokens: int,
    output_tokens: int,
    users: float | None = None,
    requests_per_s: float | None = None,
    floor_tok_s: float = DEFAULT_FLOOR_TOK_PER_S,
    ttft_budget_s: float | None = None,
    usd_per_device_hour: float | None = None,
    overhead_gb: float | None = None,
    kv_precision: str | None = None,
) -> PlanResult:
    """The fleet a stated traffic needs, as ``servebound plan`` (exactly one of ``users`` and
    ``requests_per_s``)."""
    from servebound.views.parallel import run_plan

    BY_NAME["overhead_gb"].check(overhead_gb)
    return run_plan(
        hardware,
        resolve_scenario(hardware=hardware, model=model, kv_precision=kv_precision).model,
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        floor_tok_s=floor_tok_s,
        users=users,
        requests_per_s=requests_per_s,
        ttft_budget_s=ttft_budget_s,
        usd_per_device_hour=usd_per_device_hour,
        overhead_bytes=None if overhead_gb is None else overhead_gb * GB,
    )


__all__ = [
    "Scenario",
    "decode",
    "decode_answer",
    "default_workload",
    "layout",
    "load_hardware",
    "load_model",
    "make_workload",
    "plan",
    "prefill",
    "prefill_answer",
    "resolve_scenario",
    "with_kv_precision",
]
