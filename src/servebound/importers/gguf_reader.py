"""The GGUF header reader: every count and length checked, the data section never touched.

A GGUF file is: magic ``GGUF``, version (2 or 3), tensor count and metadata count (u64 each), the
metadata key/value pairs, one info record per tensor (name, dims, ggml type, offset into the data
section), padding to ``general.alignment`` and the tensor data. This module walks that header over a
memory map with every count and length checked against the bytes that remain and against fixed caps,
so a hostile file fails fast with an InputError naming the file. It skips values it does not need
(tokenizer arrays are stepped over, not decoded) and never touches the data section. A split GGUF
(``name-00001-of-00003.gguf``) is read file by file and merged. ``gguf_file`` turns a header into an
adapter.

Bytes per tensor come from the gguf package's block table ``GGML_QUANT_SIZES``: a type stores
``block`` elements in ``type_size`` bytes, so a tensor of n elements holds n / block * type_size bytes
(Q4_0 is (32, 2 + 16): an fp16 scale and 32 nibbles), whatever the quantization mix of the file.
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from servebound.errors import InputError
from servebound.inputs import bounded

GGUF_MAGIC = b"GGUF"
SUPPORTED_VERSIONS = (2, 3)
DEFAULT_ALIGNMENT = 32
#: ggml's GGML_MAX_DIMS.
MAX_DIMS = 4
MAX_TENSORS = 1_000_000
MAX_METADATA = 1_000_000
MAX_KEY_BYTES = 65_536
MAX_STRING_BYTES = 64 * 1024 * 1024
#: Array entries stepped over (vocabularies and merges run to a few hundred thousand; stepping over
#: the cap's worth of strings takes a few seconds, the worst a hostile file can cost).
MAX_ARRAY_ITEMS = 1 << 22
#: Arrays up to this length (outside tokenizer.*) are decoded; longer ones are only stepped over.
KEEP_ARRAY_ITEMS = 1 << 16
MAX_ELEMENTS = 2**63 - 1

# GGUF metadata value types: (struct code, bytes) for scalars; 8 is a string, 9 an array.
_SCALARS: dict[int, tuple[str, int]] = {
    0: ("B", 1),
    1: ("b", 1),
    2: ("H", 2),
    3: ("h", 2),
    4: ("I", 4),
    5: ("i", 4),
    6: ("f", 4),
    7: ("?", 1),
    10: ("Q", 8),
    11: ("q", 8),
    12: ("d", 8),
}
_STRING, _ARRAY = 8, 9


@dataclass(frozen=True)
class GGUFTensor:
    """One tensor info record: ``shape`` in ggml order (ne[0] is the contiguous row length)."""

    name: str
    ggml_type: str
    shape: tuple[int, ...]
    elements: int
    size_bytes: int
    offset: int


@dataclass(frozen=True)
class GGUFHeader:
    """A validated GGUF header: metadata (values it kept), tensors and where the data section starts."""

    path: str
    version: int
    metadata: Mapping[str, Any]
    tensors: tuple[GGUFTensor, ...]
    alignment: int
    data_offset: int
    file_bytes: int

    @cached_property
    def tensor_bytes(self) -> int:
        """Every tensor's bytes (summed once: the header is frozen)."""
        return sum(t.size_bytes for t in self.tensors)

    @cached_property
    def bytes_by_type(self) -> Counter[str]:
        """Tensor bytes per ggml type (counted once; callers read it, never change it)."""
        by_type: Counter[str] = Counter()
        for tensor in self.tensors:
            by_type[tensor.ggml_type] += tensor.size_bytes
        return by_type

    @property
    def data_section_bytes(self) -> int:
        """File size after the aligned header: tensor bytes plus alignment padding."""
        return self.file_bytes - self.data_offset


class _Cursor:
    """Bounds-checked little- or big-endian reads over a byte buffer."""

    def __init__(self, buffer: Any, size: int, order: str, field: str) -> None:
        self.buffer, self.size, self.order, self.field, self.pos = buffer, size, order, field, 0

    def remaining(self) -> int:
        return self.size - self.pos

    def need(self, count: int, what: str) -> None:
        if count > self.remaining():
            raise InputError(
                self.field,
                f"truncated: {what} needs {count} bytes at offset {self.pos}, {self.remaining()} remain",
            )

    def scalar(self, code: str, size: int, what: str) -> Any:
        self.need(size, what)
        (value,) = struct.unpack_from(self.order + code, self.buffer, self.pos)
        self.pos += size
        return value

    def u32(self, what: str) -> int:
        return int(self.scalar("I", 4, what))

    def u64(self, what: str) -> int:
        return int(self.scalar("Q", 8, what))

    def string(self, what: str, cap: int, keep: bool = True) -> str | None:
        length = self.u64(f"{what} length")
        if length > cap:
            raise InputError(self.field, f"{what} claims {length} bytes, over the {cap} byte cap")
        self.need(length, what)
        start = self.pos
        self.pos += length
        if not keep:
            return None
        try:
            return bytes(self.buffer[start : self.pos]).decode("utf-8")
        except UnicodeDecodeError:
            raise InputError(self.field, f"{what} at offset {start} is not UTF-8") from None


def _value(cursor: _Cursor, value_type: int, key: str, keep: bool, depth: int = 0) -> Any:
    if value_type in _SCALARS:
        code, size = _SCALARS[value_type]
        value = cursor.scalar(code, size, f"value of {key!r}")
        if keep and isinstance(value, float):
            bounded.check_finite(value, f"{cursor.field}: metadata {key!r}")
        return value
    if value_type == _STRING:
        return cursor.string(f"value of {key!r}", MAX_STRING_BYTES, keep)
    if value_type != _ARRAY:
        raise InputError(cursor.field, f"metadata {key!r} has unknown value type {value_type}")
    if depth > 2:
        raise InputError(cursor.field, f"metadata {key!r} nests arrays too deeply")
    item_type = cursor.u32(f"array type of {key!r}")
    count = cursor.u64(f"array length of {key!r}")
    smallest = _SCALARS[item_type][1] if item_type in _SCALARS else 8 if item_type == _STRING else 12
    if count > MAX_ARRAY_ITEMS or count * smallest > cursor.remaining():
        raise InputError(
            cursor.field, f"metadata {key!r} claims {count} array items, more than the file or cap allows"
        )
    keep = keep and count <= KEEP_ARRAY_ITEMS
    if item_type in _SCALARS and not keep:
        cursor.pos += count * smallest
        return None
    if item_type in _SCALARS:
        code, size = _SCALARS[item_type]
        values = struct.unpack_from(f"{cursor.order}{count}{code}", cursor.buffer, cursor.pos)
        cursor.pos += count * size
        for item in values:
            if isinstance(item, float):
                bounded.check_finite(item, f"{cursor.field}: metadata {key!r}")
        return list(values)
    items = [_value(cursor, item_type, key, keep, depth + 1) for _ in range(count)]
    return items if keep else None


def _checked_elements(dims: list[int], field: str, name: str) -> int:
    elements = 1
    for dim in dims:
        elements *= dim
        if elements > MAX_ELEMENTS:
            raise InputError(field, f"tensor {name!r} shape {dims} has more than 2^63 elements")
    return elements


def _tensor_info(cursor: _Cursor) -> tuple[str, list[int], int, int]:
    name = cursor.string("tensor name", MAX_KEY_BYTES)
    assert name is not None
    n_dims = cursor.u32(f"dimension count of {name!r}")
    if n_dims > MAX_DIMS:
        raise InputError(cursor.field, f"tensor {name!r} has {n_dims} dimensions; ggml allows {MAX_DIMS}")
    dims = [cursor.u64(f"dimension of {name!r}") for _ in range(n_dims)]
    type_id = cursor.u32(f"type of {name!r}")
    offset = cursor.u64(f"offset of {name!r}")
    return name, dims, type_id, offset


def read_gguf_header(path: str | os.PathLike[str]) -> GGUFHeader:
    """Read and validate a GGUF header without touching tensor data.

    Raises InputError naming the file for a wrong magic or version, a truncated header, counts or
    lengths beyond what the file holds or the caps allow, duplicate keys or tensor names, unknown value
    or ggml types, shapes that overflow or do not fill whole blocks, misaligned, overlapping or
    out-of-file tensor data.
    """
    file = Path(path)
    field = f"GGUF file {file.name}"
    try:
        with bounded.open_regular(file, field) as handle:
            size = os.fstat(handle.fileno()).st_size
            if size < 24:
                raise InputError(field, f"truncated: {size} bytes, shorter than the 24-byte GGUF preamble")
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buffer:
                return _parse(buffer, size, str(file), field)
    except OSError as error:
        raise InputError(field, f"cannot read: {error.strerror}") from None


def _parse(buffer: Any, size: int, path: str, field: str) -> GGUFHeader:
    if bytes(buffer[:4]) != GGUF_MAGIC:
        raise InputError(field, f"wrong magic {bytes(buffer[:4])!r}; a GGUF file starts with b'GGUF'")
    (version,) = struct.unpack_from("<I", buffer, 4)
    order = "<"
    if version & 0xFFFF == 0:  # written on a big-endian machine
        order = ">"
        (version,) = struct.unpack_from(">I", buffer, 4)
    if version not in SUPPORTED_VERSIONS:
        raise InputError(field, f"GGUF version {version} is not supported (only {SUPPORTED_VERSIONS})")
    cursor = _Cursor(buffer, size, order, field)
    cursor.pos = 8
    tensor_count = cursor.u64("tensor count")
    kv_count = cursor.u64("metadata count")
    if tensor_count > MAX_TENSORS or tensor_count * 25 > cursor.remaining():
        raise InputError(field, f"tensor count {tensor_count} is more than the file or the cap allows")
    if kv_count > MAX_METADATA or kv_count * 13 > cursor.remaining():
        raise InputError(field, f"metadata count {kv_count} is more than the file or the cap allows")

    metadata: dict[str, Any] = {}
    for _ in range(kv_count):
        key = cursor.string("metadata key", MAX_KEY_BYTES)
        assert key is not None
        if key in metadata:
            raise InputError(field, f"duplicate metadata key {key!r}")
        value_type = cursor.u32(f"value type of {key!r}")
        metadata[key] = _value(cursor, value_type, key, keep=not key.startswith("tokenizer.ggml."))

    infos = [_tensor_info(cursor) for _ in range(tensor_count)]
    alignment = metadata.get("general.alignment", DEFAULT_ALIGNMENT)
    if not isinstance(alignment, int) or alignment <= 0 or alignment & (alignment - 1):
        raise InputError(field, f"general.alignment {alignment!r} is not a positive power of two")
    data_offset = cursor.pos + (-cursor.pos) % alignment
    if data_offset > size:
        raise InputError(field, "truncated: the file ends before its data section")

    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType  # the block table, read here only

    tensors: list[GGUFTensor] = []
    seen: set[str] = set()
    for name, dims, type_id, offset in infos:
        if name in seen:
            raise InputError(field, f"duplicate tensor name {name!r}")
        seen.add(name)
        try:
            ggml_type = GGMLQuantizationType(type_id)
            block, type_size = GGML_QUANT_SIZES[ggml_type]
        except (ValueError, KeyError):
            raise InputError(field, f"tensor {name!r} has unknown ggml type {type_id}") from None
        elements = _checked_elements(dims, field, name)
        if dims and dims[0] % block:
            raise InputError(
                field,
                f"tensor {name!r}: row length {dims[0]} is not a whole number of {block}-element blocks",
            )
        size_bytes = elements // block * type_size
        if offset % alignment:
            raise InputError(field, f"tensor {name!r}: data offset {offset} is not {alignment}-byte aligned")
        if data_offset + offset + size_bytes > size:
            raise InputError(
                field,
                f"truncated: tensor {name!r} ends at byte {data_offset + offset + size_bytes}, "
                f"past the file's {size}",
            )
        tensors.append(GGUFTensor(name, ggml_type.name, tuple(dims), elements, size_bytes, offset))
    previous: GGUFTensor | None = None
    for tensor in sorted(tensors, key=lambda t: t.offset):
        if (
            previous is not None
            and tensor.size_bytes
            and tensor.offset < previous.offset + previous.size_bytes
        ):
            raise InputError(field, f"tensors {previous.name!r} and {tensor.name!r} overlap")
        if tensor.size_bytes:
            previous = tensor
    version_int = int(version)
    return GGUFHeader(path, version_int, metadata, tuple(tensors), alignment, data_offset, size)


_SPLIT_NAME = re.compile(r"^(?P<stem>.*)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")


def read_gguf_split(path: str | os.PathLike[str]) -> tuple[GGUFHeader, ...]:
    """The headers of every file of a split GGUF (``name-00001-of-00003.gguf``), given any one of
    them; a single-file GGUF gives one header. Metadata lives in the first file."""
    first = read_gguf_header(path)
    count = first.metadata.get("split.count")
    if not isinstance(count, int) or count <= 1:
        return (first,)
    file = Path(path)
    match = _SPLIT_NAME.match(file.name)
    if match is None or int(match["count"]) != count:
        raise InputError(
            f"GGUF file {file.name}",
            f"split.count is {count} but the name is not NAME-0000i-of-{count:05d}.gguf",
        )
    names = [file.with_name(f"{match['stem']}-{i:05d}-of-{count:05d}.gguf") for i in range(1, count + 1)]
    missing = [n.name for n in names if not n.is_file()]
    if missing:
        raise InputError(f"GGUF file {file.name}", f"split files missing beside it: {', '.join(missing)}")
    given = int(match["no"]) - 1
    headers = tuple(first if i == given else read_gguf_header(n) for i, n in enumerate(names))
    expected = headers[0].metadata.get("split.tensors.count")
    found = sum(len(h.tensors) for h in headers)
    if isinstance(expected, int) and expected != found:
        raise InputError(
            f"GGUF file {file.name}", f"split.tensors.count is {expected}, the files hold {found}"
        )
    return headers


def merged_header(headers: tuple[GGUFHeader, ...], field: str) -> GGUFHeader:
    """One header over all split files: the first file's metadata, every file's tensors."""
    if len(headers) == 1:
        return headers[0]
    tensors = tuple(t for h in headers for t in h.tensors)
    names = Counter(t.name for t in tensors)
    doubled = [name for name, n in names.items() if n > 1]
    if doubled:
        raise InputError(field, f"tensor {doubled[0]!r} is in more than one split file")
    return replace(headers[0], tensors=tensors)
