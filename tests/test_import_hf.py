"""The Hugging Face config.json importer against real configs, published counts and hand arithmetic."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servebound.catalog.published import compare_published, published_table
from servebound.core.formats import FORMATS, BlockLayout
from servebound.errors import InputError
from servebound.importers.hf.llama_cpp import TensorPlace, llama_cpp_type, use_more_bits
from servebound.importers.hf_config import MAX_CONFIG_BYTES, SUPPORTED_MODEL_TYPES, import_hf_config

# The shared reference set of real configs sits beside the checkout (shared/reference/models).
REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference" / "models"
# The model cards' figures live with the catalog (one file, one comparison function).
GOLDEN = published_table()

needs_reference = pytest.mark.skipif(not REFERENCE.is_dir(), reason="shared reference configs not present")


# Configs the catalog ships beyond the reference set (copied from other public sources).
CATALOG_CONFIGS = Path(__file__).resolve().parents[1] / "src" / "servebound" / "catalog" / "data" / "models"


def ref(name: str) -> Path:
    path = REFERENCE / name / "config.json"
    return path if path.is_file() else CATALOG_CONFIGS / name / "config.json"


# ---------------------------------------------------------------------------------------------------
# Published parameter counts


@needs_reference
@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_counts_match_published_figures(name: str) -> None:
    for check in compare_published(GOLDEN[name], import_hf_config(ref(name))):
        assert check.ok, f"{name} {check.what}: ours {check.ours:.4g} vs published {check.published:.4g}"


@needs_reference
@pytest.mark.parametrize(
    ("name", "exact"),
    [
        ("meta-llama__Llama-3.1-8B", 8_030_261_248),
        ("mistralai__Devstral-Small-2-24B-Instruct", 23_572_403_200),
    ],
)
def test_dense_counts_equal_checkpoint_index_exactly(name: str, exact: int) -> None:
    """Every tensor of these checkpoints is counted: the index's own totals, to the parameter."""
    assert import_hf_config(ref(name)).total_params == exact


@needs_reference
def test_every_reference_config_imports() -> None:
    for folder in sorted(p for p in REFERENCE.iterdir() if (p / "config.json").is_file()):
        model = import_hf_config(folder)
        assert model.total_params and model.active_params, folder.name
        assert model.active_params <= model.total_params
        assert model.adapter.weights.resident >= model.adapter.weights.active


# ---------------------------------------------------------------------------------------------------
# KV bytes per token, by hand from each config


@needs_reference
def test_llama_kv_is_two_tensors_per_layer() -> None:
    adapter = import_hf_config(ref("meta-llama__Llama-3.1-8B")).adapter
    # 2 (K,V) x 32 layers x 8 kv heads x 128 head_dim x 2 bytes = 131072
    assert adapter.kv_alloc.global_bytes_per_token == 2 * 32 * 8 * 128 * 2 == 131072
    assert adapter.kv_read == adapter.kv_alloc
    assert adapter.kv_bytes_per_element == 2
    assert adapter.context_limit_tokens == 131072
    assert adapter.prefill is not None
    # 4 x 32 query heads x 128 head_dim x 32 layers
    assert adapter.prefill.attention_global_flops_per_pair == 4 * 32 * 128 * 32
    assert adapter.prefill.kv_write_bytes_per_token == 131072
    # no embedding lookup, no output head: 8,030,261,248 - 2 x 128256 x 4096 - norms (65 x 4096)
    assert adapter.prefill.linear_active_params == 8_030_261_248 - 2 * 128256 * 4096 - 65 * 4096


@needs_reference
@pytest.mark.parametrize(
    ("name", "global_bytes", "local_bytes", "window"),
    [
        # 62 layers, every 6th global (sliding_window_pattern default 6): 10 global, 52 sliding
        ("google__gemma-3-27b-it", 10 * 2 * 16 * 128 * 2, 52 * 2 * 16 * 128 * 2, 1024),
        # defaults: 4 kv heads, head_dim 256; 34 layers -> 5 global (5, 11, 17, 23, 29), 29 sliding
        ("google__gemma-3-4b-it", 5 * 2 * 4 * 256 * 2, 29 * 2 * 4 * 256 * 2, 1024),
        # 5 global layers x 1 (K=V) x 2 global kv heads x 512 global_head_dim x 2 B;
        # 25 sliding layers x 2 x 8 kv heads x 256 head_dim x 2 B, window 1024
        ("google__gemma-4-26B-A4B", 5 * 1 * 2 * 512 * 2, 25 * 2 * 8 * 256 * 2, 1024),
        # alternating windows: 12 full layers, 12 of 128 tokens
        ("openai__gpt-oss-20b", 12 * 2 * 8 * 64 * 2, 12 * 2 * 8 * 64 * 2, 128),
        # chunked attention is a local window: every 4th of 48 layers is a global NoPE layer: 12 global,
        # 36 chunked (8192)
        ("meta-llama__Llama-4-Scout-17B-16E-Instruct", 12 * 2 * 8 * 128 * 2, 36 * 2 * 8 * 128 * 2, 8192),
    ],
)
def test_sliding_and_global_layers(name: str, global_bytes: int, local_bytes: int, window: int) -> None:
    kv = import_hf_config(ref(name)).adapter.kv_alloc
    assert kv.global_bytes_per_token == global_bytes
    assert kv.local_bytes_per_token == local_bytes
    assert kv.window_tokens == window


@needs_reference
def test_gemma3_is_multimodal_with_the_default_pattern() -> None:
    imported = import_hf_config(ref("google__gemma-3-27b-it"))
    assert imported.facts["multimodal"] is True
    assert any("sliding_window_pattern absent" in s.formula for s in imported.steps)


@needs_reference
def test_llama4_maverick_interleaves_moe_layers() -> None:
    maverick = import_hf_config(ref("meta-llama__Llama-4-Maverick-17B-128E-Instruct"))
    assert maverick.facts["moe_layers"] == 24  # interleave_moe_layer_step 2


@needs_reference
def test_mla_caches_the_latent() -> None:
    adapter = import_hf_config(ref("deepseek-ai__DeepSeek-V3")).adapter
    # 61 layers x (512 kv_lora_rank + 64 qk_rope_head_dim) x 2 B
    assert adapter.kv_alloc.global_bytes_per_token == 61 * (512 + 64) * 2 == 70272
    assert adapter.prefill is not None
    # 61 layers x (2 x 128 heads x 192 qk dims + 2 x 128 heads x 128 v dims)
    assert adapter.prefill.attention_global_flops_per_pair == 61 * (2 * 128 * 192 + 2 * 128 * 128)
    weights = adapter.weights
    assert weights.experts is not None and (weights.experts.routed, weights.experts.per_token) == (256, 8)


@needs_reference
def test_sparse_attention_reads_top_k_latents() -> None:
    adapter = import_hf_config(ref("deepseek-ai__DeepSeek-V3.2")).adapter
    # kept: latent 576 + indexer key 128 per layer; read: every indexer key, at most 2048 latents
    assert adapter.kv_alloc.global_bytes_per_token == 61 * (576 + 128) * 2
    assert adapter.kv_read.global_bytes_per_token == 61 * 128 * 2
    assert adapter.kv_read.local_bytes_per_token == 61 * 576 * 2
    assert adapter.kv_read.window_tokens == 2048
    assert adapter.kv_read.bytes_at(1_000_000) < adapter.kv_alloc.bytes_at(1_000_000)


def v4_true_read_elements(context: int, ratios: list[int], topk: int) -> float:
    """DeepSeek-V4 decode reads per step, layer by layer, without folding windows: every layer its last
    min(L, 128) raw entries of 512; ratio 4 every indexer key (128 / 4 per token) and at most topk of the
    L / 4 compressed entries; ratio 128 every compressed entry (512 / 128 per token)."""
    total = 0.0
    for ratio in ratios:
        total += 512 * min(context, 128)
        if ratio == 4:
            total += 128 * context / 4 + 512 * min(context / 4, topk)
        elif ratio:
            total += 512 * context / ratio
    return total


@needs_reference
def test_deepseek_v4_flash_cache_by_hand() -> None:
    """compress_ratios [0, 0, 4, 128, 4, ..., 128, 4] + [0] for the MTP layer: 2 window-only layers,
    21 CSA (ratio 4), 20 HCA (ratio 128); head_dim 512, window 128, indexer 64 x 128 top-512."""
    config = json.loads(ref("deepseek-ai__DeepSeek-V4-Flash").read_text())
    ratios = config["compress_ratios"][:43]
    assert (ratios.count(0), ratios.count(4), ratios.count(128)) == (2, 21, 20)
    imported = import_hf_config(ref("deepseek-ai__DeepSeek-V4-Flash"))
    alloc, read = imported.adapter.kv_alloc, imported.adapter.kv_read
    # kept per token: CSA 512/4 compressed + 128/4 indexer key = 160; HCA 512/128 = 4; x 2 B (bf16)
    assert alloc.global_bytes_per_token == (21 * (128 + 32) + 20 * 4) * 2 == 6880
    # every layer keeps its last 128 raw entries of 512
    assert alloc.local_bytes_per_token == 43 * 512 * 2 == 44032
    assert alloc.window_tokens == 128
    # compressor buffers, float32: kv and score, (coff x ratio) rows of coff x width
    csa_state = 2 * (2 * 4) * (2 * 512) * 4 + 2 * (2 * 4) * (2 * 128) * 4  # main + indexer, coff 2
    hca_state = 2 * 128 * 512 * 4  # coff 1
    assert alloc.state_bytes == 21 * csa_state + 20 * hca_state == 12_206_080
    # read per step: every indexer key (32) and every HCA entry (4)
    assert read.global_bytes_per_token == (21 * 32 + 20 * 4) * 2 == 1504
    # window terms: 43 x 512 over 128 tokens, folded into the top-k span of 4 x 512 = 2048 tokens
    # (x 128 / 2048), plus CSA top-k 21 x 512 / 4 over 2048 tokens
    assert read.window_tokens == 2048
    assert read.local_bytes_per_token == (43 * 512 * 128 / 2048 + 21 * 128) * 2 == 8128
    # a step reads a buffer once per ratio tokens on average
    assert read.state_bytes == 21 * csa_state / 4 + 20 * hca_state / 128 == 512_000
    for context in (1, 100, 128, 1000, 2048, 4096, 32_000, 1_048_576):
        exact = v4_true_read_elements(context, ratios, 512) * 2 + read.state_bytes
        if context >= 2048:
            assert read.bytes_at(context) == pytest.approx(exact, rel=1e-12)
        else:  # the folded window never overstates traffic
            assert read.bytes_at(context) <= exact
    assert any("read windows differ [128, 2048]" in s.formula for s in imported.steps)


@needs_reference
def test_deepseek_v4_prefill_by_hand() -> None:
    prefill = import_hf_config(ref("deepseek-ai__DeepSeek-V4-Flash")).adapter.prefill
    assert prefill is not None
    # context-wide: HCA 4 x 64 heads x 512 / 128 per token; CSA indexer 2 x 64 x 128 / 4 per token
    assert prefill.attention_global_flops_per_pair == 20 * 4 * 64 * 512 / 128 + 21 * 2 * 64 * 128 / 4
    # window: 43 x 4 x 64 x 512 over 128 tokens, folded to the 2048-token top-k span (x 128 / 2048);
    # CSA top 512 of L / 4 compressed entries: 21 x 4 x 64 x 512 / 4 over 2048 tokens
    assert prefill.attention_local_flops_per_pair == 43 * 4 * 64 * 512 * 128 / 2048 + 21 * 4 * 64 * 512 / 4
    assert prefill.attention_window_tokens == 2048
    assert prefill.kv_write_bytes_per_token == 6880 + 44032


@needs_reference
def test_deepseek_v4_parameters_by_hand() -> None:
    imported = import_hf_config(ref("deepseek-ai__DeepSeek-V4-Flash"))
    h, heads, d, q, groups, rank = 4096, 64, 512, 1024, 8, 1024
    # q_a, q_b, shared kv, grouped o_a (8 groups of 4096 -> 1024), o_b; 2 norms, sink, q and kv norms
    attention = h * q + q * heads * d + h * d + (heads * d // groups) * (groups * rank) + groups * rank * h
    small = 2 * h + heads + q + d
    # HCA: compressor kv and gate 4096 x 512, position bias 128 x 512, norm 512
    hca = attention + 2 * h * d + small + 128 * d + d
    step = next(s for s in imported.steps if s.quantity == "params.HCA attention (ratio 128)")
    assert step.value == 20 * hca
    # CSA: compressor 2 x 4096 x 1024 (overlapping, coff 2), bias 4 x 1024, norm 512; indexer q 1024 x
    # 64 x 128, weights 4096 x 64, its compressor 2 x 4096 x 256, bias 4 x 256, norm 128
    csa = attention + small + 2 * h * 2 * d + 4 * 2 * d + d
    csa += q * 64 * 128 + h * 64 + 2 * h * 2 * 128 + 4 * 2 * 128 + 128
    step = next(s for s in imported.steps if s.quantity == "params.CSA attention (ratio 4) + indexer")
    assert step.value == 21 * csa
    # hyper-connections, 4 streams: 2 sites x ((2 + 4) x 4 x 16384 mix + 24 bias + 3 scales) per layer
    step = next(s for s in imported.steps if s.quantity == "params.hyper-connections")
    assert step.value == 43 * 2 * (24 * 4 * h + 24 + 3)
    assert imported.facts["routed_experts"] == 256 and imported.facts["experts_per_token"] == 6
    assert imported.adapter.context_limit_tokens == 1_048_576


@needs_reference
def test_deepseek_v4_pro_cache_at_a_million_tokens() -> None:
    """61 layers: 31 HCA, 30 CSA (top-1024). At 2^20 tokens in bf16 the attention cache (state aside)
    is 9.62 GiB, the figure third-party coverage of the release quotes for V4-Pro."""
    kv = import_hf_config(ref("deepseek-ai__DeepSeek-V4-Pro")).adapter.kv_alloc
    tokens = 2**20
    elements = 30 * 160 * tokens + 31 * 4 * tokens + 61 * 512 * 128
    assert kv.bytes_at(tokens) - kv.state_bytes == elements * 2
    assert round(elements * 2 / 2**30, 2) == 9.62


@needs_reference
def test_deepseek_v4_release_split_format_by_hand() -> None:
    """The release stores routed experts as FP4 under one UE8M0 scale per 32 values (MXFP4: 17 bytes
    per 32) and every other matrix as FP8 (1 byte); the MTP module's routed experts too."""
    fp8 = import_hf_config(ref("deepseek-ai__DeepSeek-V4-Flash"), weight_format="fp8").adapter
    split = import_hf_config(ref("deepseek-ai__DeepSeek-V4-Flash"), weight_format="fp8_mxfp4_experts").adapter
    expert = 43 * 3 * 4096 * 2048  # one routed expert across the 43 MoE layers
    assert split.weights.expert_bytes == expert * 17 / 32
    assert split.weights.always_on_bytes == fp8.weights.always_on_bytes
    assert split.weights.embedding_bytes == fp8.weights.embedding_bytes == 129280 * 4096
    assert fp8.weights.resident_bytes is not None and split.weights.resident_bytes is not None
    # 256 routed experts in the 43 layers and 256 in the MTP layer move from 1 B to 17/32 B
    saved = (256 * expert + 256 * 3 * 4096 * 2048) * (1 - 17 / 32)
    assert fp8.weights.resident_bytes - split.weights.resident_bytes == pytest.approx(saved, rel=1e-12)
    # prefill charges the linear FLOPs at the faster (FP4) rate, which keeps it a ceiling
    assert split.prefill is not None and split.prefill.linear_mode == "fp4"


def v4(**override: object) -> dict[str, object]:
    config: dict[str, object] = json.loads(ref("deepseek-ai__DeepSeek-V4-Flash").read_text())
    config.update(override)
    return config


@needs_reference
@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"compress_ratios": [0] * 40}, "compress_ratios"),
        ({"compress_ratios": [0] * 42 + [-4, 0]}, "compress_ratios"),
        ({"o_groups": 7}, "o_groups"),
        ({"num_key_value_heads": 8}, "num_key_value_heads"),
        ({"hc_mult": None}, "hc_mult"),
    ],
)
def test_deepseek_v4_bad_fields_are_named(tmp_path: Path, override: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as caught:
        import_hf_config(write(tmp_path, v4(**override)))
    assert caught.value.field == field


@needs_reference
def test_qwen3_next_linear_layers_hold_fixed_state() -> None:
    kv = import_hf_config(ref("Qwen__Qwen3-Next-80B-A3B-Thinking")).adapter.kv_alloc
    # 12 full-attention layers x 2 x 2 kv heads x 256 x 2 B
    assert kv.global_bytes_per_token == 12 * 2 * 2 * 256 * 2
    # 36 delta-net layers x (32 v heads x 128 x 128 x 2 B (bf16, no state dtype in the config)
    #                        + conv (2 x 16 x 128 + 32 x 128) channels x 3 taps x 2 B)
    assert kv.state_bytes == 36 * (32 * 128 * 128 * 2 + (2 * 2048 + 4096) * 3 * 2)


@needs_reference
def test_qwen35_state_dtype_from_config() -> None:
    imported = import_hf_config(ref("Qwen__Qwen3.5-35B-A3B"))
    kv = imported.adapter.kv_alloc
    # 30 delta-net layers, mamba_ssm_dtype float32: 32 x 128 x 128 x 4 B + conv 8192 x 3 x 2 B
    assert kv.state_bytes == 30 * (32 * 128 * 128 * 4 + 8192 * 3 * 2)
    assert kv.global_bytes_per_token == 10 * 2 * 2 * 256 * 2
    assert imported.facts["mtp_params"] > 0
    weights = imported.adapter.weights
    assert weights.resident_bytes is not None
    assert (
        weights.resident_bytes
        > weights.embedding_bytes + weights.always_on_bytes + 256 * weights.expert_bytes
    )


@needs_reference
def test_nemotron_h_mamba2_state() -> None:
    kv = import_hf_config(ref("nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")).adapter.kv_alloc
    assert kv.global_bytes_per_token == 6 * 2 * 2 * 128 * 2
    # 23 Mamba-2 layers x (64 heads x 64 x 128 d_state x 4 B (float32) + (4096 + 2 x 8 x 128) x 3 x 2 B)
    assert kv.state_bytes == 23 * (64 * 64 * 128 * 4 + (4096 + 2 * 8 * 128) * 3 * 2)


@needs_reference
def test_mamba1_state_and_no_cache() -> None:
    adapter = import_hf_config(ref("state-spaces__mamba-130m-hf")).adapter
    assert adapter.kv_alloc.global_bytes_per_token == 0 and not adapter.kv_alloc.grows_with_context
    # 24 layers x (1536 x 16 + 1536 x 3) x 4 B (float32 checkpoint)
    assert adapter.kv_alloc.state_bytes == 24 * (1536 * 16 + 1536 * 3) * 4


@needs_reference
def test_untied_embedding_resident_not_swept() -> None:
    weights = import_hf_config(ref("meta-llama__Llama-3.1-8B")).adapter.weights
    assert weights.embedding_bytes == 128256 * 4096 * 2
    assert weights.resident == weights.embedding_bytes + weights.always_on_bytes
    tied = import_hf_config(ref("meta-llama__Llama-3.2-1B")).adapter.weights
    assert tied.embedding_bytes == 0


@needs_reference
def test_weight_formats_scale_matrices_and_keep_small_tensors() -> None:
    bf16 = import_hf_config(ref("Qwen__Qwen3-8B")).adapter.weights
    nvfp4 = import_hf_config(ref("Qwen__Qwen3-8B"), weight_format="nvfp4").adapter
    assert nvfp4.weight_precision == "nvfp4"
    # nvfp4 stores 16 elements in 1 + 8 bytes: 9/16 B per element
    assert FORMATS["nvfp4"].bytes_per_element == 9 / 16
    assert FORMATS["q4_k"].bits_per_element == 4.5
    assert FORMATS["q6_k"].block_bytes == 210
    ratio = nvfp4.weights.always_on_bytes / bf16.always_on_bytes
    assert 9 / 32 < ratio < 9 / 32 * 1.01  # norms stay 16-bit, a sliver above the matrix ratio
    assert nvfp4.prefill is not None and nvfp4.prefill.linear_mode == "fp4"


@pytest.mark.parametrize(
    ("fmt", "mode"),
    [("fp32", "fp32"), ("bf16", "bf16"), ("fp16", "fp16"), ("fp8", "fp8"), ("nvfp4", "fp4"), ("mxfp4", "fp4")]
    + [(fmt, "int8") for fmt in FORMATS if fmt.startswith("q")],
)
def test_linear_mode_per_weight_format(tmp_path: Path, fmt: str, mode: str) -> None:
    """Every weight format has a mode (the table the GGUF importer shares); llama.cpp block formats
    multiply int8-quantized activations, so they run at the int8 rate."""
    prefill = import_hf_config(write(tmp_path, llama()), weight_format=fmt).adapter.prefill
    assert prefill is not None and prefill.linear_mode == mode


@needs_reference
def test_kv_precision_sets_bytes_per_element() -> None:
    adapter = import_hf_config(ref("meta-llama__Llama-3.1-8B"), kv_precision="fp8").adapter
    assert adapter.kv_alloc.global_bytes_per_token == 2 * 32 * 8 * 128 * 1
    assert adapter.kv_precision == "fp8" and adapter.kv_bytes_per_element == 1


@needs_reference
def test_audit_shows_arithmetic() -> None:
    imported = import_hf_config(ref("meta-llama__Llama-3.1-8B"))
    kv_step = next(s for s in imported.steps if s.quantity == "kv.full attention")
    assert kv_step.value == 131072
    assert "32 layers x 2 (K,V) x 8 kv heads x 128 head_dim x 2 B (bf16)" in kv_step.formula
    quantities = {s.quantity for s in imported.steps}
    assert {"total_params", "active_params", "always_on_bytes", "prefill.linear_active_params"} <= quantities


# ---------------------------------------------------------------------------------------------------
# Synthetic configs: families without a reference file, and invariants


def llama(**override: object) -> dict[str, object]:
    config: dict[str, object] = {
        "model_type": "llama",
        "hidden_size": 256,
        "num_hidden_layers": 4,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 32,
        "intermediate_size": 512,
        "vocab_size": 1000,
        "max_position_embeddings": 4096,
    }
    config.update(override)
    return config


def write(tmp_path: Path, config: object, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(config))
    return path


def test_synthetic_llama_by_hand(tmp_path: Path) -> None:
    imported = import_hf_config(write(tmp_path, llama()))
    # per layer: q 256x256 + k 256x64 + v 256x64 + o 256x256 + MLP 3 x 256 x 512 + 2 norms x 256
    layer = 256 * 256 * 2 + 256 * 64 * 2 + 3 * 256 * 512 + 2 * 256
    # untied (llama default): embedding + head 2 x 1000 x 256, final norm 256
    assert imported.total_params == 4 * layer + 2 * 1000 * 256 + 256
    assert imported.adapter.kv_alloc.global_bytes_per_token == 2 * 4 * 2 * 32 * 2


def test_head_dim_derived_only_when_absent_and_said(tmp_path: Path) -> None:
    config = llama()
    del config["head_dim"]
    imported = import_hf_config(write(tmp_path, config))
    assert imported.adapter.kv_alloc.global_bytes_per_token == 2 * 4 * 2 * (256 // 8) * 2
    assert any(
        "head_dim absent: derived hidden_size / num_attention_heads" in s.formula for s in imported.steps
    )


@settings(max_examples=25, deadline=None)
@given(
    layers=st.integers(1, 64), kv_heads=st.sampled_from([1, 2, 4, 8]), head_dim=st.sampled_from([32, 64, 128])
)
def test_kv_grows_linearly_with_layers(
    tmp_path_factory: pytest.TempPathFactory, layers: int, kv_heads: int, head_dim: int
) -> None:
    folder = tmp_path_factory.mktemp("kv")
    one = import_hf_config(
        write(folder, llama(num_hidden_layers=1, num_key_value_heads=kv_heads, head_dim=head_dim))
    )
    many = import_hf_config(
        write(folder, llama(num_hidden_layers=layers, num_key_value_heads=kv_heads, head_dim=head_dim))
    )
    assert (
        many.adapter.kv_alloc.global_bytes_per_token == layers * one.adapter.kv_alloc.global_bytes_per_token
    )
    assert one.adapter.kv_alloc.global_bytes_per_token == 2 * kv_heads * head_dim * 2


@settings(max_examples=20, deadline=None)
@given(fmt=st.sampled_from(sorted(FORMATS)))
def test_resident_bytes_follow_the_format(tmp_path_factory: pytest.TempPathFactory, fmt: str) -> None:
    path = write(tmp_path_factory.mktemp("fmt"), llama())
    imported = import_hf_config(path, weight_format=fmt)
    per_element = FORMATS[fmt].bytes_per_element
    total = imported.total_params
    assert total is not None
    resident = imported.adapter.weights.resident
    # matrices at the format, small tensors at max(format, 2 B): bounded by the two uniform extremes
    assert total * per_element <= resident <= total * max(per_element, 2.0)


def test_mistral_sliding_window_all_layers(tmp_path: Path) -> None:
    kv = import_hf_config(write(tmp_path, llama(model_type="mistral", sliding_window=4096))).adapter.kv_alloc
    assert kv.global_bytes_per_token == 0
    assert kv.local_bytes_per_token == 4 * 2 * 2 * 32 * 2 and kv.window_tokens == 4096


def test_gemma2_alternates_from_a_sliding_first_layer(tmp_path: Path) -> None:
    kv = import_hf_config(write(tmp_path, llama(model_type="gemma2", sliding_window=4096))).adapter.kv_alloc
    assert kv.global_bytes_per_token == 2 * 2 * 2 * 32 * 2
    assert kv.local_bytes_per_token == 2 * 2 * 2 * 32 * 2


def test_qwen2_moe_shared_expert(tmp_path: Path) -> None:
    config = llama(
        model_type="qwen2_moe",
        num_experts=8,
        num_experts_per_tok=2,
        moe_intermediate_size=64,
        shared_expert_intermediate_size=128,
    )
    weights = import_hf_config(write(tmp_path, config)).adapter.weights
    assert weights.experts is not None and (weights.experts.routed, weights.experts.per_token) == (8, 2)
    # one routed expert across 4 layers: 4 x 3 x 256 x 64 x 2 B
    assert weights.expert_bytes == 4 * 3 * 256 * 64 * 2


def test_jamba_mamba_and_attention(tmp_path: Path) -> None:
    config = llama(
        model_type="jamba",
        num_hidden_layers=8,
        attn_layer_period=8,
        attn_layer_offset=4,
        expert_layer_period=2,
        expert_layer_offset=1,
        num_experts=4,
        num_experts_per_tok=2,
        mamba_expand=2,
        mamba_d_state=16,
        mamba_d_conv=4,
        mamba_dt_rank=16,
        torch_dtype="bfloat16",
    )
    imported = import_hf_config(write(tmp_path, config))
    kv = imported.adapter.kv_alloc
    assert kv.global_bytes_per_token == 1 * 2 * 2 * 32 * 2
    # 7 Mamba layers x (512 d_inner x 16 d_state + 512 x 3 conv) x 2 B
    assert kv.state_bytes == 7 * (512 * 16 + 512 * 3) * 2
    assert imported.facts["moe_layers"] == 4


def test_granite_hybrid(tmp_path: Path) -> None:
    config = llama(
        model_type="granitemoehybrid",
        layer_types=["mamba", "mamba", "mamba", "attention"],
        mamba_n_heads=16,
        mamba_d_head=32,
        mamba_n_groups=1,
        mamba_d_state=64,
        mamba_d_conv=4,
        num_local_experts=0,
        shared_intermediate_size=512,
        mamba_ssm_cache_dtype="float32",
    )
    kv = import_hf_config(write(tmp_path, config)).adapter.kv_alloc
    assert kv.global_bytes_per_token == 2 * 2 * 32 * 2
    # 3 layers x (16 x 32 x 64 x 4 B + (512 + 2 x 64) x 3 x 2 B)
    assert kv.state_bytes == 3 * (16 * 32 * 64 * 4 + (512 + 128) * 3 * 2)


def test_minimax_lightning_layers(tmp_path: Path) -> None:
    config = llama(
        model_type="minimax", attn_type_list=[0, 0, 0, 1], num_local_experts=4, num_experts_per_tok=2
    )
    kv = import_hf_config(write(tmp_path, config)).adapter.kv_alloc
    assert kv.global_bytes_per_token == 2 * 2 * 32 * 2
    assert kv.state_bytes == 3 * 8 * 32 * 32 * 4


# ---------------------------------------------------------------------------------------------------
# Hostile and malformed input


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({k: v for k, v in llama().items() if k != "num_hidden_layers"}, "num_hidden_layers"),
        (llama(hidden_size="256"), "hidden_size"),
        (llama(hidden_size=True), "hidden_size"),
        (llama(num_hidden_layers=0), "num_hidden_layers"),
        (llama(num_key_value_heads=-2), "num_key_value_heads"),
        (llama(model_type="not_a_model"), "model_type"),
        ({"hidden_size": 4}, "model_type"),
        (llama(model_type="gemma2", layer_types=["full_attention"]), "layer_types"),
        (llama(model_type="mistral", layer_types=["sliding_attention"] * 4), "sliding_window"),
        ({"model_type": "gemma3"}, "text_config"),
        (llama(model_type="mixtral", num_local_experts=2, num_experts_per_tok=4), "num_experts_per_tok"),
    ],
)
def test_bad_configs_name_the_field(tmp_path: Path, config: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as error:
        import_hf_config(write(tmp_path, config))
    assert field in error.value.field


def test_unknown_model_type_lists_supported(tmp_path: Path) -> None:
    with pytest.raises(InputError) as error:
        import_hf_config(write(tmp_path, llama(model_type="rwkv")))
    for model_type in ("llama", "deepseek_v3", "qwen3_next", "nemotron_h", "mamba"):
        assert model_type in str(error.value)
    assert len(SUPPORTED_MODEL_TYPES) >= 30


@pytest.mark.parametrize(
    "content",
    [
        b"{not json",
        b"[1, 2]",
        b"\xff\xfe\x00",
        b'{"model_type": "llama", "model_type": "qwen3"}',
        b"[" * 100_000,
    ],
)
def test_malformed_files(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "config.json"
    path.write_bytes(content)
    with pytest.raises(InputError):
        import_hf_config(path)


def test_oversized_file_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    with path.open("wb") as handle:
        handle.write(b'{"model_type": "llama", "pad": "')
        handle.write(b" " * (50 * 1024 * 1024))
        handle.write(b'"}')
    with pytest.raises(InputError, match=str(MAX_CONFIG_BYTES)):
        import_hf_config(path)


def test_folder_without_config(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"holds no config\.json"):
        import_hf_config(tmp_path)


def test_hub_id_without_network_says_what_to_do() -> None:
    with pytest.raises(InputError) as error:
        import_hf_config("servebound-tests/no-such-model", offline=True)
    assert error.value.field == "source" and "download config.json" in str(error.value)


def test_unknown_formats(tmp_path: Path) -> None:
    path = write(tmp_path, llama())
    with pytest.raises(InputError, match="weight_format"):
        import_hf_config(path, weight_format="int3")
    with pytest.raises(InputError, match="kv_precision"):
        import_hf_config(path, kv_precision="fp6")


# ---------------------------------------------------------------------------------------------------
# q4_k_m: llama.cpp's per-tensor Q4_K_M mix


def test_use_more_bits_layers() -> None:
    # n = 8: n/8 = 1, 7n/8 = 7 -> layer 0, layer 7, and (i - 1) % 3 == 2 -> layers 3 and 6.
    assert [i for i in range(8) if use_more_bits(i, 8)] == [0, 3, 6, 7]
    # n = 32: 0-3, 28-31 and (i - 4) % 3 == 2 -> 6, 9, ..., 27: 16 of 32.
    assert [i for i in range(32) if use_more_bits(i, 32)] == [0, 1, 2, 3, *range(6, 28, 3), 28, 29, 30, 31]


def q4_k_m_layout(
    role: str,
    row_length: int,
    *,
    more_bits: bool = False,
    routed_experts: int = 0,
    type_70b: bool = False,
) -> BlockLayout:
    """:func:`llama_cpp_type` for Q4_K_M with the layer rule given as ``more_bits`` (attn_v: over the
    index among attention-value tensors; ffn_down: over the layer index)."""
    # use_more_bits(0, 1) holds and use_more_bits(1, 2)... pick indices that give the wanted answer.
    place = TensorPlace(
        value_index=0 if more_bits else 1,
        values=1 if more_bits else 9,
        layer=0 if more_bits else 1,
        layers=1 if more_bits else 9,
        routed_experts=routed_experts,
        type_70b=type_70b,
    )
    return llama_cpp_type("q4_k_m", role, row_length, place)


@pytest.mark.parametrize(
    ("role", "row", "options", "expected"),
    [
        ("output", 4096, {}, "q6_k"),
        ("output", 576, {}, "q8_0"),  # 576 is not a multiple of 256
        ("token_embd", 4096, {}, "q4_k"),
        ("attn_q", 4096, {}, "q4_k"),
        ("attn_v", 4096, {"more_bits": True}, "q6_k"),
        ("attn_v", 4096, {}, "q4_k"),
        ("attn_v", 8192, {"type_70b": True}, "q5_k"),
        ("attn_v", 4096, {"more_bits": True, "routed_experts": 8}, "q8_0"),
        ("attn_k", 4096, {"routed_experts": 8}, "q8_0"),
        ("attn_output", 4096, {"routed_experts": 8}, "q5_k"),
        ("attn_output", 4096, {"routed_experts": 16}, "q4_k"),
        ("attn_qkv", 5120, {}, "q5_k"),
        ("ffn_down_exps", 1536, {"more_bits": True}, "q6_k"),
        ("ffn_down", 29568, {"more_bits": True}, "q8_0"),  # 29568 = 115.5 x 256: Q6_K falls back
        ("ffn_down", 29568, {}, "q5_0"),  # Q4_K falls back to Q5_0 (29568 = 924 x 32)
        ("attn_qkv", 2880, {}, "q5_1"),  # Q5_K falls back to Q5_1
        ("ffn_up", 48, {}, "fp16"),  # not a multiple of 32 either
    ],
)
def test_q4_k_m_rule(role: str, row: int, options: dict[str, Any], expected: str) -> None:
    assert q4_k_m_layout(role, row, **options).name == expected


def test_q4_k_m_layouts_match_the_gguf_block_table() -> None:
    from gguf.constants import GGML_QUANT_SIZES, GGMLQuantizationType

    for name in ("q4_0", "q5_0", "q5_1", "q8_0", "q4_k", "q5_k", "q6_k"):
        layout = FORMATS[name]
        assert GGML_QUANT_SIZES[GGMLQuantizationType[name.upper()]] == (layout.block, layout.block_bytes)


def test_q4_k_m_eight_layers_by_hand(tmp_path: Path) -> None:
    """8 layers, hidden 256, 2 KV heads x 32, MLP 512, vocab 1000, untied: every row a multiple of 256.

    Q6_K (210 B per 256): attn_v and ffn_down in layers 0, 3, 6, 7 (use_more_bits(i, 8)) and the head:
        4 x 256 x 64 + 4 x 512 x 256 + 1000 x 256 = 65536 + 524288 + 256000 = 845824 params
        = 3304 blocks x 210 B = 693840 B.
    Q4_K (144 B per 256): q, k, o, gate, up in all 8 layers, v and down in the other 4, the embedding:
        8 x (65536 + 16384 + 65536 + 131072 + 131072) + 4 x 16384 + 4 x 131072 + 256000 = 4122624 params
        = 16104 blocks x 144 B = 2318976 B.
    f32: 2 norms x 256 per layer + final norm 256 = 4352 params = 17408 B.
    """
    imported = import_hf_config(write(tmp_path, llama(num_hidden_layers=8)), weight_format="q4_k_m")
    steps = {s.quantity: s for s in imported.steps}
    assert steps["mix.q6_k"].value == 845824
    assert steps["mix.q4_k"].value == 4122624
    assert steps["mix.f32"].value == 4352
    assert imported.total_params == 845824 + 4122624 + 4352 == 4972800
    assert "attn_v Q6_K at layers [0, 3, 6, 7]" in steps["mix.use_more_bits"].formula
    assert "ffn_down Q6_K at layers [0, 3, 6, 7]" in steps["mix.use_more_bits"].formula
    weights = imported.adapter.weights
    assert weights.embedding_bytes == 256000 / 256 * 144 == 144000
    assert weights.resident == 693840 + 2318976 + 17408 == 3030224
    assert weights.always_on_bytes == 3030224 - 144000
    assert steps["mix.bits_per_weight"].value == pytest.approx(8 * 3030224 / 4972800)  # 4.875
    assert imported.adapter.weight_precision == "q4_k_m"
    assert imported.adapter.prefill is not None and imported.adapter.prefill.linear_mode == "int8"


def test_q4_k_m_moe_down_projections_follow_the_layer(tmp_path: Path) -> None:
    """4 MoE layers: use_more_bits(i, 4) holds for 2 ((2 - 0) % 3 == 2) and 3 (>= 7 x 4 / 8 = 3).

    One expert per layer: gate, up 256 x 256 at Q4_K; down 256 x 256 at Q6_K in layers 2, 3, Q4_K in 0, 1:
    4 x 2 x 65536 x 144/256 + 2 x 65536 x 144/256 + 2 x 65536 x 210/256 = 294912 + 73728 + 107520 B.
    """
    config = llama(model_type="qwen2_moe", num_experts=8, num_experts_per_tok=2, moe_intermediate_size=256)
    weights = import_hf_config(write(tmp_path, config), weight_format="q4_k_m").adapter.weights
    assert weights.expert_bytes == 294912 + 73728 + 107520 == 476160


# Published Q4_K_M file sizes (decimal GB, rounded to 10 MB by the page). The file also holds the
# tokenizer and metadata (a few MB), so the weights land a little under; 1% allows for both.
PUBLISHED_Q4_K_M = {
    # bartowski/Meta-Llama-3.1-8B-Instruct-GGUF README: Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf 4.92GB
    # (bartowski's same-shape LLaMA3-iterative-DPO-final-Q4_K_M.gguf: 4.92GB, "about 4.83 bits per weight").
    "meta-llama__Llama-3.1-8B-Instruct": 4.92e9,
    # bartowski/Meta-Llama-3.1-70B-Instruct-GGUF README: Meta-Llama-3.1-70B-Instruct-Q4_K_M.gguf 42.52GB.
    "meta-llama__Llama-3.1-70B-Instruct": 42.52e9,
    # bartowski/Qwen_Qwen3-4B-GGUF README: Qwen3-4B-Q4_K_M.gguf 2.50GB (tied: the table is the Q6_K head).
    "Qwen__Qwen3-4B": 2.50e9,
    # bartowski/Qwen2.5-72B-Instruct-GGUF README: Qwen2.5-72B-Instruct-Q4_K_M.gguf 47.42GB. Its MLP width
    # 29568 is not a multiple of 256, so ffn_down falls back to Q5_0 / Q8_0: without the fallback ~44.7 GB.
    "Qwen__Qwen2.5-72B": 47.42e9,
}


@needs_reference
@pytest.mark.parametrize("name", sorted(PUBLISHED_Q4_K_M))
def test_q4_k_m_lands_on_published_file_sizes(name: str) -> None:
    imported = import_hf_config(ref(name), weight_format="q4_k_m")
    resident = imported.adapter.weights.resident
    assert resident == pytest.approx(PUBLISHED_Q4_K_M[name], rel=0.01)
    assert resident <= PUBLISHED_Q4_K_M[name] * 1.001  # the file is the weights plus its metadata


@needs_reference
def test_llama_8b_q4_k_m_mix() -> None:
    """Llama-3.1-8B: 16 of 32 attn_v and ffn_down at Q6_K, the head at Q6_K, the rest Q4_K: ~4.89 bits."""
    imported = import_hf_config(ref("meta-llama__Llama-3.1-8B"), weight_format="q4_k_m")
    steps = {s.quantity: s for s in imported.steps}
    # Q6_K: 16 x 4096 x 1024 (v) + 16 x 14336 x 4096 (down) + 128256 x 4096 (head)
    assert steps["mix.q6_k"].value == 16 * 4096 * 1024 + 16 * 14336 * 4096 + 128256 * 4096
    assert steps["mix.bits_per_weight"].value == pytest.approx(4.894, abs=0.001)


@needs_reference
def test_q4_k_m_counts_every_parameter_once() -> None:
    """The mix books each reference model's parameters exactly once, every matrix by its own row."""
    folders = sorted(p for p in REFERENCE.iterdir() if (p / "config.json").is_file())
    assert len(folders) >= 80  # the gathered configs, every one of which imports under the mix
    for folder in folders:
        imported = import_hf_config(folder, weight_format="q4_k_m")
        mix = [s for s in imported.steps if s.quantity.startswith("mix.")]
        booked = sum(s.value for s in mix if s.quantity not in {"mix.use_more_bits", "mix.bits_per_weight"})
        assert booked == imported.total_params, folder.name
        unlisted = [s for s in mix if "unlisted" in s.formula]
        assert not unlisted, folder.name


def test_absurd_layer_count_is_refused_quickly(tmp_path: Path) -> None:
    config = llama(num_hidden_layers=1_000_000_000)
    with pytest.raises(InputError) as info:
        import_hf_config(write(tmp_path, config))
    assert "num_hidden_layers" in info.value.field
