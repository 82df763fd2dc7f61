"""Conformance vectors: inputs and the Python core's outputs, for any reimplementation of the math.

Each vector names a ``kind`` (``decode``, ``context_range``, ``prefill``, ``prefill_range`` or
``kv_inverse``), its inputs in the core's units (bytes, bytes/s, FLOP/s, tokens) and ``expected``, the
core's answer. The browser calculator (web/static/calc.js) must reproduce every one to 1e-9 relative;
the site publishes them at /conformance.json. The set is deterministic: catalog pairs at the default
workload, then random workloads over catalog pairs and synthetic adapters (batch > 1, speculation,
chunked prefill with batch and TTFT budgets, recurrent state, vanishing caches), covering every verdict.
"""

from __future__ import annotations

import functools
import json
import math
import random
from dataclasses import replace
from typing import Any, Literal

from servebound.catalog.hardware import list_hardware
from servebound.catalog.models import get_model, profile_ids
from servebound.core.decode import DecodeResult, decode
from servebound.core.decode_range import decode_context_range
from servebound.core.experts import ExpertTraffic
from servebound.core.fields import documented_json
from servebound.core.hardware import Hardware
from servebound.core.kv import KVShape
from servebound.core.model import Experts, ModelAdapter, PrefillShape, Weights
from servebound.core.prefill import PrefillResult, prefill, prefill_range
from servebound.core.workload import Speculation, Workload
from servebound.inputs.declared import AnyWorkload, DeclaredWorkload
from servebound.inputs.scenario import resolve_scenario
from servebound.views.calc_inputs import hardware_json, kv_json, model_json, workload_json
from servebound.views.report import range_ends_json, range_json

#: Relative tolerance a reimplementation must meet on every number.
TOLERANCE = 1e-9
FORMAT_VERSION = 1

_REMEDY_KEYS = (
    "capacity_needed_bytes",
    "max_overhead_bytes",
    "max_alloc_context_tokens",
    "batch1_tok_per_s",
    "max_read_context_tokens",
    "bandwidth_needed_bytes_per_s",
)


# --- outputs -------------------------------------------------------------------------------------


def decode_expected(r: DecodeResult) -> dict[str, Any]:
    """The documented decode fields under their JSON names (as ``decode --json`` writes them), and the
    remedies a failed gate has."""
    remedies = {k: getattr(r.remedies, k) for k in _REMEDY_KEYS if getattr(r.remedies, k) is not None}
    out = {k: v for k, v in documented_json(r).items() if k not in _NOT_PORTED}
    return {**out, "remedies": remedies}


#: Documented fields the browser port does not compute: the engine table's format verdict (the page
#: shows the server's); for prefill also the split of the time, the budget (an input) it was judged
#: against and the charged modes' wording.
_NOT_PORTED = ("format_support", "format_support_why", "nearest_fit")
_PREFILL_NOT_PORTED = (
    *_NOT_PORTED,
    "linear_time_s",
    "attention_time_s",
    "ttft_budget_s",
    "linear_mode_charged",
    "linear_mode_charged_why",
    "attention_mode_charged",
    "attention_mode_charged_why",
    "compute_note",
    "experts_touched",
    "unrestricted",
)


def prefill_expected(r: PrefillResult) -> dict[str, Any]:
    """The documented prefill fields the port computes (as ``prefill --json`` writes them), and whether
    b_mem was capped."""
    out = {k: v for k, v in documented_json(r).items() if k not in _PREFILL_NOT_PORTED}
    return {**out, "batch_mem_capped": r.batch_mem_capped}


def context_range_expected(hw: Hardware, model: ModelAdapter, w: Workload) -> tuple[Workload, dict[str, Any]]:
    rng = decode_context_range(hw, model, w)
    out: dict[str, Any] = {
        "verdict": rng.verdict.value,
        "max_read_context_tokens": rng.max_read_context_tokens,
        "limited_by": rng.limited_by.value if rng.limited_by else None,
        "floor_read_context_tokens": rng.floor_read_context_tokens,
        "single_session": None,
        "aggregate": None,
    }
    out.update(range_ends_json(rng))
    return rng.workload, out


# --- synthetic adapters for the corners catalog pairs rarely reach --------------------------------


def synthetic_models() -> list[ModelAdapter]:
    """Recurrent state only, a vanishing cache, a sliding window, a tiny MoE, a dense model whose
    per-token cache is lost next to its state (the KV inverse's bisection path)."""
    shape = PrefillShape(
        linear_active_params=2e9,
        attention_global_flops_per_pair=4 * 2048 * 8,
        attention_local_flops_per_pair=4 * 2048 * 16,
        attention_window_tokens=1024,
        kv_write_bytes_per_token=40_000.0,
    )
    dense = Weights.from_params(
        bytes_per_param=1.0, total_params=8e9, active_params=8e9, embedding_params=5e8
    )
    # MXFP4 experts beside BF16 attention: each part of P_lin,active charged at its own mode's rate.
    split = replace(shape, linear_mode="fp4", linear_params_by_mode=(("bf16", 0.5e9), ("fp4", 1.5e9)))
    moe = Weights.from_params(
        bytes_per_param=0.5, total_params=60e9, active_params=6e9, experts=Experts(64, 6)
    )
    recurrent = KVShape(0.0, 0.0, 0, 3.2e7)
    vanishing = KVShape(1e-9, 0.0, 0, 0.0)
    window = KVShape(16_000.0, 48_000.0, 1024, 0.0)
    lost = KVShape(1e-3, 0.0, 0, 1e16)
    return [
        ModelAdapter("syn-recurrent", "recurrent state only", dense, recurrent, recurrent, shape, 1_000_000),
        ModelAdapter("syn-vanishing", "vanishing cache", dense, vanishing, vanishing, shape, 500_000),
        ModelAdapter("syn-window", "sliding window", moe, window, window, shape, 131_072),
        ModelAdapter("syn-none", "no cache at all", moe, KVShape(), KVShape(), shape, None),
        ModelAdapter("syn-lost", "per-token size lost next to state", dense, lost, lost, None, None),
        ModelAdapter("syn-split", "linear math in two modes", moe, window, window, split, 131_072),
    ]


def _draft(rng: random.Random) -> ModelAdapter:
    total = rng.choice([0.5e9, 1e9, 3e9])
    kv = KVShape(rng.choice([8_000.0, 30_000.0]), 0.0, 0, 0.0)
    weights = Weights.from_params(
        bytes_per_param=rng.choice([0.5, 1.0, 2.0]), total_params=total, active_params=total
    )
    pre = PrefillShape(linear_active_params=total * 0.9, attention_global_flops_per_pair=4 * 2048 * 16)
    return ModelAdapter("draft", "draft", weights, kv, kv, pre if rng.random() < 0.5 else None)


def _random_workload(rng: random.Random, model: ModelAdapter, *, speculation: bool) -> Workload:
    limit = model.context_limit_tokens or 1_000_000
    alloc = int(math.exp(rng.uniform(math.log(16), math.log(min(limit, 1_000_000)))))
    spec = None
    if speculation:
        gamma = rng.randint(1, 8)
        if rng.random() < 0.5:
            alpha = rng.choice([0.0, rng.random(), 1.0])
            spec = Speculation(_draft(rng), gamma, Speculation.rho_from_acceptance(alpha, gamma), alpha)
        else:
            spec = Speculation(_draft(rng), gamma, rng.uniform(1.0, gamma + 1.0))
    return Workload(
        overhead_bytes=rng.choice([0.0, 2e9, 8e9, rng.uniform(0, 40e9)]),
        alloc_context_tokens=alloc,
        read_context_tokens=rng.randint(1, alloc),
        floor_tok_s=rng.choice([0.0, 5.0, 20.0, rng.uniform(0.1, 400.0)]),
        forced_batch=rng.choice([None, None, rng.randint(1, 4096)]),
        expert_traffic=rng.choice(list(ExpertTraffic)),
        speculation=spec,
        memory_only=rng.random() < 0.1,
    )


def _kv_inverse_cases(rng: random.Random) -> list[dict[str, Any]]:
    out = []
    for i in range(200):
        shape = KVShape(
            rng.choice([0.0, 1e-3, rng.uniform(1, 4e5)]),
            rng.choice([0.0, rng.uniform(1, 2e5)]),
            rng.choice([0, 0, rng.randint(1, 65_536)]),
            rng.choice([0.0, rng.uniform(0, 1e9), 1e16]),
        )
        budget = rng.choice([shape.state_bytes * 0.5, rng.uniform(0, 1e12), 1e16 + rng.uniform(0, 1e4)])
        if i % 10 == 0:
            budget = shape.bytes_at(rng.randint(0, 10**6))  # exactly on a context
        found = shape.max_context_within(budget)
        out.append(
            {
                "kind": "kv_inverse",
                "shape": kv_json(shape),
                "budget_bytes": budget,
                "expected": {"max_context": found},
            }
        )
    return out


def _vector(kind: str, hw: Hardware, model: ModelAdapter, w: Workload, **rest: Any) -> dict[str, Any]:
    """One vector: the calculator's inputs, then the kind's own (``rest``, ending with ``expected``)."""
    return {
        "kind": kind,
        "hardware": hardware_json(hw),
        "model": model_json(model),
        "workload": workload_json(w),
        **rest,
    }


@functools.cache
def conformance_text(seed: int = 12) -> str:
    """The vectors as the site publishes them (/conformance.json), built once per process."""
    return json.dumps(build_vectors(seed), allow_nan=False, separators=(",", ":"))


def build_vectors(seed: int = 12) -> dict[str, Any]:
    """The whole conformance set (deterministic for a seed)."""
    rng = random.Random(seed)
    hardware = [h.hardware for h in list_hardware()]
    catalog_models = [get_model(p).adapter for p in profile_ids()]
    synthetic = synthetic_models()
    vectors: list[dict[str, Any]] = []

    def add_decode(hw: Hardware, model: ModelAdapter, w: AnyWorkload) -> None:
        r = decode(hw, model, resolve_scenario(w, hardware=hw, model=model).workload)
        vectors.append(_vector("decode", hw, model, r.workload, expected=decode_expected(r)))

    # 1. Catalog pairs at the derivation's defaults (contexts capped at the model's limit).
    default = DeclaredWorkload(Workload(), fit_contexts_to_model=True)
    for model in catalog_models:
        for hw in rng.sample(hardware, 3):
            add_decode(hw, model, default)

    # 2. Random workloads over catalog pairs and the synthetic adapters.
    pool = catalog_models + synthetic * 20
    for i in range(900):
        model = rng.choice(pool)
        add_decode(rng.choice(hardware), model, _random_workload(rng, model, speculation=i % 4 == 0))

    # 3. Decode against read context.
    for i in range(150):
        model = rng.choice(pool)
        hw = rng.choice(hardware)
        w, expected = context_range_expected(hw, model, _random_workload(rng, model, speculation=i % 5 == 0))
        vectors.append(_vector("context_range", hw, model, w, expected=expected))

    # 4. Prefill: batch, chunked, searched batch with TTFT budgets.
    with_prefill = [m for m in pool if m.prefill is not None]
    for _ in range(500):
        model = rng.choice(with_prefill)
        hw = rng.choice(hardware)
        w = _random_workload(rng, model, speculation=False)
        prompt = rng.randint(1, w.alloc_context_tokens)
        if model.context_limit_tokens is not None:
            prompt = min(prompt, model.context_limit_tokens)
        batch: int | Literal["max"] = (
            "max" if rng.random() < 0.25 else rng.choice([1, 1, rng.randint(2, 512)])
        )
        chunk = rng.choice([None, rng.randint(1, 8192), rng.randint(1, prompt)])
        budget = rng.choice([None, None, 10 ** rng.uniform(-3, 3)])
        r = prefill(hw, model, prompt, workload=w, batch=batch, chunk_tokens=chunk, ttft_budget_s=budget)
        inputs = {"prompt": prompt, "batch": batch, "chunk": chunk, "ttft_budget": budget}
        vectors.append(
            _vector("prefill", hw, model, r.workload, prefill=inputs, expected=prefill_expected(r))
        )

    # 5. Prefill over every prompt length (kept to models with a modest limit: the port loops).
    short = [m for m in with_prefill if (m.context_limit_tokens or 0) <= 131_072]
    for _ in range(60):
        model = rng.choice(short)
        hw = rng.choice(hardware)
        w = replace(
            _random_workload(rng, model, speculation=False), alloc_context_tokens=rng.randint(1, 65_536)
        )
        w = replace(w, read_context_tokens=min(w.read_context_tokens, w.alloc_context_tokens))
        b = rng.choice([1, 1, rng.randint(2, 64)])
        over = prefill_range(hw, model, workload=w, batch=b)
        # the workload is explicit: nothing to resolve
        vectors.append(_vector("prefill_range", hw, model, w, batch=b, expected=range_json(over)))

    vectors += _kv_inverse_cases(rng)
    return {
        "format": FORMAT_VERSION,
        "tolerance_relative": TOLERANCE,
        "units": "bytes, bytes/s, FLOP/s, tokens, seconds; rates in tokens/s",
        "generated_by": "servebound.views.conformance.build_vectors",
        "seed": seed,
        "count": len(vectors),
        "vectors": vectors,
    }
