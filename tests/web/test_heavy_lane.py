"""Heavy requests are bounded before their work starts: one at a time in the heavy lane, a short queue,
and beyond it a 503 with Retry-After in the site's error shape; light requests never wait for it."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient

import servebound.api
from servebound.web.app import lane as lane_module
from servebound.web.app import state as state_module
from servebound.web.app.lane import HEAVY_PATHS, Lane, is_heavy
from servebound.web.app.server import create_app
from servebound.web.app.state import HEAVY_ROUTES
from tests.web.conftest import site_lists

PREFILL = "/api/prefill?hardware=nvidia-h100-sxm&model=hostile&prompt=2048"
DECODE = "/api/decode?hardware=nvidia-h100-sxm&model=hostile"
PAIR = "/pair/nvidia-h100-sxm/hostile?floor=12"


@pytest.fixture()
def app(monkeypatch: pytest.MonkeyPatch) -> FastAPI:
    """An app of its own (the tests hold and free its lane), with no heavy answer kept yet."""
    monkeypatch.setattr(state_module, "_ANSWERS", OrderedDict())
    hardware, models = site_lists()
    return create_app(hardware=hardware, models=models, base_url="http://testserver")


@pytest.fixture()
def client(app: FastAPI) -> Iterator[TestClient]:
    yield TestClient(app)


@pytest.fixture()
def prefills(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """The prefill answers computed (the heavy work a refused request must never start)."""
    calls: list[Any] = []
    real = servebound.api.prefill_answer

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return real(*args, **kwargs)

    # the route's own name for it (imported at the top of the routes module)
    monkeypatch.setattr(servebound.web.routes.api, "prefill_answer", counted)
    return calls


def _api_routes(routes: list[Any]) -> Iterator[APIRoute]:
    for route in routes:
        if isinstance(route, APIRoute):
            yield route
        elif hasattr(route, "original_router"):  # an included router
            yield from _api_routes(route.original_router.routes)


def test_every_heavy_route_takes_the_lane(app: FastAPI) -> None:
    routes = list(_api_routes(app.routes))
    assert len(routes) > 20
    heavy = {r.path for r in routes if r.endpoint in HEAVY_ROUTES}
    assert heavy == HEAVY_PATHS
    assert all(is_heavy({"path": path, "query_string": b""}) for path in heavy)
    assert not is_heavy({"path": "/api/decode", "query_string": b"hardware=x&model=y"})
    # decode on a system answers at its best layout: a search, so it waits for the lane
    for system in (b"1024x-nvidia-b200", b"8x-h200", b"nvidia-gb200-nvl72"):
        assert is_heavy({"path": "/api/decode", "query_string": b"model=deepseek-v3&hardware=" + system})
    assert not is_heavy({"path": "/api/decode", "query_string": b"hardware=4090&model=qwen3-8b"})
    assert is_heavy({"path": "/pair/a/b", "query_string": b""})
    assert is_heavy({"path": "/hardware/8x-nvidia-b200", "query_string": b"model=deepseek-v3"})
    assert not is_heavy({"path": "/hardware/8x-nvidia-b200", "query_string": b""})


def test_a_full_queue_is_refused_before_any_work(
    app: FastAPI, client: TestClient, prefills: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    lane: Lane = app.state.lane
    monkeypatch.setattr(lane_module, "HEAVY_QUEUE", 0)
    lane.busy = True  # another heavy request holds the slot
    refused = client.get(PREFILL)
    assert refused.status_code == 503
    assert refused.headers["retry-after"] == str(lane_module.RETRY_AFTER_S)
    body = refused.json()
    assert set(body) == {"error"} and set(body["error"]) == {"status", "field", "message"}
    assert body["error"]["status"] == 503 and body["error"]["field"] == "request"
    assert "one runs at a time" in body["error"]["message"]
    assert prefills == []  # its work never started
    page = client.get(PAIR)  # a computed page is refused the same way, as a page
    assert page.status_code == 503 and page.headers["content-type"].startswith("text/html")
    assert page.headers["retry-after"] == str(lane_module.RETRY_AFTER_S)
    assert client.get(DECODE).status_code == 200  # light requests never wait for the lane
    assert lane.refused == 2 and lane.busy and not lane.queue
    lane.leave()
    assert not lane.busy
    assert client.get(PREFILL).status_code == 200 and len(prefills) == 1
    assert not lane.busy  # the slot is given back after the answer


def test_a_request_that_waits_too_long_is_refused(
    app: FastAPI, client: TestClient, prefills: list[Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    lane: Lane = app.state.lane
    monkeypatch.setattr(lane_module, "HEAVY_WAIT_S", 0.01)
    lane.busy = True
    refused = client.get(PREFILL)
    assert refused.status_code == 503 and refused.json()["error"]["status"] == 503
    assert "none freed within" in refused.json()["error"]["message"]
    assert prefills == [] and not lane.queue and lane.busy  # nothing left queued; the holder keeps it
    lane.leave()
    assert not lane.busy


def test_a_waiting_request_is_answered_when_the_slot_frees(
    app: FastAPI, client: TestClient, prefills: list[Any]
) -> None:
    lane: Lane = app.state.lane
    lane.busy = True
    answers: list[int] = []
    waiter = threading.Thread(target=lambda: answers.append(client.get(PREFILL).status_code))
    waiter.start()
    deadline = time.monotonic() + 60
    while not lane.queue and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(lane.queue) == 1 and prefills == []  # it waits, its work not started
    lane.leave()  # the holder is done: the slot passes to the waiting request
    waiter.join(60)
    assert answers == [200] and len(prefills) == 1
    assert not lane.busy and not lane.queue


def test_the_busy_answer_is_declared(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    for path in HEAVY_PATHS:
        busy = paths[path]["get"]["responses"]["503"]
        assert "Retry-After" in busy["headers"]
        assert busy["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")
    assert "503" not in paths["/api/decode"]["get"]["responses"]


def test_a_kept_answer_is_the_same_in_either_encoding(client: TestClient, prefills: list[Any]) -> None:
    """A heavy answer is computed once and kept gzip-compressed: asked again, plain or gzip, the same
    JSON, with no second computation."""
    first = client.get(PREFILL, headers={"Accept-Encoding": "identity"})
    again_plain = client.get(PREFILL, headers={"Accept-Encoding": "identity"})
    again_gzip = client.get(PREFILL, headers={"Accept-Encoding": "gzip"})
    assert first.status_code == again_plain.status_code == again_gzip.status_code == 200
    assert "content-encoding" not in again_plain.headers
    assert again_gzip.headers["content-encoding"] == "gzip"
    assert first.content == again_plain.content == again_gzip.content  # the client decodes the gzip
    assert len(prefills) == 1
