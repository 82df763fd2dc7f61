"""The JSON Schema of each command's ``--json`` output, as pydantic models.

Decode's and prefill's fields come from their result records' documentation (``core/fields.py``): the
JSON name, the type from the annotation, the help and unit as the description, so a field added to a
record is in its schema too. Cost, layout and plan name their own fields around those. Objects allow
fields beyond the ones named (the contract adds fields freely). ``servebound schema COMMAND`` prints a
schema; /openapi.json documents each endpoint's answer with the same model.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from functools import cache
from typing import Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, create_model

from servebound.core.decode import DecodeResult
from servebound.core.fields import field_docs
from servebound.core.prefill import PrefillResult
from servebound.errors import InputError


class Open(BaseModel):
    """An object of the output: its named fields typed, any other field allowed."""

    model_config = ConfigDict(extra="allow")


def _type(annotation: Any, nullable: bool, within: type | None = None) -> Any:
    """A record field's annotation as the type its JSON value has (a record holding a record of its own
    type, ``within``, holds an open object there: a schema cannot nest itself)."""
    if get_origin(annotation) in (Union, types.UnionType):
        members = [a for a in get_args(annotation) if a is not type(None)]
        inner = _type(members[0], False, within) if len(members) == 1 else Any
        return inner | None
    if annotation is within and within is not None:
        kind: Any = dict[str, Any]
    elif isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        kind = Literal[tuple(m.value for m in annotation)]
    elif isinstance(annotation, type) and dataclasses.is_dataclass(annotation) and field_docs(annotation):
        kind = record_model(annotation)
    elif get_origin(annotation) is tuple:
        kind = list[Any]
    elif annotation in (int, float, bool, str):
        kind = annotation
    else:
        kind = Any
    return kind | None if nullable else kind


@cache
def record_model(record: type, *, nullable: bool = False, name: str | None = None) -> type[Open]:
    """The JSON object of a documented result record (``documented_json``): every documented field under
    its JSON name; ``nullable`` makes every field nullable (where a view nulls them)."""
    hints = typing.get_type_hints(record)
    for prop in vars(record).values():  # documented properties: their getters' return annotations
        if isinstance(prop, property) and hasattr(prop.fget, "__field_doc__"):
            hints[prop.fget.__name__] = typing.get_type_hints(prop.fget)["return"]  # type: ignore[union-attr]
    fields: dict[str, Any] = {}
    for doc in field_docs(record):
        if doc.json is None:
            continue
        text = doc.help + (f" ({doc.unit})" if doc.unit else "")
        fields[doc.json] = (_type(hints[doc.attribute], nullable, record), Field(description=text))
    model: type[Open] = create_model(name or record.__name__, __base__=Open, **fields)
    return model


DecodeVerdict = Literal["floor_fit", "no_floor", "no_session_fit", "no_resident_fit"]


class Named(Open):
    id: str | None
    name: str | None


class NoteSetting(Open):
    """One input a note names, as a record beside the note's sentence (``servebound.core.advice``)."""

    input: str = Field(
        description="the declared input: the API's query parameter and the CLI's flag without --"
    )
    value: Any = Field(
        description="the value that would do what the note says; null where the note names the input only"
    )
    with_: dict[str, Any] = Field(
        alias="with", description="the inputs that change with it for the setting to be valid, by name"
    )
    effect: str | None = Field(
        description="what the setting would change, with the numbers (null: none said)"
    )
    note: int = Field(description="the index in notes of the sentence that names it")


#: The notes' fields of every answer that has notes.
NOTE_FIELDS: dict[str, Any] = {
    "notes": (list[str], Field(description="sentences; the inputs they name spelt as query parameters")),
    "note_settings": (list[NoteSetting], Field(description="each input a note names, as a record")),
}


def decode_output() -> type[Open]:
    base = record_model(DecodeResult, name="DecodeFields")
    return create_model(
        "DecodeOutput",
        __base__=base,
        verdict=(DecodeVerdict, ...),
        hardware=(Named, ...),
        model=(Named, ...),
        decode_compute=(dict[str, Any], ...),
        remedies=(dict[str, Any], ...),
        **NOTE_FIELDS,
        assumptions=(dict[str, Any], ...),
    )


def prefill_output() -> type[Open]:
    # rates and times are null where nothing fits (no wait to show)
    base = record_model(PrefillResult, nullable=True, name="PrefillFields")
    return create_model(
        "PrefillOutput",
        __base__=base,
        verdict=(str, ...),
        hardware=(Named, ...),
        model=(Named, ...),
        assumptions=(dict[str, Any], ...),
    )


class CostPoint(Open):
    batch: int
    step_time_s: float
    tok_s: float
    per_session_tok_s: float
    bound_by: str
    usd_per_mtok_output: float
    fits_in_memory: bool


class CostOutput(Open):
    """``servebound cost --json``: the cost of output tokens over batch, priced."""

    hardware: Named
    model: Named
    verdict: str
    points: list[CostPoint]
    balance_batch: int | None
    batch_star: int | None
    batch_mem: int | None
    usd_per_hour: float
    price_source: str | None
    notes: list[str] = Field(description="sentences; the inputs they name spelt as query parameters")
    note_settings: list[NoteSetting] = Field(description="each input a note names, as a record")
    assumptions: dict[str, Any]


class LayoutEntry(Open):
    layout: dict[str, Any]
    verdict: str
    batch_star: int | None
    sessions: int | None
    aggregate_tok_s: float | None
    per_session_tok_s: float | None


class LayoutOutput(Open):
    """``servebound layout --json``: every valid layout of a system for a model, best first."""

    system: dict[str, Any]
    model: str
    layouts: list[LayoutEntry]
    assumptions: dict[str, Any]


class Served(Open):
    sessions_per_system: float
    batch: int
    per_session_tok_s: float
    clears_floor: bool


class PlanOutput(Open):
    """``servebound plan --json``: the fleet a stated traffic needs."""

    system: dict[str, Any]
    layout: LayoutEntry
    prompt_tokens: int
    output_tokens: int
    request_rate_per_s: float
    concurrent_sessions: float
    served: Served | None
    output_tok_s: float
    prefill_tok_s: float
    ttft_s: float
    ttft_ok: bool | None
    pools: dict[str, Any]
    steps: list[dict[str, Any]]
    price_source: str | None
    assumptions: dict[str, Any]


#: Each command's output model (built on first use).
OUTPUTS: dict[str, Any] = {
    "decode": decode_output,
    "prefill": prefill_output,
    "cost": lambda: CostOutput,
    "layout": lambda: LayoutOutput,
    "plan": lambda: PlanOutput,
}


@cache
def output_model(command: str) -> type[Open]:
    """The pydantic model of ``command``'s --json output."""
    if command not in OUTPUTS:
        raise InputError("command", f"no schema for {command!r}; use one of {', '.join(OUTPUTS)}")
    model: type[Open] = OUTPUTS[command]()
    return model


def json_schema(command: str) -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``command``'s --json output."""
    schema = output_model(command).model_json_schema()
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        **schema,
        "title": f"servebound {command} --json",
    }
