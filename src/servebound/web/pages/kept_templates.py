"""The pages' templates kept compiled beside the record cache, so that a server's first pages do not
compile them again.

Jinja compiles each template to Python code on its first use in a process (about half of the home
page's first render). Where the record cache is on, :func:`keep_compiled` gives the renderer's two
environments a bytecode cache in ``templates-<package key>/`` of the cache's folder: the key changes
with every file of the package (the templates and the environments' options included), Jinja checks
each kept file against its template's source and its own version, and the folders of other keys are
removed. The folder is trusted as Python's own bytecode caches are (code this process wrote); a file
that cannot be read back is compiled again, and one that cannot be written is not kept.
"""

from __future__ import annotations

import contextlib
import shutil
from typing import Any

from jinja2 import FileSystemBytecodeCache
from jinja2.bccache import Bucket

from servebound.inputs import record_cache


class _Kept(FileSystemBytecodeCache):
    """Jinja's file cache that never fails a page: unreadable is compiled, unwritable not kept."""

    def load_bytecode(self, bucket: Bucket) -> None:
        try:
            super().load_bytecode(bucket)
        except (EOFError, ValueError, TypeError, OSError):
            bucket.reset()

    def dump_bytecode(self, bucket: Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def keep_compiled(renderer: Any) -> bool:
    """Give ``renderer``'s HTML and markdown environments the kept cache (where the record cache is
    on and its folder can be written); True if they have it."""
    folder = record_cache.enabled_folder()
    if folder is None:
        return False
    directory = folder / f"templates-{record_cache.package_key()}"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for old in folder.glob("templates-*"):
            if old != directory:
                shutil.rmtree(old, ignore_errors=True)
    except OSError:
        return False
    renderer.env.bytecode_cache = _Kept(str(directory), "html-%s.cache")
    renderer.md_env.bytecode_cache = _Kept(str(directory), "md-%s.cache")
    return True
