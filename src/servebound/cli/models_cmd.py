"""`servebound models list|show` and `servebound rank`."""

from __future__ import annotations

from typing import Any

from servebound.catalog.hardware import list_hardware
from servebound.catalog.models import CatalogModel, catalog_profile, get_model, list_models
from servebound.cli.common import JSON, ContextFlags, argument, command, flags, group, option
from servebound.cli.output import console, line, new_table, print_json, steps_json, steps_table, strong
from servebound.core.units import GB
from servebound.errors import InputError
from servebound.inputs.scenario import load_hardware, load_model, make_workload
from servebound.inputs.workload import MAX_EDGE_TOKENS
from servebound.questions.fit import fitting_profiles, usual_profile_ids
from servebound.questions.rank import (
    DEFAULT_RANK_PROMPT_TOKENS,
    RANK_SORTS,
    RankRow,
    check_hardware_group,
    machine,
    rank_hardware,
    rank_models,
)
from servebound.views.band_view import band_cell, expected_column_text
from servebound.views.cost_view import fmt_money
from servebound.views.notes import VERDICT_WORDS
from servebound.views.report import fmt_rate, fmt_wait
from servebound.views.rows import rank_row_json, said_engines

models_app = group(
    "models",
    examples=("servebound models list --family qwen3", "servebound models show qwen3-8b"),
)


def _size(value: str | None, field: str) -> float | None:
    """'7B', '500M', '1.5e9' or a plain number of parameters."""
    if value is None:
        return None
    text = value.strip().upper()
    scale = {"K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12}.get(text[-1:], 1.0)
    try:
        number = float(text[:-1] if scale != 1.0 else text) * scale
    except ValueError:
        raise InputError(field, f"give a parameter count like 7B, 500M or 1.5e9 (got {value!r})") from None
    if not number > 0:
        raise InputError(field, f"must be positive (got {value!r})")
    if number > MAX_PARAMS:  # inf included: no model has more than a quadrillion parameters
        raise InputError(
            field, f"{value!r} is beyond any real model; at most {MAX_PARAMS:g} parameters (1000T)"
        )
    return number


#: The largest parameter count a size filter takes (the model files' own bound).
MAX_PARAMS = 1e15


def model_row_json(m: CatalogModel) -> dict[str, Any]:
    w = m.adapter.weights
    return {
        **catalog_profile(m.id),
        "resident_gb": w.resident / GB,
        "active_gb": w.active / GB,
        "experts": None
        if w.experts is None
        else {"routed": w.experts.routed, "per_token": w.experts.per_token},
        "context_limit": m.adapter.context_limit_tokens,
        "kv_bytes_per_token": m.adapter.kv_alloc.global_bytes_per_token
        + m.adapter.kv_alloc.local_bytes_per_token,
    }


@command(
    "list",
    option("family", str, None, "Architecture family, e.g. qwen3, 'qwen3 moe', llama, deepseek.", "--family"),
    option("min_size", str, None, "At least this many parameters (7B, 500M).", "--min-size"),
    option("max_size", str, None, "At most this many parameters.", "--max-size"),
    option(
        "fits",
        str,
        None,
        "Only profiles with a session that fits on this hardware (default workload).",
        "--fits",
    ),
    option(
        "all_formats",
        bool,
        False,
        "Every weight format (GGUF quantizations, FP8, NVFP4, MLX), not only native.",
        "--all-formats",
    ),
    JSON,
    parent=models_app,
    help="List catalog model profiles, filtered.",
    examples=(
        "servebound models list --family qwen3 --max-size 10B",
        "servebound models list --fits nvidia-rtx-4090 --all-formats --json",
    ),
)
def models_list(
    family: str | None,
    min_size: str | None,
    max_size: str | None,
    fits: str | None,
    all_formats: bool,
    json_out: bool,
) -> None:
    rows = list_models(
        family=family,
        min_params=_size(min_size, "min_size"),
        max_params=_size(max_size, "max_size"),
        native_only=not all_formats,
    )
    if fits is not None:
        rows = fitting_profiles(load_hardware(fits), rows)
    if json_out:
        print_json({"models": [model_row_json(m) for m in rows]})
        return
    table = new_table(
        "id",
        "family",
        "format",
        "total",
        "active",
        "resident GB",
        "vs card",
        left=("id", "family", "format"),
        no_wrap=("id",),
    )
    for m in rows:
        total, _ = m.published_difference()
        table.add_row(
            m.id,
            m.family_name,
            m.weight_format,
            f"{(m.total_params or 0) / 1e9:,.2f}B",
            f"{(m.active_params or 0) / 1e9:,.2f}B",
            f"{m.adapter.weights.resident / GB:,.1f}",
            "-" if total is None else f"{total:+.2%}",
        )
    console.print(table)
    more = "" if all_formats else " at their native format; --all-formats adds the quantized ones"
    console.print(f"{len(rows)} profiles{more}")


@command(
    "show",
    argument("model_id", "Catalog profile id."),
    option("explain", bool, False, "The derivation of every quantity from the config.", "--explain"),
    JSON,
    parent=models_app,
    help="One profile with its audit: source, revision, counts against the model card.",
    examples=("servebound models show qwen3-8b", "servebound models show llama-3.1-70b-fp8 --explain --json"),
)
def models_show(model_id: str, explain: bool, json_out: bool) -> None:
    m = get_model(model_id)
    data = model_row_json(m)
    if json_out:
        if explain:
            data["steps"] = steps_json(m.imported.steps)
        print_json(data)
        return
    console.print(line(strong(m.name), f" ({m.id}), family {m.family_name}"))
    src = data["source"]
    console.print(
        f"source: {src['repository']} config.json, revision {src['revision'] or 'n/a'} ({src['verification']})"
    )
    table = new_table("quantity", "servebound", "model card", right=("servebound", "model card"))
    pub_total, pub_active = data["published_total_params"], data["published_active_params"]
    table.add_row(
        "total params",
        f"{(m.total_params or 0) / 1e9:,.3f}B",
        "-" if pub_total is None else f"{pub_total / 1e9:,.3f}B",
    )
    table.add_row(
        "active params",
        f"{(m.active_params or 0) / 1e9:,.3f}B",
        "-" if pub_active is None else f"{pub_active / 1e9:,.3f}B",
    )
    table.add_row("W_resident", f"{data['resident_gb']:,.3f} GB", "")
    table.add_row("W_active", f"{data['active_gb']:,.3f} GB", "")
    table.add_row(
        "KV per token (alloc)", f"{data['kv_bytes_per_token']:,.0f} B", f"at {m.adapter.kv_precision}"
    )
    console.print(table)
    if data["published_source"]:
        console.print(f"model card: {data['published_source']}")
    if explain:
        console.print(steps_table(m.imported.steps, "from config.json"))


def _render_rank(
    rows: list[RankRow], *, by_model: bool, prompt: int, limit: int, order: str, systems: dict[str, str]
) -> None:
    """The rank as a table: models on one machine (``by_model``) or machines for one model, with the
    footnotes its marks need and the workload it assumed."""
    first = "model" if by_model else "hardware"
    columns = [first, "verdict"]
    columns.append("W_res GB" if by_model else "class")
    columns += ["format", "single tok/s", "b*", "useful tok/s", f"TTFT @{prompt:,}", "tok/s/kUSD", "USD/Mtok"]
    columns.append("expected tok/s")  # the band of one session (decode's `expected`): an estimate
    wait = f"TTFT @{prompt:,}"  # its "beyond context" kept whole beside the band's column
    table = new_table(*columns, left=(first, "verdict", "class", "format"), no_wrap=(first, wait))
    shown = rows[:limit]
    for r in shown:
        d = r.decode
        label = r.model.id if by_model else r.hardware.id + (" †" if r.hardware.id in systems else "")
        cells = [label, VERDICT_WORDS[d.verdict.value]]
        cells.append(f"{r.model.weights.resident / GB:,.1f}" if by_model else r.hardware_group or "-")
        if r.ttft_s is not None:
            wait = fmt_wait(r.ttft_s) + ("" if r.prefill and r.prefill.compute_tok_s else "*")
        elif r.prompt_beyond_context:
            wait = "beyond context"
        else:
            wait = "-"
        cells += [
            d.format_support.value,
            fmt_rate(d.single_session_tok_s, ""),
            "-" if d.batch_star is None else f"{d.batch_star:,}",
            fmt_rate(d.aggregate_tok_s, ""),
            wait,
            "-" if r.tok_s_per_kusd is None else f"{r.tok_s_per_kusd:,.3g}",
            _per_mtok(r),
        ]
        cells.append(band_cell(d.expected))
        table.add_row(*cells)
    console.print(table)
    if any(r.prefill is not None and r.prefill.compute_tok_s is None for r in shown):
        console.print(
            "* no compute rate bounds the model's arithmetic modes on this row: the wait shown is the memory side only"
        )
    if any(r.prefill is not None and r.prefill.compute_note and r.prefill.compute_tok_s for r in shown):
        console.print(
            "Some waits charge a mode the row lacks at another rate (the fastest it publishes, or the mode "
            "engines unpack to): see prefill --json's compute_note"
        )
    if any(r.hardware.id in systems for r in shown):
        members = ", ".join(
            f"{i} = {systems[i]}" for i in dict.fromkeys(r.hardware.id for r in shown) if i in systems
        )
        console.print(
            "† ideal sum of several devices (capacity, bandwidth and compute added, perfect parallelism, "
            f"no interconnect cost): an upper bound no real deployment reaches; {members}"
        )
    console.print(
        f"{len(rows)} rows, {len(shown)} shown, ordered by {order} within each verdict; workload: "
        + rank_workload_text(rows)
    )
    console.print(expected_column_text(r.decode.expected_from for r in shown))
    if any(r.usd_per_mtok_output is not None for r in shown):
        console.print(
            "USD/Mtok: the row's price per hour (on-demand rental where the catalog has one, else the owned "
            "cost of its purchase price; --json's usd_per_hour and price_basis) over its useful aggregate at b*"
        )


def _per_mtok(r: RankRow) -> str:
    """The row's USD per million output tokens at b*, or why there is none."""
    if r.usd_per_mtok_output is not None:
        return fmt_money(r.usd_per_mtok_output)
    return "no price" if r.usd_per_hour is None else "-"


def rank_workload_text(rows: list[RankRow]) -> str:
    """The workload each row was computed with, as decode resolved it: a value all rows share once, a
    value that varies (each machine's overhead, contexts capped at each model's limit) as its range."""
    values: dict[str, list[float]] = {
        "overhead_gb": [r.decode.workload.overhead_bytes / GB for r in rows],
        "alloc_context_tokens": [r.decode.workload.alloc_context_tokens for r in rows],
        "read_context_tokens": [r.decode.workload.read_context_tokens for r in rows],
        "floor_tok_s": [r.decode.workload.floor_tok_s for r in rows],
    }
    why = {
        "overhead_gb": "each machine's",
        "alloc_context_tokens": "capped at each model's context",
        "read_context_tokens": "capped at each model's context",
    }
    parts = []
    for key, seen in values.items():
        low, high = min(seen), max(seen)
        if low == high:
            parts.append(f"{key}={low:g}")
        else:
            parts.append(f"{key}={low:g} to {high:g} per row ({why.get(key, 'varies')})")
    return ", ".join(parts)


@command(
    "rank",
    option("hardware", str, None, "Rank catalog models on this hardware.", "--hardware", "-H"),
    option("model", str, None, "Rank catalog hardware for this model.", "--model", "-m"),
    option(
        "prompt",
        int,
        DEFAULT_RANK_PROMPT_TOKENS,
        "Prompt tokens for the first-token wait; a model whose context is shorter shows none.",
        "--prompt",
        unit="tokens",
        minimum=1,
        maximum=MAX_EDGE_TOKENS,
    ),
    option(
        "sort",
        str,
        None,
        "Order within each verdict: size (largest model first; default with --hardware), "
        "useful (default with --model), single, ttft, per-dollar (--model only).",
        "--sort",
    ),
    option("per_dollar", bool, False, "With --model: order by useful tok/s per 1,000 USD.", "--per-dollar"),
    option("all_formats", bool, False, "With --hardware: every weight format.", "--all-formats"),
    option(
        "unsupported",
        bool,
        False,
        "Also list weight formats the device cannot run (format_support unsupported); by default "
        "only native and dequantized formats are ranked.",
        "--unsupported",
    ),
    option(
        "hardware_group",
        str,
        None,
        "With --model: only machines of this class (consumer, workstation, apple, datacenter, "
        "systems, files).",
        "--class",
    ),
    option("limit", int, 30, "Rows to print, at least 1 (JSON prints all).", "--limit"),
    flags("flags", ContextFlags),
    JSON,
    examples=(
        "servebound rank --hardware nvidia-rtx-4090 --limit 10",
        "servebound rank --model qwen3-8b --class consumer --json",
    ),
)
def rank_command(
    hardware: str | None,
    model: str | None,
    prompt: int,
    sort: str | None,
    per_dollar: bool,
    all_formats: bool,
    unsupported: bool,
    hardware_group: str | None,
    limit: int,
    flags: ContextFlags,
    json_out: bool,
) -> None:
    if (hardware is None) == (model is None):
        raise InputError("rank", "give exactly one of --hardware ID or --model ID")
    if limit < 1:
        raise InputError("limit", f"must be >= 1 row (got {limit}); --json prints every row")
    if per_dollar and hardware is not None:
        raise InputError("per_dollar", "applies to --model (machines have prices, models do not)")
    if all_formats and model is not None:
        raise InputError("all_formats", "applies to --hardware (it adds every weight format of each model)")
    check_hardware_group(hardware_group, "class")
    if hardware_group is not None and hardware is not None:
        raise InputError("class", "applies to --model (it keeps the machines of one class)")
    if per_dollar and sort not in (None, "per-dollar"):
        raise InputError("sort", f"--per-dollar is --sort per-dollar; give one of them (got --sort {sort})")
    order = sort or ("per-dollar" if per_dollar else "size" if hardware is not None else "useful")
    if order not in RANK_SORTS:
        raise InputError("sort", f"unknown order {order!r}; use one of {', '.join(RANK_SORTS)}")
    if order == "per-dollar" and hardware is not None:
        raise InputError("sort", "per-dollar applies to --model (machines have prices, models do not)")
    workload = make_workload(flags)
    if prompt > workload.stated.alloc_context_tokens:
        raise InputError(
            "prompt",
            f"{prompt:,} tokens is more than the {workload.stated.alloc_context_tokens:,} tokens of KV each "
            "session holds; raise --alloc-context to at least the prompt",
        )
    systems: dict[str, str] = {}
    usual: tuple[str, ...] = ()
    if hardware is not None:
        ranked = machine(hardware)
        profiles = list_models(native_only=not all_formats)
        if not all_formats:  # the formats people run on the device, where its usual engine is known
            found = usual_profile_ids(ranked.hardware, workload)
            if found is not None:
                usual, kept = found
                profiles = [m for m in list_models() if m.id in kept]
        rows = rank_models(
            ranked,
            [m.adapter for m in profiles],
            workload,
            prompt_tokens=prompt,
            sort=order,
            runnable_only=not unsupported,
        )
    else:
        mdl = load_model(model or "")
        catalog = list_hardware()
        systems = {r.id: f"{r.system.count} x {r.system.member_id}" for r in catalog if r.system is not None}
        rows = rank_hardware(
            mdl,
            catalog,
            workload,
            prompt_tokens=prompt,
            sort=order,
            runnable_only=not unsupported,
            hardware_group=hardware_group,
        )
    if json_out:
        print_json({"sort": order, "engines": list(usual), "rows": [rank_row_json(r) for r in rows]})
        return
    if usual:
        console.print(
            f"formats: each model's heaviest that {said_engines(usual)} runs here and that clears the floor "
            "(as fit), else its lightest; --all-formats ranks every format"
        )
    _render_rank(
        rows, by_model=hardware is not None, prompt=prompt, limit=limit, order=order, systems=systems
    )
