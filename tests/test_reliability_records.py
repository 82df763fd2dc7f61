"""Issue 19's Python-record reproducers: a Hardware or model record with NaN, negative, zero or infinite
capacity, bandwidth, rate or size is refused at construction (decode used to answer no_floor with NaN),
and a model file whose [kv.read] exceeds its [kv.alloc] at any context is refused."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import servebound
from servebound.core.hardware import Hardware
from servebound.core.kv import KVShape
from servebound.core.model import Experts, ModelAdapter, Weights
from servebound.errors import InputError
from tests.conftest import run_cli as run

ROOT = Path(__file__).resolve().parents[1]
BAD = [math.nan, -1.0, 0.0, math.inf, -math.inf]


@pytest.mark.parametrize("value", BAD)
@pytest.mark.parametrize("field", ["memory_bytes", "bandwidth_bytes_per_s"])
def test_hardware_refuses_unreal_capacity_and_bandwidth(field: str, value: float) -> None:
    given = {"memory_bytes": 128e9, "bandwidth_bytes_per_s": 273e9} | {field: value}
    with pytest.raises(InputError, match=rf"hardware\.{field}: must be a finite number"):
        Hardware("hw", "hw", **given)


@pytest.mark.parametrize("value", BAD)
def test_hardware_refuses_unreal_compute_rates(value: float) -> None:
    with pytest.raises(InputError, match=r"hardware\.compute_flop_per_s\.bf16: must be a finite number"):
        Hardware("hw", "hw", 128e9, 273e9, {"bf16": value})


@pytest.mark.parametrize("value", [math.nan, -1.0, math.inf])
def test_hardware_refuses_unreal_overhead(value: float) -> None:
    with pytest.raises(InputError, match=r"hardware\.runtime_overhead_bytes"):
        Hardware("hw", "hw", 128e9, 273e9, runtime_overhead_bytes=value)


def test_nan_hardware_no_longer_reaches_decode() -> None:
    """The issue's case: decode answered no_floor with NaN for a NaN memory size."""
    model = servebound.load_model("llama-3.1-8b")
    with pytest.raises(InputError, match="memory_bytes"):
        servebound.decode(Hardware("hw", "hw", math.nan, 273e9), model, servebound.make_workload())


@pytest.mark.parametrize("value", [math.nan, -1.0, math.inf])
@pytest.mark.parametrize("field", ["global_bytes_per_token", "local_bytes_per_token", "state_bytes"])
def test_model_adapter_refuses_unreal_cache_sizes(field: str, value: float) -> None:
    kv = KVShape(**{"global_bytes_per_token": 1000.0, "window_tokens": 10} | {field: value})
    with pytest.raises(InputError, match=rf"model\.kv_alloc\.{field}"):
        ModelAdapter("m", "m", Weights(0, 1e9), kv, KVShape(1000.0))


@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0])
def test_weights_refuse_unreal_bytes(value: float) -> None:
    with pytest.raises(InputError, match=r"weights\."):
        Weights(value, 1e9)
    with pytest.raises(InputError, match=r"weights\.resident_bytes"):
        Weights(0, 1e9, resident_bytes=value)
    if not value < 0:
        with pytest.raises(InputError, match=r"weights\.always_on_bytes"):
            Weights(0, value)


def test_model_with_no_weights_and_bad_experts_are_refused() -> None:
    with pytest.raises(InputError, match=r"W_resident must be above 0"):
        ModelAdapter("m", "m", Weights(0, 0), KVShape(1.0), KVShape(1.0))
    with pytest.raises(InputError, match=r"experts: per_token must be between 1 and routed"):
        Experts(8, 9)


def test_kv_read_above_kv_alloc_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A step reading more cache than a session holds: 40,000 B/token at 32,000 tokens is 1.28 GB, more
    than the 10,250 B/token x 100,000 = 1.025 GB reserved."""
    text = (ROOT / "examples" / "qwen3.6-35b-a3b-nvfp4.toml").read_text()
    model = tmp_path / "m.toml"
    model.write_text(text.replace("global_bytes_per_token = 10215.6", "global_bytes_per_token = 40000"))
    status, _, err = run(capsys, "decode", "-H", str(ROOT / "examples" / "dgx-spark.toml"), "-m", str(model))
    assert status == 2 and err.count("\n") == 1, err
    assert (
        "model.kv: [kv.read] gives 1.28 GB at 32,000 tokens, more than the 0.328 GB [kv.alloc] reserves there"
        in err
    )
    # Read at exactly what is reserved per token (K_read = K_alloc at every context) is valid; a little
    # above it per token is refused, however short the contexts it is read at.
    model.write_text(text.replace("global_bytes_per_token = 10215.6", "global_bytes_per_token = 10250"))
    status, _, err = run(capsys, "decode", "-H", str(ROOT / "examples" / "dgx-spark.toml"), "-m", str(model))
    assert status == 0, err
    model.write_text(text.replace("global_bytes_per_token = 10215.6", "global_bytes_per_token = 10251"))
    status, _, err = run(capsys, "decode", "-H", str(ROOT / "examples" / "dgx-spark.toml"), "-m", str(model))
    assert status == 2 and "global 10251 against 10250 B/token" in err, err
    # The derivation's Gemma 4 example: one cache shape gives both of its printed sizes, and is valid.
    status, _, err = run(
        capsys,
        "decode",
        "-H",
        str(ROOT / "examples" / "dgx-spark.toml"),
        "-m",
        str(ROOT / "examples" / "gemma-4-26b-a4b-nvfp4.toml"),
    )
    assert status == 0, err
