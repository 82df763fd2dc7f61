"""The API under the one input policy: it takes no request bodies (GET only), so its untrusted input is
the query string; NaN and Infinity are refused there with a 4xx JSON error naming the field, and a
JSON body (duplicate keys or NaN) is never read: the method is refused with a JSON error."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

BASE = "/api/decode?hardware=nvidia-b200&model=hostile"


@pytest.mark.parametrize("value", ["NaN", "nan", "Infinity", "-inf", "1e999"])
@pytest.mark.parametrize("field", ["floor", "overhead_gb"])
def test_non_finite_query_values(client: TestClient, field: str, value: str) -> None:
    response = client.get(f"{BASE}&{field}={value}")
    assert 400 <= response.status_code < 500
    assert response.json()["error"]["field"] == field


@pytest.mark.parametrize("body", ['{"floor": 1, "floor": 2}', '{"floor": NaN}'])
def test_json_bodies_are_never_read(client: TestClient, body: str) -> None:
    response = client.post(BASE, content=body, headers={"content-type": "application/json"})
    assert response.status_code == 405
    assert "error" in response.json()
