"""Exact weight bytes, KV shape and prefill fields from a GGUF file's header, never its tensor data.

A GGUF file is: magic ``GGUF``, version (2 or 3), tensor count and metadata count (u64 each), the
metadata key/value pairs, one info record per tensor (name, dims, ggml type, offset into the data
section), padding to ``general.alignment`` and the tensor data. This module walks that header over a
memory map with every count and length checked against the bytes that remain and against fixed caps,
so a hostile file fails fast with an InputError naming the file. It skips values it does not need
(tokenizer arrays are stepped over, not decoded) and never touches the data section.

Bytes per tensor come from the gguf package's block table ``GGML_QUANT_SIZES``: a type stores
``block`` elements in ``type_size`` bytes, so a tensor of n elements holds n / block * type_size bytes
(Q4_0 is (32, 2 + 16): an fp16 scale and 32 nibbles), whatever the quantization mix of the file.
"""

from __future__ import annotations

import math
import mmap
import os
import re
import struct
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from gguf.constants import GGML_QUANT_SIZES, MODEL_ARCH_NAMES, GGMLQuantizationType

from servebound import bounded
from servebound.core.formats import KV_FORMATS, kv_bytes_per_element
from servebound.core.kv import KVShape
from servebound.core.model import ModelAdapter, PrefillShape
from servebound.errors import InputError
from servebound.importers.audit import ImportedModel, Step
from servebound.importers.modes import LLAMA_CPP_IF_PUBLISHED, linear_mode
from servebound.importers.tensor_roles import ByteForm, TensorEntry, TensorRole, byte_form, classify_gguf

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
#: Layers a file may claim (the largest published models have a few hundred); per-layer lists are
#: built from block_count, so a corrupted count must not allocate gigabytes.
MAX_BLOCKS = 1 << 16

#: Layers sliding-window per period where the file gives a window but no pattern (llama.cpp's
#: set_swa_pattern: layer i slides when i % period < period - 1).
DEFAULT_SWA_PERIOD = {"gemma2": 2, "gemma3": 6, "gpt-oss": 2, "cohere2": 4}

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

    @property
    def tensor_bytes(self) -> int:
        return sum(t.size_bytes for t in self.tensors)

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
        with file.open("rb") as handle:
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


# Metadata -> adapter --------------------------------------------------------------------------------


class _Meta:
    """Typed look-ups of ``{arch}.*`` keys, with errors that name the key."""

    def __init__(self, header: GGUFHeader, arch: str, field: str) -> None:
        self.values, self.arch, self.field = header.metadata, arch, field

    def get(self, key: str) -> Any:
        return self.values.get(f"{self.arch}.{key}")

    def count(self, key: str, required: bool = False) -> int | None:
        value = self.get(key)
        if value is None:
            if required:
                raise InputError(f"{self.field}: {self.arch}.{key}", "missing from the metadata")
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(
                f"{self.field}: {self.arch}.{key}", f"must be a non-negative integer, got {value!r}"
            )
        return value

    def per_layer(self, key: str, layers: int, default: int | None) -> list[int] | None:
        """An integer or a per-layer array (hybrid models give 0 for layers without attention)."""
        value = self.get(key)
        name = f"{self.field}: {self.arch}.{key}"
        if value is None:
            return None if default is None else [default] * layers
        if isinstance(value, list):
            if len(value) != layers or any(
                isinstance(v, bool) or not isinstance(v, int) or v < 0 for v in value
            ):
                raise InputError(name, f"must hold {layers} non-negative integers, one per layer")
            return list(value)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(name, f"must be a non-negative integer or a per-layer array, got {value!r:.60}")
        return [value] * layers


@dataclass(frozen=True)
class _Attention:
    kv_global_elements: int  # cached elements per token over full-attention layers
    kv_local_elements: int
    window: int
    flops_global: float
    flops_local: float
    recurrent_layers: int
    key_length: int
    value_length: int
    formula: str


def _sliding_layers(meta: _Meta, layers: int) -> tuple[list[bool], int, str]:
    window = meta.count("attention.sliding_window") or 0
    if window == 0:
        return [False] * layers, 0, "no sliding window"
    pattern = meta.get("attention.sliding_window_pattern")
    if isinstance(pattern, list):
        if len(pattern) != layers:
            raise InputError(
                f"{meta.field}: {meta.arch}.attention.sliding_window_pattern", f"must hold {layers} entries"
            )
        return [bool(p) for p in pattern], window, "per-layer sliding_window_pattern"
    period = pattern if isinstance(pattern, int) and not isinstance(pattern, bool) else None
    source = "sliding_window_pattern"
    if period is None:
        period = DEFAULT_SWA_PERIOD.get(meta.arch)
        source = f"llama.cpp's period for {meta.arch}"
    if period is None:
        return [False] * layers, 0, f"sliding_window {window} given without a layer pattern: all layers full"
    slides = [period == 0 or i % period < period - 1 for i in range(layers)]
    return slides, window, f"layer i slides when i % {period} < {period - 1} ({source})"


def _attention(meta: _Meta, layers: int) -> _Attention:
    embedding = meta.count("embedding_length", required=True)
    assert embedding is not None
    heads = meta.per_layer("attention.head_count", layers, None)
    if heads is None:
        raise InputError(f"{meta.field}: {meta.arch}.attention.head_count", "missing from the metadata")
    kv_heads = meta.per_layer("attention.head_count_kv", layers, None) or list(heads)
    first_heads = max(heads) or 1
    key_length = meta.count("attention.key_length") or embedding // first_heads
    value_length = meta.count("attention.value_length") or key_length
    key_swa = meta.count("attention.key_length_swa") or key_length
    value_swa = meta.count("attention.value_length_swa") or value_length
    latent = meta.count("attention.kv_lora_rank")
    key_mla = meta.count("attention.key_length_mla")
    value_mla = meta.count("attention.value_length_mla")
    slides, window, swa_note = _sliding_layers(meta, layers)
    interval = meta.count("full_attention_interval")
    global_elements = local_elements = 0
    flops_global = flops_local = 0.0
    recurrent = 0
    for layer in range(layers):
        attends = kv_heads[layer] > 0 and (not interval or (layer + 1) % interval == 0)
        if not attends:
            recurrent += 1
            continue
        k_len, v_len = (key_swa, value_swa) if slides[layer] else (key_length, value_length)
        if latent and key_mla:
            # MLA as llama.cpp caches it: one latent row (kv_lora_rank + rope dims = key_length) per
            # token serves as both K and V; attention math runs at the decompressed head sizes.
            cached = kv_heads[layer] * k_len
            flops = 2.0 * heads[layer] * (key_mla + (value_mla or key_mla))
        else:
            cached = kv_heads[layer] * (k_len + v_len)
            flops = 2.0 * heads[layer] * (k_len + v_len)
        if slides[layer]:
            local_elements += cached
            flops_local += flops
        else:
            global_elements += cached
            flops_global += flops
    formula = (
        f"sum over {layers - recurrent} attention layers of head_count_kv x (key_length + value_length); "
        f"key_length {key_length}, value_length {value_length}; {swa_note}"
    )
    if latent and key_mla:
        formula = f"MLA latent: sum over layers of key_length {key_length} (kv_lora_rank {latent} + rope)"
    return _Attention(
        global_elements,
        local_elements,
        window,
        flops_global,
        flops_local,
        recurrent,
        key_length,
        value_length,
        formula,
    )


def _recurrent_state_elements(meta: _Meta, recurrent_layers: int) -> tuple[int, str]:
    """llama.cpp's recurrent cache per layer: conv (d_conv - 1) x (d_inner + 2 n_group d_state) plus
    the scan state d_state x d_inner (Mamba, Mamba-2, gated delta nets); RWKV: token shift
    token_shift_count x n_embd plus n_embd x wkv head size."""
    if recurrent_layers == 0:
        return 0, "no recurrent layers"
    conv, inner, state = (
        meta.count("ssm.conv_kernel"),
        meta.count("ssm.inner_size"),
        meta.count("ssm.state_size"),
    )
    if conv is not None and inner is not None and state is not None:
        groups = meta.count("ssm.group_count") or 0
        per_layer = max(conv - 1, 0) * (inner + 2 * groups * state) + state * inner
        return recurrent_layers * per_layer, (
            f"{recurrent_layers} layers x ((d_conv {conv} - 1) x (d_inner {inner} + 2 x groups {groups} x "
            f"d_state {state}) + d_state x d_inner)"
        )
    head_size = meta.count("wkv.head_size")
    embedding = meta.count("embedding_length") or 0
    if head_size is not None:
        shift = meta.count("token_shift_count") or 2
        per_layer = shift * embedding + embedding * head_size
        return recurrent_layers * per_layer, (
            f"{recurrent_layers} layers x (token_shift {shift} x n_embd {embedding}"
            f" + n_embd x head {head_size})"
        )
    return 0, f"{recurrent_layers} layers without attention whose state this importer does not model"


#: llama.cpp stores recurrent state in f32.
RECURRENT_STATE_BYTES_PER_ELEMENT = 4


def _entries(header: GGUFHeader, mtp_first: int | None) -> list[TensorEntry]:
    return [
        replace(classify_gguf(t.name, mtp_first), size_bytes=t.size_bytes, elements=t.elements)
        for t in header.tensors
    ]


def _check_expert_shapes(
    header: GGUFHeader, entries: list[TensorEntry], experts: int | None, field: str
) -> None:
    shapes = {t.name: t.shape for t in header.tensors}
    for entry in entries:
        if entry.role is not TensorRole.ROUTED_EXPERT:
            continue
        shape = shapes[entry.name]
        if experts is None:
            raise InputError(
                field, f"tensor {entry.name!r} holds routed experts but there is no expert_count"
            )
        if not shape or shape[-1] != experts:
            raise InputError(
                field, f"tensor {entry.name!r} shape {list(shape)} does not end in expert_count {experts}"
            )


def _linear_active_elements(
    header: GGUFHeader, entries: list[TensorEntry], form: ByteForm, k: int | None
) -> float:
    """P_lin,active: matrix (2-D and up) elements of the swept blocks, routed experts scaled by k / E;
    no embedding, head, norms or biases."""
    shapes = {t.name: t.shape for t in header.tensors}
    always = routed = 0
    for entry in entries:
        if len(shapes[entry.name]) < 2 or entry.layer is None:
            continue
        if entry.role is TensorRole.ALWAYS_ON:
            always += entry.elements
        elif entry.role is TensorRole.ROUTED_EXPERT:
            routed += entry.elements
    if form.routed_experts and k:
        return always + routed * k / form.routed_experts
    return float(always + routed)


def _linear_type_and_mode(header: GGUFHeader, entries: list[TensorEntry], field: str) -> tuple[str, str]:
    """The ggml type holding the most bytes of the block matrices (2-D and up, embedding and head
    excluded; the whole file when it has none) and the arithmetic mode prefill runs them in."""
    kinds = {t.name: t for t in header.tensors}
    by_type: Counter[str] = Counter()
    for entry in entries:
        tensor = kinds[entry.name]
        swept = entry.role in (TensorRole.ALWAYS_ON, TensorRole.ROUTED_EXPERT)
        if swept and entry.layer is not None and len(tensor.shape) >= 2:
            by_type[tensor.ggml_type] += tensor.size_bytes
    if not by_type:
        for tensor in header.tensors:
            by_type[tensor.ggml_type] += tensor.size_bytes
    if not by_type:
        return "none", "bf16"
    dominant = by_type.most_common(1)[0][0]
    try:
        return dominant, linear_mode(dominant)
    except KeyError:
        raise InputError(
            field, f"its matrices are mostly {dominant}, a type with no known arithmetic mode"
        ) from None


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
    headers = tuple(read_gguf_header(n) for n in names)
    expected = headers[0].metadata.get("split.tensors.count")
    found = sum(len(h.tensors) for h in headers)
    if isinstance(expected, int) and expected != found:
        raise InputError(
            f"GGUF file {file.name}", f"split.tensors.count is {expected}, the files hold {found}"
        )
    return headers


def _merged(headers: tuple[GGUFHeader, ...], field: str) -> GGUFHeader:
    """One header over all split files: the first file's metadata, every file's tensors."""
    if len(headers) == 1:
        return headers[0]
    tensors = tuple(t for h in headers for t in h.tensors)
    names = Counter(t.name for t in tensors)
    doubled = [name for name, n in names.items() if n > 1]
    if doubled:
        raise InputError(field, f"tensor {doubled[0]!r} is in more than one split file")
    return replace(headers[0], tensors=tensors)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "model"


@dataclass(frozen=True)
class _Layers:
    """The header's layer counts: ``block_count`` blocks, of which the last ``nextn`` are MTP blocks
    and the first ``decoder`` the layers a token passes through; E and k (None for a dense model)."""

    block_count: int
    nextn: int
    decoder: int
    experts: int | None
    per_token: int | None


def _architecture(header: GGUFHeader, field: str) -> tuple[str, bool, _Meta]:
    """``general.architecture``, whether the installed gguf package knows it, and its key reader."""
    arch = header.metadata.get("general.architecture")
    if not isinstance(arch, str) or not arch:
        raise InputError(
            f"{field}: general.architecture", "missing; the file does not say what model it holds"
        )
    known = arch in MODEL_ARCH_NAMES.values()
    if f"{arch}.block_count" not in header.metadata:
        hint = "" if known else "; it is not an architecture the installed gguf package knows (upgrade gguf?)"
        raise InputError(
            f"{field}: general.architecture", f"unknown architecture {arch!r}: no {arch}.block_count{hint}"
        )
    return arch, known, _Meta(header, arch, field)


def _layers(meta: _Meta) -> _Layers:
    """Block, MTP and decoder layer counts and the expert counts, each checked against the others."""
    key = f"{meta.field}: {meta.arch}"
    block_count = meta.count("block_count", required=True)
    assert block_count is not None
    if block_count == 0:
        raise InputError(f"{key}.block_count", "is 0; a model has at least one layer")
    if block_count > MAX_BLOCKS:
        raise InputError(f"{key}.block_count", f"{block_count} layers exceeds the cap {MAX_BLOCKS}")
    nextn = meta.count("nextn_predict_layers") or 0
    if nextn >= block_count:
        raise InputError(
            f"{key}.nextn_predict_layers",
            f"{nextn} leaves no decoder layer of block_count {block_count}",
        )
    experts = meta.count("expert_count") or None
    per_token = meta.count("expert_used_count") or None
    if experts and per_token and per_token > experts:
        raise InputError(f"{key}.expert_used_count", f"{per_token} exceeds expert_count {experts}")
    return _Layers(block_count, nextn, block_count - nextn, experts, per_token)


#: Tensors that only an attention layer holds (llama.cpp names: q/k/v, fused qkv, MLA's projections).
_ATTENTION_TENSOR = re.compile(r"^blk\.(\d+)\.attn_(?:q|k|v|qkv|q_a|q_b|kv_a_mqa|kv_b|k_b|v_b)\.weight$")


def _check_header_against_tensors(header: GGUFHeader, meta: _Meta, layers: _Layers) -> None:
    """The header's shape keys must agree with the tensors it lists: a contradiction (a corrupted or
    hand-edited header) would otherwise import and decode as a different model.

    - every ``blk.N`` index is below block_count, and the highest is block_count - 1 (or the last
      decoder layer, where a converter dropped the MTP blocks);
    - embedding_length is positive and equals ``token_embd.weight``'s row length (ne[0]);
    - a layer holding attention projections has head_count > 0, and no layer has more KV heads than
      query heads.
    """
    key = f"{meta.field}: {meta.arch}"
    indices = {int(m.group(1)) for t in header.tensors if (m := re.match(r"^blk\.(\d+)\.", t.name))}
    if not indices:
        raise InputError(f"{key}.block_count", f"is {layers.block_count} but the file lists no blk.N tensors")
    top = max(indices) + 1
    if top > layers.block_count or top not in (layers.block_count, layers.decoder):
        raise InputError(
            f"{key}.block_count",
            f"is {layers.block_count} but the tensors hold layers blk.0 to blk.{top - 1}",
        )
    embedding = meta.count("embedding_length", required=True)
    if not embedding:
        raise InputError(f"{key}.embedding_length", "is 0; the hidden size must be positive")
    table = next((t for t in header.tensors if t.name == "token_embd.weight"), None)
    if table is not None and table.shape and table.shape[0] != embedding:
        raise InputError(
            f"{key}.embedding_length",
            f"is {embedding} but token_embd.weight rows hold {table.shape[0]} elements",
        )
    heads = meta.per_layer("attention.head_count", layers.decoder, None)
    if heads is None:
        raise InputError(f"{key}.attention.head_count", "missing from the metadata")
    kv_heads = meta.per_layer("attention.head_count_kv", layers.decoder, None) or heads
    for tensor in header.tensors:
        match = _ATTENTION_TENSOR.match(tensor.name)
        if match and int(match.group(1)) < layers.decoder and heads[int(match.group(1))] == 0:
            raise InputError(
                f"{key}.attention.head_count",
                f"is 0 for layer {match.group(1)}, which holds attention tensor {tensor.name!r}",
            )
    for layer, (n_heads, n_kv) in enumerate(zip(heads, kv_heads, strict=True)):
        if n_kv > n_heads:
            raise InputError(
                f"{key}.attention.head_count_kv",
                f"{n_kv} KV heads exceed head_count {n_heads} (layer {layer}); "
                "each KV head serves one or more query heads",
            )


def _kv_shape(meta: _Meta, attention: _Attention, element_bytes: float) -> tuple[KVShape, str]:
    """The cache per token at the chosen precision, and the recurrent state's formula."""
    state_elements, state_formula = _recurrent_state_elements(meta, attention.recurrent_layers)
    kv = KVShape(
        global_bytes_per_token=attention.kv_global_elements * element_bytes,
        local_bytes_per_token=attention.kv_local_elements * element_bytes,
        window_tokens=attention.window if attention.kv_local_elements else 0,
        state_bytes=float(state_elements * RECURRENT_STATE_BYTES_PER_ELEMENT),
    )
    return kv, state_formula


def _prefill_shape(
    header: GGUFHeader,
    entries: list[TensorEntry],
    form: ByteForm,
    layers: _Layers,
    attention: _Attention,
    kv: KVShape,
    field: str,
) -> tuple[PrefillShape, str]:
    """Prefill's inputs, and the ggml type that set its linear mode."""
    linear = _linear_active_elements(header, entries, form, layers.per_token)
    linear_type, mode = _linear_type_and_mode(header, entries, field)
    prefill = PrefillShape(
        linear_active_params=linear,
        attention_global_flops_per_pair=attention.flops_global,
        attention_local_flops_per_pair=attention.flops_local,
        attention_window_tokens=kv.window_tokens,
        kv_write_bytes_per_token=kv.global_bytes_per_token + kv.local_bytes_per_token,
        linear_mode=mode,
        linear_mode_if_published=LLAMA_CPP_IF_PUBLISHED.get(linear_type.lower()),
    )
    return prefill, linear_type


@dataclass(frozen=True)
class _Derived:
    """What the steps derived from one header, gathered for the adapter, the audit and the facts."""

    header: GGUFHeader
    layers: _Layers
    form: ByteForm
    attention: _Attention
    kv: KVShape
    state_formula: str
    kv_precision: str
    element_bytes: float
    prefill: PrefillShape
    linear_type: str

    @property
    def bytes_by_type(self) -> Counter[str]:
        by_type: Counter[str] = Counter()
        for tensor in self.header.tensors:
            by_type[tensor.ggml_type] += tensor.size_bytes
        return by_type

    @property
    def bits_per_weight(self) -> float:
        elements = self.form.total_elements
        return 8.0 * self.header.tensor_bytes / elements if elements else math.nan


def _audit_steps(d: _Derived) -> tuple[Step, ...]:
    """Each derived quantity with the arithmetic that gave it."""
    form, kv, attention, experts = d.form, d.kv, d.attention, d.layers.experts
    return (
        Step(
            "embedding_bytes",
            float(form.untied_embedding_bytes),
            "0: no output.weight, so token_embd is the head and is swept"
            if form.tied
            else f"token_embd = {form.embedding_bytes} B",
        ),
        Step(
            "always_on_bytes",
            float(form.swept_bytes),
            f"block tensors but routed experts {form.always_on_bytes} B + output {form.head_bytes} B"
            + (f" + tied token_embd {form.tied_table_bytes} B" if form.tied else ""),
        ),
        Step(
            "expert_bytes",
            form.expert_bytes,
            f"ffn_*_exps {form.routed_expert_bytes} B / expert_count {experts}" if experts else "dense: 0",
        ),
        Step(
            "resident_bytes",
            float(form.resident_bytes),
            f"every tensor byte; MTP {form.mtp_bytes} B included",
        ),
        Step(
            "kv.global_bytes_per_token",
            kv.global_bytes_per_token,
            f"{attention.kv_global_elements} elements x {d.element_bytes} B ({d.kv_precision}): "
            + attention.formula,
        ),
        Step(
            "kv.local_bytes_per_token",
            kv.local_bytes_per_token,
            f"{attention.kv_local_elements} elements x {d.element_bytes} B",
        ),
        Step("kv.state_bytes", kv.state_bytes, f"{d.state_formula}, f32"),
        Step(
            "bits_per_weight",
            d.bits_per_weight,
            f"8 x {d.header.tensor_bytes} B / {form.total_elements} elements",
        ),
        Step(
            "linear_active_params",
            d.prefill.linear_active_params,
            "matrix elements of the blocks, routed experts x k / E",
        ),
        Step(
            "prefill.linear_mode",
            0.0,
            f"{d.prefill.linear_mode}: {d.linear_type} holds the most bytes of the block matrices"
            + (
                "; llama.cpp multiplies int8-quantized activations against block-quantized weights"
                if d.prefill.linear_mode == "int8"
                else ""
            )
            + (
                f"; {d.prefill.linear_mode_if_published} where the hardware publishes it (llama.cpp's CUDA "
                f"backend multiplies {d.linear_type} weights with FP16 accumulate; elsewhere "
                f"{d.prefill.linear_mode})"
                if d.prefill.linear_mode_if_published
                else ""
            ),
        ),
        Step(
            "attention_global_flops_per_pair",
            attention.flops_global,
            "sum over full-attention layers of 2 x heads x (key_length + value_length)",
        ),
    )


def _facts(
    d: _Derived, headers: tuple[GGUFHeader, ...], meta: _Meta, known: bool, dominant: str
) -> dict[str, object]:
    """What else the header said, for the audit trail."""
    header, layers, attention = d.header, d.layers, d.attention
    data_bytes = sum(h.data_section_bytes for h in headers)
    return {
        "gguf_version": header.version,
        "architecture_known_to_gguf": known,
        "block_count": layers.block_count,
        "nextn_predict_layers": layers.nextn,
        "context_length": meta.count("context_length"),
        "embedding_length": meta.count("embedding_length"),
        "head_count": meta.get("attention.head_count"),
        "head_count_kv": meta.get("attention.head_count_kv"),
        "key_length": attention.key_length,
        "value_length": attention.value_length,
        "sliding_window": attention.window,
        "expert_count": layers.experts,
        "expert_used_count": layers.per_token,
        "tied_embedding": d.form.tied,
        "tensor_count": len(header.tensors),
        "bytes_by_type": dict(d.bytes_by_type.most_common()),
        "dominant_type": dominant,
        "linear_dominant_type": d.linear_type,
        "bits_per_weight": d.bits_per_weight,
        "files": len(headers),
        "tensor_data_bytes": data_bytes,
        "alignment_padding_bytes": data_bytes - header.tensor_bytes,
        "mtp_bytes": d.form.mtp_bytes,
        "recurrent_layers": attention.recurrent_layers,
        "file_type": header.metadata.get("general.file_type"),
    }


def _imported(
    path: str | os.PathLike[str],
    d: _Derived,
    headers: tuple[GGUFHeader, ...],
    arch: str,
    meta: _Meta,
    known: bool,
) -> ImportedModel:
    """The adapter with its audit trail."""
    file = Path(path)
    by_type = d.bytes_by_type
    dominant = by_type.most_common(1)[0][0] if by_type else "none"
    name = d.header.metadata.get("general.name")
    adapter = ModelAdapter(
        id=_slug(file.stem),
        name=name if isinstance(name, str) and name else file.stem,
        weights=d.form.weights(d.layers.per_token),
        kv_alloc=d.kv,
        kv_read=d.kv,
        prefill=d.prefill,
        context_limit_tokens=meta.count("context_length"),
        weight_precision=dominant.lower(),
        kv_precision=d.kv_precision,
        kv_bytes_per_element=d.element_bytes,
        sources={"weights": "GGUF tensor infos", "kv": "GGUF metadata"},
    )
    return ImportedModel(
        adapter=adapter,
        architecture=arch,
        source=str(path),
        steps=_audit_steps(d),
        total_params=float(d.form.total_elements),
        active_params=float(d.form.active_elements(d.layers.per_token)),
        checkpoint_bytes=float(d.header.tensor_bytes),
        facts=_facts(d, headers, meta, known, dominant),
    )


def import_gguf(path: str | os.PathLike[str], *, kv_precision: str = "fp16") -> ImportedModel:
    """Import a GGUF file (or a split GGUF, given any of its files): exact bytes per role, KV shape and
    prefill fields from its header.

    Bytes: every tensor's ggml type and shape give exact bytes (any quantization mix). ``token_embd``
    is the untied embedding unless ``output.weight`` is absent (tied: the table is swept as the head
    and counts as always-on); ``blk.N.ffn_*_exps`` are the routed experts, one expert being their total
    / expert_count; everything else in the blocks, shared experts included, is always-on; MTP blocks
    (past block_count - nextn_predict_layers) are resident only. ``resident_bytes`` is every tensor
    byte.

    KV: per token, the sum over attention layers of head_count_kv x (key_length + value_length)
    elements at ``kv_precision`` (a cache format name; fp16 = 2 bytes), full-attention layers in the
    global term and sliding-window layers in the local one. Recurrent layers add llama.cpp's f32 state.
    Weight precision: the type holding the most bytes, and 8 x bytes / elements bits per weight.

    The steps: read the (split) header; name its architecture; count its layers and experts; check
    the header's shape keys against the tensors it lists; classify tensors into byte roles; derive
    attention, KV and prefill shapes; assemble the adapter with its audit steps and facts.
    """
    if kv_precision not in KV_FORMATS:
        raise InputError(
            "kv_precision", f"unknown cache format {kv_precision!r}; known: {', '.join(KV_FORMATS)}"
        )
    field = f"GGUF file {Path(path).name}"
    headers = read_gguf_split(path)
    header = _merged(headers, field)
    arch, known, meta = _architecture(header, field)
    layers = _layers(meta)
    _check_header_against_tensors(header, meta, layers)

    entries = _entries(header, layers.decoder if layers.nextn else None)
    _check_expert_shapes(header, entries, layers.experts, field)
    form = byte_form(entries, layers.experts)
    if form.routed_experts and not layers.per_token:
        raise InputError(f"{field}: {arch}.expert_used_count", "missing, but the file has routed experts")

    attention = _attention(meta, layers.decoder)
    element_bytes = kv_bytes_per_element(kv_precision)
    kv, state_formula = _kv_shape(meta, attention, element_bytes)
    prefill, linear_type = _prefill_shape(header, entries, form, layers, attention, kv, field)
    derived = _Derived(
        header, layers, form, attention, kv, state_formula, kv_precision, element_bytes, prefill, linear_type
    )
    return _imported(path, derived, headers, arch, meta, known)


__all__ = ["GGUFHeader", "GGUFTensor", "import_gguf", "read_gguf_header", "read_gguf_split"]
