"""`servebound layout`, `plan` and `decode --layout` end to end: the real entry point, JSON fields, errors."""

from __future__ import annotations

import functools
import json
import math

import pytest

from servebound.cli import main
from servebound.core.plan import plan_fleet
from tests.conftest import run_cli as run
from tests.conftest import run_json


def test_layout_json_lists_every_layout_best_first(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "layout", "-H", "nvidia-gb200-nvl72", "-m", "deepseek-v3", "--json")
    layouts = data["layouts"]
    assert len(layouts) > 100
    for entry in layouts:
        for key in (
            "layout",
            "verdict",
            "batch_star",
            "aggregate_tok_s",
            "per_session_tok_s",
            "bound_by",
            "per_device",
        ):
            assert key in entry
        assert set(entry["per_device"]) >= {"weight_bytes", "kv_bytes", "free_bytes"}
    fits = [e["aggregate_tok_s"] for e in layouts if e["verdict"] == "floor_fit"]
    assert fits == sorted(fits, reverse=True)
    assert data["system"]["interconnect"]["scale_up_devices"] == 72
    assert data["system"]["interconnect"]["sources"]["scale_up_gb_per_s"]


def test_decode_layout_adds_the_contract_fields(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(
        capsys,
        "decode",
        "-H",
        "2x-nvidia-rtx-3090",
        "-m",
        "llama-3.1-70b-q4_k_m",
        "--layout",
        "tp=2",
        "--overhead-gb",
        "2",
        "--alloc-context",
        "8000",
        "--read-context",
        "4000",
        "--batch",
        "2",
        "--json",
    )
    assert data["layout"]["tp"] == 2 and data["layout"]["dp"] == 1
    assert data["bound_by"] in ("memory", "compute", "communication")
    assert data["communication_time_s"] > 0
    assert set(data["per_device"]) >= {"weight_bytes", "kv_bytes", "free_bytes"}
    assert data["forced"]["batch"] == 2
    # the all-reduce by hand at b*: 80 layers x 2 x (b d 2 bytes) / 32 GB/s
    assert data["all_reduce_time_s"] == pytest.approx(
        80 * 2 * data["batch_star"] * 8192 * 2 / 32e9, rel=1e-12
    )


def test_nx_system_without_a_link_says_ideal(capsys: pytest.CaptureFixture[str]) -> None:
    data = run_json(capsys, "layout", "-H", "3x-amd-mi300x", "-m", "qwen3-30b-a3b", "--json")
    assert data["system"]["interconnect"]["ideal"] is True
    assert "ideal upper bound" in data["assumptions"]["interconnect"]
    assert all(e["communication_time_s"] in (0, None) for e in data["layouts"])


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--layout", "tp=3"], "tp=3 must divide the 64 query heads"),
        (["--layout", "ep=2"], "ep=2 needs routed experts"),
        (["--layout", "tp=16"], "needs 16 devices"),
        (["--layout", "xx=2"], "is not KEY=N"),
        (["--layout", "tp=0"], "at least 1"),
    ],
)
def test_bad_layouts_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    status, _, err = run(capsys, "decode", "-H", "8x-nvidia-h100-sxm", "-m", "llama-3.1-70b", *args)
    assert status == 2
    assert needle in err and err.count("\n") == 1 and "Traceback" not in err


#: One fleet plan's system and model.
PLAN = ("plan", "-H", "8x-nvidia-h100-sxm", "-m", "llama-3.1-70b")


def test_plan_json_shows_every_step(capsys: pytest.CaptureFixture[str]) -> None:
    traffic = ["--prompt", "2000", "--output-tokens", "500", "--requests-per-s", "10"]
    data = run_json(capsys, *PLAN, *traffic, "--ttft-budget", "2", "--usd-per-hour", "2.5", "--json")
    names = [s["name"] for s in data["steps"]]
    for name in ("concurrent_sessions", "decode_systems", "prefill_systems", "shared_systems", "ttft_s"):
        assert name in names
    assert data["pools"]["shared"]["devices"] == 8 * data["pools"]["shared"]["systems"]
    assert data["ttft_ok"] is True
    assert data["assumptions"]["alloc_context_tokens"] == 2500


def test_plan_needs_one_traffic_measure(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, *PLAN, "--prompt", "100", "--output-tokens", "10")
    assert status == 2 and "--users N or --requests-per-s X" in err


def test_plan_arithmetic_by_hand() -> None:
    """10 req/s of 500 output tokens at 50 tok/s per session: 100 sessions (Little's law). A system holds
    40, so 3 decode systems. Prefill: 2 prompts of 2000 tokens per 0.1 s = 40,000 tok/s per system
    against 20,000 tok/s of demand: 1 prefill system. Shared: ceil(0.5 + 2.5) = 3."""
    fleet = functools.partial(
        plan_fleet,
        sessions_per_system=40,
        per_session_tok_s=50,
        prefill_s=0.1,
        prefill_parallel_prompts=2,
        prompt_tokens=2000,
        output_tokens=500,
        devices_per_system=8,
    )
    plan = fleet(requests_per_s=10, usd_per_device_hour=2.0)
    assert plan.concurrent_sessions == pytest.approx(100)
    assert plan.decode_systems == 3 and plan.prefill_systems == 1
    assert plan.separate_systems == 4 and plan.shared_systems == 3
    assert plan.output_tok_s == pytest.approx(5000)
    assert plan.usd_per_hour_shared == pytest.approx(3 * 8 * 2.0)
    assert plan.usd_per_mtok_output_shared == pytest.approx(48 / (5000 * 3600) * 1e6)
    users = fleet(users=100)
    assert users.request_rate_per_s == pytest.approx(100 * 50 / 500)
    assert math.isclose(users.concurrent_sessions, 100)


def test_prefill_layout_charges_the_all_reduce_by_hand(capsys: pytest.CaptureFixture[str]) -> None:
    """4,096 prompt tokens through TP = 2 over PCIe 4.0 x16: 80 layers x 2 all-reduces x 1 x
    (4096 x 8192 x 2 bytes) / 32 GB/s = 335.54 ms of link time, added to the replica's prefill."""
    args = ["prefill", "-H", "2x-nvidia-rtx-3090", "-m", "llama-3.1-70b-q4_k_m", "--prompt", "4096"]
    args += ["--overhead-gb", "1", "--alloc-context", "8192", "--layout", "tp=2", "--json"]
    data = run_json(capsys, *args)
    assert data["all_reduce_time_s"] == pytest.approx(80 * 2 * 4096 * 8192 * 2 / 32e9, rel=1e-12)
    assert data["layout"]["label"] == "tp=2,ep=1,pp=1,dp=1"
    assert data["tok_s"] == pytest.approx(4096 / data["time_s"])
    pooled_args = [a for a in args if a not in ("--layout", "tp=2")]
    status, out, _ = run(capsys, *pooled_args)
    assert status == 0 and data["tok_s"] <= json.loads(out)["tok_s"]


def test_cost_layout_prices_the_layouts_tokens(capsys: pytest.CaptureFixture[str]) -> None:
    """cost --layout: USD per million output tokens = price per hour / (dp pp b / tau x 3600) x 1e6."""
    data = run_json(
        capsys, "cost", "-H", "8x-nvidia-h100-sxm", "-m", "llama-3.1-70b", "--layout", "tp=8",
        "--usd-per-hour", "20", "--batches", "1,4,16", "--json",
    )  # fmt: skip
    assert data["usd_per_hour"] == 20 and data["layout"]["tp"] == 8
    assert [p["batch"] for p in data["points"]] == [1, 4, 16]
    for p in data["points"]:
        assert p["tok_s"] == pytest.approx(p["sessions"] / p["token_time_s"])
        assert p["usd_per_mtok_output"] == pytest.approx(20 / (p["tok_s"] * 3600) * 1e6)
    costs = [p["usd_per_mtok_output"] for p in data["points"]]
    assert costs == sorted(costs, reverse=True)


def test_layouts_charge_the_compute_roof_unless_memory_only(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["layout", "-H", "8x-nvidia-h100-sxm", "-m", "llama-3.1-8b", "--json"]
    charged = run_json(capsys, *base)
    assert charged["assumptions"]["compute"].startswith("charged")
    assert all(e["compute_time_s"] is not None for e in charged["layouts"] if e["batch_star"])
    status, out, _ = run(capsys, *base, "--memory-only")
    assert status == 0
    free = {e["layout"]["label"]: e for e in json.loads(out)["layouts"]}
    for e in charged["layouts"]:
        other = free[e["layout"]["label"]]
        if e["single_session_tok_s"] and other["single_session_tok_s"]:
            assert e["single_session_tok_s"] <= other["single_session_tok_s"] * (1 + 1e-12)


def test_plan_prices_from_the_catalog_rental(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["plan", "-H", "8x-nvidia-h100-sxm", "-m", "llama-3.1-70b", "--prompt", "2000"]
    data = run_json(capsys, *args, "--output-tokens", "500", "--requests-per-s", "10", "--json")
    assert data["price_source"].startswith("catalog on-demand rental")
    shared = data["pools"]["shared"]
    assert shared["usd_per_hour"] == pytest.approx(shared["systems"] * 8 * 4.29)


def test_layouts_take_the_rows_overhead_as_decode_does(capsys: pytest.CaptureFixture[str]) -> None:
    """Left to the hardware, O is the system row's (8 x the H100's 10 %) in layout and plan as in decode:
    tp = 8 on the HGX board, whose link never binds here, gives decode's own b* and aggregate."""
    pair = ("-H", "8x-nvidia-h100-sxm", "-m", "llama-3.1-70b", "--json")
    _, out, _ = run(capsys, "decode", *pair)
    plain = json.loads(out)
    _, out, _ = run(capsys, "layout", *pair)
    layouts = json.loads(out)
    best = layouts["layouts"][0]
    assert (best["layout"]["tp"], best["layout"]["pp"], best["layout"]["dp"]) == (8, 1, 1)
    assert best["batch_star"] == plain["batch_star"]
    assert best["aggregate_tok_s"] == pytest.approx(plain["aggregate_tok_s"], rel=1e-9)
    source = layouts["assumptions"]["overhead_source"]
    assert (
        source.startswith("hardware row: 8 x the member's")
        and source == plain["assumptions"]["overhead_source"]
    )
    assert layouts["assumptions"]["overhead_gb_per_device"] == pytest.approx(
        plain["assumptions"]["overhead_gb"] / 8
    )
    _, out, _ = run(capsys, "layout", *pair, "--overhead-gb", "8")
    assert json.loads(out)["assumptions"]["overhead_gb_per_device"] == pytest.approx(1.0)


def test_plan_serves_n_users_at_the_speed_of_n_sessions(capsys: pytest.CaptureFixture[str]) -> None:
    """50 users on one 8x H100 (tp=8 holds 662 sessions at 48.0 tok/s each) run at the speed of 50
    sessions, about 249 tok/s each, and cost about 0.76 USD per million output tokens. (The FP8 profile
    keeps embedding and head in BF16, as the released checkpoints do: 72.66 GB of weights.)"""
    traffic = ["--users", "50", "--prompt", "2000", "--output-tokens", "500"]
    assert (
        main(["plan", "-H", "8x-nvidia-h100-sxm", "-m", "llama-3.3-70b-instruct-fp8", *traffic, "--json"])
        == 0
    )
    plan = json.loads(capsys.readouterr().out)
    assert plan["layout"]["sessions"] == 662 and plan["layout"]["per_session_tok_s"] == pytest.approx(
        48.0, abs=0.05
    )
    served = plan["served"]
    assert served["sessions_per_system"] == 50 and served["batch"] == 50 and served["clears_floor"] is True
    # the same layout at 50 sessions, as cost --layout prices it at the plan's contexts (L + G, L + G/2)
    cost = ["cost", "-H", "8x-nvidia-h100-sxm", "-m", "llama-3.3-70b-instruct-fp8", "--layout", "tp=8"]
    assert (
        main([*cost, "--batches", "50", "--alloc-context", "2500", "--read-context", "2250", "--json"]) == 0
    )
    (point,) = json.loads(capsys.readouterr().out)["points"]
    assert served["per_session_tok_s"] == pytest.approx(point["per_session_tok_s"], rel=1e-12)
    assert served["per_session_tok_s"] == pytest.approx(249.5, abs=0.5)
    assert plan["output_tok_s"] == pytest.approx(50 * served["per_session_tok_s"])
    assert plan["pools"]["shared"]["usd_per_mtok_output"] == pytest.approx(0.764, abs=0.005)
    assert main(["plan", "-H", "8x-nvidia-h100-sxm", "-m", "llama-3.3-70b-instruct-fp8", *traffic]) == 0
    text = capsys.readouterr().out
    assert "serving 50 sessions per system (micro-batch 50) at 249 tok/s each" in text
    # one system, eight devices: counted in words people read ("1 system", not "1 systems")
    assert text.rstrip().endswith("separate pools: 2 systems (16 devices); shared pool: 1 system (8 devices)")


def test_plan_from_a_request_rate_finds_the_served_batch(capsys: pytest.CaptureFixture[str]) -> None:
    """From lambda, N = lambda G / r and r depends on N: the plan's N and r satisfy both at once."""
    args = ["plan", "-H", "8x-nvidia-h100-sxm", "-m", "llama-3.3-70b-instruct-fp8", "--requests-per-s", "20"]
    assert main([*args, "--prompt", "2000", "--output-tokens", "500", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    served = plan["served"]
    assert plan["concurrent_sessions"] == pytest.approx(20 * 500 / served["per_session_tok_s"])
    assert served["batch"] == math.ceil(plan["concurrent_sessions"])
    assert served["per_session_tok_s"] > plan["layout"]["per_session_tok_s"]
