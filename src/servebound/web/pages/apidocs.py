"""The human API reference at ``/api``: rendered on the server from the app's own
``/openapi.json``, so it needs no outside script and cannot drift from the schema."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Param:
    name: str
    where: str
    required: bool
    kind: str
    description: str


@dataclass(frozen=True)
class Operation:
    method: str
    path: str
    summary: str
    description: str
    params: tuple[Param, ...]
    example: str


def _kind(schema: Mapping[str, Any]) -> str:
    if "type" in schema:
        return str(schema["type"])
    options = [str(s.get("type")) for s in schema.get("anyOf", []) if s.get("type") not in (None, "null")]
    return " or ".join(options) or "value"


def operations(spec: Mapping[str, Any]) -> list[Operation]:
    """Every GET operation of an OpenAPI document, in path order, with its query parameters."""
    out = []
    for path, methods in sorted(spec.get("paths", {}).items()):
        for method, op in methods.items():
            params = tuple(
                Param(
                    name=str(p.get("name", "")),
                    where=str(p.get("in", "")),
                    required=bool(p.get("required", False)),
                    kind=_kind(p.get("schema", {})),
                    description=str(p.get("description", "") or p.get("schema", {}).get("description", "")),
                )
                for p in op.get("parameters", [])
            )
            required = [p for p in params if p.required and p.where == "query"]
            example = path + ("?" + "&".join(f"{p.name}=…" for p in required) if required else "")
            out.append(
                Operation(
                    method=method.upper(),
                    path=path,
                    summary=str(op.get("summary", "")),
                    description=str(op.get("description", "")).strip(),
                    params=params,
                    example=example,
                )
            )
    return out
