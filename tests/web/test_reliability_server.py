"""Issue 19's server reproducers: absolute URLs come from the configured base URL, never from a request's
Host header; the packaged templates and data are read once at start, so replacing the installed files
under a running server (a reinstall) leaves every page answering; read_context = 0 is allowed."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi.testclient import TestClient

from servebound.web.app.server import create_app
from tests.web.conftest import site_lists

ROOT = Path(__file__).resolve().parents[2]
EVIL = "evil.example"


@pytest.fixture(scope="module")
def configured() -> TestClient:
    hardware, models = site_lists()
    return TestClient(create_app(hardware=hardware, models=models, base_url="https://servebound.example"))


@pytest.mark.parametrize("path", ["/robots.txt", "/sitemap.xml", "/llms.txt"])
def test_host_header_is_never_echoed(configured: TestClient, path: str) -> None:
    response = configured.get(path, headers={"Host": EVIL})
    assert response.status_code == 200
    assert EVIL not in response.text
    assert "https://servebound.example/" in response.text


def test_unconfigured_app_uses_its_default_base_not_the_host() -> None:
    hardware, models = site_lists()
    client = TestClient(create_app(hardware=hardware, models=models))
    robots = client.get("/robots.txt", headers={"Host": EVIL}).text
    assert EVIL not in robots and "Sitemap: http://localhost:8000/sitemap.xml" in robots


def test_api_allows_read_context_zero(configured: TestClient) -> None:
    response = configured.get(
        "/api/decode",
        params={"hardware": "nvidia-h100-sxm", "model": "qwen3.6-35b-a3b-example", "read_context": 0},
    )
    assert response.status_code == 200, response.text
    assert response.json()["kv_read_bytes"] == 0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: What a served site answers, by kind of route: pages and their mirrors and fragments, machine files,
#: the JSON API and its schema, the API reference, the icon.
SERVED = (
    "/",
    "/static/site.css",
    "/derivation",
    "/derivation?weights_gb=30",
    "/methodology",
    "/validation",
    "/economics",
    "/economics?utm_source=newsletter",
    "/hardware",
    "/models?fits=nvidia-rtx-4090",
    "/hardware/nvidia-h100-sxm",
    "/hardware/8x-nvidia-h100-sxm?model=llama-3.1-70b",
    "/models/llama-3.1-8b",
    "/pair/nvidia-h100-sxm/llama-3.1-8b?floor=7",
    "/pair/nvidia-h100-sxm/llama-3.1-8b?floor=7&section=charts",
    "/pair/nvidia-h100-sxm/llama-3.1-8b?floor=7&section=cost",
    "/pair/nvidia-h100-sxm/llama-3.1-8b.md",
    "/robots.txt",
    "/llms.txt",
    "/sitemap.xml",
    "/conformance.json",
    "/docs",
    "/openapi.json",
    "/favicon.ico",
    "/api/hardware",
    "/api/models",
    "/api/decode?hardware=nvidia-h100-sxm&model=llama-3.1-8b",
    "/api/prefill?hardware=nvidia-h100-sxm&model=llama-3.1-8b&prompt=8192&range=true",
    "/api/rank?model=llama-3.1-8b",
    "/api/validation",
    "/api/cost?hardware=nvidia-h100-sxm&model=llama-3.1-8b",
    "/api/layout?hardware=8x-nvidia-h100-sxm&model=llama-3.1-70b",
    "/api/economics/balance?hardware=nvidia-h100-sxm&model=llama-3.1-8b",
)


def test_the_package_removed_under_a_running_server_changes_no_answer(tmp_path: Path) -> None:
    """A copy of the package serves its home page (and nothing else); once it has imported what it
    serves (it logs so), the whole copy is deleted, code and data, as an uninstall or a reinstall does
    on disk, and every kind of route still answers from memory: the JSON API and its schema too
    (issue 33: they answered 500 when their routers were imported on first use)."""
    shutil.copytree(
        ROOT / "src" / "servebound", tmp_path / "servebound", ignore=shutil.ignore_patterns("__pycache__")
    )
    port = _free_port()
    log = tmp_path / "server.log"
    with log.open("w") as sink:
        server = subprocess.Popen(
            [sys.executable, "-m", "servebound", "serve", "--port", str(port)],
            cwd=tmp_path,
            env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while "Imported what it serves" not in log.read_text("utf-8"):
            if time.monotonic() > deadline or server.poll() is not None:
                pytest.fail(f"the server did not start: {log.read_text('utf-8')[-2000:]}")
            time.sleep(0.1)
        assert httpx.get(f"{base}/", timeout=30).status_code == 200
        for _ in range(3):  # the server may write bytecode meanwhile
            shutil.rmtree(tmp_path / "servebound", ignore_errors=True)
        assert not (tmp_path / "servebound").exists()
        for path in SERVED:
            response = httpx.get(base + path, timeout=120)
            assert response.status_code == 200, (path, response.status_code, response.text[:300])
        # the trailing-slash redirect of a real server names no host, whatever the Host header says
        moved = httpx.get(f"{base}/hardware/", headers={"Host": EVIL}, timeout=30)
        assert moved.status_code == 307 and moved.headers["location"] == "/hardware"
    finally:
        server.terminate()
        server.wait(timeout=20)


def _route_paths(routes: list[Any]) -> Iterator[str]:
    for route in routes:  # an included router stands in the table as one entry holding its routes
        inner = getattr(route, "original_router", None)
        yield from _route_paths(inner.routes) if inner is not None else [getattr(route, "path", "")]


def test_the_api_routes_are_in_the_app_from_its_creation(configured: TestClient) -> None:
    """No route is added on first use: the app's table holds the JSON API before any request."""
    hardware, models = site_lists()
    paths = set(_route_paths(create_app(hardware=hardware, models=models).routes))
    assert {"/api/decode", "/api/prefill", "/api/layout", "/api/cost", "/api/economics/balance"} <= paths
    assert {"/", "/pair/{hw_ref}/{model_ref}", "/llms.txt", "/docs", "/favicon.ico"} <= paths


@pytest.mark.parametrize(
    ("path", "location"),
    [
        ("/hardware/", "/hardware"),
        ("/hardware/nvidia-h100-sxm/", "/hardware/nvidia-h100-sxm"),
        ("/api/hardware/", "/api/hardware"),
        ("/api/models/", "/api/models"),
        ("/docs/", "/docs"),
        (
            "/pair/nvidia-h100-sxm/qwen3.6-35b-a3b-example/?floor=7",
            "/pair/nvidia-h100-sxm/qwen3.6-35b-a3b-example?floor=7",
        ),
        ("/hardware//", "/hardware"),
    ],
)
def test_trailing_slash_redirects_name_no_host(configured: TestClient, path: str, location: str) -> None:
    """issue 33: ``Host: evil.example`` came back as ``Location: http://evil.example/hardware``. The
    redirect is relative; no request header reaches the answer's headers or body."""
    headers = {
        "Host": EVIL,
        "X-Forwarded-Host": EVIL,
        "X-Forwarded-Proto": "gopher",
        "Forwarded": f"host={EVIL}",
    }
    response = configured.get(path, headers=headers, follow_redirects=False)
    assert response.status_code == 307
    assert response.headers["location"] == location
    assert (
        EVIL not in response.text
        and EVIL not in str(response.headers)
        and "gopher" not in str(response.headers)
    )


def test_a_path_missing_by_more_than_its_slash_is_not_found(configured: TestClient) -> None:
    for path in ("/no/such/", "/api/nope/", "/static/"):
        response = configured.get(path, headers={"Host": EVIL}, follow_redirects=False)
        assert response.status_code == 404 and "location" not in response.headers
        assert EVIL not in response.text
