"""`servebound fit`: per catalog model the heaviest format an engine runs on this machine that clears the
floor, largest model first; on `--hardware auto` (the default) this machine as detected."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from servebound import decode, load_hardware, make_workload
from servebound.catalog.models import list_models
from servebound.core.decode import Verdict
from servebound.inputs.engine_choice import engine_for
from tests.conftest import process_json

TOOLS = Path(__file__).parent / "data" / "device_tools"


def _fit(*args: str, path: str | None = None) -> dict:
    return process_json("fit", *args, env=None if path is None else {**os.environ, "PATH": path})


def test_fit_rtx_4090_heaviest_format_that_clears_the_floor() -> None:
    out = _fit("--hardware", "nvidia-rtx-4090")
    rows = out["models"]
    assert rows and out["models_considered"] >= len(rows) and out["engines"] == ["llama.cpp"]
    params = [row["total_params"] for row in rows]
    assert params == sorted(params, reverse=True)
    hw, workload = load_hardware("nvidia-rtx-4090"), make_workload()
    by_base: dict[str, list] = {}
    for profile in list_models():
        by_base.setdefault(profile.base_id, []).append(profile)
    for row in rows:
        # a GeForce card: the formats its usual engine runs (llama.cpp, and Ollama and LM Studio)
        assert row["engine"] == "llama.cpp" and not row["weight_format"].startswith("mlx_")
        assert row["single_session_tok_s"] >= 20
        chosen = next(p for p in by_base[row["model"]["id"]] if p.id == row["profile"])
        for other in by_base[row["model"]["id"]]:
            if other.adapter.weights.resident > chosen.adapter.weights.resident and engine_for(
                other.weight_format, "NVIDIA", "nvidia-rtx-4090", "llama.cpp"
            ):
                assert decode(hw, other.adapter, workload).verdict is not Verdict.FLOOR_FIT, other.id
    llama = next(row for row in rows if row["model"]["id"] == "llama-2-7b")
    assert llama["expected"]["engine"] == llama["engine"] or llama["expected"] is None


def test_fit_on_apple_uses_llama_cpp_or_mlx() -> None:
    rows = _fit("--hardware", "apple-m3-max-40c-48gb")["models"]
    assert {row["engine"] for row in rows} <= {"llama.cpp", "mlx"}
    assert not any(row["weight_format"] in ("fp8", "nvfp4") for row in rows)
    mlx = _fit("--hardware", "apple-m3-max-40c-48gb", "--engine", "mlx")["models"]
    assert mlx and {row["engine"] for row in mlx} == {"mlx"}


@pytest.mark.parametrize(
    ("weight_format", "vendor", "hardware", "engine"),
    [
        ("q4_k_m", None, "my-box", "llama.cpp"),
        ("mlx_4bit", "NVIDIA", "nvidia-h100-sxm", None),
        ("nvfp4", "NVIDIA", "nvidia-h100-sxm", None),
        ("nvfp4", "NVIDIA", "nvidia-b200", "vllm"),
        ("bf16", "Apple", "apple-m4-max-128gb", "mlx"),
        ("fp8", "Apple", "apple-m4-max-128gb", None),
        ("bf16", "Intel", "intel-arc-b580", None),
    ],
)
def test_engine_for(weight_format: str, vendor: str | None, hardware: str, engine: str | None) -> None:
    assert engine_for(weight_format, vendor, hardware) == engine


def test_fit_defaults_to_this_machine(tmp_path: Path) -> None:
    folder = tmp_path / "bin"
    folder.mkdir()
    tool = folder / "nvidia-smi"
    tool.write_text(f"#!/bin/sh\nexec /bin/cat '{TOOLS / 'nvidia-smi-rtx4090.csv'}'\n")
    tool.chmod(0o755)
    path = f"{folder}{os.pathsep}{Path(sys.executable).parent}"
    detected = _fit("--floor", "40", path=path)
    assert detected == _fit("--hardware", "nvidia-rtx-4090", "--floor", "40")
    assert detected["hardware"]["id"] == "nvidia-rtx-4090"


@pytest.mark.parametrize("engine", ["llama.cpp", "ollama", "lm-studio", "mlx", "vllm", "sglang", "trt-llm"])
@pytest.mark.parametrize("hardware", ["nvidia-rtx-4090", "apple-m4-max-128gb"])
def test_fit_for_every_engine_lists_the_models_it_runs(engine: str, hardware: str) -> None:
    """Every engine of the table: the formats it runs on the device's vendor (engines.toml), and only
    those; an engine that does not run on the vendor lists none."""
    from servebound.catalog.engines import format_class, get_engine
    from servebound.catalog.hardware import get_hardware
    from servebound.questions.fit import fit_models

    hw = load_hardware(hardware)
    vendor = get_hardware(hardware).vendor.casefold()
    rows, considered = fit_models(hw, vendor, list_models(), make_workload(), engine=engine)
    runs_here = {cls for cls, vendors in get_engine(engine).formats.items() if vendor in vendors}
    assert considered > 0
    if runs_here & {"gguf", "mlx", "safetensors16"}:
        assert len(rows) >= 10, (engine, hardware)
    else:
        assert rows == []
    for row in rows:
        assert row.engine == engine
        assert format_class(row.profile.weight_format) in runs_here, row.profile.id
    if engine in ("ollama", "lm-studio"):  # they run llama.cpp's files: the same models as llama.cpp
        same, _ = fit_models(hw, vendor, list_models(), make_workload(), engine="llama.cpp")
        gguf = {r.profile.base_id for r in same if format_class(r.profile.weight_format) == "gguf"}
        assert gguf <= {r.profile.base_id for r in rows}


def test_fit_engine_ollama_on_the_command_line() -> None:
    out = _fit("--hardware", "nvidia-rtx-4090", "--engine", "ollama")
    assert len(out["models"]) >= 10
    assert {row["engine"] for row in out["models"]} == {"ollama"}


def test_rank_and_fit_agree_on_the_formats_people_run() -> None:
    """On a device whose usual engine is known, rank's serving rows are fit's rows: the same profile per
    model (the heaviest format llama.cpp runs there that clears the floor)."""
    ranked = process_json("rank", "-H", "nvidia-rtx-4090")
    assert ranked["engines"] == ["llama.cpp"]
    serving = {row["model"]["id"] for row in ranked["rows"] if row["verdict"] == "floor_fit"}
    assert serving == {row["profile"] for row in _fit("--hardware", "nvidia-rtx-4090")["models"]}
    # a datacenter part has no usual engine: the releases as published
    assert (
        json.loads(
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "servebound",
                    "rank",
                    "-H",
                    "nvidia-h100-sxm",
                    "--json",
                    "--limit",
                    "1",
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )["engines"]
        == []
    )
