"""The serving-economics quantities: golden tests from the lecture's own numbers, hand checks and
invariants (tests/golden/serving_economics.toml holds the text's figures with their quotes)."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servebound.catalog.hardware import get_hardware
from servebound.core import economics as econ
from servebound.core.decode import decode
from servebound.core.experts import ExpertTraffic
from servebound.core.hardware import Hardware
from servebound.core.prefill import crossover_tokens
from servebound.core.workload import Workload
from servebound.questions.economics import lecture
from tests.conftest import load_golden
from tests.conftest import run_cli as run
from tests.test_decode_compute import dense, models

GOLDEN = load_golden("serving_economics.toml")


def test_fp4_balance_on_a_blackwell_row_is_about_300() -> None:
    g = GOLDEN["balance"]
    row = get_hardware(g["blackwell_row"]).hardware
    fp4 = row.compute_rate("fp4")
    assert fp4 is not None
    b = econ.hardware_balance(fp4, row.bandwidth_bytes_per_s, g["fp4_bytes_per_weight"])
    assert b.multiplies_per_weight == pytest.approx(fp4 * 0.5 / (2 * row.bandwidth_bytes_per_s), rel=1e-12)
    assert b.multiplies_per_weight == pytest.approx(g["approx_multiplies_per_weight"], rel=0.1)  # 281.25


def test_sparsity_8_gives_about_2400() -> None:
    g = GOLDEN["balance"]
    assert (
        econ.sparsity_balance_batch(g["approx_multiplies_per_weight"], 256, 32) == g["approx_balance_batch"]
    )
    row = get_hardware(g["blackwell_row"]).hardware
    fp4 = row.compute_rate("fp4")
    assert fp4 is not None
    own = econ.hardware_balance(fp4, row.bandwidth_bytes_per_s, 0.5).multiplies_per_weight * g["sparsity"]
    assert own == pytest.approx(g["approx_balance_batch"], rel=0.1)  # 2,250 on the row's own rates


def test_rubin_drain_time() -> None:
    g = GOLDEN["drain"]
    t = econ.drain_time_s(g["capacity_gb"] * 1e9, g["bandwidth_gb_per_s"] * 1e9)
    assert t == pytest.approx(g["time_ms"] / 1e3, rel=1e-12)


def test_trains() -> None:
    g = GOLDEN["trains"]
    s = econ.train_schedule(g["batch"], 1 / g["steps_per_s"])
    assert s.tok_s == pytest.approx(g["tok_s"], rel=1e-12)
    assert s.worst_queueing_s == pytest.approx(2 / 64, rel=1e-12)
    assert econ.train_schedule(2000, 0.020).worst_queueing_s == pytest.approx(0.040)  # "about 40 ms"


def test_kv_bytes_from_a_200k_breakpoint() -> None:
    g = GOLDEN["breakpoint"]
    row = get_hardware(GOLDEN["balance"]["blackwell_row"]).hardware
    rate = row.compute_rate(g["mode"])
    assert rate is not None
    kappa = econ.kv_bytes_per_token_from_breakpoint(
        g["active_params"], rate, row.bandwidth_bytes_per_s, g["breakpoint_tokens"]
    )
    assert kappa == pytest.approx(2 * 100e9 * 8e12 / (4.5e15 * 200_000), rel=1e-12)  # 1,778 B
    assert kappa == pytest.approx(g["approx_bytes_per_token"], rel=0.25)
    # The text's plausibility check: one global context of 8 KV heads of 128 at one byte: 2 x 128 x 8.
    assert 2 * g["d_head"] * g["kv_heads"] == g["exact_bytes"]


def test_two_months_of_traffic_and_over_training() -> None:
    g = GOLDEN["training"]
    e = econ.equal_cost(g["traffic_tok_s"], g["life_days"] * 86_400, g["active_params"])
    assert float(f"{e.inference_tokens:.2g}") == g["inference_tokens"]
    assert e.chinchilla_tokens == g["chinchilla_tokens"]
    assert e.over_training == pytest.approx(129.6, rel=1e-12)
    assert round(math.log10(e.over_training)) == round(math.log10(g["approx_over_training"]))  # ~100x
    assert e.pretrain_tokens_equal_cost == pytest.approx(e.inference_tokens / 3)  # 6 D_pre = 2 D_inf
    assert 6 * e.pretrain_tokens_equal_cost == pytest.approx(
        e.rl_flops_per_param_token / e.rl_efficiency * e.rl_tokens_equal_cost
    )


def test_price_ratio_and_tiers() -> None:
    reading = econ.price_ratio_reading(15.0, 3.0)
    assert reading.ratio == 5.0 and reading.memory_share == pytest.approx(0.8)
    names = {hold: econ.tier_for_hold_time(hold).name for hold in (0.02, 10.0, 300.0, 86_400.0)}
    assert names == {0.02: "HBM", 10.0: "host DDR", 300.0: "flash", 86_400.0: "disk"}
    drains = [t.drain_time_s for t in econ.MEMORY_TIERS]
    assert drains == sorted(drains)  # each tier down drains slower


def test_lecture_view_recomputes_each_number() -> None:
    shown = {s.name: s for s in lecture(get_hardware("nvidia-b200").hardware)}
    assert shown["drain time"].value == pytest.approx(0.0144)
    assert shown["tokens per second per system"].value == pytest.approx(128_000)
    assert "288 GB / 20 TB/s = 14.4 ms" in shown["drain time"].substituted
    assert shown["the lecture's balance batch (DeepSeek, 32 of 256 experts)"].value == 2400
    assert shown["lifetime inference tokens"].value == pytest.approx(2.592e14)


def test_continuous_balance_batch_by_hand() -> None:
    """Dense: W constant, so b = W / (R c - K) exactly; decode's integer balance batch is its ceiling."""
    model = dense()
    hw = Hardware("g", "GPU", 180e9, 8e12, {"bf16": 2.25e15})
    wl = Workload(read_context_tokens=100, alloc_context_tokens=200, floor_tok_s=1.0)
    c = (2 * 8e9 + 4 * 4096 * 32 * 101) / 2.25e15
    b = econ.balance_batch(
        model.weights, bandwidth_bytes_per_s=8e12, seconds_per_session_step=c, kv_read_bytes=131072 * 100
    )
    assert b == pytest.approx(16e9 / (8e12 * c - 131072 * 100), rel=1e-12)
    assert decode(hw, model, wl).balance_batch == math.ceil(b)
    assert (
        econ.balance_batch(
            model.weights, bandwidth_bytes_per_s=8e12, seconds_per_session_step=c, kv_read_bytes=1e9
        )
        is None
    )


@settings(max_examples=150, deadline=None)
@given(models(), st.floats(1e10, 1e14), st.floats(1e12, 1e17), st.sampled_from(list(ExpertTraffic)))
def test_weights_only_balance_is_the_prefill_crossover(
    model: Any, r: float, f: float, mode: ExpertTraffic
) -> None:
    shape = model.prefill
    c = 2 * shape.linear_active_params / f
    ours = econ.balance_batch(
        model.weights, bandwidth_bytes_per_s=r, seconds_per_session_step=c, expert_traffic=mode
    )
    theirs = crossover_tokens(model, linear_flop_per_s=f, bandwidth_bytes_per_s=r, expert_traffic=mode)
    assert ours is not None and theirs is not None
    assert ours == pytest.approx(theirs, rel=1e-9)


def test_cli_economics(capsys: Any) -> None:
    status, out, _ = run(
        capsys, "economics", "drain", "--capacity-gb", "288", "--bandwidth-gb-per-s", "20000"
    )
    assert status == 0 and "288 GB / 20 TB/s = 14.4 ms" in out
    status, out, _ = run(capsys, "economics", "trains", "--batch", "2000", "--steps-per-s", "64", "--json")
    assert status == 0 and json.loads(out)["quantities"][0]["value"] == 128_000
    status, out, _ = run(
        capsys,
        "economics",
        "training",
        "--traffic-tok-s",
        "5e7",
        "--life-days",
        "60",
        "--active-params",
        "1e11",
    )
    assert status == 0 and "259.2 trillion" in out and "129.6x" in out
    status, out, _ = run(capsys, "economics", "breakpoint", "-H", "nvidia-b200", "--active-params", "1e11",
                         "--breakpoint-tokens", "200000")  # fmt: skip
    assert status == 0 and "1,778 B" in out
    status, out, _ = run(capsys, "economics", "balance", "-H", "nvidia-b200", "-m", "llama-3.1-8b")
    assert status == 0 and "balance batch, weights only" in out
    status, out, _ = run(capsys, "economics", "cache-tier", "--hold-s", "300")
    assert status == 0 and "-> flash" in out
    status, out, _ = run(capsys, "economics", "price-ratio", "--output-usd", "15", "--input-usd", "3")
    assert status == 0 and "80%" in out
    status, out, _ = run(capsys, "economics", "lecture")
    assert status == 0 and "128,000" in out


def test_cli_economics_errors(capsys: Any) -> None:
    for args in (
        ("economics", "trains", "--batch", "2000"),
        ("economics", "drain", "--capacity-gb", "288"),
        ("economics", "training", "--traffic-tok-s", "5e7", "--life-days", "60", "--active-params", "1e11",
         "--rl-flops", "9"),
        ("economics", "price-ratio", "--output-usd", "-1", "--input-usd", "3"),
        ("economics", "breakpoint", "-H", "nvidia-rtx-3090", "--mode", "fp4", "--active-params", "1e11",
         "--breakpoint-tokens", "1000"),
    ):  # fmt: skip
        status, _, err = run(capsys, *args)
        assert status == 2 and err.startswith("servebound: error:") and "Traceback" not in err, args


def test_every_expert_balance_batch_by_hand() -> None:
    # F = 1 PFLOP/s, W_all = 100 GB, P_lin,active = 10 G, R = 1 TB/s:
    # 1e15 x 1e11 / (2 x 1e10 x 1e12) = 5,000 sessions.
    assert econ.every_expert_balance_batch(1e15, 1e11, 1e10, 1e12) == pytest.approx(5000.0, rel=1e-15)
    # With W_all = P_total e_w it is the lecture's (F e_w / 2R) x (P_total / P_active):
    # 200 G params at 0.5 B each (100 GB), 10 G active.
    lecture = econ.sparsity_balance_batch(
        econ.hardware_balance(1e15, 1e12, 0.5).multiplies_per_weight, 200e9, 10e9
    )
    assert econ.every_expert_balance_batch(1e15, 200e9 * 0.5, 10e9, 1e12) == pytest.approx(lecture, rel=1e-12)


def test_cache_tier_states_the_lectures_reading_and_takes_given_rows(capsys: Any, tmp_path: Any) -> None:
    """Issue 36: `economics cache-tier --hold-s 3600` maps an hour to flash on the built-in rows; the
    command says the lecture reads an hour as spinning disk and why the rows differ, and the tier rows
    can be given (--tiers FILE)."""
    status, out, _ = run(capsys, "economics", "cache-tier", "--hold-s", "3600")
    disk = next(t for t in econ.MEMORY_TIERS if t.name == "disk")
    text = " ".join(out.split())
    assert status == 0 and "-> flash" in text
    assert "a 1-hour cache on spinning disk" in text
    assert f"On these rows disk drains in {disk.drain_time_s / 3600:,.4g} h" in text
    status, out, _ = run(capsys, "economics", "cache-tier", "--hold-s", "3600", "--json")
    last = json.loads(out)["quantities"][-1]
    assert (last["inputs"]["tier"], last["inputs"]["lecture_tier"]) == ("flash", "disk")
    assert "spinning disk" in last["note"]
    # Rows of one's own: a disk that drains in 2,000 GB / 0.55 GB/s = 3,636 s takes the hour, as the lecture says.
    rows = tmp_path / "tiers.toml"
    rows.write_text(
        '[[tier]]\nname = "flash"\ncapacity_gb = 15360\nbandwidth_gb_per_s = 13\n'
        '[[tier]]\nname = "disk"\ncapacity_gb = 2000\nbandwidth_gb_per_s = 0.55\n'
    )
    status, out, _ = run(
        capsys, "economics", "cache-tier", "--hold-s", "3600", "--tiers", str(rows), "--json"
    )
    quantities = json.loads(out)["quantities"]
    assert [q["name"] for q in quantities[:-1]] == ["drain time of flash", "drain time of disk"]
    assert quantities[-1]["inputs"]["tier"] == "disk"
    assert quantities[-1]["value"] == pytest.approx(2000 / 0.55)
    assert "these rows" not in quantities[-1]["note"]  # the rows agree with the lecture: nothing to explain
    bad = tmp_path / "bad.toml"
    bad.write_text('[[tier]]\nname = "x"\ncapacity_gb = -1\nbandwidth_gb_per_s = 1\n')
    status, _, err = run(capsys, "economics", "cache-tier", "--hold-s", "3600", "--tiers", str(bad))
    assert status == 2 and "tiers.tier.0.capacity_gb" in err
