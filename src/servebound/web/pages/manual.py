"""The manual (the Markdown files of docs/, packaged as ``servebound/docs``) as site pages.

``/docs`` is docs/index.md and ``/docs/<name>`` is docs/<name>.md, rendered to HTML with markdown-it
(CommonMark and tables, raw HTML off) inside the site's base template; each page's ``.md`` mirror is
the file itself under the site's frontmatter. The documents, their order, titles and descriptions
come from docs/index.md's list (``- [Title](name.md): description``), so a new document is one file
and one line there. Links between documents (``cli.md#detecting-this-machine``) become site paths:
``/docs/cli#...`` in HTML, ``/docs/cli.md#...`` in a mirror. Headings carry the ids GitHub gives
them, so an anchor works the same on GitHub and on the site.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from markupsafe import Markup

from servebound.catalog.engines import markdown_table
from servebound.errors import shown
from servebound.web.pages.contexts import NotFoundError, Page
from servebound.web.pages.site import without_quotes

#: The index's entry for a document: ``- [Title](name.md): description`` (continued on indented lines).
_ENTRY = re.compile(r"^- \[([^\]]+)\]\(([a-z0-9-]+)\.md\):\s*(.*)$")
#: A relative link to another document of the manual, with an optional anchor.
_DOC_LINK = re.compile(r"^([a-z0-9-]+)\.md(#[^\s]*)?$")
_MD_LINK = re.compile(r"\]\(([a-z0-9-]+)\.md(#[^)\s]*)?\)")


@dataclass(frozen=True)
class Document:
    """One document of the manual: its file stem, title (the index's link text) and description."""

    name: str
    title: str
    description: str


@dataclass(frozen=True)
class ManualContext:
    """A manual page: the rendered HTML of its Markdown, and the Markdown its mirror carries."""

    body: Markup
    source: str


@functools.cache
def source(name: str) -> str:
    """docs/<name>.md as packaged (read once per process)."""
    return resources.files("servebound").joinpath("docs", f"{name}.md").read_text(encoding="utf-8")


@functools.cache
def documents() -> tuple[Document, ...]:
    """The documents docs/index.md lists, in its order."""
    found: list[Document] = []
    for line in source("index").splitlines():
        match = _ENTRY.match(line)
        if match:
            found.append(Document(match[2], match[1], match[3]))
        elif found and line.startswith("  ") and line.strip():
            last = found[-1]
            found[-1] = Document(last.name, last.title, f"{last.description} {line.strip()}")
    return tuple(found)


def slug(text: str) -> str:
    """A heading's anchor as GitHub writes it: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")


def _heading_text(token: Any) -> str:
    return "".join(child.content for child in token.children or [] if child.type in ("text", "code_inline"))


def anchors(text: str) -> set[str]:
    """The anchors of a document's headings (repeats numbered ``-1``, ``-2`` as GitHub does)."""
    tokens = _parser().parse(text)
    return {token.attrs["id"] for token in _with_ids(tokens) if token.type == "heading_open"}


@functools.cache
def _parser() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


def _with_ids(tokens: list[Any]) -> list[Any]:
    seen: dict[str, int] = {}
    for at, token in enumerate(tokens):
        if token.type == "heading_open":
            base = slug(_heading_text(tokens[at + 1]))
            count = seen.get(base, 0)
            seen[base] = count + 1
            token.attrSet("id", base if count == 0 else f"{base}-{count}")
    return tokens


def _site_link(target: str, *, markdown: bool) -> str:
    """A link of a document as the site serves it: another document's page (or its mirror)."""
    match = _DOC_LINK.match(target)
    if match is None:
        return target
    name, anchor = match[1], match[2] or ""
    path = "/docs" if name == "index" else f"/docs/{name}"
    return f"{path}.md{anchor}" if markdown else f"{path}{anchor}"


def render_html(text: str) -> Markup:
    """A document's Markdown as HTML: heading ids, links between documents as site paths."""
    parser = _parser()
    tokens = _with_ids(parser.parse(text))
    for token in tokens:
        for child in token.children or []:
            if child.type == "link_open":
                child.attrSet("href", _site_link(str(child.attrGet("href") or ""), markdown=False))
    return Markup(parser.renderer.render(tokens, parser.options, {}))


def mirror_text(text: str) -> str:
    """A document's Markdown for its mirror: links between documents as site-root ``.md`` paths, and
    the generated engine table's sources without quoted words (``without_quotes``)."""
    text = text.replace(markdown_table(), markdown_table(without_quotes))
    return _MD_LINK.sub(lambda m: f"]({_site_link(m[1] + '.md' + (m[2] or ''), markdown=True)})", text)


def _page(renderer: Any, name: str, path: str, title: str, description: str) -> Page:
    text = source(name)
    context = ManualContext(render_html(text), mirror_text(text))
    page: Page = renderer._page("manual", path, title, description, context)
    return page


def index_page(renderer: Any) -> Page:
    """/docs: docs/index.md."""
    return _page(renderer, "index", "/docs", "The servebound manual", "The manual, one document per subject.")


def doc_page(renderer: Any, name: str) -> Page:
    """/docs/<name>: one document of the manual (an unknown name is a 404 listing the documents)."""
    doc = next((d for d in documents() if d.name == name), None)
    if doc is None:
        suggestions = [(f"/docs/{d.name}", d.title) for d in documents()]
        raise NotFoundError("page", f"the manual has no document {shown(name)!r}", suggestions)
    return _page(renderer, doc.name, f"/docs/{doc.name}", doc.title, doc.description)
