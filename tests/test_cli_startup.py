"""Start-up by design: a command imports what it needs and no more, the root help comes from a registry
checked against the commands, the record cache gives back exactly what the catalog builds, and the
public surface is exactly ``servebound.__all__``. (Timings live in bench/bench_startup.py.)"""

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
from servebound.catalog.hardware import list_hardware
from servebound.catalog.models import get_model, profile_ids
from servebound.cli import COMMANDS
from servebound.cli.app import app, command_modules
from servebound.cli.common import Command
from servebound.inputs import record_cache

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
    modules, out = loaded_modules("from servebound.cli import main\nmain(['--help'])")
    assert "decode" in out and "prefill" in out
    heavy = {"numpy", "pydantic", "fastapi", "jinja2", "servebound.cli.common", "servebound.api"}
    assert not modules & heavy, modules & heavy
    assert not [m for m in modules if m.endswith("_cmd")]


def test_import_servebound_is_light() -> None:
    modules, _ = loaded_modules("import servebound")
    assert not modules & {"numpy", "pydantic", "servebound.api", "servebound.cli"}


def test_decode_on_a_cached_catalog_pair_skips_the_catalog(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom servebound.inputs import record_cache\nfrom servebound.cli import main\n"
        f"record_cache.enable()\nmain({DECODE!r})"
    )
    env = {"SERVEBOUND_CACHE_DIR": str(tmp_path)}
    first_modules, first = loaded_modules(code, env)
    assert "servebound.catalog.hardware" in first_modules and len(list(tmp_path.glob("records-*.json"))) == 1
    modules, cached = loaded_modules(code, env)
    assert cached == first
    # (the catalog's schemas are never built)
    assert not modules & {
        "servebound.catalog.hardware",
        "servebound.catalog.models",
        "servebound.inputs.files",
    }
    # nor what only a write, a TOML file or an error needs (each costs a cold command milliseconds)
    assert not modules & {"pathlib", "hashlib", "tomllib", "difflib"}
    _, uncached = loaded_modules(code, {"SERVEBOUND_CACHE_DIR": "off"})
    assert uncached == first


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


def test_every_catalog_record_survives_the_cache_round_trip() -> None:
    records: list[object] = [row.hardware for row in list_hardware()]
    records += [get_model(pid).adapter for pid in profile_ids()[::7]]
    for record in records:
        back = record_cache.decode(json.loads(json.dumps(record_cache.encode(record))))
        assert back == record and type(back) is type(record)
        assert dict(getattr(back, "sources", {})) == dict(getattr(record, "sources", {}))


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


def test_the_records_file_is_parsed_once_and_again_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The site's validation table looks up two records per reported run: each lookup re-parsing the
    whole file made the first pair page after a start take seconds. The file is now parsed once per
    process, and again only when its modification time or size says another process changed it."""
    monkeypatch.setenv("SERVEBOUND_CACHE_DIR", str(tmp_path))
    monkeypatch.setitem(record_cache._state, "enabled", True)
    first, second = (row.hardware for row in list_hardware()[:2])
    built: list[str] = []

    def build(record: object) -> object:
        built.append(getattr(record, "id", ""))
        return record

    assert record_cache.cached("hardware", "a", lambda: build(first)) == first
    reads: list[object] = []
    real = record_cache.bounded.read_json
    monkeypatch.setattr(record_cache.bounded, "read_json", lambda *a, **k: reads.append(a) or real(*a, **k))
    for _ in range(50):
        assert record_cache.cached("hardware", "a", lambda: build(first)) == first
    assert built == [first.id] and reads == []
    # another process adds a record: the changed file is read once, and its record served unbuilt
    path = record_cache.kept_path("records")
    assert path is not None
    table = json.loads(Path(path).read_text())
    table["hardware"]["b"] = record_cache.encode(second)
    Path(path).write_text(json.dumps(table) + " " * 16)  # a new size as well as a new time
    for _ in range(5):
        assert record_cache.cached("hardware", "b", lambda: build(second)) == second
    assert built == [first.id] and len(reads) == 1


def test_the_cache_refuses_what_it_cannot_rebuild() -> None:
    with pytest.raises(TypeError):
        record_cache.encode(object())
    with pytest.raises(KeyError):
        record_cache.decode({"record": "os.system", "fields": {}})


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


SNAPSHOT_DUMP = """
import json, sys
from servebound.inputs import record_cache
from servebound.catalog import snapshot
from servebound.catalog.hardware import load_hardware_catalog
from servebound.catalog.models import list_models
record_cache.enable()
stored = snapshot.stored_profiles() is not None
models = list_models(native_only=False)
catalog = load_hardware_catalog()
print(json.dumps({
    "models": [[m.id, m.base_id, m.weight_format, m.native,
                record_cache.encode(m.imported, snapshot.profile_kinds()), record_cache.encode(m.adapter)] for m in models],
    "hardware": [record_cache.encode(e, snapshot.hardware_kinds()) for e in catalog],
    "index": dict(catalog.index),
    "stored": stored,
}))
"""


def test_the_catalog_snapshot_equals_a_rebuild(tmp_path: Path) -> None:
    """The first process that walks the catalog writes the snapshot; the next reads every profile and
    hardware row from it, and each equals what the configs and hardware.toml build, field for field."""
    from servebound.catalog import snapshot
    from servebound.catalog.hardware import load_hardware_catalog
    from servebound.catalog.models import list_models

    env = {**os.environ, "SERVEBOUND_CACHE_DIR": str(tmp_path)}

    def dump() -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-c", SNAPSHOT_DUMP], capture_output=True, text=True, check=True, env=env
        )
        result: dict[str, object] = json.loads(done.stdout)
        return result

    first = dump()
    assert not first["stored"]  # built from the configs, then written
    assert len(list(tmp_path.glob("profiles-*.json"))) == len(list(tmp_path.glob("hardware-*.json"))) == 1
    second = dump()
    assert second["stored"]
    catalog = load_hardware_catalog()  # this process: the cache is off, so built from the files
    rebuilt = {
        "models": [
            [
                m.id,
                m.base_id,
                m.weight_format,
                m.native,
                record_cache.encode(m.imported, snapshot.profile_kinds()),
                record_cache.encode(m.adapter),
            ]
            for m in list_models(native_only=False)
        ],
        "hardware": [record_cache.encode(e, snapshot.hardware_kinds()) for e in catalog],
        "index": dict(catalog.index),
    }
    for key, value in rebuilt.items():
        assert second[key] == value == first[key], key
    assert len(rebuilt["models"]) == len(profile_ids())


def test_a_plain_decode_json_imports_no_rich_and_no_pydantic(tmp_path: Path) -> None:
    """A decode --json through the console script: click parses it, neither pydantic nor rich is
    imported, and the second run (the records kept) answers the same."""
    code = f"from servebound.cli import console_main\nimport sys\nsys.argv[1:] = {DECODE!r}\nconsole_main()"
    probe = code.replace("console_main()", "try:\n    console_main()\nexcept SystemExit:\n    pass")
    env = {"SERVEBOUND_CACHE_DIR": str(tmp_path)}
    _, first = loaded_modules(probe, env)
    modules, out = loaded_modules(probe, env)
    assert out == first
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


#: What a hot command never imports: Typer, pydantic (the catalog comes from its snapshot),
#: importlib.resources' readers and zipfile (package data are read from the folder), the network stack (a
#: catalog id is not a Hub reference), and rich where no table is printed.
NOT_ON_THE_FAST_PATH = {
    "typer",
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
    """One cache folder for the calls below (the catalog snapshot and the records are built once)."""
    return tmp_path_factory.mktemp("record-cache")


@pytest.mark.parametrize(
    ("args", "also_not"), FAST_PATH_CALLS, ids=lambda v: " ".join(v) if isinstance(v, list) else ""
)
def test_the_fast_path_imports_only_what_the_command_needs(
    fast_cache: Path, args: list[str], also_not: set[str]
) -> None:
    code = f"from servebound.inputs import record_cache\nfrom servebound.cli import main\nrecord_cache.enable()\nmain({args!r})"
    env = {"SERVEBOUND_CACHE_DIR": str(fast_cache)}
    _, out = loaded_modules(code, env)  # the snapshot and the records are kept
    assert not list(fast_cache.glob("cli-*.json"))  # no replayed command-line spec: click parses each time
    modules, again = loaded_modules(code, env)
    assert again == out
    unwanted = NOT_ON_THE_FAST_PATH | also_not
    assert not modules & unwanted, modules & unwanted
    assert f"servebound.cli.{COMMANDS[args[0]][0]}" in modules and "click" in modules
