"""Start-up by design: a command imports what it needs and no more, the root help comes from a registry
checked against the commands, a catalog pair is read from the catalog snapshot (package data: see
tests/test_snapshot.py), and the public surface is exactly ``servebound.__all__``. (Timings live in bench/bench_startup.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import click
import pytest

import servebound
from servebound.cli import COMMANDS
from servebound.cli.app import app, command_modules
from servebound.cli.common import Command

DECODE = ["decode", "--hardware", "nvidia-dgx-spark", "--model", "qwen3.6-35b-a3b-nvfp4", "--json"]


def _module_of(command: click.Command) -> str:
    """The module whose function a registered command (or a group's first command) runs."""
    while isinstance(command, click.Group):
        command = next(iter(command.commands.values()))
    assert isinstance(command, Command)
    return str(command.function.__module__)


def test_the_registry_is_the_commands() -> None:
    """Each command is declared once, in COMMANDS: its module registers it by name and its help is the
    declared one (no docstring of its own to drift from it); an undeclared name is refused."""
    assert isinstance(app, click.Group)
    assert sorted(app.commands) == sorted(COMMANDS)
    for name, command in app.commands.items():
        module, text = COMMANDS[name]
        assert command.help == text, name
        assert _module_of(command) == f"servebound.cli.{module}", name
        assert module in command_modules(), name
        if not isinstance(command, click.Group):
            assert isinstance(command, Command) and command.function.__doc__ is None, name
    from servebound.cli.common import command

    with pytest.raises(ValueError, match=r"not declared in servebound\.cli\.COMMANDS"):
        command("decoed", examples=("a", "b"))(lambda: None)


def loaded_modules(code: str, env: dict[str, str] | None = None) -> tuple[set[str], str]:
    probe = f"{code}\nimport sys, json\nprint(json.dumps(sorted(sys.modules)), file=sys.stderr)"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **(env or {})},
    )
    return set(json.loads(done.stderr.strip().splitlines()[-1])), done.stdout


def test_help_imports_no_command() -> None:
    """The console script's root help: no command module, and no record code."""
    code = "import sys\nfrom servebound.cli import console_main\nsys.argv[1:] = ['--help']\n"
    modules, out = loaded_modules(code + "try:\n    console_main()\nexcept SystemExit:\n    pass")
    assert "decode" in out and "prefill" in out
    heavy = {"numpy", "pydantic", "fastapi", "jinja2", "servebound.cli.common", "servebound.api"}
    heavy |= {"servebound.catalog.snapshot"}
    assert not modules & heavy, modules & heavy
    assert not [m for m in modules if m.endswith("_cmd")]


def test_import_servebound_is_light() -> None:
    modules, _ = loaded_modules("import servebound")
    assert not modules & {"numpy", "pydantic", "servebound.api", "servebound.cli"}


def test_decode_on_a_catalog_pair_reads_two_snapshot_rows() -> None:
    """A catalog pair's records come from the snapshot's two rows: neither catalog module (nor their
    schemas, or the TOML parser) is imported, and nothing is kept between processes."""
    code = f"import sys\nfrom servebound.cli import main\nmain({DECODE!r})"
    modules, out = loaded_modules(code)
    assert json.loads(out)["hardware"]["id"] == "nvidia-dgx-spark"
    assert not modules & {
        "servebound.catalog.hardware",
        "servebound.catalog.models",
        "servebound.inputs.files",
        "tomllib",
    }


@pytest.mark.parametrize(
    ("pair", "toml"),
    [
        (["-H", "nvidia-h100-sxm", "-m", "gemma 3 27b q4"], False),  # loose words: the name search
        (["-H", "h100 sxm", "-m", "Qwen/Qwen3-8B"], False),  # an alias and a Hub id
        (["-H", "nvidia-h100-sxm", "-m", "llama3.3:70b"], True),  # an Ollama tag: its TOML table
        (["-H", "2x-nvidia-rtx-3090", "-m", "llama-3.3-70b-instruct-q4_k_m"], False),  # an NxID system
    ],
)
def test_names_and_systems_are_read_from_the_snapshot(pair: list[str], toml: bool) -> None:
    """A name people type, an alias and an NxID system are read against the snapshot (its index, its
    profiles' places and models.toml's Hub ids in a header: catalog.names.profile_id_for,
    hardware_names.hardware_row) at the top of inputs.resolve: no catalog record module
    (catalog.models, catalog.hardware: their dataclasses cost a cold command 3-4 ms each) is imported,
    and only an Ollama tag parses TOML (data/model_names.toml, the tag table)."""
    modules, out = loaded_modules(f"from servebound.cli import main\nmain({['decode', *pair, '--json']!r})")
    assert json.loads(out)["verdict"]
    assert not modules & {"servebound.catalog.hardware", "servebound.catalog.models"}
    assert ("tomllib" in modules) is toml


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_one_decode_evaluates_floats_without_numpy(tmp_path: Path, extra: list[str]) -> None:
    """The core's formulas take floats or arrays (servebound.core.arith): one decode, of an MoE model
    under expected expert traffic, runs on floats and never imports numpy; --range (a curve) does. The
    decode question and the scenario import their system and range branches (no function-local import),
    but a decode on one device runs no layout search: the layout question and its command stay unloaded."""
    pair = [arg for arg in DECODE if arg != "--json"]

    def modules_of(args: list[str]) -> set[str]:
        return loaded_modules(f"from servebound.cli import main\nmain({args!r})")[0]

    plain = modules_of(pair + extra)
    assert "numpy" not in plain
    assert not plain & {
        "servebound.questions.layout",
        "servebound.cli.layout_cmd",
    }
    assert "numpy" in modules_of([*pair, *extra, "--range"])


def test_a_user_file_is_always_validated(tmp_path: Path) -> None:
    path = tmp_path / "hw.json"
    path.write_text('{"name": "J", "memory_gb": 128, "bandwidth_gb_per_s": 273}')
    code = (
        "from servebound.cli import main\n"
        f"main(['decode', '-H', {str(path)!r}, '-m', 'qwen3.6-35b-a3b-nvfp4', '--json'])"
    )
    modules, _ = loaded_modules(code)
    assert "servebound.inputs.files" in modules


def test_all_is_exactly_the_public_names() -> None:
    assert len(set(servebound.__all__)) == len(servebound.__all__)  # (its order is ruff's RUF022)
    for name in servebound.__all__:
        getattr(servebound, name)
    public = {
        name
        for name, value in vars(servebound).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert sorted(public) == sorted(servebound.__all__)
    assert set(dir(servebound)) >= set(servebound.__all__)


def test_a_plain_decode_json_imports_no_rich_and_no_pydantic(tmp_path: Path) -> None:
    """A decode --json through the console script: click parses it, neither pydantic nor rich is
    imported, nothing is written under the home, and a second run answers the same."""
    code = f"from servebound.cli import console_main\nimport sys\nsys.argv[1:] = {DECODE!r}\nconsole_main()"
    probe = code.replace("console_main()", "try:\n    console_main()\nexcept SystemExit:\n    pass")
    env = {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")}
    _, first = loaded_modules(probe, env)
    modules, out = loaded_modules(probe, env)
    assert out == first and not list(tmp_path.iterdir())
    assert not {m for m in modules if m == "rich" or m.startswith(("rich.", "pydantic"))}
    assert not modules & {"typer", "pydantic", "pydantic_core"}


def test_help_is_clicks_and_imports_no_formatter_and_no_command() -> None:
    """The root help and a command's help are click's plain text: no rich, no Typer, and the root's
    imports no command module."""
    for args in (["--help"], ["-h"], ["decode", "--help"]):
        code = f"from servebound.cli import main\nmain({args!r})"
        modules, text = loaded_modules(code, {"COLUMNS": "90"})
        assert text.startswith("Usage: servebound") and "Examples:" in text, args
        assert not {m for m in modules if m.startswith(("typer", "rich", "pydantic", "numpy"))}, args
        if args[0] != "decode":
            assert not [m for m in modules if m.endswith("_cmd")], args


def test_the_root_help_reads_no_shutil_and_is_as_wide_as_clicks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The root help sizes itself as click does ($COLUMNS, the terminal, else 80; at most 110) without
    importing shutil."""
    from servebound.cli import RootContext, root

    for columns in ("60", "90", "200", ""):
        monkeypatch.setenv("COLUMNS", columns)
        group = root()
        ours = RootContext(group, info_name="servebound", **group.context_settings)
        clicks = click.Context(group, info_name="servebound", **group.context_settings)
        assert group.get_help(ours) == group.get_help(clicks), columns
    modules, text = loaded_modules("from servebound.cli import main\nmain(['--help'])", {"COLUMNS": "90"})
    assert "shutil" not in modules and text.startswith("Usage: servebound")


def test_a_command_is_imported_with_the_collector_paused_and_left_as_it_was() -> None:
    """The console script imports a command with the cyclic collector paused and freezes what the
    import made; called in-process (``main``), the collector is left on and nothing is frozen."""
    probe = (
        "import gc, sys\nfrom servebound.cli import {entry}\nsys.argv[1:] = {args!r}\n"
        "seen = []\nimport builtins\nreal = builtins.__import__\n"
        "def spy(name, *a, **k):\n"
        "    if name == 'servebound.cli.common': seen.append(gc.isenabled())\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = spy\n"
        "try:\n    {call}\nexcept SystemExit:\n    pass\n"
        "print(seen[:1], gc.isenabled(), gc.get_freeze_count() > 0, file=sys.stderr)"
    )
    args = ["decode", "-H", "nvidia-h100-sxm", "-m", "llama-3.1-8b", "--json"]
    for entry, call, frozen in (("console_main", "console_main()", True), ("main", f"main({args!r})", False)):
        done = subprocess.run(
            [sys.executable, "-c", probe.format(entry=entry, args=args, call=call)],
            capture_output=True,
            text=True,
            check=True,
        )
        assert json.loads(done.stdout)["verdict"], entry
        assert done.stderr.split() == ["[False]", "True", str(frozen)], (entry, done.stderr)


#: What a hot command never imports: Typer, pydantic (the catalog comes from its snapshot),
#: importlib.resources' readers and zipfile (package data are read from the folder), the network stack (a
#: catalog id is not a Hub reference), and rich where no table is printed; nor what click loads only to
#: word an error or translate a help text (difflib, locale: a short option is no failed long match).
NOT_ON_THE_FAST_PATH = {
    "typer",
    "difflib",
    "locale",
    "pydantic",
    "servebound.catalog.hardware_schema",
    "servebound.catalog.model_index",
    "importlib.resources.readers",
    "zipfile",
    "urllib.request",
    "http.client",
    "ssl",
}
FAST_PATH_CALLS = [
    (["decode", "-H", "nvidia-h100-sxm", "-m", "llama-3.1-8b", "--json"], {"rich"}),
    (["decode", "-H", "nvidia-h100-sxm", "-m", "llama-3.1-8b"], set()),
    (["prefill", "-H", "nvidia-h100-sxm", "-m", "llama-3.1-8b", "--prompt", "8192", "--json"], {"rich"}),
    (["cost", "-H", "nvidia-h100-sxm", "-m", "llama-3.1-8b", "--json"], {"rich"}),
    (["rank", "--hardware", "nvidia-h100-sxm", "--all-formats", "--json"], {"rich"}),
    (["rank", "--hardware", "nvidia-h100-sxm", "--limit", "3"], set()),
]


@pytest.mark.parametrize(
    ("args", "also_not"), FAST_PATH_CALLS, ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_the_fast_path_imports_only_what_the_command_needs(args: list[str], also_not: set[str]) -> None:
    modules, _ = loaded_modules(f"from servebound.cli import main\nmain({args!r})")
    unwanted = NOT_ON_THE_FAST_PATH | also_not
    assert not modules & unwanted, modules & unwanted
    assert f"servebound.cli.{COMMANDS[args[0]][0]}" in modules and "click" in modules
