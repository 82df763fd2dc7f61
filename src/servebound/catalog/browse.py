"""The catalog's questions in the Python API: ``servebound.models()``, ``servebound.hardware()`` and
``servebound.search()`` (the rows people browse and the names they type), apart from the ceilings'
questions in :mod:`servebound.api` so that a decode does not load the catalog's listing and search."""

from __future__ import annotations

from servebound.catalog.hardware import CatalogHardware, list_hardware
from servebound.catalog.models import CATALOG_FORMATS, CatalogModel, list_models
from servebound.catalog.search import MAX_LIMIT, SearchHit
from servebound.catalog.search import search as find
from servebound.errors import InputError


def models(
    words: str | None = None,
    *,
    family: str | None = None,
    format: str | None = None,
    min_params: float | None = None,
    max_params: float | None = None,
    moe: bool | None = None,
    all_formats: bool = False,
) -> list[CatalogModel]:
    """Catalog model profiles matching every filter given, in catalog order: ``words`` as
    ``search()`` reads them, ``family`` (``qwen3``, ``llama``, ``Qwen3 MoE``), ``format`` (a weight format:
    ``q4_k_m``, ``fp8``, ``mlx_4bit``), sizes in parameters, ``moe``. Native formats only unless
    ``all_formats`` or ``format`` is given. Each profile passes to ``decode`` and the others as is."""
    if format is not None and format not in CATALOG_FORMATS:
        raise InputError(
            "format", f"{format!r} is not a catalog format; use one of {', '.join(CATALOG_FORMATS)}"
        )
    native_only = not all_formats and format is None and words is None
    rows = list_models(
        family=family, min_params=min_params, max_params=max_params, native_only=native_only, moe=moe
    )
    if format is not None:
        rows = [m for m in rows if m.weight_format == format]
    if words is not None:
        found = {hit.id for hit in find(words, kind="model", limit=MAX_LIMIT)}
        rows = [m for m in rows if m.id in found]
    return rows


def hardware(
    words: str | None = None,
    *,
    vendor: str | None = None,
    cls: str | None = None,
    min_memory_gb: float | None = None,
    max_memory_gb: float | None = None,
    max_price_usd: float | None = None,
    systems: bool = True,
) -> list[CatalogHardware]:
    """Catalog hardware rows matching every filter given, in catalog order: ``words`` as ``search()``
    reads them, ``vendor`` (NVIDIA, Apple ...), ``cls`` (``consumer GPU``, ``unified-memory SoC`` ...),
    memory in GB, price in USD, ``systems`` (multi-device rows). Each row passes to ``decode`` as is."""
    rows = list_hardware(
        vendor=vendor,
        cls=cls,
        min_memory_gb=min_memory_gb,
        max_price_usd=max_price_usd,
        include_systems=systems,
    )
    if max_memory_gb is not None:
        rows = [h for h in rows if h.memory_gb <= max_memory_gb]
    if words is not None:
        found = {hit.id for hit in find(words, kind="hardware", limit=MAX_LIMIT)}
        rows = [h for h in rows if h.id in found]
    return rows


def search(words: str, *, kind: str | None = None, limit: int = 20) -> list[SearchHit]:
    """Models and hardware the words name, best first, as `servebound search` and /api/search answer:
    ``search("qwen3 30b q4")``, ``search("dgx spark", kind="hardware")``."""
    return find(words, kind=kind, limit=limit)
