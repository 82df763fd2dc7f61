"""The records behind commands' own inputs, declared with their bounds once (``given``): the CLI makes
their flags from them, the JSON API its parameters' bounds, and building one in Python checks it
(``check_record``), so every surface meets the same limits, named in the same message.

Bounds are those of any real deployment: a plan's traffic from one user to a billion, a first-token
budget from 0.1 ms to a day, a device-hour price from a hundredth of a cent to ten million dollars.
"""

from __future__ import annotations

from dataclasses import MISSING, dataclass

from servebound.core.workload import DEFAULT_FLOOR_TOK_PER_S
from servebound.inputs.declare import check_record
from servebound.inputs.workload import MAX_EDGE_TOK_S, MAX_EDGE_TOKENS, MAX_TTFT_S, MIN_TTFT_S, given

#: The largest traffic a plan sizes (beyond any service today): fleets of millions of systems at most.
MAX_PLAN_USERS, MAX_PLAN_RPS = 1e9, 1e7
#: The slowest arrival a plan sizes: one request every 1,000 s (below it the fleet is one system idle).
MIN_PLAN_RPS = 1e-3
#: A price per device- or system-hour: a hundredth of a cent up to ten million dollars.
MIN_USD_PER_HOUR, MAX_USD_PER_HOUR = 1e-4, 1e7

_TOKENS = {"minimum": 1, "maximum": MAX_EDGE_TOKENS, "unit": "tokens"}


@dataclass(frozen=True)
class PlanTraffic:
    """`plan`'s traffic and price inputs (``--prompt`` .. ``--usd-per-hour``): the keywords of
    ``run_plan``, checked when built."""

    prompt_tokens: int = given(MISSING, "L: prompt tokens per request.", flags=("--prompt",), **_TOKENS)
    output_tokens: int = given(MISSING, "G: output tokens per request.", **_TOKENS)
    users: float | None = given(
        None, "N concurrent users, each streaming an answer.", minimum=1, maximum=MAX_PLAN_USERS, unit="users"
    )
    requests_per_s: float | None = given(
        None, "lambda: requests arriving per second.", minimum=MIN_PLAN_RPS, maximum=MAX_PLAN_RPS, unit="1/s"
    )
    floor_tok_s: float = given(
        DEFAULT_FLOOR_TOK_PER_S,
        "r*: minimum useful tok/s per session.",
        flags=("--floor",),
        minimum=0,
        exclusive_minimum=True,
        maximum=MAX_EDGE_TOK_S,
        unit="tok/s",
    )
    ttft_budget_s: float | None = given(
        None,
        "tau*: first-token budget in seconds.",
        flags=("--ttft-budget",),
        minimum=MIN_TTFT_S,
        maximum=MAX_TTFT_S,
        unit="s",
    )
    usd_per_device_hour: float | None = given(
        None,
        "Price of one device-hour, for $/h and $/Mtok.",
        flags=("--usd-per-hour",),
        minimum=MIN_USD_PER_HOUR,
        maximum=MAX_USD_PER_HOUR,
        unit="USD/h",
    )

    def __post_init__(self) -> None:
        check_record(self)
