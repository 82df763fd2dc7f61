"""One reader, one policy: duplicate keys, NaN/Infinity, deep nesting and oversized files are refused
with one line naming the field, through every entry point that opens a file (CLI exit status 2)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from servebound.errors import InputError
from servebound.inputs import bounded
from tests.conftest import run_cli as run

HW = "nvidia-dgx-spark"
MODEL = "qwen3.6-35b-a3b-nvfp4"

HARDWARE_OK = '"name": "J", "memory_gb": 128, "bandwidth_gb_per_s": 273'
MODEL_TOML_OK = (
    'name = "x"\n[weights]\nbytes_per_param = 1\ntotal_params = 1e9\n'
    "[kv.alloc]\nglobal_bytes_per_token = 1000\n"
)
CONFIG_OK = (
    '"model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, '
    '"num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 100, "max_position_embeddings": 512'
)


def refused(capsys: pytest.CaptureFixture[str], args: list[str], *words: str) -> None:
    status, _, err = run(capsys, *args)
    assert status == 2, err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    for word in words:
        assert word in err, (word, err)


def write(tmp_path: Path, name: str, data: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(data.encode() if isinstance(data, str) else data)
    return str(path)


# The policy itself --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('{"memory_gb": 1, "memory_gb": 128}', ("duplicate key 'memory_gb'",)),
        ('{"a": {"b": NaN}}', ("NaN", "not valid JSON")),
        ('{"a": [Infinity]}', ("Infinity",)),
        ('{"a": {"b": 1e999}}', ("a.b", "finite")),
        ('{"a": ' * 65 + "1" + "}" * 65, ("nested too deeply",)),
        ('{"a": 1', ("not valid JSON",)),
    ],
)
def test_json_policy(text: str, words: tuple[str, ...]) -> None:
    with pytest.raises(InputError) as raised:
        bounded.parse_json(text, "thing")
    assert str(raised.value).startswith("thing")
    for word in words:
        assert word in str(raised.value)


def test_toml_policy() -> None:
    with pytest.raises(InputError, match="not valid TOML"):
        bounded.parse_toml("a = 1\na = 2\n", "model")  # tomllib refuses duplicates itself
    with pytest.raises(InputError, match=r"model\.weights\.total_params: must be a finite number"):
        bounded.parse_toml("[weights]\ntotal_params = nan\n", "model")
    with pytest.raises(InputError, match="nested too deeply"):
        bounded.parse_toml("a = " + "[" * 70 + "]" * 70 + "\n", "model")


def test_toml_bytes_are_utf8_text() -> None:
    """parse_toml takes a file's bytes like parse_json: decoded as UTF-8, refused naming the field."""
    assert bounded.parse_toml('name = "é"\n'.encode(), "model") == {"name": "é"}
    with pytest.raises(InputError, match=r"^model: is not UTF-8 text \(invalid start byte at byte 8\)$"):
        bounded.parse_toml(b'name = "\xff"\n', "model")


def test_depth_at_the_limit_is_accepted() -> None:
    text = '{"a": ' * (bounded.MAX_DEPTH - 1) + "[1.5]" + "}" * (bounded.MAX_DEPTH - 1)
    assert bounded.parse_json(text, "thing") is not None


def test_size_cap_reads_no_more_than_the_cap(tmp_path: Path) -> None:
    path = write(tmp_path, "big.json", "[" + "1," * 100 + "1]")
    with pytest.raises(InputError, match="byte cap"):
        bounded.read_json(path, "thing", max_bytes=50)
    assert bounded.read_json(path, "thing", max_bytes=1000)[-1] == 1


# Every entry point ----------------------------------------------------------------------------------


def test_hardware_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dup = write(
        tmp_path, "dup.json", '{"name": "J", "memory_gb": 1, "memory_gb": 128, "bandwidth_gb_per_s": 273}'
    )
    refused(capsys, ["decode", "-H", dup, "-m", MODEL], "hardware", "duplicate key 'memory_gb'")
    nan = write(tmp_path, "nan.json", '{"name": "J", "memory_gb": NaN, "bandwidth_gb_per_s": 273}')
    refused(capsys, ["decode", "-H", nan, "-m", MODEL], "hardware", "NaN")
    dup_toml = write(
        tmp_path, "dup.toml", 'name = "J"\nmemory_gb = 1\nmemory_gb = 128\nbandwidth_gb_per_s = 2\n'
    )
    refused(capsys, ["decode", "-H", dup_toml, "-m", MODEL], "hardware", "not valid TOML")
    inf_toml = write(tmp_path, "inf.toml", 'name = "J"\nmemory_gb = inf\nbandwidth_gb_per_s = 2\n')
    refused(capsys, ["decode", "-H", inf_toml, "-m", MODEL], "hardware.memory_gb", "finite")
    good = write(tmp_path, "good.json", "{" + HARDWARE_OK + "}")
    assert run(capsys, "decode", "-H", good, "-m", MODEL)[0] == 0


def test_model_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dup = write(
        tmp_path,
        "dup.toml",
        MODEL_TOML_OK.replace("total_params = 1e9\n", "total_params = 1e9\ntotal_params = 2e9\n"),
    )
    refused(capsys, ["decode", "-H", HW, "-m", dup], "model", "not valid TOML")
    nan = write(tmp_path, "nan.toml", MODEL_TOML_OK.replace("1e9", "nan"))
    refused(capsys, ["decode", "-H", HW, "-m", nan], "model.weights.total_params")
    as_json = {
        "name": "x",
        "weights": {"bytes_per_param": 1, "total_params": 1e9},
        "kv": {"alloc": {"global_bytes_per_token": 1}},
    }
    text = json.dumps(as_json)
    dup_json = write(tmp_path, "dup.json", text.replace('"name": "x"', '"name": "x", "name": "y"'))
    refused(capsys, ["decode", "-H", HW, "-m", dup_json], "model", "duplicate key 'name'")
    nan_json = write(tmp_path, "nan.json", text.replace("1000000000.0", "NaN"))
    refused(capsys, ["decode", "-H", HW, "-m", nan_json], "model", "NaN")
    assert run(capsys, "decode", "-H", HW, "-m", write(tmp_path, "ok.json", text))[0] == 0


def test_config_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    dup = write(tmp_path, "config.json", "{" + CONFIG_OK + ', "hidden_size": 128}')
    refused(capsys, ["import", "hf", dup], "config.json", "duplicate key 'hidden_size'")
    nan = write(tmp_path, "config.json", "{" + CONFIG_OK + ', "rope_theta": NaN}')
    refused(capsys, ["import", "hf", nan], "config.json", "NaN")


def safetensors(header: bytes, data: bytes = b"") -> bytes:
    return struct.pack("<Q", len(header)) + header + data


def test_safetensors_header(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    entry = '{"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}'
    dup = write(
        tmp_path, "dup.safetensors", safetensors(f'{{"w": {entry}, "w": {entry}}}'.encode(), bytes(4))
    )
    refused(capsys, ["import", "safetensors", dup], "dup.safetensors", "duplicate key 'w'")
    nan = write(tmp_path, "nan.safetensors", safetensors(b'{"__metadata__": {"x": NaN}}'))
    refused(capsys, ["import", "safetensors", nan], "nan.safetensors", "NaN")


def gguf(entries: list[tuple[bytes, int, bytes]]) -> bytes:
    out = b"GGUF" + struct.pack("<IQQ", 3, 0, len(entries))
    for key, kind, value in entries:
        out += struct.pack("<Q", len(key)) + key + struct.pack("<I", kind) + value
    return out + bytes(64)


def test_gguf_metadata(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    arch = (b"general.architecture", 8, struct.pack("<Q", 5) + b"llama")
    theta = (b"llama.rope.freq_base", 6, struct.pack("<f", 10000.0))
    dup = write(tmp_path, "dup.gguf", gguf([arch, theta, theta]))
    refused(capsys, ["import", "gguf", dup], "dup.gguf", "duplicate metadata key 'llama.rope.freq_base'")
    nan = write(tmp_path, "nan.gguf", gguf([arch, (theta[0], 6, struct.pack("<f", float("nan")))]))
    refused(capsys, ["import", "gguf", nan], "nan.gguf", "llama.rope.freq_base", "finite")


def test_benchmark_result_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    record = '{"n_prompt": 0, "n_gen": 128, "avg_ts": 50.0, "avg_ts": 60.0}'
    dup = write(tmp_path, "bench.json", f"[{record}]")
    refused(capsys, ["check", "-H", HW, "-m", MODEL, "--file", dup], "duplicate key 'avg_ts'")
    nan = write(tmp_path, "bench2.json", '[{"n_prompt": 0, "n_gen": 128, "avg_ts": NaN}]')
    refused(capsys, ["check", "-H", HW, "-m", MODEL, "--file", nan], "NaN")


def test_infinity_only_where_real_configs_write_no_limit() -> None:
    # Hugging Face writes Mamba-2's unbounded limit as Infinity; servebound never reads that key.
    data = bounded.parse_json(
        '{"time_step_limit": [0.0, Infinity], "n": {"time_step_limit": -Infinity}}', "c"
    )
    assert data["time_step_limit"][1] == float("inf")
    with pytest.raises(InputError, match=r"c\.rope_theta: must be a finite number"):
        bounded.parse_json('{"rope_theta": Infinity}', "c")
    with pytest.raises(InputError, match="NaN"):
        bounded.parse_json('{"time_step_limit": [0.0, NaN]}', "c")
