"""Turn what a user typed (a file path or a catalog id) into core records."""

from __future__ import annotations

from pathlib import Path

from servebound._record_cache import cached
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.errors import InputError

_FILE_SUFFIXES = (".toml", ".json")


def _looks_like_file(ref: str) -> bool:
    return ref.lower().endswith(_FILE_SUFFIXES) or "/" in ref or "\\" in ref or Path(ref).is_file()


def _missing_file(ref: str, wanted: str) -> str:
    if Path(ref).exists():
        return f"{ref!r} is not a file (give {wanted})"
    return f"file {ref!r} does not exist (give {wanted})"


def resolve_hardware(ref: str, field: str = "hardware") -> Hardware:
    """A hardware file path, a catalog id, or an NxID system of a catalog device."""
    if _looks_like_file(ref):
        if not Path(ref).is_file():
            raise InputError(field, _missing_file(ref, "a hardware file or a catalog id"))
        from servebound.files import load_hardware_file  # pydantic: only for a user's file

        return load_hardware_file(ref)
    return cached("hardware", ref, lambda: _catalog_hardware(ref))


def resolve_model(ref: str, field: str = "model") -> ModelAdapter:
    """A model file path or a catalog model id."""
    if _looks_like_file(ref):
        if not Path(ref).is_file():
            raise InputError(field, _missing_file(ref, "a model file or a catalog id"))
        from servebound.files import load_model_file  # pydantic: only for a user's file

        return load_model_file(ref)
    return cached("model", ref, lambda: _catalog_model(ref))


def _catalog_hardware(ref: str) -> Hardware:
    from servebound.catalog.hardware import get_hardware

    return get_hardware(ref).hardware


def _catalog_model(ref: str) -> ModelAdapter:
    from servebound.catalog.models import get_model

    return get_model(ref).adapter
