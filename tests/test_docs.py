"""Docs that cannot drift: every CLI flag, every contract JSON field and file key is in the README."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from servebound.cli.app import app

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _walk(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += _walk(sub, (*path, name))
    return found


def test_every_cli_flag_is_documented() -> None:
    missing = []
    for path, command in _walk(app):
        for param in command.params:
            for opt in [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]:
                if opt.startswith("--") and opt != "--help" and opt not in README:
                    missing.append(f"{' '.join(path)} {opt}")
        if path and f"servebound {' '.join(path)}" not in README:
            missing.append(f"command servebound {' '.join(path)}")
    assert not missing, f"undocumented in README.md: {missing}"


def test_contract_fields_and_keys_are_documented() -> None:
    contract = ROOT.parent / "shared" / "CONTRACT.md"
    if not contract.is_file():
        pytest.skip("../shared/CONTRACT.md is not beside this checkout")
    text = contract.read_text()
    fields = set(re.findall(r"^\| `([a-z_]+)`", text, flags=re.M))
    fields |= {f for group in re.findall(r"^\| `([a-z_]+)`, `([a-z_]+)`", text, flags=re.M) for f in group}
    keys = set(re.findall(r"^#?\s*([a-z_]+) = ", text, flags=re.M))
    missing = sorted(f for f in fields | keys if f"`{f}`" not in README and f not in README)
    assert not missing, f"contract names missing from README.md: {missing}"


def test_readme_opens_with_the_two_commands() -> None:
    block = README.split("```")[1].strip().splitlines()
    assert len(block) == 2 and block[0].startswith("pip install .") and "pytest" in block[1]
    assert block[1] in (ROOT / ".ci" / "run").read_text()


def test_public_api_is_what_all_says() -> None:
    import servebound

    for name in servebound.__all__:
        assert hasattr(servebound, name), name
    assert {"decode", "prefill", "prefill_range", "load_hardware", "load_model", "make_workload"} <= set(
        servebound.__all__
    )


def _readme_block(command: str) -> list[str]:
    start = README.index(f"$ {command}")
    return [line.rstrip() for line in README[start : README.index("```", start)].splitlines()[1:]]


def test_readme_examples_are_real_output(capsys: Any) -> None:
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
        for line in _readme_block(command):
            assert line.strip() == "..." or line in printed, (
                f"README line not printed by {command!r}: {line!r}"
            )
