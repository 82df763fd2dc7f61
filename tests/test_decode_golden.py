"""The derivation's DGX Spark table and the Gemma batch-16 sanity check, computed from the adapter inputs."""

from __future__ import annotations

from typing import Any

import pytest

from servebound import Hardware, Verdict, Workload, decode
from tests.conftest import derivation_model, load_golden

CASES = load_golden("derivation_decode.toml")["case"]


@pytest.mark.parametrize("case", CASES, ids=[c["model"] for c in CASES])
def test_dgx_spark_table(case: dict[str, Any], spark: Hardware) -> None:
    result = decode(spark, derivation_model(case), Workload())
    assert result.verdict is Verdict.FLOOR_FIT
    assert result.batch_star == case["batch_star"]
    # The document rounds to whole tok/s (and to 0.1k for memory power) only after choosing the batch.
    assert result.single_session_tok_s == pytest.approx(case["single_session_tok_s"], abs=0.5)
    assert result.aggregate_tok_s == pytest.approx(case["aggregate_tok_s"], abs=0.5)
    assert result.memory_power_tok_s == pytest.approx(case["memory_power_tok_s"], abs=50)
    assert result.per_session_tok_s is not None and result.per_session_tok_s >= 20
    # b* is the largest batch clearing the floor: one more session falls below it.
    nxt = decode(spark, derivation_model(case), Workload(forced_batch=case["batch_star"] + 1))
    assert nxt.forced is not None and not nxt.forced.clears_floor


def test_single_session_by_hand(spark: Hardware) -> None:
    # Qwen3.6: W_active = 3e9 * 0.5 = 1.5 GB; K_read = 0.3268992 GB; R / (W_active + K_read).
    result = decode(spark, derivation_model(CASES[0]))
    assert result.single_session_tok_s == pytest.approx(273 / (1.5 + 0.3268992), rel=1e-12)
    # memory power: 128 * 273 / (1.025 * 1.5) * (1 - (17.5 + 8) / 128)
    assert result.memory_power_tok_s == pytest.approx(128 * 273 / (1.025 * 1.5) * (1 - 25.5 / 128), rel=1e-12)
    assert result.large_memory_limit_tok_s == pytest.approx(128 * 273 / (1.025 * 1.5), rel=1e-12)
    # b_mem = floor((128 - 17.5 - 8) / 1.025) = floor(100.0) = 100
    assert result.batch_mem == 100


def test_gemma_batch16_sanity(spark: Hardware) -> None:
    golden = load_golden("derivation_decode.toml")["gemma_batch16"]
    case = next(c for c in CASES if c["model"] == golden["model"])
    result = decode(spark, derivation_model(case), Workload(forced_batch=golden["batch"]))
    assert result.forced is not None
    aggregate = result.forced.aggregate_tok_s
    assert aggregate == pytest.approx(golden["aggregate_tok_s"], abs=0.5)
    # The document divides by the rounded aggregate (333 tok/s).
    low = golden["batch"] * golden["reported_per_session_low"] / round(aggregate)
    high = golden["batch"] * golden["reported_per_session_high"] / round(aggregate)
    assert low == pytest.approx(golden["ratio_low"], abs=0.005)
    assert high == pytest.approx(golden["ratio_high"], abs=0.005)
    assert result.forced.fits_memory
