"""A pair page's sideways links: the same model in other weight formats on this machine, and this model
on the machines nearest this one (the same class, the closest memory bandwidth)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from servebound.web.pages.site import SiteHardware, SiteModel

#: Links listed in each direction.
NEARBY = 8


@dataclass(frozen=True)
class Link:
    text: str
    href: str


@dataclass(frozen=True)
class Sideways:
    formats: Sequence[Link]
    machines: Sequence[Link]


def sideways(
    hw: SiteHardware,
    model: SiteModel,
    hardware: Sequence[SiteHardware],
    models: Sequence[SiteModel],
    href: Callable[[str, str], str],
) -> Sideways:
    """Other formats of ``model`` (the same base checkpoint) on ``hw``; ``model`` on the machines of
    ``hw``'s class nearest in bandwidth (a single device's neighbours are single devices, a system's
    systems)."""
    base = model.base_id or model.id
    formats = [
        Link(m.name, href(hw.id, m.id)) for m in models if m.id != model.id and (m.base_id or m.id) == base
    ]
    same = [
        h
        for h in hardware
        if h.id != hw.id and h.device_class == hw.device_class and (h.system is None) == (hw.system is None)
    ]
    r = math.log(max(hw.bandwidth_gb_per_s, 1e-9))
    same.sort(key=lambda h: (abs(math.log(max(h.bandwidth_gb_per_s, 1e-9)) - r), h.id))
    machines = [Link(h.name, href(h.id, model.id)) for h in same[:NEARBY]]
    return Sideways(formats=formats[:NEARBY], machines=machines)
