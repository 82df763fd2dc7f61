"""A system of many devices and the parallel layouts one model can take on it.

A system is ``count`` identical devices grouped in scale-up domains of S devices (``Interconnect``); a
layout is tp x ep x pp x dp (``Layout``, see ``core.layout`` for the ceilings). ``layout_problem`` says
why a layout cannot run a model (one line naming the fix) and ``valid_layouts`` lists those that can.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from servebound.core.advice import Note, Setting
from servebound.core.errors import InputError
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter


@dataclass(frozen=True)
class Interconnect:
    """How a system's devices talk: ``scale_up_devices`` (S) per domain, per-device rates each way.

    ``ideal`` marks the upper bound used when no link is stated: every rate infinite, one domain.
    """

    scale_up_devices: int
    scale_up_bytes_per_s: float
    scale_out_bytes_per_s: float
    scale_up_link: str = ""
    scale_out_link: str = ""
    ideal: bool = False

    @classmethod
    def ideal_for(cls, devices: int) -> Interconnect:
        """No link stated: the ideal upper bound (communication free, one domain of every device)."""
        return cls(
            scale_up_devices=devices,
            scale_up_bytes_per_s=math.inf,
            scale_out_bytes_per_s=math.inf,
            scale_up_link="ideal (not modeled: communication free)",
            scale_out_link="ideal (not modeled: communication free)",
            ideal=True,
        )

    def weight_fetch_latency_s(self, weight_bytes: float, device_bandwidth_bytes_per_s: float) -> float:
        """W / (S R): one domain's devices stream their share of the weights in parallel, so a step can
        be no shorter than this (the latency floor a bigger scale-up domain lowers)."""
        return weight_bytes / (self.scale_up_devices * device_bandwidth_bytes_per_s)


@dataclass(frozen=True)
class System:
    """``count`` identical ``device`` rows joined by ``interconnect``."""

    device: Hardware
    count: int
    interconnect: Interconnect


@dataclass(frozen=True)
class Layout:
    """tp x ep x pp x dp; one stage group is G = max(tp, ep) devices, a replica G pp, all G pp dp."""

    tp: int = 1
    ep: int = 1
    pp: int = 1
    dp: int = 1

    @property
    def group(self) -> int:
        return max(self.tp, self.ep)

    @property
    def devices(self) -> int:
        return self.group * self.pp * self.dp

    @property
    def label(self) -> str:
        return f"tp={self.tp},ep={self.ep},pp={self.pp},dp={self.dp}"


def layout_problem(system: System, model: ModelAdapter, layout: Layout) -> str | None:
    """Why ``layout`` cannot run ``model`` on ``system`` (one line naming the fix), or None."""
    tp, ep, pp, dp = layout.tp, layout.ep, layout.pp, layout.dp
    if min(tp, ep, pp, dp) < 1:
        return "every degree must be at least 1"
    if ep > 1 and ep % tp:
        return f"ep={ep} must be 1 or a multiple of tp={tp} (attention runs tp-way inside the expert group)"
    if layout.devices > system.count:
        return (
            f"{layout.label} needs {layout.devices} devices (max(tp, ep) x pp x dp); "
            f"the system has {system.count}"
        )
    experts = model.weights.experts
    if ep > 1 and experts is None:
        return f"ep={ep} needs routed experts; '{model.id}' is dense (use ep=1)"
    if experts is not None and experts.routed % ep:
        return f"ep={ep} must divide the {experts.routed} routed experts"
    shape = model.shape
    if shape is None:
        if tp > 1 or ep > 1 or pp > 1:
            return (
                f"'{model.id}' carries no layer shape (layers, hidden size, heads): only tp=1,ep=1,pp=1 "
                "(replicas) apply; import it from its config.json for other layouts"
            )
        return None
    if shape.query_heads % tp:
        return f"tp={tp} must divide the {shape.query_heads} query heads"
    if pp > shape.layers:
        return f"pp={pp} exceeds the {shape.layers} layers"
    return None


#: The valid layouts already listed, by what decides them (``_layouts_key``): a system's page ranks
#: hundreds of models that share a few layer shapes, each asking the same question.
_VALID: dict[tuple[int, int | None, int | None, int | None], tuple[Layout, ...]] = {}
_VALID_KEPT = 1024


def _layouts_key(system: System, model: ModelAdapter) -> tuple[int, int | None, int | None, int | None]:
    """What decides which layouts are valid (``layout_problem``): the device count, the query heads and
    layers (None without a layer shape) and the routed experts (None for a dense model)."""
    shape, experts = model.shape, model.weights.experts
    return (
        system.count,
        shape.query_heads if shape else None,
        shape.layers if shape else None,
        experts.routed if experts else None,
    )


def valid_layouts(system: System, model: ModelAdapter) -> Iterator[Layout]:
    """Every valid layout, each with as many replicas as the devices allow (more never lowers a
    ceiling): tp over the divisors of the query heads, ep over 1 and the multiples of tp that divide
    the routed experts, pp over 1 .. layers. Listed once per ``_layouts_key``."""
    key = _layouts_key(system, model)
    found = _VALID.get(key)
    if found is None:
        if len(_VALID) >= _VALID_KEPT:  # bounded: a server answering many files' shapes starts again
            _VALID.clear()
        found = _VALID[key] = tuple(_listed_layouts(system, model))
    return iter(found)


def _listed_layouts(system: System, model: ModelAdapter) -> Iterator[Layout]:
    """:func:`valid_layouts`, listed."""
    n = system.count
    shape = model.shape
    experts = model.weights.experts
    heads = shape.query_heads if shape else 1
    layers = shape.layers if shape else 1
    tps = [t for t in range(1, min(n, heads) + 1) if heads % t == 0]
    for tp in tps:
        eps = [1]
        if experts is not None and shape is not None:
            eps += [
                e
                for e in range(max(tp, 2), min(n, experts.routed) + 1)
                if e % tp == 0 and experts.routed % e == 0
            ]
        for ep in eps:
            group = max(tp, ep)
            for pp in range(1, min(layers, n // group) + 1):
                layout = Layout(tp=tp, ep=ep, pp=pp, dp=n // (group * pp))
                if layout_problem(system, model, layout) is None:
                    yield layout


#: The most layouts one search evaluates (its budget, checked before the first is evaluated): the
#: catalog's largest system, 1,024 devices, gives at most 2,771 (GLM-4.5; DeepSeek-V3 1,615), at about
#: 0.1 ms each.
MAX_LAYOUTS_SEARCHED = 4096


def searched_layouts(system: System, model: ModelAdapter) -> list[Layout]:
    """``valid_layouts`` for a search; more than :data:`MAX_LAYOUTS_SEARCHED` is an InputError naming the
    way out (one layout, or a smaller system)."""
    layouts = list(valid_layouts(system, model))
    if len(layouts) > MAX_LAYOUTS_SEARCHED:
        raise InputError(
            "hardware",
            Note.of(
                f"{system.count:,} devices give {len(layouts):,} valid layouts of '{model.id}', more than "
                f"the {MAX_LAYOUTS_SEARCHED:,} one search evaluates; name one with ",
                Setting("layout", placeholder="LAYOUT"),
                " or choose a smaller system",
            ),
        )
    return layouts
