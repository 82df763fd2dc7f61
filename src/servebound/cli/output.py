"""The command line's output plumbing: the console (every string printed as written), strict JSON on stdout,
the one table style, shown arithmetic (steps), the assumptions block, and the check of an --output path.

Names come from files (a hardware or model TOML's ``name``, a GGUF's ``general.name``, a folder's name), so
no string the console prints is read as rich markup: ``[bold]x[/bold]`` in a name prints as those
characters. Emphasis is asked for with :func:`strong` pieces of a :func:`line`, never with markup in text.
This module is the one place that guarantees it; commands never escape names themselves."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Collection, Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from servebound.core.fields import clean_json
from servebound.errors import InputError
from servebound.views.terminal import visible

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table
    from rich.text import Text

    from servebound.core.steps import Step


@cache
def _safe_console_class() -> type[Console]:
    from rich.console import Console

    class SafeConsole(Console):
        """A console that prints every string (printed text, table cells, progress lines) literally:
        never read as markup, its control characters made visible (:func:`visible`)."""

        def render_str(self, text: str, **kwargs: Any) -> Any:
            kwargs["markup"] = False
            return super().render_str(visible(text), **kwargs)

    return SafeConsole


def strong(text: str) -> Text:
    """``text`` in bold, as written (a piece of a :func:`line`)."""
    from rich.text import Text

    return Text(visible(text), style="bold")


def line(*parts: str | Text) -> Text:
    """One printed line from its pieces: plain strings and :func:`strong` ones, none read as markup."""
    from rich.text import Text

    return Text.assemble(*(part if isinstance(part, Text) else visible(part) for part in parts))


def on(model: str, machine: str, *rest: str | Text) -> Text:
    """A report's first line: the model's name and the machine's, in bold, then ``rest``."""
    return line(strong(model), " on ", strong(machine), *rest)


class _LazyConsole:
    """The command line's one console, made (and rich imported) on the first print: a --json run
    never styles anything, so it never imports rich. Every attribute is the real console's."""

    def __init__(self) -> None:
        self._console: Console | None = None

    def made(self) -> Console:
        if self._console is None:
            # Piped output (files, CI logs, the README examples) is laid out 160 columns wide; a
            # terminal uses its own.
            width = None if sys.stdout.isatty() else 160
            self._console = _safe_console_class()(highlight=False, soft_wrap=False, width=width)
        return self._console

    def __getattr__(self, name: str) -> Any:
        return getattr(self.made(), name)

    # Special methods are looked up on the type, not through __getattr__: a progress bar enters the
    # console as a context manager (build-site, measure).
    def __enter__(self) -> Console:
        return self.made().__enter__()

    def __exit__(self, *exc: Any) -> None:
        self.made().__exit__(*exc)


#: The console (a SafeConsole, made on first use).
console: Console = _LazyConsole()  # type: ignore[assignment]


def checked_output(path: Path, formats: dict[str, str], *, overwrite: bool = True) -> str:
    """Check an --output path before any work is done: its folder exists, its suffix names a format
    this command writes (``formats`` maps suffix to format), and it is not a folder. Returns the format."""
    fmt = formats.get(path.suffix.lower())
    if fmt is None:
        raise InputError(
            "output",
            f"{visible(str(path))}: this command writes {' or '.join(sorted(set(formats.values())))}; "
            f"name the file {' or '.join(formats)}",
        )
    folder = path.parent
    if not folder.is_dir():
        raise InputError("output", f"folder {visible(str(folder))} does not exist; create it first")
    if path.is_dir():
        raise InputError("output", f"{visible(str(path))} is a folder; give a file name")
    if path.exists() and not path.is_file():  # a FIFO with no reader would block the write forever
        raise InputError(
            "output",
            f"{visible(str(path))} is not a regular file (a FIFO, device or socket); give a file name",
        )
    if path.exists() and not overwrite:
        raise InputError(
            "output", f"{visible(str(path))} already exists; choose another path or allow overwriting"
        )
    return fmt


def progress_bar(*, counted: bool = False, **options: Any) -> Progress:
    """The one progress bar on the console: the step's label (as written), the bar, ``done/total`` where
    ``counted``, the time taken."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    count = (MofNCompleteColumn(),) if counted else ()
    label = TextColumn("{task.description}", markup=False)
    return Progress(label, BarColumn(), *count, TimeElapsedColumn(), console=console, **options)


def print_json(obj: dict[str, Any]) -> None:
    """Strict JSON on stdout: never NaN or Infinity."""
    sys.stdout.write(json.dumps(clean_json(obj), indent=2, allow_nan=False) + "\n")


def new_table(
    *columns: str,
    right: Collection[str] = (),
    left: Collection[str] | None = None,
    no_wrap: Collection[str] = (),
) -> Table:
    """The command line's one table style (bold headers, no box, no edge padding): ``columns`` in order,
    right-justified where named in ``right`` (or, with ``left`` given, where not named in it), those in
    ``no_wrap`` never wrapped. (rich's Table is imported here, when a human report draws one: --json
    never does.)"""
    from rich.table import Table

    drawn = Table(box=None, header_style="bold", pad_edge=False)
    for column in columns:
        at_right = column not in left if left is not None else column in right
        drawn.add_column(column, justify="right" if at_right else "left", no_wrap=column in no_wrap)
    return drawn


def print_table(columns: Sequence[str], rows: Iterable[Sequence[str]], **layout: Any) -> None:
    """``rows`` under ``columns`` in the one table style (``layout``: :func:`new_table`'s keywords)."""
    table = new_table(*columns, **layout)
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _six_digits(value: float) -> str:
    return f"{value:,.6g}"


def steps_table(
    steps: Iterable[Step], how: str, *, first: str = "quantity", value: Callable[[float], str] = _six_digits
) -> Table:
    """Shown arithmetic as a table: each step's quantity, its value (``value`` formats it) and how it
    was computed (the ``how`` column's header names where from)."""
    drawn = new_table(first, "value", how, right=("value",))
    for step in steps:
        drawn.add_row(step.quantity, value(step.value), step.formula)
    return drawn


def steps_json(steps: Iterable[Step]) -> list[dict[str, Any]]:
    """Shown arithmetic in --json: each step's quantity, value and formula."""
    return [{"quantity": s.quantity, "value": s.value, "formula": s.formula} for s in steps]


def render_assumptions(assumptions: dict[str, Any]) -> None:
    """The assumptions block: every input that moves the result, one per line."""
    console.print(strong("assumptions"))
    for key, value in assumptions.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        console.print(f"  {key}: {value}")


__all__ = [
    "checked_output",
    "console",
    "line",
    "new_table",
    "on",
    "print_json",
    "print_table",
    "progress_bar",
    "render_assumptions",
    "steps_json",
    "steps_table",
    "strong",
]
