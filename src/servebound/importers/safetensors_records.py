"""What a safetensors checkpoint's headers say, as validated records: each tensor, each file's header,
the index of a sharded checkpoint, and the whole checkpoint. ``safetensors_headers`` reads them from
the files; ``safetensors_classify`` reads the checkpoint's tensors by role."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class SafetensorsTensor:
    """One header entry, validated: exact ``size_bytes = end - begin`` within the file's data."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    elements: int
    size_bytes: int
    begin: int
    end: int


@dataclass(frozen=True)
class SafetensorsHeader:
    """A file's validated header: ``data_bytes`` is the file size after the header."""

    path: str
    header_bytes: int
    data_bytes: int
    tensors: tuple[SafetensorsTensor, ...]
    metadata: Mapping[str, str]

    @property
    def tensor_bytes(self) -> int:
        return sum(t.size_bytes for t in self.tensors)


@dataclass(frozen=True)
class SafetensorsIndex:
    """A ``model.safetensors.index.json``: tensor names, their shards and the declared total.

    An index alone gives names (hence roles) and ``total_size`` (the checkpoint's tensor bytes when
    the writer recorded it), but not per-tensor bytes: those live in the shard headers.
    """

    path: str
    weight_map: Mapping[str, str]
    total_size_bytes: int | None

    @property
    def shards(self) -> tuple[str, ...]:
        return tuple(sorted(set(self.weight_map.values())))


@dataclass(frozen=True)
class SafetensorsCheckpoint:
    """Every header of a checkpoint (one file or all shards), and the index when there is one."""

    source: str
    headers: tuple[SafetensorsHeader, ...]
    index: SafetensorsIndex | None

    @property
    def tensors(self) -> tuple[SafetensorsTensor, ...]:
        return tuple(t for header in self.headers for t in header.tensors)

    @property
    def checkpoint_bytes(self) -> int:
        return sum(header.tensor_bytes for header in self.headers)
