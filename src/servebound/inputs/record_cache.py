"""The folder where ``servebound.cli.fast`` keeps its command-line spec, only where one is asked for.

Catalog records are no longer kept here: they ship prebuilt as package data (``catalog.snapshot``).
What is left serves the command line's replayed spec until that is replaced: it is written only to
the folder ``$SERVEBOUND_CACHE_DIR`` names (nothing by default, so no command writes under ``$HOME``
or ``$XDG_CACHE_HOME``), in ``<stem>-<package key>.json``, keyed by the size and modification time of
every file of the installed package and the Python version.
"""

from __future__ import annotations

import os
import sys
import zlib
from functools import cache

_state = {"enabled": False}


def enable() -> None:
    """Let this process use the folder (the console script does, once, before it runs a command)."""
    _state["enabled"] = True


def _folder_text() -> str | None:
    chosen = os.environ.get("SERVEBOUND_CACHE_DIR")
    return None if not chosen or chosen == "off" else chosen


def kept_path(stem: str) -> str | None:
    """``<stem>-<package key>.json`` in the folder where this process uses one, else None."""
    folder = _folder_text() if _state["enabled"] else None
    return None if folder is None else os.path.join(folder, f"{stem}-{package_key()}.json")


def enabled_folder() -> str | None:
    """The folder where this process uses one (``enable`` and ``$SERVEBOUND_CACHE_DIR`` set), else None."""
    return _folder_text() if _state["enabled"] else None


@cache
def package_key() -> str:
    """Two checksums (CRC-32, Adler-32) of the size and mtime of every file of the package and the
    Python version: one state of the package told from the next."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    lines = [sys.version]
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if d != "__pycache__")
        for name in sorted(files):
            stat = os.stat(os.path.join(folder, name))
            lines.append(f"{folder[len(root) :]}/{name}:{stat.st_size}:{stat.st_mtime_ns}")
    listing = "\n".join(lines).encode()
    return f"{zlib.crc32(listing):08x}{zlib.adler32(listing):08x}{len(listing) % 0x10000:04x}"


def write_file(folder: str | os.PathLike[str], stem: str, text: str) -> None:
    """``<stem>-<package key>.json`` in ``folder``, written whole (a temporary file, then renamed), and
    the same stem's files of other package keys removed. OSError when the folder cannot be written."""
    key = package_key()
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, f"{stem}-{key}.json")
    temporary = os.path.join(folder, f".{stem}-{key}-{os.getpid()}.tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temporary, path)
    for name in os.listdir(folder):
        if name.startswith(f"{stem}-") and name.endswith(".json") and name != os.path.basename(path):
            os.unlink(os.path.join(folder, name))
