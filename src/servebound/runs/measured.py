"""A measured run and its check: what someone measured, at which setting, next to its ceiling.

A run is an engine's decode or prefill rate at a concurrency, context and prompt length
(:class:`MeasuredRun`, built from plain values by :func:`make_run` or read from a result file by
``runs.llama_bench`` / ``runs.vllm``); :class:`RunCheck` is the run next to the ceiling for exactly that
setting (``runs.ceiling``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

from servebound.core.advice import Note, Setting
from servebound.core.decode import DecodeResult
from servebound.core.formats import KV_FORMATS
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.prefill import PrefillResult
from servebound.errors import InputError

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
    #: Extra workload options of the run's setting, as make_workload names them (offload, allocation).
    workload_options: tuple[tuple[str, object], ...] = ()
    #: The device names the file reports (llama-bench's gpu_info, llama.cpp's device lines), one per
    #: device; ``servebound check`` matches them to a catalog row when no --hardware is given.
    hardware_names: tuple[str, ...] = ()
    #: The model file the run loaded, as the file names it (llama-bench's model_filename).
    model_path: str | None = None

    @property
    def phase(self) -> Phase:
        return _PHASE_OF[self.metric]

    @property
    def measured_tok_s(self) -> float:
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

    ``ceiling_tok_s`` is the ceiling of the same kind as ``measured_tok_s`` (per-session
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
    ceiling_tok_s: float
    measured_tok_s: float
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


def _within_alloc(
    field: str, tokens: int | None, alloc_context: int | None, *, missing: Note, over: str
) -> tuple[int, int]:
    """(tokens, alloc): a required token count and the reservation it must fit (alloc defaults to it)."""
    if tokens is None:
        raise InputError(field, missing)
    count = _positive_int(field, tokens)
    alloc = count if alloc_context is None else _positive_int("alloc_context", alloc_context)
    if count > alloc:
        raise InputError(field, f"{count} exceeds alloc_context {alloc}{over}")
    return count, alloc


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
        read, alloc = _within_alloc(
            "read_context",
            read_context,
            alloc_context,
            missing=Note.of(
                "a decode run needs the context each step reads (tokens); give ", Setting("read_context")
            ),
            over=": a session cannot read more than it reserves",
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
    prompt, alloc = _within_alloc(
        "prompt_tokens",
        prompt_tokens,
        alloc_context,
        missing=Note.of("a prefill or TTFT run needs the prompt length in tokens; give ", Setting("prompt")),
        over="; a prompt must fit its reservation",
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
