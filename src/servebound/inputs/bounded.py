"""The one reader of untrusted data files: one policy, one wording, for every file servebound opens.

Hardware and model files (TOML or JSON), config.json, safetensors headers and index files, benchmark
result files and the catalog's own data all pass through here. Each refusal is one InputError naming the
field (the file and, where known, the key):

- more bytes than the caller's cap (read bounded: at most cap + 1 bytes ever leave the disk);
- text that is not UTF-8;
- JSON that does not parse, or a duplicate key in one object (TOML: tomllib refuses duplicates itself);
- NaN or Infinity (JSON's non-standard constants, TOML's ``nan``/``inf``), at any depth (Infinity
  only under the ``UNBOUNDED_KEYS`` real configs use for "no limit");
- nesting deeper than ``MAX_DEPTH`` objects/arrays (no real config comes near it);
- a path that is not a regular file (a FIFO, a device, a socket, a folder): :func:`open_regular` checks
  the type of what it opened, without blocking, before any byte is read.

A UTF-8 byte order mark at the start of a TOML or JSON file (some Windows editors write one) is skipped.

GGUF metadata is binary, not JSON; its reader applies the same policy (duplicate keys and non-finite
floats refused) with ``check_finite`` from here.
"""

from __future__ import annotations

import json
import math
import os
import stat
from typing import IO, Any

from servebound.errors import InputError

#: Deepest nesting of objects/arrays a data file may have (config.json files nest 3 or 4 deep).
MAX_DEPTH = 64

#: The one exception to "no Infinity": keys real files write as an unbounded limit (Python's json
#: writes float("inf") as ``Infinity``; Mamba-2 and Nemotron-H configs give ``time_step_limit: [0.0,
#: Infinity]``, SGLang's bench_serving results ``"request_rate": Infinity`` for every request at once).
#: servebound never computes with them; anywhere else Infinity is refused, and NaN is refused everywhere.
UNBOUNDED_KEYS = frozenset({"time_step_limit", "request_rate"})


def _no_duplicates(field: str) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        for key, value in pairs:
            if key in seen:
                raise InputError(
                    field, f"duplicate key {key!r} in the JSON (the key appears twice; keep one)"
                )
            seen[key] = value
        return seen

    return hook


def _constant(name: str) -> float:
    """JSON's non-standard constants: NaN is never a value; +-Infinity is kept for check_tree to judge."""
    if name == "NaN":
        raise ValueError("NaN is not a number a file may hold; write a number")
    return float(name.replace("Infinity", "inf"))


def _join(path: str, key: object) -> str:
    return f"{path}.{key}" if path else str(key)


def check_tree(data: object, field: str) -> None:
    """Refuse non-finite floats and nesting deeper than MAX_DEPTH, naming the dotted key (iterative)."""
    if isinstance(data, float):
        check_finite(data, field)
    stack: list[tuple[dict[str, Any] | list[Any], str, int]] = []
    if isinstance(data, dict | list):
        stack.append((data, "", 1))
    while stack:
        container, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise InputError(_where(field, path), f"is nested too deeply (more than {MAX_DEPTH} levels)")
        pairs = container.items() if isinstance(container, dict) else enumerate(container)
        for key, item in pairs:
            where = _join(path, key) if isinstance(container, dict) else path
            if isinstance(item, dict | list):
                stack.append((item, where, depth + 1))
            elif isinstance(item, float) and not math.isfinite(item):
                if math.isinf(item) and where.rpartition(".")[2] in UNBOUNDED_KEYS:
                    continue
                check_finite(item, _where(field, where))


def _where(field: str, path: str) -> str:
    """``model.weights.total_params`` for a one-word field, ``config.json rope_theta`` otherwise."""
    if not path:
        return field
    return f"{field}{' ' if ' ' in field or '.' in field else '.'}{path}"


def check_finite(value: float, field: str) -> None:
    """A float a file holds must be a finite number."""
    if not math.isfinite(value):
        raise InputError(field, f"must be a finite number (got {value}); NaN and Infinity are refused")


#: The byte order mark some editors put before UTF-8 text: skipped, never part of the document.
BOM = "\ufeff"


def _text(raw: bytes | str) -> str:
    """``raw`` as text (UTF-8 bytes decoded), a leading byte order mark dropped."""
    text = raw.decode("utf-8") if isinstance(raw, bytes) else raw
    return text.removeprefix(BOM)


def parse_json(raw: bytes | str, field: str) -> Any:
    """JSON text under the policy: duplicate keys, NaN/Infinity, bad UTF-8 and deep nesting refused."""
    try:
        text = _text(raw)
        data = json.loads(text, object_pairs_hook=_no_duplicates(field), parse_constant=_constant)
    except InputError:
        raise
    except UnicodeDecodeError as error:
        raise InputError(field, f"is not UTF-8 text ({error.reason} at byte {error.start})") from None
    except RecursionError:
        raise InputError(
            field, f"is not valid JSON: nested too deeply (more than {MAX_DEPTH} levels)"
        ) from None
    except json.JSONDecodeError as error:
        raise InputError(field, f"is not valid JSON: {error.msg} at line {error.lineno}") from None
    except ValueError as error:
        raise InputError(field, f"is not valid JSON: {error}") from None
    check_tree(data, field)
    return data


def parse_toml(raw: bytes | str, field: str, origin: str | None = None) -> dict[str, Any]:
    """TOML text (or UTF-8 bytes) under the same policy (tomllib itself refuses duplicate keys);
    ``origin``, the file's path, names the file when its bytes are not UTF-8."""
    import tomllib  # on use: a cold command that reads no TOML never loads the parser

    try:
        text = _text(raw)
        data = tomllib.loads(text)
    except UnicodeDecodeError as error:
        subject = f"{origin} is" if origin else "is"
        raise InputError(field, f"{subject} not UTF-8 text ({error.reason} at byte {error.start})") from None
    except tomllib.TOMLDecodeError as error:
        raise InputError(field, f"is not valid TOML: {error}") from None
    except RecursionError:
        raise InputError(
            field, f"is not valid TOML: nested too deeply (more than {MAX_DEPTH} levels)"
        ) from None
    check_tree(data, field)
    return data


_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def open_regular(path: str | os.PathLike[str], field: str) -> IO[bytes]:
    """``path`` opened for binary reading, refused (InputError) unless it is a regular file.

    The file is opened non-blocking and its type checked on the open descriptor (no race between a check
    and the open): a FIFO named ``model.safetensors`` is refused at once instead of waiting forever for
    a writer. An OSError (missing, no permission) is left to the caller, which names the file its way."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
            raise InputError(field, f"{os.fspath(path)} is {kind}, not a file; give the file itself")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: str | os.PathLike[str], field: str, *, max_bytes: int) -> bytes:
    """At most ``max_bytes`` bytes of a regular file; a bigger file, a folder, a FIFO or device, or a
    missing file is refused."""
    name = os.path.basename(os.fspath(path))
    try:
        with open_regular(path, field) as handle:
            raw = handle.read(max_bytes + 1)
    except OSError as error:
        raise InputError(field, f"cannot read {name}: {error.strerror or error}") from None
    if len(raw) > max_bytes:
        raise InputError(field, f"{name} is larger than the {max_bytes} byte cap for this kind of file")
    return raw


def read_json(path: str | os.PathLike[str], field: str, *, max_bytes: int) -> Any:
    """A JSON file, bounded, under the policy."""
    return parse_json(read_bytes(path, field, max_bytes=max_bytes), field)


def require_object(data: Any, field: str) -> dict[str, Any]:
    """The top level of a data file must be a JSON object / TOML table."""
    if not isinstance(data, dict):
        raise InputError(
            field, f"must hold a JSON object (a table) at the top level, got {type(data).__name__}"
        )
    return data


def parse_json_values(raw: bytes, field: str) -> list[Any]:
    """The bytes of a JSON document, or of JSON Lines (one value per line), under the policy."""
    try:
        return [parse_json(raw, field)]
    except InputError as whole_error:
        lines = [line for line in raw.splitlines() if line.strip()]
        if len(lines) < 2 or "not valid JSON" not in whole_error.problem:
            raise
        return [parse_json(line, f"{field} line {n}") for n, line in enumerate(lines, start=1)]
