"""`servebound economics ...`: the serving-economics quantities, each printed as its formula with the
numbers substituted (or as JSON)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from servebound.api import load_hardware, load_model, make_workload
from servebound.cli.common import DEFAULT_ALLOC, DEFAULT_READ, HARDWARE_HELP, AllocOpt, JsonOpt, ReadOpt, app
from servebound.cli.output import console, line, print_json, strong
from servebound.views.economics_view import (
    LECTURE_BLACKWELL,
    Shown,
    balance,
    breakpoint_of,
    cache_tier,
    drain_of,
    lecture,
    price_ratio,
    training,
    trains_of,
)

economics_app = typer.Typer(name="economics", no_args_is_help=True)
app.add_typer(economics_app, name="economics")

HardwareOptional = Annotated[str | None, typer.Option("--hardware", "-H", help=HARDWARE_HELP)]
BandwidthOpt = Annotated[
    float | None, typer.Option("--bandwidth-gb-per-s", help="R in GB/s (instead of --hardware).")
]


def show(items: list[Shown], json_out: bool) -> None:
    if json_out:
        print_json({"quantities": [item.json() for item in items]})
        return
    for item in items:
        console.print(line(strong(item.name), f": {item.formula}"))
        console.print(f"  {item.substituted}")
        if item.note:
            console.print(f"  {item.note}")


@economics_app.command("balance")
def balance_command(
    hardware: Annotated[str, typer.Option("--hardware", "-H", help="Hardware file, catalog id or NxID.")],
    bytes_per_weight: Annotated[
        float, typer.Option("--bytes-per-weight", help="e_w: bytes per weight fetched (0.5 for FP4).")
    ] = 0.5,
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="A model: add its balance batch three ways.")
    ] = None,
    read_context: ReadOpt = DEFAULT_READ,
    alloc_context: AllocOpt = DEFAULT_ALLOC,
    json_out: JsonOpt = False,
) -> None:
    """F / (2R) multiplies per weight per mode, and a model's balance batch."""
    hw = load_hardware(hardware)
    mdl = load_model(model) if model else None
    workload = make_workload(
        overhead_gb=None, alloc_context=alloc_context, read_context=read_context, floor_tok_s=0.0
    )
    show(balance(hw, bytes_per_weight, model=mdl, workload=workload), json_out)


@economics_app.command("drain")
def drain_command(
    hardware: HardwareOptional = None,
    capacity_gb: Annotated[
        float | None, typer.Option("--capacity-gb", help="C in GB (instead of --hardware).")
    ] = None,
    bandwidth_gb_per_s: BandwidthOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """C / R: the time to read all of memory once, the natural step time."""
    hw = load_hardware(hardware) if hardware is not None else None
    show([drain_of(hw, capacity_gb, bandwidth_gb_per_s, cli=True)], json_out)


@economics_app.command("trains")
def trains_command(
    batch: Annotated[float, typer.Option("--batch", help="b: sessions per departing batch.")],
    steps_per_s: Annotated[float | None, typer.Option("--steps-per-s", help="Departures per second.")] = None,
    interval_ms: Annotated[
        float | None, typer.Option("--interval-ms", help="tau: ms between departures.")
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """Batches departing every tau: b / tau tokens per second, worst-case queueing 2 tau."""
    show(trains_of(batch, steps_per_s, interval_ms, cli=True), json_out)


@economics_app.command("breakpoint")
def breakpoint_command(
    active_params: Annotated[float, typer.Option("--active-params", help="P_active of the served model.")],
    breakpoint_tokens: Annotated[
        float, typer.Option("--breakpoint-tokens", help="L*: the surcharge's context.")
    ],
    hardware: HardwareOptional = None,
    mode: Annotated[str, typer.Option("--mode", help="The hardware's arithmetic mode for F.")] = "fp8",
    tflops: Annotated[
        float | None, typer.Option("--tflops", help="F in TFLOP/s (instead of --hardware).")
    ] = None,
    bandwidth_gb_per_s: BandwidthOpt = None,
    json_out: JsonOpt = False,
) -> None:
    """KV bytes per token that put the KV/compute crossover at a long-context surcharge breakpoint."""
    hw = load_hardware(hardware) if hardware is not None else None
    shown = breakpoint_of(active_params, breakpoint_tokens, hw, mode, tflops, bandwidth_gb_per_s, cli=True)
    show([shown], json_out)


@economics_app.command("price-ratio")
def price_ratio_command(
    output_usd: Annotated[float, typer.Option("--output-usd", help="Output price, USD per million tokens.")],
    input_usd: Annotated[float, typer.Option("--input-usd", help="Input price, USD per million tokens.")],
    json_out: JsonOpt = False,
) -> None:
    """How memory-bound decode is, read off the output/input price ratio."""
    show([price_ratio(output_usd, input_usd)], json_out)


@economics_app.command("cache-tier")
def cache_tier_command(
    hold_s: Annotated[float, typer.Option("--hold-s", help="How long a cache is kept alive, in seconds.")],
    tiers: Annotated[
        Path | None,
        typer.Option(
            "--tiers",
            help="A TOML or JSON file of memory tiers ([[tier]] name, capacity_gb, bandwidth_gb_per_s, "
            "device, source) in place of the built-in rows.",
        ),
    ] = None,
    json_out: JsonOpt = False,
) -> None:
    """The memory tier whose drain time matches a cache hold time, beside the lecture's reading."""
    from servebound.inputs.files import load_tiers_file

    show(cache_tier(hold_s) if tiers is None else cache_tier(hold_s, load_tiers_file(tiers)), json_out)


@economics_app.command("training")
def training_command(
    traffic_tok_s: Annotated[float, typer.Option("--traffic-tok-s", help="Inference traffic in tok/s.")],
    life_days: Annotated[float, typer.Option("--life-days", help="Deployment life in days.")],
    active_params: Annotated[float, typer.Option("--active-params", help="N: active parameters.")],
    rl_flops: Annotated[
        float, typer.Option("--rl-flops", help="c_rl: RL FLOPs per parameter per token, 2 to 6.")
    ] = 4.0,
    rl_efficiency: Annotated[
        float, typer.Option("--rl-efficiency", help="eta: RL's efficiency relative to training.")
    ] = 0.3,
    json_out: JsonOpt = False,
) -> None:
    """Equal-cost pre-training, RL and inference tokens, and over-training against 20 tokens/param."""
    show(
        training(
            traffic_tok_s,
            life_days,
            active_params,
            rl_flops_per_param_token=rl_flops,
            rl_efficiency=rl_efficiency,
        ),
        json_out,
    )


@economics_app.command("lecture")
def lecture_command(
    hardware: Annotated[
        str, typer.Option("--hardware", "-H", help="The Blackwell row for the FP4 balance and FP8 rate.")
    ] = LECTURE_BLACKWELL,
    json_out: JsonOpt = False,
) -> None:
    """The lecture's own worked numbers, recomputed."""
    show(lecture(load_hardware(hardware)), json_out)
