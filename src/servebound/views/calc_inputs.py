"""The in-browser calculator's input form of the core records (static/calc.js reads these keys): a
hardware row, a model adapter and a workload in bytes, FLOPs and tokens. The conformance vectors and the
pages' script data both write them from here."""

from __future__ import annotations

from typing import Any

from servebound.core.hardware import ARITHMETIC_MODES, Hardware
from servebound.core.kv import KVShape
from servebound.core.model import ModelAdapter
from servebound.core.rates import charge_mode
from servebound.core.workload import Workload


def kv_json(shape: KVShape) -> dict[str, float]:
    return {
        "global": shape.global_bytes_per_token,
        "local": shape.local_bytes_per_token,
        "window": shape.window_tokens,
        "state": shape.state_bytes,
    }


def model_json(model: ModelAdapter) -> dict[str, Any]:
    """An adapter in the calculator's input form (bytes, FLOPs, tokens)."""
    w = model.weights
    pre = model.prefill
    return {
        "id": model.id,
        "always_on_bytes": w.always_on_bytes,
        "expert_bytes": w.expert_bytes,
        "routed": w.experts.routed if w.experts else 0,
        "per_token": w.experts.per_token if w.experts else 0,
        "resident_bytes": w.resident,
        "kv_alloc": kv_json(model.kv_alloc),
        "kv_read": kv_json(model.kv_read),
        "context_limit": model.context_limit_tokens,
        "prefill": None
        if pre is None
        else {
            "linear_active_params": pre.linear_active_params,
            "global": pre.attention_global_flops_per_pair,
            "local": pre.attention_local_flops_per_pair,
            "window": pre.attention_window_tokens,
            "state": pre.attention_state_flops_per_token,
            "kv_write": pre.kv_write_bytes_per_token,
            "linear_mode": pre.linear_mode,
            "linear_mode_if_published": pre.linear_mode_if_published,
            "attention_mode": pre.attention_mode,
            "linear_split": [[mode, params] for mode, params in pre.linear_params_by_mode],
        },
    }


def hardware_json(hw: Hardware) -> dict[str, Any]:
    return {
        "id": hw.id,
        "memory_bytes": hw.memory_bytes,
        "bandwidth_bytes_per_s": hw.bandwidth_bytes_per_s,
        "compute_flop_per_s": dict(hw.compute_flop_per_s),
        "charged_modes": charged_modes(hw),
    }


def charged_modes(hw: Hardware) -> dict[str, list[Any]]:
    """For each mode the row does not publish, [the mode charged in its place, its rate]
    (core.rates.charge_mode), so a reimplementation charges the same fallback."""
    out: dict[str, list[Any]] = {}
    for mode in ARITHMETIC_MODES:
        if hw.compute_rate(mode) is None:
            charge = charge_mode(hw, mode)
            if charge.mode is not None:
                out[mode] = [charge.mode, charge.flop_per_s]
    return out


def workload_json(w: Workload) -> dict[str, Any]:
    spec = w.speculation
    return {
        "overhead_bytes": w.overhead_bytes,
        "alloc_context": w.alloc_context_tokens,
        "read_context": w.read_context_tokens,
        "floor": w.floor_tok_s,
        "batch": w.forced_batch,
        "expert_traffic": w.expert_traffic.value,
        "memory_only": w.memory_only,
        "kv_allocation": w.kv_allocation.value,
        "speculation": None
        if spec is None
        else {
            "draft": model_json(spec.draft),
            "draft_tokens": spec.draft_tokens,
            "tokens_per_step": spec.tokens_per_step,
        },
    }
