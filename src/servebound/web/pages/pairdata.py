"""A pair page's derived pieces: the workload and assumptions as text, the API links and the quantities
the page's script recomputes in the browser."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from servebound.catalog.engines import engines, format_support
from servebound.core.band import BandBasis, ExpectedBand
from servebound.core.offload import OFFLOAD_INPUTS, OffloadReport, offloaded
from servebound.core.prefill import PrefillRange, PrefillResult
from servebound.core.units import GB
from servebound.inputs.scenario import hardware_overhead_bytes
from servebound.views.calc_inputs import hardware_json, model_json
from servebound.views.report import NOTHING_FITS
from servebound.web.app.query import WorkloadQuery, page_inputs
from servebound.web.pages.site import Pair, SiteHardware, SiteModel
from servebound.web.pages.text import VERDICT_TEXT
from servebound.web.pages.work import GATE_TEXT


def flat_assumptions(assumptions: Mapping[str, Any]) -> list[tuple[str, str]]:
    out = []
    for key, value in assumptions.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        elif isinstance(value, float):
            value = f"{value:,.6g}"
        elif isinstance(value, int) and not isinstance(value, bool):
            value = f"{value:,}"
        out.append((key, str(value)))
    return out


def api_params(q: WorkloadQuery, *, prefill: bool = False) -> dict[str, str]:
    params = q.params()
    names = page_inputs()["prefill" if prefill else "decode"]
    return {k: v for k, v in params.items() if k in names}


def workload_text(pair: Pair) -> dict[str, str]:
    q = pair.query
    out = {
        "overhead_gb": f"{pair.workload.overhead_bytes / 1e9:g}",
        "alloc_context": f"{q.alloc_context:,}",
        "read_context": f"{q.read_context:,}",
        "floor": f"{q.floor:g} tok/s",
        "batch": "max (b*)" if q.batch is None else f"{q.batch:,}",
        "prompt": f"{pair.prompt_tokens:,}" if pair.prompt_tokens else "n/a",
    }
    return out


def model_data(m: SiteModel) -> dict[str, Any]:
    """A model's adapter quantities for the in-browser calculator (bytes, FLOPs, tokens): the catalog's
    names, then the calculator's input form of the adapter."""
    adapter = {k: v for k, v in model_json(m.adapter).items() if k != "id"}
    return {
        "id": m.id,
        "name": m.name,
        "native": m.native,
        "base_id": m.base_id or m.id,
        "embedding_bytes": m.adapter.weights.embedding_bytes,
        **adapter,
    }


def _calculator_model(pair: Pair) -> dict[str, Any]:
    """The model the page's script recomputes with: with weights offloaded to host RAM, the effective
    single-tier adapter (``core.offload``: host bytes scaled by R_dev / R_host, the device's residency),
    so the live figures keep t = B_dev / R_dev + B_host / R_host."""
    data = model_data(pair.model)
    spec = pair.workload.offload
    if spec is None:
        return data
    hw = pair.hardware.hardware
    eff, _, _ = offloaded(hw, pair.model.adapter, spec, pair.workload.overhead_bytes)  # resolved
    return {**data, **{k: v for k, v in model_json(eff).items() if k != "id"}, "embedding_bytes": 0.0}


def hardware_data(h: SiteHardware) -> dict[str, Any]:
    """A hardware row's quantities for the in-browser calculator (bytes, bytes/s, FLOP/s)."""
    hw = h.hardware
    return {
        "id": h.id,
        "name": h.name,
        **{k: v for k, v in hardware_json(hw).items() if k != "id"},
        "provenance": hw.provenance,
    }


def pair_data(pair: Pair) -> dict[str, Any]:
    """What the page's script needs to recompute in the browser: the adapter and hardware quantities."""
    hw = pair.hardware.hardware
    return {
        "hardware": hardware_data(pair.hardware),
        "model": _calculator_model(pair),
        "query": {
            "alloc_context": pair.query.alloc_context,
            "read_context": pair.query.read_context,
            "floor": pair.query.floor,
            "overhead_gb": pair.workload.overhead_bytes / 1e9,
            "batch": pair.query.batch,
            "prompt": pair.prompt_tokens,
            "expert_traffic": pair.query.expert_traffic,
            "kv_allocation": pair.workload.kv_allocation.value,
            "overhead_given": pair.query.overhead_gb is not None,
            **{name: getattr(pair.query, name) for name in OFFLOAD_INPUTS},
        },
        # a system answers at a parallel layout the browser does not compute (the server's answer holds)
        "layout": _layout(pair),
        "default_overhead_gb": hardware_overhead_bytes(hw) / 1e9,
        "full_resident_bytes": pair.model.adapter.weights.resident,
        "offload_inputs": list(OFFLOAD_INPUTS),
        "engines": {
            e.id: {
                "kv_allocation": e.kv_allocation,
                "overhead": e.overhead,
                "memory_fraction": e.memory_fraction,
            }
            for e in engines().values()
        },
        "format_support": {
            (e or ""): list(format_support(hw.id, pair.model.adapter.weight_precision, e))
            for e in (None, *engines())
        },
        "inputs": page_inputs(),
        "max_batch": 1_000_000_000,
        "gb": GB,
        "gates": GATE_TEXT,
        "verdicts": VERDICT_TEXT,
    }


def _layout(pair: Pair) -> dict[str, str] | None:
    """The layout a system's pair answers at (``{label, why}``), None for one device."""
    choice = getattr(pair.decode_result, "layout", None)  # a system's answer (questions.system_decode)
    return None if choice is None else {"label": choice.label, "why": choice.why}


def script_json(data: Any) -> str:
    """JSON safe inside a <script> element: no ``</script>`` or comment openers can appear."""
    text = json.dumps(data, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


# --- the prefill numbers a pair page shows (decode's are the DecodeResult record itself) -------------


@dataclass(frozen=True)
class PrefillRangeView:
    """The prompt-length range: the slowest and fastest prefill rate up to the longest prompt."""

    lo_tok_s: float | None
    hi_tok_s: float | None
    max_prompt_tokens: int


@dataclass(frozen=True)
class PrefillView:
    """The prefill numbers a pair page shows, from the prefill record (and its prompt-length range)."""

    prompt_tokens: int
    tok_s: float | None
    time_s: float | None
    bound_by: str | None
    crossover_tokens: float | None
    range: PrefillRangeView | None
    verdict: str = "fits"
    crossover_with_attention_tokens: float | None = None
    compute_note: str | None = None
    #: The prefill's two-tier object (weights in host RAM), or None.
    offload: OffloadReport | None = None
    #: The prefill record's band and where it comes from (``expected``, ``expected_from``).
    expected: ExpectedBand | None = None
    expected_from: BandBasis | None = None

    @property
    def nothing_fits(self) -> bool:
        """No session fits in memory: there is no first-token wait to show (time_s is null)."""
        return self.time_s is None

    @classmethod
    def of(cls, result: PrefillResult | None, over: PrefillRange | None = None) -> PrefillView | None:
        """The record's numbers; where nothing fits, no wait and no rate (as ``prefill --json`` nulls them)."""
        if result is None:
            return None
        rng = None if over is None else PrefillRangeView(over.lo_tok_s, over.hi_tok_s, over.max_prompt_tokens)
        wait = result.verdict.value not in NOTHING_FITS  # else no wait and no rate, as prefill --json
        return cls(
            result.prompt_tokens,
            result.tok_s if wait else None,
            result.time_s if wait else None,
            result.bound_by.value if wait else None,
            result.crossover_tokens,
            rng,
            result.verdict.value,
            result.crossover_with_attention_tokens,
            result.compute_note,
            result.offload if wait else None,
            result.expected,
            result.expected_from,
        )
