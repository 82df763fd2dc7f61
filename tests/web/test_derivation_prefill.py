"""The derivation's Laguna S 2.1 prefill tables equal ``servebound prefill`` on the shipped example files:
each cell of the page's one-shot and 2,048-token-chunk tables is rebuilt from the CLI's JSON for the same
files and flags, at both ends of the linear-rate bracket (the model's FP4 mode and --linear-mode bf16)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from servebound.web.pages import derivation as dv
from servebound.web.pages import derivation_live as live
from tests.conftest import run_json

ROOT = Path(__file__).resolve().parents[2]
HW = str(ROOT / "examples" / "dgx-spark.toml")
MODEL = str(ROOT / "examples" / "laguna-s-2.1-nvfp4.toml")


def cli(capsys: pytest.CaptureFixture[str], prompt: int, chunk: int | None, bf16: bool) -> Any:
    args = ["prefill", "-H", HW, "-m", MODEL, "--prompt", str(prompt), "--json"]
    if prompt > 100_000:
        args += ["--alloc-context", str(prompt)]
    if chunk is not None:
        args += ["--chunk", str(chunk)]
    if bf16:
        args += ["--linear-mode", "bf16"]
    return run_json(capsys, *args)


def tok(v: float) -> str:
    return f"{round(v):,}"


@pytest.mark.parametrize("name,chunk", [("prefill_oneshot", None), ("prefill_chunked", 2048)])
def test_prefill_tables_equal_the_cli(
    capsys: pytest.CaptureFixture[str], name: str, chunk: int | None
) -> None:
    rows = live.TABLES[name]()[1:]
    assert [r[0] for r in rows] == ["8,192 (8k)", "32,768 (32k)", "131,072 (128k)"]
    for row, prompt in zip(rows, (8192, 32768, 131072), strict=True):
        slow, fast = cli(capsys, prompt, chunk, True), cli(capsys, prompt, chunk, False)
        assert fast["chunk_mode"] == ("one_shot" if chunk is None else "policy")
        assert slow["memory_tok_s"] == fast["memory_tok_s"]  # the linear rate moves compute only
        bound = (
            slow["bound_by"]
            if slow["bound_by"] == fast["bound_by"]
            else (f"{slow['bound_by']} (BF16), {fast['bound_by']} (FP4)")
        )
        assert row == (
            row[0],
            f"{tok(fast['memory_tok_s'])} tok/s",
            f"{tok(slow['compute_tok_s'])} to {tok(fast['compute_tok_s'])} tok/s",
            f"{tok(slow['tok_s'])} to {tok(fast['tok_s'])} tok/s",
            f"{slow['time_s']:,.3f} to {fast['time_s']:,.3f} s",
            bound,
        )


def test_prefill_tables_and_quoted_figures_are_on_the_page(capsys: pytest.CaptureFixture[str]) -> None:
    md = dv.render_markdown()
    for name in ("prefill_oneshot", "prefill_chunked"):
        for row in live.TABLES[name]()[1:]:
            assert "| " + " | ".join(row) + " |" in md
    memory = [cli(capsys, p, None, False)["memory_tok_s"] for p in (8192, 32768, 131072)]
    assert (
        f"In one shot the memory ceiling is {tok(memory[0])} tok/s at 8k, {tok(memory[1])} tok/s at 32k, "
        f"{tok(memory[2])} tok/s at 128k" in md
    )
    fast, slow = cli(capsys, 8192, None, False), cli(capsys, 8192, None, True)
    assert f"between about {slow['crossover_tokens']:,.0f} and {fast['crossover_tokens']:,.0f}" in md
    assert fast["weight_sweep_bytes"] == pytest.approx(71.28e9, rel=1e-4)
    assert "71.28 GB of swept weights" in md and "98,304 bytes of cache written" in md
