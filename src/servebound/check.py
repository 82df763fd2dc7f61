"""Check a measured run against its ceiling: efficiency = measured / ceiling for the same setting.

A run is what someone measured (an engine's decode or prefill rate at a concurrency, context and
prompt length). :func:`check_run` evaluates the derivation's ceiling for exactly that setting (decode
at the forced batch b = concurrency and the run's read context; prefill at the run's prompt length,
batch and chunk) and divides. An efficiency above 1 means the inputs do not describe the run: the
report says so loudly instead of printing a number above 100 % as if it were an achievement.

Result files are readers at the edge: :func:`read_llama_bench` (``llama-bench -o json``, also
``jsonl``), :func:`read_vllm_bench` (``vllm bench serve --save-result``) and :func:`read_result_file`
(either, sniffed). Neither file carries the machine's bandwidth, so the hardware is always named by the
caller (a catalog id or a hardware file, such as one ``servebound measure`` wrote).

Metric definitions, mapped honestly:

* llama-bench ``tg<N>`` (n_gen = N, n_prompt = 0): one session generating N tokens after ``n_depth``
  cached tokens; ``avg_ts`` is N / time. Per-session decode at batch 1; each step reads the cache it
  has so far (d+1 ... d+N tokens), so the read context is the mean d + (N+1)/2, rounded down (exact
  for full-attention caches, where K_read is linear in L; rounding down keeps it a ceiling).
* llama-bench ``pp<N>`` (n_prompt = N, n_gen = 0): one prompt of N tokens, batch 1, pushed through in
  micro-batches of ``n_ubatch`` tokens (the chunk). ``avg_ts`` is N / time. At ``n_depth`` d > 0 the
  prompt follows d cached tokens; the ceiling is evaluated without that prefix, which only raises it
  (less attention work, no cache reread), so it stays a ceiling, a looser one.
* llama-bench ``pg`` records (both n_prompt and n_gen) mix the two phases in one rate and are skipped.
* vLLM ``mean_tpot_ms``: per request (latency - TTFT) / (output tokens - 1), averaged over requests;
  1000 / TPOT is a per-session decode rate. ITL (the gap between streamed chunks) is not used: with
  multi-token chunks or speculative decoding it is not a per-token time.
* vLLM ``output_throughput``: output tokens / benchmark duration, the aggregate decode rate. It
  includes prefill time and the ramp, so it sits further below the decode ceiling than TPOT does.
* vLLM ``mean_ttft_ms``: the wait before the first token, queueing and prefill of other requests
  included. No request can wait less than its own prompt's prefill at batch 1, so the prefill rate
  L / TTFT is checked against the batch-1 prefill ceiling.
* vLLM concurrency: ``max_concurrency`` when set; otherwise the mean number of requests in flight by
  Little's law (completed x mean E2E latency / duration), stated as derived.
"""

from __future__ import annotations

import math
import shlex
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from servebound import bounded
from servebound.api import decode, load_hardware, load_model, make_workload
from servebound.core.decode import DecodeResult
from servebound.core.formats import KV_FORMATS
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.prefill import PrefillResult, prefill
from servebound.core.units import GB
from servebound.errors import InputError
from servebound.files import validation_to_input_error

#: Result files are read whole; a llama-bench or vLLM result is kilobytes (megabytes with details).
MAX_RESULT_FILE_BYTES = 64 * 2**20

#: Efficiency above this is reported as above the ceiling (one part in a million absorbs rounding).
ABOVE_CEILING_TOLERANCE = 1e-6

#: What a run above its ceiling means, printed with every such run.
ABOVE_CEILING_MEANING = (
    "the run is faster than the ceiling allows, so the inputs do not describe the run: "
    "check the bandwidth (a spec or measured figure below what the device delivers), the weight "
    "quantization and KV precision (fewer bytes swept than the model profile says), the context "
    "(a shorter read context than stated), a prefix-cache hit (a prompt served from cache), "
    "speculative decoding or multi-token prediction (more than one token per step), or a compute "
    "rate missing the arithmetic mode the engine used"
)

#: llama.cpp cache type names (-ctk/-ctv) to servebound's KV format names.
_LLAMA_CACHE_TYPES = {"f32": "fp32", "f16": "fp16", "bf16": "bf16", "q8_0": "q8_0", "q4_0": "q4_0"}


class Phase(StrEnum):
    """Which ceiling a run is checked against."""

    DECODE = "decode"
    PREFILL = "prefill"


class Metric(StrEnum):
    """What the measured figure is.

    ``per_session_tok_s``: decode tokens per second of one session (llama-bench tg, 1000 / TPOT).
    ``aggregate_tok_s``: decode tokens per second summed over the concurrent sessions.
    ``prefill_tok_s``: prompt tokens per second over the batch (b L / prefill time).
    ``ttft_s``: time to first token in seconds for one prompt of ``prompt_tokens``.
    """

    PER_SESSION_TOK_S = "per_session_tok_s"
    AGGREGATE_TOK_S = "aggregate_tok_s"
    PREFILL_TOK_S = "prefill_tok_s"
    TTFT_S = "ttft_s"


_PHASE_OF = {
    Metric.PER_SESSION_TOK_S: Phase.DECODE,
    Metric.AGGREGATE_TOK_S: Phase.DECODE,
    Metric.PREFILL_TOK_S: Phase.PREFILL,
    Metric.TTFT_S: Phase.PREFILL,
}


@dataclass(frozen=True)
class MeasuredRun:
    """One measured figure with the setting it was measured at.

    ``value`` is in the metric's unit (tok/s, or seconds for ``ttft_s``). ``concurrency`` is the
    number of sessions decoding together (the forced batch), or prompts prefilled together for
    ``prefill_tok_s``. Decode runs need ``read_context_tokens`` (the mean context each step reads);
    ``alloc_context_tokens`` is the per-session reservation (only the memory-fit note uses it).
    Prefill runs need ``prompt_tokens``; ``chunk_tokens`` is the engine's micro-batch (None: one shot)
    and ``prefix_tokens`` a cached prefix the ceiling leaves out (which only raises it).
    ``kv_precision`` rescales the model's cache when the run used another cache type;
    ``linear_mode`` / ``attention_mode`` pick the hardware rates for prefill. The rest describes
    where the figure came from and how to reproduce it.
    """

    metric: Metric
    value: float
    concurrency: int = 1
    read_context_tokens: int | None = None
    alloc_context_tokens: int | None = None
    prompt_tokens: int | None = None
    chunk_tokens: int | None = None
    prefix_tokens: int = 0
    kv_precision: str | None = None
    linear_mode: str | None = None
    attention_mode: str | None = None
    #: Expert traffic the decode ceiling charges (``expected`` or ``minimum``): ``minimum`` for runs whose
    #: sessions all route alike (llama-batched-bench feeds every sequence the same token).
    expert_traffic: str = "expected"
    engine: str = "unspecified"
    engine_version: str | None = None
    label: str = ""
    metric_definition: str = ""
    concurrency_definition: str = "given"
    source: str = "plain values"
    model_label: str | None = None
    model_file_bytes: float | None = None
    command: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def phase(self) -> Phase:
        return _PHASE_OF[self.metric]

    @property
    def measured_tok_per_s(self) -> float:
        """The figure as a rate comparable with the ceiling of the same kind.

        Per-session and aggregate decode rates and prefill rates are themselves; a TTFT becomes the
        prompt's prefill rate L / TTFT (compared with the batch-1 prefill ceiling).
        """
        if self.metric is Metric.TTFT_S:
            assert self.prompt_tokens is not None
            return self.prompt_tokens / self.value
        return self.value


@dataclass(frozen=True)
class RunCheck:
    """A run next to its ceiling.

    ``ceiling_tok_per_s`` is the ceiling of the same kind as ``measured_tok_per_s`` (per-session
    decode, aggregate decode, or prefill over the batch); ``efficiency`` is their ratio and
    ``above_ceiling`` is True when it exceeds 1 (see :data:`ABOVE_CEILING_MEANING`). ``reading`` is
    ``bound`` with vendor peak rates and minimum traffic, ``estimate`` otherwise (measured rates,
    expected expert routing). ``bound_by`` names the prefill roofline that set the ceiling (``memory``
    for decode). ``fits_memory`` is whether the stated setting fits the hardware with ``overhead_bytes``
    (a run that ran but does not fit here is another sign the inputs are off). ``warnings`` list every
    substitution made and every reason to doubt the comparison.
    """

    run: MeasuredRun
    hardware: Hardware
    model: ModelAdapter
    overhead_bytes: float
    ceiling_tok_per_s: float
    measured_tok_per_s: float
    efficiency: float
    above_ceiling: bool
    fits_memory: bool
    reading: str
    bound_by: str
    decode: DecodeResult | None = None
    prefill: PrefillResult | None = None
    warnings: tuple[str, ...] = ()

    @property
    def ceiling_time_s(self) -> float | None:
        """For a TTFT: the shortest possible time to first token (t_pf,min at batch 1)."""
        return self.prefill.time_s if self.prefill is not None and self.run.metric is Metric.TTFT_S else None


# --- building runs from plain values ------------------------------------------------------------------


def _positive_int(field: str, value: object, *, minimum: int = 1) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise InputError(field, f"must be a whole number >= {minimum} (got {value!r})")
    return value


def _positive(field: str, value: object) -> float:
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise InputError(field, f"must be a positive finite number (got {value!r})")
    return float(value)


def make_run(
    metric: str | Metric,
    value: float,
    *,
    concurrency: int = 1,
    read_context: int | None = None,
    alloc_context: int | None = None,
    prompt_tokens: int | None = None,
    chunk_tokens: int | None = None,
    kv_precision: str | None = None,
    linear_mode: str | None = None,
    attention_mode: str | None = None,
    engine: str = "unspecified",
    engine_version: str | None = None,
) -> MeasuredRun:
    """A validated run from plain values (what ``servebound check`` builds from its flags).

    Decode metrics need ``read_context`` (alloc defaults to it); prefill metrics need
    ``prompt_tokens``. A TTFT is for one prompt, so it takes concurrency 1 for the ceiling whatever
    concurrency is given (the wait of one request can be no shorter than its own prefill alone).
    Every bad value is an InputError naming the field.
    """
    try:
        kind = Metric(metric)
    except ValueError:
        raise InputError(
            "metric", f"unknown metric {metric!r}; use one of {', '.join(m.value for m in Metric)}"
        ) from None
    measured = _positive("measured", value)
    batch = _positive_int("concurrency", concurrency)
    if kv_precision is not None and kv_precision not in KV_FORMATS:
        raise InputError(
            "kv_precision", f"unknown cache format {kv_precision!r}; use one of {', '.join(KV_FORMATS)}"
        )
    if _PHASE_OF[kind] is Phase.DECODE:
        if read_context is None:
            raise InputError(
                "read_context", "a decode run needs the context each step reads (tokens); give --read-context"
            )
        read = _positive_int("read_context", read_context)
        alloc = read if alloc_context is None else _positive_int("alloc_context", alloc_context)
        if read > alloc:
            raise InputError(
                "read_context",
                f"{read} exceeds alloc_context {alloc}: a session cannot read more than it reserves",
            )
        return MeasuredRun(
            metric=kind,
            value=measured,
            concurrency=batch,
            read_context_tokens=read,
            alloc_context_tokens=alloc,
            kv_precision=kv_precision,
            engine=engine,
            engine_version=engine_version,
            label=f"decode at concurrency {batch}, read context {read}",
            metric_definition=_METRIC_WORDS[kind],
        )
    if prompt_tokens is None:
        raise InputError(
            "prompt_tokens", "a prefill or TTFT run needs the prompt length in tokens; give --prompt"
        )
    prompt = _positive_int("prompt_tokens", prompt_tokens)
    alloc = prompt if alloc_context is None else _positive_int("alloc_context", alloc_context)
    if prompt > alloc:
        raise InputError(
            "prompt_tokens", f"{prompt} exceeds alloc_context {alloc}; a prompt must fit its reservation"
        )
    chunk = None if chunk_tokens is None else _positive_int("chunk_tokens", chunk_tokens)
    return MeasuredRun(
        metric=kind,
        value=measured,
        concurrency=1 if kind is Metric.TTFT_S else batch,
        alloc_context_tokens=alloc,
        prompt_tokens=prompt,
        chunk_tokens=chunk,
        kv_precision=kv_precision,
        linear_mode=linear_mode,
        attention_mode=attention_mode,
        engine=engine,
        engine_version=engine_version,
        label=f"prefill of {prompt} tokens"
        + (f" x {batch}" if kind is Metric.PREFILL_TOK_S and batch > 1 else ""),
        metric_definition=_METRIC_WORDS[kind],
    )


_METRIC_WORDS = {
    Metric.PER_SESSION_TOK_S: "decode tokens per second of one session",
    Metric.AGGREGATE_TOK_S: "decode tokens per second summed over the concurrent sessions",
    Metric.PREFILL_TOK_S: "prompt tokens per second over the batch (b x prompt / prefill time)",
    Metric.TTFT_S: "time to first token of one prompt, seconds",
}


# --- the model a run used --------------------------------------------------------------------------


def load_run_model(ref: str | ModelAdapter) -> ModelAdapter:
    """A model for a check: a ``.gguf`` file (imported with exact tensor bytes), a model file, or a
    catalog profile id. Giving the GGUF a llama-bench run used makes the weight bytes exact."""
    if isinstance(ref, ModelAdapter):
        return ref
    if ref.lower().endswith(".gguf"):
        from servebound.importers.gguf_file import import_gguf

        if not Path(ref).is_file():
            raise InputError("model", f"GGUF file {ref!r} does not exist")
        return import_gguf(ref).adapter
    return load_model(ref)


# --- the ceiling for the run's setting ---------------------------------------------------------------


def _pick_mode(
    hardware: Hardware, wanted: str | None, model_mode: str, role: str, warnings: list[str]
) -> str:
    """The arithmetic mode whose rate charges a prefill path: the run's, else the model's. When the
    hardware publishes no rate for it, the derivation's rule applies (the compute roofline is
    unavailable and the prefill ceiling is the memory one) and a warning names the modes it does
    publish, any of which the caller may charge explicitly when it knows the engine used it."""
    mode = wanted if wanted is not None else model_mode
    if hardware.compute_rate(mode) is None:
        published = ", ".join(hardware.compute_flop_per_s) or "none"
        warnings.append(
            f"hardware '{hardware.id}' has no {mode} rate for the {role} math, so the prefill ceiling is "
            f"the memory roofline alone (looser); it publishes: {published}. Name the mode the engine "
            "used (--linear-mode / --attention-mode) to charge its rate"
        )
    return mode


def check_run(
    hardware: str | Hardware,
    model: str | ModelAdapter,
    run: MeasuredRun,
    *,
    overhead_gb: float = 0.0,
) -> RunCheck:
    """The ceiling for the run's own setting, and the run's efficiency against it.

    Decode: the forced-batch ceiling at b = ``run.concurrency`` with L_read = the run's read context
    (``per_session_tok_s`` compares with r(b), ``aggregate_tok_s`` with T(b)). Prefill: the ceiling
    for b prompts of the run's length in the run's chunks (b = 1 for a TTFT). ``overhead_gb`` only
    gates the memory-fit note (default 0: the run evidently fitted). ``hardware`` and ``model`` are
    records, file paths or catalog ids (a ``.gguf`` model is imported). The result flags a run above
    its ceiling; it never raises for one.
    """
    hw = load_hardware(hardware)
    adapter = load_run_model(model)
    warnings: list[str] = []
    if run.kv_precision is not None and run.kv_precision != adapter.kv_precision:
        if adapter.kv_bytes_per_element is None:
            warnings.append(
                f"the run used a {run.kv_precision} cache but the model does not say its own KV width; not rescaled"
            )
        else:
            factor = KV_FORMATS[run.kv_precision].bytes_per_element / adapter.kv_bytes_per_element
            adapter = adapter.with_kv_scale(factor, run.kv_precision)
    if run.model_file_bytes is not None:
        resident = adapter.weights.resident
        if abs(resident - run.model_file_bytes) > 0.03 * run.model_file_bytes:
            warnings.append(
                f"the model profile holds {resident / GB:.3f} GB of weights but the run's file held "
                f"{run.model_file_bytes / GB:.3f} GB: the profile may be another quantization; "
                "give the GGUF file itself as the model for exact bytes"
            )
    if run.prefix_tokens > 0:
        warnings.append(
            f"the prompt followed {run.prefix_tokens} cached tokens; the ceiling leaves that prefix out "
            "(less attention and no reread), which only raises it"
        )
    if run.metric is Metric.AGGREGATE_TOK_S and run.concurrency_definition != "given":
        warnings.append(f"concurrency {run.concurrency} is {run.concurrency_definition}")

    if run.phase is Phase.DECODE:
        assert run.read_context_tokens is not None
        alloc = max(run.alloc_context_tokens or run.read_context_tokens, run.read_context_tokens)
        workload = make_workload(
            overhead_gb=overhead_gb,
            alloc_context=alloc,
            read_context=run.read_context_tokens,
            batch=run.concurrency,
            expert_traffic=run.expert_traffic,
        )
        result = decode(hw, adapter, workload)
        forced = result.forced
        assert forced is not None
        ceiling = (
            forced.per_session_tok_per_s
            if run.metric is Metric.PER_SESSION_TOK_S
            else forced.aggregate_tok_per_s
        )
        fits = result.fits and forced.fits_memory
        measured = run.measured_tok_per_s
        efficiency = measured / ceiling
        return RunCheck(
            run=run,
            hardware=hw,
            model=adapter,
            overhead_bytes=overhead_gb * GB,
            ceiling_tok_per_s=ceiling,
            measured_tok_per_s=measured,
            efficiency=efficiency,
            above_ceiling=efficiency > 1.0 + ABOVE_CEILING_TOLERANCE,
            fits_memory=fits,
            reading="estimate" if result.is_estimate else "bound",
            bound_by="memory",
            decode=result,
            warnings=tuple(warnings),
        )

    assert run.prompt_tokens is not None
    if adapter.prefill is None:
        raise InputError(
            "model", f"model '{adapter.id}' has no [prefill] fields, so no prefill ceiling can be computed"
        )
    linear = _pick_mode(hw, run.linear_mode, adapter.prefill.linear_mode, "linear", warnings)
    attention = _pick_mode(hw, run.attention_mode, adapter.prefill.attention_mode, "attention", warnings)
    alloc = max(run.alloc_context_tokens or run.prompt_tokens, run.prompt_tokens)
    workload = make_workload(
        overhead_gb=overhead_gb, alloc_context=alloc, read_context=min(alloc, run.prompt_tokens)
    )
    batch = 1 if run.metric is Metric.TTFT_S else run.concurrency
    pf = prefill(
        hw,
        adapter,
        run.prompt_tokens,
        workload=workload,
        batch=batch,
        chunk_tokens=run.chunk_tokens,
        linear_mode=linear,
        attention_mode=attention,
    )
    measured = run.measured_tok_per_s
    efficiency = measured / pf.tok_per_s
    return RunCheck(
        run=run,
        hardware=hw,
        model=adapter,
        overhead_bytes=overhead_gb * GB,
        ceiling_tok_per_s=pf.tok_per_s,
        measured_tok_per_s=measured,
        efficiency=efficiency,
        above_ceiling=efficiency > 1.0 + ABOVE_CEILING_TOLERANCE,
        fits_memory=pf.admissible,
        reading="estimate" if pf.assumptions.is_estimate else "bound",
        bound_by=pf.bound_by.value,
        prefill=pf,
        warnings=tuple(warnings),
    )


# --- result files ------------------------------------------------------------------------------------


def _read_json_values(path: str | Path, what: str) -> list[Any]:
    """A JSON document, or JSON Lines (one value per line), bounded, under the one data-file policy."""
    file = Path(path)
    raw = bounded.read_bytes(file, what, max_bytes=MAX_RESULT_FILE_BYTES)
    try:
        return [bounded.parse_json(raw, f"{what} {file}")]
    except InputError as whole_error:
        lines = [line for line in raw.splitlines() if line.strip()]
        if len(lines) < 2 or "not valid JSON" not in whole_error.problem:
            raise
        return [bounded.parse_json(line, f"{what} {file} line {n}") for n, line in enumerate(lines, start=1)]


class _LlamaBenchRecord(BaseModel):
    """The llama-bench JSON fields a check reads. Other fields (the schema grows with every release)
    are ignored, not rejected; ``n_depth`` is absent in files older than the -d option (then 0)."""

    model_config = ConfigDict(extra="ignore")
    model_filename: str
    model_type: str
    model_size: int = Field(ge=0)
    model_n_params: int = Field(ge=0)
    n_batch: int = Field(ge=1)
    n_ubatch: int = Field(ge=1)
    n_prompt: int = Field(ge=0)
    n_gen: int = Field(ge=0)
    n_depth: int = Field(default=0, ge=0)
    avg_ts: float = Field(gt=0, allow_inf_nan=False)
    stddev_ts: float | None = None
    samples_ts: list[float] | None = None
    n_threads: int | None = None
    n_gpu_layers: int | None = None
    type_k: str | None = None
    type_v: str | None = None
    flash_attn: bool | int | str | None = None
    build_commit: str | None = None
    build_number: int | None = None
    backends: str | None = None
    gpu_info: str | None = None
    cpu_info: str | None = None


def _llama_flag(value: bool | int | str) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return "auto" if value < 0 else str(value)
    return value


def llama_bench_command(record: dict[str, Any]) -> str:
    """The ``llama-bench`` command line that repeats one record's test with the same settings."""
    parts = ["llama-bench", "-m", str(record["model_filename"])]
    parts += ["-p", str(record["n_prompt"]), "-n", str(record["n_gen"])]
    if record.get("n_depth"):
        parts += ["-d", str(record["n_depth"])]
    parts += ["-b", str(record["n_batch"]), "-ub", str(record["n_ubatch"])]
    for flag, key in (("-t", "n_threads"), ("-ngl", "n_gpu_layers"), ("-ctk", "type_k"), ("-ctv", "type_v")):
        if record.get(key) is not None:
            parts += [flag, str(record[key])]
    if record.get("flash_attn") is not None:
        parts += ["-fa", _llama_flag(record["flash_attn"])]
    samples = record.get("samples_ts")
    if isinstance(samples, list) and samples:
        parts += ["-r", str(len(samples))]
    parts += ["-o", "json"]
    return shlex.join(parts)


def read_llama_bench(path: str | Path) -> list[MeasuredRun]:
    """The tg and pp records of a ``llama-bench -o json`` (or ``-o jsonl``) file as runs.

    tg records become per-session decode at batch 1 with read context n_depth + (n_gen+1)/2 (rounded
    down) and alloc context n_depth + n_gen; pp records become prefill at batch 1 of n_prompt tokens in
    chunks of min(n_ubatch, n_batch), the cache type (type_k) as the KV precision. pg records (both
    n_prompt and n_gen) are skipped. InputError names the record and field when a record is malformed,
    and says so when the file holds no usable record.
    """
    values = _read_json_values(path, "llama-bench file")
    records: list[Any] = values[0] if len(values) == 1 and isinstance(values[0], list) else values
    if not records or not all(isinstance(r, dict) for r in records):
        raise InputError(
            "llama-bench file",
            f"{path} must hold a list of llama-bench records (as `llama-bench -o json` writes)",
        )
    runs: list[MeasuredRun] = []
    for index, raw in enumerate(records):
        try:
            rec = _LlamaBenchRecord.model_validate(raw)
        except ValidationError as exc:
            raise validation_to_input_error(exc, f"llama-bench record {index}.") from None
        if rec.n_prompt > 0 and rec.n_gen > 0:
            continue
        if rec.n_prompt == 0 and rec.n_gen == 0:
            raise InputError(
                f"llama-bench record {index}.n_gen",
                "n_prompt and n_gen are both 0: the record measured nothing",
            )
        version = (
            f"build {rec.build_number} ({rec.build_commit})"
            if rec.build_number is not None
            else rec.build_commit
        )
        kv = None
        notes: list[str] = []
        if rec.type_k is not None:
            kv = _LLAMA_CACHE_TYPES.get(rec.type_k)
            if kv is None:
                notes.append(
                    f"cache type {rec.type_k} has no servebound format; the model's own KV width is used"
                )
            if rec.type_v is not None and rec.type_v != rec.type_k:
                notes.append(
                    f"K cache {rec.type_k} and V cache {rec.type_v} differ; the K type is applied to both"
                )
        common: dict[str, Any] = dict(
            engine="llama.cpp",
            engine_version=version,
            source=f"{Path(path).name} record {index}",
            model_label=f"{rec.model_type} ({rec.model_filename})",
            model_file_bytes=float(rec.model_size),
            command=llama_bench_command(raw),
            kv_precision=kv,
            notes=tuple(notes),
        )
        depth = f" @ d{rec.n_depth}" if rec.n_depth else ""
        if rec.n_gen > 0:
            read = rec.n_depth + (rec.n_gen + 1) // 2
            runs.append(
                MeasuredRun(
                    metric=Metric.PER_SESSION_TOK_S,
                    value=rec.avg_ts,
                    concurrency=1,
                    read_context_tokens=max(read, 1),
                    alloc_context_tokens=rec.n_depth + rec.n_gen,
                    label=f"tg{rec.n_gen}{depth}",
                    metric_definition=(
                        f"llama-bench avg_ts of tg{rec.n_gen}: {rec.n_gen} generated tokens / time, one session; "
                        f"read context = n_depth + (n_gen+1)/2 = {read}"
                    ),
                    **common,
                )
            )
        else:
            chunk = min(rec.n_ubatch, rec.n_batch, rec.n_prompt)
            runs.append(
                MeasuredRun(
                    metric=Metric.PREFILL_TOK_S,
                    value=rec.avg_ts,
                    concurrency=1,
                    prompt_tokens=rec.n_prompt,
                    alloc_context_tokens=rec.n_depth + rec.n_prompt,
                    chunk_tokens=chunk,
                    prefix_tokens=rec.n_depth,
                    label=f"pp{rec.n_prompt}{depth}",
                    metric_definition=(
                        f"llama-bench avg_ts of pp{rec.n_prompt}: {rec.n_prompt} prompt tokens / time, one prompt, "
                        f"micro-batches of {chunk}"
                    ),
                    **common,
                )
            )
    if not runs:
        raise InputError(
            "llama-bench file",
            f"{path} holds only pg records (prompt and generation mixed); rerun with -p and -n",
        )
    return runs


class _VllmResult(BaseModel):
    """The ``vllm bench serve --save-result`` fields a check reads; the rest is ignored."""

    model_config = ConfigDict(extra="ignore")
    backend: str | None = None
    model_id: str | None = None
    tokenizer_id: str | None = None
    num_prompts: int | None = Field(default=None, ge=1)
    request_rate: float | str | None = None
    burstiness: float | None = None
    max_concurrency: int | None = Field(default=None, ge=1)
    duration: float = Field(gt=0, allow_inf_nan=False)
    completed: int = Field(ge=1)
    total_input_tokens: int = Field(ge=1)
    total_output_tokens: int = Field(ge=1)
    output_throughput: float = Field(gt=0, allow_inf_nan=False)
    mean_ttft_ms: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    median_ttft_ms: float | None = None
    mean_tpot_ms: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    median_tpot_ms: float | None = None
    mean_itl_ms: float | None = None
    mean_e2el_ms: float | None = Field(default=None, gt=0, allow_inf_nan=False)
    spec_decode_acceptance_length: float | None = None


def vllm_bench_command(
    result: dict[str, Any], *, input_len: int, output_len: int, concurrency: int | None
) -> str:
    """A ``vllm bench serve`` command with the file's settings. The file does not record the dataset,
    so the command uses the random dataset at the run's mean input and output lengths."""
    parts = ["vllm", "bench", "serve"]
    if result.get("backend"):
        parts += ["--backend", str(result["backend"])]
    if result.get("model_id"):
        parts += ["--model", str(result["model_id"])]
    if result.get("tokenizer_id") and result.get("tokenizer_id") != result.get("model_id"):
        parts += ["--tokenizer", str(result["tokenizer_id"])]
    parts += [
        "--dataset-name",
        "random",
        "--random-input-len",
        str(input_len),
        "--random-output-len",
        str(output_len),
    ]
    parts += ["--num-prompts", str(result.get("num_prompts") or result.get("completed"))]
    if concurrency is not None:
        parts += ["--max-concurrency", str(concurrency)]
    if result.get("request_rate") is not None:
        parts += ["--request-rate", str(result["request_rate"])]
    parts += ["--ignore-eos", "--save-result"]
    return shlex.join(parts)


def read_vllm_bench(path: str | Path) -> list[MeasuredRun]:
    """The runs in a ``vllm bench serve --save-result`` file (one object, or one per line with
    ``--append-result``): per-session decode from ``mean_tpot_ms``, aggregate decode from
    ``output_throughput`` and a prefill rate from ``mean_ttft_ms``, each at the run's concurrency and
    mean prompt and output lengths. InputError names the field when one is missing or malformed."""
    values = _read_json_values(path, "vLLM result file")
    if not values or not all(isinstance(v, dict) for v in values):
        raise InputError(
            "vLLM result file", f"{path} must hold the JSON object `vllm bench serve --save-result` writes"
        )
    runs: list[MeasuredRun] = []
    for index, raw in enumerate(values):
        prefix = "vLLM result." if len(values) == 1 else f"vLLM result {index}."
        try:
            res = _VllmResult.model_validate(raw)
        except ValidationError as exc:
            raise validation_to_input_error(exc, prefix) from None
        if res.mean_tpot_ms is None and res.mean_ttft_ms is None:
            raise InputError(
                f"{prefix}mean_tpot_ms",
                "missing, and so is mean_ttft_ms: the file holds no decode or prefill timing",
            )
        mean_in = res.total_input_tokens / res.completed
        mean_out = res.total_output_tokens / res.completed
        notes: list[str] = []
        if res.max_concurrency is not None:
            concurrency, how = res.max_concurrency, "given"
            concurrency_words = f"max_concurrency = {concurrency}"
        elif res.mean_e2el_ms is not None:
            in_flight = res.completed * res.mean_e2el_ms / 1000.0 / res.duration
            concurrency, how = max(1, round(in_flight)), "derived"
            concurrency_words = (
                f"derived by Little's law: completed x mean_e2el / duration = {res.completed} x "
                f"{res.mean_e2el_ms / 1000:.3g} s / {res.duration:.3g} s = {in_flight:.3g} in flight"
            )
        else:
            raise InputError(
                f"{prefix}max_concurrency",
                "missing (null), and mean_e2el_ms is missing too, so the concurrency cannot be derived; "
                "rerun with --max-concurrency or --percentile-metrics including e2el",
            )
        if res.spec_decode_acceptance_length is not None and res.spec_decode_acceptance_length > 1:
            notes.append(
                f"speculative decoding was on (acceptance length {res.spec_decode_acceptance_length:.3g}): "
                "more than one token per step can lift a run above the ordinary-decode ceiling"
            )
        read = max(1, math.floor(mean_in + mean_out / 2))
        alloc = math.ceil(mean_in + mean_out)
        command = vllm_bench_command(
            raw, input_len=round(mean_in), output_len=round(mean_out), concurrency=res.max_concurrency
        )
        common: dict[str, Any] = dict(
            engine=res.backend or "vllm",
            source=f"{Path(path).name}" + ("" if len(values) == 1 else f" object {index}"),
            model_label=res.model_id,
            command=command,
            notes=tuple(notes),
        )
        context_words = f"read context = mean input + mean output / 2 = {mean_in:.1f} + {mean_out:.1f}/2"
        if res.mean_tpot_ms is not None:
            runs.append(
                MeasuredRun(
                    metric=Metric.PER_SESSION_TOK_S,
                    value=1000.0 / res.mean_tpot_ms,
                    concurrency=concurrency,
                    concurrency_definition=concurrency_words if how == "derived" else "given",
                    read_context_tokens=read,
                    alloc_context_tokens=alloc,
                    label=f"1000 / mean TPOT at concurrency {concurrency}",
                    metric_definition=(
                        f"1000 / mean_tpot_ms ({res.mean_tpot_ms:.4g} ms): TPOT is (latency - TTFT) / "
                        f"(output tokens - 1) per request, the first token excluded; {concurrency_words}; {context_words}"
                    ),
                    **common,
                )
            )
        runs.append(
            MeasuredRun(
                metric=Metric.AGGREGATE_TOK_S,
                value=res.output_throughput,
                concurrency=concurrency,
                concurrency_definition=concurrency_words if how == "derived" else "given",
                read_context_tokens=read,
                alloc_context_tokens=alloc,
                label=f"output throughput at concurrency {concurrency}",
                metric_definition=(
                    "output_throughput: total output tokens / benchmark duration (prefill time and ramp "
                    f"included, so below the decode ceiling by construction); {concurrency_words}; {context_words}"
                ),
                **common,
            )
        )
        if res.mean_ttft_ms is not None:
            prompt = max(1, round(mean_in))
            runs.append(
                MeasuredRun(
                    metric=Metric.TTFT_S,
                    value=res.mean_ttft_ms / 1000.0,
                    concurrency=1,
                    prompt_tokens=prompt,
                    alloc_context_tokens=max(prompt, alloc),
                    label=f"mean TTFT for {prompt}-token prompts",
                    metric_definition=(
                        f"mean_ttft_ms ({res.mean_ttft_ms:.4g} ms) for the mean prompt of {mean_in:.1f} tokens: "
                        "queueing and other requests' prefill included, so checked against the batch-1 prefill ceiling"
                    ),
                    **common,
                )
            )
    return runs


def read_result_file(path: str | Path) -> list[MeasuredRun]:
    """Runs from a llama-bench JSON/JSONL file or a vLLM ``--save-result`` file, told apart by content.

    The file never carries the hardware's bandwidth: the caller names the hardware (catalog id or
    hardware file) and the model (catalog profile, model file, or the GGUF itself).
    """
    values = _read_json_values(path, "result file")
    first = values[0]
    if isinstance(first, list):
        first = first[0] if first else None
    if isinstance(first, dict) and "avg_ts" in first:
        return read_llama_bench(path)
    if isinstance(first, dict) and ("output_throughput" in first or "mean_tpot_ms" in first):
        return read_vllm_bench(path)
    raise InputError(
        "result file",
        f"{path} is neither `llama-bench -o json` output (records with avg_ts) nor a `vllm bench serve "
        "--save-result` file (output_throughput, mean_tpot_ms); for other engines give the measured "
        "figure as plain values (the hardware and model are always given separately: files carry no bandwidth)",
    )


# --- views -------------------------------------------------------------------------------------------


def check_json(check: RunCheck) -> dict[str, Any]:
    """The ``servebound check --json`` object for one run."""
    run = check.run
    out: dict[str, Any] = {
        "hardware": {
            "id": check.hardware.id,
            "bandwidth_gb_per_s": check.hardware.bandwidth_bytes_per_s / GB,
        },
        "model": {"id": check.model.id, "name": check.model.name},
        "phase": run.phase.value,
        "metric": run.metric.value,
        "label": run.label,
        "measured": run.value,
        "measured_tok_s": check.measured_tok_per_s,
        "ceiling_tok_s": check.ceiling_tok_per_s,
        "efficiency": check.efficiency,
        "above_ceiling": check.above_ceiling,
        "above_ceiling_meaning": ABOVE_CEILING_MEANING if check.above_ceiling else None,
        "reading": check.reading,
        "bound_by": check.bound_by,
        "fits_memory": check.fits_memory,
        "concurrency": run.concurrency,
        "concurrency_definition": run.concurrency_definition,
        "read_context_tokens": run.read_context_tokens,
        "alloc_context_tokens": run.alloc_context_tokens,
        "prompt_tokens": run.prompt_tokens,
        "chunk_tokens": run.chunk_tokens,
        "prefix_tokens": run.prefix_tokens,
        "expert_traffic": run.expert_traffic,
        "kv_precision": check.model.kv_precision,
        "ceiling_time_s": check.ceiling_time_s,
        "engine": run.engine,
        "engine_version": run.engine_version,
        "metric_definition": run.metric_definition,
        "source": run.source,
        "reproduce_command": run.command,
        "warnings": [*run.notes, *check.warnings],
    }
    if check.prefill is not None:
        out["linear_mode"] = check.prefill.assumptions.linear_mode
        out["attention_mode"] = check.prefill.assumptions.attention_mode
    return out


def format_check(check: RunCheck) -> str:
    """A few human lines for one run: the figure, the ceiling, the efficiency, and loud flags."""
    run = check.run
    lines = [
        f"{run.label} on {check.hardware.id} with {check.model.id} ({run.engine}"
        + (f" {run.engine_version}" if run.engine_version else "")
        + ")",
        f"  measured {check.measured_tok_per_s:,.2f} tok/s ({run.metric.value})"
        + (f", TTFT {run.value:.3f} s" if run.metric is Metric.TTFT_S else ""),
        f"  ceiling  {check.ceiling_tok_per_s:,.2f} tok/s ({check.reading}, {check.bound_by}-bound)",
        f"  efficiency {100 * check.efficiency:.1f} %",
    ]
    if check.above_ceiling:
        lines.append(f"  ABOVE THE CEILING: {ABOVE_CEILING_MEANING}")
    if not check.fits_memory:
        lines.append("  note: this setting does not fit the hardware with the stated overhead")
    lines += [f"  note: {text}" for text in (*run.notes, *check.warnings)]
    if run.command:
        lines.append(f"  reproduce: {run.command}")
    return "\n".join(lines)


__all__ = [
    "ABOVE_CEILING_MEANING",
    "MeasuredRun",
    "Metric",
    "Phase",
    "RunCheck",
    "check_json",
    "check_run",
    "format_check",
    "llama_bench_command",
    "load_run_model",
    "make_run",
    "read_llama_bench",
    "read_result_file",
    "read_vllm_bench",
    "vllm_bench_command",
]
