"""Search beyond the home page (issues 34 and 35): the /search page and its mirror on a served site, the
pair form resolving names as people type them with the workload kept, the static copy's names table
(data/names.json) and its data to take away (data/servebound.sqlite, data/csv/, linked from the home
page and llms.txt)."""

from __future__ import annotations

import csv
import json
import re
import sqlite3
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from servebound.catalog.export import TABLES
from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import get_model
from servebound.catalog.names import profile_id_for
from servebound.catalog.search import search
from servebound.web.app.server import create_app
from servebound.web.export.build import build_site, names_index
from servebound.web.pages.site import SiteData, site_model

MODELS = ("llama-3.3-70b-instruct", "llama-3.3-70b-instruct-q4_k_m", "gemma-3-27b-it", "qwen3-30b-a3b-q4_k_m")
HARDWARE = ("nvidia-rtx-4090", "nvidia-dgx-spark", "nvidia-b200")


@pytest.fixture(scope="module")
def client() -> TestClient:
    """The packaged hardware catalog (its names resolve) with a few model profiles."""
    return TestClient(create_app(models=[site_model(get_model(pid)) for pid in MODELS]))


def hits(html: str) -> list[str]:
    return re.findall(r'<li data-kind="\w+" data-id="[^"]+"><a href="/(?:models|hardware)/([^"]+)">', html)


@pytest.mark.parametrize(
    ("q", "first"),
    [
        ("llama3.3:70b", "llama-3.3-70b-instruct-q4_k_m"),
        ("meta-llama/Llama-3.3-70B-Instruct", "llama-3.3-70b-instruct"),
        ("gemma 3 27b", "gemma-3-27b-it"),
        ("qwen3 30b a3b q4", "qwen3-30b-a3b-q4_k_m"),
        ("4090", "nvidia-rtx-4090"),
        ("dgx spark", "nvidia-dgx-spark"),
    ],
)
def test_the_search_page_lists_the_catalog_search(client: TestClient, q: str, first: str) -> None:
    page = client.get("/search", params={"q": q})
    assert page.status_code == 200
    found = hits(page.text)
    assert found[0] == first
    shown = {*MODELS, *(h["id"] for h in client.get("/api/hardware").json()["hardware"])}
    assert found == [h.id for h in search(q, limit=500) if h.id in shown][:50]
    api = client.get("/api/search", params={"q": q, "limit": 50}).json()
    assert [h["id"] for h in api["hits"]] == found
    mirror = client.get("/search.md", params={"q": q})
    assert mirror.status_code == 200 and f"`{first}`" in mirror.text


def test_the_search_page_without_words_and_with_bad_ones(client: TestClient) -> None:
    empty = client.get("/search")
    assert empty.status_code == 200 and "Try:" in empty.text and hits(empty.text) == []
    nothing = client.get("/search", params={"q": "zzzz-no-such-thing"})
    assert "Nothing here is named" in nothing.text
    assert client.get("/search", params={"query": "x"}).status_code == 400  # an unknown parameter
    too_long = client.get("/search", params={"q": "x" * 300})
    assert "200 at most" in too_long.text


def test_every_page_links_the_search(client: TestClient) -> None:
    for path in ("/", "/hardware", "/pair/nvidia-rtx-4090/gemma-3-27b-it"):
        assert '<a href="/search">Search</a>' in client.get(path).text, path


def test_the_pair_page_carries_a_picker(client: TestClient) -> None:
    html = client.get("/pair/nvidia-rtx-4090/gemma-3-27b-it", params={"alloc_context": 8000}).text
    form = re.search(r'<form class="picker pair-picker"[^>]*>', html)
    assert form is not None
    assert 'data-hardware-id="nvidia-rtx-4090"' in form.group(
        0
    ) and 'data-model-id="gemma-3-27b-it"' in form.group(0)
    assert 'data-pick="hardware"' in html and 'data-pick="model"' in html
    assert '<script src="/static/pickers.js" defer>' in html


@pytest.mark.parametrize(
    ("hardware", "model", "path"),
    [
        ("4090", "llama3.3:70b", "/pair/nvidia-rtx-4090/llama-3.3-70b-instruct-q4_k_m"),
        ("dgx spark", "gemma 3 27b", "/pair/nvidia-dgx-spark/gemma-3-27b-it"),
        ("h100", "meta-llama/Llama-3.3-70B-Instruct", "/pair/nvidia-h100-sxm/llama-3.3-70b-instruct"),
        ("rtx 3090", "qwen3 30b a3b q4", "/pair/nvidia-rtx-3090/qwen3-30b-a3b-q4_k_m"),
    ],
)
def test_the_pair_form_resolves_names_and_keeps_the_workload(
    client: TestClient, hardware: str, model: str, path: str
) -> None:
    """What a picker submits when a name is typed and not chosen: the server's resolver answers."""
    query = {"hardware": hardware, "model": model, "alloc_context": "8000", "kv_precision": "fp8"}
    answer = client.get("/pair", params=query, follow_redirects=False)
    assert answer.status_code == 303
    assert answer.headers["location"] == f"{path}?alloc_context=8000&kv_precision=fp8"


def test_the_pickers_and_the_search_show_names_not_ids(client: TestClient) -> None:
    """A pair page's pickers show the pair's names (the id stays in data-*), the search page's hits
    their names and words (a format as people write it), no id where a name exists."""
    from tests.web.test_page_words import FORMAT_ID, visible

    html = client.get("/pair/nvidia-rtx-4090/gemma-3-27b-it").text
    values = dict(re.findall(r'<input name="(hardware|model)" data-pick="\w+" value="([^"]*)"', html))
    assert values == {
        "hardware": get_hardware("nvidia-rtx-4090").name,
        "model": get_model("gemma-3-27b-it").name,
    }
    page = client.get("/search", params={"q": "qwen3 30b a3b q4"}).text
    shown, ids = visible(page), re.findall(r'<li data-kind="\w+" data-id="([^"]+)">', page)
    assert ids and not [i for i in ids if i in shown], ids
    details = " ".join(re.findall(r'<span class="src">([^<]*)</span></li>', page))
    assert "Qwen3 MoE, 18.6 GB of weights" in details and not FORMAT_ID.findall(details), details
    assert not [i for i in ids if i in details], details
    assert get_model("qwen3-30b-a3b-q4_k_m").name in shown


@pytest.mark.parametrize(
    "path",
    [
        "/pair/nvidia-b200/llama-3.3-70b-instruct",  # vLLM assumed, for the release's BF16 weights
        "/pair/nvidia-rtx-4090/qwen3-30b-a3b-q4_k_m",  # llama.cpp assumed, for Q4_K_M weights
        "/pair/nvidia-rtx-4090/qwen3-30b-a3b-q4_k_m?kv_precision=q8_0",  # the cache format asked for
        "/models/qwen3-30b-a3b-q4_k_m",
        "/hardware/nvidia-dgx-spark",
    ],
)
def test_catalog_pages_write_formats_in_words(client: TestClient, path: str) -> None:
    """The sentences of pages over catalog profiles (the engine assumed and why, the profile's
    format) write a format as people do: no format id in what a reader sees."""
    from tests.web.test_page_words import FORMAT_ID, visible

    page = client.get(path)
    assert page.status_code == 200
    text = visible(page.text)
    assert not {m.group(0) for m in FORMAT_ID.finditer(text)}, (path, FORMAT_ID.findall(text))


def test_the_engine_assumed_is_said_with_the_format_in_words() -> None:
    """Why an engine is assumed (the pair page's and the terminal's one sentence) writes the format as
    people do: FP8, Q4_K_M, BF16 with experts in MXFP4."""
    from servebound.inputs.engine_choice import assumed_engine
    from tests.web.test_page_words import FORMAT_ID

    said = [
        assumed_engine(hw, fmt) for hw, fmt in [("nvidia-h100-sxm", "fp8"), ("nvidia-rtx-4090", "q4_k_m")]
    ]
    assert all(s is not None for s in said)
    whys = [s[1] for s in said if s is not None]
    assert "weights in FP8" in whys[0] and "weights in Q4_K_M" in whys[1], whys
    assert not [w for w in whys if FORMAT_ID.findall(w)], whys


def test_search_hits_carry_display_names_and_format_words() -> None:
    from tests.web.test_page_words import FORMAT_ID

    found = search("gpt oss", limit=50) + search("gpt oss mxfp4", limit=50) + search("qwen3 8b mlx", limit=50)
    models = [h for h in found if h.kind == "model"]
    assert models and all(h.name == get_model(h.id).name for h in models)
    assert not [h.detail for h in models if FORMAT_ID.findall(h.detail)], [h.detail for h in models]
    # The name carries the format (``Qwen3-8B (MLX 4-bit)``); the detail says what it does not.
    assert "Qwen3-8B (MLX 4-bit)" in {h.name for h in models}
    assert not [
        h for h in models if "weights in" in h.detail or h.detail.split(",")[0] != get_model(h.id).family_name
    ]


@pytest.mark.parametrize(
    ("hardware", "model"),
    [
        ("NVIDIA GeForce RTX 4090 24GB", "gemma-3-27b-it (BF16)"),
        ("NVIDIA B200 (HGX/DGX B200, SXM)", "Llama-3.3-70B-Instruct (Q4_K_M)"),
    ],
)
def test_a_form_sent_without_script_carries_names_the_server_takes(
    client: TestClient, hardware: str, model: str
) -> None:
    """Without script the pair form sends what its fields show: the names, which resolve."""
    answer = client.get("/pair", params={"hardware": hardware, "model": model}, follow_redirects=False)
    assert answer.status_code == 303, answer.text
    assert answer.headers["location"] == f"/pair/{get_hardware(hardware).id}/{profile_id_for(model)}"


def test_every_hardware_row_answers_to_its_display_name() -> None:
    from servebound.catalog.hardware import load_hardware_catalog

    catalog = load_hardware_catalog()
    assert all(catalog.get(row.name).id == row.id for row in catalog)
    assert catalog.get("3x NVIDIA H100 SXM5 80GB").id == "3x-nvidia-h100-sxm"


def test_an_ambiguous_or_unknown_name_is_refused_with_candidates(client: TestClient) -> None:
    answer = client.get(
        "/pair", params={"hardware": "m4 max", "model": "gemma 3 27b"}, follow_redirects=False
    )
    assert answer.status_code in (400, 404)
    assert "apple-m4-max" in answer.text


def test_the_names_table_answers_as_the_resolver() -> None:
    """data/names.json: every name it takes whole gives the id the resolver gives, only rows the site
    shows are in it, and the site's own ids name themselves."""
    site = SiteData([get_hardware(h) for h in HARDWARE], [site_model(get_model(pid)) for pid in MODELS])
    index = names_index(site)
    assert index["names"]["llama3.3:70b"] == ["model", "llama-3.3-70b-instruct-q4_k_m"]
    assert index["names"]["meta-llama/llama-3.3-70b-instruct"] == ["model", "llama-3.3-70b-instruct"]
    for name, (kind, target) in index["names"].items():
        assert target in (MODELS if kind == "model" else HARDWARE), name
        if kind == "model":
            assert profile_id_for(name) == target, name
        else:
            assert get_hardware(name).id == target, name
    ids = {e.get("id") for e in index["entries"]} | {
        pid for e in index["entries"] for pid in e.get("profiles", {}).values()
    }
    assert ids - {None} <= {*MODELS, *HARDWARE}
    assert re.compile(index["size"]).match("30b")
    json.dumps(index)  # plain JSON


def test_the_static_copy_carries_the_data_to_take_away(tmp_path: Path) -> None:
    """build_site with the data: the SQLite file and a CSV per table, with equal row counts, linked
    (relatively) from the home page and listed in llms.txt."""
    site = SiteData([get_hardware(h) for h in HARDWARE], [site_model(get_model(pid)) for pid in MODELS[:1]])
    build_site(tmp_path, site=site, base_url="https://example.org", max_pairs=0, takeaway=True)
    db = sqlite3.connect(tmp_path / "data" / "servebound.sqlite")
    for table in TABLES:
        count = db.execute(f'SELECT count(*) FROM "{table.name}"').fetchone()[0]
        with (tmp_path / "data" / "csv" / f"{table.name}.csv").open(newline="") as handle:
            assert len(list(csv.reader(handle))) - 1 == count > 0, table.name
    home = (tmp_path / "index.html").read_text()
    assert 'href="data/servebound.sqlite"' in home and 'href="data/csv/ceilings.csv"' in home
    llms = (tmp_path / "llms.txt").read_text()
    assert "## Data" in llms and "(https://example.org/data/servebound.sqlite)" in llms
    assert "(https://example.org/data/csv/runs.csv)" in llms
    assert (tmp_path / "data" / "names.json").exists()
    assert (tmp_path / "search" / "index.html").exists()
