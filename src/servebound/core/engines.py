"""Device families and serving engines, read from ``catalog/data/engines.toml``.

A family says which arithmetic modes a device's silicon multiplies natively, so a format mode it has
no hardware for (FP4 on Ada or Hopper, FP8 on Ampere) is charged at the mode engines unpack it to.
An engine says how it allocates its cache, what runtime overhead it keeps, its cache dtypes in its own
spelling, and which weight formats it runs on which family. Every entry carries its source.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any

from servebound.catalog import snapshot
from servebound.core.errors import InputError


@dataclass(frozen=True)
class Family:
    """A device family: the modes its matrix hardware runs, the one whose rate no other mode exceeds
    (``fastest_mode``), and the id prefixes that belong to it."""

    id: str
    #: The family as people write it (Hopper, CDNA 3, Apple silicon).
    name: str
    vendor: str
    patterns: tuple[str, ...]
    hardware_modes: tuple[str, ...]
    fastest_mode: str
    source: str


@dataclass(frozen=True)
class Dequantize:
    """A format mode with no hardware on a family, charged at the first of ``to`` the row publishes."""

    mode: str
    to: tuple[str, ...]
    source: str


@functools.cache
def _data() -> dict[str, Any]:
    """The data file's tables, as the catalog snapshot keeps them (a cold command neither imports the
    TOML parser nor parses the file)."""
    tables: dict[str, Any] = snapshot.decode(snapshot.engines(), {})
    return tables


@functools.cache
def families() -> tuple[Family, ...]:
    """Every device family, in the data file's order (the first matching pattern wins)."""
    return tuple(
        Family(
            id=row["id"],
            name=row.get("name", row["id"]),
            vendor=row["vendor"],
            patterns=tuple(row["patterns"]),
            hardware_modes=tuple(row["hardware_modes"]),
            fastest_mode=row["fastest_mode"],
            source=row["source"],
        )
        for row in _data()["family"]
    )


@functools.cache
def dequantize_rules() -> dict[str, Dequantize]:
    """Format mode -> the modes engines unpack it to on a family without hardware for it."""
    return {
        row["mode"]: Dequantize(mode=row["mode"], to=tuple(row["to"]), source=row["source"])
        for row in _data()["dequantize"]
    }


_SYSTEM_PREFIX = re.compile(r"^\d+x-")


@functools.lru_cache(maxsize=4096)
def device_family(hardware_id: str) -> Family | None:
    """The family of a hardware id (a system's ``Nx-`` prefix stripped), or None when unknown."""
    base = _SYSTEM_PREFIX.sub("", hardware_id)
    for family in families():
        if any(base.startswith(pattern) for pattern in family.patterns):
            return family
    return None


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


@functools.cache
def engines() -> dict[str, Engine]:
    """Every engine of the table, by id, in its order."""
    return {
        row["id"]: Engine(
            id=row["id"],
            name=row["name"],
            kv_allocation=row["kv_allocation"],
            kv_allocation_source=row["kv_allocation_source"],
            overhead=row["overhead"],
            overhead_source=row["overhead_source"],
            memory_fraction=row.get("memory_fraction"),
            kv_dtypes=MappingProxyType(dict(row["kv_dtypes"])),
            kv_dtypes_source=row["kv_dtypes_source"],
            formats=MappingProxyType({k: tuple(v) for k, v in row["formats"].items()}),
            formats_source=row["formats_source"],
        )
        for row in _data()["engine"]
    }


ENGINE_IDS: tuple[str, ...] = ("llama.cpp", "ollama", "lm-studio", "mlx", "vllm", "sglang", "trt-llm")


def get_engine(engine_id: str) -> Engine:
    """The engine of that id, or an InputError naming ``engine`` and the choices."""
    found = engines().get(engine_id)
    if found is None:
        raise InputError("engine", f"unknown engine {engine_id!r}; use one of {', '.join(engines())}")
    return found


@functools.cache
def format_classes() -> dict[str, tuple[str, tuple[str, ...]]]:
    """Format class -> (the mode it computes at where the hardware has it, its weight precisions)."""
    return {name: (row["mode"], tuple(row["precisions"])) for name, row in _data()["format_class"].items()}


@functools.lru_cache(maxsize=4096)
def format_class(precision: str | None) -> str | None:
    """The class of a weight precision (``gguf``, ``fp4`` ...), or None when the table has none."""
    for name, (_, precisions) in format_classes().items():
        if precision in precisions:
            return name
    return None


#: Classes whose weights are always unpacked before the math (block quantized), wherever they run.
_UNPACKED = frozenset({"gguf", "mlx", "int4"})


@functools.lru_cache(maxsize=4096)
def format_support(
    hardware_id: str, precision: str | None, engine_id: str | None = None
) -> tuple[FormatSupport, str]:
    """Whether the device (and the engine, when one is given) runs weights of ``precision``, and why
    (kept per argument triple: the table is read once, and rankings ask the same few questions
    hundreds of thousands of times)."""
    cls = format_class(precision)
    family = device_family(hardware_id)
    if cls is None:
        return (
            FormatSupport.NATIVE,
            f"weight format {precision or 'unstated'} is not in the engine table: not checked",
        )
    if family is None:
        return (
            FormatSupport.NATIVE,
            f"{hardware_id} belongs to no known device family: {cls} support not checked",
        )
    chosen = [get_engine(engine_id)] if engine_id else list(engines().values())
    runners = [e for e in chosen if family.vendor in e.formats.get(cls, ())]
    if not runners:
        if engine_id:
            return FormatSupport.UNSUPPORTED, (
                f"{chosen[0].name} does not run {cls} weights ({precision}) on {family.vendor} devices "
                f"({chosen[0].formats_source})"
            )
        return FormatSupport.UNSUPPORTED, (
            f"no engine in the table runs {cls} weights ({precision}) on {family.vendor} devices"
        )
    mode = format_classes()[cls][0]
    names = ", ".join(e.name for e in runners)  # as people write them: vLLM, SGLang, TensorRT-LLM
    if cls in _UNPACKED:
        wider = " or 16-bit" if mode == "int8" else ""
        return (
            FormatSupport.DEQUANTIZED,
            f"{names} unpack {precision} blocks to {mode.upper()}{wider} for the matrix math",
        )
    if mode in family.hardware_modes:
        return FormatSupport.NATIVE, f"{family.name} multiplies {mode.upper()} natively ({names})"
    rule = dequantize_rules().get(mode)
    target = rule.to[0] if rule else "a wider mode"
    source = f" ({rule.source})" if rule and family.vendor == "nvidia" else ""
    return (
        FormatSupport.DEQUANTIZED,
        f"{family.name} has no {mode.upper()} hardware; {names} unpack to {target.upper()}{source}",
    )


def kv_format_for(spelling: str) -> str | None:
    """The format an engine's cache-dtype spelling stores (``f16`` -> ``fp16``, ``fp8_e4m3`` -> ``fp8``,
    ``auto`` -> ``model``: the model's own width), or None when no engine spells it so."""
    for engine in engines().values():
        if spelling in engine.kv_dtypes:
            return engine.kv_dtypes[spelling]
    return None


def markdown_table(source_text: Callable[[str], str] = str) -> str:
    """The engine table of docs/engines.md, generated from the data (a test checks the file holds it).
    ``source_text`` writes each source (a machine-readable copy passes one that drops quoted words)."""
    lines = [
        "| engine | cache | runtime overhead O (when --overhead-gb is not given) | KV dtypes (its spelling -> stored as) "
        "| weight formats -> vendors | sources |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for e in engines().values():
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
    for name, (mode, precisions) in format_classes().items():
        lines.append(f"| {name} | {', '.join(precisions)} | {mode} |")
    return "\n".join(lines)
