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
from functools import cache

from servebound.catalog import snapshot
from servebound.catalog.hardware import get_hardware
from servebound.catalog.hardware_names import normalize_ref
from servebound.catalog.models import CatalogModel, list_models, profile_id_for
from servebound.catalog.names import split_quant
from servebound.core.decode import DecodeResult, Verdict
from servebound.core.engines import device_family, format_class, get_engine
from servebound.core.hardware import Hardware
from servebound.errors import InputError
from servebound.importers.hf.llama_cpp import LLAMA_CPP_MIXES
from servebound.inputs.resolve import CPU_ONLY_ID

#: safetensors formats mlx-lm loads as released (no conversion to another width).
_MLX_SAFETENSORS = frozenset({"bf16", "fp16"})

#: The engines people run on a device class whose usual engine is known: llama.cpp (and Ollama and LM
#: Studio, which run its files) on GeForce and Radeon cards, llama.cpp or MLX on Apple silicon. Other
#: classes (datacenter parts, systems) keep every engine of the table.
USUAL_ENGINES: dict[tuple[str, str], tuple[str, ...]] = {
    ("consumer GPU", "nvidia"): ("llama.cpp",),
    ("consumer GPU", "amd"): ("llama.cpp",),
    ("unified-memory SoC", "apple"): ("llama.cpp", "mlx"),
}


def engine_for(
    weight_format: str, vendor: str | None, hardware_id: str, engine: str | None = None
) -> str | None:
    """The engine that runs a catalog weight format on this hardware (see the module's rules), or None;
    with ``engine``, that engine where the engine table (``core.engines``: format classes per vendor) says
    it runs the format on this vendor's devices (a hardware file, vendor unknown: where it runs
    llama.cpp's files), else None."""
    if engine is not None:
        return engine if _engine_runs(engine, weight_format, vendor, hardware_id) else None
    vendor = (vendor or "").casefold()
    if weight_format in LLAMA_CPP_MIXES:
        return "llama.cpp"
    if weight_format.startswith("mlx_"):
        return "mlx" if vendor == "apple" else None
    if vendor == "apple":
        return "mlx" if weight_format in _MLX_SAFETENSORS else None
    if vendor in ("nvidia", "amd"):
        if weight_format == "nvfp4":
            family = device_family(hardware_id)
            return "vllm" if family is not None and "fp4" in family.hardware_modes else None
        return "vllm"
    return None


def _engine_runs(engine: str, weight_format: str, vendor: str | None, hardware_id: str) -> bool:
    """Whether the engine table says ``engine`` runs this weight format on this vendor's devices (NVFP4
    releases, as without an engine: only where the device family multiplies FP4)."""
    cls = format_class(weight_format)
    if cls is None:
        return False
    if cls == "fp4":
        family = device_family(hardware_id)
        if family is None or "fp4" not in family.hardware_modes:
            return False
    runs_on = get_engine(engine).formats.get(cls, ())
    if vendor is None:  # a hardware file: llama.cpp's files are assumed to run on it
        return cls == "gguf" and bool(runs_on)
    return vendor.casefold() in runs_on


def hardware_vendor(hardware_id: str) -> str | None:
    """The catalog row's vendor (a system's is its member's), or None for a hardware file or this
    machine's CPU."""
    if hardware_id == CPU_ONLY_ID:
        return None
    try:
        return get_hardware(hardware_id).vendor
    except InputError:
        return None


def usual_engines(hardware_id: str) -> tuple[str, ...]:
    """The engines people run on this hardware's class (``USUAL_ENGINES``), or () where none is the
    usual one (a datacenter part, a system, a hardware file)."""
    if hardware_id == CPU_ONLY_ID:  # this machine's CPU: llama.cpp's files run there
        return ("llama.cpp",)
    facts = catalog_facts(hardware_id)
    if facts is None:
        return ()
    return USUAL_ENGINES.get((facts[0], facts[1].casefold()), ())


@cache
def catalog_facts(hardware_id: str) -> tuple[str, str] | None:
    """(device class, vendor) of a catalog hardware id, or None (a hardware file, this machine's CPU):
    an id or alias from the snapshot's row, an NxID form from the catalog."""
    entry_id = snapshot.hardware_index().get(normalize_ref(hardware_id))
    if entry_id is not None:
        fields = snapshot.row(snapshot.HARDWARE, entry_id)["fields"]
        return str(fields["device_class"]), str(fields["vendor"])
    try:
        row = get_hardware(hardware_id)
    except InputError:
        return None
    return row.device_class, row.vendor


def assumed_engine(hardware_id: str, weight_format: str | None) -> tuple[str, str] | None:
    """(engine, why) for a question that names none, as ``fit`` and ``rank`` choose: the first engine
    usually run on this hardware's class (``USUAL_ENGINES``) that runs the weight format, else the engine
    that runs the format here (``engine_for``); None where no engine runs it (or no catalog row)."""
    facts = catalog_facts(hardware_id)
    if weight_format is None or facts is None:
        return None
    cls, vendor = facts
    for engine in usual_engines(hardware_id):
        if engine_for(weight_format, vendor, hardware_id, engine) is not None:
            return engine, f"the engine usually run on {cls}s for {weight_format} weights"
    found = engine_for(weight_format, vendor, hardware_id)
    if found is None:
        return None
    return found, f"the engine that runs {weight_format} weights on {cls}s"


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
