"""The files machines read first: llms.txt, llms-full.txt, robots.txt and sitemap.xml.

All four are generated from the same list of documents (path and title) the site serves, so the index,
the full dump, the sitemap and the pages cannot disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from xml.sax.saxutils import escape as xml_escape

from servebound.web.pages.text import LICENSE_NAME, LICENSE_URL, SITE_NAME, mirror_path

#: Crawlers welcomed by name (AI training and search crawlers, and the classic search engines).
CRAWLERS = (
    "GPTBot",
    "OAI-SearchBot",
    "ChatGPT-User",
    "ClaudeBot",
    "Claude-User",
    "Claude-SearchBot",
    "anthropic-ai",
    "CCBot",
    "Google-Extended",
    "Googlebot",
    "Applebot",
    "Applebot-Extended",
    "Bingbot",
    "PerplexityBot",
    "Perplexity-User",
    "Meta-ExternalAgent",
    "meta-externalfetcher",
    "FacebookBot",
    "Bytespider",
    "Amazonbot",
    "DuckAssistBot",
    "cohere-ai",
    "MistralAI-User",
    "YouBot",
    "Diffbot",
    "ia_archiver",
)


@dataclass(frozen=True)
class Document:
    """One indexed page: its path and title, and a group for the index's sections."""

    path: str
    title: str
    group: str
    description: str = ""


#: The group of the pair pages in :func:`servebound.web.export.build.documents`.
PAIR_GROUP = "Pairs"


def llms_txt(documents: Iterable[Document], base_url: str, date: str, data: Sequence[Document] = ()) -> str:
    """The llmstxt.org index, kept short: a title, a summary, a link to every markdown mirror but the
    pairs' by section, each entry with the date its page was computed, the data files (``data``: a
    static copy's SQLite and CSV files, linked as they are) and how to reach any pair."""
    docs = list(documents)
    lines = [
        f"# {SITE_NAME}",
        "",
        "> Serving ceilings for large language models from first principles: does a model fit on a machine, "
        "how fast is one session, what useful throughput across sessions, how long until the first token. "
        f"Every page below is markdown; its documents and catalog indexes are one file at {base_url}/llms-full.txt. "
        f"Content license: {LICENSE_NAME} ({LICENSE_URL}).",
        "",
    ]
    groups: dict[str, list[Document]] = {}
    for doc in docs:
        groups.setdefault(doc.group, []).append(doc)
    pair_count = sum(len(items) for group, items in groups.items() if group.startswith(PAIR_GROUP))
    groups = {group: items for group, items in groups.items() if not group.startswith(PAIR_GROUP)}
    for group, items in groups.items():
        lines += [f"## {group}", ""]
        for doc in items:
            note = f": {doc.description}" if doc.description else ""
            lines.append(f"- [{_link_text(doc.title)}]({base_url}{mirror_path(doc.path)}) ({date}){note}")
        lines.append("")
    if data:
        lines += ["## Data", ""]
        lines += [f"- [{_link_text(d.title)}]({base_url}{d.path}): {d.description}" for d in data]
        lines.append("")
    if pair_count:
        # A short index: pairs are reached by pattern, not listed (each is one .md away, all in the sitemap).
        lines += [
            "## Any pair",
            "",
            f"Every hardware x model pair ({pair_count:,} with a page at the default workload) is at "
            f"`{base_url}/pair/<hardware id>/<model id>.md` (the ids are in the hardware and model indexes "
            f"above); add a query such as `?alloc_context=32000&read_context=8000&floor=10` for another "
            f"workload. Every pair page is listed in {base_url}/sitemap.xml; the JSON API answers any pair "
            f"at `{base_url}/api/decode?hardware=<id>&model=<id>`.",
            "",
        ]
    return "\n".join(lines)


def _link_text(title: str) -> str:
    return title.replace("[", "(").replace("]", ")").replace("\n", " ")


#: The line between documents in llms-full.txt, announced word for word in its header.
DELIMITER_LINE = "=====  =====  ====="
DELIMITER = f"\n\n{DELIMITER_LINE}\n\n"


def llms_full_header(base_url: str, documents: Sequence[Document]) -> str:
    """The first lines of llms-full.txt: what it holds (its documents, counted and named; the hardware,
    model and pair pages are each one .md away), license, base URL, how documents are delimited."""
    titles = "; ".join(f"{_link_text(doc.title)} ({mirror_path(doc.path)})" for doc in documents)
    return (
        f"# {SITE_NAME}: {len(documents):,} documents as text\n\n"
        f"This file holds {len(documents):,} documents: {titles}. Each hardware, model and pair page is not "
        f"held here: it is one .md away ({base_url}/llms.txt lists them, {base_url}/sitemap.xml too).\n"
        f"License: {LICENSE_NAME} ({LICENSE_URL}). Share and adapt, including for training, with attribution "
        f"to {SITE_NAME}.\n"
        f"Base URL: {base_url}\n"
        "Each document below starts with a frontmatter block between two `---` lines (title, url, canonical "
        f"URL, date, description, license, attribution); documents are separated by the line "
        f"`{DELIMITER_LINE}`.\n"
    )


def llms_full_body(markdowns: Iterable[str]) -> str:
    """Every page's markdown (with its frontmatter), delimited; the same for any base URL (the
    frontmatter carries site-relative paths), so a server builds it once."""
    return DELIMITER + DELIMITER.join(text.rstrip() + "\n" for text in markdowns)


def llms_full_txt(markdowns: Iterable[str], base_url: str, documents: Sequence[Document]) -> str:
    """The site's documents as one text file: a header, then each document's markdown mirror."""
    return llms_full_header(base_url, documents) + absolute_canonicals(llms_full_body(markdowns), base_url)


def absolute_canonicals(text: str, base_url: str) -> str:
    """Frontmatter ``canonical:`` lines made absolute (pages rendered without a base URL carry the path)."""
    return text.replace("\ncanonical: /", f"\ncanonical: {base_url}/")


def robots_txt(base_url: str) -> str:
    """robots.txt that starts with directions and welcomes crawlers by name."""
    lines = [
        "# Machine-readable content for LLMs and agents:",
        f"#   {base_url}/llms.txt        index of the markdown mirror of every page",
        f"#   {base_url}/llms-full.txt   the documents and catalog indexes as one plain-text file",
        "# Every page is also served as markdown: append .md to its URL (/ is /index.md).",
        f"# Content license: {LICENSE_NAME} ({LICENSE_URL}); attribution: {SITE_NAME}.",
        "",
    ]
    for name in CRAWLERS:
        lines += [f"User-agent: {name}", "Allow: /", ""]
    lines += ["User-agent: *", "Allow: /", ""]
    if base_url:  # a sitemap is written only where the copy's address is known
        lines += [f"Sitemap: {base_url}/sitemap.xml", ""]
    return "\n".join(lines)


def sitemap_xml(paths: Iterable[str], base_url: str) -> str:
    """Every HTML page, every mirror, and both llms files."""
    urls: list[str] = []
    for path in paths:
        urls += [path, mirror_path(path)]
    urls += ["/llms.txt", "/llms-full.txt"]
    body = "".join(f"<url><loc>{xml_escape(base_url + u)}</loc></url>\n" for u in dict.fromkeys(urls))
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + body + "</urlset>\n"
    )
