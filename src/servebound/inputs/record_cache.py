"""A start-up cache of catalog records for the ``servebound`` command (never for user files).

Building one catalog record validates the whole catalog file (pydantic) and, for a model, runs the
config importer: most of a command's start-up. The command line keeps the finished core records
(``Hardware``, ``ModelAdapter``) in one JSON file under ``$SERVEBOUND_CACHE_DIR`` (default
``$XDG_CACHE_HOME/servebound`` or ``~/.cache/servebound``; ``off`` disables it), keyed by the size and
modification time of every file of the installed package, code and data alike: any change to either
gives a new key, so a cached record is always the one the current catalog and code would build.

A record is cached only when it survives the round trip to JSON and back unchanged. Only the console
script and ``python -m servebound`` turn the cache on (``enable``); the Python API, the site and the
tests always build records from the validated catalog. The file is read with the bounded reader.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import zlib
from collections.abc import Callable, Mapping
from functools import cache
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from servebound.errors import InputError
from servebound.inputs import bounded

if TYPE_CHECKING:  # pathlib is imported where a folder is written, not on a cold command's reads
    from pathlib import Path

T = TypeVar("T")


@cache
def records() -> dict[str, type]:
    """The record types a cache file may hold, by name (nothing else is ever constructed from it).

    Imported on first use, so turning the cache on (``enable``) costs a command like ``--help`` no
    import of the core (and numpy)."""
    from servebound.core.hardware import Hardware
    from servebound.core.kv import KVShape
    from servebound.core.model import Experts, LayerShape, ModelAdapter, PrefillShape, Weights

    kinds = (Hardware, ModelAdapter, Weights, Experts, KVShape, PrefillShape, LayerShape)
    return {cls.__name__: cls for cls in kinds}


MAX_CACHE_BYTES = 8_000_000

_state = {"enabled": False}


def enable() -> None:
    """Turn the cache on for this process (the command line does, once, before it runs a command)."""
    _state["enabled"] = True


def _folder_text() -> str | None:
    chosen = os.environ.get("SERVEBOUND_CACHE_DIR")
    if chosen == "off":
        return None
    if chosen:
        return chosen
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "servebound")


def cache_folder() -> Path | None:
    """Where the cache lives, or None when ``SERVEBOUND_CACHE_DIR=off``."""
    from pathlib import Path

    folder = _folder_text()
    return None if folder is None else Path(folder)


def kept_path(stem: str) -> str | None:
    """``<stem>-<package key>.json`` in the cache's folder where this process uses the cache, else None
    (a plain path: a cold command reads its kept files without importing pathlib)."""
    folder = _folder_text() if _state["enabled"] else None
    return None if folder is None else os.path.join(folder, f"{stem}-{package_key()}.json")


@cache
def package_key() -> str:
    """A digest of the size and mtime of every file of the package, and of the Python version (once per
    process: a command looks up its hardware and its model, and the package does not change between).

    The digest is two checksums of that listing (CRC-32 and Adler-32, with its length): it tells one
    state of the package from the next, which is all a cache key needs, and zlib costs a cold command
    nothing to import where hashlib's OpenSSL binding costs it milliseconds."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the whole package, not only inputs/
    lines = [sys.version]
    for folder, subfolders, files in os.walk(root, followlinks=True):  # docs/ is a link in a checkout
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(files):
            stat = os.stat(os.path.join(folder, name))
            lines.append(f"{folder[len(root) :]}/{name}:{stat.st_size}:{stat.st_mtime_ns}")
    listing = "\n".join(lines).encode()
    return f"{zlib.crc32(listing):08x}{zlib.adler32(listing):08x}{len(listing) % 0x10000:04x}"


def encode(value: Any, kinds: Mapping[str, type] | None = None) -> Any:
    """A core record as plain JSON values; TypeError for anything that is not a known record (one of
    ``kinds``, by default ``records()``). Tuples, lists, mappings with text keys (a read-only mapping
    stays read-only) and JSON scalars are kept as such."""
    kinds = records() if kinds is None else kinds
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if kinds.get(name) is not type(value):
            raise TypeError(f"{name} is not a cacheable record")
        fields = {f.name: encode(getattr(value, f.name), kinds) for f in dataclasses.fields(value) if f.init}
        return {"record": name, "fields": fields}
    if isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            raise TypeError("mapping keys must be strings")
        tag = "frozen" if isinstance(value, MappingProxyType) else "mapping"
        return {tag: {key: encode(item, kinds) for key, item in value.items()}}
    if isinstance(value, tuple | list):
        return {type(value).__name__: [encode(item, kinds) for item in value]}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"{type(value).__name__} is not cacheable")


def decode(value: Any, kinds: Mapping[str, type] | None = None) -> Any:
    """The inverse of ``encode`` (with the same ``kinds``)."""
    kinds = records() if kinds is None else kinds
    if isinstance(value, dict):
        if "record" in value:
            cls = kinds[value["record"]]
            return cls(**{key: decode(item, kinds) for key, item in value["fields"].items()})
        if "mapping" in value:
            return {key: decode(item, kinds) for key, item in value["mapping"].items()}
        if "frozen" in value:
            return MappingProxyType({key: decode(item, kinds) for key, item in value["frozen"].items()})
        if "tuple" in value:
            return tuple(decode(item, kinds) for item in value["tuple"])
        if "list" in value:
            return [decode(item, kinds) for item in value["list"]]
        raise TypeError("unknown cache entry")
    return value


def _same(a: Any, b: Any) -> bool:
    from servebound.core.model import ModelAdapter

    return bool(a == b) and (not isinstance(a, ModelAdapter) or dict(a.sources) == dict(b.sources))


def enabled_folder() -> Path | None:
    """The cache's folder when this process uses the cache (``enable`` and not ``off``), else None."""
    return cache_folder() if _state["enabled"] else None


def write_file(folder: str | os.PathLike[str], stem: str, text: str) -> None:
    """``<stem>-<package key>.json`` in ``folder``, written whole (a temporary file, then renamed), and
    the same stem's files of other package keys removed. OSError when the folder cannot be written."""
    from pathlib import Path

    where = Path(folder)
    key = package_key()
    path = where / f"{stem}-{key}.json"
    where.mkdir(parents=True, exist_ok=True)
    temporary = where / f".{stem}-{key}-{os.getpid()}.tmp"
    temporary.write_text(text, encoding="utf-8")
    os.replace(temporary, path)
    for old in where.glob(f"{stem}-*.json"):
        if old != path:
            old.unlink(missing_ok=True)


#: The records file as last read or written by this process, by path, with the (mtime, size) it had
#: then: a process that looks up hundreds of records (the site's validation table checks every
#: reported run) parses the file once, not once per lookup, and still re-reads it when it changes.
_tables: dict[str, tuple[tuple[int, int] | None, dict[str, Any]]] = {}


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns, stat.st_size


def _table(path: str) -> dict[str, Any]:
    """The records file's table ({} when there is none, or it is unreadable: it is then rewritten)."""
    stamp = _stamp(path)
    kept = _tables.get(path)
    if kept is not None and kept[0] == stamp:
        return kept[1]
    table: dict[str, Any] = {}
    if stamp is not None:
        try:
            loaded = bounded.read_json(path, "record cache", max_bytes=MAX_CACHE_BYTES)
            table = loaded if isinstance(loaded, dict) else {}
        except (InputError, ValueError):
            table = {}
    _tables[path] = (stamp, table)
    return table


def cached(kind: str, ref: str, build: Callable[[], T]) -> T:
    """``build()``, or the record cached for (kind, ref) under the current package key."""
    path = kept_path("records")
    if path is None:
        return build()
    table = _table(path)
    try:
        hit = table.get(kind, {}).get(ref)
        if hit is not None:
            record: T = decode(hit)
            return record
    except (TypeError, KeyError, ValueError, AttributeError):
        table = {}
    value = build()
    try:
        entry = encode(value)
        if not _same(decode(json.loads(json.dumps(entry))), value):
            return value
        table = {**table, kind: {**table.get(kind, {}), ref: entry}}
        write_file(os.path.dirname(path), "records", json.dumps(table))
        _tables[path] = (_stamp(path), table)
    except (OSError, TypeError, ValueError):
        pass
    return value
