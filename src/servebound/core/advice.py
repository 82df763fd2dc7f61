"""Notes and remedies as records: a sentence's words and the inputs it names, rendered per surface.

A sentence that sends the reader to an input never spells the input the way one surface does. It names
it as a ``Setting``: the declared input (``servebound.inputs.workload.INPUTS``' name, or ``hardware`` /
``model`` and a command's own options), the value that would do what the note says, and the inputs
that change with it. Each surface renders the same record:

- the terminal as a flag: ``--alloc-context 94,978`` (``Note.terminal``);
- the JSON API (and ``--json``, which is the same object) as a query parameter: ``alloc_context=94978``
  (``Note.api``);
- a page as words with a link that sets the form's field to the value (``servebound.web.pages.words``).

A ``Note`` is the sentence: its words and settings in order, and what the settings would change
(``effect``, e.g. "one session fits at up to 94,978 reserved tokens"). ``InputError`` carries one too,
so an error's remedy is spelt per surface the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

#: A setting's value: a token count, a size, a rate, a word (``fp8``) or a switch.
Value = int | float | str | bool


@dataclass(frozen=True)
class Setting:
    """One input at one value, as a note proposes it.

    ``input`` is the declared input's name (``alloc_context``, ``overhead_gb``, ``kv_precision``, ...),
    which is also the API's parameter and the page form's field; ``value`` is the value that would do
    what the note says, or None where the note names the input and leaves the value to the reader
    (``placeholder`` then stands for it: ``G``, ``HOST``); ``also`` are the inputs that must change with
    it for the setting to be valid (a smaller reservation lowers the read context with it)."""

    input: str
    value: Value | None = None
    placeholder: str = ""
    also: tuple[Setting, ...] = ()

    def each(self) -> Iterator[Setting]:
        """This setting and the ones that go with it, in order."""
        yield self
        for other in self.also:
            yield from other.each()

    def json(self) -> dict[str, object]:
        """The structured record a JSON answer carries beside its sentence."""
        return {
            "input": self.input,
            "value": self.value,
            "with": {s.input: s.value for s in self.also},
        }


#: A part of a sentence: its words, or an input it names.
Part = str | Setting


@dataclass(frozen=True)
class Note:
    """A sentence made of words and the settings it names, with what the settings would change.

    ``effect`` is empty for a note that only explains (a verdict, a reading); for a remedy it says what
    the change would do, with the numbers."""

    parts: tuple[Part, ...]
    effect: str = ""

    @classmethod
    def of(cls, *parts: Part, effect: str = "") -> Note:
        return cls(tuple(p for p in parts if p != ""), effect)

    @property
    def settings(self) -> tuple[Setting, ...]:
        """The settings the sentence names, in order."""
        return tuple(p for p in self.parts if isinstance(p, Setting))

    def render(self, spell: Callable[[Setting], str]) -> str:
        """The sentence with each setting spelt by ``spell``."""
        return "".join(p if isinstance(p, str) else spell(p) for p in self.parts)

    @property
    def terminal(self) -> str:
        """As the terminal prints it: settings as flags."""
        return self.render(flag)

    @property
    def api(self) -> str:
        """As the JSON API (and ``--json``) writes it: settings as query parameters."""
        return self.render(parameter)

    def json(self) -> list[dict[str, object]]:
        """Each setting as a structured record, with the note's effect."""
        return [{**s.json(), "effect": self.effect or None} for s in self.settings]


def listed(*settings: Setting, last: str = " or ") -> tuple[Part, ...]:
    """Settings as a list in a sentence: ``a, b or c``."""
    parts: list[Part] = []
    for i, s in enumerate(settings):
        if i:
            parts.append(last if i == len(settings) - 1 else ", ")
        parts.append(s)
    return tuple(parts)


def flag_name(name: str) -> str:
    """An input's flag on the command line: ``alloc_context`` is ``--alloc-context``."""
    return "--" + name.replace("_", "-")


def shown_value(value: Value, *, grouped: bool) -> str:
    """A value as a flag or a parameter takes it: whole numbers with thousands separators where
    ``grouped`` (the terminal), floats as %g, switches as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return f"{value:,}" if grouped else str(value)
    if isinstance(value, float):
        return f"{value:g}"
    return value


def flag(setting: Setting) -> str:
    """``--alloc-context 94,978`` (and its companions); a switch alone: ``--cpu-moe``."""
    out = []
    for s in setting.each():
        name = flag_name(s.input)
        if s.value is True or (s.value is None and not s.placeholder):
            out.append(name)
        else:
            value = s.placeholder if s.value is None else shown_value(s.value, grouped=True)
            out.append(f"{name} {value}")
    return " ".join(out)


def parameter(setting: Setting) -> str:
    """``alloc_context=94978`` (companions joined by ``&``, as a query string); named alone:
    ``host_memory_gb=G`` with its placeholder, or ``cpu_moe=true`` for a switch."""
    out = []
    for s in setting.each():
        if s.value is None:
            out.append(f"{s.input}={s.placeholder}" if s.placeholder else s.input)
        else:
            out.append(f"{s.input}={shown_value(s.value, grouped=False)}")
    return "&".join(out)
