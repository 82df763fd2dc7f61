"""The static export: every page, mirror, figure, asset and machine file, for any static host.

``build_site(DIR)`` writes the site so ``python -m http.server`` on DIR serves it: a page at ``/x``
is ``x/index.html`` (the server redirects ``/x`` to ``/x/``), its mirror ``x.md``. Pair pages are
written for the default workload; on the static copy the calculator recomputes other workloads in the
browser (``static/calc.js`` is the one port of the core, checked against its conformance vectors).

Which pairs: the catalog holds each model in several weight formats (hundreds of profiles), and every
profile on every hardware row would be tens of thousands of pages (about a gigabyte of HTML, several
minutes). The export writes a page for every hardware row with every model in its *native* format
(the checkpoint's own precision): a few thousand pages, under two minutes (``bench/bench_web.py``).
Every other profile has its own model page, and its pairs open in the in-browser calculator: the link
``/pair/?hardware=H&model=M`` loads the native pair page with ``?profile=M``, whose script reads the
profile's adapter quantities from ``/data/models/M.json`` and recomputes. ``max_pairs`` caps the pairs
further (tests).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from servebound.catalog.engines import FormatSupport, format_support
from servebound.catalog.export import table_names, write_both
from servebound.catalog.search import browser_index
from servebound.views.conformance import conformance_text
from servebound.web.app.packaged import packaged_static
from servebound.web.export.calculator import calculator_hardware, calculator_page
from servebound.web.export.write import Writer, write_pairs
from servebound.web.pages.contexts import Page
from servebound.web.pages.machine_files import Document, llms_full_txt, llms_txt, robots_txt, sitemap_xml
from servebound.web.pages.pairdata import model_data, script_json
from servebound.web.pages.registry import entries, in_full_text, render
from servebound.web.pages.renderer import Renderer
from servebound.web.pages.site import SiteData, SiteHardware, default_site_data

Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class BuildReport:
    """What ``build_site`` wrote: page count (HTML pages; each also has a mirror), pairs, files, bytes, seconds."""

    out_dir: Path
    pages: int
    pairs: int
    files: int
    bytes: int
    seconds: float


def pairs(site: SiteData, max_pairs: int | None = None) -> list[tuple[str, str]]:
    """The (hardware id, model id) pairs with a page of their own, model by model, then every other
    pair the site lists that has a reported run (so each run shown on a pair page has that page).

    A model in its native format gets a page on each machine whose memory holds its weights and whose
    devices run its format (``format_support`` not unsupported), and on a multi-device system only
    where one of its devices does not hold the weights (where the system is what serves it): the pairs
    people look for, within the static hosts' caps. Every other pair (another format, a machine too
    small for the native weights, a format the device cannot run, a small model on a large system) is
    answered by the calculator page, ``/pair/?hardware=H&model=M``, in the browser from the exported
    catalog data (``data/hardware``, ``data/models``)."""
    out = [
        (h.id, m.id)
        for m in site.models
        if m.native
        for h in site.hardware
        if _has_page(h, m.adapter.weights.resident, m.adapter.weight_precision)
    ]
    out = out if max_pairs is None else out[:max_pairs]
    have = set(out)
    for run in site.validation().runs:
        key = (run.entry.hardware, run.entry.model)
        if key not in have and site.has_pair(*key):
            have.add(key)
            out.append(key)
    return out


def _has_page(h: SiteHardware, weights: float, precision: str | None) -> bool:
    if weights >= h.hardware.memory_bytes:
        return False
    if format_support(h.id, precision)[0] is FormatSupport.UNSUPPORTED:
        return False
    system = h.parallel
    return system is None or system.count <= 1 or weights >= system.device.memory_bytes


def full_text_documents(site: SiteData) -> list[Document]:
    """The documents llms-full.txt holds, in its order (:func:`in_full_text`)."""
    return [d for d in documents(site, pair_ids=[]) if in_full_text(d.path)]


def documents(site: SiteData, pair_ids: Sequence[tuple[str, str]] | None = None) -> list[Document]:
    """Every page the site indexes, with its title and a group (for llms.txt and the sitemap);
    ``pair_ids``: the pairs with a page (default: every one, :func:`pairs`)."""
    return [doc for _, doc, _ in entries(site, pairs(site) if pair_ids is None else pair_ids)]


def iter_pages(
    renderer: Renderer, site: SiteData, pair_ids: Sequence[tuple[str, str]] | None = None
) -> Iterator[Page]:
    """Every indexed page, rendered, in the order of :func:`documents` (``pair_ids`` as there)."""
    for spec, _, item in entries(site, pairs(site) if pair_ids is None else pair_ids):
        yield render(renderer, spec, item)


def iter_markdown(renderer: Renderer, site: SiteData) -> Iterator[str]:
    """The markdown mirrors llms-full.txt holds, in the order of :func:`full_text_documents`: the
    documents and the catalog's tables (:func:`in_full_text`)."""
    for spec, doc, item in entries(site, []):
        if in_full_text(doc.path):
            yield render(renderer, spec, item, markdown=True)


def build_site(
    out_dir: Path,
    progress: Progress | None = None,
    *,
    site: SiteData | None = None,
    base_url: str = "http://localhost:8000",
    max_pairs: int | None = None,
    takeaway: bool = False,
) -> BuildReport:
    """Write the whole site as static files under ``out_dir`` and return what was written.

    ``progress(done, total, path)`` is called after each page. ``base_url`` is where the copy will be
    served (absolute URLs in robots.txt, llms.txt and sitemap.xml, and each page's canonical link);
    every other link is relative (``export_links``), so the copy also opens from file:// or below any
    path. ``max_pairs`` caps the pair pages. The pair pages are written by worker processes where
    there are many (``export_write``). ``takeaway``: also write the packaged catalog as data
    (``data/servebound.sqlite`` and ``data/csv/``, as `servebound export` does), linked from the home
    page and llms.txt.
    """
    start = time.perf_counter()
    site = site or default_site_data()
    site.validation()  # evaluated once, before any worker forks
    pair_ids = pairs(site, max_pairs)  # once for the build: its pages, index, links and report
    exported = set(pair_ids)
    renderer = Renderer(site, mode="static", exported=lambda h, m: (h, m) in exported, base_url=base_url)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    writer = Writer(out_dir, urlsplit(base_url).path.rstrip("/"))
    docs = documents(site, pair_ids)
    taken = write_takeaway(out_dir, writer) if takeaway else []
    renderer.env.globals["takeaway"] = renderer.md_env.globals["takeaway"] = taken
    total = len(docs)
    count = 0
    # Only the mirrors are kept for llms-full.txt: holding every page's HTML too took the full
    # export to 1.33 GB peak RSS (issue 14).
    markdowns: list[str] = []

    def done(path: str) -> None:
        nonlocal count
        count += 1
        if progress is not None:
            progress(count, total, path)

    def write_documents() -> None:
        kept = site.row_cache
        if kept is None:  # the hardware and the model pages rank the same pairs: once each
            site.row_cache = {}
        try:
            for page in iter_pages(renderer, site, pair_ids=[]):
                writer.page(page)
                if in_full_text(page.path):
                    markdowns.append(page.markdown)
                done(page.path)
        finally:
            site.row_cache = kept

    write_pairs(writer, renderer, site, pair_ids, write_documents, done)
    write = writer.write
    write(out_dir / "llms.txt", llms_txt(docs, base_url, renderer.date, taken))
    write(
        out_dir / "llms-full.txt",
        llms_full_txt(markdowns, base_url, [d for d in docs if in_full_text(d.path)]),
    )
    write(out_dir / "robots.txt", robots_txt(base_url))

    write(out_dir / "conformance.json", conformance_text())
    if base_url:  # a sitemap lists absolute URLs: none without the address the copy is served from
        write(out_dir / "sitemap.xml", sitemap_xml([d.path for d in docs], base_url))
    for name, data in catalog_data(site, exported):
        write(out_dir / "data" / name, script_json(data))
    # A host serves 404.html at any depth: its links start at the site's root (under the base path).
    write(out_dir / "404.html", renderer.error(404, "path", "no page at this address"), rooted=True)
    # The home form's target and every link to a pair without a page: the calculator.
    write(out_dir / "pair" / "index.html", calculator_page(renderer, site, len(pair_ids)))
    for name, (asset, _) in packaged_static().items():
        target = out_dir / "static" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(asset)
        writer.count(target)
    return BuildReport(
        out_dir=out_dir,
        pages=len(docs),
        pairs=len(pair_ids),
        files=writer.files,
        bytes=writer.bytes,
        seconds=time.perf_counter() - start,
    )


def catalog_data(site: SiteData, exported: set[tuple[str, str]]) -> Iterator[tuple[str, dict[str, Any]]]:
    """The calculator's data files, by name under ``data/``: each model profile's adapter quantities
    (``models/M.json``, with the machines where the pair has a page of its own) and each hardware
    row's (``hardware/H.json``, with the overhead its pairs take by default)."""
    natives = {m.base_id: m.id for m in site.models if m.native}
    with_page: dict[str, list[str]] = {}
    for hw_id, mid in sorted(exported):
        with_page.setdefault(mid, []).append(hw_id)
    for m in site.models:
        data = model_data(m)
        data["native_id"] = natives.get(m.base_id, m.id)
        data["exported_hardware"] = with_page.get(m.id, [])
        yield f"models/{m.id}.json", data
    for h in site.hardware:
        yield f"hardware/{h.id}.json", calculator_hardware(h)
    yield "names.json", names_index(site)


def names_index(site: SiteData) -> dict[str, Any]:
    """``data/names.json``: the search and the names the pickers resolve on the copy
    (``catalog.search.browser_index`` over the rows the site shows, and every shown id as itself)."""
    index = browser_index({*site.models_by_id, *site.hardware_by_id})
    for kind, ids in (("model", site.models_by_id), ("hardware", site.hardware_by_id)):
        for shown in ids:
            index["names"].setdefault(shown.lower(), [kind, shown])
    return index


#: The data files a copy built with ``takeaway`` holds, besides each table's CSV.
SQLITE = Document(
    "/data/servebound.sqlite",
    "servebound.sqlite",
    "Data",
    "the catalog as one SQLite file, ready for datasette: hardware, models, profiles, reported runs and "
    "the default-workload ceilings of every pair that fits, with keys and a _columns table describing "
    "every column (servebound export --sqlite)",
)


def write_takeaway(out_dir: Path, writer: Writer) -> list[Document]:
    """Write ``data/servebound.sqlite`` and ``data/csv/<table>.csv`` (one computation of the records)
    and return them as documents for the home page and llms.txt."""
    counts = write_both(out_dir / "data" / "servebound.sqlite", out_dir / "data" / "csv")
    docs = [SQLITE]
    for name in table_names():
        rows = f"{counts[name]:,} rows" if name in counts else "what every column of the other files holds"
        docs.append(Document(f"/data/csv/{name}.csv", f"{name}.csv", "Data", f"CSV, {rows}"))
    for doc in docs:
        writer.count(out_dir / doc.path.lstrip("/"))
    return docs
