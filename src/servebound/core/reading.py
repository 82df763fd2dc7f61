"""Bound or estimate: the one rule that says how a result may be read."""

from __future__ import annotations

from servebound.core.experts import ExpertTraffic
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter


def is_estimate(hardware: Hardware, model: ModelAdapter, expert_traffic: ExpertTraffic) -> bool:
    """True when the result is an estimate rather than a bound.

    Expected (m(n)) expert traffic of a mixture-of-experts model, or measured (not vendor peak) hardware
    rates, make a ceiling an estimate; vendor peaks with minimum traffic give a guaranteed bound.
    """
    moe = model.weights.experts is not None
    return (moe and expert_traffic is ExpertTraffic.EXPECTED) or hardware.provenance != "peak"
