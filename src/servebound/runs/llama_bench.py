"""``llama-bench -o json`` (or ``-o jsonl``) files as measured runs.

* ``tg<N>`` (n_gen = N, n_prompt = 0): one session generating N tokens after ``n_depth`` cached tokens;
  ``avg_ts`` is N / time. Per-session decode at batch 1; each step reads the cache it has so far
  (d+1 ... d+N tokens), so the read context is the mean d + (N+1)/2, rounded down (exact for
  full-attention caches, where K_read is linear in L; rounding down keeps it a ceiling).
* ``pp<N>`` (n_prompt = N, n_gen = 0): one prompt of N tokens, batch 1, pushed through in micro-batches
  of ``n_ubatch`` tokens (the chunk). ``avg_ts`` is N / time. At ``n_depth`` d > 0 the prompt follows d
  cached tokens; the ceiling is evaluated without that prefix, which only raises it (less attention
  work, no cache reread), so it stays a ceiling, a looser one.
* ``pg`` records (both n_prompt and n_gen) mix the two phases in one rate and are skipped.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from servebound.errors import InputError
from servebound.inputs.files import validation_to_input_error
from servebound.runs.limits import MAX_RECORD_TOKENS
from servebound.runs.measured import MeasuredRun, Metric

#: llama.cpp cache type names (-ctk/-ctv) to servebound's KV format names.
_LLAMA_CACHE_TYPES = {"f32": "fp32", "f16": "fp16", "bf16": "bf16", "q8_0": "q8_0", "q4_0": "q4_0"}
#: Every cache type llama.cpp accepts for -ctk/-ctv (common/arg.cpp's kv_cache_types); a record naming
#: another (q9_9) was not written by llama-bench and is refused.
LLAMA_CACHE_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")


class _LlamaBenchRecord(BaseModel):
    """The llama-bench JSON fields a check reads. Other fields (the schema grows with every release)
    are ignored, not rejected; ``n_depth`` is absent in files older than the -d option (then 0)."""

    model_config = ConfigDict(extra="ignore")
    #: Absent only in the markdown table (``-o md``, the default), which names the model by type.
    model_filename: str | None = None
    model_type: str
    model_size: int = Field(ge=0)
    model_n_params: int = Field(ge=0)
    n_batch: int = Field(ge=1)
    n_ubatch: int = Field(ge=1)
    n_prompt: int = Field(ge=0, le=MAX_RECORD_TOKENS)
    n_gen: int = Field(ge=0, le=MAX_RECORD_TOKENS)
    n_depth: int = Field(default=0, ge=0, le=MAX_RECORD_TOKENS)
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


def gpu_names(gpu_info: str | None) -> tuple[str, ...]:
    """The devices in llama-bench's gpu_info (one description per device, joined by ", ")."""
    if not gpu_info:
        return ()
    return tuple(name.strip() for name in gpu_info.split(", ") if name.strip())


def _llama_flag(value: bool | int | str) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int):
        return "auto" if value < 0 else str(value)
    return value


def llama_bench_command(record: dict[str, Any]) -> str:
    """The ``llama-bench`` command line that repeats one record's test with the same settings."""
    parts = ["llama-bench", "-m", str(record.get("model_filename") or "MODEL.gguf")]
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


def llama_bench_runs(values: list[Any], path: str | Path) -> list[MeasuredRun]:
    """The tg and pp records of a ``llama-bench -o json`` (or ``-o jsonl``) file as runs, from its JSON
    values already read from ``path`` (named in messages and sources).

    tg records become per-session decode at batch 1 with read context n_depth + (n_gen+1)/2 (rounded
    down) and alloc context n_depth + n_gen; pp records become prefill at batch 1 of n_prompt tokens in
    chunks of min(n_ubatch, n_batch), the cache type (type_k) as the KV precision. pg records (both
    n_prompt and n_gen) are skipped. InputError names the record and field when a record is malformed,
    and says so when the file holds no usable record.
    """
    records: list[Any] = values[0] if len(values) == 1 and isinstance(values[0], list) else values
    if not records or not all(isinstance(r, dict) for r in records):
        raise InputError(
            "llama-bench file",
            f"{path} must hold a list of llama-bench records (as `llama-bench -o json` writes)",
        )
    runs: list[MeasuredRun] = []
    mixed: list[int] = []
    for index, raw in enumerate(records):
        try:
            rec = _LlamaBenchRecord.model_validate(raw)
        except ValidationError as exc:
            raise validation_to_input_error(exc, f"llama-bench record {index}.") from None
        if rec.n_prompt > 0 and rec.n_gen > 0:
            mixed.append(index)
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
        for key, value in (("type_k", rec.type_k), ("type_v", rec.type_v)):
            if value is not None and value not in LLAMA_CACHE_TYPES:
                raise InputError(
                    f"llama-bench record {index}.{key}",
                    f"{value!r} is not a llama.cpp cache type; llama-bench writes one of "
                    f"{', '.join(LLAMA_CACHE_TYPES)}",
                )
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
            model_label=rec.model_type
            if rec.model_filename is None
            else f"{rec.model_type} ({rec.model_filename})",
            model_file_bytes=float(rec.model_size),
            command=llama_bench_command(raw),
            kv_precision=kv,
            notes=tuple(notes),
            hardware_names=gpu_names(rec.gpu_info),
            model_path=rec.model_filename,
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
    if mixed:  # named, not dropped without a word
        shown = ", ".join(str(i) for i in mixed[:5]) + (", ..." if len(mixed) > 5 else "")
        note = (
            f"{len(mixed):,} pg record{'s' * (len(mixed) != 1)} skipped (records {shown}): prompt and generation "
            "mixed in one rate, which no single ceiling bounds"
        )
        runs[0] = replace(runs[0], notes=(*runs[0].notes, note))
    return runs
