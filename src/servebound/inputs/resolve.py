"""Turn what a user typed (a file path or a catalog id) into core records."""

from __future__ import annotations

import os
import re

from servebound.catalog import snapshot
from servebound.catalog.hardware_names import CPU_ONLY_ID as CPU_ONLY_ID
from servebound.catalog.hardware_names import hardware_row, system_hardware
from servebound.catalog.names import profile_id_for
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.errors import InputError
from servebound.importers.hf import HUB_GGUF

_FILE_SUFFIXES = (".toml", ".json", ".gguf", ".safetensors")
#: The longest reference looked up: ids and paths are a few hundred characters at most, and a longer
#: one must fail before any file-system call or fuzzy match costs time (issue 14).
MAX_REF_CHARS = 1024


def check_ref_length(ref: str, field: str) -> None:
    """An id or path longer than MAX_REF_CHARS is an error, before any work is spent on it."""
    if len(ref) > MAX_REF_CHARS:
        raise InputError(
            field, f"{len(ref)} characters is longer than any id or path ({MAX_REF_CHARS} at most)"
        )


def _looks_like_file(ref: str) -> bool:
    return ref.lower().endswith(_FILE_SUFFIXES) or "/" in ref or "\\" in ref or os.path.isfile(ref)


#: How a checkpoint file starts, whatever its name: GGUF's magic; a safetensors file's little-endian
#: header length and the opening of its JSON header.
GGUF_MAGIC = b"GGUF"


def sniff_checkpoint(ref: str) -> str | None:
    """``gguf`` or ``safetensors`` for a file whose first bytes are that format's (an Ollama blob is a
    GGUF named ``sha256-...``), None otherwise."""
    try:
        with open(ref, "rb") as handle:
            head = handle.read(10)
    except OSError:
        return None
    if head[:4] == GGUF_MAGIC:
        return "gguf"
    if len(head) == 10 and head[8:10] == b'{"' and 0 < int.from_bytes(head[:8], "little") < 2**40:
        return "safetensors"
    return None


def _imported_model(ref: str) -> ModelAdapter | None:
    """A checkpoint file given as a model, imported on the fly with exact bytes (the same as
    `servebound import gguf|safetensors`), told apart by name or, for a file named otherwise (an
    Ollama blob), by its first bytes; None for a model file. A Hugging Face config.json names the
    command that converts it, since its weight format is a choice the config does not make."""
    name = os.path.basename(ref).lower()
    if not name.endswith((".gguf", ".safetensors", ".safetensors.index.json", ".toml", ".json")):
        kind = sniff_checkpoint(ref)
        name = f"{name}.{kind}" if kind else name
    if name.endswith(".gguf"):
        from servebound.importers.gguf_file import import_gguf

        return _as_imported(import_gguf(ref).adapter)
    if name.endswith((".safetensors", ".safetensors.index.json")):
        from servebound.importers.safetensors_headers import import_safetensors

        return _as_imported(import_safetensors(ref).adapter)
    if name == "config.json":
        raise InputError(
            "model",
            f"{ref} is a Hugging Face config.json, not a model file; convert it with "
            f"`servebound import hf {ref} --weight-format bf16 -o model.toml` (pick the weight format "
            "the checkpoint uses) and pass model.toml",
        )
    return None


def hub_gguf_ref(ref: str) -> tuple[str, str] | None:
    """(repo, quant) of ``org/name:QUANT`` (llama.cpp's -hf form), None for anything else."""
    match = HUB_GGUF.match(ref.strip())
    return None if match is None else (match["repo"], match["quant"])


def _as_imported(adapter: ModelAdapter) -> ModelAdapter:
    """The on-the-fly import held to `servebound import`'s checks (its model form must load back)."""
    from servebound.inputs.files import check_imported

    check_imported(adapter)
    return adapter


def _missing_file(ref: str, wanted: str) -> str:
    if os.path.exists(ref):
        return f"{ref!r} is not a file (give {wanted})"
    return f"file {ref!r} does not exist (give {wanted})"


#: The hardware reference that means "this machine": its accelerators as their vendors' tools report
#: them, matched to a catalog row by exact name (servebound.measure.device_match).
AUTO = "auto"


def hardware_ref(ref: str) -> str:
    """``ref`` itself, or for ``auto`` the detected catalog id: every hardware reference passes here."""
    if ref.strip().lower() != AUTO:
        return ref
    from servebound.measure.auto import detected_hardware_id  # the device probes: only for auto

    return detected_hardware_id()


def resolve_hardware(ref: str, field: str = "hardware") -> Hardware:
    """A hardware file path, a catalog id, an NxID system of a catalog device, or ``auto`` (this
    machine, detected)."""
    check_ref_length(ref, field)
    ref = hardware_ref(ref)
    if _looks_like_file(ref):
        if not os.path.isfile(ref):
            raise InputError(field, _missing_file(ref, "a hardware file or a catalog id"))
        from servebound.inputs.files import load_hardware_file  # pydantic: only for a user's file

        return load_hardware_file(ref)
    if ref == CPU_ONLY_ID:  # this machine without a GPU: its CPU and RAM, detected
        from servebound.measure.auto import this_machine_cpu

        return this_machine_cpu()
    return _catalog_hardware(ref)


def resolve_model(ref: str, field: str = "model") -> ModelAdapter:
    """A model file path, a GGUF or safetensors checkpoint (imported on the fly; recognised by its first
    bytes whatever its name), a catalog model by any name people type (``catalog.names.profile_id_for``:
    a Hub id, an Ollama tag, a GGUF file name, loose words), or else ``org/name:QUANT`` (the GGUF of
    that quantization in a Hub repository, its header read by range requests)."""
    check_ref_length(ref, field)
    if not os.path.isfile(ref) and (_looks_like_file(ref) or hub_gguf_ref(ref) is not None):
        profile = _catalog_name(ref)
        if profile is not None:
            return _catalog_model(profile)
    if not os.path.isfile(ref) and hub_gguf_ref(ref) is not None:
        from servebound.importers.hf.hub import import_hub_gguf

        repo, quant = hub_gguf_ref(ref)  # type: ignore[misc]
        return _as_imported(import_hub_gguf(repo, quant).adapter)
    if _looks_like_file(ref):
        if not os.path.isfile(ref):
            wanted = "a model file, a .gguf or a catalog model"
            if re.fullmatch(r"[\w.-]+/[\w.-]+", ref.strip()) and not ref.lower().endswith(_FILE_SUFFIXES):
                wanted += ": no catalog model has that Hub id; `servebound search WORDS` finds one"
            raise InputError(field, _missing_file(ref, wanted))
        imported = _imported_model(ref)
        if imported is not None:
            return imported
        from servebound.inputs.files import load_model_file  # pydantic: only for a user's file

        return load_model_file(ref)
    return _catalog_model(ref)


def _catalog_hardware(ref: str) -> Hardware:
    """A catalog row's core record, from the snapshot: an id or alias, a declared system, or an NxID
    system of a catalog device (``hardware_names.hardware_row`` reads the reference, as the catalog
    does; an unknown one is an InputError with the closest ids)."""
    row_id, count = hardware_row(ref, snapshot.hardware_index(), snapshot.system_of)
    device = snapshot.core_hardware(row_id)
    return device if count is None else system_hardware(device, count)


def _catalog_name(ref: str) -> str | None:
    """The catalog profile a path-like name means (a Hub id, a GGUF file name), None when the catalog
    has no such model. A Hub GGUF reference the catalog cannot answer (a quantization it lacks) is
    left to the Hub import."""
    try:
        return profile_id_for(ref, missing_ok=True)
    except InputError:
        if hub_gguf_ref(ref) is not None:
            return None
        raise


def _catalog_model(ref: str) -> ModelAdapter:
    """A catalog profile's adapter from the snapshot: a profile id, or any name ``profile_id_for``
    reads (an unknown one is an InputError with the closest ids)."""
    found = profile_id_for(ref)
    assert found is not None
    return snapshot.adapter(found)
