"""The scenario: a question's declared inputs met with its hardware, model and draft, resolved once.

Every surface (the Python API, the CLI, the JSON API, the pages) hands what a person stated to
``resolve_scenario``: the declared inputs (``WorkloadInputs``, or ``make_workload``'s keywords), a
hardware and a model (ids, files or records). It loads them, re-expresses the target's and the draft's
caches at the one KV precision asked (the derivation's ``e_KV`` is a setting of the serving, not of one
model), fills every default that depends on the pair (O from the hardware row or the engine, L_alloc
capped at the model's limit) and records where each value came from. The questions (``api.decode`` ...)
take the scenario and compute; nothing below them loads, re-expresses or resolves.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, get_type_hints

from servebound.catalog import snapshot
from servebound.catalog.engines import format_support, get_engine, kv_format_for
from servebound.catalog.hosts import offload_spec
from servebound.core.advice import Note, Setting
from servebound.core.decode import DecodeResult, decode
from servebound.core.experts import ExpertTraffic
from servebound.core.formats import FORMATS, KV_FORMATS
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.offload import OFFLOAD_INPUTS
from servebound.core.system import System
from servebound.core.units import GB
from servebound.core.workload import (
    DEFAULT_ALLOC_CONTEXT_TOKENS,
    DEFAULT_OVERHEAD_BYTES,
    DEFAULT_READ_CONTEXT_TOKENS,
    KVAllocation,
    Speculation,
    Workload,
)
from servebound.errors import InputError
from servebound.inputs.declare import unknown
from servebound.inputs.declared import DeclaredWorkload
from servebound.inputs.layout import LayoutChoice, choose_layout
from servebound.inputs.resolve import _looks_like_file, resolve_hardware, resolve_model
from servebound.inputs.workload import BY_NAME, WORKLOAD_KEYWORDS, Input, WorkloadInputs

if TYPE_CHECKING:
    from servebound.catalog.models import CatalogModel


@dataclass(frozen=True)
class Scenario:
    """One question's pair and workload, resolved once: the inputs as stated (None where the workload
    came as a ``Workload`` record), the hardware, the model and the draft at the cache precision asked,
    the workload with every pair-dependent default filled in (a plain record), the workload as declared
    (what was left to the pair), and where each value came from."""

    inputs: WorkloadInputs | None
    hardware: Hardware
    model: ModelAdapter
    workload: Workload
    #: The workload as declared, before the pair filled its defaults: a system's layouts resolve it
    #: against the system's devices instead (``resolve_on_system``).
    declared: DeclaredWorkload
    #: On a system of devices: the layout every question answers at (given, the engine's split, or the
    #: best valid one) and why; None on one device asked no layout.
    layout: LayoutChoice | None = None
    sources: dict[str, str] = field(default_factory=dict, compare=False, hash=False)

    @property
    def draft(self) -> ModelAdapter | None:
        """The draft model of speculative decoding, at the scenario's cache precision; or None."""
        spec = self.workload.speculation
        return None if spec is None else spec.draft

    @property
    def kv_precision(self) -> str | None:
        """The cache precision asked, or None where the model's own applies."""
        return self.workload.kv_precision


def resolve_scenario(
    workload: WorkloadInputs | DeclaredWorkload | Workload | None = None,
    /,
    *,
    hardware: str | Hardware | Any,
    model: str | ModelAdapter,
    kv_precision: str | None = None,
    layout: str | None = None,
    **keywords: Any,
) -> Scenario:
    """The one resolution of a question: ``hardware`` and ``model`` (ids, files or records) under the
    declared inputs (a ``WorkloadInputs``, ``make_workload``'s keywords or its ``DeclaredWorkload``, or a
    built ``Workload``, taken as it stands), with the KV precision applied to the target's and the draft's caches alike. On a system of devices (or
    where ``layout`` is given) the layout the question answers at is chosen here, once
    (``inputs.layout.choose_layout``). Bad values are InputErrors naming their field."""
    hw = load_hardware(hardware)
    if isinstance(workload, WorkloadInputs) and layout is None:
        layout = workload.layout
    BY_NAME["layout"].check(layout)
    inputs = workload if isinstance(workload, WorkloadInputs) else None
    if isinstance(workload, Workload | DeclaredWorkload):
        if keywords:
            raise InputError(
                "workload", f"give a Workload or keywords ({', '.join(sorted(keywords))}), not both"
            )
        declared = workload if isinstance(workload, DeclaredWorkload) else DeclaredWorkload(workload)
        work = replace(declared, stated=_with_precision(declared.stated, kv_precision))
    elif workload is None or isinstance(workload, WorkloadInputs):
        if kv_precision is not None:
            keywords["kv_precision"] = kv_precision
        work = make_workload(workload, **keywords)
        if inputs is not None and keywords:
            named = {(WORKLOAD_KEYWORDS.get(k) or BY_NAME[k]).name: v for k, v in keywords.items()}
            inputs = replace(inputs, **{k: v for k, v in named.items() if k != "draft" or isinstance(v, str)})
    else:
        kind = type(workload).__name__
        raise InputError(
            "workload",
            f"must be a Workload (servebound.make_workload(...)) or given as keywords, not a {kind}; "
            + ("call decode(hw, model, **that_dict)" if isinstance(workload, dict) else "see make_workload"),
        )
    target = load_model(_engine_format(model, hw, work), kv_precision=work.stated.kv_precision)
    resolved = work.resolve(hw, target)
    resolved = resolved._with(format_support=format_support(hw.id, target.weight_precision, resolved.engine))
    sources = _sources(hw, target, resolved, work.sources(resolved))
    choice = None
    pooled = pooled_only(resolved)
    if pooled and (layout is not None or _is_system(hardware, hw)):
        if layout is not None:
            raise InputError("layout", f"parallel layouts do not model {pooled}: give one or the other")
        sources["layout"] = f"none: layouts do not model {pooled}, so the system answers as one pooled device"
    elif layout is not None or _is_system(hardware, hw):
        choice = choose_layout(hardware, target, resolved, layout)
        sources["layout"] = f"{choice.label}: {choice.why}"
    return Scenario(inputs, hw, target, resolved, work, choice, sources)


def pooled_only(work: Workload) -> str:
    """What a system's layouts do not model (speculative decoding, weights in host RAM), or '': with
    either a system answers as one pooled device, a looser bound."""
    if work.speculation is not None:
        return "speculative decoding (a draft)"
    return "" if work.offload is None else "weights in host RAM (offload)"


def _is_system(ref: Any, hw: Hardware) -> bool:
    """Whether the hardware asked is a system of several devices: a catalog system (by id, alias or
    ``NxID``) or its row. A hardware record or file is one device (it states no link or count)."""
    if isinstance(ref, Hardware):
        return False
    if not isinstance(ref, str):
        return getattr(ref, "system", None) is not None
    if _looks_like_file(ref):
        return False
    declared = snapshot.hardware_is_system(hw.id)
    if declared is not None:
        return declared
    count = re.match(r"(\d+)x-", hw.id)  # an NxID system the catalog builds on the fly
    return count is not None and int(count.group(1)) > 1


def _engine_format(model: str | ModelAdapter, hw: Hardware, work: DeclaredWorkload) -> str | ModelAdapter:
    """The model an engine is asked for: a bare catalog name (a release, no format word) whose format the
    named engine does not run here becomes the format ``choose_format`` picks for it (fit's and rank's
    choice), its adapter saying which and why (``sources["weight_format"]``); anything else as given."""
    if work.stated.engine is None or not isinstance(model, str):
        return model
    from servebound.inputs.engine_formats import engine_format  # the catalog, only under an engine

    def evaluate(profile: CatalogModel) -> DecodeResult:
        target = load_model(profile.adapter, kv_precision=work.stated.kv_precision)
        return decode(hw, target, work.resolve(hw, target))

    chosen = engine_format(model, hw, work.stated.engine, evaluate)
    if chosen is None:
        return model
    adapter = load_model(chosen[0])
    return replace(adapter, sources={**adapter.sources, "weight_format": chosen[1]})


def resolve_on_system(workload: DeclaredWorkload | Workload, system: System, model: ModelAdapter) -> Workload:
    """A workload resolved once against a system of devices (its layouts): O is N x the member row's
    (as decode takes it for the same system, whose pooled row states the same), the contexts capped at
    the model's limit. A replica of a layout is a pair of its own: ``resolve_scenario`` on it."""
    return resolve_scenario(workload, hardware=system.device.scaled(system.count), model=model).workload


def hardware_overhead_bytes(hardware: Hardware) -> float:
    """O as a pair on ``hardware`` takes it by default: the row's runtime overhead, or the derivation's
    8 GB where it states none (the pages' sliders start there)."""
    default = default_workload()
    return default.with_overhead(default.stated, hardware, 0.0).overhead_bytes


def _with_precision(work: Workload, precision: str | None) -> Workload:
    """A built workload with the keyword's cache precision (one of the two, or both alike) and its
    draft re-expressed at the precision it states."""
    if precision is not None and work.kv_precision not in (None, precision):
        raise InputError(
            "kv_precision",
            f"{precision} conflicts with the workload's {work.kv_precision}; give the precision once",
        )
    precision = precision or work.kv_precision
    if precision is None:
        return work
    spec = work.speculation
    if spec is not None:
        spec = replace(spec, draft=with_kv_precision(spec.draft, precision))
    return replace(work, kv_precision=precision, speculation=spec)


def _sources(
    hw: Hardware, model: ModelAdapter, work: Workload, workload_sources: dict[str, str]
) -> dict[str, str]:
    """Where each value of the scenario came from: the workload's (``DeclaredWorkload.sources``), the
    pair's records and the cache precision (asked, or the model's own)."""
    cache = model.kv_precision or "not stated"
    precision = f"given: {work.kv_precision} (target and draft)" if work.kv_precision else f"model: {cache}"
    out = {
        **workload_sources,
        "hardware": f"{hw.id}: {hw.provenance}" if hw.provenance else hw.id,
        "model": model.id,
        **({"weight_format": model.sources["weight_format"]} if "weight_format" in model.sources else {}),
        "kv_precision": precision,
    }
    if work.speculation is not None:
        out["draft"] = (
            f"{work.speculation.draft.id} at {work.speculation.draft.kv_precision or 'its own'} cache"
        )
    return out


def load_hardware(ref: str | Hardware | Any) -> Hardware:
    """A hardware file path (TOML/JSON), a catalog id or alias, or an ``NxID`` system; records pass
    through (a catalog row from ``hardware()`` as its Hardware)."""
    if isinstance(ref, Hardware):
        return ref
    row = getattr(ref, "hardware", None)
    return row if isinstance(row, Hardware) else resolve_hardware(str(ref))


def load_model(ref: str | ModelAdapter | Any, *, kv_precision: str | None = None) -> ModelAdapter:
    """A model file path or a catalog model as people name it (an id, a Hub id, an Ollama tag, a GGUF
    file name, loose words); records pass through (a profile from ``models()`` as its adapter).
    Optionally re-expressed at another KV cache precision."""
    BY_NAME["kv_precision"].check(kv_precision)  # '' or a non-string named, as the CLI and API do
    adapter = getattr(ref, "adapter", None)
    if isinstance(ref, ModelAdapter):
        model = ref
    else:
        model = adapter if isinstance(adapter, ModelAdapter) else resolve_model(str(ref))
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


def make_workload(inputs: WorkloadInputs | None = None, /, **keywords: Any) -> DeclaredWorkload:
    """A validated declared workload from the declared inputs (``servebound.inputs.workload``), given as a
    ``WorkloadInputs`` record or as keywords in edge units (GB, tokens, tok/s). Every bad or unknown value
    is an InputError naming it. ``draft`` may be a model record, a file or a catalog id.

    Contexts left as None take the derivation's defaults (L_alloc = 100,000, L_read = 32,000 and at most
    L_alloc); a default L_alloc is capped per model at its context limit when it is shorter (never below a
    given L_read), contexts given are used as given. ``overhead_gb`` None takes the hardware row's runtime
    overhead, or 8 GB where it states none. The declared workload records which values were defaults
    (``DeclaredWorkload``); ``resolve_scenario`` fills them for a pair.
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
            values[spec.name] = _given(spec, value)
    if draft_model is None:
        draft_model = values.get("draft")
    if isinstance(draft_model, str):
        values["draft"] = draft_model
    elif draft_model is not None and not isinstance(draft_model, ModelAdapter):
        raise InputError(
            "draft", f"give a model record, a file or a catalog id (got {type(draft_model).__name__})"
        )
    if draft_model is not None:  # the draft's cache at the precision the target's is asked at
        draft_model = load_model(draft_model, kv_precision=values.get("kv_precision"))
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
    stated = Workload(
        overhead_bytes=DEFAULT_OVERHEAD_BYTES if w.overhead_gb is None else w.overhead_gb * GB,
        overhead_source=None if w.overhead_gb is None else f"given: {w.overhead_gb:g} GB",
        alloc_context_tokens=alloc_tokens,
        read_context_tokens=read_tokens,
        floor_tok_s=w.floor,
        forced_batch=batch if isinstance(batch, int) else None,
        expert_traffic=ExpertTraffic(w.expert_traffic),
        speculation=_speculation(w, draft_model),
        memory_only=w.memory_only,
        kv_allocation=allocation,
        engine=w.engine,
        engine_overhead=engine_overhead,
        offload=offload_spec(**{name: getattr(w, name) for name in OFFLOAD_INPUTS}),
        kv_precision=w.kv_precision,
    )
    return DeclaredWorkload(
        stated,
        overhead_from_hardware=w.overhead_gb is None,
        fit_contexts_to_model=alloc is None,
        read_context_given=read is not None,
    )


def _given(spec: Input, value: Any) -> Any:
    """A keyword's value, checked: text of a number in the one grammar (``"32k"``, ``"32,000"``) read
    by ``Input.parse`` as on every other surface, an ExpertTraffic as its name, else as given."""
    if isinstance(value, ExpertTraffic):
        return spec.check(value.value)
    if isinstance(value, str) and spec.kind is not str:
        return spec.parse(value)
    return spec.check(value)


def default_workload() -> DeclaredWorkload:
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
        # the source names the engine as people write it (vLLM, not vllm)
        return allocation, (spec.overhead, spec.memory_fraction, f"{spec.name}: {spec.overhead_source}")
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
        return_annotation=DeclaredWorkload,
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
