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

import pytest
import typer

import servebound
from servebound.cli import COMMANDS
from servebound.cli.app import app, command_modules

DECODE = ["decode", "--hardware", "nvidia-dgx-spark", "--model", "qwen3.6-35b-a3b-nvfp4", "--json"]


def _module_of(command: object) -> str:
    """The module whose function a registered command (or a group's first command) runs."""
    while isinstance(command, typer.core.TyperGroup):
        command = next(iter(command.commands.values()))
    return str(command.callback.__module__)  # type: ignore[attr-defined]


def test_the_registry_is_the_commands() -> None:
    """Each command is declared once, in COMMANDS: its module registers it by name and its help is the
    declared one (no docstring of its own to drift from it); an undeclared name is refused."""
    group = typer.main.get_command(app)
    assert isinstance(group, typer.core.TyperGroup)
    assert sorted(group.commands) == sorted(COMMANDS)
    for name, command in group.commands.items():
        module, text = COMMANDS[name]
        assert command.help == text, name
        assert _module_of(command) == f"servebound.cli.{module}", name
        assert module in command_modules(), name
        if not isinstance(command, typer.core.TyperGroup):
            assert command.callback is not None and command.callback.__doc__ is None, name
    from servebound.cli.common import app as root

    with pytest.raises(ValueError, match=r"not declared in servebound\.cli\.COMMANDS"):
        root.command("decoed")(lambda: None)


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
    modules, out = loaded_modules("from servebound.cli import main\nmain(['--help'])")
    assert "decode" in out and "prefill" in out
    heavy = {"numpy", "pydantic", "fastapi", "jinja2", "servebound.cli.common", "servebound.api"}
    assert not modules & heavy, modules & heavy
    assert not [m for m in modules if m.endswith("_cmd")]


def test_import_servebound_is_light() -> None:
    modules, _ = loaded_modules("import servebound")
    assert not modules & {"numpy", "pydantic", "servebound.api", "servebound.cli"}


def test_decode_on_a_catalog_pair_reads_two_snapshot_rows() -> None:
    """A catalog pair's records come from the snapshot's two rows: neither catalog module (nor their
    schemas, or the TOML parser) is imported, and nothing is kept between processes."""
    code = f"import sys\nfrom servebound.cli import main\nmain({DECODE!r})"
    modules, out = loaded_modules(code, {"SERVEBOUND_CACHE_DIR": "off"})
    assert json.loads(out)["hardware"]["id"] == "nvidia-dgx-spark"
    assert not modules & {
        "servebound.catalog.hardware",
        "servebound.catalog.models",
        "servebound.inputs.files",
        "tomllib",
    }


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_one_decode_evaluates_floats_without_numpy(tmp_path: Path, extra: list[str]) -> None:
    """The core's formulas take floats or arrays (servebound.core.arith): one decode, of an MoE model
    under expected expert traffic, runs on floats and never imports numpy; --range (a curve) does."""
    pair = [arg for arg in DECODE if arg != "--json"]
    env = {"SERVEBOUND_CACHE_DIR": str(tmp_path)}

    def modules_of(args: list[str]) -> set[str]:
        code = f"from servebound.inputs import record_cache\nfrom servebound.cli import main\nrecord_cache.enable()\nmain({args!r})"
        return loaded_modules(code, env)[0]

    plain = modules_of(pair + extra)
    assert "numpy" not in plain
    assert not plain & {"servebound.core.decode_range", "servebound.core.layout", "servebound.cli.layout_cmd"}
    assert "numpy" in modules_of([*pair, *extra, "--range"])


def test_a_user_file_is_always_validated(tmp_path: Path) -> None:
    path = tmp_path / "hw.json"
    path.write_text('{"name": "J", "memory_gb": 128, "bandwidth_gb_per_s": 273}')
    code = (
        "from servebound.inputs import record_cache\nfrom servebound.cli import main\nrecord_cache.enable()\n"
        f"main(['decode', '-H', {str(path)!r}, '-m', 'qwen3.6-35b-a3b-nvfp4', '--json'])"
    )
    modules, _ = loaded_modules(code, {"SERVEBOUND_CACHE_DIR": str(tmp_path / "cache")})
    assert "servebound.inputs.files" in modules


def test_the_cache_key_covers_the_whole_package(tmp_path: Path) -> None:
    # A copy of the package: a change to a file outside inputs/ (where the cache lives) or to a data
    # file must give a new key, or a stale record would be read back after an upgrade.
    import shutil

    shutil.copytree(Path(servebound.__file__).parent, tmp_path / "servebound")
    probe = "from servebound.inputs import record_cache; print(record_cache.package_key())"

    def key() -> str:
        env = {**os.environ, "PYTHONPATH": str(tmp_path)}
        return subprocess.run(
            [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
        ).stdout

    first = key()
    assert key() == first
    for changed in ("core/units.py", "catalog/data/hardware.toml"):
        path = tmp_path / "servebound" / changed
        os.utime(path, ns=(path.stat().st_atime_ns, path.stat().st_mtime_ns + 1_000_000_000))
        assert key() != first, changed
        first = key()


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


def test_a_plain_decode_json_imports_no_rich_and_no_typer_pydantic_path(tmp_path: Path) -> None:
    """With the command-line spec kept (the first run keeps it), a decode --json is parsed by
    servebound.cli.fast: neither Typer's per-parameter pydantic adapters nor rich are imported, and
    the answer is the one Typer's path gives."""
    code = f"from servebound.cli import console_main\nimport sys\nsys.argv[1:] = {DECODE!r}\nconsole_main()"
    probe = code.replace("console_main()", "try:\n    console_main()\nexcept SystemExit:\n    pass")
    env = {"SERVEBOUND_CACHE_DIR": str(tmp_path)}
    first_modules, first = loaded_modules(probe, env)
    assert "typer._adapters" in first_modules  # the first run: Typer parses, and its spec is kept
    modules, out = loaded_modules(probe, env)
    assert out == first
    assert not {m for m in modules if m == "rich" or m.startswith(("rich.", "pydantic"))}
    assert not modules & {"typer._adapters", "typer.rich_utils", "pydantic", "pydantic_core"}


def test_kept_help_is_typers_help_and_imports_no_formatter(tmp_path: Path) -> None:
    env = {"SERVEBOUND_CACHE_DIR": str(tmp_path), "COLUMNS": "90"}
    for args in (["--help"], ["decode", "--help"]):
        code = f"from servebound.inputs import record_cache\nfrom servebound.cli import main\nrecord_cache.enable()\nmain({args!r})"
        _, typer_text = loaded_modules(code, {**env, "SERVEBOUND_CACHE_DIR": "off"})
        loaded_modules(code, env)  # printed by Typer, and kept
        modules, kept = loaded_modules(code, env)
        assert kept == typer_text and "Usage: servebound" in kept
        assert not {m for m in modules if m.startswith(("typer", "rich", "servebound.cli.decode_cmd"))}


#: What a hot command answered by the fast path never imports: Typer and its click (the options are
#: read from the kept spec), pydantic (the catalog comes from its snapshot), importlib.resources'
#: readers and zipfile (package data are read from the folder), the network stack (a catalog id is not a
#: Hub reference), and rich where no table is printed.
NOT_ON_THE_FAST_PATH = {
    "typer",
    "typer._click",
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


@pytest.fixture(scope="module")
def fast_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One cache folder for the calls below (the catalog snapshot is built once)."""
    return tmp_path_factory.mktemp("fast-cache")


@pytest.mark.parametrize(
    ("args", "also_not"), FAST_PATH_CALLS, ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_the_fast_path_imports_only_what_the_command_needs(
    fast_cache: Path, args: list[str], also_not: set[str]
) -> None:
    code = f"from servebound.inputs import record_cache\nfrom servebound.cli import main\nrecord_cache.enable()\nmain({args!r})"
    env = {"SERVEBOUND_CACHE_DIR": str(fast_cache)}
    _, out = loaded_modules(code, env)  # where Typer parses: the spec, the snapshot, the records are kept
    assert list(fast_cache.glob("cli-*.json"))
    modules, again = loaded_modules(code, env)
    assert again == out
    unwanted = NOT_ON_THE_FAST_PATH | also_not
    assert not modules & unwanted, modules & unwanted
    assert "servebound.cli.declare" in modules  # (the command's own module ran)
