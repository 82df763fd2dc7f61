"""A pair page's sideways links: the same model in other weight formats on this machine, and this model
on the machines nearest this one (the same class, the closest memory bandwidth)."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from servebound.errors import InputError
from servebound.questions.absent import missing_decode
from servebound.questions.decode import decode_answer
from servebound.views.notes import VERDICT_WORDS
from servebound.views.report import fmt_int, fmt_rate
from servebound.web.pages.site import Pair, SiteData, SiteHardware, SiteModel
from servebound.web.pages.words import page_text

#: Links listed in each direction.
NEARBY = 8


@dataclass(frozen=True)
class Link:
    text: str
    href: str
    #: The linked pair's model id (another format's; empty for a link to another machine).
    model_id: str = field(default="", compare=False)


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
        Link(m.name, href(hw.id, m.id), m.id)
        for m in models
        if m.id != model.id and (m.base_id or m.id) == base
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


@dataclass(frozen=True)
class FormatAnswer:
    """Another format of the pair's model on the pair's machine, answered at the page's workload: its
    link, its verdict (the key and a few words) and its single-session rate, useful aggregate and b*
    ("n/a" where absent); ``error`` instead where the workload is not valid for that format."""

    link: Link
    #: The format's support on the machine where not native, as the rank tables add it: `` (dequantized)``.
    support: str = ""
    verdict: str = ""
    words: str = ""
    single: str = ""
    aggregate: str = ""
    batch_star: str = ""
    error: str = ""
    #: Why the single-session rate, the aggregate and b* are absent, where they are (one reason covers
    #: each absent figure from the first: ``questions.absent.missing_decode``, the pair page's words).
    why: str = ""


def format_answers(pair: Pair, formats: Sequence[Link], site: SiteData) -> list[FormatAnswer]:
    """Each of ``formats`` (``Sideways.formats``) on the pair's machine for the workload the page asks
    (its query as asked, its draft too), each resolved and answered as the pair itself is
    (``WorkloadQuery.scenario``, then ``api.decode_answer``): the same path, another model."""
    query = pair.requested or pair.query
    found = site.models_by_id.get(query.draft) if query.draft else None
    draft = found.adapter if found is not None else None
    out = []
    for link in formats:
        model = site.models_by_id.get(link.model_id)
        if model is None:
            continue
        try:
            scenario = query.scenario(pair.hardware.hardware, model.adapter, draft)
            d = decode_answer(scenario)[0]
        except InputError as exc:
            out.append(FormatAnswer(link, error=f"{exc.field}: {page_text(exc.note)}"))
            continue
        words = VERDICT_WORDS[d.verdict.value]
        support = d.format_support.value
        out.append(
            FormatAnswer(
                link,
                "" if support == "native" else f" ({support})",
                d.verdict.value,
                words[:1].upper() + words[1:],
                fmt_rate(d.single_session_tok_s),
                fmt_rate(d.aggregate_tok_s),
                fmt_int(d.batch_star),
                why=next((page_text(n) for n in missing_decode(d).values()), ""),
            )
        )
    return out
