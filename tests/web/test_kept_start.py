"""What a server's start keeps beside the record cache (``web.pages.site_snapshot``,
``web.pages.kept_templates``) gives back exactly what a start without it builds: the site's model list
field for field, and the same pages from the kept compiled templates."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from servebound.inputs import record_cache
from servebound.web.app.server import create_app
from servebound.web.pages.site import default_site_data
from servebound.web.pages.site_snapshot import KEPT

PAGES = ("/models", "/hardware/nvidia-h100-sxm.md", "/pair/nvidia-h100-sxm/llama-3.1-8b", "/llms.txt")

START = f"""
import json, sys
from pathlib import Path
from fastapi.testclient import TestClient
from servebound.inputs import record_cache
from servebound.web.pages.site_snapshot import KEPT
record_cache.enable()
folder = Path(sys.argv[1])
kept = bool(list(folder.glob("site-models-*.json"))), bool(list(folder.glob("templates-*/*.cache")))
from servebound.web.app.server import create_app
app = create_app()
client = TestClient(app)
pages = {{path: client.get(path).text for path in {PAGES!r}}}
models = [[m.id, [getattr(m, name) for name in KEPT], record_cache.encode(m.adapter)] for m in app.state.site.models]
print(json.dumps({{"kept": kept, "models": models, "pages": pages}}))
"""


def models_json(models: list) -> list:  # type: ignore[type-arg]
    # through JSON, as the subprocess prints them (tuples become lists)
    return json.loads(
        json.dumps([[m.id, [getattr(m, n) for n in KEPT], record_cache.encode(m.adapter)] for m in models])
    )


@pytest.fixture(scope="module")
def starts(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, object]]:
    """Two starts of the packaged site with one cache folder: the first builds and keeps, the second
    reads what the first kept."""
    folder = tmp_path_factory.mktemp("cache")
    env = {**os.environ, "SERVEBOUND_CACHE_DIR": str(folder)}
    out = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", START, str(folder)], capture_output=True, text=True, check=True, env=env
        )
        out.append(json.loads(done.stdout))
    return out


def test_the_kept_site_models_equal_a_rebuild(starts: list[dict[str, object]]) -> None:
    first, second = starts
    assert first["kept"] == [False, False]
    assert second["kept"] == [True, True]
    rebuilt = models_json(default_site_data().models)  # this process: the cache is off
    assert len(rebuilt) > 500
    assert second["models"] == first["models"] == rebuilt


def test_pages_from_kept_templates_are_the_pages_compiled_afresh(starts: list[dict[str, object]]) -> None:
    first, second = starts
    client = TestClient(create_app())  # the cache is off here: every template compiled in this process
    afresh = {path: client.get(path).text for path in PAGES}
    assert second["pages"] == first["pages"] == afresh


def test_an_unwritable_cache_folder_keeps_nothing_and_serves(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    env = {**os.environ, "SERVEBOUND_CACHE_DIR": str(blocked)}
    done = subprocess.run(
        [sys.executable, "-c", START, str(blocked)], capture_output=True, text=True, check=True, env=env
    )
    assert json.loads(done.stdout)["pages"]["/models"].startswith("<!doctype html>")
