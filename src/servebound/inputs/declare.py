"""How an input is declared and read: ``Input`` (its type, default, help, unit, bounds, choices and
names), ``given`` (a declared field of a record), the one grammar every surface parses a typed value
with (``Input.parse``: ``32k``, ``32,000``, ``32_000``), the edge bounds, and the checks a record of
declared fields runs when built (``check_record``). ``inputs.workload`` declares the workload's inputs
with it; ``inputs.records`` the commands' own records.
"""

from __future__ import annotations

import math
import re
import types
from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from typing import Any, Literal, Union, get_args, get_origin, get_type_hints

from servebound.errors import InputError

#: Where an input is taken: ``context`` by every command with a workload (rank and fit too),
#: ``serving`` (the engine and its cache allocation) by all of them but fit (which picks engines),
#: ``workload`` by
#: the ceiling commands (decode, prefill, cost, layout), ``roof`` by those with decode's compute roof
#: (decode, cost, layout), ``decode``, ``prefill`` and ``layout`` (one parallel layout) by their own.
Group = Literal["context", "serving", "workload", "roof", "decode", "prefill", "layout"]

#: Edge bounds far beyond any real machine or workload: past them the arithmetic would overflow, so a
#: value there is a typo, and an error says so.
MAX_EDGE_GB = 1e9
MAX_EDGE_TOKENS = 10**9
MAX_EDGE_TOK_S = 1e9
#: The site computes prompt-length ranges over every integer length, so it caps the reserved context.
MAX_SITE_CONTEXT_TOKENS = 2_000_000
#: A first-token budget: from 0.1 ms (no prefill is faster) to a day.
MIN_TTFT_S, MAX_TTFT_S = 1e-4, 86_400.0
#: gamma: no speculative decoder drafts more than a few dozen tokens a step.
MAX_DRAFT_TOKENS = 64

#: The one grammar of a number, as every surface reads it (``Input.parse``; the JSON API's query, the
#: CLI's flags, the pages' query strings and forms; calc.js's ``parseNumber`` mirrors it): digits with
#: ``,`` or ``_`` between groups (``32,000``, ``32_000``), a decimal part, an exponent (``1e3``: kept, as
#: the pages always took it). No ``inf``, ``nan``, hex or blank.
_DIGITS = r"[0-9]+(?:[,_][0-9]+)*"
_MANTISSA = rf"[+-]?(?:{_DIGITS}(?:\.[0-9]*)?|\.[0-9]+)"
NUMBER_PATTERN = rf"^\s*{_MANTISSA}(?:[eE][+-]?[0-9]+)?\s*$"
#: A token count also takes a decimal suffix, with no exponent: ``k`` or ``K`` = 10^3, ``M`` or ``m``
#: = 10^6 (``32k`` = 32,000, ``1.5k`` = 1,500, ``1M`` = 1,000,000); a whole number once scaled.
TOKENS_PATTERN = rf"^\s*(?:{_MANTISSA}(?:[eE][+-]?[0-9]+)?|{_MANTISSA}[kKmM])\s*$"
_SCALE = {"k": "e3", "K": "e3", "m": "e6", "M": "e6"}
#: What each token input's help says about its spellings.
TOKENS_SPELLING = "Tokens: 32000, 32,000, 32_000, 32k, 1.5k or 1M (k = 1,000, M = 1,000,000)."


@dataclass(frozen=True)
class Form:
    """An input's control on the pair page: range, number, text, select or check; its label (HTML);
    its step ("any": a number shown as %g); a slider's own ends where they differ from the bounds (else
    its top is the page's, per pair); whether a number states its top; a select's empty choice; whether
    the page's script finds it by id; a placeholder."""

    control: str
    label: str
    step: float | str = 1
    low: float | None = None
    top: float | None = None
    bounded: bool = True
    blank: str = "default"
    by_id: bool = False
    placeholder: str = ""


@dataclass(frozen=True)
class Input:
    """One declared input. ``name`` is the record's field, the API's parameter and the form's field.

    Its text is read by ``parse`` alone, on every surface: a number as ``NUMBER_PATTERN`` writes it
    (``32,000``, ``32_000``, ``0.5``, ``1e3``: an exponent is accepted everywhere), a token count also
    with a decimal ``k`` or ``M`` (``32k``, ``1.5k``, ``1M``; whole once scaled). The help of each token
    input says so (``TOKENS_SPELLING``); calc.js's ``parseNumber`` mirrors the grammar in the browser."""

    name: str
    kind: type  # int, float, str or bool: the value's type once parsed
    default: Any
    help: str
    groups: frozenset[str]
    unit: str = ""
    flags: tuple[str, ...] = ()  # the CLI's names, first the long one
    keyword: str = ""  # make_workload's keyword where it differs from name
    api_help: str = ""  # the OpenAPI description where shorter than help
    minimum: float | None = None
    exclusive_minimum: bool = False
    maximum: float | None = None
    site_maximum: float | None = None  # the site's own cap (it computes over every length)
    choices: tuple[str, ...] = ()
    words: tuple[str, ...] = ()  # words accepted besides a number (batch: "max")
    max_length: int | None = None
    help_in: tuple[tuple[str, str], ...] = ()  # a group's own help text, where the input differs there
    expects: str = ""  # what a value may be, where no list of choices says it (errors name it)
    form: Form | None = None  # the pair page's control for it, where the page has one

    def help_for(self, group: str) -> str:
        return self._spelled(dict(self.help_in).get(group, self.help))

    @property
    def tokens(self) -> bool:
        """A token count: its text may carry a k or M suffix (``TOKENS_PATTERN``)."""
        return self.unit == "tokens"

    def _spelled(self, text: str) -> str:
        return f"{text.rstrip('.')}. {TOKENS_SPELLING}" if self.tokens else text

    @property
    def pattern(self) -> str:
        """The grammar of this number's text (the JSON API's schema states it)."""
        return TOKENS_PATTERN if self.tokens else NUMBER_PATTERN

    @property
    def flag(self) -> str:
        return self.flags[0]

    @property
    def python(self) -> str:
        return self.keyword or self.name

    @property
    def description(self) -> str:
        return self._spelled(self.api_help or self.help)

    def check(self, value: Any, *, site: bool = False) -> Any:
        """``value`` if it is of this input's type and within its bounds, else an InputError naming it."""
        if value is None or (isinstance(value, str) and value in self.words):
            return value
        if self.kind is bool:
            if not isinstance(value, bool):
                raise InputError(self.name, f"must be true or false (got {value!r})")
            return value
        if self.kind is str:
            return self._check_text(value)
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or (self.kind is int and not float(value).is_integer()) or not math.isfinite(value):
            raise self._not_a_number(value, "a finite number")
        low, top = self.minimum, self.maximum
        if low is not None and (value < low or (self.exclusive_minimum and value <= low)):
            sign = ">" if self.exclusive_minimum else ">="
            raise InputError(self.name, f"must be {sign} {low:g} (got {_shown(value)})")
        if top is not None and value > top:
            raise InputError(self.name, f"{_shown(value)} is beyond any real setting; at most {_shown(top)}")
        if site and self.site_maximum is not None and value > self.site_maximum:
            raise InputError(
                self.name,
                f"the site computes up to {_shown(self.site_maximum)} (got {_shown(value)}); use the CLI beyond",
            )
        return int(value) if self.kind is int else float(value)

    def _check_text(self, value: Any) -> str:
        if not isinstance(value, str) or not value.strip():
            raise InputError(self.name, f"give a value (got {value!r})" + self._choice_text())
        if self.choices and value not in self.choices:
            raise InputError(
                self.name, f"unknown value {value!r}{close_match(value, self.choices)}" + self._choice_text()
            )
        if self.max_length is not None and len(value) > self.max_length:
            raise InputError(self.name, f"at most {self.max_length} characters (got {len(value):,})")
        return value

    def _not_a_number(self, got: Any, what: str) -> InputError:
        """``got`` is no value of this number (``what`` words a float's kind), nor one of its words."""
        extra = f" or {' or '.join(repr(w) for w in self.words)}" if self.words else ""
        return InputError(
            self.name, f"must be {'a whole number' if self.kind is int else what}{extra} (got {got!r})"
        )

    def _choice_text(self) -> str:
        if self.expects:
            return f"; use {self.expects}"
        return f"; use one of {', '.join(self.choices)}" if self.choices else ""

    def parse(self, text: str, *, site: bool = False) -> Any:
        """A query string's, a form's or a flag's text as this input's value, checked: the one parser of
        a typed value. A number follows ``NUMBER_PATTERN`` (``32,000``, ``32_000``, ``1e3``, ``0.5``); a
        token count ``TOKENS_PATTERN`` too (``32k``, ``1.5k``, ``1M``: decimal, a whole number once
        scaled); anything else is an InputError naming the input and the spellings it takes."""
        text = text.strip()
        if text.lower() in self.words:
            return text.lower()
        if self.kind is bool:
            if text.lower() in ("true", "1", "yes", "on"):
                return True
            if text.lower() in ("false", "0", "no", "off"):
                return False
            raise InputError(self.name, f"must be true or false (got {text!r})")
        if self.kind is str:
            return self.check(text, site=site)
        if "," in text and not _THOUSANDS.match(text):
            raise InputError(
                self.name,
                f"{text!r}: a comma may only separate thousands (1,000,000); give one number "
                "without it (5,5 is not 55)",
            )
        if not re.fullmatch(self.pattern, text):
            error = self._not_a_number(text, "a number")
            spelling = f"; {TOKENS_SPELLING}" if self.tokens else ""
            raise InputError(self.name, f"{error.problem}{spelling}") from None
        plain = text.replace(",", "").replace("_", "")
        value = float(plain[:-1] + _SCALE[plain[-1]] if plain[-1] in _SCALE else plain)
        if self.kind is int and math.isfinite(value) and value.is_integer():
            return self.check(int(value), site=site)
        return self.check(value, site=site)


#: A number written with thousands separators: 1,000 or 12,345,678.5 (never 5,5 or 1,00).
_THOUSANDS = re.compile(r"^[+-]?\d{1,3}(,\d{3})+(\.\d*)?([eE][+-]?\d+)?$")


def _shown(value: float) -> str:
    """A bound or a value as an error prints it: whole numbers with thousands separators."""
    if isinstance(value, int) or (abs(value) < 1e18 and float(value).is_integer()):
        return f"{int(value):,}" if abs(value) < 1e18 else f"{value:.3g}"
    return f"{value:g}"


def given(default: Any, help: str, *groups: Group, **meta: Any) -> Any:
    """A declared input's dataclass field: its default, help and groups, then ``Input``'s other fields."""
    return field(default=default, metadata={"input": {"help": help, "groups": frozenset(groups), **meta}})


def record_inputs(record: type) -> tuple[Input, ...]:
    """The inputs a record of declared fields states (a frozen dataclass whose fields are ``given(default,
    help, flags=(...), minimum=..., ...)``), each field's type the value's once parsed. Every surface
    that takes the record (the CLI's options, the API's parameters, Python's keywords) checks these."""
    found = _RECORDS.get(record)
    if found is None:
        hints = get_type_hints(record)
        out = []
        for f in fields(record):
            meta = dict(f.metadata.get("input", {}))
            if not meta:
                continue
            meta.pop("groups", None)
            flags = meta.pop("flags", (f"--{f.name.replace('_', '-')}",))
            out.append(
                Input(
                    f.name,
                    _kind(hints[f.name]),
                    f.default,
                    meta.pop("help"),
                    frozenset(),
                    flags=flags,
                    **meta,
                )
            )
        found = _RECORDS[record] = tuple(out)
    return found


_RECORDS: dict[type, tuple[Input, ...]] = {}


def check_record(record: Any) -> None:
    """Each declared field of ``record`` within its bounds (an InputError naming the first that is not):
    a record's ``__post_init__`` calls this, so a value built in Python meets the CLI's and API's check."""
    for spec in record_inputs(type(record)):
        spec.check(getattr(record, spec.name))


def _kind(hint: Any) -> type:
    """int, float, str or bool: the one non-None type of ``hint`` (``int | str | None`` is int: a number
    or a word)."""
    if get_origin(hint) in (Union, types.UnionType):
        args = [a for a in get_args(hint) if a is not type(None)]
        return int if int in args else args[0]
    return hint  # type: ignore[no-any-return]


def token_count(name: str, help: str, text: str | int, *, site: bool = False) -> int:
    """A command's own token count (cost's, rank's and plan's ``--prompt``, plan's ``--output-tokens``,
    the same names on the API) read in the one grammar, with the declared token inputs' bounds:
    ``32k``, ``32,000`` as for ``--read-context`` (``site``: within the site's cap, on the API)."""
    spec = Input(
        name,
        int,
        None,
        help,
        frozenset(),
        unit="tokens",
        minimum=1,
        maximum=MAX_EDGE_TOKENS,
        site_maximum=MAX_SITE_CONTEXT_TOKENS,
    )
    value: int = spec.parse(text, site=site) if isinstance(text, str) else spec.check(text, site=site)
    return value


def close_match(word: str, names: Iterable[str]) -> str:
    """'; did you mean X?' for the nearest of ``names``, or '' when none is close."""
    import difflib  # only on an error: not part of a command's start-up

    found = difflib.get_close_matches(word, list(names), n=1, cutoff=0.6)
    return f"; did you mean {found[0]}?" if found else ""


def unknown(name: str, known: Iterable[str], what: str = "parameter") -> InputError:
    """The error for a name no surface declares, with the close match."""
    names = sorted(set(known))
    hint = close_match(name, names) or f"; known: {', '.join(names)}"
    return InputError(name, f"unknown {what}{hint}")
