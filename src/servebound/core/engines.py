"""Device families and serving engines as records: the engine table the catalog reads from
``catalog/data/engines.toml`` (``servebound.catalog.engines``) and hands in.

A family says which arithmetic modes a device's silicon multiplies natively, so a format mode it has
no hardware for (FP4 on Ada or Hopper, FP8 on Ampere) is charged at the mode engines unpack it to
(``Family.dequantize``: a hardware record carries its family). An engine says how it allocates its
cache, what runtime overhead it keeps, its cache dtypes in its own spelling, and which weight formats
it runs on which family. Every entry carries its source. The functions here take the table as an
argument; the core reads no file.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from servebound.core.errors import InputError
from servebound.core.formats import format_words


@dataclass(frozen=True)
class Dequantize:
    """A format mode with no hardware on a family, charged at the first of ``to`` the row publishes."""

    mode: str
    to: tuple[str, ...]
    source: str


@dataclass(frozen=True)
class Family:
    """A device family: the modes its matrix hardware runs, the one whose rate no other mode exceeds
    (``fastest_mode``), the id prefixes that belong to it, and ``dequantize``: for each format mode it
    has no hardware for, the modes engines unpack that format to."""

    id: str
    vendor: str
    patterns: tuple[str, ...]
    hardware_modes: tuple[str, ...]
    fastest_mode: str
    source: str
    dequantize: tuple[Dequantize, ...] = ()
    #: The family as people write it (Hopper, CDNA 3, Apple silicon); its id where none is given.
    name: str = ""

    @property
    def said(self) -> str:
        return self.name or self.id

    def unpacked(self, mode: str) -> Dequantize | None:
        """The rule for a mode this family has no matrix hardware for, or None."""
        if mode in self.hardware_modes:
            return None
        return next((rule for rule in self.dequantize if rule.mode == mode), None)


class FormatSupport(StrEnum):
    """Whether a device runs a weight format: ``native`` (it multiplies in the format's own mode),
    ``dequantized`` (an engine unpacks the weights to another mode for the math), ``unsupported``
    (no engine in the table runs the format there)."""

    NATIVE = "native"
    DEQUANTIZED = "dequantized"
    UNSUPPORTED = "unsupported"


@dataclass(frozen=True)
class Engine:
    """A serving engine as the table states it, every entry with its source.

    ``overhead``: ``row`` (the hardware row's O), ``fraction_of_total`` (O = (1 - f) C) or
    ``fraction_of_free`` (O = (1 - f)(C - W_resident)), f = ``memory_fraction``. ``kv_dtypes``: the
    engine's cache-dtype spellings -> the format servebound stores them as (``model``: the model's own).
    ``formats``: format class -> the vendors it runs that class on.
    """

    id: str
    name: str
    kv_allocation: str
    kv_allocation_source: str
    overhead: str
    overhead_source: str
    memory_fraction: float | None
    kv_dtypes: Mapping[str, str]
    kv_dtypes_source: str
    formats: Mapping[str, tuple[str, ...]]
    formats_source: str


@dataclass(frozen=True, eq=False)
class EngineTable:
    """The whole table: every family (the first matching pattern wins), every engine by id in its
    order, and format class -> (the mode it computes at where the hardware has it, its weight
    precisions). Compared and hashed by identity: one table per catalog, kept by the answers derived
    from it."""

    families: tuple[Family, ...]
    engines: Mapping[str, Engine]
    format_classes: Mapping[str, tuple[str, tuple[str, ...]]]

    def engine(self, engine_id: str) -> Engine:
        """The engine of that id, or an InputError naming ``engine`` and the choices."""
        found = self.engines.get(engine_id)
        if found is None:
            raise InputError("engine", f"unknown engine {engine_id!r}; use one of {', '.join(self.engines)}")
        return found

    def family_of(self, hardware_id: str) -> Family | None:
        """The family of a hardware id (a system's ``Nx-`` prefix stripped), or None when unknown."""
        return _family_of(self, hardware_id)

    def format_class(self, precision: str | None) -> str | None:
        """The class of a weight precision (``gguf``, ``fp4`` ...), or None when the table has none."""
        return _format_class(self, precision)

    def kv_format_for(self, spelling: str) -> str | None:
        """The format an engine's cache-dtype spelling stores (``f16`` -> ``fp16``, ``fp8_e4m3`` ->
        ``fp8``, ``auto`` -> ``model``: the model's own width), or None when no engine spells it so."""
        for engine in self.engines.values():
            if spelling in engine.kv_dtypes:
                return engine.kv_dtypes[spelling]
        return None


ENGINE_IDS: tuple[str, ...] = ("llama.cpp", "ollama", "lm-studio", "mlx", "vllm", "sglang", "trt-llm")

_SYSTEM_PREFIX = re.compile(r"^\d+x-")


@functools.lru_cache(maxsize=4096)
def _family_of(table: EngineTable, hardware_id: str) -> Family | None:
    base = _SYSTEM_PREFIX.sub("", hardware_id)
    for family in table.families:
        if any(base.startswith(pattern) for pattern in family.patterns):
            return family
    return None


@functools.lru_cache(maxsize=4096)
def _format_class(table: EngineTable, precision: str | None) -> str | None:
    for name, (_, precisions) in table.format_classes.items():
        if precision in precisions:
            return name
    return None


#: Classes whose weights are always unpacked before the math (block quantized), wherever they run.
_UNPACKED = frozenset({"gguf", "mlx", "int4"})


@functools.lru_cache(maxsize=4096)
def format_support(
    table: EngineTable, hardware_id: str, precision: str | None, engine_id: str | None = None
) -> tuple[FormatSupport, str]:
    """Whether the device (and the engine, when one is given) runs weights of ``precision``, and why
    (kept per argument: rankings ask the same few questions hundreds of thousands of times)."""
    cls = table.format_class(precision)
    family = table.family_of(hardware_id)
    written = format_words(precision) if precision else "unstated"  # as people write it: Q4_K_M, FP8
    if cls is None:
        return (
            FormatSupport.NATIVE,
            f"weight format {written} is not in the engine table: not checked",
        )
    if family is None:
        return (
            FormatSupport.NATIVE,
            f"{hardware_id} belongs to no known device family: {cls} support not checked",
        )
    chosen = [table.engine(engine_id)] if engine_id else list(table.engines.values())
    runners = [e for e in chosen if family.vendor in e.formats.get(cls, ())]
    if not runners:
        if engine_id:
            return FormatSupport.UNSUPPORTED, (
                f"{chosen[0].name} does not run {cls} weights ({written}) on {family.vendor} devices "
                f"({chosen[0].formats_source})"
            )
        return FormatSupport.UNSUPPORTED, (
            f"no engine in the table runs {cls} weights ({written}) on {family.vendor} devices"
        )
    mode = table.format_classes[cls][0]
    names = ", ".join(e.name for e in runners)  # as people write them: vLLM, SGLang, TensorRT-LLM
    if cls in _UNPACKED:
        wider = " or 16-bit" if mode == "int8" else ""
        return (
            FormatSupport.DEQUANTIZED,
            f"{names} unpack {written} blocks to {mode.upper()}{wider} for the matrix math",
        )
    if mode in family.hardware_modes:
        return FormatSupport.NATIVE, f"{family.said} multiplies {mode.upper()} natively ({names})"
    rule = next((r for r in family.dequantize if r.mode == mode), None)
    target = rule.to[0] if rule else "a wider mode"
    source = f" ({rule.source})" if rule and family.vendor == "nvidia" else ""
    return (
        FormatSupport.DEQUANTIZED,
        f"{family.said} has no {mode.upper()} hardware; {names} unpack to {target.upper()}{source}",
    )


def markdown_table(table: EngineTable, source_text: Callable[[str], str] = str) -> str:
    """The engine table of docs/engines.md, generated from the data (a test checks the file holds it).
    ``source_text`` writes each source (a machine-readable copy passes one that drops quoted words)."""
    lines = [
        "| engine | cache | runtime overhead O (when --overhead-gb is not given) | KV dtypes (its spelling -> stored as) "
        "| weight formats -> vendors | sources |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for e in table.engines.values():
        if e.overhead == "fraction_of_total":
            overhead = f"(1 - {e.memory_fraction:g}) C"
        elif e.overhead == "fraction_of_free":
            overhead = f"(1 - {e.memory_fraction:g}) (C - W_resident)"
        else:
            overhead = "the hardware row's O (8 GB where it states none)"
        dtypes = ", ".join(f"`{k}` -> {v}" for k, v in e.kv_dtypes.items())
        formats = "; ".join(f"{k}: {', '.join(v)}" for k, v in e.formats.items())
        sources = " ".join(
            f"{label}: {source_text(text)}"
            for label, text in (
                ("cache", e.kv_allocation_source),
                ("O", e.overhead_source),
                ("dtypes", e.kv_dtypes_source),
                ("formats", e.formats_source),
            )
        )
        lines.append(f"| `{e.id}` | {e.kv_allocation} | {overhead} | {dtypes} | {formats} | {sources} |")
    lines += [
        "",
        "| format class | weight precisions | mode where the device has it |",
        "| --- | --- | --- |",
    ]
    for name, (mode, precisions) in table.format_classes.items():
        lines.append(f"| {name} | {', '.join(precisions)} | {mode} |")
    return "\n".join(lines)
