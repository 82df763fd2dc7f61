"""`servebound decode`: the decode ceilings of a scenario, with the engine's band; on a system, at the
layout the scenario answers at (``questions.system_decode``); with ``--range``, over every read context.

``decode_answer`` is the one answer the CLI, the JSON API, the pages and the Python API give."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from servebound.core.advice import Note, Setting
from servebound.core.decode import DecodeResult
from servebound.core.decode import decode as core_decode
from servebound.core.decode_range import DecodeContextRange, decode_context_range
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.workload import Workload
from servebound.errors import InputError
from servebound.inputs.declared import DeclaredWorkload
from servebound.inputs.scenario import Scenario, pooled_only, resolve_scenario
from servebound.inputs.workload import WorkloadInputs
from servebound.questions.system_decode import at_layout, pooled_on_system
from servebound.runs.band import with_band

if TYPE_CHECKING:
    from servebound.catalog.hardware import CatalogHardware


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


def decode_answer(
    scenario: Scenario, *, context_range: bool = False
) -> tuple[DecodeResult, DecodeContextRange | None]:
    """What `servebound decode`, ``decode()`` and /api/decode answer for a scenario, computed once for
    all: the decode ceilings (with the engine's band) and, with ``context_range``, the ceilings over
    every read context."""
    result = core_decode(scenario.hardware, scenario.model, scenario.workload)
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
        result = at_layout(result, scenario.layout)
    elif "layout" in scenario.sources:  # a system asked what its layouts do not model: pooled, said so
        result = pooled_on_system(result, pooled_only(scenario.workload))

    result = with_band(result)
    if not context_range:
        return result, None
    return result, decode_context_range(scenario.hardware, scenario.model, scenario.workload)
