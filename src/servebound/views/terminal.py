"""Text a terminal shows as written: control characters from names and files made visible.

A GGUF architecture or a TOML name may hold escape sequences that clear a screen or retitle a window;
every human output (the CLI's lines and tables, the site's markdown mirrors) passes them through
:func:`visible`, which writes each as a ``\\xNN`` escape.
"""

from __future__ import annotations

import re
from typing import Any

#: C0 controls but newline and tab, DEL and the C1 controls: what a terminal acts on instead of printing.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """``text`` with every terminal control character written as a visible ``\\xNN`` escape."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


#: Every C0 and C1 control (newline and tab too) and the Unicode line and paragraph separators: what
#: must not break a name (a one-line field) across lines.
_ANY_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def one_line(text: str) -> str:
    """A name as one line: every control character, newline and tab included, written as ``\\xNN``
    (a name with a newline could otherwise forge a line of output)."""
    return _ANY_CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def visible_value(value: Any) -> Any:
    """:func:`visible` for strings, anything else unchanged (a template's finalize hook). A str
    subclass keeps its type, so markup already marked safe is not escaped a second time."""
    if not isinstance(value, str) or not _CONTROL.search(value):
        return value
    return type(value)(visible(value))


__all__ = ["one_line", "visible", "visible_value"]
