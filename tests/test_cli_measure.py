"""`servebound measure` writes a hardware file the other commands read, as measured estimates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from servebound.cli import main


def test_measure_writes_a_usable_hardware_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = tmp_path / "here.toml"
    status = main(["measure", "--quick", "--array-mb", "8", "--device", "cpu", "-o", str(out), "--json"])
    data = json.loads(capsys.readouterr().out)
    assert status == 0 and out.is_file()
    doc = data["hardware_file"]
    assert (
        doc["provenance"] == "measured"
        and doc["bandwidth_gb_per_s"] > 0
        and doc["compute_tflops"]["fp32"] > 0
    )
    status = main(
        [
            "decode",
            "-H",
            str(out),
            "-m",
            "smollm2-135m",
            "--alloc-context",
            "4096",
            "--read-context",
            "1024",
            "--json",
        ]
    )
    result = json.loads(capsys.readouterr().out)
    assert status == 0 and result["assumptions"]["reading"] == "estimate"
    assert result["assumptions"]["bandwidth_source"] == "measured"
    status = main(["measure", "--quick", "--array-mb", "8", "-o", str(out)])
    assert status == 2 and "output" in capsys.readouterr().err  # no silent overwrite


def test_measure_bad_input(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["measure", "--device", "tpu9"]) == 2
    assert "device" in capsys.readouterr().err
    assert main(["measure", "--array-mb", "-1"]) == 2
    assert "array_mb" in capsys.readouterr().err
