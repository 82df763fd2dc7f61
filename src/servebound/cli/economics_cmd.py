"""`servebound economics ...`: the serving-economics quantities, each printed as its formula with the
numbers substituted (or as JSON)."""

from __future__ import annotations

from typing import Any

from servebound.cli.common import HARDWARE_HELP, JSON, REQUIRED, command, declared, group, option
from servebound.cli.output import console, line, print_json, strong
from servebound.inputs.files import load_tiers_file
from servebound.inputs.scenario import load_hardware, load_model, make_workload
from servebound.questions.economics import (
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

economics_app = group(
    "economics",
    examples=(
        "servebound economics balance -H nvidia-b200",
        "servebound economics drain -H nvidia-dgx-spark --json",
    ),
)

#: A quantity above zero (an exclusive minimum), as the JSON API's gt=0.
_ABOVE_ZERO: dict[str, Any] = {"minimum": 0, "exclusive_minimum": True}
HARDWARE_OPTIONAL = option("hardware", str, None, HARDWARE_HELP, "--hardware", "-H")
BANDWIDTH = option(
    "bandwidth_gb_per_s", float, None, "R in GB/s (instead of --hardware).", "--bandwidth-gb-per-s"
)


def show(items: list[Shown], json_out: bool) -> None:
    if json_out:
        print_json({"quantities": [item.json() for item in items]})
        return
    for item in items:
        console.print(line(strong(item.name), f": {item.formula}"))
        console.print(f"  {item.substituted}")
        if item.note:
            console.print(f"  {item.note}")


@command(
    "balance",
    option("hardware", str, REQUIRED, "Hardware file, catalog id or NxID.", "--hardware", "-H"),
    option(
        "bytes_per_weight", float, 0.5, "e_w: bytes per weight fetched (0.5 for FP4).", "--bytes-per-weight"
    ),
    option("model", str, None, "A model: add its balance batch three ways.", "--model", "-m"),
    declared("read_context"),
    declared("alloc_context"),
    JSON,
    parent=economics_app,
    help="F / (2R) multiplies per weight per mode, and a model's balance batch.",
    examples=(
        "servebound economics balance -H nvidia-b200",
        "servebound economics balance -H nvidia-h100-sxm -m llama-3.1-70b --bytes-per-weight 1 --json",
    ),
)
def balance_command(
    hardware: str,
    bytes_per_weight: float,
    model: str | None,
    read_context: int | None,
    alloc_context: int | None,
    json_out: bool,
) -> None:
    hw = load_hardware(hardware)
    mdl = load_model(model) if model else None
    workload = make_workload(
        overhead_gb=None, alloc_context=alloc_context, read_context=read_context, floor_tok_s=0.0
    )
    show(balance(hw, bytes_per_weight, model=mdl, workload=workload), json_out)


@command(
    "drain",
    HARDWARE_OPTIONAL,
    option("capacity_gb", float, None, "C in GB (instead of --hardware).", "--capacity-gb"),
    BANDWIDTH,
    JSON,
    parent=economics_app,
    help="C / R: the time to read all of memory once, the natural step time.",
    examples=(
        "servebound economics drain -H nvidia-dgx-spark",
        "servebound economics drain --capacity-gb 80 --bandwidth-gb-per-s 3350 --json",
    ),
)
def drain_command(
    hardware: str | None, capacity_gb: float | None, bandwidth_gb_per_s: float | None, json_out: bool
) -> None:
    hw = load_hardware(hardware) if hardware is not None else None
    show([drain_of(hw, capacity_gb, bandwidth_gb_per_s)], json_out)


@command(
    "trains",
    option("batch", float, REQUIRED, "b: sessions per departing batch.", "--batch"),
    option("steps_per_s", float, None, "Departures per second.", "--steps-per-s"),
    option("interval_ms", float, None, "tau: ms between departures.", "--interval-ms"),
    JSON,
    parent=economics_app,
    help="Batches departing every tau: b / tau tokens per second, worst-case queueing 2 tau.",
    examples=(
        "servebound economics trains --batch 64 --interval-ms 20",
        "servebound economics trains --batch 256 --steps-per-s 40 --json",
    ),
)
def trains_command(
    batch: float, steps_per_s: float | None, interval_ms: float | None, json_out: bool
) -> None:
    show(trains_of(batch, steps_per_s, interval_ms), json_out)


@command(
    "breakpoint",
    option("active_params", float, REQUIRED, "P_active of the served model.", "--active-params"),
    option("breakpoint_tokens", float, REQUIRED, "L*: the surcharge's context.", "--breakpoint-tokens"),
    HARDWARE_OPTIONAL,
    option("mode", str, "fp8", "The hardware's arithmetic mode for F.", "--mode"),
    option("tflops", float, None, "F in TFLOP/s (instead of --hardware).", "--tflops"),
    BANDWIDTH,
    JSON,
    parent=economics_app,
    help="KV bytes per token that put the KV/compute crossover at a long-context surcharge breakpoint.",
    examples=(
        "servebound economics breakpoint --active-params 37e9 --breakpoint-tokens 200000 -H nvidia-h100-sxm",
        "servebound economics breakpoint --active-params 17e9 --breakpoint-tokens 128000 --tflops 1979 "
        "--bandwidth-gb-per-s 3350 --json",
    ),
)
def breakpoint_command(
    active_params: float,
    breakpoint_tokens: float,
    hardware: str | None,
    mode: str,
    tflops: float | None,
    bandwidth_gb_per_s: float | None,
    json_out: bool,
) -> None:
    hw = load_hardware(hardware) if hardware is not None else None
    shown = breakpoint_of(active_params, breakpoint_tokens, hw, mode, tflops, bandwidth_gb_per_s)
    show([shown], json_out)


@command(
    "price-ratio",
    option("output_usd", float, REQUIRED, "Output price, USD per million tokens.", "--output-usd"),
    option("input_usd", float, REQUIRED, "Input price, USD per million tokens.", "--input-usd"),
    JSON,
    parent=economics_app,
    help="How memory-bound decode is, read off the output/input price ratio.",
    examples=(
        "servebound economics price-ratio --output-usd 15 --input-usd 3",
        "servebound economics price-ratio --output-usd 10 --input-usd 2.5 --json",
    ),
)
def price_ratio_command(output_usd: float, input_usd: float, json_out: bool) -> None:
    show([price_ratio(output_usd, input_usd)], json_out)


@command(
    "cache-tier",
    option("hold_s", float, REQUIRED, "How long a cache is kept alive, in seconds.", "--hold-s"),
    option(
        "tiers",
        str,
        None,
        "A TOML or JSON file of memory tiers ([[tier]] name, capacity_gb, bandwidth_gb_per_s, device, "
        "source) in place of the built-in rows.",
        "--tiers",
    ),
    JSON,
    parent=economics_app,
    help="The memory tier whose drain time matches a cache hold time, beside the lecture's reading.",
    examples=(
        "servebound economics cache-tier --hold-s 300",
        "servebound economics cache-tier --hold-s 3600 --json",
    ),
)
def cache_tier_command(hold_s: float, tiers: str | None, json_out: bool) -> None:
    show(cache_tier(hold_s) if tiers is None else cache_tier(hold_s, load_tiers_file(tiers)), json_out)


@command(
    "training",
    option(
        "traffic_tok_s",
        float,
        REQUIRED,
        "Inference traffic in tok/s.",
        "--traffic-tok-s",
        **_ABOVE_ZERO,
        maximum=1e15,
    ),
    option(
        "life_days", float, REQUIRED, "Deployment life in days.", "--life-days", **_ABOVE_ZERO, maximum=1e5
    ),
    option(
        "active_params",
        float,
        REQUIRED,
        "N: active parameters.",
        "--active-params",
        **_ABOVE_ZERO,
        maximum=1e15,
    ),
    option(
        "rl_flops",
        float,
        4.0,
        "c_rl: RL FLOPs per parameter per token, 2 to 6.",
        "--rl-flops",
        minimum=2,
        maximum=6,
    ),
    option(
        "rl_efficiency",
        float,
        0.3,
        "eta: RL's efficiency relative to training (a fraction, at most 1).",
        "--rl-efficiency",
        **_ABOVE_ZERO,
        maximum=1,
    ),
    JSON,
    parent=economics_app,
    help="Equal-cost pre-training, RL and inference tokens, and over-training against 20 tokens/param.",
    examples=(
        "servebound economics training --traffic-tok-s 1e6 --life-days 180 --active-params 37e9",
        "servebound economics training --traffic-tok-s 5e5 --life-days 365 --active-params 8e9 --rl-flops 6 "
        "--json",
    ),
)
def training_command(
    traffic_tok_s: float,
    life_days: float,
    active_params: float,
    rl_flops: float,
    rl_efficiency: float,
    json_out: bool,
) -> None:
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


@command(
    "lecture",
    option(
        "hardware",
        str,
        LECTURE_BLACKWELL,
        "The Blackwell row for the FP4 balance and FP8 rate.",
        "--hardware",
        "-H",
    ),
    JSON,
    parent=economics_app,
    help="The lecture's own worked numbers, recomputed.",
    examples=("servebound economics lecture", "servebound economics lecture --json"),
)
def lecture_command(hardware: str, json_out: bool) -> None:
    show(lecture(load_hardware(hardware)), json_out)
