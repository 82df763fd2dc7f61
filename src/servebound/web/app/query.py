"""The workload as query parameters: a page's query string or the API's typed parameters, parsed once
and validated once, by the declared inputs (``servebound.inputs.workload``) and ``make_workload``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from servebound.core.model import ModelAdapter
from servebound.core.workload import DEFAULT_ALLOC_CONTEXT_TOKENS, DEFAULT_READ_CONTEXT_TOKENS
from servebound.errors import InputError
from servebound.inputs.declare import close_match
from servebound.inputs.declared import DeclaredWorkload
from servebound.inputs.scenario import Scenario, make_workload, resolve_scenario
from servebound.inputs.workload import BY_NAME, MAX_SITE_CONTEXT_TOKENS, WorkloadInputs, inputs_of


def page_inputs() -> dict[str, Any]:
    """The pair page's workload inputs as its script reads them (``pair-data``'s ``inputs``): each
    field's kind and default from the declaration, and the names the page sends to its own URL, to
    /api/decode and to /api/prefill (the page's prefill is batch 1, so it sends no batch)."""
    return {
        "fields": [
            {
                "name": n,
                "kind": BY_NAME[n].kind.__name__,
                "default": BY_NAME[n].default,
                "tokens": BY_NAME[n].tokens,
            }
            for n in QUERY_FIELDS
        ],
        "page": list(QUERY_FIELDS),
        "decode": [s.name for s in inputs_of("context", "serving", "workload", "roof", "decode")],
        "prefill": [*(s.name for s in inputs_of("context", "serving", "workload")), "prompt"],
        "quiet": list(IGNORED_ON_PAGES),  # besides utm_*: parameters a page ignores without a word
    }


#: Parameters a page ignores without a word: tracking tags and the form's own controls.
IGNORED_ON_PAGES = ("maximize", "profile", "ref", "fbclid", "gclid")


@dataclass(frozen=True)
class WorkloadQuery:
    """The pair page's query parameters, in the contract's edge units, already validated.

    ``batch`` None means the maximize-batch mode (b*); ``prompt`` None means the default prompt. The
    contexts hold the value shown (the default where not given); ``alloc_given`` and ``read_given`` say
    which were in the query, so that the defaults follow the model's limit as the CLI's do.
    """

    alloc_context: int = DEFAULT_ALLOC_CONTEXT_TOKENS
    read_context: int = DEFAULT_READ_CONTEXT_TOKENS
    floor: float = BY_NAME["floor"].default
    #: None: the hardware row's runtime overhead (8 GB where it states none), as the CLI's default.
    overhead_gb: float | None = None
    batch: int | None = None
    prompt: int | None = None
    expert_traffic: str = BY_NAME["expert_traffic"].default
    kv_precision: str | None = None
    #: Speculative decoding: the draft's model id, gamma, and alpha or rho (the CLI's --draft flags).
    draft: str | None = None
    draft_tokens: int | None = None
    acceptance: float | None = None
    tokens_per_step: float | None = None
    memory_only: bool = False
    #: ``reserved`` or ``paged`` (None: reserved, or the engine's); the CLI's --kv-allocation.
    kv_allocation: str | None = None
    #: A serving engine id (the CLI's --engine), or None.
    engine: str | None = None
    #: Offload (the CLI's --cpu-moe, --n-cpu-moe, --gpu-layers, --host, --host-memory-gb,
    #: --host-bandwidth-gb-per-s, --host-link-gb-per-s, --host-tflops).
    cpu_moe: bool = False
    n_cpu_moe: int | None = None
    gpu_layers: int | None = None
    host: str | None = None
    host_memory_gb: float | None = None
    host_bandwidth_gb_per_s: float | None = None
    host_link_gb_per_s: float | None = None
    host_tflops: float | None = None
    host_cpu: str | None = None
    #: Which contexts the query gave (every field above is one a query string carries: QUERY_FIELDS).
    alloc_given: bool = False
    read_given: bool = False
    #: Misspelt or unknown workload fields of a page's query, each with its close match (a page says so).
    ignored: tuple[str, ...] = ()

    def inputs(self) -> WorkloadInputs:
        """The declared inputs this query states (contexts only where given)."""
        values = {key: getattr(self, key) for key in QUERY_FIELDS}
        values["alloc_context"] = self.alloc_context if self.alloc_given else None
        values["read_context"] = self.read_context if self.read_given else None
        return WorkloadInputs(**values)

    def workload(
        self, draft: ModelAdapter | None = None, *, memory_only: bool | None = None
    ) -> DeclaredWorkload:
        """The same validated declared workload the CLI builds from the same flags (``draft``: the resolved
        model of ``self.draft``; ``memory_only``: overrides the query's, as a command's own flag)."""
        if self.draft is not None and draft is None:
            raise InputError("draft", "the draft model could not be resolved")
        extra: dict[str, Any] = {} if memory_only is None else {"memory_only": memory_only}
        return make_workload(self.inputs(), draft=draft, **extra)

    def scenario(
        self, hardware: Any, model: str | ModelAdapter, draft: ModelAdapter | None = None, **extra: Any
    ) -> Scenario:
        """The scenario this query asks on a pair, resolved once as the CLI resolves the same flags
        (``hardware``: a record, or a catalog row, whose system answers at a layout; ``draft``: the
        resolved model of ``self.draft``; ``extra``: a command's own inputs)."""
        if self.draft is not None and draft is None:
            raise InputError("draft", "the draft model could not be resolved")
        return resolve_scenario(self.inputs(), hardware=hardware, model=model, draft=draft, **extra)

    def params(self) -> dict[str, str]:
        """The non-default values, as a query string would carry them."""
        out: dict[str, str] = {}
        inputs = self.inputs()
        for key in QUERY_FIELDS:
            value = getattr(inputs, key)
            if value != BY_NAME[key].default and value is not None:
                out[key] = (
                    f"{value:g}" if isinstance(value, float) else "true" if value is True else str(value)
                )
        return out

    @property
    def is_default(self) -> bool:
        """Nothing asked beyond the defaults (and nothing misspelt: a page then says so)."""
        return not self.params() and not self.ignored


#: The workload fields a page's query string carries (the pair page's form), in its order: the declared
#: inputs of the context, workload and decode groups, and prefill's prompt.
QUERY_FIELDS: tuple[str, ...] = tuple(
    f.name for f in fields(WorkloadQuery) if f.name not in ("alloc_given", "read_given", "ignored")
)


def parse_workload_query(params: Mapping[str, str]) -> WorkloadQuery:
    """A page's workload query string, parsed once and validated (``workload_query``).

    Empty values mean "default" (a GET form sends empty fields). ``batch=max`` is the maximize mode.
    Tracking parameters (``utm_*`` and the like) are ignored; any other name is kept in ``ignored``
    with its close match, so the page can say it did not use it.
    """
    typed: dict[str, Any] = {}
    ignored = []
    for key, text in params.items():
        if key in QUERY_FIELDS or key == "context":
            # a blank is the form's "default"; an input the form has no control for is never sent blank
            if (text is not None and str(text).strip() != "") or BY_NAME[key].form is None:
                typed[key] = BY_NAME[key].parse(str(text), site=True)
        elif not key.startswith("utm_") and key not in IGNORED_ON_PAGES:
            hint = close_match(key, QUERY_FIELDS).removeprefix("; ")
            ignored.append(f"{key} ({hint})" if hint else key)
    if typed.get("batch") == "max":
        typed.pop("batch")
    return workload_query(typed, ignored=tuple(ignored))


def workload_query(
    given: Mapping[str, Any] | None = None, /, *, ignored: tuple[str, ...] = (), **values: Any
) -> WorkloadQuery:
    """Typed workload values (a page's parsed query or the API's declared parameters), validated once
    by the declared bounds (the site's caps included) and ``make_workload``'s cross-field checks."""
    values = {**(given or {}), **values}
    q = {key: value for key, value in values.items() if value is not None and key in QUERY_FIELDS}
    for key, value in q.items():  # text (a query parameter) in the one grammar, values as they are
        spec = BY_NAME[key]
        q[key] = spec.parse(value, site=True) if isinstance(value, str) and spec.kind is not str else value
        spec.check(q[key], site=True)
    if q.get("batch") == "max":
        q.pop("batch")
    if "draft" not in q and any(k in q for k in ("draft_tokens", "acceptance", "tokens_per_step")):
        raise InputError(
            "draft", "speculative decoding needs a draft model (draft=<model id>) with draft_tokens"
        )
    if values.get("context") is not None:  # the conversation length: both contexts, as the CLI's --context
        BY_NAME["context"].check(values["context"], site=True)
        said = WorkloadInputs(
            context=values["context"],
            alloc_context=q.get("alloc_context"),
            read_context=q.get("read_context"),
        )
        q["alloc_context"], q["read_context"] = said.contexts()
    alloc = q.get("alloc_context")
    read = q.get("read_context", min(DEFAULT_READ_CONTEXT_TOKENS, alloc or DEFAULT_ALLOC_CONTEXT_TOKENS))
    query = WorkloadQuery(
        **{k: v for k, v in q.items() if k not in ("alloc_context", "read_context")},
        alloc_context=alloc or DEFAULT_ALLOC_CONTEXT_TOKENS,
        read_context=read,
        alloc_given=alloc is not None,
        read_given="read_context" in q,
        ignored=ignored,
    )
    if query.draft is None:
        query.workload()  # every remaining check, with the CLI's own messages (a draft is checked once resolved)
    if query.prompt is not None and query.prompt > query.alloc_context:
        raise InputError(
            "prompt", f"{query.prompt:,} exceeds alloc_context {query.alloc_context:,}; raise alloc_context"
        )
    return query


__all__ = [
    "MAX_SITE_CONTEXT_TOKENS",
    "QUERY_FIELDS",
    "WorkloadQuery",
    "parse_workload_query",
    "workload_query",
]
