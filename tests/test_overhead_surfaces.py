"""`cost`, `check` and `economics balance` take the hardware row's runtime overhead as `decode` does, and
the overhead they print is the one they computed with."""

from __future__ import annotations

import json

import pytest

from servebound.cli import main


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, object]:
    status = main([*args, "--json"])
    out, err = capsys.readouterr()
    assert status in (0, 3), err  # check exits 3 for a run above its ceiling
    data: dict[str, object] = json.loads(out)
    return data


@pytest.mark.parametrize(
    ("hw_id", "overhead_gb"),
    [("nvidia-h100-sxm", 8.6), ("8x-nvidia-h100-sxm", 68.8), ("apple-m3-ultra-512gb", 137.4)],
)
def test_cost_prints_and_uses_the_rows_overhead(
    capsys: pytest.CaptureFixture[str], hw_id: str, overhead_gb: float
) -> None:
    decode = cli_json(capsys, "decode", "-H", hw_id, "-m", "qwen3-8b")
    cost = cli_json(capsys, "cost", "-H", hw_id, "-m", "qwen3-8b")
    assumptions = cost["assumptions"]
    assert isinstance(assumptions, dict)
    assert assumptions["overhead_gb"] == pytest.approx(overhead_gb)
    assert assumptions["overhead_gb"] == decode["assumptions"]["overhead_gb"]  # type: ignore[index]
    assert assumptions["overhead_source"] == decode["assumptions"]["overhead_source"]  # type: ignore[index]
    assert assumptions["overhead_source"].startswith("hardware row: ")
    points = cost["points"]
    assert isinstance(points, list)
    # the largest batch priced is decode's b_mem (its grid runs 1..b_mem), computed with the same O; a
    # system prices its layout's micro-batches, each of dp pp times as many sessions
    assert points[-1].get("sessions", points[-1]["batch"]) == decode["batch_mem"]
    main(["cost", "-H", hw_id, "-m", "qwen3-8b"])
    text = capsys.readouterr().out
    assert f"overhead_gb: {overhead_gb}" in text and "overhead_gb: 8.0" not in text


def test_check_takes_the_rows_overhead(capsys: pytest.CaptureFixture[str]) -> None:
    """Qwen3-235B-A22B BF16 (470 GB) on a 512 GB M3 Ultra: it fits with no overhead, not with the 137.4 GB
    macOS keeps back (the row's O, which decode uses)."""
    run = ["-H", "apple-m3-ultra-512gb", "-m", "qwen3-235b-a22b", "--metric", "per_session_tok_s"]
    run += ["--measured", "5", "--read-context", "1000"]
    (row,) = cli_json(capsys, "check", *run)["checks"]  # type: ignore[misc]
    assert row["overhead_gb"] == pytest.approx(137.4) and row["fits_memory"] is False
    decode = cli_json(capsys, "decode", "-H", "apple-m3-ultra-512gb", "-m", "qwen3-235b-a22b")
    assert decode["verdict"] == "no_resident_fit"
    (given,) = cli_json(capsys, "check", *run, "--overhead-gb", "0")["checks"]  # type: ignore[misc]
    assert given["overhead_gb"] == 0 and given["fits_memory"] is True
    main(["check", *run])
    assert "does not fit the hardware with overhead O = 137.4 GB" in capsys.readouterr().out
