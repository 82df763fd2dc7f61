"""Issue 37: a checkpoint's own cache format. NVIDIA's NVFP4 checkpoints state an FP8 KV cache in their
quantization config (ModelOpt's kv_cache_quant_algo, compressed-tensors' kv_cache_scheme); an engine's
default cache (auto) follows it, so the profile's default cache does too, and the result says where it
came from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from servebound.api import decode, load_hardware, make_workload, with_kv_precision
from servebound.catalog.models import get_model, profile_ids
from servebound.errors import InputError
from servebound.importers.hf.release import release_kv_cache
from servebound.importers.hf_config import import_hf_config
from servebound.views.report import workload_assumptions

MODELS = Path(__file__).resolve().parents[1] / "src" / "servebound" / "catalog" / "data" / "models"
MODELOPT = {
    "producer": {"name": "modelopt", "version": "0.29.0"},
    "quantization": {
        "quant_algo": "NVFP4",
        "kv_cache_quant_algo": "FP8",
        "group_size": 16,
        "exclude_modules": ["lm_head"],
    },
}


def test_the_stated_cache_forms() -> None:
    scheme = {"kv_cache_scheme": {"type": "float", "num_bits": 8, "strategy": "tensor"}}
    assert release_kv_cache(scheme)[0] == "fp8"  # type: ignore[index]
    assert release_kv_cache({"quant_method": "modelopt", "kv_cache_quant_algo": "FP8"})[0] == "fp8"  # type: ignore[index]
    assert release_kv_cache({"kv_cache_scheme": None}) is None
    assert release_kv_cache({"kv_cache_quant_algo": None}) is None
    assert release_kv_cache(None) is None
    with pytest.raises(InputError, match="kv_precision"):
        release_kv_cache({"kv_cache_quant_algo": "NVFP4"})
    with pytest.raises(InputError, match="kv_precision"):
        release_kv_cache({"kv_cache_scheme": {"type": "int", "num_bits": 4}})


def test_a_modelopt_nvfp4_checkpoint_imports_with_its_fp8_cache(tmp_path: Path) -> None:
    folder = tmp_path / "Qwen3-30B-A3B-NVFP4"
    folder.mkdir()
    shutil.copy(MODELS / "Qwen__Qwen3-30B-A3B" / "config.json", folder / "config.json")
    (folder / "hf_quant_config.json").write_text(json.dumps(MODELOPT), "utf-8")
    imported = import_hf_config(folder).adapter
    base = import_hf_config(MODELS / "Qwen__Qwen3-30B-A3B").adapter
    assert imported.weight_precision == "nvfp4"
    assert (imported.kv_precision, imported.kv_bytes_per_element) == ("fp8", 1.0)
    assert imported.kv_alloc.global_bytes_per_token == base.kv_alloc.global_bytes_per_token / 2
    assert "kv_cache_quant_algo FP8" in imported.sources["kv_precision"]
    assert imported.prefill is not None and imported.prefill.attention_mode == "bf16"
    # A cache asked for wins over the stated one; another weight format is another file.
    assert import_hf_config(folder, kv_precision="bf16").adapter.kv_precision == "bf16"
    assert import_hf_config(folder, weight_format="q4_k_m").adapter.kv_precision == "bf16"
    assert base.kv_precision == "bf16" and "states no cache format" in base.sources["kv_precision"]


def test_the_catalogs_nvfp4_profiles_default_to_the_fp8_cache_their_checkpoints_state() -> None:
    nvfp4 = [pid for pid in profile_ids() if pid.endswith("-nvfp4")]
    assert len(nvfp4) > 50
    for pid in nvfp4:
        model = get_model(pid)
        adapter = model.adapter
        assert (adapter.kv_precision, adapter.kv_bytes_per_element) == ("fp8", 1.0), pid
        assert "kv_cache_quant_algo FP8" in adapter.sources["kv_precision"], pid
        native = get_model(model.base_id).adapter  # the release, at the cache it states (or BF16)
        assert native.kv_bytes_per_element is not None
        per_byte = native.kv_alloc.global_bytes_per_token / native.kv_bytes_per_element
        assert adapter.kv_alloc.global_bytes_per_token == pytest.approx(per_byte), pid


def test_laguna_s_fp8_release_states_its_fp8_cache() -> None:
    """The derivation's Laguna S 2.1: an FP8 cache, 98,304 B written per prefilled token."""
    adapter = get_model("laguna-s-2.1-fp8").adapter
    assert adapter.kv_precision == "fp8" and "kv_cache_scheme" in adapter.sources["kv_precision"]
    assert adapter.prefill is not None and adapter.prefill.kv_write_bytes_per_token == 98_304
    assert get_model("laguna-s-2.1-fp8-q4_k_m").adapter.kv_precision == "bf16"


def test_the_result_states_where_its_cache_format_comes_from() -> None:
    hardware = load_hardware("nvidia-dgx-spark")
    model = get_model("qwen3-30b-a3b-nvfp4").adapter
    result = decode(hardware, model, make_workload())
    said = workload_assumptions(result.workload, hardware=hardware, model=result.model)
    assert said["kv_precision"] == "fp8" and "kv_cache_quant_algo FP8" in said["kv_precision_source"]
    asked = with_kv_precision(model, "bf16")
    said = workload_assumptions(result.workload, hardware=hardware, model=asked)
    assert (said["kv_precision"], said["kv_precision_source"]) == ("bf16", "asked for: BF16")
