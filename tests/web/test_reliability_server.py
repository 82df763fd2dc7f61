"""Issue 19's server reproducers: absolute URLs come from the configured base URL, never from a request's
Host header; the packaged templates and data are read once at start, so replacing the installed files
under a running server (a reinstall) leaves every page answering; read_context = 0 is allowed."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

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


def test_pages_survive_the_package_files_being_replaced(tmp_path: Path) -> None:
    """A copy of the package serves; its templates, assets, page content and catalog data are then
    deleted, as an uninstall or upgrade does on disk, and every page still answers from memory."""
    shutil.copytree(
        ROOT / "src" / "servebound", tmp_path / "servebound", ignore=shutil.ignore_patterns("__pycache__")
    )
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "servebound", "serve", "--port", str(port)],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{base}/api/hardware", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.25)
        else:
            pytest.fail("the server did not start")
        assert httpx.get(f"{base}/", timeout=30).status_code == 200
        for folder in ("web/templates", "web/static", "web/content", "web/examples", "catalog/data"):
            shutil.rmtree(tmp_path / "servebound" / folder)
        for path in (
            "/",
            "/static/site.css",
            "/derivation",
            "/methodology",
            "/validation",
            "/economics",
            "/hardware",
            "/models",
            "/hardware/nvidia-h100-sxm",
            "/models/llama-3.1-8b",
            "/pair/nvidia-h100-sxm/llama-3.1-8b?floor=7",
            "/pair/nvidia-h100-sxm/llama-3.1-8b.md",
            "/robots.txt",
            "/api/decode?hardware=nvidia-h100-sxm&model=llama-3.1-8b",
        ):
            response = httpx.get(base + path, timeout=60)
            assert response.status_code == 200, (path, response.status_code, response.text[:300])
    finally:
        server.terminate()
        server.wait(timeout=20)
