"""Every route over HTTP: status, content type, escaping, unknown ids, bad values, the error shape."""

from __future__ import annotations

import re

import pytest
from fastapi import FastAPI, Request
from fastapi.routing import APIRoute
from fastapi.testclient import TestClient
from starlette.routing import Route

from servebound.errors import InputError
from servebound.web.app.responses import StrictJSONResponse
from servebound.web.app.state import web_state
from servebound.web.pages import registry
from servebound.web.pages.manual import documents
from servebound.web.pages.registry import in_full_text
from servebound.web.routes import api, economics, machine, pages, reference
from servebound.web.routes.api import StrictRoute
from tests.web.conftest import HOSTILE

PAIR = "/pair/dgx-spark-example/laguna-s-2.1-nvfp4-example"

PAGES = [
    "/",
    "/hardware",
    "/hardware?vendor=NVIDIA&sort=memory",
    "/hardware?class=datacenter+GPU&min_memory_gb=100",
    "/hardware/dgx-spark-example",
    "/hardware/nvidia-b200",
    "/models",
    "/models?fits=nvidia-rtx-4090&sort=size",
    "/models?min_params_b=1&max_params_b=50",
    "/models/laguna-s-2.1-nvfp4-example",
    "/models/hostile",
    PAIR,
    PAIR + "?read_context=8000&alloc_context=32000&floor=10&overhead_gb=4&batch=8&prompt=2000",
    PAIR + "?batch=max&expert_traffic=minimum",
    "/pair/nvidia-b200/hostile",
    "/methodology",
    "/license",
    "/economics",
    "/docs",
    "/docs/cli",
    "/docs/band",
]


@pytest.mark.parametrize("path", PAGES)
def test_every_page_and_its_mirror(client: TestClient, path: str) -> None:
    page = client.get(path)
    assert page.status_code == 200, page.text[:500]
    assert page.headers["content-type"].startswith("text/html")
    html = page.text
    assert '<link rel="license" href="https://creativecommons.org/licenses/by/4.0/">' in html
    assert 'rel="license"' in html.split("<footer>")[1]
    base, _, query = path.partition("?")
    mirror = ("/index" if base == "/" else base) + ".md" + (f"?{query}" if query else "")
    alternate = re.search(r'<link rel="alternate" type="text/markdown" href="([^"]+)"', html)
    assert alternate is not None and alternate.group(1).startswith(mirror.split("?")[0])
    md = client.get(mirror)
    assert md.status_code == 200
    assert md.headers["content-type"].startswith("text/markdown")
    assert md.text.startswith("---\ntitle: ")
    assert "license: CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/)" in md.text.split("---")[1]


def test_pair_form_redirects_to_the_pair(client: TestClient) -> None:
    r = client.get("/pair?hardware=dgx-spark-example&model=hostile&floor=12&batch=", follow_redirects=False)
    assert r.status_code == 303
    assert r.headers["location"] == "/pair/dgx-spark-example/hostile?floor=12"


def test_machine_files(client: TestClient) -> None:
    robots = client.get("/robots.txt").text
    assert robots.startswith("# Machine-readable content for LLMs and agents:")
    assert "/llms.txt" in robots.splitlines()[1] and "/llms-full.txt" in robots.splitlines()[2]
    for bot in ("GPTBot", "ClaudeBot", "CCBot", "Google-Extended", "PerplexityBot", "Applebot-Extended"):
        assert f"User-agent: {bot}\nAllow: /" in robots
    assert "Disallow" not in robots
    llms = client.get("/llms.txt").text
    assert llms.startswith("# servebound\n\n> ")
    assert "(http://testserver/hardware/nvidia-b200.md)" in llms
    assert "(http://testserver/index.md)" in llms
    # the hostile name is a link text, not markup that breaks the index
    assert "- [(script)alert(1)(/script)]" not in llms and HOSTILE in llms
    full = client.get("/llms-full.txt").text
    held = sum(s.full_text for s in registry.PAGES if not s.over) + len(documents())
    assert full.startswith(f"# servebound: {held} documents as text\n\nThis file holds {held} documents: ")
    assert "\nLicense: CC BY 4.0" in full.split("=====")[0]
    docs = full.split("\n=====  =====  =====\n")[1:]
    # the documents and the catalog's tables (each hardware, model and pair page is one .md away)
    linked = re.findall(r"\]\(http://testserver(/[^)]*)\.md\)", llms)
    # the registry's full-text pages, the manual's documents among them (one row enumerates them)
    assert (
        len(docs)
        == sum(in_full_text(path) for path in linked)
        == sum(s.full_text for s in registry.PAGES if not s.over) + len(documents())
        < len(linked)
    )
    assert all(d.strip().startswith("---\ntitle: ") and "\nlicense: CC BY 4.0" in d for d in docs)
    sitemap = client.get("/sitemap.xml")
    assert sitemap.headers["content-type"].startswith("application/xml")
    for url in (
        "/hardware/nvidia-b200",
        "/hardware/nvidia-b200.md",
        "/llms.txt",
        "/llms-full.txt",
        "/index.md",
    ):
        assert f"<loc>http://testserver{url}</loc>" in sitemap.text


def test_each_registry_page_is_served_linked_mirrored_and_indexed(client: TestClient) -> None:
    """A row of the registry is the whole declaration of a page: the server answers it and its mirror,
    llms.txt and the sitemap list it, and the header's links are the rows that name a ``nav`` label."""
    llms = client.get("/llms.txt").text
    sitemap = client.get("/sitemap.xml").text
    header = re.search(r"<nav>(.*?)</nav>", client.get("/").text)
    assert header is not None
    navs = sorted((s for s in registry.PAGES if s.nav), key=lambda s: s.nav_at)
    expected = [(s.path, s.nav) for s in navs] + [("/llms.txt", "llms.txt"), ("/api", "API")]
    assert re.findall(r'<a href="([^"]+)">([^<]+)</a>', header.group(1)) == expected
    for spec in registry.fixed_pages():
        mirror = "/index.md" if spec.path == "/" else spec.path + ".md"
        assert client.get(spec.path).status_code == 200, spec.path
        assert client.get(mirror).status_code == 200, mirror
        assert f"(http://testserver{mirror})" in llms
        assert (
            f"<loc>http://testserver{spec.path}</loc>" in sitemap and f"testserver{mirror}</loc>" in sitemap
        )
        assert registry.spec_for(spec.path) is spec and in_full_text(spec.path) is spec.full_text
    for path in ("/hardware/nvidia-b200", "/models/hostile", PAIR):
        assert not in_full_text(path) and registry.spec_for(path) is not None
    assert registry.spec_for("/no/such/page") is None


def test_static_assets_are_served_by_the_site(client: TestClient) -> None:
    for path in ("/static/site.css", "/static/site.js"):
        assert client.get(path).status_code == 200
    for page in (PAIR, "/derivation"):
        html = client.get(page).text
        # no external asset: every src/href to a script or stylesheet is site-relative, and served
        for ref in re.findall(r'(?:src|href)="([^"]+\.(?:js|css))"', html):
            assert ref.startswith("/static/")
            assert client.get(ref).status_code == 200, ref


def test_hostile_names_render_as_text(client: TestClient) -> None:
    for path in ("/", "/models", "/models/hostile", "/pair/nvidia-b200/hostile", "/hardware/nvidia-b200"):
        html = client.get(path).text
        assert HOSTILE not in html, path
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html, path
    pair = client.get("/pair/nvidia-b200/hostile").text
    data = pair.split('<script type="application/json" id="pair-data">')[1].split("</script>")[0]
    assert "<" not in data and "\\u003cscript\\u003e" in data
    mirror = client.get("/models/hostile.md").text
    assert "# \\<script\\>alert(1)\\</script\\>" in mirror
    api = client.get("/api/models/hostile").json()
    assert api["name"] == HOSTILE  # JSON carries the name as data


def test_unknown_ids_get_a_helpful_404(client: TestClient) -> None:
    r = client.get("/hardware/nvidia-b20")
    assert r.status_code == 404
    assert "Not found" in r.text and "Did you mean" in r.text and 'href="/hardware/nvidia-b200"' in r.text
    r = client.get("/pair/nvidia-b200/laguna-s-2.1")
    assert r.status_code == 404 and 'href="/models/laguna-s-2.1-nvfp4-example"' in r.text
    assert client.get("/models/nope.md").status_code == 404
    assert client.get("/no/such/page").status_code == 404
    for url, field in (
        ("/api/hardware/nvidia-b20", "hardware"),
        ("/api/models/nope", "model"),
        ("/api/decode?hardware=nope&model=hostile", "hardware"),
        ("/api/nothing", "path"),
    ):
        r = client.get(url)
        assert r.status_code == 404
        assert r.json()["error"]["status"] == 404 and r.json()["error"]["field"] == field


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("floor=abc", "floor"),
        ("floor=-1", "floor"),
        ("floor=nan", "floor"),
        ("overhead_gb=inf", "overhead_gb"),
        ("alloc_context=0", "alloc_context"),
        ("alloc_context=1.5", "alloc_context"),
        ("read_context=200000", "read_context"),
        ("alloc_context=1000&read_context=2000", "read_context"),
        ("alloc_context=99999999", "alloc_context"),
        ("batch=0", "batch"),
        ("batch=two", "batch"),
        ("expert_traffic=most", "expert_traffic"),
        ("prompt=0", "prompt"),
        ("alloc_context=40000&prompt=50000", "prompt"),
    ],
)
def test_bad_values_are_400_readable_on_pages(client: TestClient, query: str, field: str) -> None:
    r = client.get(f"{PAIR}?{query}")
    assert r.status_code == 400
    assert r.headers["content-type"].startswith("text/html")
    assert f"<strong>{field}</strong>:" in r.text
    md = client.get(f"{PAIR}.md?{query}")
    assert md.status_code == 400 and md.text.startswith(f"400 {field}: ")


@pytest.mark.parametrize(
    ("url", "field"),
    [
        ("/api/decode?hardware=nvidia-b200&model=hostile&floor=abc", "floor"),
        ("/api/decode?hardware=nvidia-b200&model=hostile&floor=-3", "floor"),
        ("/api/decode?hardware=nvidia-b200&model=hostile&alloc_context=10&read_context=20", "read_context"),
        ("/api/decode?hardware=nvidia-b200&model=hostile&expert_traffic=x", "expert_traffic"),
        ("/api/decode?hardware=nvidia-b200", "model"),
        ("/api/prefill?hardware=nvidia-b200&model=hostile", "prompt"),
        ("/api/prefill?hardware=nvidia-b200&model=hostile&prompt=999999", "prompt"),
        ("/api/prefill?hardware=nvidia-b200&model=hostile&prompt=10&batch=-1", "batch"),
        ("/api/prefill?hardware=nvidia-b200&model=hostile&prompt=10&ttft_budget=0", "ttft_budget"),
        ("/api/prefill?hardware=nvidia-b200&model=qwen3.6-35b-a3b-example&prompt=10", "model"),
        ("/api/rank", "hardware"),
        ("/api/rank?hardware=nvidia-b200&model=hostile", "hardware"),
        ("/api/hardware?min_memory_gb=abc", "min_memory_gb"),
    ],
)
def test_api_errors_have_one_shape(client: TestClient, url: str, field: str) -> None:
    r = client.get(url)
    assert r.status_code == 400, r.text
    body = r.json()
    assert set(body) == {"error"} and set(body["error"]) == {"status", "field", "message"}
    assert body["error"]["status"] == 400 and body["error"]["field"] == field
    assert body["error"]["message"]


def test_method_not_allowed_has_the_error_shape(client: TestClient) -> None:
    r = client.post("/api/decode?hardware=nvidia-b200&model=hostile")
    assert r.status_code == 405
    assert r.json()["error"]["field"] == "method"


def test_api_catalog_routes(client: TestClient) -> None:
    hw = client.get("/api/hardware").json()
    assert hw["count"] == 5 and hw["license"] == "CC BY 4.0"
    assert {"id", "name", "memory_gb", "bandwidth_gb_per_s", "compute_tflops"} <= set(hw["hardware"][0])
    assert client.get("/api/hardware?vendor=nvidia").json()["count"] == 3
    one = client.get("/api/hardware/nvidia-b200").json()
    assert (
        one["memory_gb"] == 180 and one["sources"]["memory_gb"]
    )  # the label: the reported MiB is not sourced
    models = client.get("/api/models").json()
    assert [m["id"] for m in models["models"]] == [
        "qwen3.6-35b-a3b-example",
        "laguna-s-2.1-nvfp4-example",
        "hostile",
    ]
    laguna = client.get("/api/models/laguna-s-2.1-nvfp4-example").json()
    assert laguna["prefill"]["linear_active_params"] > 0 and "audit" in laguna
    # "fits on": the 24 GB card, with its row's 1 GB runtime overhead, holds the 17.5 GB example
    # (17.5 + 1 + a 1.025 GB session) and the 8 GB hostile model, not the 71 GB Laguna
    fits = client.get("/api/models?fits=nvidia-rtx-4090").json()
    assert [m["id"] for m in fits["models"]] == ["qwen3.6-35b-a3b-example", "hostile"]


def test_rank_routes(client: TestClient) -> None:
    by_hw = client.get("/api/rank?hardware=nvidia-b200").json()
    assert by_hw["hardware"]["id"] == "nvidia-b200" and len(by_hw["rows"]) == 3
    # The largest model the machine serves at the floor first, as `servebound rank -H` orders.
    sizes = [r["resident_gb"] for r in by_hw["rows"] if r["verdict"] == "floor_fit"]
    assert sizes == sorted(sizes, reverse=True)
    by_model = client.get("/api/rank?model=hostile&floor=5").json()
    assert len(by_model["rows"]) == 5 and by_model["rows"][0]["verdict"] == "floor_fit"


def test_openapi_document(client: TestClient) -> None:
    doc = client.get("/openapi.json").json()
    paths = set(doc["paths"])
    assert {
        "/api/decode",
        "/api/prefill",
        "/api/hardware",
        "/api/hardware/{hardware_id}",
        "/api/models",
    } <= paths
    assert {"/api/models/{model_id}", "/api/rank"} <= paths
    assert not any(p.startswith("/pair") for p in paths)
    error = doc["paths"]["/api/decode"]["get"]["responses"]["400"]["content"]["application/json"]["schema"]
    assert error["$ref"].endswith("/ErrorBody")


def test_browse_filters(client: TestClient) -> None:
    html = client.get("/hardware?vendor=Apple").text
    assert "1 of 5 rows" in html and "/hardware/apple-m3-ultra-512gb" in html
    assert client.get("/hardware?sort=bogus").status_code == 400
    assert client.get("/hardware?min_memory_gb=lots").status_code == 400
    fits = client.get("/models?fits=nvidia-rtx-4090").text
    assert "2 of 3 profiles that fit on" in fits
    assert client.get("/models?fits=no-such-card").status_code == 404


def test_api_prefill_range_without_prompt_as_the_cli() -> None:
    from fastapi.testclient import TestClient

    from servebound.web.app.server import create_app

    client = TestClient(create_app())
    params = {"hardware": "nvidia-h100-sxm", "model": "qwen3-8b", "range": "true"}
    data = client.get("/api/prefill", params=params).json()
    assert set(data) == {"range"} and data["range"]["hi_tok_s"] > data["range"]["lo_tok_s"] > 0
    missing = client.get("/api/prefill", params={"hardware": "nvidia-h100-sxm", "model": "qwen3-8b"})
    assert missing.status_code == 400 and missing.json()["error"]["field"] == "prompt"


def test_the_manual_is_served(client: TestClient) -> None:
    """/docs and every document of docs/ answer as pages and mirrors, listed in llms.txt and the
    sitemap; links between documents are site paths (and the engine table's sources keep quoted words
    out of the mirror); an unknown document is a 404."""
    from servebound.catalog.engines import markdown_table
    from servebound.web.pages.manual import source
    from servebound.web.pages.site import without_quotes

    llms = client.get("/llms.txt").text
    sitemap = client.get("/sitemap.xml").text
    assert "## Manual" in llms and "(http://testserver/docs.md)" in llms
    assert len(documents()) >= 10
    for doc in documents():
        page = client.get(f"/docs/{doc.name}")
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert f"<title>{doc.title} · servebound</title>" in page.text
        mirror = client.get(f"/docs/{doc.name}.md")
        assert mirror.status_code == 200 and mirror.headers["content-type"].startswith("text/markdown")
        body = mirror.text.split("---\n", 2)[2]
        plain = body.replace("](/docs/", "](").replace(".md", "").strip()
        text = source(doc.name).replace(markdown_table(), markdown_table(without_quotes))
        assert plain == text.replace(".md", "").strip()
        assert f"(http://testserver/docs/{doc.name}.md)" in llms
        assert f"<loc>http://testserver/docs/{doc.name}</loc>" in sitemap
    index = client.get("/docs").text
    assert all(f'href="/docs/{doc.name}"' in index for doc in documents())
    cli = client.get("/docs/cli").text
    assert 'id="detecting-this-machine"' in cli and 'href="/docs/band"' in cli
    assert "<table>" in client.get("/docs/engines").text
    missing = client.get("/docs/no-such-document")
    assert missing.status_code == 404 and "/docs/cli" in missing.text
    assert client.get("/docs/no-such-document.md").status_code == 404


def test_declared_routes_are_made_once_on_the_app(app: FastAPI, client: TestClient) -> None:
    """Each module's declared routes are the app's own routes, in the order declared (no included router
    whose routes FastAPI would make a second time), with their table's route and response classes, and
    the app's dependency overrides apply to them."""
    tables = (pages.routes, machine.routes, api.routes, economics.routes, reference.routes)
    declared = [(path, handler) for table in tables for path, handler, _ in table.declared]
    made = [r for r in app.router.routes if isinstance(r, APIRoute) and not r.path.startswith("/static/")]
    assert [(r.path, r.endpoint) for r in made] == declared
    assert all(isinstance(r, (APIRoute, Route)) for r in app.router.routes)
    json_api = {path for table in (api.routes, economics.routes) for path, _, _ in table.declared}
    for route in made:
        in_api = route.path in json_api
        assert isinstance(route, StrictRoute) is in_api, route.path
        assert (route.response_class is StrictJSONResponse) is in_api, route.path
        assert route.include_in_schema is in_api, route.path

    def refused(request: Request) -> object:
        raise InputError("probe", "the override answered")

    app.dependency_overrides[web_state] = refused
    try:
        answer = client.get("/api/hardware")
    finally:
        del app.dependency_overrides[web_state]
    assert answer.status_code == 400
    assert answer.json()["error"]["field"] == "probe"
    assert client.get("/api/hardware").status_code == 200
