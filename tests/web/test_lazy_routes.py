"""The JSON API's routers come on first use (``servebound.web.lazy_routes``): a fresh app answers its
first API request, its strict-parameter 400 and its schema exactly as an app whose routers are in."""

from __future__ import annotations

import subprocess
import sys

from fastapi.testclient import TestClient

from servebound.web.app.server import create_app
from servebound.web.lazy_routes import LazyRoutes
from tests.web.conftest import site_lists


def fresh_client() -> TestClient:
    hardware, models = site_lists()
    return TestClient(create_app(hardware=hardware, models=models, base_url="http://testserver"))


def placeholders(client: TestClient) -> list[object]:
    return [r for r in client.app.router.routes if isinstance(r, LazyRoutes)]  # type: ignore[attr-defined]


def test_first_api_request_is_answered_and_the_routers_take_the_placeholders_place() -> None:
    client = fresh_client()
    assert len(placeholders(client)) == 1
    first = client.get("/api/hardware")
    assert first.status_code == 200
    assert {row["id"] for row in first.json()["hardware"]} >= {"nvidia-h100-sxm", "nvidia-b200"}
    assert placeholders(client) == []
    assert client.get("/api/hardware").json() == first.json()
    # in the eager order: the pages, the machine files, the API, its economics, the reference
    from servebound.web.routes import api, economics, machine, pages, reference

    routers = [getattr(r, "original_router", None) for r in client.app.router.routes]  # type: ignore[attr-defined]
    order = [pages.router, machine.router, api.router, economics.router, reference.router]
    assert [r for r in routers if r is not None] == order


def test_first_request_is_an_error_with_the_api_shape() -> None:
    client = fresh_client()
    wrong = client.get("/api/decode?hardware=nvidia-h100-sxm&model=hostile&colour=red")
    assert wrong.status_code == 400
    assert wrong.json()["error"]["field"] == "colour"
    missing = fresh_client().get("/api/no-such-thing")
    assert missing.status_code == 404
    assert set(missing.json()) == {"error"}


def test_schema_first_lists_every_api_route_with_its_typed_answer() -> None:
    client = fresh_client()
    schema = client.get("/openapi.json").json()
    assert placeholders(client) == []
    assert {"/api/decode", "/api/prefill", "/api/rank", "/api/cost", "/api/economics/balance"} <= set(
        schema["paths"]
    )
    answer = schema["paths"]["/api/decode"]["get"]["responses"]["200"]["content"]["application/json"]
    assert "$ref" in str(answer["schema"])
    # the same document as an app whose routers were loaded by a request first
    other = fresh_client()
    assert other.get("/api/hardware").status_code == 200
    assert other.get("/openapi.json").json() == schema


def test_home_page_leaves_the_api_unimported() -> None:
    """A process that serves the home page has not imported the API's route modules (nor numpy)."""
    code = (
        "import sys; from fastapi.testclient import TestClient; from servebound.web.app.server import create_app; "
        "from tests.web.conftest import site_lists; h, m = site_lists(); "
        "c = TestClient(create_app(hardware=h, models=m)); assert c.get('/').status_code == 200; "
        "print(sorted(n for n in ('servebound.web.routes.api', 'servebound.web.routes.economics', "
        "'numpy', 'latex2mathml', 'servebound.measure.bandwidth') if n in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
