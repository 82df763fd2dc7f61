"""servebound.runs.validation: the shipped reported runs, the summary arithmetic, and the file's rules."""

from __future__ import annotations

from typing import Any

import pytest

from servebound.catalog.models import profile_ids
from servebound.errors import InputError
from servebound.runs.evaluated import ReportedRun
from servebound.runs.reported import load_reported_runs, parse_reported_runs
from servebound.runs.validation import (
    efficiency_stats,
    evaluate_reported_runs,
    format_summary,
    reported_runs_for,
    validation_json,
    validation_summary,
)


@pytest.fixture(scope="module")
def shipped() -> tuple[ReportedRun, ...]:
    return evaluate_reported_runs()


def entry(**changes: Any) -> dict[str, Any]:
    """A tg128 run of Llama 2 7B Q4_0 on an RTX 4090 (catalog: R = 1008 GB/s)."""
    base: dict[str, Any] = {
        "id": "toy-run",
        "hardware": "nvidia-rtx-4090",
        "model": "llama-2-7b-q4_0",
        "engine": "llama.cpp",
        "engine_version": "test",
        "quantization": "Q4_0",
        "metric": "per_session_tok_s",
        "measured": 100.0,
        "read_context": 64,
        "alloc_context": 128,
        "metric_definition": "tg128",
        "context_definition": "mean read 64",
        "source_url": "https://example.org/run",
        "source_quote": "100 t/s",
        "source_kind": "primary",
    }
    base.update(changes)
    return base


# Ceiling of the toy entry by hand: W_active = always_on bytes of the Q4_0 file = 3,751,337,984
# (linear 3,642,753,024 + output Q6_K 107,520,000 + norms 1,064,960); K_read(64) = 64 x 524,288
# = 33,554,432; r(1) = 1008e9 / (3,751,337,984 + 33,554,432) = 266.32 tok/s.
CEILING = 1008e9 / (3_751_337_984 + 64 * 524_288)


def test_hand_made_set_counts_and_quantiles() -> None:
    fractions = [0.2, 0.4, 0.6, 0.8, 1.2]
    entries = parse_reported_runs(
        {
            "run": [
                entry(id=f"run-{i}", measured=f * CEILING, explanation="toy") for i, f in enumerate(fractions)
            ]
        }
    )
    runs = evaluate_reported_runs(entries)
    assert [r.efficiency for r in runs] == pytest.approx(fractions)
    summary = validation_summary(runs)
    # sorted 0.2 0.4 0.6 0.8 1.2: quartiles at positions 1, 2, 3 of 0..4 (linear interpolation)
    assert (summary.total, summary.at_or_below) == (5, 4)
    assert summary.overall.p25 == pytest.approx(0.4)
    assert summary.overall.median == pytest.approx(0.6)
    assert summary.overall.p75 == pytest.approx(0.8)
    assert (summary.overall.min, summary.overall.max) == pytest.approx((0.2, 1.2))
    assert summary.overall.at_or_below_rate == pytest.approx(0.8)
    assert list(summary.by_engine) == ["llama.cpp"] and list(summary.by_hardware_family) == ["consumer GPU"]
    assert [r.entry.id for r in summary.above] == ["run-4"]


def test_efficiency_stats_by_hand() -> None:
    stats = efficiency_stats([0.5, 1.0, 0.25, 0.75])
    # sorted 0.25 0.5 0.75 1.0: p25 at position 0.75 -> 0.25 + 0.75 x 0.25 = 0.4375; median 0.625
    assert (stats.p25, stats.median, stats.p75) == pytest.approx((0.4375, 0.625, 0.8125))
    assert stats.at_or_below == 4
    with pytest.raises(InputError):
        efficiency_stats([])


def test_above_ceiling_without_explanation_is_rejected() -> None:
    entries = parse_reported_runs({"run": [entry(measured=2 * CEILING)]})
    with pytest.raises(InputError) as err:
        evaluate_reported_runs(entries)
    assert err.value.field == "reported run toy-run: explanation"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"colour": "red"}, "reported_runs.toml: run.0.colour"),
        ({"source_url": "a blog"}, "reported_runs.toml: run.0.source_url"),
        ({"metric": "speed"}, "reported_runs.toml: run.0.metric"),
        ({"measured": -1.0}, "reported_runs.toml: run.0.measured"),
        ({"read_context": None}, "reported_runs.toml: run.0"),
    ],
)
def test_bad_entries_name_the_field(change: dict[str, Any], field: str) -> None:
    raw = entry(**change)
    raw = {k: v for k, v in raw.items() if v is not None}
    with pytest.raises(InputError) as err:
        parse_reported_runs({"run": [raw]})
    assert err.value.field == field


def test_duplicate_ids_are_rejected() -> None:
    with pytest.raises(InputError, match="duplicate id"):
        parse_reported_runs({"run": [entry(), entry()]})


def test_shipped_runs_have_sources_and_explanations(shipped: tuple[ReportedRun, ...]) -> None:
    entries = load_reported_runs()
    assert len(entries) >= 20
    for run in shipped:
        e = run.entry
        assert e.source_url and e.source_quote.strip(), e.id
        assert e.metric_definition.strip() and e.context_definition.strip(), e.id
        if not run.at_or_below:
            assert e.explanation and len(e.explanation) > 40, e.id
    # every run sits at or below its ceiling (a run above would carry its explanation)
    assert all(r.at_or_below for r in shipped)
    assert {r.entry.source_kind for r in shipped} >= {"primary", "secondary"}


def test_shipped_summary(shipped: tuple[ReportedRun, ...]) -> None:
    summary = validation_summary(shipped)
    assert summary.total == len(shipped)
    assert summary.at_or_below == sum(r.at_or_below for r in shipped)
    assert sum(s.count for s in summary.by_engine.values()) == summary.total
    assert sum(s.count for s in summary.by_hardware_family.values()) == summary.total
    assert sum(s.count for s in summary.by_model_family.values()) == summary.total
    assert summary.overall.min <= summary.overall.p25 <= summary.overall.median <= summary.overall.p75
    out = validation_json(summary)
    assert out["total"] == summary.total and len(out["runs"]) == summary.total
    assert {
        "efficiency",
        "by_engine",
        "by_hardware_family",
        "by_phase",
        "by_model_family",
        "at_or_below_rate",
    } <= set(out)


def test_validate_has_no_run_above_its_ceiling_and_none_excluded(shipped: tuple[ReportedRun, ...]) -> None:
    """Issue 37: with GB10's derived dense rates, every shipped run sits at or below its ceiling, and no
    run is left out of the bands to get there."""
    summary = validation_summary(shipped)
    assert summary.above == () and summary.at_or_below == summary.total
    out = validation_json(summary)
    assert (out["above"], out["excluded_from_bands"]) == (0, 0)
    bands = out["bands"]
    assert sum(b["runs"] for b in bands) == sum(1 for r in shipped if _banded(r))
    for band in bands:
        if band["band"]:
            assert band["runs"] >= 5 and band["slope"] >= 0 and band["fixed_ms_per_token"] >= 0
        else:
            assert band["runs"] < 5 and band["why_no_band"].startswith("fewer than 5")
        if band["leave_one_out_evaluated"]:
            assert 0 <= band["leave_one_out_coverage"] <= 1 and band["median_width"] >= 1
    text = format_summary(summary)
    assert "0 above, 0 excluded from the bands" in text.splitlines()[0]
    assert "median p90/p10" in text and "fewer than 5: no band" in text


def _banded(run: ReportedRun) -> bool:
    """A run some band group holds: decode at concurrency 1 or prefill, on a catalog row."""
    from servebound.runs.band_fit import group_key

    return group_key(run.entry) is not None


def test_pair_lookup(shipped: tuple[ReportedRun, ...]) -> None:
    pair = reported_runs_for("nvidia-rtx-4090", "llama-2-7b-f16", shipped)
    assert {r.entry.id for r in pair} == {
        "llamacpp-pr4766-rtx-4090-codellama-7b-f16-pp512",
        "llamacpp-pr4766-rtx-4090-codellama-7b-f16-tg128",
    }
    assert reported_runs_for("nvidia-rtx-4090", "no-such-model", shipped) == ()


def test_every_run_names_a_catalog_profile(shipped: tuple[ReportedRun, ...]) -> None:
    """Runs resolve to the catalog profile of the file that was run (no model files of their own)."""
    profiles = set(profile_ids())
    assert {r.entry.model for r in shipped} <= profiles
    # 3.56 GiB as llama-bench prints it: 3,825,065,984 bytes / 2^30 = 3.5624
    q4 = next(r for r in shipped if r.entry.model == "llama-2-7b-q4_0")
    assert q4.check.model.id == "llama-2-7b-q4_0"
    assert q4.check.model.weights.resident / 2**30 == pytest.approx(3.5624, abs=1e-4)


def test_shipped_runs_span_the_machines_people_run_on(shipped: tuple[ReportedRun, ...]) -> None:
    # Issue 11: at least 150 sourced runs over Apple, consumer NVIDIA/AMD, DGX Spark, Strix Halo and
    # datacenter GPUs, decode and prefill, batch 1 and batched.
    assert len(shipped) >= 150
    hardware = {r.entry.hardware for r in shipped}
    assert any(h.startswith("apple-") for h in hardware)
    assert {"nvidia-dgx-spark", "amd-ryzen-ai-max-plus-395-128gb", "amd-radeon-rx-7900-xtx"} <= hardware
    assert {"nvidia-h100-sxm", "amd-mi300x"} <= hardware
    assert {r.hardware_family for r in shipped} >= {"consumer GPU", "datacenter GPU", "unified-memory SoC"}
    phases = {(r.check.run.phase.value, r.entry.concurrency > 1) for r in shipped}
    assert phases == {("decode", False), ("decode", True), ("prefill", False), ("prefill", True)}
    for run in shipped:
        assert run.entry.engine_version.strip() and run.entry.source_quote.strip(), run.entry.id


def test_minimum_expert_traffic_raises_a_batched_moe_ceiling() -> None:
    """llama-batched-bench sends every sequence the same token: all route to the same k experts, so the
    run is charged W_batch(b) = always-on + k experts (minimum), not the uniform-routing m(b)."""
    base = entry(
        id="moe",
        hardware="nvidia-dgx-spark",
        model="qwen3-30b-a3b-q8_0",
        metric="aggregate_tok_s",
        measured=100.0,
        concurrency=8,
        read_context=528,
        alloc_context=544,
    )
    expected, minimum = evaluate_reported_runs(
        parse_reported_runs({"run": [base, {**base, "id": "moe-min", "expert_traffic": "minimum"}]})
    )
    assert expected.check.reading == "estimate"
    # minimum traffic moves fewer expert bytes per step, so its ceiling is higher
    assert minimum.check.ceiling_tok_s > expected.check.ceiling_tok_s
    with pytest.raises(InputError, match="expert_traffic"):
        parse_reported_runs({"run": [{**base, "expert_traffic": "uniform"}]})


def test_fp16_accumulate_mode_doubles_a_geforce_f16_prefill_ceiling() -> None:
    f16 = entry(
        id="f16",
        model="llama-2-7b-f16",
        metric="prefill_tok_s",
        measured=1000.0,
        read_context=None,
        alloc_context=512,
        prompt_tokens=512,
        chunk_tokens=512,
    )
    acc32, acc16 = evaluate_reported_runs(
        parse_reported_runs(
            {
                "run": [
                    {**f16, "linear_mode": "fp16", "attention_mode": "fp16"},
                    {**f16, "id": "f16-acc16", "linear_mode": "fp16_acc16", "attention_mode": "fp16_acc16"},
                ]
            }
        )
    )
    # RTX 4090: 165.2 TFLOPS with FP32 accumulate, 330.3 with FP16 accumulate (Ada whitepaper); the
    # compute-bound prefill ceiling of a 512-token prompt scales with the rate.
    assert acc16.check.ceiling_tok_s / acc32.check.ceiling_tok_s == pytest.approx(330.3 / 165.2, rel=0.02)


def test_gpt_oss_runs_on_dgx_spark_use_the_gguf_profile(shipped: tuple[ReportedRun, ...]) -> None:
    """ggml-org's gpt-oss GGUFs keep attention, embedding and head in Q8_0: the runs name that file's profile
    and sit below its ceiling; the BF16 + MXFP4 release's profile (more bytes per token) would put the
    20B tg32 run above its ceiling, which is why the runs must not use it."""
    runs = [r for r in shipped if r.entry.id.startswith("llamacpp-benches-dgx-spark-gpt-oss-")]
    assert {r.entry.model for r in runs} == {"gpt-oss-20b-mxfp4_moe", "gpt-oss-120b-mxfp4_moe"}
    assert {r.model_family for r in runs} == {"gpt_oss"}
    assert len(runs) == 46 and all(r.check.run.phase.value == "decode" and r.at_or_below for r in runs)
    tg32 = next(r for r in runs if r.entry.id == "llamacpp-benches-dgx-spark-gpt-oss-20b-mxfp4_moe-tg32")
    native = tg32.entry.model_copy(
        update={"model": "gpt-oss-20b", "explanation": "the release, not the file"}
    )
    (release,) = evaluate_reported_runs([native])
    assert release.check.ceiling_tok_s < tg32.check.measured_tok_s < tg32.check.ceiling_tok_s
