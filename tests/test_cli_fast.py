"""The command line's fast path (servebound.cli.fast) against Typer: every value it passes is the one
Typer's own parsing gives, it never accepts what Typer refuses, and end to end every output, error
line and exit status is the same with it on (the record cache on) and off."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from hypothesis import example, given
from hypothesis import strategies as st

from servebound.cli import COMMANDS, fast
from servebound.cli.app import app

GROUP = typer.main.get_command(app)
PAIR = ["-H", "nvidia-h100-sxm", "-m", "llama-3.1-8b"]


def typer_params(name: str, args: list[str]) -> dict[str, Any] | None:
    """The values Typer's parsing hands the command, or None where it refuses the arguments."""
    command = GROUP.get_command(None, name)  # type: ignore[attr-defined]
    try:
        with command.make_context(name, list(args)) as ctx:
            return dict(ctx.params)
    except (typer.TyperException, typer.Exit, typer.Abort):
        return None


def spec_of(name: str) -> dict[str, Any]:
    spec = fast.command_spec(GROUP.get_command(None, name))  # type: ignore[attr-defined]
    assert spec is not None, f"{name}: every parameter is of a kind the fast path reads"
    return spec


ACCEPTED = {
    "decode": [
        PAIR,
        [*PAIR, "--json"],
        [*PAIR, "--batch", "64", "--floor", "12.5", "--json"],
        ["--model=llama-3.1-8b", "--hardware=nvidia-h100-sxm", "--expert-traffic", "minimum"],
        [*PAIR, "--alloc-context", "8000", "--read-context", "4000", "--overhead-gb", "2"],
        [*PAIR, "--kv-precision", "fp8", "--memory-only", "--range"],
        [*PAIR, "--draft", "llama-3.2-1b", "--draft-tokens", "4", "--acceptance", "0.7"],
        [*PAIR, "--tokens-per-step", "1.5", "--layout", "tp=8", "--expert-traffic=expected"],
        ["-m", "x", "-H", "y", "--floor", "0"],
    ],
    "prefill": [
        [*PAIR, "--prompt", "8192", "--json"],
        [*PAIR, "--batch", "1,2,4", "--chunk", "512", "--range", "--ttft-budget", "2.5"],
        [*PAIR, "--linear-mode", "fp8", "--attention-mode", "bf16"],
    ],
    "rank": [
        ["--hardware", "nvidia-h100-sxm", "--all-formats"],
        ["--hardware", "nvidia-h100-sxm", "--all-formats", "--json"],
        ["-m", "llama-3.1-8b", "--per-dollar", "--limit", "5", "--prompt", "1024"],
        ["--hardware", "x", "--sort", "useful", "--floor", "10"],
        [],
    ],
    "cost": [
        [*PAIR, "--json"],
        [*PAIR, "--pricing", "owned", "--purchase-usd", "30000", "--amortization-years", "4"],
        [*PAIR, "--usd-per-hour", "2.5", "--batches", "1,8,64", "--utilization", "0.5"],
    ],
}

#: Arguments the fast path hands to Typer (which parses, or refuses with its own words).
HANDED_ON = [
    # (the declared inputs are text to Typer and to the fast path alike: --draft-tokens 3_000, --floor
    # 1e3 or --read-context 32k are parsed and checked once by the declaration, Input.parse)
    [*PAIR, "--batch"],
    [*PAIR, "--batch", "--json"],
    [*PAIR, "--nope"],
    [*PAIR, "--json", "extra"],
    [*PAIR, "--json=1"],
    [*PAIR, "-Hnvidia-h100-sxm"],
    [*PAIR, "--json", "--json"],
    [*PAIR, "--help"],
    [*PAIR, "--"],
    ["-H", "nvidia-h100-sxm"],
]


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_the_fast_path_passes_what_typer_passes(name: str) -> None:
    spec = spec_of(name)
    for args in ACCEPTED[name]:
        mine = fast.parse(spec, args)
        assert mine is not None, (name, args)
        theirs = typer_params(name, args)
        assert mine == theirs, (name, args)
        assert {k: type(v) for k, v in mine.items()} == {k: type(v) for k, v in theirs.items()}, args


@pytest.mark.parametrize("args", HANDED_ON)
def test_what_the_fast_path_does_not_take_goes_to_typer(args: list[str]) -> None:
    assert fast.parse(spec_of("decode"), args) is None


TOKENS = st.sampled_from(
    [
        "-H", "-m", "--hardware", "--model", "--batch", "--floor", "--json", "--range", "--expert-traffic",
        "--overhead-gb", "--alloc-context", "--kv-precision", "--memory-only", "--nope", "--", "-",
        "--batch=", "--floor=", "--json=", "nvidia-h100-sxm", "llama-3.1-8b", "expected", "minimum",
        "Minimum", "0", "1", "64", "007", "-5", "+3", "1.5", "0.25", ".5", "5.", "1e3", "1E-2", "nan",
        "inf", "-inf", "3_000", " 7", "7 ", "", "0x1f", "99999999999999999999", "١٢", "fp8",
    ]
)  # fmt: skip


@given(st.lists(st.one_of(TOKENS, st.text(max_size=6)), max_size=9))
@example(["--batch=64", "-H", "a", "-m", "b"])
@example(["-H", "a", "-m", "b", "--floor", "1.50"])
@example(["-H", "a", "-m", "b", "--batch", "١٢"])
def test_the_fast_path_never_differs_from_typer(args: list[str]) -> None:
    """Any arguments: the fast path hands them on, or gives exactly Typer's values (never a value
    where Typer refuses them)."""
    mine = fast.parse(spec_of("decode"), args)
    if mine is not None:
        theirs = typer_params("decode", args)
        assert theirs is not None and mine == theirs
        assert {k: type(v) for k, v in mine.items()} == {k: type(v) for k, v in theirs.items()}


def test_every_hot_command_has_a_spec() -> None:
    assert set(fast.HOT) <= set(COMMANDS)
    for name in fast.HOT:
        spec_of(name)


def _run(args: list[str], cache: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [sys.executable, "-m", "servebound", *args],
        capture_output=True,
        text=True,
        env={**os.environ, "SERVEBOUND_CACHE_DIR": cache, "COLUMNS": "100"},
    )
    return done.returncode, done.stdout, done.stderr


END_TO_END = [
    ["decode", *PAIR, "--json"],
    ["decode", *PAIR, "--batch", "x"],
    ["decode", *PAIR, "--expert-traffic", "foo"],
    ["decode", *PAIR, "--nope"],
    ["decode", *PAIR, "--floor", "0"],
    ["decode", "-H", "nvidia-h100-sxm"],
    ["decode", "-H", "nvidia-h100-sxm", "-m", "no-such-model"],
    ["rank"],
    ["rank", "--hardware", "nvidia-h100-sxm", "--limit", "0"],
    ["prefill", *PAIR, "--prompt", "0"],
    ["cost", *PAIR, "--utilization", "2"],
    ["--help"],
    ["decode", "--help"],
    ["rank", "--help"],
]


def test_end_to_end_the_same_with_the_fast_path_on_and_off(tmp_path: Path) -> None:
    cache = str(tmp_path)
    for args in END_TO_END:  # the first run builds the spec (and keeps the help it prints)
        _run(args, cache)
    assert list(tmp_path.glob("cli-*.json"))
    for args in END_TO_END:
        fast_run, typer_run = _run(args, cache), _run(args, "off")
        assert fast_run == typer_run, args
        status, _, err = fast_run
        if status:
            assert status == 2 and len(err.strip().splitlines()) == 1, (args, err)
            assert err.startswith("servebound: error: "), err


def test_a_spec_names_only_servebounds_own_choices() -> None:
    """The spec file is data: a choice naming any other module's attribute is refused, never imported."""
    for path in ("subprocess:Popen", "servebound.core.experts:__import__", "servebound.errors:InputError"):
        spec = {"params": [{"name": "x", "opts": ["--x"], "required": False, "kind": "choice",
                            "enum": path, "choices": ["a"], "default": None}]}  # fmt: skip
        with pytest.raises(ValueError):
            fast.parse(spec, ["--x", "a"])
