"""Cost per token: hand checks, pricing from the catalog and the flags, the CLI's JSON, invariants."""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servebound.catalog.hardware import load_hardware_catalog
from servebound.catalog.hardware_schema import DeviceRow
from servebound.catalog.lint import device_problems
from servebound.core.cost import HOURS_PER_YEAR, OwnedCost, cost_curve, usd_per_mtok
from servebound.core.decode import step_curve
from servebound.core.hardware import Hardware
from servebound.core.workload import Workload
from servebound.errors import InputError
from servebound.inputs.pricing import OwnedInputs, catalog_price, resolve_price
from tests.conftest import run_cli as run
from tests.conftest import run_json
from tests.test_decode_compute import dense, machines, models, workloads


def test_usd_per_mtok_by_hand() -> None:
    # 3.6 USD/h is 0.001 USD/s; a 10 ms step of 100 tokens costs 1e-5 USD, 0.1 USD per million.
    assert float(usd_per_mtok(3.6, 0.01, 100)) == pytest.approx(0.1, rel=1e-12)


def test_owned_cost_by_hand() -> None:
    owned = OwnedCost(
        purchase_usd=30_000, amortization_years=3, utilization=0.5, power_w=700, usd_per_kwh=0.1
    )
    assert owned.capital_usd_per_hour == pytest.approx(30_000 / (3 * HOURS_PER_YEAR * 0.5))
    assert owned.power_usd_per_hour == pytest.approx(0.07)
    assert owned.usd_per_hour == pytest.approx(30_000 / (3 * HOURS_PER_YEAR * 0.5) + 0.07)


def test_catalog_rental_and_systems_multiply() -> None:
    catalog = load_hardware_catalog()
    one = catalog.get("nvidia-h100-sxm")
    eight = catalog.get("8x-nvidia-h100-sxm")
    assert one.price.rental_usd_per_hour == 4.29 and one.price.rental_provider
    assert eight.price.rental_usd_per_hour == pytest.approx(8 * 4.29)
    assert eight.price.board_power_w == pytest.approx(8 * 700)
    price = resolve_price(eight.hardware, eight.price)
    assert price.basis == "rental" and price.usd_per_hour == pytest.approx(34.32)
    assert "Lambda" in price.source


def test_override_owned_and_errors() -> None:
    catalog = load_hardware_catalog()
    b200 = catalog.get("nvidia-b200")
    assert resolve_price(b200.hardware, b200.price, usd_per_hour=2.0).usd_per_hour == 2.0
    owned = resolve_price(b200.hardware, b200.price, pricing="owned")
    expected = 40_000 / (3 * HOURS_PER_YEAR * 1.0) + 1000 / 1000 * 0.15
    assert owned.basis == "owned" and owned.usd_per_hour == pytest.approx(expected)
    assert owned.assumptions["power_counted"] is True
    no_price = catalog.get("nvidia-gb200")
    with pytest.raises(InputError, match="--usd-per-hour"):
        resolve_price(no_price.hardware, no_price.price)
    with pytest.raises(InputError, match="utilization"):
        resolve_price(b200.hardware, b200.price, pricing="owned", owned=OwnedInputs(utilization=1.5))
    assert catalog_price("examples/dgx-spark.toml") is None


def test_lint_requires_price_sources() -> None:
    row = DeviceRow.model_validate(
        {
            "id": "x",
            "name": "X",
            "vendor": "V",
            "class": "datacenter GPU",
            "memory_gb": 80,
            "memory_type": "HBM3",
            "bandwidth_gb_per_s": 3350,
            "sources": {"memory_gb": "s", "bandwidth_gb_per_s": "s"},
            "price": {"rental_usd_per_hour": 2.5, "board_power_w": 700},
        }
    )
    problems = device_problems(row)
    assert any("rental_provider" in p for p in problems)
    assert any("board_power_source" in p for p in problems)


def test_cost_floor_and_latency_floor_by_hand() -> None:
    model = dense()
    hw = Hardware("g", "GPU", 180e9, 8e12, {"bf16": 2.25e15})
    wl = Workload(read_context_tokens=100, alloc_context_tokens=200, floor_tok_s=1.0)
    c = cost_curve(hw, model, wl, [1, 10, 1000], 3.6)
    per_session_compute = (2 * 8e9 + 4 * 4096 * 32 * 101) / 2.25e15
    assert c.floor_compute_s_per_token == pytest.approx(per_session_compute)
    assert c.floor_kv_s_per_token == pytest.approx(131072 * 100 / 8e12)
    assert c.floor_usd_per_mtok == pytest.approx(0.001 * per_session_compute * 1e6)
    assert c.latency_floor_s == pytest.approx(16e9 / 8e12)
    assert np.all(c.usd_per_mtok_output >= c.floor_usd_per_mtok * (1 - 1e-12))


@settings(max_examples=200, deadline=None)
@given(models(), machines, workloads(), st.integers(2, 100_000), st.floats(0.01, 1000))
def test_cost_per_token_never_rises_with_batch(
    model: Any, hw: Hardware, wl: Workload, top: int, usd: float
) -> None:
    batches = np.unique(np.geomspace(1, top, 48).astype(np.int64))
    c = cost_curve(hw, model, wl, batches, usd)
    assert np.all(np.diff(c.usd_per_mtok_output) <= 1e-9 * c.usd_per_mtok_output[:-1])
    steps = step_curve(hw, model, wl, batches)
    np.testing.assert_allclose(c.usd_per_mtok_output, usd / 3600 / steps.tok_s * 1e6, rtol=1e-12)


def test_cli_cost_json_keys(capsys: Any) -> None:
    data = run_json(
        capsys, "cost", "-H", "nvidia-b200", "-m", "llama-3.1-8b", "--read-context", "100",
        "--alloc-context", "200", "--floor", "1", "--json",
    )  # fmt: skip
    assert {"points", "balance_batch", "usd_per_hour", "price_source", "assumptions"} <= set(data)
    assert data["usd_per_hour"] == 6.99 and data["balance_batch"] is not None
    keys = {
        "batch",
        "step_time_s",
        "tok_s",
        "per_session_tok_s",
        "bound_by",
        "usd_per_mtok_output",
        "fits_in_memory",
    }
    assert all(set(p) == keys for p in data["points"])
    batches = [p["batch"] for p in data["points"]]
    assert data["balance_batch"] in batches and data["batch_star"] in batches
    assert batches[0] == 1 and batches[-1] == data["batch_mem"]
    assert any(p["bound_by"] == "compute" for p in data["points"])
    costs = [p["usd_per_mtok_output"] for p in data["points"]]
    assert all(later <= earlier * (1 + 1e-12) for earlier, later in itertools.pairwise(costs))


def test_cli_cost_errors(capsys: Any) -> None:
    status, _, err = run(capsys, "cost", "-H", "nvidia-gb200", "-m", "llama-3.1-8b")
    assert status == 2 and "--usd-per-hour" in err and "Traceback" not in err
    status, _, err = run(capsys, "cost", "-H", "nvidia-b200", "-m", "llama-3.1-8b", "--batches", "1,x")
    assert status == 2 and "batches" in err
    status, out, _ = run(
        capsys, "cost", "-H", "nvidia-gb200", "-m", "llama-3.1-8b", "--usd-per-hour", "10", "--batches", "1,4",
        "--json",
    )  # fmt: skip
    assert status == 0 and [p["batch"] for p in json.loads(out)["points"]] == [1, 4]
