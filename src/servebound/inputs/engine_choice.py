"""Which engine runs a weight format on a device, and which engines a device's class usually runs.

* llama.cpp's file types (q4_k_m, q8_0, f16, mxfp4_moe ...): llama.cpp, on every vendor (Ollama and
  LM Studio run the same files);
* MLX formats (mlx_4bit ...): mlx, on Apple silicon only;
* safetensors releases (bf16, fp8, nvfp4 ...): vllm on NVIDIA and AMD GPUs (nvfp4 only where the family
  multiplies FP4, per ``core.engines``; MXFP4 experts run on older GPUs through vLLM's Marlin kernels),
  mlx for bf16/fp16 on Apple silicon; none on other hardware.

With an engine named, the formats that engine runs on the device's vendor, per the engine table
(``catalog/data/engines.toml``: Ollama and LM Studio run llama.cpp's files, LM Studio also MLX on Apple;
SGLang and TensorRT-LLM the safetensors releases on their vendors). A catalog row's class and vendor are
read from the snapshot, so a decode that assumes an engine for its band loads no catalog module.
"""

from __future__ import annotations

from functools import cache

from servebound.catalog import snapshot
from servebound.catalog.engines import device_family, format_class, get_engine
from servebound.catalog.hardware_names import (
    CPU_ONLY_ID,
    MAX_SYSTEM_COUNT,
    SYSTEM_CLASSES,
    normalize_ref,
    nx_form,
)
from servebound.core.formats import format_words
from servebound.importers.hf.llama_cpp import LLAMA_CPP_MIXES

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
    facts = catalog_facts(hardware_id)
    return None if facts is None else facts[1]


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
    """(device class, vendor) of a catalog hardware id, or None (a hardware file, this machine's CPU, an
    id the catalog lacks), from the snapshot's rows: an id or alias as its row; an ``Nx-<device>`` form
    as the catalog's row of that system where it lists one, else a multi-device system of the device's
    vendor (``catalog.hardware.system_record``)."""
    index = snapshot.hardware_index()
    key = normalize_ref(hardware_id)
    entry_id = index.get(key)
    nx = nx_form(key) if entry_id is None else None
    if nx is not None:
        count, member = nx[0], index.get(nx[1])
        if member is None or snapshot.hardware_is_system(member) or not 1 <= count <= MAX_SYSTEM_COUNT:
            return None
        listed = f"{count}x-{member}"
        if snapshot.hardware_is_system(listed) is None:
            return SYSTEM_CLASSES[0], _row_facts(member)[1]
        entry_id = listed
    return None if entry_id is None else _row_facts(entry_id)


def _row_facts(entry_id: str) -> tuple[str, str]:
    fields = snapshot.row(snapshot.HARDWARE, entry_id)["fields"]
    return str(fields["device_class"]), str(fields["vendor"])


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
            return engine, f"the engine usually run on {cls}s for weights in {format_words(weight_format)}"
    found = engine_for(weight_format, vendor, hardware_id)
    if found is None:
        return None
    return found, f"the engine that runs weights in {format_words(weight_format)} on {cls}s"
