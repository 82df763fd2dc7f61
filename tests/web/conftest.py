"""Shared fixtures for the site's tests: a small site over real example files and catalog rows."""

from __future__ import annotations

import contextlib
import functools
import http.server
import re
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient

from servebound.catalog.hardware import get_hardware
from servebound.core.kv import KVShape
from servebound.core.model import ModelAdapter, PrefillShape, Weights
from servebound.inputs.files import load_hardware_file, load_model_file
from servebound.web.app.server import create_app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
HW_FILE = EXAMPLES / "dgx-spark.toml"
MOE_FILE = EXAMPLES / "qwen3.6-35b-a3b-nvfp4.toml"
LAGUNA_FILE = EXAMPLES / "laguna-s-2.1-nvfp4.toml"
HOSTILE = "<script>alert(1)</script>"
CATALOG_HW = ("nvidia-b200", "nvidia-h100-sxm", "apple-m3-ultra-512gb", "nvidia-rtx-4090")


def hostile_model() -> ModelAdapter:
    """A dense 8 B-parameter model at 1 byte/param whose name is a script tag."""
    return ModelAdapter(
        id="hostile",
        name=HOSTILE,
        weights=Weights.from_params(bytes_per_param=1.0, total_params=8e9, active_params=8e9),
        kv_alloc=KVShape(global_bytes_per_token=32768),
        kv_read=KVShape(global_bytes_per_token=32768),
        prefill=PrefillShape(linear_active_params=7e9, attention_global_flops_per_pair=4 * 4096 * 32),
        context_limit_tokens=131072,
    )


def site_lists() -> tuple[list[object], list[object]]:
    hardware: list[object] = [load_hardware_file(HW_FILE)]
    hardware += [get_hardware(ref) for ref in CATALOG_HW]
    models: list[object] = [load_model_file(MOE_FILE), load_model_file(LAGUNA_FILE), hostile_model()]
    return hardware, models


@pytest.fixture(scope="session")
def app() -> FastAPI:
    hardware, models = site_lists()
    return create_app(hardware=hardware, models=models, base_url="http://testserver")


@pytest.fixture(scope="session")
def client(app: FastAPI) -> TestClient:
    return TestClient(app)


@contextlib.contextmanager
def file_server(folder: Path) -> Iterator[str]:
    """A plain, quiet HTTP file server over ``folder`` on a free local port, for as long as the block
    runs; yields its base URL."""

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def bound_socket() -> socket.socket:
    """A listening-ready socket on a free loopback port, held open and handed to uvicorn, so no other
    process can take the port between choosing it and serving on it."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.contextmanager
def live_server(app: FastAPI, start_s: float = 30) -> Iterator[str]:
    """A real uvicorn server over ``app`` on a free loopback port, for as long as the block runs;
    yields its base URL. A module's fixture starts one over the site it needs."""
    import uvicorn

    sock = bound_socket()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", log_level="warning"))
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + start_s
    while not srv.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert srv.started, "uvicorn did not start"
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        srv.should_exit = True
        thread.join(timeout=10)
        sock.close()


def dead_links(folder: Path) -> list[str]:
    """The links (href, src) on the exported pages under ``folder`` that name no file there, as
    ``page: link``, sorted. The copy's links are relative to the file that holds them (404.html's
    start at the root); a link to a page names its ``index.html``, so each must be a file as it is
    written, as a file:// browser opens it. Asserts the pages hold such links at all."""
    missing = set()
    seen = 0
    for page in folder.rglob("*.html"):
        for link in re.findall(r'(?:href|src)="([^"#?]*)[^"]*"', page.read_text("utf-8")):
            if not link or link.startswith(("http:", "https:", "//", "mailto:", "data:")):
                continue
            seen += 1
            if link.startswith("/"):  # 404.html, served at any depth: a folder stands for its index
                target = folder / link.lstrip("/")
                if target.is_dir():
                    target = target / "index.html"
            else:
                target = page.parent / link
            if not target.resolve().is_file():
                missing.add(f"{page.relative_to(folder)}: {link}")
    assert seen > 0, "no links on the exported pages"
    return sorted(missing)
