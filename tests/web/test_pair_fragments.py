"""A computed pair page folds its heavy sections and fills each from its fragment: the page with every
fragment put back is the fully rendered page, byte for byte; a cached page keeps them inline."""

from __future__ import annotations

import html as html_lib
import itertools
import re
from urllib.parse import parse_qsl

import pytest
from fastapi.testclient import TestClient

from servebound.web.app.query import WorkloadQuery, parse_workload_query
from servebound.web.pages.pair_records import SECTIONS, PairRecords
from servebound.web.pages.site import compute_pair

FOLD = re.compile(r'<details class="fold" id="fold-([a-z]+)" data-fragment="([^"]+)">.*?</details>', re.S)

WORKLOADS = [
    ("dgx-spark-example", "laguna-s-2.1-nvfp4-example", "read_context=8000"),
    (
        "dgx-spark-example",
        "qwen3.6-35b-a3b-example",
        "read_context=8000&alloc_context=32000&floor=10&batch=8",
    ),
    ("nvidia-h100-sxm", "hostile", "read_context=100&alloc_context=200&floor=1"),  # the name is a script tag
    ("nvidia-h100-sxm", "qwen3.6-35b-a3b-example", "expert_traffic=minimum&prompt=2000"),
    ("nvidia-rtx-4090", "laguna-s-2.1-nvfp4-example", "floor=5"),  # nothing fits: no charts, no price
    ("nvidia-rtx-4090", "qwen3.6-35b-a3b-example", "cpu_moe=true&host=desktop-ddr4-3200-2ch"),  # host RAM
]


@pytest.mark.parametrize(("hw", "model", "query"), WORKLOADS)
def test_folded_page_with_its_fragments_is_the_full_page(
    client: TestClient, hw: str, model: str, query: str
) -> None:
    path = f"/pair/{hw}/{model}?{query}"
    page = client.get(path)
    assert page.status_code == 200, page.text[:300]
    folds = FOLD.findall(page.text)
    assert [name for name, _ in folds] == list(SECTIONS)
    for svg in ("fig-aggregate", "fig-context", "fig-step-time"):  # the heavy parts are not drawn
        assert f'id="{svg}"' not in page.text
    fragments = {}
    for name, href in folds:
        href = html_lib.unescape(href)
        base, _, asked = href.partition("?")
        assert base == f"/pair/{hw}/{model}"
        assert dict(parse_qsl(asked)) == {**dict(parse_qsl(query)), "section": name}
        r = client.get(href)
        assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
        fragments[name] = r.text
    full = client.get(f"{path}&section=all")
    assert full.status_code == 200
    assert '<details class="fold"' not in full.text
    rebuilt = FOLD.sub(lambda f: fragments[f.group(1)], page.text)
    assert rebuilt == full.text
    # the numbers above the folds are the full page's own
    shown = re.compile(r'data-k="([a-z_.]+)"[^>]*>([^<]*)<')
    assert shown.findall(page.text) == shown.findall(full.text)


def test_cached_page_keeps_every_section_inline(client: TestClient) -> None:
    path = "/pair/nvidia-h100-sxm/hostile"
    page = client.get(path).text
    assert '<details class="fold"' not in page
    for name in SECTIONS:
        fragment = client.get(f"{path}?section={name}")
        assert fragment.status_code == 200
        assert fragment.text in page
    assert client.get(f"{path}?section=all").text == page
    assert 'id="fig-aggregate"' in page and 'id="fig-step-time"' in page


def test_the_fallback_link_opens_every_section(client: TestClient) -> None:
    """Without script a folded section is a link to the page with every section drawn."""
    path = "/pair/nvidia-h100-sxm/hostile?read_context=100&alloc_context=200&floor=1"
    page = client.get(path).text
    links = re.findall(r'<div class="fold-body"><p class="note">[^<]*<a href="([^"]+)">', page)
    assert len(links) == len(SECTIONS)
    for link in links:
        target, _, anchor = html_lib.unescape(link).partition("#")
        base, _, asked = target.partition("?")
        assert f"{base}?{asked}" != path and dict(parse_qsl(asked)) == {
            **dict(parse_qsl(path.partition("?")[2])),
            "section": "all",
        }
        full = client.get(target).text
        assert f'id="{anchor}"' in full
    assert 'id="fig-step-time"' in full and 'id="fig-aggregate"' in full


REGION = re.compile(r'<div class="region" data-region="([a-z]+)">')


@pytest.mark.parametrize(("hw", "model", "query"), [*WORKLOADS, ("nvidia-h100-sxm", "hostile", "")])
def test_the_answer_fragment_is_the_page_s_answer_regions(
    client: TestClient, hw: str, model: str, query: str
) -> None:
    """What the script swaps in when a control moves (?section=answer) is, region for region, what a fresh
    load of the same URL shows: everything the workload decides, and nothing of another workload."""
    path = f"/pair/{hw}/{model}?{query}"
    page = client.get(path).text
    r = client.get(f"{path}&section=answer")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    regions = REGION.findall(r.text)
    assert regions == REGION.findall(page) == ["top", "rest"]
    starts = [m.start() for m in REGION.finditer(r.text)] + [len(r.text)]
    for a, b in itertools.pairwise(starts):
        assert r.text[a:b] in page  # each region verbatim, the workload's own
    assert 'id="workload"' not in r.text  # the form, which holds the values, is not swapped


@pytest.mark.parametrize("value", ["figures", "", "CHARTS"])
def test_unknown_section_is_named(client: TestClient, value: str) -> None:
    r = client.get(f"/pair/dgx-spark-example/hostile?floor=5&section={value}")
    assert r.status_code == 400 and r.headers["content-type"].startswith("text/html")
    assert "<strong>section</strong>:" in r.text
    assert f"use one of charts, cost, all, answer (got {value!r})" in html_lib.unescape(r.text)


def test_a_mirror_takes_no_section(client: TestClient) -> None:
    r = client.get("/pair/dgx-spark-example/hostile.md?floor=5&section=cost")
    assert r.status_code == 400
    assert r.text.startswith("400 section: the markdown mirror carries every section")


def test_records_are_computed_where_read(app: object) -> None:
    """A folded page computes no curve; the full page computes each once, and the mirror reuses the
    charts' decode curve for its points."""
    renderer = app.state.renderer  # type: ignore[attr-defined]
    site = app.state.site  # type: ignore[attr-defined]
    hw, m = site.get_hardware("nvidia-h100-sxm"), site.get_model("laguna-s-2.1-nvfp4-example")
    records = PairRecords(compute_pair(hw, m, parse_workload_query({"read_context": "8000"})))
    folded = renderer.pair_page(records, folded=True)
    assert set(vars(records)) == {"pair"}
    _ = folded.markdown  # the mirror's table of points and its cost section
    assert set(vars(records)) == {"pair", "decode_charts", "figure_points", "cost"}
    charts = records.decode_charts
    full = renderer.pair_page(records)
    assert records.decode_charts is charts
    assert {"context", "charts", "prefill_charts", "cost_figures"} <= set(vars(records))
    for name in SECTIONS:
        assert renderer.pair_section(records, name) in full.html
    fresh = renderer.pair_page(compute_pair(hw, m, WorkloadQuery()))
    assert '<details class="fold"' not in fresh.html
