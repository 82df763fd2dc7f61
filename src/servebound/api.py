"""The Python API: typed entry points a notebook can call in a loop. The CLI is a thin layer on top.

Each entry point is an edge: it resolves the workload once against the pair it names (a system's
layouts against the system) and hands the core the resolved workload, which the core never resolves.
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any, Literal, get_type_hints

from servebound.core.advice import Note, Setting
from servebound.core.decode import DecodeResult
from servebound.core.decode import decode as _decode
from servebound.core.engines import get_engine, kv_format_for
from servebound.core.experts import ExpertTraffic
from servebound.core.formats import FORMATS, KV_FORMATS
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.offload import OFFLOAD_INPUTS, offload_spec
from servebound.core.units import GB
from servebound.core.workload import (
    DEFAULT_ALLOC_CONTEXT_TOKENS,
    DEFAULT_FLOOR_TOK_PER_S,
    DEFAULT_OVERHEAD_BYTES,
    DEFAULT_READ_CONTEXT_TOKENS,
    KVAllocation,
    Speculation,
    Workload,
)
from servebound.errors import InputError
from servebound.inputs.resolve import resolve_hardware, resolve_model
from servebound.inputs.workload import BY_NAME, WORKLOAD_KEYWORDS, WorkloadInputs, unknown

if TYPE_CHECKING:  # imported on use: `servebound decode` loads none of them
    from servebound.core.decode_range import DecodeContextRange
    from servebound.core.prefill import PrefillRange, PrefillResult
    from servebound.views.cost_report import CostReport
    from servebound.views.parallel import LayoutSearch, PlanResult


def load_hardware(ref: str | Hardware) -> Hardware:
    """A hardware file path (TOML/JSON), a catalog id, or an ``NxID`` system; records pass through."""
    return ref if isinstance(ref, Hardware) else resolve_hardware(ref)


def load_model(ref: str | ModelAdapter, *, kv_precision: str | None = None) -> ModelAdapter:
    """A model file path or a catalog id; optionally re-expressed at another KV cache precision."""
    model = ref if isinstance(ref, ModelAdapter) else resolve_model(ref)
    return with_kv_precision(model, kv_precision) if kv_precision else model


def with_kv_precision(model: ModelAdapter, precision: str) -> ModelAdapter:
    """The model's attention cache at another element width (recurrent state keeps its own). An
    engine's own spelling (``f16``, ``fp8_e4m3``, ``q5_1``, ``auto`` ...) is read through the engine table."""
    spelled = kv_format_for(precision) if precision not in KV_FORMATS else None
    if spelled == "model":
        return model
    layout = KV_FORMATS.get(precision) or (FORMATS.get(spelled) if spelled else None)
    if layout is None:
        raise InputError(
            "kv_precision",
            f"unknown precision {precision!r}; use one of {', '.join(KV_FORMATS)} or an engine's spelling "
            "(vLLM auto|fp8|fp8_e4m3|fp8_e5m2, llama.cpp f16|q8_0|q4_0|q4_1|q5_0|q5_1|iq4_nl)",
        )
    if model.kv_bytes_per_element is None:
        raise InputError(
            "kv_precision",
            f"model {model.id!r} does not say its KV element width ([kv] precision); "
            "set it in the model file to rescale the cache",
        )
    factor = layout.bytes_per_element / model.kv_bytes_per_element
    return model.with_kv_scale(factor, layout.name)


def make_workload(inputs: WorkloadInputs | None = None, /, **keywords: Any) -> Workload:
    """A validated Workload from the declared inputs (``servebound.inputs.workload``), given as a
    ``WorkloadInputs`` record or as keywords in edge units (GB, tokens, tok/s). Every bad or unknown value
    is an InputError naming it. ``draft`` may be a model record, a file or a catalog id.

    Contexts left as None take the derivation's defaults (L_alloc = 100,000, L_read = 32,000 and at most
    L_alloc); a default L_alloc is capped per model at its context limit when it is shorter (never below a
    given L_read), contexts given are used as given. ``overhead_gb`` None takes the hardware row's runtime
    overhead, or 8 GB where it states none. The Workload records which values were defaults.
    """
    draft_model = keywords.pop("draft", None)
    values = {} if inputs is None else inputs.changed()
    for key, value in keywords.items():
        spec = WORKLOAD_KEYWORDS.get(key) or BY_NAME.get(key)
        if spec is None or spec.python not in WORKLOAD_KEYWORDS:
            raise unknown(key, [*WORKLOAD_KEYWORDS, *(s.name for s in WORKLOAD_KEYWORDS.values())], "keyword")
        if spec.name != spec.python and spec.name in keywords and spec.python in keywords:
            raise InputError(key, f"given twice (as {spec.name} and {spec.python}); give one")
        if value is not None or spec.default is None:
            values[spec.name] = spec.check(value.value if isinstance(value, ExpertTraffic) else value)
    if draft_model is None:
        draft_model = values.get("draft")
    if isinstance(draft_model, str):
        values["draft"] = draft_model
        draft_model = load_model(draft_model, kv_precision=values.get("kv_precision"))
    elif draft_model is not None and not isinstance(draft_model, ModelAdapter):
        raise InputError(
            "draft", f"give a model record, a file or a catalog id (got {type(draft_model).__name__})"
        )
    w = WorkloadInputs(**values)
    alloc, read = w.contexts()  # --context gives both
    alloc_tokens = DEFAULT_ALLOC_CONTEXT_TOKENS if alloc is None else alloc
    read_tokens = min(DEFAULT_READ_CONTEXT_TOKENS, alloc_tokens) if read is None else read
    if read_tokens > alloc_tokens:
        raise InputError(
            "read_context",
            Note.of(
                f"{read_tokens:,} exceeds the reserved context {alloc_tokens:,}",
                " (the default); raise it too (" if alloc is None else "",
                Setting("alloc_context", read_tokens) if alloc is None else "",
                ")" if alloc is None else "",
                ": a session cannot read more than it reserves",
                effect="the session reserves what it reads",
            ),
        )
    batch = None if w.batch == "max" else w.batch
    allocation, engine_overhead = _allocation(w)
    return Workload(
        overhead_bytes=DEFAULT_OVERHEAD_BYTES if w.overhead_gb is None else w.overhead_gb * GB,
        overhead_from_hardware=w.overhead_gb is None,
        overhead_source=None if w.overhead_gb is None else f"given: {w.overhead_gb:g} GB",
        alloc_context_tokens=alloc_tokens,
        read_context_tokens=read_tokens,
        floor_tok_per_s=w.floor,
        forced_batch=batch if isinstance(batch, int) else None,
        expert_traffic=ExpertTraffic(w.expert_traffic),
        speculation=_speculation(w, draft_model),
        fit_contexts_to_model=alloc is None,
        read_context_given=read is not None,
        memory_only=w.memory_only,
        kv_allocation=allocation,
        engine=w.engine,
        engine_overhead=engine_overhead,
        offload=offload_spec(**{name: getattr(w, name) for name in OFFLOAD_INPUTS}),
    )


def default_workload() -> Workload:
    """The workload of "the default answer for this pair": what every surface computes with when nothing
    is asked (the CLI without workload flags, a pair page without a query, the hardware and model pages'
    tables, ``/models?fits=``, rank): the hardware row's runtime overhead (8 GB where it states none) and
    the derivation's contexts capped at the model's context limit. The one place that default is built.
    """
    return make_workload()


def _allocation(w: WorkloadInputs) -> tuple[KVAllocation, tuple[str, float, str] | None]:
    """The cache allocation and the engine's overhead convention (when O was left to it): ``--engine``
    sets the allocation, and a ``--kv-allocation`` that contradicts it is an error."""
    asked = None if w.kv_allocation is None else KVAllocation(w.kv_allocation)
    if w.engine is None:
        return asked or KVAllocation.RESERVED, None
    spec = get_engine(w.engine)
    allocation = KVAllocation(spec.kv_allocation)
    if asked is not None and asked is not allocation:
        raise InputError(
            "kv_allocation",
            Note.of(
                f"{asked.value} conflicts with ",
                Setting("engine", w.engine),
                f", whose cache is {allocation.value} ({spec.kv_allocation_source}); drop one of them",
            ),
        )
    if w.overhead_gb is None and spec.memory_fraction is not None and spec.overhead != "row":
        return allocation, (spec.overhead, spec.memory_fraction, spec.overhead_source)
    return allocation, None


def _keywords_signature() -> inspect.Signature:
    """make_workload's signature as ``help()`` and editors show it: the declared keywords, defaults and types."""
    hints = get_type_hints(WorkloadInputs)
    first = inspect.Parameter("inputs", inspect.Parameter.POSITIONAL_ONLY, default=None)
    return inspect.Signature(
        [first]
        + [
            inspect.Parameter(
                key, inspect.Parameter.KEYWORD_ONLY, default=s.default, annotation=hints[s.name]
            )
            for key, s in WORKLOAD_KEYWORDS.items()
        ],
        return_annotation=Workload,
    )


make_workload.__signature__ = _keywords_signature()  # type: ignore[attr-defined]


def _speculation(w: WorkloadInputs, draft: ModelAdapter | None) -> Speculation | None:
    """Speculative decoding from its inputs (their bounds are checked already): gamma and one of alpha, rho."""
    if draft is None:
        if w.draft_tokens is not None or w.acceptance is not None or w.tokens_per_step is not None:
            raise InputError(
                "draft",
                Note.of(
                    Setting("draft_tokens"),
                    ", ",
                    Setting("acceptance"),
                    " and ",
                    Setting("tokens_per_step"),
                    " need a draft model (",
                    Setting("draft", placeholder="MODEL"),
                    ")",
                ),
            )
        return None
    if w.draft_tokens is None:
        raise InputError(
            "draft_tokens", Note.of("speculative decoding needs ", Setting("draft_tokens"), " >= 1")
        )
    if (w.acceptance is None) == (w.tokens_per_step is None):
        raise InputError(
            "acceptance",
            Note.of(
                "give exactly one of ",
                Setting("acceptance"),
                " (alpha) or ",
                Setting("tokens_per_step"),
                " (rho)",
            ),
        )
    if w.acceptance is not None:
        rho = Speculation.rho_from_acceptance(w.acceptance, w.draft_tokens)
    else:
        assert w.tokens_per_step is not None
        rho = w.tokens_per_step
        if rho > w.draft_tokens + 1:
            raise InputError(
                "tokens_per_step",
                f"rho must lie in [1, draft_tokens + 1 = {w.draft_tokens + 1}] (got {rho:g})",
            )
    return Speculation(draft=draft, draft_tokens=w.draft_tokens, tokens_per_step=rho, acceptance=w.acceptance)


def _workload(workload: object, keywords: dict[str, Any]) -> Workload:
    """A Workload record, or one built from ``make_workload``'s keywords (not both); anything else is an
    InputError naming ``workload`` and the fix."""
    if workload is None:
        return make_workload(**keywords) if keywords else default_workload()
    if not isinstance(workload, Workload):
        kind = type(workload).__name__
        raise InputError(
            "workload",
            f"must be a Workload (servebound.make_workload(...)) or given as keywords, not a {kind}; "
            + ("call decode(hw, model, **that_dict)" if isinstance(workload, dict) else "see make_workload"),
        )
    if keywords:
        raise InputError("workload", f"give a Workload or keywords ({', '.join(sorted(keywords))}), not both")
    return workload


def _pair(
    hardware: str | Hardware, model: str | ModelAdapter, kv_precision: str | None
) -> tuple[Hardware, ModelAdapter]:
    return load_hardware(hardware), load_model(model, kv_precision=kv_precision)


def decode(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    workload: Workload | None = None,
    *,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> DecodeResult:
    """Decode ceilings for a hardware and model (records, file paths or catalog ids), as ``servebound
    decode``: under ``workload``, or one built from ``make_workload``'s keywords
    (``decode("nvidia-rtx-4090", "qwen3-8b", read_context=8000)``), or the default answer for the pair."""
    hw, mdl = _pair(hardware, model, kv_precision)
    result = _decode(hw, mdl, _workload(workload, workload_keywords).resolve(hw, mdl))
    if result.workload.engine is None:
        return result
    from servebound.runs.band import with_band  # the runs are read only where an engine is named

    return with_band(result)


def prefill(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    prompt_tokens: int,
    workload: Workload | None = None,
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
    from servebound.core.prefill import prefill as _prefill

    hw, mdl = _pair(hardware, model, kv_precision)
    result = _prefill(
        hw,
        mdl,
        prompt_tokens,
        workload=_workload(workload, workload_keywords).resolve(hw, mdl),
        batch=batch,
        chunk_tokens=chunk_tokens,
        ttft_budget_s=ttft_budget_s,
        linear_mode=linear_mode,
        attention_mode=attention_mode,
    )
    if result.workload.engine is None:
        return result
    from servebound.runs.band import with_band

    return with_band(result)


def decode_answer(
    hardware: Hardware, model: ModelAdapter, workload: Workload, *, context_range: bool = False
) -> tuple[DecodeResult, DecodeContextRange | None]:
    """What `servebound decode` and /api/decode answer, computed once for both: the decode ceilings
    (with the engine's band) and, with ``context_range``, the ceilings over every read context."""
    result = decode(hardware, model, workload)
    if not context_range:
        return result, None
    from servebound.core.decode_range import decode_context_range  # only where --range asks for it

    return result, decode_context_range(hardware, model, result.workload)


def prefill_answer(
    hardware: Hardware,
    model: ModelAdapter,
    prompt_tokens: int | None,
    workload: Workload,
    *,
    batch: int | Literal["max"] = 1,
    prompt_range: bool = False,
    chunk_tokens: int | None = None,
    ttft_budget_s: float | None = None,
    linear_mode: str | None = None,
    attention_mode: str | None = None,
) -> tuple[PrefillResult | None, PrefillRange | None]:
    """What `servebound prefill` and /api/prefill answer, computed once for both: the ceiling at
    ``prompt_tokens`` (with the engine's band) and, with ``prompt_range``, the range over every prompt
    length (of one sequence where ``batch`` is max); at least one of the two is asked."""
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
    work = workload.resolve(hardware, model)
    modes = {"linear_mode": linear_mode, "attention_mode": attention_mode}
    rng = None
    if prompt_range:
        rng = prefill_range(hardware, model, workload=work, batch=1 if batch == "max" else batch, **modes)
    if prompt_tokens is None:
        return None, rng
    return (
        prefill(
            hardware,
            model,
            prompt_tokens,
            work,
            batch=batch,
            chunk_tokens=chunk_tokens,
            ttft_budget_s=ttft_budget_s,
            **modes,
        ),
        rng,
    )


def cost(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    workload: Workload | None = None,
    *,
    usd_per_hour: float | None = None,
    pricing: str = "auto",
    batches: list[int] | None = None,
    prompt_tokens: int | None = None,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> CostReport:
    """The cost curve over batch, as ``servebound cost`` (priced from the catalog row, or
    ``usd_per_hour`` for the whole system; ``pricing`` auto, rental or owned)."""
    from servebound.inputs.pricing import catalog_price, resolve_price
    from servebound.views.cost_report import DEFAULT_COST_PROMPT_TOKENS, cost_report

    hw, mdl = _pair(hardware, model, kv_precision)
    price = resolve_price(hw, catalog_price(hardware), usd_per_hour=usd_per_hour, pricing=pricing)
    prompt = DEFAULT_COST_PROMPT_TOKENS if prompt_tokens is None else prompt_tokens
    work = _workload(workload, workload_keywords).resolve(hw, mdl)
    return cost_report(hw, mdl, work, price, batches=batches, prompt_tokens=prompt)


def layout(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    workload: Workload | None = None,
    *,
    kv_precision: str | None = None,
    **workload_keywords: Any,
) -> LayoutSearch:
    """Every valid parallel layout of a system for a model, best first, as ``servebound layout``."""
    from servebound.views.parallel import search_system

    mdl = load_model(model, kv_precision=kv_precision)
    return search_system(hardware, mdl, _workload(workload, workload_keywords))


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
        load_model(model, kv_precision=kv_precision),
        prompt_tokens=prompt_tokens,
        output_tokens=output_tokens,
        floor_tok_s=floor_tok_s,
        users=users,
        requests_per_s=requests_per_s,
        ttft_budget_s=ttft_budget_s,
        usd_per_device_hour=usd_per_device_hour,
        overhead_bytes=None if overhead_gb is None else overhead_gb * GB,
    )
