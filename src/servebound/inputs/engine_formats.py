"""Which catalog format an engine runs on a device, and the one format per model it would be asked for.

The one choice ``fit``, ``rank`` and a bare model name under ``--engine`` share (``choose_format``): among
a model's catalog formats that an engine runs on this hardware, the heaviest (most weight bytes: more
bits per weight is the better copy of the same model) whose decode clears the floor; where none does,
the lightest it runs (the nearest to fitting). Which engine runs which format (``engine_for``):

* llama.cpp's file types (q4_k_m, q8_0, f16, mxfp4_moe ...): llama.cpp, on every vendor (Ollama and
  LM Studio run the same files);
* MLX formats (mlx_4bit ...): mlx, on Apple silicon only;
* safetensors releases (bf16, fp8, nvfp4 ...): vllm on NVIDIA and AMD GPUs (nvfp4 only where the family
  multiplies FP4, per ``core.engines``; MXFP4 experts run on older GPUs through vLLM's Marlin kernels),
  mlx for bf16/fp16 on Apple silicon; none on other hardware.

With an engine named, the formats that engine runs on the device's vendor, per the engine table
(``catalog/data/engines.toml``: Ollama and LM Studio run llama.cpp's files, LM Studio also MLX on Apple;
SGLang and TensorRT-LLM the safetensors releases on their vendors).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from servebound.catalog.models import CatalogModel, list_models
from servebound.catalog.names import profile_id_for, split_quant
from servebound.core.decode import DecodeResult, Verdict
from servebound.core.hardware import Hardware
from servebound.errors import InputError
from servebound.inputs.engine_choice import engine_for, hardware_vendor


@dataclass(frozen=True)
class FormatChoice:
    """One model's format for these engines on this hardware: the profile, the engine that runs it, its
    decode (None where it was not the floor's), and whether it clears the floor."""

    profile: CatalogModel
    engine: str
    decode: DecodeResult | None
    clears_floor: bool


def choose_format(
    profiles: Iterable[CatalogModel],
    vendor: str | None,
    hardware_id: str,
    engines: tuple[str | None, ...],
    evaluate: Callable[[CatalogModel], DecodeResult],
) -> FormatChoice | None:
    """One model's format (``profiles`` are its formats): the heaviest that one of ``engines`` runs here
    and whose decode (``evaluate``) clears the floor; else the lightest one of them runs; else None.
    ``(None,)`` takes each format's usual engine (``engine_for``)."""
    best: FormatChoice | None = None
    lightest: FormatChoice | None = None
    for profile in profiles:
        found = (engine_for(profile.weight_format, vendor, hardware_id, e) for e in engines)
        runs_on = next((e for e in found if e), None)
        if runs_on is None:
            continue
        resident = profile.adapter.weights.resident
        if lightest is None or resident < lightest.profile.adapter.weights.resident:
            lightest = FormatChoice(profile, runs_on, None, False)
        if best is not None and resident <= best.profile.adapter.weights.resident:
            continue
        result = evaluate(profile)
        if result.verdict is Verdict.FLOOR_FIT:
            best = FormatChoice(profile, runs_on, result, True)
    return best or lightest


def names_a_format(ref: str) -> bool:
    """Whether a model name states its format (a quantization word: ``q4``, ``fp8``, an Ollama tag's or a
    Hub reference's ``:Q8_0``): such a name is answered as given under any engine."""
    return split_quant(ref)[1] is not None


def engine_format(
    ref: str, hardware: Hardware, engine: str, evaluate: Callable[[CatalogModel], DecodeResult]
) -> tuple[str, str] | None:
    """(profile id, why) where a bare catalog name (a release, no format word) is asked of an engine that
    does not run the release's format on this hardware: the format ``choose_format`` picks among the
    model's formats for that engine. None where the name is not a catalog name, names a format, or
    the engine runs the release (a bare release id stays the release)."""
    if names_a_format(ref):
        return None
    try:
        found = profile_id_for(ref, missing_ok=True)
    except InputError:
        return None
    models = list_models()
    named = next((p for p in models if p.id == found), None)
    vendor = hardware_vendor(hardware.id)
    if named is None or not named.native or engine_for(named.weight_format, vendor, hardware.id, engine):
        return None
    formats = [p for p in models if p.base_id == named.base_id]
    choice = choose_format(formats, vendor, hardware.id, (engine,), evaluate)
    if choice is None:
        return None
    which = (
        "its heaviest format that clears the floor here"
        if choice.clears_floor
        else "its lightest format (none clears the floor here)"
    )
    why = (
        f"chosen for {engine}: {choice.profile.id} ({choice.profile.weight_format}), {which}; "
        f"{engine} does not run the release's {named.weight_format} weights on this device "
        f"(a format in the name, e.g. {named.base_id}-FORMAT, asks for another)"
    )
    return choice.profile.id, why
