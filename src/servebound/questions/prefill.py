"""`servebound prefill`: the prefill ceiling of a scenario at a prompt length, with the engine's band,
and the range over every prompt length; on a system, on one replica of the layout the scenario answers
at (``questions.system_prefill``).

``prefill_answer`` is the one answer the CLI, the JSON API, the pages and the Python API give."""

from __future__ import annotations

from typing import Any, Literal

from servebound.core.advice import Note, Setting
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.prefill import PrefillRange, PrefillResult, prefill_range
from servebound.core.prefill import prefill as core_prefill
from servebound.core.workload import Workload
from servebound.errors import InputError
from servebound.inputs.declared import DeclaredWorkload
from servebound.inputs.scenario import Scenario, resolve_scenario
from servebound.inputs.workload import BY_NAME, WorkloadInputs
from servebound.questions.system_prefill import layout_prefill
from servebound.runs.band import with_band


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
    result = core_prefill(
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
