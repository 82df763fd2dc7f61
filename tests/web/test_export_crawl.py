"""The static export, crawled through a plain file server: every link, sitemap entry and llms.txt entry
answers, and every in-page anchor it names exists. No dead links, no query strings in paths.

The export is the whole site (every fixed page, every hardware row, every model profile, the machine
files) with its pair pages capped at CRAWL_PAIRS, model by model in catalog order (the first models
include SmolLM2, whose default contexts follow its short limit), so links to the pairs left out go
through the calculator page (``/pair/index.html?hardware=&model=``), as every pair without a page
does: the crawl checks that each such link names a hardware and a model file under ``data/``. In CI (CI=true, as .ci/run
is run) and with SERVEBOUND_CRAWL_ALL=1 it crawls every pair page too (docs/site.md gives both times).
"""

from __future__ import annotations

import html.parser
import os
import re
import urllib.error
import urllib.parse
import urllib.request
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import pytest

from servebound.web.export.build import build_site
from servebound.web.pages.machine_files import DELIMITER_LINE
from servebound.web.pages.manual import documents as manual_documents
from tests.web.conftest import file_server

BASE = "https://servebound.example"
CRAWL_ALL = os.environ.get("SERVEBOUND_CRAWL_ALL") == "1" or os.environ.get("CI") == "true"
CRAWL_PAIRS = None if CRAWL_ALL else 600

pytestmark = pytest.mark.slow


class _Links(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.canonical: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(str(a["id"]))
        if tag == "link" and a.get("rel") == "canonical":
            self.canonical = a.get("href")
        for key in ("href", "src"):
            value = a.get(key)
            if value and tag in ("a", "link", "script", "img"):
                self.links.append(value)
        if tag == "form" and a.get("action"):
            self.links.append(str(a["action"]))


@pytest.fixture(scope="module")
def whole_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("whole-site")
    build_site(out, base_url=BASE, max_pairs=CRAWL_PAIRS)
    return out


@pytest.fixture(scope="module")
def server(whole_export: Path) -> Iterator[str]:
    with file_server(whole_export) as url:
        yield url


def _get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url) as r:
            return r.status, r.headers.get("Content-Type", ""), r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as err:
        return err.code, "", ""


def test_no_query_string_in_any_exported_path(whole_export: Path) -> None:
    bad = [
        str(p.relative_to(whole_export)) for p in whole_export.rglob("*") if "?" in p.name or "&" in p.name
    ]
    assert not bad, bad[:10]


def test_crawl_every_link_sitemap_and_llms_entry(server: str) -> None:
    local = lambda url: url.replace(BASE, server, 1) if url.startswith(BASE) else url  # noqa: E731
    seeds = ["/", "/llms.txt", "/sitemap.xml", "/robots.txt", "/llms-full.txt"]
    status, _, sitemap = _get(server + "/sitemap.xml")
    assert status == 200
    sitemap_urls = re.findall(r"<loc>([^<]+)</loc>", sitemap)
    status, _, llms = _get(server + "/llms.txt")
    assert status == 200
    llms_urls = re.findall(r"\]\((https?://[^)\s]+)\)", llms)
    assert sitemap_urls and llms_urls
    # every llms.txt entry carries its date
    entries = [line for line in llms.splitlines() if line.startswith("- [")]
    assert entries and all(re.search(r"\) \(\d{4}-\d{2}-\d{2}\)", line) for line in entries)
    queue: deque[tuple[str, str]] = deque((server + s, "seed") for s in seeds)
    queue += ((local(u), "sitemap.xml") for u in sitemap_urls)
    queue += ((local(u), "llms.txt") for u in llms_urls)
    seen: set[str] = set()
    anchors: list[tuple[str, str, str]] = []
    ids: dict[str, set[str]] = {}
    broken: list[tuple[str, int, str]] = []
    non_canonical: list[str] = []
    calculator_ids: set[tuple[str, str]] = set()
    while queue:
        url, source = queue.popleft()
        target, _, fragment = url.partition("#")
        # A static server answers a file the same whatever the query: each file is fetched once. The
        # calculator's query names a pair: its two data files must exist (checked below).
        target, _, query = target.partition("?")
        if fragment:
            anchors.append((target, fragment, source))
        split = urllib.parse.urlsplit(target)
        if split.path.endswith("/pair/index.html") and query:
            q = urllib.parse.parse_qs(query)
            calculator_ids.add((q["hardware"][0], q["model"][0]))
        if target in seen:
            continue
        seen.add(target)
        status, ctype, body = _get(target)
        if status != 200:
            broken.append((target, status, source))
            continue
        path = urllib.parse.urlsplit(target).path
        if "text/html" in ctype:
            parser = _Links()
            parser.feed(body)
            ids[target] = parser.ids
            expected = BASE + (path[: -len("index.html")] if path.endswith("index.html") else path)
            if parser.canonical is None or parser.canonical.rstrip("/") != expected.rstrip("/"):
                non_canonical.append(f"{path}: {parser.canonical}")
            for link in parser.links:
                if link.startswith(("mailto:", "javascript:")) or (
                    link.startswith("http") and not link.startswith(BASE)
                ):
                    continue
                queue.append((local(urllib.parse.urljoin(target, link)), path))
        elif path.endswith(".md"):
            for link in re.findall(r"\]\(([^)\s]+)\)", body):
                if not link.startswith(("http:", "https:", "mailto:")):
                    queue.append((urllib.parse.urljoin(target, link), path))
    hardware_ids = {h for h, _ in calculator_ids}
    model_ids = {m for _, m in calculator_ids}
    assert calculator_ids  # the rank tables link the pairs without a page to the calculator
    for kind, ids_ in (("hardware", hardware_ids), ("models", model_ids)):
        for i in sorted(ids_):
            status, _, _ = _get(f"{server}/data/{kind}/{urllib.parse.quote(i)}.json")
            if status != 200:
                broken.append((f"/data/{kind}/{i}.json", status, "calculator link"))
    missing_anchors = [
        (t, f, s) for t, f, s in anchors if t in ids and f not in ids[t] and not f.startswith(":~:")
    ]
    assert not broken, f"{len(broken)} broken links, e.g. {broken[:10]}"
    assert not missing_anchors, missing_anchors[:10]
    assert not non_canonical, non_canonical[:10]
    assert len(seen) > 1000  # the whole site: every page and mirror, not a sample


def test_llms_full_frontmatter_and_delimiter(server: str) -> None:
    status, _, text = _get(server + "/llms-full.txt")
    assert status == 200
    header, *documents = text.split(f"\n{DELIMITER_LINE}\n")
    assert f"`{DELIMITER_LINE}`" in header  # the header announces the delimiter it uses
    # the documents, the manual and the catalog's tables; every hardware, model and pair page is one
    # .md away
    urls = [re.search(r'\nurl: "([^"]*)"', doc) for doc in documents]
    assert [u.group(1) for u in urls if u] == [
        "/",
        "/methodology",
        "/derivation",
        "/license",
        "/validation",
        "/economics",
        "/docs",
        *(f"/docs/{doc.name}" for doc in manual_documents()),
        "/hardware",
        "/models",
    ]
    assert len(text) < 2_000_000  # a few hundred kB over the whole catalog
    for doc in documents:
        front = doc.strip().split("---")[1]
        for key in ("title:", "date:", "canonical:", "license:"):
            assert f"\n{key}" in front, (key, front[:200])
        canonical = re.search(r"\ncanonical: (\S+)", front)
        assert canonical and canonical.group(1).startswith(BASE + "/")
        assert re.search(r"\ndate: \d{4}-\d{2}-\d{2}\n", front)
