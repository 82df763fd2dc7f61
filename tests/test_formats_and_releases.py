"""Storage formats against real files: llama.cpp GGUFs, MLX checkpoints and quantized HF releases.

Golden figures, each with where it was published:

- llama-bench prints a GGUF's tensor bytes in GiB in its `size` column: `llama 7B Q4_0 | 3.56 GiB`,
  `llama 7B Q8_0 | 6.67 GiB`, `llama 7B F16 | 12.55 GiB` (llama.cpp's reference tables, e.g. its Apple
  Silicon discussion #4167); `gpt-oss 20B MXFP4 MoE | 11.27 GiB | 20.91 B` and `gpt-oss 120B MXFP4 MoE
  | 59.02 GiB | 116.83 B` for ggml-org's gpt-oss GGUFs (llama.cpp's gpt-oss guide, discussion #15396,
  and DGX Spark threads on NVIDIA's developer forum).
- exo's pinned model cards (exo-explore/exo, tests of its Hugging Face revision pinning) state each MLX
  checkpoint's storage size in bytes: mlx-community/Llama-3.1-8B-Instruct-4bit 4,517,404,672;
  Llama-3.2-1B-Instruct-4bit 695,242,752; Llama-3.2-3B-Instruct-4bit 1,807,423,488; Llama-3.3-70B-Instruct-4bit 39,688,355,840;
  GLM-4.7-Flash-4bit 16,852,202,496; SmolLM2-135M-Instruct-8bit 142,955,136.
- OpenAI's gpt-oss model card gives the checkpoint sizes: 60.8 GiB (120b) and 12.8 GiB (20b).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servebound.catalog.models import get_model
from servebound.core.formats import FORMATS, KV_FORMATS
from servebound.errors import InputError
from servebound.importers.hf.llama_cpp import LLAMA_CPP_MIXES, TensorPlace, llama_cpp_type
from servebound.importers.hf.nemotron_nas import ffn_width
from servebound.importers.hf.release import release_plan
from servebound.importers.hf_config import import_hf_config
from servebound.runs.reported import load_reported_runs
from tests.test_catalog_models import run

GIB = 2**30
MODELS = Path(__file__).resolve().parents[1] / "src" / "servebound" / "catalog" / "data" / "models"


def config(folder: str) -> Path:
    return MODELS / folder / "config.json"


# ---------------------------------------------------------------------------------------------------
# Layouts: one table, byte for byte ggml's


def test_every_ggml_layout_matches_the_gguf_block_table() -> None:
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    ggml = [name for name in FORMATS if name.startswith(("q", "iq"))]
    assert {"q4_0", "q4_1", "q5_0", "q8_0", "q2_k", "q3_k", "q4_k", "q5_k", "q6_k", "iq4_xs"} <= set(ggml)
    for name in ggml:
        layout = FORMATS[name]
        assert GGML_QUANT_SIZES[GGMLQuantizationType[name.upper()]] == (layout.block, layout.block_bytes)


def test_layouts_show_their_bits() -> None:
    # Q4_0: (32, 2 + 16) -> 4.5 bits; IQ4_XS: (256, 2 + 2 + 4 + 128) -> 4.25; MLX 4-bit: (64, 2 + 2 + 32)
    assert FORMATS["q4_0"].bits_per_element == 4.5
    assert FORMATS["iq4_xs"].bits_per_element == 4.25
    assert FORMATS["q2_k"].bits_per_element == 2.625
    assert FORMATS["mlx_4bit"].bits_per_element == 4.5
    assert FORMATS["mlx_6bit"].bits_per_element == 6.5
    assert FORMATS["mlx_8bit"].bits_per_element == 8.5
    assert FORMATS["fp8_block"].bytes_per_element == (128 * 128 + 4) / (128 * 128)
    assert all(KV_FORMATS[name] is FORMATS[name] for name in KV_FORMATS)


# ---------------------------------------------------------------------------------------------------
# llama.cpp file types: the rules, by hand


@pytest.mark.parametrize(
    ("mix", "role", "row", "place", "expected"),
    [
        ("q4_0", "output", 4096, TensorPlace(), "q6_k"),
        ("q4_0", "token_embd", 4096, TensorPlace(), "q4_0"),
        ("q4_0", "attn_v", 4096, TensorPlace(routed_experts=8), "q8_0"),
        ("q8_0", "output", 4096, TensorPlace(), "q8_0"),
        ("q4_1", "output", 4100, TensorPlace(), "fp16"),  # 4100 is no multiple of 32 (Q8_0 then F16)
        ("f16", "attn_q", 4096, TensorPlace(), "fp16"),
        ("q3_k_m", "attn_v", 4096, TensorPlace(value_index=1, values=32), "q5_k"),
        ("q3_k_m", "attn_v", 4096, TensorPlace(value_index=2, values=32), "q4_k"),
        ("q3_k_m", "ffn_down", 11008, TensorPlace(layer=1, layers=32), "q5_k"),  # 1 < 32/16
        ("q3_k_m", "ffn_down", 11008, TensorPlace(layer=2, layers=32), "q4_k"),
        ("q3_k_m", "attn_output", 4096, TensorPlace(), "q4_k"),
        ("q2_k", "ffn_down", 11008, TensorPlace(), "q3_k"),
        ("q2_k", "attn_v", 4096, TensorPlace(gqa=1), "q3_k"),
        ("q2_k", "attn_v", 4096, TensorPlace(gqa=4), "q4_k"),
        ("q4_k_s", "attn_v", 4096, TensorPlace(value_index=3, values=32), "q5_k"),
        ("q4_k_s", "attn_v", 4096, TensorPlace(value_index=4, values=32), "q4_k"),
        ("q4_k_s", "ffn_down", 11008, TensorPlace(layer=3, layers=32), "q5_k"),
        ("q5_k_m", "attn_v", 4096, TensorPlace(value_index=0, values=32), "q6_k"),
        ("q6_k", "attn_q", 4096, TensorPlace(), "q6_k"),
        ("iq4_xs", "attn_v", 4096, TensorPlace(gqa=4), "q5_k"),
        ("iq4_xs", "attn_q", 2880, TensorPlace(), "iq4_nl"),  # 2880 = 11.25 x 256: IQ4_XS falls back
        ("mxfp4_moe", "ffn_up_exps", 2880, TensorPlace(), "mxfp4"),
        ("mxfp4_moe", "attn_q", 2880, TensorPlace(), "q8_0"),
        ("mxfp4_moe", "output", 2880, TensorPlace(), "q8_0"),
    ],
)
def test_llama_cpp_rules(mix: str, role: str, row: int, place: TensorPlace, expected: str) -> None:
    assert mix in LLAMA_CPP_MIXES
    assert llama_cpp_type(mix, role, row, place).name == expected


# ---------------------------------------------------------------------------------------------------
# Real files: llama-bench's sizes and the catalog's llama-2-7b


@pytest.mark.parametrize(
    ("profile", "gib"), [("llama-2-7b-q4_0", 3.56), ("llama-2-7b-q8_0", 6.67), ("llama-2-7b-f16", 12.55)]
)
def test_llama_2_7b_matches_llama_bench(profile: str, gib: float) -> None:
    model = get_model(profile)
    assert model.weight_format == profile.removeprefix("llama-2-7b-")
    assert model.adapter.weights.resident / GIB == pytest.approx(gib, rel=0.01)


def test_llama_2_7b_q4_0_by_hand() -> None:
    """4 x 4096^2 + 3 x 4096 x 11008 weights per layer in Q4_0 (18 B per 32), the untied embedding in
    Q4_0, the head in Q6_K (210 B per 256), 65 norms of 4096 in f32."""
    weights = get_model("llama-2-7b-q4_0").adapter.weights
    linear = 32 * (4 * 4096 * 4096 + 3 * 4096 * 11008)
    assert weights.embedding_bytes == 32000 * 4096 * 18 / 32 == 73_728_000
    assert weights.always_on_bytes == linear * 18 / 32 + 32000 * 4096 * 210 / 256 + 65 * 4096 * 4
    assert weights.resident == 3_825_065_984


@pytest.mark.parametrize(
    ("fmt", "resident"),
    [("f16", 13_477_363_712), ("q8_0", 7_160_348_672), ("q4_0", 3_825_065_984), ("q4_1", 4_238_008_320)],
)
def test_catalog_llama_2_7b_is_the_file_the_reported_runs_ran(fmt: str, resident: int) -> None:
    """The reported Llama 2 7B runs resolve to these catalog profiles, to the byte of llama.cpp's files
    (the sizes llama-bench prints: 12.55, 6.67, 3.56 and 3.95 GiB)."""
    assert get_model(f"llama-2-7b-{fmt}").adapter.weights.resident == resident
    runs = [e for e in load_reported_runs() if e.model == f"llama-2-7b-{fmt}"]
    assert runs, fmt


@pytest.mark.parametrize(("folder", "gib"), [("openai__gpt-oss-20b", 11.27), ("openai__gpt-oss-120b", 59.02)])
def test_gpt_oss_gguf_as_llama_cpp_writes_it(folder: str, gib: float) -> None:
    """ggml-org's GGUFs: routed experts MXFP4, every other matrix Q8_0 (llama.cpp's MXFP4_MOE type)."""
    imported = import_hf_config(config(folder), weight_format="mxfp4_moe")
    assert imported.adapter.weights.resident / GIB == pytest.approx(gib, rel=0.01)
    mix = {s.quantity: s for s in imported.steps}
    assert "ffn_up_exps" in mix["mix.mxfp4"].formula and "output" in mix["mix.q8_0"].formula


def test_gpt_oss_catalog_has_the_gguf_profile() -> None:
    assert get_model("gpt-oss-20b-mxfp4_moe").adapter.weights.resident / GIB == pytest.approx(11.27, rel=0.01)
    native = get_model("gpt-oss-20b")
    assert native.weight_format == "bf16_mxfp4_experts"
    assert native.adapter.weights.resident / GIB == pytest.approx(12.8, rel=0.01)  # OpenAI's 12.8 GiB


# ---------------------------------------------------------------------------------------------------
# MLX checkpoints


@pytest.mark.parametrize(
    ("folder", "fmt", "published"),
    [
        ("meta-llama__Llama-3.1-8B-Instruct", "mlx_4bit", 4_517_404_672),
        ("meta-llama__Llama-3.2-1B-Instruct", "mlx_4bit", 695_242_752),
        ("meta-llama__Llama-3.2-3B-Instruct", "mlx_4bit", 1_807_423_488),
        ("meta-llama__Llama-3.3-70B-Instruct", "mlx_4bit", 39_688_355_840),
        ("zai-org__GLM-4.7-Flash", "mlx_4bit", 16_852_202_496),
        ("HuggingFaceTB__SmolLM2-135M", "mlx_8bit", 142_955_136),
    ],
)
def test_mlx_profiles_match_published_checkpoints(folder: str, fmt: str, published: int) -> None:
    resident = import_hf_config(config(folder), weight_format=fmt).adapter.weights.resident
    assert resident == pytest.approx(published, rel=0.02)


def test_mlx_dense_checkpoint_to_the_byte() -> None:
    """Every matrix (embedding and head included) in 4.5 bits, norms in BF16: 8,030,261,248 params of
    which 266,240 are norms -> (8,030,261,248 - 266,240) x 36 / 64 + 266,240 x 2 bytes."""
    resident = import_hf_config(config("meta-llama__Llama-3.1-8B-Instruct"), weight_format="mlx_4bit")
    assert resident.adapter.weights.resident == (8_030_261_248 - 266_240) * 36 / 64 + 266_240 * 2


def test_mlx_leaves_mtp_modules_out() -> None:
    steps = import_hf_config(config("zai-org__GLM-4.7-Flash"), weight_format="mlx_4bit").steps
    assert any("mlx-lm drops them" in s.formula for s in steps)


# ---------------------------------------------------------------------------------------------------
# Releases: quantization_config read, --weight-format the override


def test_gpt_oss_120b_imports_at_its_release_size(capsys: pytest.CaptureFixture[str]) -> None:
    imported = import_hf_config(config("openai__gpt-oss-120b"))
    assert imported.adapter.weight_precision == "bf16_mxfp4_experts"
    assert imported.adapter.weights.resident / GIB == pytest.approx(60.8, rel=0.01)  # not 233.7 GB
    status, out, _ = run(capsys, "import", "hf", str(config("openai__gpt-oss-120b")), "--json")
    assert status == 0
    weights = json.loads(out)["model"]["weights"]
    assert weights["precision"] == "bf16_mxfp4_experts"
    status, out, _ = run(
        capsys, "import", "hf", str(config("openai__gpt-oss-120b")), "--json", "--weight-format", "bf16"
    )
    assert status == 0 and json.loads(out)["model"]["weights"]["precision"] == "bf16"


def test_fp8_release_keeps_embedding_and_head_bf16() -> None:
    """Qwen3-32B-FP8: block-wise FP8 (one float32 scale per 128 x 128) for every linear layer; the
    embedding is never converted and the head is in modules_to_not_convert by default."""
    imported = import_hf_config(config("Qwen__Qwen3-32B-FP8"))
    weights = imported.adapter.weights
    assert imported.adapter.weight_precision == "fp8_block"
    assert weights.embedding_bytes == 151936 * 5120 * 2
    uniform = import_hf_config(config("Qwen__Qwen3-32B-FP8"), weight_format="fp8").adapter.weights
    assert uniform.embedding_bytes == 151936 * 5120 * 1
    assert weights.always_on_bytes > uniform.always_on_bytes  # the BF16 head and the block scales


def test_compressed_tensors_int4_experts() -> None:
    """Kimi K2.5: routed experts int4 in groups of 32 with a BF16 scale; attention, shared experts,
    the dense first layer and the head in BF16 (its ignore list)."""
    imported = import_hf_config(MODELS / "moonshotai__Kimi-K2.5")
    assert imported.adapter.weight_precision == "bf16_int4_g32_experts"
    expert = imported.adapter.weights.expert_bytes
    # one expert across 60 MoE layers: 3 x 7168 x 2048 per layer at 18 B per 32
    assert expert == 60 * 3 * 7168 * 2048 * 18 / 32


def test_release_plan_patterns() -> None:
    plan = release_plan(
        {}, {"quant_method": "fp8", "weight_block_size": [128, 128], "modules_to_not_convert": ["lm_head"]}
    )
    assert plan.head.name == "bf16" and plan.experts.name == "fp8_block" and plan.embedding.name == "bf16"
    plan = release_plan(
        {},
        {
            "quant_method": "compressed-tensors",
            "ignore": ["re:.*self_attn.*"],
            "config_groups": {
                "g": {"format": "nvfp4-pack-quantized", "weights": {"num_bits": 4, "type": "float"}}
            },
        },
    )
    assert plan.attention.name == "bf16" and plan.mlp.name == "nvfp4"
    with pytest.raises(InputError, match=r"quantization_config\.quant_method"):
        release_plan({}, {"quant_method": "awq"})
    with pytest.raises(InputError, match="weight_block_size"):
        release_plan({}, {"quant_method": "fp8", "weight_block_size": [64, 64]})


# ---------------------------------------------------------------------------------------------------
# New families, by hand from their configs


def test_nemotron_nas_per_layer_blocks() -> None:
    imported = import_hf_config(MODELS / "nvidia__Llama-3_3-Nemotron-Super-49B-v1")
    # 49 attention layers (n_heads_in_group 8: 64 / 8 = 8 kv heads) x 2 x 8 x 128 x 2 B
    assert imported.adapter.kv_alloc.global_bytes_per_token == 49 * 2 * 8 * 128 * 2
    assert ffn_width(5.25, 8192) == 28672  # int(2 x 5.25 x 8192 / 3) = 28672, a multiple of 256
    assert ffn_width(1.3125, 8192) == 7168
    assert ffn_width(0.5, 8192) == 2816  # int(2730.67) = 2730 -> 2816


def test_exaone4_and_olmo3_hybrid_windows() -> None:
    for folder in ("LGAI-EXAONE__EXAONE-4.0-32B", "allenai__Olmo-3-32B-Think"):
        kv = import_hf_config(MODELS / folder).adapter.kv_alloc
        # 64 layers, every 4th global: 16 global, 48 sliding (window 4096); 8 kv heads x 128
        assert kv.global_bytes_per_token == 16 * 2 * 8 * 128 * 2
        assert kv.local_bytes_per_token == 48 * 2 * 8 * 128 * 2
        assert kv.window_tokens == 4096


def test_glm4_counts_four_norms_and_qkv_biases() -> None:
    imported = import_hf_config(MODELS / "zai-org__GLM-4-9B-0414")
    step = next(s for s in imported.steps if s.quantity == "params.full attention")
    assert "4 norms x 4096" in step.formula and "q bias 4096" in step.formula and "o bias" not in step.formula


# ---------------------------------------------------------------------------------------------------
# Invariants over llama.cpp's K-quant ladder


#: Two ladders along which every tensor's type only narrows (Q4_K_M and Q4_K_S are not ordered: the
#: S type raises the first four attn_v, the M type every third; tiny models can favour either).
K_LADDERS = (("q8_0", "q6_k", "q5_k_m", "q4_k_m"), ("q5_k_m", "q4_k_s", "q3_k_m", "q2_k"))


@settings(max_examples=25, deadline=None)
@given(
    hidden_blocks=st.integers(1, 8),
    width_blocks=st.integers(1, 16),
    layers=st.integers(1, 48),
    kv_heads=st.sampled_from([1, 2, 4, 8]),
    vocab=st.integers(256, 5000),
    tied=st.booleans(),
)
def test_k_quant_ladder_never_grows_down_the_ladder(
    tmp_path_factory: pytest.TempPathFactory,
    hidden_blocks: int,
    width_blocks: int,
    layers: int,
    kv_heads: int,
    vocab: int,
    tied: bool,
) -> None:
    """Each llama.cpp K-quant file type gives every tensor at least the bits of the next one down its
    ladder, so the files shrink along Q8_0, Q6_K, Q5_K_M, Q4_K_M and along Q5_K_M, Q4_K_S, Q3_K_M, Q2_K;
    all stay between 2.625 bits and 4 bytes per parameter (f32 norms)."""
    hidden = 256 * hidden_blocks
    folder = tmp_path_factory.mktemp("ladder")
    path = folder / "config.json"
    path.write_text(
        json.dumps(
            {
                "model_type": "llama",
                "hidden_size": hidden,
                "num_hidden_layers": layers,
                "num_attention_heads": 8,
                "num_key_value_heads": kv_heads,
                "head_dim": hidden // 8,
                "intermediate_size": 256 * width_blocks,
                "vocab_size": vocab,
                "tie_word_embeddings": tied,
            }
        )
    )
    size = {
        fmt: import_hf_config(path, weight_format=fmt).adapter.weights.resident
        for ladder in K_LADDERS
        for fmt in ladder
    }
    for ladder in K_LADDERS:
        sizes = [size[fmt] for fmt in ladder]
        assert sizes == sorted(sizes, reverse=True), ladder
    total = import_hf_config(path).total_params
    assert total is not None
    assert total * FORMATS["q2_k"].bytes_per_element <= size["q2_k"] and size["q8_0"] <= total * 4


@pytest.mark.parametrize("bits", [4, 5, 6, 8])
@pytest.mark.parametrize("group", [32, 64])
def test_mlx_community_bit_widths_and_group_sizes(bits: int, group: int) -> None:
    """mlx-lm's affine quantization at 4/5/6/8 bits in groups of 32 or 64 (mlx-community publishes
    both): a bf16 scale and bias per group, so bits + 32 / group per weight."""
    plan = release_plan({}, {"bits": bits, "group_size": group})
    assert plan.mlp.bits_per_element == pytest.approx(bits + 32 / group)
    assert plan.embedding is plan.mlp and f"groups of {group}" in plan.why
    with pytest.raises(InputError, match=r"quantization\.bits"):
        release_plan({}, {"bits": bits, "group_size": 128})
