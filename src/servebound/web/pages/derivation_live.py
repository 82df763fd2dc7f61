"""The derivation's worked examples and quoted figures, computed from the shipped example files.

The text (``content/roofline-derivation.md``) prints no worked result of its own: a line
``[[table:NAME]]`` stands for one of :data:`TABLES`, and ``[[NAME]]`` inside a sentence or a formula for
one of :func:`figures`. Both are computed here from ``web/examples`` (byte-identical copies of the
repository's ``examples/``) with the same core functions the CLI runs, so the page and
``servebound decode`` / ``servebound prefill`` on those files cannot disagree.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from servebound.core.decode import DecodeResult, decode
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter
from servebound.core.prefill import prefill
from servebound.core.prefill_records import PrefillResult
from servebound.core.rates import MISSING_RATE_RULE
from servebound.core.units import GB
from servebound.core.workload import Workload
from servebound.inputs.resolve import resolve_hardware, resolve_model
from servebound.runs.evaluated import evaluate_entry
from servebound.runs.reported import load_reported_runs
from servebound.web.pages.derivation_toy import Toy, boards

EXAMPLE_MACHINES = ("dgx-spark.toml", "apple-m5-max-128gb.toml")
EXAMPLE_MODELS = ("qwen3.6-35b-a3b-nvfp4.toml", "gemma-4-26b-a4b-nvfp4.toml", "deepseek-v4-flash-q2.toml")
#: Printed names of the text's tables for the example files.
EXAMPLE_NAMES = {
    "dgx-spark.toml": "DGX Spark",
    "apple-m5-max-128gb.toml": "Apple M5 Max 128GB",
    "qwen3.6-35b-a3b-nvfp4.toml": "Qwen3.6-35B-A3B",
    "gemma-4-26b-a4b-nvfp4.toml": "Gemma 4 26B-A4B-it",
    "deepseek-v4-flash-q2.toml": "DeepSeek V4 Flash (Q2)",
}
FORCED_BATCHES = (1, 4, 8, 16, 32, 64)
#: The prefill example: Laguna S 2.1 (NVFP4) on the DGX Spark at the derivation's ideal rates.
PREFILL_MACHINE = "dgx-spark.toml"
PREFILL_MODEL = "laguna-s-2.1-nvfp4.toml"
#: Prompt lengths of the prefill tables (8k, 32k, 128k) and the policy chunk of the second table.
PREFILL_PROMPTS = (8192, 32768, 131072)
PREFILL_CHUNK = 2048
#: The slower end of the linear-layer bracket (BF16); the faster end is the model's own mode (dense FP4).
SLOW_LINEAR_MODE = "bf16"
#: The workload the decode examples state: L_alloc 100,000, L_read 32,000, r* 20, O 8 GB, rho 1.
ALLOC_CONTEXT = 100_000
READ_CONTEXT = 32_000

Rows = tuple[tuple[str, ...], ...]


def examples_dir() -> Path:
    """The worked examples' files as the package ships them (web/examples: byte-identical copies of the
    repository's examples/, which a test checks, so an installed site has them too)."""
    return Path(str(resources.files("servebound.web").joinpath("examples")))


@functools.cache
def example_machine(name: str) -> Hardware:
    return resolve_hardware(str(examples_dir() / name))


@functools.cache
def example_model(name: str) -> ModelAdapter:
    return resolve_model(str(examples_dir() / name))


def example_result(machine: str, model: str, batch: int | None = None) -> DecodeResult:
    """The derivation's defaults: L_alloc 100,000, L_read 32,000, r* 20, O 8 GB, rho 1."""
    return decode(example_machine(machine), example_model(model), Workload(forced_batch=batch))


def fmt_tok(value: float | None) -> str:
    return "n/a" if value is None else f"{round(value):,} tok/s"


def fmt_k(value: float | None) -> str:
    return "n/a" if value is None else f"{value / 1000:.1f}k tok/s"


def fmt_gb(value: float) -> str:
    """A GB figure as the text prints its adapter inputs: shortest form, no trailing zeros."""
    return f"{value / GB:.10g}"


def machines_table() -> Rows:
    """Two machines: C, R and D = C R."""
    rows: list[tuple[str, ...]] = [("Hardware", "$C$", "$R$", r"$D = CR$")]
    for m in EXAMPLE_MACHINES:
        hw = example_machine(m)
        rows.append(
            (
                EXAMPLE_NAMES[m],
                f"{hw.memory_bytes / GB:,.0f} GB",
                f"{hw.bandwidth_bytes_per_s / GB:,.0f} GB/s",
                f"{hw.memory_power_bytes2_per_s / GB**2:,.0f} " + r"$\mathrm{GB}^2/\mathrm{s}$",
            )
        )
    return tuple(rows)


def adapters_table() -> Rows:
    """Three models: each example file's e_w, W_resident, K_alloc(100,000) and K_read(32,000)."""
    rows: list[tuple[str, ...]] = [
        (
            "Model",
            "$e_w$ (bytes/parameter)",
            r"$W_{\mathrm{resident}}$ (GB)",
            r"$K_{\mathrm{alloc}}(100{,}000)$ (GB/session)",
            r"$K_{\mathrm{read}}(32{,}000)$ (GB/token)",
        )
    ]
    for name in EXAMPLE_MODELS:
        m = example_model(name)
        e_w = m.weights.bytes_per_param
        rows.append(
            (
                EXAMPLE_NAMES[name],
                "n/a" if e_w is None else f"{e_w:g}",
                "n/a" if m.weights.resident_bytes is None else fmt_gb(m.weights.resident_bytes),
                fmt_gb(float(m.kv_alloc.bytes_at(ALLOC_CONTEXT))),
                fmt_gb(float(m.kv_read.bytes_at(READ_CONTEXT))),
            )
        )
    return tuple(rows)


def results_table() -> Rows:
    """Results: both machines, all three models."""
    rows: list[tuple[str, ...]] = [
        (
            "Hardware",
            "Model",
            "Single-session estimate",
            r"$b^\star$",
            "KV-aware aggregate estimate",
            "Memory-power estimate",
        )
    ]
    for machine in EXAMPLE_MACHINES:
        for model in EXAMPLE_MODELS:
            r = example_result(machine, model)
            rows.append(
                (
                    EXAMPLE_NAMES[machine],
                    EXAMPLE_NAMES[model],
                    fmt_tok(r.single_session_tok_s),
                    "n/a" if r.batch_star is None else f"{r.batch_star:,}",
                    fmt_tok(r.aggregate_tok_s),
                    fmt_k(r.memory_power_tok_s),
                )
            )
    return tuple(rows)


def forced_table() -> Rows:
    """Forced concurrency: each model on each machine at fixed batches, with whether the batch fits
    and clears the floor."""
    rows: list[tuple[str, ...]] = [
        ("Hardware", "Model", "Batch $b$", "Aggregate", "Per session", "Clears $r_\\star$", "Fits")
    ]
    for machine in EXAMPLE_MACHINES:
        for model in EXAMPLE_MODELS:
            for b in FORCED_BATCHES:
                f = example_result(machine, model, b).forced
                assert f is not None
                rows.append(
                    (
                        EXAMPLE_NAMES[machine],
                        EXAMPLE_NAMES[model],
                        f"{b:,}",
                        fmt_tok(f.aggregate_tok_s),
                        f"{f.per_session_tok_s:,.1f} tok/s",
                        "yes" if f.clears_floor else "no",
                        "yes" if f.fits_memory else "no",
                    )
                )
    return tuple(rows)


def sanity_check() -> tuple[float, float, float]:
    """Gemma at concurrency 16 on DGX Spark: the KV-aware aggregate and the reported run's share of it
    (16 x 16 and 16 x 18 tok/s), against the aggregate rounded to whole tok/s as the text divides."""
    f = example_result("dgx-spark.toml", "gemma-4-26b-a4b-nvfp4.toml", 16).forced
    assert f is not None
    shown = round(f.aggregate_tok_s)
    return f.aggregate_tok_s, 256 / shown, 288 / shown


# --- the prefill example ----------------------------------------------------------------------------


@functools.cache
def laguna(prompt: int, chunk: int | None = None, linear_mode: str | None = None) -> PrefillResult:
    """``servebound prefill -H dgx-spark.toml -m laguna-s-2.1-nvfp4.toml --prompt L [--chunk c]
    [--linear-mode m]``: one prompt, the workload defaults, the reservation raised to the prompt where
    the prompt is longer (``--alloc-context L``: a prompt's cache has to fit its reservation)."""
    return prefill(
        example_machine(PREFILL_MACHINE),
        example_model(PREFILL_MODEL),
        prompt,
        workload=Workload(alloc_context_tokens=max(ALLOC_CONTEXT, prompt)),
        batch=1,
        chunk_tokens=chunk,
        linear_mode=linear_mode,
    )


def fmt_prompt(tokens: int) -> str:
    return f"{tokens:,} ({tokens // 1024}k)"


def fmt_seconds(value: float | None) -> str:
    return "n/a" if value is None else f"{value:,.3f} s"


def _span(slow: str, fast: str) -> str:
    return slow if slow == fast else f"{slow} to {fast}"


def prefill_table(chunk: int | None = None) -> Rows:
    """The Laguna prefill example at 8k, 32k and 128k: the memory ceiling, the compute ceiling and the
    combined ceiling over the linear-rate bracket (BF16 to dense FP4), and the prefill time."""
    rows: list[tuple[str, ...]] = [
        (
            "Prompt $L$",
            r"Memory ceiling $R/q_{\mathrm{pf}}$",
            r"Compute ceiling ($F_{\mathrm{linear}}$ 125 to 500 TFLOP/s)",
            "Combined ceiling",
            r"Prefill time $t_{\mathrm{pf},\min}$",
            "Bound by",
        )
    ]
    for prompt in PREFILL_PROMPTS:
        slow, fast = laguna(prompt, chunk, SLOW_LINEAR_MODE), laguna(prompt, chunk)
        rows.append(
            (
                fmt_prompt(prompt),
                fmt_tok(fast.memory_tok_s),
                _span(f"{round(slow.compute_tok_s or 0):,}", fmt_tok(fast.compute_tok_s)),
                _span(f"{round(slow.tok_s):,}", fmt_tok(fast.tok_s)),
                _span(f"{slow.time_s:,.3f}", fmt_seconds(fast.time_s)),
                slow.bound_by
                if slow.bound_by == fast.bound_by
                else f"{slow.bound_by} (BF16), {fast.bound_by} (FP4)",
            )
        )
    return tuple(rows)


def oneshot_sentence() -> str:
    """The sentence that quotes the one-shot memory ceilings, with what they say about the binding side."""
    results = [(p, laguna(p), laguna(p, None, SLOW_LINEAR_MODE)) for p in PREFILL_PROMPTS]
    memory = ", ".join(f"{fmt_tok(r.memory_tok_s)} at {p // 1024}k" for p, r, _ in results)
    above = all(r.memory_tok_s > (r.compute_tok_s or 0) for _, r, _ in results)
    below = [p for p, r, s in results if r.memory_tok_s < (s.compute_tok_s or 0)]
    if above:
        tail = "each above the compute ceiling even at the faster linear rate, so compute binds this pair's prefill at every length shown."
    elif below:
        tail = (
            "below the compute ceiling at "
            + ", ".join(f"{p // 1024}k" for p in below)
            + ", where memory binds."
        )
    else:
        tail = "between the two compute ceilings, so which roof binds depends on the linear rate."
    return f"In one shot the memory ceiling is {memory}, {tail}"


def crossover_range() -> str:
    """S* of the prefill example at the two linear rates (the attention-free approximation)."""
    slow = laguna(PREFILL_PROMPTS[0], None, SLOW_LINEAR_MODE).crossover_tokens
    fast = laguna(PREFILL_PROMPTS[0]).crossover_tokens
    if slow is None or fast is None:
        return "no defined crossover"
    return f"between about {slow:,.0f} and {fast:,.0f}"


#: The chunk width of the walk-through's expert count (a modest scheduler chunk).
WALK_CHUNK = 128


def walk_through() -> dict[str, str]:
    """The Laguna walk-through's figures, each what ``servebound prefill`` reports for the example files:
    the experts a 128-token chunk touches (``experts_touched`` at ``--chunk 128``), full sweeps per second
    (R over the one-shot ``weight_sweep_bytes``), and linear and attention FLOPs per prompt token at 8k
    and 128k (``linear_flops`` and ``attention_flops`` over b L)."""
    short, long = PREFILL_PROMPTS[0], PREFILL_PROMPTS[-1]
    chunked, one_shot, longest = laguna(short, WALK_CHUNK), laguna(short), laguna(long)
    experts = example_model(PREFILL_MODEL).weights.experts
    assert experts is not None and chunked.experts_touched is not None, "Laguna routes experts"

    def per_token_gflop(flops: float, r: PrefillResult) -> float:
        return flops / (r.batch * r.prompt_tokens) / 1e9

    linear = per_token_gflop(one_shot.linear_flops, one_shot)
    long_linear = per_token_gflop(longest.linear_flops, longest)
    long_attention = per_token_gflop(longest.attention_flops, longest)
    relation = (
        f"overtakes the {long_linear:.1f} GFLOP of linear math"
        if long_attention > long_linear
        else f"stays under the {long_linear:.1f} GFLOP of linear math"
    )
    return {
        "laguna_walk_chunk": f"{WALK_CHUNK:,}",
        "laguna_chunk_experts": f"{chunked.experts_touched:.0f}",
        "laguna_experts": f"{experts.routed:,}",
        "laguna_bandwidth_gb": f"{one_shot.hardware.bandwidth_bytes_per_s / GB:,.0f}",
        "laguna_sweeps_per_s": f"{one_shot.hardware.bandwidth_bytes_per_s / one_shot.weight_sweep_bytes:.1f}",
        "laguna_short_k": f"{short // 1024}k",
        "laguna_linear_gflop": f"{linear:.1f}",
        "laguna_attention_short_gflop": f"{per_token_gflop(one_shot.attention_flops, one_shot):.3f}",
        "laguna_long_k": f"{long // 1024}k",
        "laguna_attention_long_gflop": f"{long_attention:.1f}",
        "laguna_attention_relation": relation,
    }


#: The measured prefill run the example refers to, in the reported runs (catalog/data/reported_runs.toml).
MEASURED_PREFILL_RUN = "derivation-dgx-spark-laguna-s-2.1-nvfp4-vllm-prefill-8k"


@functools.cache  # shipped files only: computed once (``serve`` does it at start)
def measured_prefill_run() -> dict[str, str]:
    """The reported vLLM prefill run on GB10 placed against the example files' ceiling at its own chunk
    (what ``servebound check -H dgx-spark.toml -m laguna-s-2.1-nvfp4.toml --metric prefill_tok_s
    --measured ... --prompt ... --chunk ...`` prints), and against the catalog profile /validation uses."""
    entry = next(e for e in load_reported_runs() if e.id == MEASURED_PREFILL_RUN)
    examples = {
        "hardware": str(examples_dir() / PREFILL_MACHINE),
        "model": str(examples_dir() / PREFILL_MODEL),
    }
    on_examples = evaluate_entry(entry.model_copy(update=examples)).check
    in_catalog = evaluate_entry(entry).check
    assert entry.prompt_tokens is not None and entry.chunk_tokens is not None
    return {
        "run_engine": entry.engine,
        "run_measured": f"{entry.measured:,.0f}",
        "run_prompt": f"{entry.prompt_tokens:,}",
        "run_chunk": f"{entry.chunk_tokens:,}",
        "run_ceiling": f"{on_examples.ceiling_tok_s:,.0f}",
        "run_bound_by": str(on_examples.bound_by),
        "run_share": f"{on_examples.efficiency * 100:.0f}",
        "run_catalog_share": f"{in_catalog.efficiency * 100:.0f}",
        "run_catalog_model": entry.model,
    }


#: The catalog rows and profiles the worked examples stand for: their pair pages say why their numbers
#: differ from the worked table (real tensors and caches, the catalog's own capacity and overhead).
CATALOG_COUNTERPARTS = {
    "nvidia-dgx-spark": "dgx-spark.toml",
    "apple-m5-max-128gb": "apple-m5-max-128gb.toml",
    "qwen3.6-35b-a3b-nvfp4": "qwen3.6-35b-a3b-nvfp4.toml",
    "gemma-4-26b-a4b-nvfp4": "gemma-4-26b-a4b-nvfp4.toml",
}


def _gb(value_bytes: float, digits: int = 3) -> str:
    return f"{value_bytes / GB:,.{digits}g} GB"


def hardware_difference(hardware: Hardware) -> str | None:
    """How a catalog row the derivation uses differs from the worked example's machine (None: it does not)."""
    example = CATALOG_COUNTERPARTS.get(hardware.id)
    if example is None:
        return None
    ex = example_machine(example)
    parts = []
    if hardware.memory_bytes != ex.memory_bytes:
        gib = hardware.memory_bytes / 2**30
        binary = f" ({gib:,.0f} GiB)" if abs(gib - round(gib)) < 1e-3 else ""
        parts.append(
            f"the catalog holds {_gb(hardware.memory_bytes, 4)}{binary} of memory, where the derivation uses "
            f"{_gb(ex.memory_bytes, 4)}"
        )
    if hardware.bandwidth_bytes_per_s != ex.bandwidth_bytes_per_s:
        parts.append(
            f"{hardware.bandwidth_bytes_per_s / GB:,.0f} GB/s of bandwidth against the derivation's "
            f"{ex.bandwidth_bytes_per_s / GB:,.0f} GB/s"
        )
    return "; ".join(parts) or None


def derivation_notes(hardware: Hardware, model: ModelAdapter, workload: Workload) -> list[str]:
    """For the worked examples' own pairs: why this page's numbers differ from the derivation's worked
    table, each figure computed (the table's from the example files, the page's inputs from the catalog)."""
    machine, adapter = CATALOG_COUNTERPARTS.get(hardware.id), CATALOG_COUNTERPARTS.get(model.id)
    notes = []
    machine_words = hardware_difference(hardware)
    if machine_words is not None:
        notes.append(
            f"On {hardware.name}, {machine_words}, so sessions that fit and the memory-power line differ."
        )
    if machine is None or adapter is None:
        return notes
    ex_model = example_model(adapter)
    table = example_result(machine, adapter)
    ex_workload = table.workload
    embedding = (
        f"the untied embedding ({_gb(model.weights.embedding_bytes)}) kept apart from the sweep"
        if model.weights.embedding_bytes > 0
        else "a tied embedding"
    )
    reasons = [
        f"its real tensors, W_resident {_gb(model.weights.resident, 4)} with {embedding}, against the rounded "
        f"adapter's {_gb(ex_model.weights.resident, 4)} with P_embed = 0",
        f"its {(model.kv_precision or 'stated').upper()} cache, reading {_gb(model.kv_read.bytes_at(ex_workload.read_context_tokens), 4)} "
        f"per token at {ex_workload.read_context_tokens:,} tokens, against the adapter's "
        f"{_gb(ex_model.kv_read.bytes_at(ex_workload.read_context_tokens), 4)}",
    ]
    if workload.overhead_bytes != ex_workload.overhead_bytes:
        reasons.append(
            f"the machine's own overhead O = {_gb(workload.overhead_bytes)} against the derivation's "
            f"{_gb(ex_workload.overhead_bytes)}"
        )
    notes.append(
        f"The derivation's worked table gives this pair {fmt_tok(table.single_session_tok_s)} for one session, "
        f"b* {table.batch_star if table.batch_star is not None else 'n/a'} and {fmt_tok(table.aggregate_tok_s)} "
        f"(L_alloc {ex_workload.alloc_context_tokens:,}, L_read {ex_workload.read_context_tokens:,}, "
        f"r* {ex_workload.floor_tok_s:g}); this page computes from the catalog profile instead: "
        + "; ".join(reasons)
        + "."
    )
    return notes


def toy_reservations() -> str:
    """The boards section's sentence on the toy machine at 4k and 1k reserved tokens."""
    four, one = boards(Toy(reserved=4000)), boards(Toy(reserved=1000))
    mp4 = "no" if four.memory_power_tok_s is None else f"{four.memory_power_tok_s:,.0f} tok/s"
    mp1 = "no" if one.memory_power_tok_s is None else f"{one.memory_power_tok_s:,.0f} tok/s"
    return (
        f"With 4k tokens reserved, {four.batch_mem:,} sessions fit on the toy machine and the bound reaches "
        f"{mp4}; with 1k reserved, {one.batch_mem:,} sessions fit and it would reach {mp1}."
    )


@functools.cache
def figures() -> dict[str, str]:
    """Every ``[[NAME]]`` the text quotes, computed."""
    agg, lo, hi = sanity_check()
    model = example_model(PREFILL_MODEL)
    w = model.weights
    swept = w.always_on_bytes + w.experts.routed * w.expert_bytes if w.experts else w.always_on_bytes
    p = model.prefill
    assert p is not None, "the prefill example needs the model's [prefill] fields"
    return {
        "sanity_aggregate": f"{agg:,.1f}",
        "sanity_shown": f"{round(agg):,}",
        "sanity_lo": f"{lo * 100:.0f}",
        "sanity_hi": f"{hi * 100:.0f}",
        "laguna_swept_gb": f"{swept / GB:.2f}",
        "laguna_embed_gb": f"{w.embedding_bytes / GB:.4f}",
        "laguna_plin_b": f"{p.linear_active_params / 1e9:.1f}",
        "laguna_kvw": f"{p.kv_write_bytes_per_token:,.0f}",
        "laguna_crossover_range": crossover_range(),
        "laguna_oneshot_sentence": oneshot_sentence(),
        "toy_reservations": toy_reservations(),
        "missing_rate_rule": MISSING_RATE_RULE,
        **walk_through(),
        **measured_prefill_run(),
    }


#: The tables a ``[[table:NAME]]`` line stands for.
TABLES: dict[str, Callable[[], Rows]] = {
    "machines": machines_table,
    "adapters": adapters_table,
    "results": results_table,
    "forced": forced_table,
    "prefill_oneshot": prefill_table,
    "prefill_chunked": lambda: prefill_table(PREFILL_CHUNK),
}

_FIGURE = re.compile(r"\[\[([a-z0-9_]+)\]\]")


def fill(text: str) -> str:
    """``text`` with every ``[[NAME]]`` replaced by its computed figure (an unknown name is an error)."""
    values = figures()

    def sub(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in values:
            raise ValueError(f"the derivation quotes [[{name}]], which no computed figure provides")
        return values[name]

    return _FIGURE.sub(sub, text)
