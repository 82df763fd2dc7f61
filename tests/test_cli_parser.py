"""The one command-line parser (click, generated from the declared inputs): help on every command with
two examples that run, one grammar for every typed value, a repeated option refused by name, and shell
completion of the catalog's ids."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from typing import Any

import click
import pytest

from servebound.catalog.hardware import load_hardware_catalog
from servebound.catalog.models import profile_ids
from servebound.cli import EXAMPLES
from servebound.cli.app import app
from servebound.cli.common import Declared, catalog_ids
from servebound.inputs.workload import BY_NAME, inputs_of
from tests.conftest import run_cli


def _walk(command: click.Command, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], click.Command]]:
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += _walk(sub, (*path, name))
    return found


COMMANDS = _walk(app)
PATHS = [" ".join(path) for path, _ in COMMANDS]
#: Examples that would serve, measure for half a minute, write a site or read the network: parsed only.
PARSED_ONLY = ("serve", "measure", "build-site", "import", "export")  # they write files or serve


def _examples() -> list[str]:
    shown: dict[str, None] = dict.fromkeys(EXAMPLES)
    for _, command in COMMANDS:
        shown.update(dict.fromkeys(getattr(command, "examples", ())))
    return list(shown)


@pytest.mark.parametrize("path", PATHS, ids=lambda p: p or "servebound")
@pytest.mark.parametrize("flag", ["-h", "--help"])
def test_every_command_has_help_with_two_examples(
    capsys: pytest.CaptureFixture[str], path: str, flag: str
) -> None:
    status, out, err = run_cli(capsys, *path.split(), flag)
    assert status == 0 and not err
    assert out.startswith(f"Usage: servebound {path}".rstrip())
    shown = out.split("Examples:\n", 1)[1].splitlines()
    examples = [line.strip()[2:] for line in shown if line.strip().startswith("$ servebound ")]
    assert len(examples) >= 2, out
    assert all(e.startswith(f"servebound {path}") for e in examples)  # a command's examples are its own


@pytest.mark.parametrize("example", _examples())
def test_every_example_parses_and_runs(capsys: pytest.CaptureFixture[str], example: str) -> None:
    args = shlex.split(example)[1:]
    assert args[0] in app.commands
    command, rest = app.commands[args[0]], args[1:]
    if isinstance(command, click.Group):
        command, rest = command.commands[rest[0]], rest[1:]
    command.make_context(args[0], rest)  # parses: no value missing or refused
    if args[0] in PARSED_ONLY:
        return
    status, out, err = run_cli(capsys, *args)
    assert status == 0, err
    assert out and not err


def test_no_command_prints_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run_cli(capsys)
    assert status == 2 and out.startswith("Usage: servebound") and not err
    assert "_SERVEBOUND_COMPLETE=bash_source" in out  # how to turn completion on


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["decode", "-H", "nvidia-rtx-4090", "--hardware", "nvidia-h100-sxm", "-m", "qwen3-8b"], "--hardware"),
        (["decode", "-H", "nvidia-rtx-4090", "-m", "qwen3-8b", "--alloc-context", "8000", "--alloc-context=9000"], "--alloc-context"),
        (["prefill", "-H", "nvidia-rtx-4090", "-m", "qwen3-8b", "--prompt", "10", "--prompt", "10"], "--prompt"),
        (["cost", "-H", "nvidia-rtx-4090", "-m", "qwen3-8b", "--json", "--json"], "--json"),
        (["hardware", "list", "--systems", "--no-systems"], "--systems"),
        (["plan", "-H", "nvidia-rtx-4090", "-m", "qwen3-8b", "--prompt", "1", "--prompt", "2", "--output-tokens", "3"], "--prompt"),
    ],
)  # fmt: skip
def test_a_repeated_option_is_refused_by_name(
    capsys: pytest.CaptureFixture[str], args: list[str], named: str
) -> None:
    status, out, err = run_cli(capsys, *args)
    assert status == 2 and not out
    assert err.startswith("servebound: error: ") and err.count("\n") == 1, err
    assert named in err and "more than once" in err


@pytest.mark.parametrize(
    ("args", "field"),
    [
        (["--alloc-context", "abc"], "alloc_context"),
        (["--floor", "nan"], "floor"),
        (["--batch", "many"], "batch"),
        (["--expert-traffic", "most"], "expert_traffic"),
        (["--overhead-gb", "-1"], "overhead_gb"),
        (["--draft-tokens", "1.5"], "draft_tokens"),
    ],
)
def test_a_bad_value_is_one_line_naming_the_field(
    capsys: pytest.CaptureFixture[str], args: list[str], field: str
) -> None:
    status, out, err = run_cli(capsys, "decode", "-H", "nvidia-rtx-4090", "-m", "qwen3-8b", *args)
    assert status == 2 and not out
    assert err.startswith(f"servebound: error: {field}: ") and err.count("\n") == 1, err
    assert "Traceback" not in err


def test_usage_errors_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for args, words in (
        (["decode", "--bogus"], "No such option '--bogus'"),
        (["decodx"], "No such command 'decodx'"),
        (["decode", "-H", "nvidia-rtx-4090"], "Missing option '--model' / '-m'"),
        (["decode", "-H"], "Option '-H' requires an argument"),
        (["schema"], "Missing argument 'COMMAND'"),
    ):
        status, out, err = run_cli(capsys, *args)
        assert status == 2 and not out, args
        assert err.startswith("servebound: error: ") and words in err and err.count("\n") == 1, err


SAMPLES = {int: ["7", "2000", "1e3", "32,000", "32_000"], float: ["0.5", "3", "1e2", "1,000.5"]}


@pytest.mark.parametrize("spec", inputs_of("context", "serving", "workload", "roof", "decode"), ids=str)
def test_every_typed_value_is_the_declarations_parse(spec: Any) -> None:
    """The value click hands a command is ``Input.parse`` of the text typed, for every declared input
    (the API and the site parse the same text the same way)."""
    decode = app.commands["decode"]
    texts = list(SAMPLES.get(spec.kind, [])) + list(spec.choices[:2]) + list(spec.words)
    if spec.kind is str and not spec.choices:
        texts.append("qwen3-0.6b" if spec.name == "draft" else "fp8")
    for text in texts:
        try:
            expected = spec.parse(text)
        except Exception:
            continue  # out of this input's bounds: the same error either way (tested above)
        if spec.kind is bool:
            continue
        args = ["-H", "x", "-m", "y", spec.flag, text]
        context = decode.make_context("decode", args)
        assert context.params[spec.name] == expected, (spec.name, text)
        assert type(context.params[spec.name]) is type(expected)
    option = next(p for p in decode.params if p.name == spec.name)
    assert spec.kind is bool or isinstance(option.type, Declared)


def test_every_option_is_parsed_by_a_declaration() -> None:
    """No option anywhere takes click's own types: each value is a declared input's."""
    for path, command in COMMANDS:
        for param in command.params:
            if isinstance(param, click.Option) and (param.is_flag or param.name == "help"):
                continue
            if not path and param.name == "version":
                continue
            assert isinstance(param.type, Declared), (path, param.name)
    assert BY_NAME["batch"].parse("max") == "max"


def _complete(words: str, shell: str = "bash") -> list[str]:
    env = {
        **os.environ,
        "_SERVEBOUND_COMPLETE": f"{shell}_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
    }
    done = subprocess.run(
        [sys.executable, "-m", "servebound"], env=env, capture_output=True, text=True, check=True
    )
    return [line.split(",", 1)[1] for line in done.stdout.splitlines() if "," in line]


def test_completion_offers_catalog_ids() -> None:
    hardware = _complete("servebound decode --hardware nvidia-rtx-40")
    assert "nvidia-rtx-4090" in hardware and all(h.startswith("nvidia-rtx-40") for h in hardware)
    models = _complete("servebound prefill -H nvidia-rtx-4090 --model qwen3-8")
    assert "qwen3-8b" in models and all(m.startswith("qwen3-8") for m in models)
    assert "qwen3-0.6b" in _complete("servebound decode --draft qwen3-0.")
    assert _complete("servebound decode --expert-traffic m") == ["minimum"]
    assert "decode" in _complete("servebound dec")


def test_completion_ids_are_the_catalogs() -> None:
    """The completion reads the ids from the snapshot (no catalog module): the catalog's, in its order."""
    assert catalog_ids("hardware") == load_hardware_catalog().ids()
    assert catalog_ids("model") == profile_ids()


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_for_each_shell(shell: str) -> None:
    env = {**os.environ, "_SERVEBOUND_COMPLETE": f"{shell}_source"}
    done = subprocess.run(
        [sys.executable, "-m", "servebound"], env=env, capture_output=True, text=True, check=True
    )
    assert "_SERVEBOUND_COMPLETE" in done.stdout and "servebound" in done.stdout
