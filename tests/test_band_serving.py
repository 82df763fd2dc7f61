"""Issue 37: serving bands from published serving runs at concurrency (vLLM, SGLang, TensorRT-LLM): each
run at a concurrency above one sits in its engine's ``serving`` group with its source, aggregate runs are
fitted per session, a batch above one takes the serving band (under its ceilings), and validate and
/validation report each group's leave-one-out coverage and width, or that it has too few runs."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from servebound.api import decode, load_hardware, load_model, make_workload
from servebound.core.band import BAND_MIN_RUNS
from servebound.runs.band_fit import band_calibration, band_group
from servebound.runs.evaluated import evaluate_entry
from servebound.runs.measured import Metric
from servebound.runs.reported import load_reported_runs
from servebound.runs.validation import bands_json, format_bands

SERVING_ENGINES = ("vllm", "sglang", "trt-llm")


@pytest.mark.parametrize("engine", SERVING_ENGINES)
def test_each_serving_engine_has_a_datacenter_band_from_sourced_runs(engine: str) -> None:
    group = band_group(engine, "datacenter GPU", "serving")
    assert len(group.run_ids) >= BAND_MIN_RUNS
    entries = {e.id: e for e in load_reported_runs()}
    for run_id in group.run_ids:
        entry = entries[run_id]
        assert entry.concurrency > 1
        assert entry.source_url.startswith("https://") and entry.source_quote
    # every serving run of the engine on the class is in the group: none is above its ceiling
    from servebound.runs.band import engine_key, hardware_class

    serving = [
        e
        for e in entries.values()
        if engine_key(e.engine) == engine
        and e.concurrency > 1
        and hardware_class(e.hardware) == "datacenter GPU"
    ]
    assert sorted(e.id for e in serving) == sorted(group.run_ids)
    assert all(evaluate_entry(e).at_or_below for e in serving)


def test_runs_reach_batches_in_the_hundreds() -> None:
    """Published serving runs at batch sizes up to the hundreds, for SGLang and TensorRT-LLM."""
    by_engine: dict[str, int] = {}
    for entry in load_reported_runs():
        key = entry.engine.casefold()
        by_engine[key] = max(by_engine.get(key, 0), entry.concurrency)
    assert by_engine["sglang"] >= 100
    assert by_engine["trt-llm"] >= 512


def test_an_aggregate_run_is_fitted_per_session() -> None:
    group = band_group("trt-llm", "datacenter GPU", "serving")
    entries = {e.id: e for e in load_reported_runs()}
    checked = 0
    for run_id, ceiling, measured in zip(group.run_ids, group.ceilings, group.measured, strict=True):
        entry = entries[run_id]
        if entry.metric is not Metric.AGGREGATE_TOK_S:
            continue
        check = evaluate_entry(entry).check
        assert ceiling == pytest.approx(check.ceiling_tok_s / entry.concurrency)
        assert measured == pytest.approx(entry.measured / entry.concurrency)
        checked += 1
    assert checked >= BAND_MIN_RUNS


PAIRS = [
    ("nvidia-h100-sxm", "llama-3.1-8b-instruct-fp8", "trt-llm"),
    ("nvidia-h200-sxm", "llama-3.1-70b-instruct-fp8", "vllm"),
    ("nvidia-b200", "qwen3-30b-a3b", "sglang"),
]


@settings(max_examples=30, deadline=None)
@given(st.sampled_from(PAIRS), st.integers(2, 512))
def test_a_batch_above_one_takes_the_serving_band_under_its_ceilings(
    pair: tuple[str, str, str], batch: int
) -> None:
    hardware, model, engine = pair
    work = make_workload(batch=batch, engine=engine, alloc_context=4096, read_context=2048)
    result = decode(load_hardware(hardware), load_model(model), work)
    forced = result.forced
    assert forced is not None
    band = result.expected
    if forced.per_session_tok_s is None or band is None:
        return
    assert band.phase == "serving" and band.scope == f"per session at batch {batch}"
    assert band.p10_tok_s <= band.p50_tok_s <= band.p90_tok_s <= forced.per_session_tok_s * (1 + 1e-12)
    aggregate = result.expected_aggregate
    if aggregate is not None and result.aggregate_tok_s is not None:
        assert aggregate.phase == ("serving" if result.batch_star and result.batch_star > 1 else "decode")
        assert aggregate.p90_tok_s <= result.aggregate_tok_s * (1 + 1e-12)


def test_a_serving_group_with_too_few_runs_gives_the_single_session_group_or_none() -> None:
    """vLLM on consumer GPUs has fewer than a handful of serving runs: no serving band is given."""
    assert len(band_group("vllm", "consumer GPU", "serving").run_ids) < BAND_MIN_RUNS
    result = decode(
        load_hardware("nvidia-rtx-4090"),
        load_model("mistral-7b-instruct-v0.3"),
        make_workload(batch=8, engine="vllm", alloc_context=4096, read_context=2048),
    )
    assert result.expected is None or result.expected.phase == "decode"


def test_validate_reports_every_serving_group() -> None:
    calibration = band_calibration()
    serving = [row for row in calibration.groups if row.group.phase == "serving"]
    engines = {row.group.engine for row in serving}
    assert set(SERVING_ENGINES) <= engines
    rows = {(b["engine"], b["hardware_class"], b["phase"]): b for b in bands_json(calibration)}
    for engine in SERVING_ENGINES:
        row = rows[(engine, "datacenter GPU", "serving")]
        assert row["band"] and row["leave_one_out_evaluated"] == row["runs"]
        assert 0 < row["leave_one_out_coverage"] <= 1 and row["median_width"] > 1
    few = rows[("vllm", "consumer GPU", "serving")]
    assert not few["band"] and "no band" in few["why_no_band"]
    text = "\n".join(format_bands(calibration))
    assert "serving" in text and "fewer than 5: no band" in text


def test_the_validation_page_shows_the_bands() -> None:
    from servebound.runs.band import engine_words
    from servebound.web.app.server import create_app

    page = TestClient(create_app()).get("/validation")
    assert page.status_code == 200
    body = page.text
    assert "Expected bands" in body
    start = body.index("Expected bands")
    table = body[start : body.index("</table>", start)]
    for engine in SERVING_ENGINES:  # each engine as people write it (vLLM, SGLang, TensorRT-LLM)
        assert f"<td>{engine_words(engine)}</td><td>datacenter GPU</td><td>serving</td>" in table
