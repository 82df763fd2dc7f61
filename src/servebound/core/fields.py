"""Result fields that document themselves: help text, unit and JSON name, written once on the field.

A result record declares each field with :func:`documented`; the JSON views (``report.py``) emit the
documented fields under their JSON names, and the manual's field tables (docs/) are generated from the same
metadata (``scripts/docs_fields.py``; ``tests/test_result_fields.py`` fails when they differ). A field
added without documentation fails that test too, so a new field is one line here plus a regenerated
table.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping
from dataclasses import MISSING
from enum import Enum
from typing import Any, ClassVar, TypeVar

T = TypeVar("T")

#: Fields that carry a result's inputs rather than a result (documented with the inputs, not here).
INPUT_FIELDS = frozenset({"hardware", "model", "workload", "assumptions"})


def documented(help: str, unit: str = "", *, json: str | None = "", default: Any = MISSING) -> Any:
    """A dataclass field with its documentation.

    ``help``: what the field is, in the derivation's symbols. ``unit``: ``tok/s``, ``bytes``, ``s`` ...
    (empty for counts of things named in the help, enums and flags). ``json``: the name in the JSON
    views; empty means the attribute's own name, None keeps the field out of the JSON views.
    """
    metadata = {"help": help, "unit": unit, "json": json}
    if default is MISSING:
        return dataclasses.field(metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def documented_property(
    help: str, unit: str = "", *, json: str | None = ""
) -> Callable[[Callable[[Any], T]], property]:
    """A read-only property of a result record documented like a field (and emitted in its JSON view)."""

    def wrap(getter: Callable[[Any], T]) -> property:
        getter.__field_doc__ = {"help": help, "unit": unit, "json": json}  # type: ignore[attr-defined]
        return property(getter)

    return wrap


@dataclasses.dataclass(frozen=True)
class FieldDoc:
    """One documented field: its attribute, its JSON name (None: not in JSON), help and unit."""

    attribute: str
    json: str | None
    help: str
    unit: str


_FIELD_DOCS: dict[type[Any], tuple[FieldDoc, ...]] = {}


def field_docs(record: type[Any]) -> tuple[FieldDoc, ...]:
    """The documented fields of a result record in declaration order, then its documented properties
    (read once per record type: every JSON answer walks them)."""
    known = _FIELD_DOCS.get(record)
    if known is None:
        known = _FIELD_DOCS[record] = _read_field_docs(record)
    return known


def _read_field_docs(record: type[Any]) -> tuple[FieldDoc, ...]:
    found: list[tuple[str, Mapping[str, Any]]] = [
        (item.name, item.metadata) for item in dataclasses.fields(record)
    ]
    properties: dict[str, property] = {}  # a subclass's property replaces its base's, in the base's place
    for klass in reversed(record.__mro__):
        properties.update((name, value) for name, value in vars(klass).items() if isinstance(value, property))
    found += [(name, getattr(value.fget, "__field_doc__", {})) for name, value in properties.items()]
    return tuple(
        FieldDoc(
            attribute=name,
            json=name if meta["json"] == "" else meta["json"],
            help=meta["help"],
            unit=meta["unit"],
        )
        for name, meta in found
        if "help" in meta
    )


def undocumented(record: type[Any]) -> list[str]:
    """Fields of a result record with no documentation (inputs excepted): each one is a bug."""
    return [
        item.name
        for item in dataclasses.fields(record)
        if "help" not in item.metadata and item.name not in INPUT_FIELDS
    ]


def json_value(value: Any) -> Any:
    """A field value as JSON: an enum by its value, a documented record as its JSON object."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple):
        return [json_value(item) for item in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and field_docs(type(value)):
        return documented_json(value)
    return value


def documented_json(record: Any) -> dict[str, Any]:
    """The documented fields of a record under their JSON names (the fields kept out of JSON skipped)."""
    return {
        doc.json: json_value(getattr(record, doc.attribute))
        for doc in field_docs(type(record))
        if doc.json is not None
    }


def markdown_table(record: type[Any]) -> str:
    """The manual's table of a record's JSON fields, generated from the field documentation."""
    lines = ["| field | unit | meaning |", "| --- | --- | --- |"]
    for doc in field_docs(record):
        if doc.json is not None:
            lines.append(f"| `{doc.json}` | {doc.unit} | {doc.help} |")
    return "\n".join(lines)


def _short(value: Any) -> str:
    """One value of a compact repr: an enum by its value, a float to 4 significant digits."""
    if isinstance(value, Enum):
        return repr(value.value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return repr(value)


def clean_json(value: Any) -> Any:
    """``value`` with every non-finite float replaced by None, through dicts, lists and tuples (the CLI's
    --json, the API and the static export never write NaN or Infinity)."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: clean_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clean_json(v) for v in value]
    return value


#: Each result record type's JSON view, by the record's qualified name (``module.Class``), registered
#: by the module that writes it (``json_view``).
_JSON_VIEWS: dict[str, Callable[[Any], dict[str, Any]]] = {}


def qualified_name(record: type) -> str:
    """``module.Class``: the key a record's JSON view is registered under."""
    return f"{record.__module__}.{record.__qualname__}"


def json_view(record: type | str, view: Callable[[Any], dict[str, Any]]) -> None:
    """Register ``view`` as the ``--json`` object of ``record``'s results (the views call this when
    they are imported: the core names no module of theirs). ``record`` is the class, or its qualified
    name where importing it would cost a command that never makes one (a decode, for prefill's)."""
    _JSON_VIEWS[record if isinstance(record, str) else qualified_name(record)] = view


class ResultRecord:
    """What a result record offers at the Python edge.

    ``to_dict()`` / ``to_json()`` give the same object its command prints with ``--json``. The JSON views
    are not the core's business (they live with the CLI's views), so a view registers itself for its
    record type (``json_view``) when its module is imported (``servebound.api`` imports them). ``repr``
    is compact: the hardware and model ids and the record's headline fields (``__repr_fields__``), not
    every nested input (a dataclass using it says ``repr=False``).
    """

    __repr_fields__: ClassVar[tuple[str, ...]] = ()

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` object of this result (strict JSON values: no NaN or infinity)."""
        view = _JSON_VIEWS.get(qualified_name(type(self)))
        if view is None:
            raise TypeError(
                f"{type(self).__name__} has no JSON view registered: import servebound.api (or the "
                "servebound.views module that writes it) first"
            )
        out: dict[str, Any] = clean_json(view(self))
        return out

    def to_json(self, *, indent: int | None = 2) -> str:
        """``to_dict()`` as JSON text: with the default indent, exactly what ``--json`` prints."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    def __repr__(self) -> str:
        parts = [
            f"{owner}={getattr(self, owner).id!r}"
            for owner in ("hardware", "model")
            if isinstance(getattr(getattr(self, owner, None), "id", None), str)
        ]
        parts += [f"{name}={_short(getattr(self, name))}" for name in self.__repr_fields__]
        return f"{type(self).__name__}({', '.join(parts)})"
