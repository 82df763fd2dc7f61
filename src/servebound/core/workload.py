"""The workload: the stated assumptions that move every result."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import StrEnum

from servebound.core.engines import FormatSupport
from servebound.core.experts import ExpertTraffic
from servebound.core.hardware import Hardware
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
    whether decode charges its compute roof (``memory_only`` off by default)."""

    overhead_bytes: float = DEFAULT_OVERHEAD_BYTES
    alloc_context_tokens: int = DEFAULT_ALLOC_CONTEXT_TOKENS
    read_context_tokens: int = DEFAULT_READ_CONTEXT_TOKENS
    floor_tok_per_s: float = DEFAULT_FLOOR_TOK_PER_S
    forced_batch: int | None = None
    expert_traffic: ExpertTraffic = ExpertTraffic.EXPECTED
    speculation: Speculation | None = None
    #: Decode's compute roof switched off (``--memory-only``): today's memory-only ceiling, for comparison.
    memory_only: bool = False
    #: L_alloc is a default, not the caller's: a model whose context limit is shorter gets it capped at
    #: that limit (``for_model``; never below a given L_read), and the result says so through
    #: ``contexts_capped_from``. L_read follows the cap unless ``read_context_given``.
    fit_contexts_to_model: bool = False
    read_context_given: bool = False
    contexts_capped_from: tuple[int, int] | None = None
    #: O is a default, not the caller's: a hardware row that states its runtime overhead gets that
    #: instead (``for_hardware``). ``overhead_source`` says which O applied and why.
    overhead_from_hardware: bool = False
    overhead_source: str | None = None
    #: Reserved (each session holds its whole L_alloc) or paged (each holds its L_read on average).
    kv_allocation: KVAllocation = KVAllocation.RESERVED
    #: The serving engine named (``--engine``), or None; it set the allocation and may set O.
    engine: str | None = None
    #: The engine's overhead convention when O was left to it: (kind, memory fraction f, source), kind
    #: ``fraction_of_total`` (O = (1 - f) C) or ``fraction_of_free`` (O = (1 - f)(C - W_resident)).
    engine_overhead: tuple[str, float, str] | None = None
    #: W_resident, recorded by ``for_model`` for a fraction-of-free convention (``for_hardware`` uses it).
    engine_resident_bytes: float | None = None
    #: Weights in host RAM (``--cpu-moe``, ``--n-cpu-moe``, ``--gpu-layers``) and the host's memory.
    offload: OffloadSpec | None = None
    #: The cache precision asked (``--kv-precision``), or None for the model's own. The scenario
    #: re-expresses the target and the draft at it, alike; the core reads the records' K bytes.
    kv_precision: str | None = None
    #: Whether the device (and the engine) runs the model's weight format, and why, as the scenario read
    #: it from the engine table; None on a workload no scenario resolved (its results say not checked).
    #: It follows from the pair and the engine, so it is not part of equality.
    format_support: tuple[FormatSupport, str] | None = field(default=None, compare=False)
    #: Set by ``resolve``: every default that depends on the (hardware, model) pair is filled in, so
    #: the core computes with this workload as it stands (not part of equality).
    resolved: bool = field(default=False, compare=False, repr=False)

    @property
    def pending(self) -> bool:
        """A default still to fill from a hardware row or a model's limit: ``resolve`` first."""
        return not self.resolved and (self.overhead_from_hardware or self.fit_contexts_to_model)

    @property
    def held_context_tokens(self) -> int:
        """The context a decoding session's cache holds: L_alloc reserved, L_read paged."""
        if self.kv_allocation is KVAllocation.PAGED:
            return self.read_context_tokens
        return self.alloc_context_tokens

    def for_hardware(self, hardware: Hardware) -> Workload:
        """The hardware row's runtime overhead where O was left to it and the row states one; else
        self, with the source of the O that applies."""
        if not self.overhead_from_hardware:
            return self
        if self.engine_overhead is not None:
            kind, fraction, source = self.engine_overhead
            base = hardware.memory_bytes
            if kind == "fraction_of_free":
                base -= self.engine_resident_bytes or 0.0
            return self._with(
                overhead_bytes=max(0.0, (1.0 - fraction) * base),
                overhead_from_hardware=False,
                overhead_source=f"engine {self.engine}: {source}",
            )
        if hardware.runtime_overhead_bytes is None:
            return self._with(
                overhead_from_hardware=False,
                overhead_source=f"default {self.overhead_bytes / 1e9:g} GB: the hardware states no runtime overhead",
            )
        basis = hardware.sources.get("runtime_overhead_gb", "stated by the hardware row")
        return self._with(
            overhead_bytes=hardware.runtime_overhead_bytes,
            overhead_from_hardware=False,
            overhead_source=f"hardware row: {basis}",
        )

    def for_model(self, model: ModelAdapter) -> Workload:
        """A default L_alloc capped at the model's context limit (but never below a given L_read; a
        default L_read at most the capped L_alloc); else self. An engine whose O is a fraction of what
        the weights leave records W_resident here."""
        base = self
        if self.engine_overhead is not None and self.engine_overhead[0] == "fraction_of_free":
            base = self._with(engine_resident_bytes=model.weights.resident)
        limit = model.context_limit_tokens
        if not base.fit_contexts_to_model or limit is None or base.alloc_context_tokens <= limit:
            return base
        read = base.read_context_tokens
        alloc = max(limit, read) if base.read_context_given else limit
        return base._with(
            alloc_context_tokens=alloc,
            read_context_tokens=read if base.read_context_given else min(read, alloc),
            fit_contexts_to_model=False,
            contexts_capped_from=(base.alloc_context_tokens, read),
        )

    def resolve(self, hardware: Hardware, model: ModelAdapter) -> Workload:
        """The workload this (hardware, model) pair is computed under: every default that depends on
        them filled in once (O from the hardware row, the contexts from the model's limit), each with
        its source (``sources``). A resolved workload is returned as it is: it is resolved once, at the
        edge that names the pair, and the core takes it so (``resolved_workload``)."""
        if self.resolved:
            return self
        return self.for_model(model).for_hardware(hardware)._with(resolved=True)

    def _with(self, **changes: object) -> Workload:
        """``dataclasses.replace(self, **changes)`` without its per-field work (``resolve`` runs once
        per pair in a sweep): the fields copied and ``changes`` set. A Workload validates nothing at
        construction (it has no ``__post_init__``), so the copy is the record ``replace`` builds."""
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__, **changes)
        return copy

    @property
    def sources(self) -> dict[str, str]:
        """Where each stated value came from: the caller, a default, a hardware row or the model's limit."""
        capped = self.contexts_capped_from
        alloc = "given"
        if capped is not None:
            alloc = f"default {capped[0]:,} capped at the model's context limit"
            if self.read_context_given and self.alloc_context_tokens > capped[0]:
                alloc += ", raised to the given read context"
        elif self.fit_contexts_to_model:
            alloc = f"default {self.alloc_context_tokens:,}"
        if self.read_context_given:
            read = "given"
        elif capped is not None or self.fit_contexts_to_model:
            read = f"default {DEFAULT_READ_CONTEXT_TOKENS:,}, at most L_alloc"
        else:
            read = f"default {DEFAULT_READ_CONTEXT_TOKENS:,}, at most the given L_alloc"
        overhead = self.overhead_source or f"workload: {self.overhead_bytes / 1e9:g} GB"
        return {"overhead": overhead, "alloc_context": alloc, "read_context": read}

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


def resolved_workload(workload: Workload | None, against: str = "the hardware and model") -> Workload:
    """The workload a core function computes with, as its caller resolved it (``Workload.resolve``)
    against the pair it names (a layout's against the system's scaled device: O is N x the member
    row's, and each device carries O / N); None is ``Workload()``, which states every value. The core never
    resolves: a workload with a default still to fill (O from the hardware row, the contexts from the
    model's limit) is a ValueError, so a caller that forgot cannot get an answer at the bare defaults."""
    workload = workload or Workload()
    if workload.pending:
        raise ValueError(f"the workload has defaults still to fill: resolve it against {against} first")
    return workload
