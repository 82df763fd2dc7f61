"""The lecture's asides, in servebound's words, each number computed from the lecture's stated inputs
(``questions.economics.LECTURE`` and the few below) and the core's economics functions.

Each aside is (heading, sentence). The economics page shows them under "The lecture's asides".
"""

from __future__ import annotations

import math

from servebound.core import economics as econ
from servebound.core.formats import format_words
from servebound.core.hardware import Hardware
from servebound.questions.economics import LECTURE, LECTURE_BREAKPOINT_MODE, _g

#: Inputs the asides take from the lecture's text, as it states them.
ASIDE_INPUTS: dict[str, float] = {
    # "hundreds of millions of tokens per second worldwide" for a large provider's traffic
    "provider_low_tok_per_s": 100e6,
    "provider_high_tok_per_s": 500e6,
    # the 2 kB check: one attention context shared by every layer, K and V, 128-dim heads, 8 KV heads,
    # one byte per element (an 8-bit cache)
    "kv_contexts": 1,
    "kv_head_dim": 128,
    "kv_heads": 8,
    "kv_bytes_per_element": 1.0,
    # contexts grew from about 8k (GPT-3) to 100-200k and have stayed there
    "early_context_tokens": 8_000,
    # "each rack hop would add on the order of milliseconds" per token, per stage crossed
    "hop_s": 1e-3,
    "pipeline_stages": 4,
    # the rumoured frontier pre-training run, against the lifetime inference tokens
    "pretrain_tokens": 150e12,
    # a model that may miss the frontier: the chance it is served its full life
    "frontier_chance": 0.5,
}


def _tokens(x: float) -> str:
    return f"{x / 1e12:,.0f}T" if x >= 1e12 else _g(x)


def asides(blackwell: Hardware) -> list[tuple[str, str]]:
    """The lecture's asides, each a heading and a sentence whose figures are computed here."""
    L, A = LECTURE, ASIDE_INPUTS
    rack = econ.train_schedule(L["batch"], 1.0 / L["steps_per_s"]).tok_s
    lo, hi = A["provider_low_tok_per_s"], A["provider_high_tok_per_s"]
    kv = A["kv_contexts"] * 2 * A["kv_head_dim"] * A["kv_heads"] * A["kv_bytes_per_element"]
    rate = blackwell.compute_rate(LECTURE_BREAKPOINT_MODE)
    active, breakpoint = L["frontier_active_params"], L["breakpoint_tokens"]
    out = [
        (
            "One rack against a provider",
            f"A rack running the economical batch of {_g(L['batch'])} sessions at {_g(L['steps_per_s'])} steps a "
            f"second emits {_g(rack)} tokens per second; a large provider's {_g(lo)} to {_g(hi)} tokens per "
            f"second is {_g(lo / rack)} to {_g(hi / rack)} racks, so one rack is about a thousandth of such a "
            "provider: scale pays, but any serious provider reaches it.",
        ),
        (
            "The 2 kB cache check",
            f"One attention context shared by every layer, keys and values, {A['kv_head_dim']:.0f}-dimension "
            f"heads and {A['kv_heads']:.0f} KV heads at {A['kv_bytes_per_element']:g} byte each hold "
            f"{A['kv_contexts']:.0f} x 2 x {A['kv_head_dim']:.0f} x {A['kv_heads']:.0f} = {_g(kv)} bytes per "
            "token: a real architecture can sit where a long-context price puts it.",
        ),
    ]
    if rate is not None:
        kappa = econ.kv_bytes_per_token_from_breakpoint(
            active, rate, blackwell.bandwidth_bytes_per_s, breakpoint
        )
        balanced = 2.0 * active * blackwell.bandwidth_bytes_per_s / (rate * kv)
        remat_s = 2.0 * active / rate
        out[-1] = (
            out[-1][0],
            out[-1][1]
            + f" The surcharge at {_g(breakpoint)} tokens reads as {_g(kappa)} bytes per token on the "
            f"{blackwell.name} ({format_words(LECTURE_BREAKPOINT_MODE)}), a little under that.",
        )
        out += [
            (
                "Why context lengths plateau",
                f"With {_g(kv)} bytes per token and {_g(active / 1e9)}B active parameters, reading the cache "
                f"costs as much as the arithmetic at 2 P_active R / (F kappa) = {_g(balanced)} tokens of context "
                f"on the {blackwell.name}: contexts that grew from about {_g(A['early_context_tokens'])} tokens "
                "to 100-200k and stopped there sit near that balanced cost point, and going far past it is a "
                "matter of memory bandwidth and capacity.",
            ),
            (
                "Rebuild or keep a cache",
                f"A token's cache can be rebuilt by a forward pass, 2 P_active = {_g(2 * active / 1e9)} GFLOP "
                f"({_g(remat_s * 1e6)} µs of the {blackwell.name} at {format_words(LECTURE_BREAKPOINT_MODE)}, nothing "
                f"held), or kept, {_g(kv)} bytes of some memory tier for as long as it is held; keeping wins "
                "while a tier can hold it about as long as its drain time (the cache-tier reading).",
            ),
        ]
    sqrt_cut = breakpoint / math.sqrt(breakpoint)
    drain = econ.drain_time_s(L["rubin_capacity_bytes"], L["rubin_bandwidth_bytes_per_s"])
    hops = (A["pipeline_stages"] - 1) * A["hop_s"]
    e = econ.equal_cost(L["traffic_tok_s"], L["life_days"] * econ.SECONDS_PER_DAY, active)
    derated = econ.equal_cost(
        L["traffic_tok_s"] * A["frontier_chance"], L["life_days"] * econ.SECONDS_PER_DAY, active
    )
    out += [
        (
            "Sparse attention",
            f"An attention that puts a square root on the cache term reads {_g(math.sqrt(breakpoint))} entries "
            f"instead of {_g(breakpoint)} at a {_g(breakpoint)}-token context, a {_g(sqrt_cut)}x cut; it is a "
            "one-time gain, and pushed sparser it costs quality: a way out, not a cure.",
        ),
        (
            "Rack hops in a pipeline",
            f"Each rack crossed adds on the order of {_g(A['hop_s'] * 1e3)} ms per token, and a sequential "
            f"decode crosses every stage: {A['pipeline_stages']:.0f} stages add {_g(hops * 1e3)} ms to a "
            f"{_g(drain * 1e3)} ms step ({_g(hops / drain * 100)} %), one reason frontier serving stays "
            "inside one scale-up domain.",
        ),
        (
            "Tokens in, tokens out",
            f"{_g(L['traffic_tok_s'])} tokens per second over {_g(L['life_days'])} days is "
            f"{_tokens(e.inference_tokens)} lifetime inference tokens, beside the rumoured "
            f"{_tokens(A['pretrain_tokens'])} of pre-training: the same size, as equal costs ask.",
        ),
        (
            "A model that may miss the frontier",
            f"If a model has a {A['frontier_chance']:.0%} chance of being served its full life, its expected "
            f"inference tokens fall to {_tokens(derated.inference_tokens)} and the over-training they justify "
            f"from {_g(e.over_training)}x to {_g(derated.over_training)}x Chinchilla: derate the inference "
            "term and train less far past the compute-optimal point.",
        ),
    ]
    return out
