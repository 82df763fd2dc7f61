"""The safetensors header importer on real files written with the safetensors package, and on hostile
files built byte by byte."""

from __future__ import annotations

import contextlib
import json
import struct
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.numpy import save_file

from servebound.core.kv import KVShape
from servebound.errors import InputError
from servebound.importers.safetensors_headers import (
    MAX_HEADER_BYTES,
    MAX_HEADER_OBJECTS,
    MAX_READ_HEADER_BYTES,
    import_safetensors,
    read_safetensors_checkpoint,
    read_safetensors_header,
    read_safetensors_index,
)
from servebound.importers.tensor_roles import TensorRole, classify_hf
from tests.conftest import FUZZ_EXAMPLES

KV = KVShape(global_bytes_per_token=2 * 2 * 1 * 8 * 2)  # 2 (K,V) x 2 layers x 1 kv head x dim 8 x 2 B

F16 = np.float16
F32 = np.float32


def dense_tensors(*, tied: bool) -> dict[str, np.ndarray]:
    """A llama-like stack: vocab 64, hidden 16, 2 layers, 2 query heads and 1 KV head of dim 8, MLP 32."""
    tensors: dict[str, np.ndarray] = {"model.embed_tokens.weight": np.zeros((64, 16), F16)}
    for layer in range(2):
        p = f"model.layers.{layer}."
        tensors |= {
            p + "self_attn.q_proj.weight": np.zeros((16, 16), F16),
            p + "self_attn.k_proj.weight": np.zeros((8, 16), F16),
            p + "self_attn.v_proj.weight": np.zeros((8, 16), F16),
            p + "self_attn.o_proj.weight": np.zeros((16, 16), F16),
            p + "mlp.gate_proj.weight": np.zeros((32, 16), F16),
            p + "mlp.up_proj.weight": np.zeros((32, 16), F16),
            p + "mlp.down_proj.weight": np.zeros((16, 32), F16),
            p + "input_layernorm.weight": np.zeros(16, F32),
            p + "post_attention_layernorm.weight": np.zeros(16, F32),
        }
    tensors["model.norm.weight"] = np.zeros(16, F32)
    if not tied:
        tensors["lm_head.weight"] = np.zeros((64, 16), F16)
    return tensors


# Per layer: q 16*16*2 = 512, k 8*16*2 = 256, v 256, o 512, gate/up/down 3 * 32*16*2 = 3072,
# two f32 norms 2 * 16*4 = 128: 4736 B. Two layers 9472, final norm 64, embedding and head 64*16*2 = 2048.
LAYER_BYTES = 512 + 256 + 256 + 512 + 3072 + 128
EMBED_BYTES = 64 * 16 * 2


def file_tensor_bytes(path: Path) -> int:
    """The file's tensor bytes: file size minus the 8-byte length and the header."""
    with path.open("rb") as handle:
        (header,) = struct.unpack("<Q", handle.read(8))
    return path.stat().st_size - 8 - header


def test_dense_untied_byte_form(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    save_file(dense_tensors(tied=False), str(path))
    model = import_safetensors(path, kv=KV)
    weights = model.adapter.weights
    assert weights.embedding_bytes == EMBED_BYTES == 2048
    assert weights.always_on_bytes == 2 * LAYER_BYTES + 64 + EMBED_BYTES == 11584
    assert weights.expert_bytes == 0 and weights.experts is None
    assert weights.resident == 2048 + 11584 == file_tensor_bytes(path)
    assert model.checkpoint_bytes == file_tensor_bytes(path)
    assert model.adapter.kv_alloc == KV
    assert model.facts["tied_embedding"] is False
    # total = active for a dense model, embedding included: 64*16*2 + 2 * (2*256 + 2*128 + 3*512 + 32) + 16
    assert model.total_params == model.active_params == 2048 + 2 * (512 + 256 + 1536 + 32) + 16


def test_dense_tied_embedding_is_swept_as_the_head(tmp_path: Path) -> None:
    path = tmp_path / "model.safetensors"
    save_file(dense_tensors(tied=True), str(path))
    weights = import_safetensors(path, kv=KV).adapter.weights
    assert weights.embedding_bytes == 0
    assert weights.always_on_bytes == 2 * LAYER_BYTES + 64 + EMBED_BYTES
    assert weights.resident == file_tensor_bytes(path) == 11584


def moe_tensors() -> dict[str, np.ndarray]:
    """2 MoE layers with 4 routed experts (gate/up/down 8x16 f16), a router and a shared expert, plus
    one MTP layer (index 2, past num_hidden_layers = 2) and a vision tower."""
    tensors: dict[str, np.ndarray] = {
        "model.embed_tokens.weight": np.zeros((64, 16), F16),
        "lm_head.weight": np.zeros((64, 16), F16),
        "model.norm.weight": np.zeros(16, F32),
        "model.vision_tower.patch_embed.weight": np.zeros((16, 12), F32),
    }
    for layer in range(3):
        p = f"model.layers.{layer}."
        tensors |= {
            p + "self_attn.q_proj.weight": np.zeros((16, 16), F16),
            p + "mlp.gate.weight": np.zeros((4, 16), F16),
            p + "mlp.shared_experts.up_proj.weight": np.zeros((8, 16), F16),
        }
        for expert in range(4):
            for proj in ("gate_proj", "up_proj", "down_proj"):
                tensors[f"{p}mlp.experts.{expert}.{proj}.weight"] = np.zeros((8, 16), F16)
    return tensors


def test_moe_byte_form_with_config(tmp_path: Path) -> None:
    save_file(moe_tensors(), str(tmp_path / "model.safetensors"))
    config = {"num_hidden_layers": 2, "num_experts": 4, "num_experts_per_tok": 2, "model_type": "toy"}
    (tmp_path / "config.json").write_text(json.dumps(config))
    model = import_safetensors(tmp_path, kv=KV)
    weights = model.adapter.weights
    # Layers 0-1: q 512 + router 4*16*2 = 128 + shared 256 = 896 each; 4 experts x 3 x 256 = 3072 each.
    # Layer 2 is MTP: 896 + 3072 = 3968. Vision: 16*12*4 = 768.
    assert weights.embedding_bytes == 2048
    assert weights.always_on_bytes == 2 * 896 + 64 + 2048
    assert weights.experts is not None and (weights.experts.routed, weights.experts.per_token) == (4, 2)
    assert weights.expert_bytes == 2 * 3072 / 4 == 1536
    assert model.facts["mtp_bytes"] == 3968
    assert model.facts["vision_bytes"] == 768
    assert weights.resident == file_tensor_bytes(tmp_path / "model.safetensors")
    assert weights.resident == 2048 + (2 * 896 + 64 + 2048) + 4 * 1536 + 3968 + 768
    assert model.architecture == "toy"


def test_moe_without_k_names_the_fix(tmp_path: Path) -> None:
    save_file(moe_tensors(), str(tmp_path / "model.safetensors"))
    with pytest.raises(InputError, match="experts_per_token"):
        import_safetensors(tmp_path / "model.safetensors", kv=KV)
    model = import_safetensors(tmp_path / "model.safetensors", kv=KV, experts_per_token=1)
    # Without a config the MTP layer is not recognised: E = 4 per layer read off the names, 3 layers.
    assert model.adapter.weights.expert_bytes == 3 * 3072 / 4


def test_gpt_oss_fused_mxfp4_experts(tmp_path: Path) -> None:
    """gpt-oss stores each layer's experts in one tensor: [E, rows, blocks, 16] nibble bytes, scales
    [E, rows, blocks] and biases [E, rows]. One expert is the routed total / E (E = leading dim)."""
    u8 = np.uint8
    tensors = {
        "model.embed_tokens.weight": np.zeros((64, 16), F16),
        "lm_head.weight": np.zeros((64, 16), F16),
        "model.layers.0.mlp.router.weight": np.zeros((4, 16), F16),
        "model.layers.0.mlp.experts.gate_up_proj_blocks": np.zeros((4, 32, 1, 16), u8),
        "model.layers.0.mlp.experts.gate_up_proj_scales": np.zeros((4, 32, 1), u8),
        "model.layers.0.mlp.experts.gate_up_proj_bias": np.zeros((4, 32), F32),
        "model.layers.0.mlp.experts.down_proj_blocks": np.zeros((4, 16, 1, 16), u8),
        "model.layers.0.mlp.experts.down_proj_scales": np.zeros((4, 16, 1), u8),
        "model.layers.0.mlp.experts.down_proj_bias": np.zeros((4, 16), F32),
    }
    path = tmp_path / "model.safetensors"
    save_file(tensors, str(path))
    model = import_safetensors(path, kv=KV, experts_per_token=2)
    # gate_up: 4*32*16 + 4*32 + 4*32*4 = 2048 + 128 + 512; down: 4*16*16 + 4*16 + 4*16*4 = 1024 + 64 + 256
    routed = 2048 + 128 + 512 + 1024 + 64 + 256
    assert model.adapter.weights.expert_bytes == routed / 4
    assert model.adapter.weights.always_on_bytes == 128 + 2048
    assert model.adapter.weights.resident == file_tensor_bytes(path)


def test_shards_and_index_equal_one_file(tmp_path: Path) -> None:
    tensors = dense_tensors(tied=False)
    names = sorted(tensors)
    first, second = names[: len(names) // 2], names[len(names) // 2 :]
    save_file({n: tensors[n] for n in first}, str(tmp_path / "model-00001-of-00002.safetensors"))
    save_file({n: tensors[n] for n in second}, str(tmp_path / "model-00002-of-00002.safetensors"))
    weight_map = {n: "model-00001-of-00002.safetensors" for n in first}
    weight_map |= {n: "model-00002-of-00002.safetensors" for n in second}
    index = {"metadata": {"total_size": 2048 + 11584}, "weight_map": weight_map}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    for source in (tmp_path, tmp_path / "model.safetensors.index.json"):
        model = import_safetensors(source, kv=KV)
        assert model.checkpoint_bytes == 13632
        assert model.adapter.weights.embedding_bytes == 2048
        assert model.adapter.weights.always_on_bytes == 11584
        assert model.facts["files"] == 2
        assert model.facts["index_total_size_difference_bytes"] == 0


def test_index_disagreeing_with_shards_is_rejected(tmp_path: Path) -> None:
    save_file(dense_tensors(tied=True), str(tmp_path / "a.safetensors"))
    index = {"weight_map": {"model.embed_tokens.weight": "a.safetensors", "ghost.weight": "a.safetensors"}}
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    with pytest.raises(InputError, match=r"ghost\.weight"):
        read_safetensors_checkpoint(tmp_path)


def test_index_alone_gives_names_and_total(tmp_path: Path) -> None:
    """gpt-oss-20b's real index lists 459 tensors and total_size 13,761,264,768 with no shards beside
    it; this is the same layout in small. Names and the total come through; per-tensor bytes do not."""
    weight_map = {name: "model-00000-of-00002.safetensors" for name in moe_tensors()}
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 12345}, "weight_map": weight_map})
    )
    index = read_safetensors_index(tmp_path / "model.safetensors.index.json")
    assert index.total_size_bytes == 12345
    assert index.shards == ("model-00000-of-00002.safetensors",)
    checkpoint = read_safetensors_checkpoint(tmp_path)
    assert checkpoint.headers == () and checkpoint.index == index
    with pytest.raises(InputError, match="total bytes only"):
        import_safetensors(tmp_path, kv=KV, config=None)


def test_classification_names() -> None:
    cases = {
        "model.embed_tokens.weight": TensorRole.EMBEDDING,
        "lm_head.weight": TensorRole.HEAD,
        "model.layers.3.mlp.experts.7.down_proj.weight": TensorRole.ROUTED_EXPERT,
        "model.layers.3.block_sparse_moe.experts.7.w1.weight": TensorRole.ROUTED_EXPERT,
        "model.layers.3.mlp.experts.gate_up_proj_blocks": TensorRole.ROUTED_EXPERT,
        "model.layers.3.mlp.shared_experts.down_proj.weight": TensorRole.ALWAYS_ON,
        "model.layers.3.mlp.shared_expert.down_proj.weight": TensorRole.ALWAYS_ON,
        "model.layers.3.mlp.gate.weight": TensorRole.ALWAYS_ON,
        "model.layers.3.block_sparse_moe.gate.weight": TensorRole.ALWAYS_ON,
        "model.layers.61.mlp.experts.0.up_proj.weight": TensorRole.MTP,
        "mtp.layers.0.fc.weight": TensorRole.MTP,
        "model.visual.blocks.0.attn.qkv.weight": TensorRole.VISION,
        "model.language_model.embed_tokens.weight": TensorRole.EMBEDDING,
        "vision_tower.vision_model.embeddings.patch_embedding.weight": TensorRole.VISION,
    }
    for name, role in cases.items():
        assert classify_hf(name, num_hidden_layers=61).role is role, name


# Hostile files ---------------------------------------------------------------------------------------


def hand_built(tmp_path: Path, header: bytes, data: bytes = b"", length: int | None = None) -> Path:
    path = tmp_path / "hostile.safetensors"
    path.write_bytes(struct.pack("<Q", len(header) if length is None else length) + header + data)
    return path


def entry(dtype: str = "F32", shape: object = (2,), offsets: object = (0, 8)) -> dict[str, object]:
    return {
        "dtype": dtype,
        "shape": list(shape) if isinstance(shape, tuple) else shape,
        "data_offsets": offsets,
    }


HOSTILE: dict[str, tuple[bytes, bytes, int | None, str]] = {
    "truncated": (b"", b"", None, "truncated"),
    "length past file": (b'{"a": 1}', b"", 1000, "larger than"),
    "two GB header": (b"{}", b"", 2_000_000_000, "cap"),
    "not JSON": (b"{this is not json", b"", None, "not valid JSON"),
    "not an object": (b"[1, 2]", b"", None, "JSON object"),
    "not UTF-8": (b'{"\xff": 1}', b"", None, "UTF-8"),
    "duplicate keys": (
        json.dumps({"w": entry()}).encode()[:-1] + b", " + json.dumps({"w": entry()}).encode()[1:],
        bytes(8),
        None,
        "duplicate key 'w'",
    ),
    "negative shape": (json.dumps({"w": entry(shape=(-2,))}).encode(), bytes(8), None, "negative"),
    "float shape": (json.dumps({"w": entry(shape=[2.0])}).encode(), bytes(8), None, "non-integer"),
    "overflowing shape": (
        json.dumps({"w": entry(shape=(2**40, 2**40))}).encode(),
        bytes(8),
        None,
        "2\\^63",
    ),
    "unknown dtype": (json.dumps({"w": entry(dtype="Q4_K")}).encode(), bytes(8), None, "unknown dtype"),
    "lying offsets": (json.dumps({"w": entry(offsets=[0, 6])}).encode(), bytes(8), None, "span 6 bytes"),
    "offsets past data": (json.dumps({"w": entry(offsets=[8, 16])}).encode(), bytes(8), None, "past"),
    "reversed offsets": (json.dumps({"w": entry(offsets=[8, 0])}).encode(), bytes(8), None, "begin <= end"),
    "overlap": (
        json.dumps({"a": entry(offsets=[0, 8]), "b": entry(offsets=[4, 12])}).encode(),
        bytes(16),
        None,
        "overlap",
    ),
    "deep nesting": (b'{"w": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", b"", None, "nested|entry"),
    "NaN": (b'{"w": NaN}', b"", None, "not valid JSON"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_file_is_a_clear_input_error(tmp_path: Path, case: str) -> None:
    header, data, length, message = HOSTILE[case]
    path = hand_built(tmp_path, header, data, length)
    if case == "truncated":
        path.write_bytes(b"\x05\x00")
    with pytest.raises(InputError, match=message) as raised:
        read_safetensors_header(path)
    assert "hostile.safetensors" in str(raised.value)


def test_header_cap_is_the_formats_own() -> None:
    assert MAX_HEADER_BYTES == 100_000_000


def test_a_huge_header_fails_before_it_is_read(tmp_path: Path) -> None:
    """Issue 14: a 75 MB header cost 19.5 s and 924 MB before failing. The length alone refuses it
    now; the file is sparse, so the test writes 8 bytes."""
    path = tmp_path / "huge.safetensors"
    with path.open("wb") as handle:
        handle.write(struct.pack("<Q", 75_000_000))
        handle.truncate(8 + 75_000_000 + 16)
    with pytest.raises(InputError, match=f"over servebound's {MAX_READ_HEADER_BYTES} byte cap"):
        read_safetensors_header(path)


def test_a_header_of_millions_of_objects_fails_before_parsing(tmp_path: Path) -> None:
    raw = b"[" + b",".join([b"{}"] * (MAX_HEADER_OBJECTS + 1)) + b"]"
    path = tmp_path / "objects.safetensors"
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)
    with pytest.raises(InputError, match=f"over the {MAX_HEADER_OBJECTS} cap"):
        read_safetensors_header(path)


def test_missing_kv_names_what_to_do(tmp_path: Path) -> None:
    """The error used to say "pass kv", which is no command-line option."""
    save_file(dense_tensors(tied=False), str(tmp_path / "model.safetensors"))
    with pytest.raises(InputError, match=r"put the model's config\.json there.*servebound import hf"):
        import_safetensors(tmp_path / "model.safetensors")


@settings(max_examples=FUZZ_EXAMPLES, deadline=None)
@given(junk=st.binary(max_size=300), claimed=st.one_of(st.none(), st.integers(0, 2**64 - 1)))
def test_arbitrary_bytes_raise_only_input_error(
    tmp_path_factory: pytest.TempPathFactory, junk: bytes, claimed: int | None
) -> None:
    path = tmp_path_factory.mktemp("junk") / "junk.safetensors"
    path.write_bytes(struct.pack("<Q", len(junk) if claimed is None else claimed) + junk)
    with contextlib.suppress(InputError):
        read_safetensors_header(path)


# With the config.json importer -----------------------------------------------------------------------

#: The config.json of dense_tensors' stack: 2 layers, width 16, 2 query heads, 1 KV head of 8.
LLAMA_CONFIG = {
    "model_type": "llama",
    "architectures": ["LlamaForCausalLM"],
    "vocab_size": 64,
    "hidden_size": 16,
    "intermediate_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "head_dim": 8,
    "max_position_embeddings": 256,
    "torch_dtype": "float16",
}
UNTIED_CONFIG = LLAMA_CONFIG | {"tie_word_embeddings": False, "rms_norm_eps": 1e-5}


def test_config_beside_the_shards_gives_kv_and_the_param_check(tmp_path: Path) -> None:
    save_file(dense_tensors(tied=False), str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text(json.dumps(UNTIED_CONFIG))
    model = import_safetensors(tmp_path)
    # KV from the config: 2 (K,V) x 2 layers x 1 KV head x head_dim 8 x 2 B (bf16 cache).
    assert model.adapter.kv_alloc.global_bytes_per_token == 2 * 2 * 1 * 8 * 2
    assert model.adapter.context_limit_tokens == 256
    # Bytes still come from the headers, not from the config's format.
    assert model.adapter.weights.resident == file_tensor_bytes(tmp_path / "model.safetensors")
    assert model.adapter.weight_precision == "fp16"
    assert model.facts["tensor_minus_config_params"] == 0
    assert model.architecture == "llama"


def test_index_alone_with_config_uses_the_declared_total(tmp_path: Path) -> None:
    weight_map = dict.fromkeys(dense_tensors(tied=False), "model-00001-of-00002.safetensors")
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 13632}, "weight_map": weight_map})
    )
    (tmp_path / "config.json").write_text(json.dumps(UNTIED_CONFIG))
    model = import_safetensors(tmp_path / "model.safetensors.index.json")
    assert model.checkpoint_bytes == 13632
    assert model.adapter.weights.resident == 13632
    assert model.facts["safetensors_index_only"] is True
    assert model.facts["tensors_by_role"] == {"embedding": 1, "always_on": 19, "head": 1}


DTYPES = {np.float16: 2, np.float32: 4, np.int8: 1, np.uint8: 1, np.float64: 8}


@settings(max_examples=60, deadline=None)
@given(
    layout=st.dictionaries(
        st.sampled_from(
            [
                "model.embed_tokens.weight",
                "lm_head.weight",
                "model.norm.weight",
                *(f"model.layers.{i}.self_attn.q_proj.weight" for i in range(3)),
                *(f"model.layers.0.mlp.experts.{e}.up_proj.weight" for e in range(3)),
            ]
        ),
        st.tuples(st.sampled_from(sorted(DTYPES, key=str)), st.lists(st.integers(0, 5), max_size=3)),
        min_size=1,
    )
)
def test_byte_form_always_adds_up_to_the_file(
    tmp_path_factory: pytest.TempPathFactory, layout: dict[str, tuple[type, list[int]]]
) -> None:
    """Whatever the tensors, the roles partition the file's tensor bytes exactly."""
    path = tmp_path_factory.mktemp("prop") / "model.safetensors"
    save_file({name: np.zeros(shape, dtype) for name, (dtype, shape) in layout.items()}, str(path))
    expected = sum(DTYPES[dtype] * int(np.prod(shape)) for dtype, shape in layout.values())
    if expected == 0:  # only empty tensors: no weights, refused by name (a model of 0 bytes decoded before)
        with pytest.raises(InputError, match="tensors hold 0 bytes"):
            import_safetensors(path, kv=KV, experts_per_token=1)
        return
    model = import_safetensors(path, kv=KV, experts_per_token=1)
    assert model.checkpoint_bytes == expected == file_tensor_bytes(path)
    weights = model.adapter.weights
    assert weights.resident == expected
    routed = weights.experts.routed if weights.experts else 0
    assert weights.embedding_bytes + weights.always_on_bytes + routed * weights.expert_bytes == pytest.approx(
        expected
    )
