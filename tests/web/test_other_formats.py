"""A pair page's other formats (issue 35): each answered for this machine at the page's workload, by the
pair's own path (the query's scenario, then decode), so each row reads what that format's own pair page
reads at the same address; and a ranking table's "n/a" gives the reason its pair page states."""

from __future__ import annotations

import html
import re

import pytest
from fastapi.testclient import TestClient

from servebound.web.app.server import create_app


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def format_rows(page: str) -> list[list[str]]:
    """The other-formats table's rows as cell texts (an n/a's note left out)."""
    block = page[page.index('id="other-formats"') :]
    block = block[: block.index("</table>")]
    rows = re.findall(r"<tr><td>(.*?)</tr>", block, flags=re.S)
    return [
        [
            html.unescape(re.sub(r"<[^>]+>", "", c)).strip()
            for c in re.findall(r"<td[^>]*>(.*?)</td>", "<td>" + r)
        ]
        for r in rows
    ]


def answers(page: str) -> tuple[str, str, str]:
    """A pair page's verdict class and its one-session and aggregate answers, as shown."""
    verdict = re.search(r'<p class="verdict v ([a-z_]+)"', page)
    big = re.findall(r'<p class="big" data-k="(?:single_session_tok_s|aggregate_tok_s)"[^>]*>(.*?)</p>', page)
    assert verdict and len(big) == 2
    return verdict.group(1), big[0], big[1]


@pytest.mark.parametrize("query", ["", "?alloc_context=8000&read_context=4000", "?kv_precision=fp8&floor=40"])
def test_other_formats_read_what_their_own_pages_read(client: TestClient, query: str) -> None:
    page = client.get(f"/pair/nvidia-h100-sxm/llama-3.1-70b-fp8{query}").text
    rows = format_rows(page)
    links = re.findall(r'<tr><td><a href="(/pair/[^"]+)"', page[page.index('id="other-formats"') :])
    assert len(rows) == len(links) >= 3
    kinds = set()
    for row, href in zip(rows, links, strict=False):
        own = client.get(href + query).text
        verdict, single, aggregate = answers(own)
        kinds.add(verdict)
        shown = re.search(
            rf'<a href="{re.escape(href)}">.*?</a>.*?<span class="v ([a-z_]+)">', page, flags=re.S
        )
        assert shown and shown.group(1) == verdict, (href, row)
        if single.startswith("none: "):  # nothing fits: the row says so in the pair page's words
            assert row[2] == single, (href, row)
        else:
            assert row[2] == single and row[3] == aggregate, (href, row)
    assert len(kinds) >= 2  # the table tells formats that fit from those that do not


def test_a_tables_n_a_gives_the_reason_its_pair_page_states(client: TestClient) -> None:
    page = client.get("/hardware/nvidia-rtx-4090").text
    notes = dict(re.findall(r'<li id="models-why-(\d+)" value="\d+">n/a: (.*?)\.</li>', page))
    by_reason: dict[str, str] = {}
    for href, row in re.findall(r'<tr data-verdict="[a-z]+"><td><a href="([^"]+)">.*?</a>(.*?)</tr>', page):
        for n in re.findall(r'<sup><a href="#models-why-(\d+)">', row):
            by_reason.setdefault(html.unescape(notes[n]), href)
    context = next(r for r in by_reason if "longer than the model's context" in r)
    wait = re.search(r"for a ([\d,]+)-token prompt", context)
    assert wait is not None
    own = client.get(by_reason[context]).text  # the pair page gives the wait for the shorter prompt
    assert re.search(rf'data-k="prefill.prompt_tokens" data-f="int">{wait.group(1)}</span>', own), context
    nothing = next(r for r in by_reason if r.startswith("nothing fits in memory, so"))
    own = client.get(by_reason[nothing]).text
    assert html.unescape(nothing[:1].upper() + nothing[1:]) in html.unescape(own)
