"""The schema of ``data/models.toml`` (pydantic), imported only where the index is validated: a
command answered from the catalog snapshot never builds it."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field


class ModelEntry(BaseModel):
    """One [[model]] entry of models.toml."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")]
    config: str
    hf_id: str
    hf_revision: str = ""
    copied_from: str = ""
    copied_from_commit: str = ""
    verification: str = ""
    sha256: str = ""
    name: str | None = None
    native_format: str | None = None
    formats: list[str]


class ModelIndex(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    model: list[ModelEntry]
