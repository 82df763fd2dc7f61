"""Relative links for the static export, so the copy opens from any folder, any sub-path and file://.

A page's site-root links (``href="/hardware"``, ``src="/static/site.js"``, ``](/models/x)``) are
rewritten relative to the file that holds them. In HTML a link to a page names its ``index.html``
(``../hardware/index.html``): a file:// browser does not open a folder's index by itself, and a plain
static server serves the same file. A file (``.md``, ``.css``, ``.json`` ...) keeps its name. The
page's script learns the way back to the copy's root from ``<html data-base="..">``.
"""

from __future__ import annotations

import re

#: Endings of the copy's files (everything else a site-root link names is a page, a folder).
FILE_SUFFIXES = (".md", ".css", ".js", ".json", ".txt", ".xml", ".svg", ".html", ".sqlite", ".csv")

_ROOT_LINK = re.compile(r'(\s(?:href|src|action)=")/(?!/)([^"]*)"')
_ROOT_MD_LINK = re.compile(r"(\]\()/(?!/)([^)\s]*)\)")


def relative_target(link: str, up: str, *, html: bool) -> str:
    """One site-root link (without its leading ``/``) as a link from a file ``up`` below the root."""
    rest = ""
    cut = min((i for i in (link.find("?"), link.find("#")) if i >= 0), default=-1)
    if cut >= 0:
        link, rest = link[:cut], link[cut:]
    if html and not link.endswith(FILE_SUFFIXES):
        link = (link.rstrip("/") + "/index.html").lstrip("/")
    return (up + link or "./") + rest


def relative_links(text: str, depth: int, *, markdown: bool = False) -> str:
    """``text`` (a page's HTML, or its mirror with ``markdown``) with every site-root link made
    relative to a file ``depth`` folders below the copy's root."""
    up = "../" * depth
    if markdown:
        return _ROOT_MD_LINK.sub(
            lambda m: f"{m.group(1)}{relative_target(m.group(2), up, html=False)})", text
        )
    text = _ROOT_LINK.sub(lambda m: f'{m.group(1)}{relative_target(m.group(2), up, html=True)}"', text)
    root = up.rstrip("/") or "."
    return text.replace('<html lang="en">', f'<html lang="en" data-base="{root}">', 1)


def rooted_links(text: str, base_path: str) -> str:
    """HTML whose site-root links stay rooted, moved under ``base_path`` (``/sub``) where the copy is
    served below a domain's root: for 404.html, which a host serves at whatever depth was asked."""
    if not base_path:
        return text
    text = _ROOT_LINK.sub(lambda m: f'{m.group(1)}{base_path}/{m.group(2)}"', text)
    return text.replace('<html lang="en">', f'<html lang="en" data-base="{base_path}">', 1)
