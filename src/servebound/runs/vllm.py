"""``vllm bench serve --save-result`` files (and SGLang ``bench_serving`` JSONL, the same fields) as
measured runs.

* ``mean_tpot_ms``: per request (latency - TTFT) / (output tokens - 1), averaged over requests;
  1000 / TPOT is a per-session decode rate. ITL (the gap between streamed chunks) is not used: with
  multi-token chunks or speculative decoding it is not a per-token time.
* ``output_throughput``: output tokens / benchmark duration, the aggregate decode rate. It includes
  prefill time and the ramp, so it sits further below the decode ceiling than TPOT does.
* ``mean_ttft_ms``: the wait before the first token, queueing and prefill of other requests included.
  No request can wait less than its own prompt's prefill at batch 1, so the prefill rate L / TTFT is
  checked against the batch-1 prefill ceiling.
* concurrency: ``max_concurrency`` when set; otherwise the mean number of requests in flight by
  Little's law (completed x mean E2E latency / duration), stated as derived.
"""

from __future__ import annotations

import math
import shlex
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from servebound.errors import InputError
from servebound.inputs.files import validation_to_input_error
from servebound.runs.limits import MAX_RECORD_TOKENS
from servebound.runs.measured import MeasuredRun, Metric


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
    #: The lengths the benchmark asked for (the random dataset's): at most a billion tokens, as any
    #: token count a result file states (the mean lengths checked come from the totals).
    random_input_len: int | None = Field(default=None, ge=0, le=MAX_RECORD_TOKENS)
    random_output_len: int | None = Field(default=None, ge=0, le=MAX_RECORD_TOKENS)


def vllm_bench_command(
    result: dict[str, Any], *, input_len: int, output_len: int, concurrency: int | None
) -> str:
    """A ``vllm bench serve`` command with the file's settings. The file does not record the dataset,
    so the command uses the random dataset at the run's mean input and output lengths."""
    sglang = str(result.get("backend", "")).startswith("sglang")
    parts = ["python3", "-m", "sglang.bench_serving"] if sglang else ["vllm", "bench", "serve"]
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
    parts += ["--output-file", "result.jsonl"] if sglang else ["--ignore-eos", "--save-result"]
    return shlex.join(parts)


def _vllm_keys(raw: dict[str, Any]) -> dict[str, Any]:
    """An SGLang ``bench_serving`` result under vLLM's names: SGLang writes mean_e2e_latency_ms where
    vLLM writes mean_e2el_ms (the other fields a check reads share their names and meaning)."""
    if "mean_e2el_ms" not in raw and "mean_e2e_latency_ms" in raw:
        return {**raw, "mean_e2el_ms": raw["mean_e2e_latency_ms"]}
    return raw


def vllm_runs(values: list[Any], path: str | Path) -> list[MeasuredRun]:
    """The runs in a ``vllm bench serve --save-result`` file (one object, or one per line with
    ``--append-result``), from its JSON values already read from ``path`` (named in messages and
    sources): per-session decode from ``mean_tpot_ms``, aggregate decode from ``output_throughput`` and
    a prefill rate from ``mean_ttft_ms``, each at the run's concurrency and mean prompt and output
    lengths. InputError names the field when one is missing or malformed."""
    if not values or not all(isinstance(v, dict) for v in values):
        raise InputError(
            "vLLM result file", f"{path} must hold the JSON object `vllm bench serve --save-result` writes"
        )
    runs: list[MeasuredRun] = []
    for index, raw in enumerate(values):
        raw = _vllm_keys(raw)
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
        for key, mean in (("total_input_tokens", mean_in), ("total_output_tokens", mean_out)):
            if mean > MAX_RECORD_TOKENS:
                raise InputError(
                    f"{prefix}{key}",
                    f"{mean:.3g} tokens per request is beyond any model's context; at most {MAX_RECORD_TOKENS:,}",
                )
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
        decode: dict[str, Any] = dict(
            common,
            concurrency=concurrency,
            concurrency_definition=concurrency_words if how == "derived" else "given",
            read_context_tokens=read,
            alloc_context_tokens=alloc,
        )
        if res.mean_tpot_ms is not None:
            runs.append(
                MeasuredRun(
                    metric=Metric.PER_SESSION_TOK_S,
                    value=1000.0 / res.mean_tpot_ms,
                    label=f"1000 / mean TPOT at concurrency {concurrency}",
                    metric_definition=(
                        f"1000 / mean_tpot_ms ({res.mean_tpot_ms:.4g} ms): TPOT is (latency - TTFT) / "
                        f"(output tokens - 1) per request, the first token excluded; {concurrency_words}; {context_words}"
                    ),
                    **decode,
                )
            )
        runs.append(
            MeasuredRun(
                metric=Metric.AGGREGATE_TOK_S,
                value=res.output_throughput,
                label=f"output throughput at concurrency {concurrency}",
                metric_definition=(
                    "output_throughput: total output tokens / benchmark duration (prefill time and ramp "
                    f"included, so below the decode ceiling by construction); {concurrency_words}; {context_words}"
                ),
                **decode,
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
