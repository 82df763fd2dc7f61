"""The catalog snapshot (package data, built by scripts/build_snapshot.py) equals a rebuild from the
catalog's files, is deterministic, and round-trips every record; and no command writes into the
user's home."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from servebound.catalog import snapshot
from servebound.catalog.hardware import SNAPSHOT_KINDS, load_hardware_catalog
from servebound.catalog.model_build import import_profile
from servebound.catalog.models import PROFILE_KINDS, get_model, profile_ids
from servebound.catalog.snapshot_build import REBUILD, build
from servebound.inputs import package_data

FOLDER = Path(snapshot.__file__).parent.joinpath(*snapshot.FOLDER)


@pytest.fixture(scope="module")
def rebuilt() -> dict[str, str]:
    return build()


@pytest.mark.parametrize("name", snapshot.FILES)
def test_the_snapshot_equals_a_rebuild(rebuilt: dict[str, str], name: str) -> None:
    shipped = (FOLDER / name).read_text("utf-8")
    assert shipped == rebuilt[name], (
        f"catalog/data/snapshot/{name} is not what the catalog builds: run `{REBUILD}` and commit it"
    )


def test_the_snapshot_is_deterministic_and_small(rebuilt: dict[str, str]) -> None:
    assert build() == rebuilt  # a second build gives the same bytes (sorted keys, no dates)
    for text in rebuilt.values():
        first = text.splitlines()[0]
        assert snapshot.dumps(json.loads(first)) == first  # sorted keys, no spaces
    total = sum(len(text.encode()) for text in rebuilt.values())
    assert total < 8_000_000, f"the snapshot is {total:,} bytes"


def test_every_row_is_where_its_header_says() -> None:
    for name in snapshot.FILES[:3]:
        data = package_data.read_bytes("servebound.catalog", *snapshot.FOLDER, name)
        assert data.count(b"\n") == len(snapshot.ids(name)) + 1
        for key in snapshot.ids(name)[::37]:
            assert snapshot.row(name, key) is not None
    with pytest.raises(KeyError):
        snapshot.row(snapshot.PROFILES, "no-such-profile")


def test_a_profile_from_the_snapshot_is_the_imported_one() -> None:
    for profile_id in profile_ids()[::29]:
        stored, imported = get_model(profile_id), import_profile(profile_id)
        assert stored.adapter == imported.adapter
        assert dict(stored.adapter.sources) == dict(imported.adapter.sources)
        assert stored.imported == imported.imported
        assert (stored.base_id, stored.weight_format, stored.native) == (
            imported.base_id,
            imported.weight_format,
            imported.native,
        )


def test_the_core_records_match_the_catalog_rows() -> None:
    catalog = load_hardware_catalog()
    for entry in list(catalog)[::11]:
        assert snapshot.core_hardware(entry.id) == entry.hardware
    assert snapshot.hardware_index() == catalog.index


def test_the_snapshot_refuses_what_it_cannot_rebuild() -> None:
    with pytest.raises(TypeError):
        snapshot.encode(object(), SNAPSHOT_KINDS)
    with pytest.raises(KeyError):
        snapshot.decode({"record": "os.system", "fields": {}}, PROFILE_KINDS)


#: Each command as a person runs it, with HOME and XDG_CACHE_HOME in empty folders.
COMMANDS = [
    ["decode", "-H", "nvidia-dgx-spark", "-m", "qwen3.6-35b-a3b-nvfp4", "--json"],
    ["decode", "-H", "nvidia-h100-sxm", "-m", "llama-3.1-8b"],
    ["rank", "--hardware", "nvidia-h100-sxm", "--all-formats", "--json"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_commands_write_nothing_into_the_home(tmp_path: Path, args: list[str]) -> None:
    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    cache.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "SERVEBOUND_CACHE_DIR"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(cache))
    for _ in range(2):  # a first run and a second (nothing kept by the first either)
        done = subprocess.run(
            [sys.executable, "-m", "servebound", *args], env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, done.stderr
    assert list(home.rglob("*")) == [] and list(cache.rglob("*")) == []


def test_serve_writes_nothing_into_the_home(tmp_path: Path) -> None:
    import socket
    import time

    import httpx

    home, cache = tmp_path / "home", tmp_path / "cache"
    home.mkdir()
    cache.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "SERVEBOUND_CACHE_DIR"}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(cache))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = subprocess.Popen(
        [sys.executable, "-m", "servebound", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, "the server stopped"
            assert time.monotonic() < deadline, "the server did not answer"
            try:
                if httpx.get(base + "/", timeout=10).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        assert httpx.get(base + "/pair/nvidia-h100-sxm/llama-3.1-8b", timeout=60).status_code == 200
        decode = httpx.get(base + "/api/decode?hardware=nvidia-h100-sxm&model=llama-3.1-8b", timeout=60)
        assert decode.status_code == 200
        assert httpx.get(base + "/llms-full.txt", timeout=300).status_code == 200
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert list(home.rglob("*")) == [] and list(cache.rglob("*")) == []


def test_the_model_index_from_the_snapshot_is_the_validated_one() -> None:
    from servebound.catalog.model_build import _index_entries
    from servebound.catalog.models import IndexEntry, _entries

    validated = _index_entries()
    assert _entries() == {
        key: IndexEntry(**{**entry.model_dump(), "formats": tuple(entry.formats)})
        for key, entry in validated.items()
    }
