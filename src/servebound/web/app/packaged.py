"""The site's packaged files (templates, static assets), read from the installed package once.

A server holds them in memory from its start: reinstalling or upgrading the package under a running
server replaces the files on disk, and a page that read its template at request time then failed with
a 500. Templates and assets together are a few hundred kB.
"""

from __future__ import annotations

import functools
import mimetypes
from importlib import resources
from importlib.resources.abc import Traversable


def _files(folder: str) -> dict[str, bytes]:
    """Every file under ``servebound/web/<folder>``, by its path relative to that folder."""
    found: dict[str, bytes] = {}
    stack: list[tuple[Traversable, str]] = [(resources.files("servebound.web").joinpath(folder), "")]
    while stack:
        node, prefix = stack.pop()
        for item in node.iterdir():
            name = f"{prefix}{item.name}"
            if item.is_dir():
                stack.append((item, f"{name}/"))
            elif item.is_file() and not item.name.startswith("."):
                found[name] = item.read_bytes()
    return found


@functools.cache
def packaged_templates() -> dict[str, str]:
    """The Jinja templates, by name (``pair.html``), as text."""
    return {name: data.decode("utf-8") for name, data in _files("templates").items()}


@functools.cache
def packaged_static() -> dict[str, tuple[bytes, str]]:
    """The static assets, by name (``site.css``): their bytes and media type."""
    return {
        name: (data, (mimetypes.guess_type(name)[0] or "application/octet-stream"))
        for name, data in _files("static").items()
    }


__all__ = ["packaged_static", "packaged_templates"]
