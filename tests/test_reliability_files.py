"""Issue 19's file reproducers: a FIFO where a file should be never blocks; a UTF-8 byte order mark is
accepted; read_context = 0 is allowed as --range's start is."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from servebound.errors import InputError
from servebound.inputs import bounded
from tests.conftest import run_cli as run
from tests.conftest import servebound_process
from tests.test_import_safetensors import LLAMA_CONFIG

ROOT = Path(__file__).resolve().parents[1]
HW = ROOT / "examples" / "dgx-spark.toml"
MODEL = ROOT / "examples" / "qwen3.6-35b-a3b-nvfp4.toml"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX thing")
def test_fifo_named_model_safetensors_is_refused_without_blocking(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "model.safetensors")
    (tmp_path / "config.json").write_text(json.dumps(LLAMA_CONFIG))
    for args in (
        ["import", "safetensors", str(tmp_path)],
        ["import", "safetensors", str(tmp_path / "model.safetensors")],
        ["decode", "-H", str(HW), "-m", str(tmp_path / "model.safetensors")],
    ):
        done = servebound_process(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
        assert "not a file" in done.stderr, done.stderr


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX thing")
@pytest.mark.parametrize("name", ["model.gguf", "hw.toml", "config.json"])
def test_every_reader_refuses_a_fifo(tmp_path: Path, name: str) -> None:
    fifo = tmp_path / name
    os.mkfifo(fifo)
    args = {
        "model.gguf": ["import", "gguf", str(fifo)],
        "hw.toml": ["decode", "-H", str(fifo), "-m", str(MODEL)],
        "config.json": ["import", "hf", str(fifo)],
    }[name]
    done = servebound_process(*args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("servebound: error: ") and done.stderr.count("\n") == 1, done.stderr


def test_open_regular_names_a_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"is a folder, not a file"):
        bounded.open_regular(tmp_path, "x")


def test_utf8_bom_is_accepted_in_toml_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A file saved by an editor that writes a byte order mark reads like the same file without it."""
    hw = tmp_path / "hw.toml"
    hw.write_bytes(b"\xef\xbb\xbf" + HW.read_bytes())
    model = tmp_path / "m.json"
    as_toml = bounded.parse_toml(MODEL.read_bytes(), "model")
    model.write_bytes(b"\xef\xbb\xbf" + json.dumps(as_toml).encode())
    plain = run(capsys, "decode", "-H", str(HW), "-m", str(MODEL), "--json")
    marked = run(capsys, "decode", "-H", str(hw), "-m", str(model), "--json")
    assert plain[0] == marked[0] == 0, marked[2]
    assert json.loads(plain[1])["aggregate_tok_s"] == json.loads(marked[1])["aggregate_tok_s"]
    config = tmp_path / "config.json"
    config.write_bytes(b"\xef\xbb\xbf" + json.dumps(LLAMA_CONFIG).encode())
    status, _, err = run(capsys, "import", "hf", str(config))
    assert status == 0, err
