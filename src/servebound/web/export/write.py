"""Writing the static export: files with relative links, and the pair pages over worker processes.

The pair pages are nearly all of the export and independent of each other: where the platform forks
and there are enough of them, worker processes (one per CPU) render and write them in chunks, while
the calling process writes the documents (the hardware and model pages, whose rank tables are the
other large cost). Each process keeps its own count of files and bytes; the totals are summed.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from servebound.web.app.query import WorkloadQuery
from servebound.web.export.links import relative_links, rooted_links
from servebound.web.pages.contexts import Page
from servebound.web.pages.renderer import Renderer
from servebound.web.pages.site import SiteData, compute_pair
from servebound.web.pages.text import mirror_path

#: Pair pages below which the export writes them in this process (a worker costs a fork and a copy).
PARALLEL_FROM = 400
#: Pairs per task handed to a worker.
CHUNK = 48


class Writer:
    """Writes the export's files under ``out_dir``: a page's links relative to its file (``rooted``:
    kept at the site's root, under ``base_path``), UTF-8, each folder made once; counts files and bytes."""

    def __init__(self, out_dir: Path, base_path: str = "") -> None:
        self.out_dir = out_dir
        self.base_path = base_path
        self.files = 0
        self.bytes = 0
        self._made: set[Path] = set()

    def write(self, path: Path, text: str, *, rooted: bool = False) -> None:
        folder = path.parent
        if folder not in self._made:
            folder.mkdir(parents=True, exist_ok=True)
            self._made.add(folder)
        if rooted:
            text = rooted_links(text, self.base_path)
        elif path.suffix in (".html", ".md"):
            depth = len(path.relative_to(self.out_dir).parts) - 1
            text = relative_links(text, depth, markdown=path.suffix == ".md")
        data = text.encode("utf-8")
        path.write_bytes(data)
        self.files += 1
        self.bytes += len(data)

    def count(self, path: Path) -> None:
        """A file written another way (a copied asset)."""
        self.files += 1
        self.bytes += path.stat().st_size

    def page(self, page: Page) -> None:
        """A page and its markdown mirror."""
        rel = page.path.strip("/")
        self.write(self.out_dir / rel / "index.html" if rel else self.out_dir / "index.html", page.html)
        self.write(self.out_dir / mirror_path(page.path).lstrip("/"), page.markdown)


def render_pair(renderer: Renderer, site: SiteData, hw_id: str, model_id: str) -> Page:
    """One pair's page at the default workload."""
    pair = compute_pair(site.hardware_by_id[hw_id], site.models_by_id[model_id], WorkloadQuery())
    return renderer.pair_page(pair)


# The worker's state, inherited at the fork: the renderer, the site and where to write.
_WORK: tuple[Renderer, SiteData, Path, str] | None = None


def _write_chunk(chunk: Sequence[tuple[str, str]]) -> tuple[int, int, list[str]]:
    assert _WORK is not None
    renderer, site, out_dir, base_path = _WORK
    writer = Writer(out_dir, base_path)
    paths = []
    for hw_id, model_id in chunk:
        page = render_pair(renderer, site, hw_id, model_id)
        writer.page(page)
        paths.append(page.path)
    return writer.files, writer.bytes, paths


def write_pairs(
    writer: Writer,
    renderer: Renderer,
    site: SiteData,
    pair_ids: Sequence[tuple[str, str]],
    meanwhile: Callable[[], None],
    done: Callable[[str], None],
) -> None:
    """Write every pair page (``done(path)`` after each) and run ``meanwhile`` (the documents) in
    this process: alongside worker processes where there are many pairs, else before them."""
    global _WORK
    workers = os.cpu_count() or 1
    if len(pair_ids) < PARALLEL_FROM or workers < 2 or "fork" not in multiprocessing.get_all_start_methods():
        meanwhile()
        for hw_id, model_id in pair_ids:
            page = render_pair(renderer, site, hw_id, model_id)
            writer.page(page)
            done(page.path)
        return
    chunks = [pair_ids[i : i + CHUNK] for i in range(0, len(pair_ids), CHUNK)]
    _WORK = (renderer, site, writer.out_dir, writer.base_path)
    # What the workers inherit stays shared: the collector no longer walks (and so copies) it.
    gc.freeze()
    try:
        with multiprocessing.get_context("fork").Pool(workers) as pool:
            results = pool.imap_unordered(_write_chunk, chunks)
            meanwhile()
            for files, size, paths in results:
                writer.files += files
                writer.bytes += size
                for path in paths:
                    done(path)
    finally:
        _WORK = None
        gc.unfreeze()
