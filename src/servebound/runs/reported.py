"""The reported-run catalog: ``catalog/data/reported_runs.toml`` and the model files its runs use.

The file holds measurements others published, each with its source (a URL and the quoted figure),
engine and version, quantization, context (read vs allocated), concurrency and metric definition. A run
above its ceiling stays in the data with an ``explanation`` of why (the file is rejected without one).

Models: a catalog profile id naming the file that was run (Llama 2 7B's llama.cpp file types are
``llama-2-7b-q4_0``, ``-q8_0``, ...; ggml-org's gpt-oss GGUFs are ``gpt-oss-20b-mxfp4_moe``), or a model file.
"""

from __future__ import annotations

from functools import cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from servebound.errors import InputError
from servebound.inputs import bounded
from servebound.inputs.files import validation_to_input_error
from servebound.runs import reported_runs_text
from servebound.runs.measured import Metric


class OffloadEntry(BaseModel):
    """A run's weights in host RAM (llama.cpp's --cpu-moe, --n-cpu-moe N, -ngl N) and the host's memory:
    the same names as the CLI's offload flags (``servebound.catalog.hosts.offload_spec`` checks them)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    cpu_moe: bool = False
    n_cpu_moe: int | None = Field(default=None, ge=0)
    gpu_layers: int | None = Field(default=None, ge=0)
    host: str | None = None
    host_memory_gb: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    host_bandwidth_gb_per_s: float | None = Field(default=None, gt=0, allow_inf_nan=False)


class ReportedRunEntry(BaseModel):
    """One ``[[run]]`` of reported_runs.toml (every key is checked; unknown keys are errors)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    id: Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")]
    hardware: str = Field(min_length=1)
    model: str = Field(min_length=1)
    engine: str = Field(min_length=1)
    engine_version: str = Field(min_length=1)
    quantization: str = Field(min_length=1)
    metric: Metric
    measured: float = Field(gt=0, allow_inf_nan=False)
    concurrency: int = Field(default=1, ge=1)
    read_context: int | None = Field(default=None, ge=1)
    alloc_context: int | None = Field(default=None, ge=1)
    prompt_tokens: int | None = Field(default=None, ge=1)
    chunk_tokens: int | None = Field(default=None, ge=1)
    kv_precision: str | None = None
    linear_mode: str | None = None
    attention_mode: str | None = None
    expert_traffic: Literal["expected", "minimum"] = "expected"
    metric_definition: str = Field(min_length=1)
    context_definition: str = Field(min_length=1)
    source_url: str = Field(pattern=r"^(https?://|doc:)")
    source_quote: str = Field(min_length=1)
    source_kind: Literal["primary", "secondary", "unverified"]
    explanation: str | None = None
    notes: str = ""
    #: A multi-device run's parallel layout (``tp=2`` for vLLM tensor parallel, ``pp=2`` for llama.cpp's
    #: layer split): the ceiling is then the layout's, with the system's link charged.
    layout: str | None = None
    #: Weights in host RAM during the run (the ceiling is then the two-tier one of ``core.offload``).
    offload: OffloadEntry | None = None
    #: The engine's cache allocation, where it pages (vLLM, SGLang): only the memory-fit note uses it.
    kv_allocation: Literal["reserved", "paged"] | None = None

    def workload_options(self) -> tuple[tuple[str, object], ...]:
        """The make_workload options the run's setting adds (offload, cache allocation)."""
        options: dict[str, object] = {}
        if self.offload is not None:
            options.update(self.offload.model_dump(exclude_none=True))
        if self.kv_allocation is not None:
            options["kv_allocation"] = self.kv_allocation
        return tuple(options.items())

    @model_validator(mode="after")
    def _setting_matches_metric(self) -> ReportedRunEntry:
        decode = self.metric in (Metric.PER_SESSION_TOK_S, Metric.AGGREGATE_TOK_S)
        if decode and self.read_context is None:
            raise ValueError("a decode run needs read_context (the mean context each step reads)")
        if not decode and self.prompt_tokens is None:
            raise ValueError("a prefill or TTFT run needs prompt_tokens")
        if self.layout is not None and not decode:
            raise ValueError("a layout is checked for decode runs only")
        return self


class ReportedRunsFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    run: list[ReportedRunEntry]


def parse_reported_runs(
    data: dict[str, Any], origin: str = "reported_runs.toml"
) -> tuple[ReportedRunEntry, ...]:
    """Validate a reported-runs document: schema, unique ids. InputError names the run and field."""
    try:
        parsed = ReportedRunsFile.model_validate(data)
    except ValidationError as exc:
        error = validation_to_input_error(exc, f"{origin}: ")
        runs = data.get("run")
        loc = exc.errors(include_url=False)[0].get("loc", ())
        if isinstance(runs, list) and len(loc) > 1 and isinstance(loc[1], int) and loc[1] < len(runs):
            raw = runs[loc[1]]
            if isinstance(raw, dict) and "id" in raw:
                raise InputError(error.field, f"{error.problem} (run id {raw['id']!r})") from None
        raise error from None
    seen: set[str] = set()
    for entry in parsed.run:
        if entry.id in seen:
            raise InputError(f"{origin}: run.id", f"duplicate id {entry.id!r}")
        seen.add(entry.id)
    return tuple(parsed.run)


@cache
def load_reported_runs() -> tuple[ReportedRunEntry, ...]:
    """The shipped reported runs, validated once."""
    return parse_reported_runs(bounded.parse_toml(reported_runs_text(), "reported_runs.toml"))
