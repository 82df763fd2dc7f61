"""Issue 37: the band at a forced batch is a per-session band beside that batch's per-session ceiling,
and the aggregate band at b* sits beside the aggregate ceiling; neither ever above its ceiling, and
each says which it is."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from servebound.api import decode, load_hardware, load_model, make_workload

PAIRS = [
    ("nvidia-h100-sxm", "qwen3-8b", "vllm"),
    ("nvidia-rtx-4090", "llama-2-7b-q4_0", "llama.cpp"),
    ("nvidia-dgx-spark", "qwen3-30b-a3b-nvfp4", "llama.cpp"),
    ("apple-m3-max-128gb", "llama-2-7b-q4_0", "mlx"),
]


@settings(max_examples=40, deadline=None)
@given(st.sampled_from(PAIRS), st.integers(1, 256))
def test_forced_batch_band_is_per_session_and_under_its_ceiling(
    pair: tuple[str, str, str], batch: int
) -> None:
    hardware, model, engine = pair
    result = decode(load_hardware(hardware), load_model(model), make_workload(batch=batch, engine=engine))
    forced = result.forced
    assert forced is not None
    band = result.expected
    if band is None:
        return
    assert band.scope == f"per session at batch {batch}"
    assert band.ceiling_tok_s == pytest.approx(forced.per_session_tok_s)
    assert band.p10_tok_s <= band.p50_tok_s <= band.p90_tok_s <= forced.per_session_tok_s * (1 + 1e-12)
    aggregate = result.expected_aggregate
    if result.batch_star is None:
        assert aggregate is None
        return
    assert aggregate is not None and aggregate.scope == f"aggregate at b* = {result.batch_star}"
    assert result.aggregate_tok_s is not None
    assert aggregate.p90_tok_s <= result.aggregate_tok_s * (1 + 1e-12)
    assert aggregate.ceiling_tok_s == pytest.approx(result.aggregate_tok_s)


def test_vllm_at_batch_16_no_longer_shows_the_single_session_band() -> None:
    """The report: `decode ... --engine vllm --batch 16` printed a p90 of 361 tok/s beside a per-session
    ceiling of 166: the single-session band, unlabelled."""
    result = decode(
        load_hardware("nvidia-h100-sxm"), load_model("qwen3-8b"), make_workload(batch=16, engine="vllm")
    )
    assert result.forced is not None and result.expected is not None
    single = decode(load_hardware("nvidia-h100-sxm"), load_model("qwen3-8b"), make_workload(engine="vllm"))
    assert single.expected is not None and single.expected.scope == "single session"
    assert result.expected.p90_tok_s <= result.forced.per_session_tok_s < single.expected.p90_tok_s


def test_rank_rows_carry_the_band_with_an_engine() -> None:
    from servebound.catalog.hardware import get_hardware
    from servebound.catalog.models import get_model
    from servebound.questions.rank import rank_hardware
    from servebound.views.rows import rank_row_json

    model = get_model("llama-2-7b-q4_0").adapter
    machines = [get_hardware(ref) for ref in ("nvidia-rtx-4090", "apple-m3-max-128gb", "nvidia-h100-sxm")]
    rows = [rank_row_json(r) for r in rank_hardware(model, machines, make_workload(engine="llama.cpp"))]
    for row in rows:
        band = row["expected"]
        assert band is not None and band["label"].startswith("an estimate from ")
        assert band["engine"] == "llama.cpp" and band["scope"] == "single session"
        assert band["p90_tok_s"] <= row["single_session_tok_s"]
        aggregate = row["expected_aggregate"]
        assert aggregate is not None and aggregate["p90_tok_s"] <= row["aggregate_tok_s"]
    plain = [rank_row_json(r) for r in rank_hardware(model, machines, make_workload())]
    # without an engine each row reads the engine usually run on its class (said as assumed)
    for row in plain:
        assert (
            row["expected_from"]["engine_assumed"] is True and row["expected_from"]["engine"] == "llama.cpp"
        )
        assert row["expected"] is None or row["expected"]["p90_tok_s"] <= row["single_session_tok_s"]
