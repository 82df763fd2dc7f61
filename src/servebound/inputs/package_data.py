"""The package's own data files (catalog TOML, configs), read straight from its folder where the
package is a plain folder on disk (the usual install), through ``importlib.resources`` otherwise (a
zip or another loader). The direct read skips importing ``importlib.resources``' readers and
``zipfile``, which cost a cold command a noticeable share of its start-up; the bytes are the same.
"""

from __future__ import annotations

import io
import os
import sys
from importlib import import_module
from typing import IO, Any


def _folder(package: str) -> str | None:
    """The package's one folder on disk, or None where it is not a plain folder."""
    module = sys.modules.get(package) or import_module(package)
    spec = module.__spec__
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    if len(locations) != 1 or not os.path.isdir(locations[0]):
        return None
    return str(locations[0])


def read_bytes(package: str, *parts: str) -> bytes:
    """The bytes of the file ``parts`` (names below the package's folder)."""
    folder = _folder(package)
    if folder is None:
        from importlib import resources

        return resources.files(package).joinpath(*parts).read_bytes()
    with open(os.path.join(folder, *parts), "rb") as handle:
        return handle.read()


def open_binary(package: str, *parts: str) -> IO[bytes]:
    """The file ``parts`` opened for reading bytes (seekable)."""
    folder = _folder(package)
    if folder is None:
        from importlib import resources

        return io.BytesIO(resources.files(package).joinpath(*parts).read_bytes())
    return open(os.path.join(folder, *parts), "rb")


def read_text(package: str, *parts: str) -> str:
    """The UTF-8 text of the file ``parts`` (names below the package's folder)."""
    folder = _folder(package)
    if folder is None:
        from importlib import resources

        return resources.files(package).joinpath(*parts).read_text(encoding="utf-8")
    with open(os.path.join(folder, *parts), encoding="utf-8") as handle:
        return handle.read()


def read_toml(package: str, *parts: str) -> dict[str, Any]:
    """The tables of the package's TOML file ``parts``; the parser is imported on first use, so a
    command that reads no TOML (its records come from the record cache) never loads it."""
    import tomllib

    return tomllib.loads(read_text(package, *parts))
