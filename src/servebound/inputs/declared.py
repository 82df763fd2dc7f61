"""The workload as declared, before a pair fills its defaults: the one place a workload is resolved.

``make_workload`` builds a ``DeclaredWorkload``: the stated values (a core ``Workload``, the derivation's
defaults in place) and which of them the pair fills: O from the hardware row or the engine's convention,
the contexts capped at the model's limit. ``resolve`` fills them once (``resolve_scenario`` calls it) and
returns the core's plain record, with concrete values; ``sources`` says where each value came from.
"""

from __future__ import annotations

from dataclasses import dataclass

from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.workload import DEFAULT_READ_CONTEXT_TOKENS, Workload


@dataclass(frozen=True)
class DeclaredWorkload:
    """A workload as stated, and what is left to the pair.

    ``stated``: every value as given or defaulted. ``overhead_from_hardware``: O was not given, so the
    hardware row's runtime overhead applies (8 GB where it states none), or the engine's rule
    (``Workload.engine_overhead``). ``fit_contexts_to_model``: L_alloc is the
    default, capped at a shorter model limit (never below a given L_read); L_read follows the cap
    unless ``read_context_given``.
    """

    stated: Workload
    overhead_from_hardware: bool = False
    fit_contexts_to_model: bool = False
    read_context_given: bool = False

    def resolve(self, hardware: Hardware, model: ModelAdapter) -> Workload:
        """The workload this (hardware, model) pair is computed under: the contexts from the model's
        limit, then O from the engine's convention or the hardware row, each with its source."""
        return self.with_overhead(self._contexts(self.stated, model), hardware, model.weights.resident)

    def _contexts(self, w: Workload, model: ModelAdapter) -> Workload:
        """A default L_alloc capped at the model's context limit (but never below a given L_read; a
        default L_read at most the capped L_alloc); else as stated."""
        limit = model.context_limit_tokens
        if not self.fit_contexts_to_model or limit is None or w.alloc_context_tokens <= limit:
            return w
        read = w.read_context_tokens
        alloc = max(limit, read) if self.read_context_given else limit
        return w._with(
            alloc_context_tokens=alloc,
            read_context_tokens=read if self.read_context_given else min(read, alloc),
            contexts_capped_from=(w.alloc_context_tokens, read),
        )

    def with_overhead(self, w: Workload, hardware: Hardware, resident_bytes: float) -> Workload:
        """``w`` with the engine's or the hardware row's runtime overhead where O was left to them
        (``resident_bytes``: W_resident, for an engine whose O is a fraction of what the weights
        leave), with the source of the O that applies."""
        if not self.overhead_from_hardware:
            return w
        if w.engine_overhead is not None:
            kind, fraction, source = w.engine_overhead
            base = hardware.memory_bytes
            if kind == "fraction_of_free":
                base -= resident_bytes
            return w._with(
                overhead_bytes=max(0.0, (1.0 - fraction) * base),
                overhead_source=f"engine {source}",
            )
        if hardware.runtime_overhead_bytes is None:
            return w._with(
                overhead_source=f"default {w.overhead_bytes / 1e9:g} GB: the hardware states no runtime overhead"
            )
        basis = hardware.sources.get("runtime_overhead_gb", "stated by the hardware row")
        return w._with(
            overhead_bytes=hardware.runtime_overhead_bytes, overhead_source=f"hardware row: {basis}"
        )

    def sources(self, resolved: Workload) -> dict[str, str]:
        """Where each value of ``resolved`` (this declaration's) came from: the caller, a default, a
        hardware row or the model's limit."""
        capped = resolved.contexts_capped_from
        alloc = "given"
        if capped is not None:
            alloc = f"default {capped[0]:,} capped at the model's context limit"
            if self.read_context_given and resolved.alloc_context_tokens > capped[0]:
                alloc += ", raised to the given read context"
        elif self.fit_contexts_to_model:
            alloc = f"default {resolved.alloc_context_tokens:,}"
        if self.read_context_given:
            read = "given"
        elif self.fit_contexts_to_model:
            read = f"default {DEFAULT_READ_CONTEXT_TOKENS:,}, at most L_alloc"
        else:
            read = f"default {DEFAULT_READ_CONTEXT_TOKENS:,}, at most the given L_alloc"
        overhead = resolved.overhead_source or f"workload: {resolved.overhead_bytes / 1e9:g} GB"
        return {"overhead": overhead, "alloc_context": alloc, "read_context": read}


#: What a view that resolves per pair takes: a declared workload, or a built one taken as it stands.
AnyWorkload = DeclaredWorkload | Workload


def stated(workload: AnyWorkload) -> Workload:
    """The values as stated: a declared workload's before the pair fills its defaults, or the record."""
    return workload.stated if isinstance(workload, DeclaredWorkload) else workload
