"""`servebound fit`: the models this machine serves at the floor, best first, in the format and engine
each would use."""

from __future__ import annotations

from servebound.catalog.hardware import get_hardware
from servebound.catalog.models import list_models
from servebound.cli.common import JSON, ContextFlags, command, declared, option, workload
from servebound.cli.output import console, new_table, print_json
from servebound.errors import InputError
from servebound.inputs.engine_choice import usual_engines
from servebound.inputs.resolve import CPU_ONLY_ID, hardware_ref
from servebound.inputs.scenario import load_hardware, make_workload
from servebound.questions.fit import fit_models
from servebound.runs.band import check_engine
from servebound.views.band_view import band_cell
from servebound.views.report import fmt_rate, hardware_json
from servebound.views.rows import fit_row_json, said_engines


@command(
    "fit",
    option(
        "hardware",
        str,
        "auto",
        "This machine (auto, the default: detected), or a file or catalog id.",
        "--hardware",
        "-H",
    ),
    declared("engine"),
    option("limit", int, 20, "Rows to print, at least 1 (JSON prints all).", "--limit"),
    workload("context"),  # fit picks each model's engine: --engine is its own
    JSON,
    examples=("servebound fit -H nvidia-rtx-4090 --limit 5", "servebound fit -H apple-m4-max-128gb --json"),
)
def fit_command(hardware: str, engine: str | None, limit: int, flags: ContextFlags, json_out: bool) -> None:
    if limit < 1:
        raise InputError("limit", f"must be at least 1 (got {limit})")
    engine = check_engine(engine)
    ref = hardware_ref(hardware)
    hw = load_hardware(ref)
    try:
        vendor: str | None = get_hardware(hw.id).vendor
    except InputError:
        vendor = None  # a hardware file: only llama.cpp's files are assumed to run
    workload = make_workload(flags)
    usual = () if engine is not None else usual_engines(hw.id)
    rows, considered = fit_models(hw, vendor, list_models(), workload, engine=engine, usual=usual)
    if json_out:
        print_json(
            {
                "hardware": hardware_json(hw),
                "hardware_sources": dict(hw.sources),
                "models_considered": considered,
                "engines": [engine] if engine is not None else list(usual),
                "models": [fit_row_json(r) for r in rows],
            }
        )
        return
    console.print(
        f"{hw.name} ({hw.id}) serves {len(rows)} of {considered} catalog models at the floor of "
        f"{workload.stated.floor_tok_s:g} tok/s per session, largest first:"
    )
    if hw.id == CPU_ONLY_ID:  # no GPU: say where the memory bandwidth came from
        console.print(f"no GPU found; bandwidth: {hw.sources['bandwidth_gb_per_s']}")
    if engine is None and usual:
        console.print(
            f"formats: each model's heaviest that {said_engines(usual)} runs here (--engine E for another)"
        )
    units = ("weights (GB)", "single (tok/s)", "aggregate at b* (tok/s)", "expected tok/s")
    table = new_table("model", "format", "engine", *units, right=units)
    for row in rows[:limit]:
        d = row.decode
        table.add_row(
            row.profile.base_id,
            row.profile.weight_format,
            row.engine,
            f"{row.profile.adapter.weights.resident / 1e9:,.3f}",
            fmt_rate(d.single_session_tok_s, ""),
            fmt_rate(d.aggregate_tok_s, ""),
            band_cell(d.expected),
        )
    console.print(table)
    console.print(
        "per model the heaviest format an engine runs here that clears the floor; ceilings are bounds; "
        "expected tok/s is p10-p90 of one session, an estimate from published runs of that engine on this "
        f"hardware class (- where under 5 runs); {len(rows) - min(limit, len(rows))} more rows with --limit "
        "or --json"
    )
