"""The workload: the stated assumptions that move every result."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

from servebound.core.engines import FormatSupport
from servebound.core.experts import ExpertTraffic
from servebound.core.model import ModelAdapter
from servebound.core.offload import OffloadSpec

#: The derivation's defaults (the original calculator's): O = 8 GB, L_alloc = 100k, L_read = 32k, r* = 20.
DEFAULT_OVERHEAD_BYTES = 8e9
DEFAULT_ALLOC_CONTEXT_TOKENS = 100_000
DEFAULT_READ_CONTEXT_TOKENS = 32_000
DEFAULT_FLOOR_TOK_PER_S = 20.0

#: The batch search never goes beyond this many sessions. Memory stops bounding the batch when the
#: per-session cache does not grow (recurrent state only, or no cache at all); past this point compute,
#: kernels and the scheduler decide, and the report says so instead of printing infinity.
MAX_BATCH = 1_000_000_000


def memory_fit_batch(margin_bytes: float, kv_alloc_bytes: float) -> tuple[int, bool]:
    """b_mem = floor(margin / K_alloc) and whether it was capped at MAX_BATCH.

    The one definition decode and prefill share. A non-positive reservation, or one so small the
    ratio passes MAX_BATCH (or overflows to inf), is capped before the floor is taken.
    """
    if margin_bytes < 0:
        return 0, False
    if kv_alloc_bytes <= 0:
        return MAX_BATCH, True
    ratio = margin_bytes / kv_alloc_bytes
    if ratio > MAX_BATCH:
        return MAX_BATCH, True
    return math.floor(ratio), False


class KVAllocation(StrEnum):
    """How a runtime holds each session's cache.

    ``reserved``: every session reserves K_alloc(L_alloc) up front (llama.cpp's slots, the derivation's
    default). ``paged``: the cache grows on demand in blocks (vLLM's PagedAttention, SGLang, TensorRT-LLM),
    so a session holds what it has read, K_alloc(L_read) on average: the derivation's on-demand cache,
    b K_store(L) in place of b K_alloc(L_alloc).
    """

    RESERVED = "reserved"
    PAGED = "paged"


@dataclass(frozen=True)
class Speculation:
    """Speculative decoding: a draft proposes ``draft_tokens`` (gamma) tokens a step; the target
    verifies them in one pass and emits ``tokens_per_step`` (rho) per session per iteration."""

    draft: ModelAdapter
    draft_tokens: int
    tokens_per_step: float
    acceptance: float | None = None

    @staticmethod
    def rho_from_acceptance(acceptance: float, draft_tokens: int) -> float:
        """rho = (1 - alpha^(gamma+1)) / (1 - alpha), and gamma + 1 at alpha = 1."""
        if acceptance >= 1.0:
            return float(draft_tokens + 1)
        return float((1.0 - acceptance ** (draft_tokens + 1)) / (1.0 - acceptance))


@dataclass(frozen=True)
class Workload:
    """O, L_alloc, L_read, r*, an optional forced batch, the expert-traffic mode, speculation, and
    whether decode charges its compute roof (``memory_only`` off by default): every value concrete, as
    the core computes with it. The scenario (``inputs/scenario.py``) fills a declared workload's
    pair-dependent defaults once and records where each value came from; a Workload built by hand is
    taken as it stands."""

    overhead_bytes: float = DEFAULT_OVERHEAD_BYTES
    alloc_context_tokens: int = DEFAULT_ALLOC_CONTEXT_TOKENS
    read_context_tokens: int = DEFAULT_READ_CONTEXT_TOKENS
    floor_tok_s: float = DEFAULT_FLOOR_TOK_PER_S
    forced_batch: int | None = None
    expert_traffic: ExpertTraffic = ExpertTraffic.EXPECTED
    speculation: Speculation | None = None
    #: Decode's compute roof switched off (``--memory-only``): today's memory-only ceiling, for comparison.
    memory_only: bool = False
    #: (default L_alloc, L_read) before the scenario capped them at the model's context limit, or None
    #: where nothing was capped: the results say so.
    contexts_capped_from: tuple[int, int] | None = None
    #: Which O applies and why (given, the hardware row, an engine's convention, the default), as the
    #: results' assumptions state it; None: the value as given in the record.
    overhead_source: str | None = None
    #: Reserved (each session holds its whole L_alloc) or paged (each holds its L_read on average).
    kv_allocation: KVAllocation = KVAllocation.RESERVED
    #: The serving engine named (``--engine``), or None; it set the allocation and may set O.
    engine: str | None = None
    #: The engine's rule that sets O where O was left to it: (kind, memory fraction f, source), kind
    #: ``fraction_of_total`` (O = (1 - f) C) or ``fraction_of_free`` (O = (1 - f)(C - W_resident));
    #: None where O is given or the hardware row's. A view that changes the weights applies it again.
    engine_overhead: tuple[str, float, str] | None = None
    #: Weights in host RAM (``--cpu-moe``, ``--n-cpu-moe``, ``--gpu-layers``) and the host's memory.
    offload: OffloadSpec | None = None
    #: The cache precision asked (``--kv-precision``), or None for the model's own. The scenario
    #: re-expresses the target and the draft at it, alike; the core reads the records' K bytes.
    kv_precision: str | None = None
    #: Whether the device (and the engine) runs the model's weight format, and why, as the scenario read
    #: it from the engine table; None on a workload no scenario resolved (its results say not checked).
    #: It follows from the pair and the engine, so it is not part of equality.
    format_support: tuple[FormatSupport, str] | None = field(default=None, compare=False)

    @property
    def held_context_tokens(self) -> int:
        """The context a decoding session's cache holds: L_alloc reserved, L_read paged."""
        if self.kv_allocation is KVAllocation.PAGED:
            return self.read_context_tokens
        return self.alloc_context_tokens

    def _with(self, **changes: object) -> Workload:
        """``dataclasses.replace(self, **changes)`` without its per-field work (the scenario resolves
        once per pair in a sweep): the fields copied and ``changes`` set. A Workload validates nothing at
        construction (it has no ``__post_init__``), so the copy is the record ``replace`` builds."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__, **changes)
        return copy

    @property
    def tokens_per_step(self) -> float:
        """rho: 1 for ordinary decoding."""
        return self.speculation.tokens_per_step if self.speculation else 1.0


#: The weight-format verdict of a workload no scenario resolved.
NOT_CHECKED = (FormatSupport.NATIVE, "weight format not checked: no engine table was given")


class RangeLimit(StrEnum):
    """What set the longest context of a range: decode's read contexts, prefill's prompt lengths."""

    CONTEXT_LIMIT = "context_limit"
    ALLOC_CONTEXT = "alloc_context"
    MEMORY = "memory"


def range_top(model: ModelAdapter, workload: Workload) -> tuple[int, RangeLimit]:
    """Where a range over contexts ends before memory is asked: the model's context limit, or the
    workload's alloc context when the model states none."""
    if model.context_limit_tokens is not None:
        return model.context_limit_tokens, RangeLimit.CONTEXT_LIMIT
    return workload.alloc_context_tokens, RangeLimit.ALLOC_CONTEXT
