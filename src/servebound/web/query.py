"""The workload as query parameters: a page's query string or the API's typed parameters, parsed once
and validated once (the site's own bounds here, every other check by the CLI's ``make_workload``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypedDict, Unpack

from servebound.api import make_workload
from servebound.core.experts import ExpertTraffic
from servebound.core.model import ModelAdapter
from servebound.core.workload import (
    DEFAULT_ALLOC_CONTEXT_TOKENS,
    DEFAULT_FLOOR_TOK_PER_S,
    DEFAULT_READ_CONTEXT_TOKENS,
    MAX_BATCH,
    Workload,
)
from servebound.errors import InputError

#: The site computes prompt-length ranges over every integer length, so it caps the reserved context.
MAX_SITE_CONTEXT_TOKENS = 2_000_000


@dataclass(frozen=True)
class WorkloadQuery:
    """The pair page's query parameters, in the contract's edge units, already validated.

    ``batch`` None means the maximize-batch mode (b*); ``prompt`` None means the default prompt.
    """

    alloc_context: int = DEFAULT_ALLOC_CONTEXT_TOKENS
    read_context: int = DEFAULT_READ_CONTEXT_TOKENS
    floor: float = DEFAULT_FLOOR_TOK_PER_S
    #: None: the hardware row's runtime overhead (8 GB where it states none), as the CLI's default.
    overhead_gb: float | None = None
    batch: int | None = None
    prompt: int | None = None
    expert_traffic: str = ExpertTraffic.EXPECTED.value
    #: False when neither context was in the query: the defaults then follow the model's context limit,
    #: as the CLI's do when its flags are omitted.
    contexts_given: bool = False
    #: Speculative decoding: the draft's model id, gamma, and alpha or rho (the CLI's --draft flags).
    draft: str | None = None
    draft_tokens: int | None = None
    acceptance: float | None = None
    tokens_per_step: float | None = None
    #: ``reserved`` or ``paged`` (None: reserved, or the engine's); the CLI's --kv-allocation.
    kv_allocation: str | None = None
    #: A serving engine id (the CLI's --engine), or None.
    engine: str | None = None
    #: Offload (the CLI's --cpu-moe, --n-cpu-moe, --gpu-layers, --host, --host-memory-gb,
    #: --host-bandwidth-gb-per-s, --host-link-gb-per-s).
    cpu_moe: bool | None = None
    n_cpu_moe: int | None = None
    gpu_layers: int | None = None
    host: str | None = None
    host_memory_gb: float | None = None
    host_bandwidth_gb_per_s: float | None = None
    host_link_gb_per_s: float | None = None

    def workload(self, draft: ModelAdapter | None = None, *, memory_only: bool = False) -> Workload:
        """The same validated Workload the CLI builds from the same flags (``draft``: the resolved
        model of ``self.draft``; ``memory_only``: the memory roof alone, as ``--memory-only``)."""
        given = self.contexts_given
        if self.draft is not None and draft is None:
            raise InputError("draft", "the draft model could not be resolved")
        return make_workload(
            overhead_gb=self.overhead_gb,
            alloc_context=self.alloc_context if given else None,
            read_context=self.read_context if given else None,
            floor_tok_s=self.floor,
            batch=self.batch,
            expert_traffic=self.expert_traffic,
            draft=draft,
            draft_tokens=self.draft_tokens,
            acceptance=self.acceptance,
            tokens_per_step=self.tokens_per_step,
            memory_only=memory_only,
            kv_allocation=self.kv_allocation,
            engine=self.engine,
            cpu_moe=bool(self.cpu_moe),
            n_cpu_moe=self.n_cpu_moe,
            gpu_layers=self.gpu_layers,
            host=self.host,
            host_memory_gb=self.host_memory_gb,
            host_bandwidth_gb_per_s=self.host_bandwidth_gb_per_s,
            host_link_gb_per_s=self.host_link_gb_per_s,
        )

    def params(self) -> dict[str, str]:
        """The non-default values, as a query string would carry them."""
        out: dict[str, str] = {}
        default = WorkloadQuery()
        for key in QUERY_FIELDS:
            value = getattr(self, key)
            if value != getattr(default, key) and value is not None:
                out[key] = f"{value:g}" if isinstance(value, float) else str(value)
        return out

    @property
    def is_default(self) -> bool:
        return not self.params()


class QueryValues(TypedDict, total=False):
    """The workload values a query string carries, typed, in its order (None or absent: the default)."""

    alloc_context: int | None
    read_context: int | None
    floor: float | None
    overhead_gb: float | None
    batch: int | None
    prompt: int | None
    expert_traffic: str | None
    draft: str | None
    draft_tokens: int | None
    acceptance: float | None
    tokens_per_step: float | None
    kv_allocation: str | None
    engine: str | None
    cpu_moe: bool | None
    n_cpu_moe: int | None
    gpu_layers: int | None
    host: str | None
    host_memory_gb: float | None
    host_bandwidth_gb_per_s: float | None
    host_link_gb_per_s: float | None


#: The workload fields a query string carries, in its order.
QUERY_FIELDS = tuple(QueryValues.__annotations__)


def _int_param(field: str, text: str) -> int:
    try:
        value = float(text.strip().replace(",", "").replace("_", ""))
    except ValueError:
        raise InputError(field, f"must be a whole number (got {text!r})") from None
    if not math.isfinite(value) or value != int(value):
        raise InputError(field, f"must be a whole number (got {text!r})")
    return int(value)


def _float_param(field: str, text: str) -> float:
    try:
        value = float(text.strip().replace(",", "").replace("_", ""))
    except ValueError:
        raise InputError(field, f"must be a number (got {text!r})") from None
    if not math.isfinite(value):
        raise InputError(field, f"must be a finite number (got {text!r})")
    return value


def parse_workload_query(params: Mapping[str, str]) -> WorkloadQuery:
    """A page's workload query string, parsed once and validated (``workload_query``).

    Empty values mean "default" (a GET form sends empty fields). ``batch=max`` is the maximize mode.
    """
    raw = {k: v for k, v in params.items() if k in QUERY_FIELDS and v is not None and str(v).strip() != ""}
    q: dict[str, Any] = {}
    for key in ("alloc_context", "read_context", "prompt", "draft_tokens", "n_cpu_moe", "gpu_layers"):
        if key in raw:
            q[key] = _int_param(key, raw[key])
    for key in (
        "floor",
        "overhead_gb",
        "acceptance",
        "tokens_per_step",
        "host_memory_gb",
        "host_bandwidth_gb_per_s",
        "host_link_gb_per_s",
    ):
        if key in raw:
            q[key] = _float_param(key, raw[key])
    if "batch" in raw and raw["batch"].strip().lower() != "max":
        q["batch"] = _int_param("batch", raw["batch"])
    for key in ("expert_traffic", "draft", "kv_allocation", "engine", "host"):
        if key in raw:
            q[key] = raw[key].strip()
    if "cpu_moe" in raw:
        flag = raw["cpu_moe"].strip().lower()
        if flag not in ("true", "false", "1", "0"):
            raise InputError("cpu_moe", f"must be true or false (got {raw['cpu_moe']!r})")
        q["cpu_moe"] = flag in ("true", "1")
    return workload_query(**q)


def workload_query(**given: Unpack[QueryValues]) -> WorkloadQuery:
    """Typed workload values (a page's parsed query or the API's typed parameters), validated once:
    the site's own bounds here, every other check by the CLI's ``make_workload`` with its messages."""
    q: dict[str, Any] = {key: value for key, value in given.items() if value is not None}
    batch, prompt = given.get("batch"), given.get("prompt")
    if batch is not None and not 1 <= batch <= MAX_BATCH:
        raise InputError("batch", f"must be between 1 and {MAX_BATCH:,} (got {batch:,}); or 'max'")
    if prompt is not None and prompt < 1:
        raise InputError("prompt", f"must be a whole number of tokens >= 1 (got {prompt})")
    if "draft" not in q and any(k in q for k in ("draft_tokens", "acceptance", "tokens_per_step")):
        raise InputError(
            "draft", "speculative decoding needs a draft model (draft=<model id>) with draft_tokens"
        )
    for key in ("alloc_context", "read_context"):
        if key in q and q[key] > MAX_SITE_CONTEXT_TOKENS:
            raise InputError(
                key,
                f"the site computes up to {MAX_SITE_CONTEXT_TOKENS:,} tokens (got {q[key]:,}); use the CLI beyond",
            )
    if "read_context" in q and "alloc_context" not in q and q["read_context"] > DEFAULT_ALLOC_CONTEXT_TOKENS:
        raise InputError(
            "read_context",
            f"{q['read_context']:,} exceeds alloc_context {DEFAULT_ALLOC_CONTEXT_TOKENS:,} (the default); "
            "raise alloc_context too",
        )
    if (
        "alloc_context" in q and "read_context" not in q
    ):  # as the CLI: L_read defaults to min(32,000, L_alloc)
        q["read_context"] = min(DEFAULT_READ_CONTEXT_TOKENS, q["alloc_context"])
    query = WorkloadQuery(**q, contexts_given="alloc_context" in q or "read_context" in q)
    if query.draft is None:
        query.workload()  # every remaining check, with the CLI's own messages (a draft is checked once resolved)
    if query.prompt is not None and query.prompt > query.alloc_context:
        raise InputError(
            "prompt", f"{query.prompt:,} exceeds alloc_context {query.alloc_context:,}; raise alloc_context"
        )
    return query
