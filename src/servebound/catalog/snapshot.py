"""The catalog snapshot: the finished hardware rows and model profiles, shipped as package data.

Building a catalog record validates the catalog file (pydantic) and, for a model, runs the config
importer over its config.json: seconds for the whole catalog. The snapshot holds the finished records
instead, built at development time by ``scripts/build_snapshot.py`` (``catalog.snapshot_build``) from
the same files; ``tests/test_snapshot.py`` checks it equals a rebuild, so a catalog edit without a
rebuild fails there. Nothing is written at run time, and this module is the one place where the
records a process has read from it are kept.

The files, under ``catalog/data/snapshot/``, are JSON Lines: the first line a header whose ``rows``
give each record's id, offset and length, then one line per record, ``["<id>", <record>]``. A record is
read (a seek and one line) and parsed the first time it is asked for: a decode reads the two headers
and two lines; a ranking reads the whole profile file once (``load``).

- ``hardware.jsonl``: the index of ids and aliases, then every device and declared system;
- ``profiles.jsonl``: every profile's place (model id, weight format, native), then each adapter;
- ``audits.jsonl``: the rest of each profile's import (derivation steps, counts, facts);
- ``engines.json``: the device families and serving engines of ``engines.toml``, as plain tables.

A record is written as ``{"record": <type name>, "fields": {...}}``; a mapping as a list of pairs (so
its order survives sorted keys), tagged ``mapping`` or ``frozen`` (read-only); a tuple or list under
its type's name. Only the record types a caller names (``kinds``) are ever constructed.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Mapping
from functools import cache
from types import MappingProxyType
from typing import Any, TypeVar

from servebound.core.engines import Dequantize, Family
from servebound.core.hardware import Hardware
from servebound.core.kv import KVShape
from servebound.core.model import Experts, LayerShape, ModelAdapter, PrefillShape, Weights
from servebound.core.system import Interconnect
from servebound.inputs import package_data

T = TypeVar("T")

#: Where the files live, below the ``servebound.catalog`` package.
FOLDER = ("data", "snapshot")
HARDWARE, PROFILES, AUDITS, ENGINES = FILES = (
    "hardware.jsonl",
    "profiles.jsonl",
    "audits.jsonl",
    "engines.json",
)

#: The core records a decode takes from the snapshot: a row's ``Hardware`` and a profile's adapter.
CORE_KINDS: dict[str, type] = {
    cls.__name__: cls
    for cls in (
        Hardware,
        Family,
        Dequantize,
        ModelAdapter,
        Weights,
        Experts,
        KVShape,
        PrefillShape,
        LayerShape,
    )
}


def encode(value: Any, kinds: Mapping[str, type]) -> Any:
    """A record as plain JSON values; TypeError for a dataclass not in ``kinds`` or another object."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if kinds.get(name) is not type(value):
            raise TypeError(f"{name} is not a snapshot record")
        fields = {f.name: encode(getattr(value, f.name), kinds) for f in dataclasses.fields(value) if f.init}
        return {"record": name, "fields": fields}
    if isinstance(value, Mapping):
        if not all(isinstance(key, str) for key in value):
            raise TypeError("mapping keys must be strings")
        tag = "frozen" if isinstance(value, MappingProxyType) else "mapping"
        return {tag: [[key, encode(item, kinds)] for key, item in value.items()]}
    if isinstance(value, tuple | list):
        return {type(value).__name__: [encode(item, kinds) for item in value]}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"{type(value).__name__} is not a snapshot value")


def decode(value: Any, kinds: Mapping[str, type]) -> Any:
    """The inverse of ``encode`` (with the same ``kinds``); KeyError for a record type not in them."""
    if isinstance(value, dict):
        if "record" in value:
            cls = kinds[value["record"]]
            return cls(**{key: decode(item, kinds) for key, item in value["fields"].items()})
        if "mapping" in value:
            return {key: decode(item, kinds) for key, item in value["mapping"]}
        if "frozen" in value:
            return MappingProxyType({key: decode(item, kinds) for key, item in value["frozen"]})
        if "tuple" in value:
            return tuple(decode(item, kinds) for item in value["tuple"])
        if "list" in value:
            return [decode(item, kinds) for item in value["list"]]
        raise TypeError("unknown snapshot entry")
    return value


def dumps(value: Any) -> str:
    """One line of a snapshot file: sorted keys, no spaces, NaN refused (the same text every build)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=False)


def jsonl(header: dict[str, Any], rows: Iterator[tuple[str, Any]]) -> str:
    """A snapshot file's text: the header line (with ``rows``: each id, offset and length, counted
    from the end of the header line), then ``["<id>", <record>]`` per row."""
    lines = [(key, (dumps([key, value]) + "\n").encode()) for key, value in rows]
    places = []
    start = 0
    for key, line in lines:
        places.append([key, start, len(line)])
        start += len(line)
    head = dumps({**header, "rows": places}) + "\n"
    return head + "".join(line.decode() for _, line in lines)


# Reading ------------------------------------------------------------------------------------------


@cache
def _opened(name: str) -> tuple[dict[str, Any], int]:
    """A snapshot file's header, parsed once, and the offset of its first row."""
    with package_data.open_binary("servebound.catalog", *FOLDER, name) as handle:
        first = handle.readline()
    head: dict[str, Any] = json.loads(first)
    return head, len(first)


def header(name: str) -> dict[str, Any]:
    """A snapshot file's header (its ``rows`` and what the file's builder put beside them)."""
    return _opened(name)[0]


@cache
def _places(name: str) -> dict[str, tuple[int, int]]:
    return {str(key): (int(start), int(length)) for key, start, length in header(name)["rows"]}


def ids(name: str) -> list[str]:
    """The ids of a snapshot file's rows, in file order."""
    return list(_places(name))


#: The files read whole so far (``load``): their rows are then cut from memory, not read again.
_whole: dict[str, bytes] = {}


def load(name: str) -> None:
    """Read a snapshot file whole, once: for a caller about to ask for most of its rows."""
    if name not in _whole:
        _whole[name] = package_data.read_bytes("servebound.catalog", *FOLDER, name)


@cache
def row(name: str, key: str) -> Any:
    """The record of ``key`` in a snapshot file, read and parsed once; KeyError where it has none."""
    start, length = _places(name)[key]
    start += _opened(name)[1]
    data = _whole.get(name)
    if data is not None:
        line = data[start : start + length]
    else:
        with package_data.open_binary("servebound.catalog", *FOLDER, name) as handle:
            handle.seek(start)
            line = handle.read(length)
    return json.loads(line)[1]


class Rows(Mapping[str, T]):
    """A snapshot file's records by id, in file order, each built by ``record(id)`` on first access (a
    decode reads one row; a walk over all of them reads the file once)."""

    def __init__(self, name: str, record: Callable[[str], T]) -> None:
        self._name = name
        self._record = record
        self._ids = _places(name)

    def __getitem__(self, key: str) -> T:
        if key not in self._ids:
            raise KeyError(key)
        return self._record(key)

    def __iter__(self) -> Iterator[str]:
        load(self._name)  # most rows will be asked for: one read, not one per row
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


@cache
def hardware_index() -> Mapping[str, str]:
    """Every hardware id and alias (as ``normalize_ref`` reads them) -> its row's id."""
    return MappingProxyType({str(key): str(value) for key, value in header(HARDWARE)["index"]})


@cache
def core_hardware(entry_id: str) -> Hardware:
    """The core record of the row ``entry_id`` (its catalog fields left encoded)."""
    value: Hardware = decode(row(HARDWARE, entry_id)["fields"]["hardware"], CORE_KINDS)
    return value


def hardware_fields(entry_id: str) -> dict[str, Any] | None:
    """The catalog fields of the row ``entry_id`` (device class, memory type, vendor, its system), left
    encoded; None where there is no such row."""
    if entry_id not in _places(HARDWARE):
        return None
    fields: dict[str, Any] = row(HARDWARE, entry_id)["fields"]
    return fields


def hardware_is_system(entry_id: str) -> bool | None:
    """Whether the row ``entry_id`` declares a system of several devices; None where there is no such row."""
    fields = hardware_fields(entry_id)
    return None if fields is None else fields.get("system") is not None


def system_of(entry_id: str) -> tuple[str, int] | None:
    """(member id, count) of the system row ``entry_id``; None for a device (or no such row)."""
    fields = hardware_fields(entry_id)
    system = None if fields is None else fields.get("system")
    if system is None:
        return None
    return str(system["fields"]["member_id"]), int(system["fields"]["count"])


def system_parts(entry_id: str) -> tuple[Hardware, int, Interconnect | None, dict[str, str]] | None:
    """A system row's member device, count, link (None where it states none) and the link's sources;
    None for a device (or no such row)."""
    fields = hardware_fields(entry_id)
    system = None if fields is None else fields.get("system")
    if system is None:
        return None
    parts = system["fields"]
    member: Hardware = decode(parts["member"], CORE_KINDS)
    link = decode(parts.get("interconnect"), {"Interconnect": Interconnect})
    sources = dict(decode(parts.get("interconnect_sources") or {"mapping": []}, {}))
    return member, int(parts["count"]), link, sources


def profile_fact(profile_id: str, name: str) -> Any:
    """One fact of a profile's import (``vocab_size``, ``model_type``), None where the profile or the fact
    is absent."""
    if profile_id not in _places(AUDITS):
        return None
    return dict(row(AUDITS, profile_id)["facts"]["mapping"]).get(name)


@cache
def places() -> dict[str, tuple[str, str, bool]]:
    """Every profile's place (model id, weight format, native), in catalog order."""
    return {
        str(pid): (str(base), str(fmt), bool(native)) for pid, base, fmt, native in header(PROFILES)["places"]
    }


@cache
def adapter(profile_id: str) -> ModelAdapter:
    """The adapter of the profile ``profile_id``."""
    value: ModelAdapter = decode(row(PROFILES, profile_id), CORE_KINDS)
    return value


@cache
def engines() -> dict[str, Any]:
    """``engines.toml``'s tables, as the snapshot keeps them."""
    loaded: dict[str, Any] = json.loads(
        package_data.read_bytes("servebound.catalog", *FOLDER, "engines.json")
    )
    return loaded
