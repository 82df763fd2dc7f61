"""gzip, ETag / Cache-Control and CORS on the served site, the API reference page and the icon."""

from __future__ import annotations

from fastapi.testclient import TestClient

PAIR = "/pair/dgx-spark-example/laguna-s-2.1-nvfp4-example"


def test_pages_mirrors_and_json_are_gzipped(client: TestClient) -> None:
    for path in (PAIR, PAIR + ".md", "/api/decode?hardware=nvidia-b200&model=hostile", "/derivation"):
        r = client.get(path, headers={"Accept-Encoding": "gzip"})
        assert r.status_code == 200, path
        assert r.headers.get("content-encoding") == "gzip", path
        assert "accept-encoding" in r.headers.get("vary", "").lower(), path
        plain = client.get(path, headers={"Accept-Encoding": "identity"})
        assert "content-encoding" not in plain.headers
        assert r.content == plain.content  # httpx decodes: the same page either way


def test_llms_full_stays_precompressed(client: TestClient) -> None:
    client.get("/llms-full.txt")  # the first request may stream it as it is built
    r = client.get("/llms-full.txt", headers={"Accept-Encoding": "gzip"})
    assert r.status_code == 200 and r.headers["content-encoding"] == "gzip"
    # encoded once (not twice): the stored gzip is what came over the wire
    raw = client.get("/llms-full.txt", headers={"Accept-Encoding": "identity"}).content
    assert int(r.headers["content-length"]) < len(raw)
    assert r.content == raw  # decoded once by the client: not compressed twice


def test_pages_carry_etag_and_cache_control_and_answer_304(client: TestClient) -> None:
    for path in (PAIR, "/hardware", "/api/hardware", "/llms.txt"):
        first = client.get(path)
        tag = first.headers.get("etag")
        assert tag and tag.startswith('"'), path
        assert "max-age=" in first.headers.get("cache-control", ""), path
        again = client.get(path, headers={"If-None-Match": tag})
        assert again.status_code == 304 and again.content == b"", path
        other = client.get(path, headers={"If-None-Match": '"not-this-one"'})
        assert other.status_code == 200 and other.content == first.content
    # a different query is a different page, with its own tag
    assert client.get(PAIR + "?floor=5").headers["etag"] != client.get(PAIR).headers["etag"]


def test_errors_are_not_cached(client: TestClient) -> None:
    r = client.get("/api/decode?hardware=nope&model=hostile")
    assert r.status_code == 404
    assert "etag" not in r.headers and "max-age" not in r.headers.get("cache-control", "")


def test_cors_allows_get_from_any_origin(client: TestClient) -> None:
    r = client.get("/api/hardware", headers={"Origin": "https://example.org"})
    assert r.headers.get("access-control-allow-origin") == "*"
    pre = client.options(
        "/api/decode",
        headers={"Origin": "https://example.org", "Access-Control-Request-Method": "GET"},
    )
    assert pre.status_code == 200 and "GET" in pre.headers.get("access-control-allow-methods", "")
    post = client.options(
        "/api/decode",
        headers={"Origin": "https://example.org", "Access-Control-Request-Method": "POST"},
    )
    assert post.status_code == 400


def test_api_reference_is_rendered_from_the_schema(client: TestClient) -> None:
    spec = client.get("/openapi.json").json()
    page = client.get("/api")
    assert page.status_code == 200 and "<script" not in page.text.split("</main>")[0]
    for path in spec["paths"]:
        assert f"<code>GET {path}</code>" in page.text, path
    assert client.get("/api/", follow_redirects=False).headers["location"] == "/api"
    assert "## GET /api/decode" in client.get("/api.md").text


def test_static_assets_carry_one_cache_control(client: TestClient) -> None:
    r = client.get("/static/tables.js")
    assert r.status_code == 200 and len(r.headers.get_list("cache-control")) == 1


def test_favicon(client: TestClient) -> None:
    r = client.get("/favicon.ico")
    assert r.status_code == 200 and r.headers["content-type"].startswith("image/svg+xml")
    assert b"<svg" in r.content
    assert 'rel="icon"' in client.get("/").text
