from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from servebound import Experts, Hardware, KVShape, ModelAdapter, Weights

GOLDEN = Path(__file__).parent / "golden"
GB = 1e9


def load_golden(name: str) -> dict[str, Any]:
    with (GOLDEN / name).open("rb") as f:
        return tomllib.load(f)


def derivation_model(case: dict[str, Any]) -> ModelAdapter:
    """One of the derivation's illustrative MoE adapters, built from its printed inputs."""
    weights = Weights.from_params(
        bytes_per_param=case["bytes_per_param"],
        total_params=case["total_params"],
        active_params=case["active_params"],
        experts=Experts(case["routed"], case["per_token"]),
        resident_bytes=case["resident_gb"] * GB,
    )
    return ModelAdapter(
        id=case["model"].lower().replace(" ", "-"),
        name=case["model"],
        weights=weights,
        kv_alloc=KVShape(global_bytes_per_token=case["kv_alloc_gb"] * GB / 100_000),
        kv_read=KVShape(global_bytes_per_token=case["kv_read_gb"] * GB / 32_000),
    )


@pytest.fixture(scope="session")
def decode_golden() -> dict[str, Any]:
    return load_golden("derivation_decode.toml")


@pytest.fixture(scope="session")
def spark() -> Hardware:
    return Hardware("dgx-spark", "DGX Spark", 128 * GB, 273 * GB, {"fp4": 500e12, "bf16": 125e12})


def same_number(actual: object, expected: object, rel: float = 1e-12) -> bool:
    """Equal within ``rel``, or both None (a quantity that does not exist on either side)."""
    if expected is None or actual is None:
        return actual is expected
    return bool(actual == pytest.approx(expected, rel=rel))
