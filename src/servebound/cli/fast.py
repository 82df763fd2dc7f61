"""The command line's fast path: the hot commands parsed, and help printed, without building Typer's
command (its per-parameter pydantic adapters) or importing rich's help formatter.

Nothing here declares an option. The first time Typer builds a hot command (``HOT``) with the record
cache on, ``remember`` reads that command's click parameters (names, option strings, types, defaults)
into a spec, kept in ``cli-<key>.json`` beside the record cache under the same package key; help
printed by Typer is kept there too, keyed by the arguments and the terminal it was laid out for. A
later process answers from that file: ``run`` parses the arguments by the spec and calls the very
callback Typer registered, with the values Typer would pass; ``help_text`` prints the kept text.

``parse`` accepts a deliberately small grammar: ``--name value``, ``--name=value``, ``-X value``,
bare flags, each option at most once, every required option present; text, whole numbers written as
plain digits, decimals written as digits with an optional fraction, and a choice spelled exactly.
Anything else (an unknown or repeated option, a value that starts with ``-``, a number in another
spelling, ``--help``, a bad choice, a missing value) returns None, and the arguments go to Typer,
which parses them and words every error itself. So each value the fast path passes equals Typer's and
each error and exit status is Typer's own (tests/test_cli_fast.py checks both on many arguments).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
from collections.abc import Sequence
from enum import Enum
from functools import cache
from importlib import import_module
from typing import Any

from servebound.inputs import record_cache

#: The commands the fast path parses: those a person or a script runs most (one answer each), and
#: ``serve``, whose start-up is the time to its first page.
HOT = ("decode", "prefill", "rank", "cost", "serve")

#: Bound on the spec file (a few kB) and on the help texts kept in it.
MAX_SPEC_BYTES = 2_000_000
MAX_HELP_TEXTS = 64

_INT = re.compile(r"0|[1-9][0-9]{0,17}")
_FLOAT = re.compile(r"(?:0|[1-9][0-9]{0,15})(?:\.[0-9]{1,17})?")

#: Environment variables that change how Typer and rich lay out help (width, colour, terminal).
_LAYOUT_ENV = ("COLOR", "TERM", "COLUMNS", "LINES", "TTY", "TYPER", "RICH", "JUPYTER", "CLICOLOR")

_state: dict[str, Any] = {}


def _path() -> str | None:
    return record_cache.kept_path("cli")


def _load() -> dict[str, Any]:
    """The spec file's content ({} when there is none, or it is unreadable)."""
    if "file" not in _state:
        path = _path()
        content: Any = {}
        if path is not None and os.path.isfile(path):
            from servebound.errors import InputError
            from servebound.inputs import bounded

            try:
                content = json.loads(bounded.read_bytes(path, "command-line spec", max_bytes=MAX_SPEC_BYTES))
            except (InputError, OSError, ValueError, RecursionError):  # unreadable: rebuilt
                content = {}
        _state["file"] = content if isinstance(content, dict) else {}
    loaded: dict[str, Any] = _state["file"]
    return loaded


def _save(content: dict[str, Any]) -> None:
    folder = record_cache.enabled_folder()
    if folder is None:
        return
    _state["file"] = content
    with contextlib.suppress(OSError, TypeError, ValueError):  # unwritable: Typer parses next time too
        record_cache.write_file(folder, "cli", json.dumps(content))


# Spec ------------------------------------------------------------------------------------------------


def param_spec(param: Any) -> dict[str, Any] | None:
    """One click parameter as plain data, or None for a kind the fast path does not parse."""
    desc = getattr(param, "type_descriptor", None)
    if (
        desc is None
        or type(param).__name__ != "TyperOption"
        or param.secondary_opts
        or param.multiple
        or param.nargs != 1
        or param.callback is not None
        or param.envvar is not None
        or param.is_eager
        or getattr(param, "count", False)
        or getattr(param, "prompt", None)
        or not param.expose_value
        or desc.parameter_info.parser is not None
        or param.min is not None
        or param.max is not None
    ):
        return None
    annotation = desc.annotation
    kind = {str: "str", int: "int", float: "float", bool: "flag"}.get(annotation)
    spec: dict[str, Any] = {"name": param.name, "opts": list(param.opts), "required": bool(param.required)}
    if desc.is_choice:
        if not desc.case_sensitive or not (isinstance(annotation, type) and issubclass(annotation, Enum)):
            return None
        choices: list[Enum] = list(desc.choices or ())
        if not all(isinstance(c, annotation) and isinstance(c.value, str) for c in choices):
            return None
        spec["kind"] = "choice"
        spec["enum"] = f"{annotation.__module__}:{annotation.__qualname__}"
        spec["choices"] = [choice.value for choice in choices]
        default = param.default
        if default is not None and not isinstance(default, annotation):
            return None
        spec["default"] = None if default is None else default.value
        return spec
    if kind is None or (kind == "flag") != bool(getattr(param, "is_flag", False)):
        return None
    if kind == "flag" and (
        param.default is not False or getattr(param, "flag_value", None) not in (None, True)
    ):
        return None
    default = param.default
    if default is not None and type(default) is not annotation:
        return None
    spec["kind"] = kind
    spec["default"] = default
    return spec


def command_spec(command: Any) -> dict[str, Any] | None:
    """A click command's parameters as plain data, or None when one is of a kind not parsed here."""
    if (
        command.context_settings
        or command.allow_extra_args
        or command.ignore_unknown_options
        or not command.allow_interspersed_args
    ):
        return None
    params = []
    for param in command.params:
        spec = param_spec(param)
        if spec is None:
            return None
        params.append(spec)
    return {"params": params}


def remember(name: str, command: Any) -> None:
    """Keep a hot command's spec (once per package key), where the record cache is on."""
    if name not in HOT or _path() is None:
        return
    content = _load()
    specs = content.setdefault("commands", {})
    if name in specs:
        return
    try:
        spec = command_spec(command)
    except Exception:  # a parameter of a shape not read here: this command always goes to Typer
        spec = None
    specs[name] = spec
    _save(content)


# Parsing -------------------------------------------------------------------------------------------


@cache
def _enum(path: str) -> Any:
    """A choice's Enum class, named in the spec; only servebound's own Enums are ever looked up."""
    module, _, qualname = path.partition(":")
    if not module.startswith("servebound.") or not qualname.isidentifier():
        raise ValueError(f"{path!r} is not one of servebound's choices")
    found = getattr(import_module(module), qualname, None)
    if not (isinstance(found, type) and issubclass(found, Enum)):
        raise ValueError(f"{path!r} is not an Enum")
    return found


def _value(spec: dict[str, Any], text: str) -> tuple[bool, Any]:
    """(True, the value Typer gives ``text``) where the grammar here covers it, else (False, None)."""
    kind = spec["kind"]
    if kind == "str":
        return True, text
    if kind == "int":
        return (True, int(text)) if _INT.fullmatch(text) else (False, None)
    if kind == "float":
        return (True, float(text)) if _FLOAT.fullmatch(text) else (False, None)
    if kind == "choice" and text in spec["choices"]:
        return True, _enum(spec["enum"])(text)
    return False, None


def _default(spec: dict[str, Any]) -> Any:
    if spec["kind"] == "choice" and spec["default"] is not None:
        return _enum(spec["enum"])(spec["default"])
    return spec["default"]


def parse(spec: dict[str, Any], args: Sequence[str]) -> dict[str, Any] | None:
    """The keyword arguments Typer would call the command with, or None (Typer parses instead)."""
    by_opt = {opt: param for param in spec["params"] for opt in param["opts"]}
    given: dict[str, Any] = {}
    at = 0
    while at < len(args):
        token = args[at]
        at += 1
        name, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        param = by_opt.get(name)
        if param is None or param["name"] in given:
            return None
        if param["kind"] == "flag":
            if eq:
                return None
            given[param["name"]] = True
            continue
        if not eq:
            if at >= len(args) or args[at].startswith("-"):
                return None
            inline = args[at]
            at += 1
        ok, value = _value(param, inline)
        if not ok:
            return None
        given[param["name"]] = value
    out = {}
    for param in spec["params"]:
        if param["name"] in given:
            out[param["name"]] = given[param["name"]]
        elif param["required"]:
            return None
        else:
            out[param["name"]] = _default(param)
    return out


def _callback(name: str, module: str) -> Any:
    """The function Typer registered for ``name`` (its own module imported, as Typer's path does)."""
    import_module(f"servebound.cli.{module}")
    from servebound.cli.common import app

    return app.registered_callback(name)  # read without building Typer's app (or importing Typer)


def run(args: Sequence[str], module_of: dict[str, tuple[str, str]]) -> tuple[bool, Any]:
    """(True, the command's return value) where the fast path ran it, else (False, None)."""
    if not args or args[0] not in HOT or "_SERVEBOUND_COMPLETE" in os.environ:
        return False, None
    specs = _load().get("commands", {})
    spec = specs.get(args[0])
    if not isinstance(spec, dict):
        return False, None
    try:
        kwargs = parse(spec, args[1:])
    except (KeyError, TypeError, ValueError, AttributeError, ImportError):  # a spec this code did not write
        kwargs = None
    if kwargs is None:
        return False, None
    callback = _callback(args[0], module_of[args[0]][0])
    if callback is None:
        return False, None
    return True, callback(**kwargs)


# Help ----------------------------------------------------------------------------------------------


def _help_key(args: Sequence[str]) -> str | None:
    """What help text depends on: the arguments, whether stdout is a terminal (and its size), and the
    environment variables that change the layout; None where help is not asked for plainly."""
    if not args or args[-1] != "--help" or any(a.startswith("-") for a in args[:-1]) or len(args) > 3:
        return None
    try:
        terminal = sys.stdout.isatty()
        size = tuple(os.get_terminal_size(sys.stdout.fileno())) if terminal else None
    except (OSError, ValueError, AttributeError):
        return None
    env = sorted((k, v) for k, v in os.environ.items() if any(word in k for word in _LAYOUT_ENV))
    return json.dumps([list(args), terminal, size, env, sys.stdout.encoding])


def help_text(args: Sequence[str]) -> str | None:
    """The help Typer printed for these arguments in this terminal, where it was kept."""
    key = _help_key(args)
    if key is None or _path() is None:
        return None
    text = _load().get("help", {}).get(key)
    return text if isinstance(text, str) else None


class Recorder:
    """Standard output, passed through unchanged, with a copy of what was written."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        written: int = self._stream.write(text)  # first: a probe that the stream refuses is not kept
        self.parts.append(text)
        return written

    def text(self) -> str | None:
        """What was written, or None where anything but text was."""
        return "".join(self.parts) if all(isinstance(part, str) for part in self.parts) else None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def remember_help(args: Sequence[str], text: str | None) -> None:
    """Keep the help Typer printed for these arguments (a bounded number of layouts)."""
    key = _help_key(args)
    if key is None or _path() is None or not text:
        return
    content = _load()
    kept = content.setdefault("help", {})
    if len(kept) >= MAX_HELP_TEXTS:
        kept.clear()
    kept[key] = text
    _save(content)
