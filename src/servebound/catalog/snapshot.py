"""The whole catalog prebuilt for the command line: every model profile and every hardware row.

A command that walks the catalog (``rank``, ``models list``, ``hardware list``, the site) would
otherwise validate both catalog files and import every profile's config.json again in each process:
seconds for the 525 profiles. Where the record cache is on (the console script; see
``servebound.inputs.record_cache``), the finished records are kept in two JSON files beside it,
``profiles-<key>.json`` and ``hardware-<key>.json``, keyed by the same package key (every file of the
installed package, code and data, and the Python version), so a snapshot is always what the current
catalog and code build; ``tests/test_cli_startup.py`` checks it equals a rebuild, record for record.

The profile snapshot is written the first time a command needs every profile (a single lookup keeps
using the record cache), the hardware snapshot the first time a command needs the hardware catalog.
Only the record types named in ``profile_kinds`` and ``hardware_kinds`` are ever constructed from a
snapshot; a file that is missing, unreadable or malformed is rebuilt. The Python API and the tests
build from the validated catalog unless they turn the cache on.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from servebound.errors import InputError
from servebound.inputs import bounded, record_cache

if TYPE_CHECKING:
    from servebound.catalog.hardware import CatalogHardware
    from servebound.core.model import ModelAdapter
    from servebound.importers.audit import ImportedModel

#: The snapshot files' sizes are bounded like every file read (the profiles' is about 10 MB).
MAX_SNAPSHOT_BYTES = 64_000_000

#: One profile's place in the catalog: its model id, weight format and whether that format is native.
Place = tuple[str, str, bool]


@cache
def profile_kinds() -> dict[str, type]:
    """The record types a profile snapshot may hold."""
    from servebound.core.steps import Step
    from servebound.importers.audit import ImportedModel

    return {**record_cache.records(), "ImportedModel": ImportedModel, "Step": Step}


@cache
def hardware_kinds() -> dict[str, type]:
    """The record types a hardware snapshot may hold."""
    from servebound.catalog.hardware import CatalogHardware, DevicePrice, SystemMembership
    from servebound.core.system import Interconnect

    extra = (CatalogHardware, DevicePrice, SystemMembership, Interconnect)
    return {**record_cache.records(), **{cls.__name__: cls for cls in extra}}


@dataclass(frozen=True)
class StoredProfiles:
    """The profile snapshot: each profile's place, in catalog order, its encoded adapter and the rest
    of its import as JSON text (each decoded on first use, one profile at a time: a ranking reads the
    adapters alone)."""

    places: Mapping[str, Place]
    adapters: Mapping[str, Any]
    audits: Mapping[str, str]

    def adapter(self, profile_id: str) -> ModelAdapter:
        value: ModelAdapter = record_cache.decode(self.adapters[profile_id], profile_kinds())
        return value

    def imported(self, profile_id: str, adapter: ModelAdapter | None = None) -> ImportedModel:
        """The whole import (``adapter``, where the caller has decoded it already, is used as is)."""
        from servebound.importers.audit import ImportedModel

        kinds = profile_kinds()
        rest = {
            key: record_cache.decode(value, kinds)
            for key, value in json.loads(self.audits[profile_id]).items()
        }
        return ImportedModel(adapter=adapter or self.adapter(profile_id), **rest)


def _path(stem: str) -> Path | None:
    kept = record_cache.kept_path(stem)
    return None if kept is None else Path(kept)


def _no_constants(name: str) -> float:
    raise ValueError(f"{name} in a snapshot")


@cache
def _read(path: Path) -> Any:
    """A snapshot file's content, or None (missing, unreadable, malformed: it is then rebuilt).

    Read bounded, and parsed at the JSON library's own speed: NaN and Infinity are refused, but the
    reader's duplicate-key hook and tree walk (``bounded.parse_json``) are not run, since the file is
    one this module wrote and every value in it is rebuilt into a record that checks its fields."""
    try:
        if not path.is_file():
            return None
        raw = bounded.read_bytes(path, "catalog snapshot", max_bytes=MAX_SNAPSHOT_BYTES)
        return json.loads(raw, parse_constant=_no_constants)
    except (InputError, OSError, ValueError, RecursionError):
        return None


def read_kept(path: Path) -> Any:
    """A file this cache folder keeps (a snapshot, or another module's kept JSON), parsed as
    ``_read`` does, or None; ``forget_reads()`` after writing one."""
    return _read(path)


def forget_reads() -> None:
    """Drop the files read so far (one was just written)."""
    _read.cache_clear()


def _write(stem: str, content: Any) -> None:
    folder = record_cache.enabled_folder()
    if folder is None:
        return
    with contextlib.suppress(OSError, TypeError, ValueError):  # unwritable: the next process builds again
        record_cache.write_file(folder, stem, json.dumps(content))


def stored_profiles() -> StoredProfiles | None:
    """The profile snapshot of this package, or None (the cache off, or not built yet)."""
    path = _path("profiles")  # _profiles_at keeps it by path: a catalog walk asks for it 550 times
    return None if path is None else _profiles_at(path)


@cache
def _profiles_at(path: Path) -> StoredProfiles | None:
    content = _read(path)
    if not isinstance(content, dict):
        return None
    rows = content.get("profiles")
    if not isinstance(rows, list) or not all(isinstance(row, list) and len(row) == 6 for row in rows):
        return None
    places = {str(row[0]): (str(row[1]), str(row[2]), bool(row[3])) for row in rows}
    return StoredProfiles(
        places, {str(row[0]): row[4] for row in rows}, {str(row[0]): str(row[5]) for row in rows}
    )


def store_profiles(rows: Iterable[tuple[str, Place, ImportedModel]]) -> None:
    """Write the profile snapshot (where the cache is on and it is not written yet), in catalog order.
    Each import is kept only when it survives the round trip to JSON unchanged; if one does not, no
    snapshot is written and every process builds from the configs as before."""
    path = _path("profiles")
    if path is None or _read(path) is not None:
        return
    kinds = profile_kinds()
    out = []
    for profile_id, (base, fmt, native), imported in rows:
        try:
            entry = record_cache.encode(imported, kinds)
        except TypeError:
            return
        if not same_encoding(record_cache.decode(json.loads(json.dumps(entry)), kinds), entry, kinds):
            return
        fields = entry["fields"]
        adapter = fields.pop("adapter")
        out.append([profile_id, base, fmt, native, adapter, json.dumps(fields)])
    _write("profiles", {"profiles": out})
    _read.cache_clear()
    _profiles_at.cache_clear()


def same_encoding(value: Any, entry: Any, kinds: Mapping[str, type]) -> bool:
    """Whether ``value`` encodes to exactly ``entry`` (every field, sources and facts included)."""
    return bool(record_cache.encode(value, kinds) == entry)


def hardware_entries(
    build: Callable[[], tuple[tuple[CatalogHardware, ...], Mapping[str, str]]],
) -> tuple[tuple[CatalogHardware, ...], Mapping[str, str]]:
    """The packaged hardware catalog's rows and id index: from the snapshot where there is one, else
    ``build()`` (written as the snapshot where the cache is on)."""
    path = _path("hardware")
    if path is None:
        return build()
    kinds = hardware_kinds()
    content = _read(path)
    if isinstance(content, dict):
        try:
            entries = tuple(record_cache.decode(item, kinds) for item in content["entries"])
            stored = {str(key): str(value) for key, value in content["index"].items()}
            return entries, MappingProxyType(stored)
        except (TypeError, KeyError, ValueError, AttributeError):
            pass
    entries, index = build()
    try:
        encoded = [record_cache.encode(entry, kinds) for entry in entries]
    except TypeError:
        return entries, index
    back = [record_cache.decode(item, kinds) for item in json.loads(json.dumps(encoded))]
    if all(same_encoding(a, b, kinds) for a, b in zip(back, encoded, strict=True)):
        _write("hardware", {"entries": encoded, "index": dict(index)})
        _read.cache_clear()
    return entries, index
