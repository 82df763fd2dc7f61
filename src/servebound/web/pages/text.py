"""The plain-text pieces every page shares: names, the license, the verdict sentences, paths and the
markdown escaping (the markdown templates' ``md`` filter)."""

from __future__ import annotations

import datetime
import os
from collections.abc import Mapping
from urllib.parse import quote, urlencode

from servebound.views.notes import VERDICT_TEXT as _VERDICTS
from servebound.views.notes import sentence

LICENSE_NAME = "CC BY 4.0"
LICENSE_URL = "https://creativecommons.org/licenses/by/4.0/"
SITE_NAME = "servebound"


def site_date() -> str:
    """The date the pages carry (llms.txt entries, each mirror's frontmatter): the day they were
    computed, in UTC, or the day of ``SOURCE_DATE_EPOCH`` when set (reproducible builds)."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    moment = (
        datetime.datetime.fromtimestamp(int(epoch), datetime.UTC)
        if epoch and epoch.isdigit()
        else datetime.datetime.now(datetime.UTC)
    )
    return moment.date().isoformat()


#: The decode verdict sentences (notes.VERDICT_TEXT, the CLI's), capitalised to open a line.
VERDICT_TEXT = {verdict: sentence(text) for verdict, text in _VERDICTS.items()}

#: The verdict filters of the hardware and model pages' tables: (key, words, the verdicts it holds).
VERDICT_FILTERS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("serves", "Serves", ("floor_fit",)),
    ("slow", "Fits but slow", ("no_floor",)),
    ("nofit", "Does not fit", ("no_session_fit", "no_resident_fit")),
)
#: Each verdict's filter key.
VERDICT_GROUP = {verdict: key for key, _, verdicts in VERDICT_FILTERS for verdict in verdicts}
assert set(VERDICT_GROUP) == set(VERDICT_TEXT), "every verdict under one filter"


def mirror_path(path: str) -> str:
    """The markdown mirror of a page path: the same URL plus ``.md`` (``/`` is ``/index.md``)."""
    base, _, query = path.partition("?")
    if base.rstrip("/") == "/pair":
        return path  # the pair picker's redirect (served: a 303; static: a script) has no mirror
    base = "/index" if base in ("", "/") else base.rstrip("/")
    return f"{base}.md" + (f"?{query}" if query else "")


def md(text: object) -> str:
    """Text as markdown that renders as itself: markup and emphasis characters escaped."""
    out = str(text)
    for ch in "\\`*_[]<>|#":
        out = out.replace(ch, "\\" + ch)
    return out.replace("\n", " ")


def pair_path(hw_id: str, model_id: str, params: Mapping[str, str] | None = None) -> str:
    path = f"/pair/{quote(hw_id, safe='')}/{quote(model_id, safe='')}"
    return path + (f"?{urlencode(dict(params))}" if params else "")


def md_url(url: str) -> str:
    """A URL as a markdown link target (spaces and brackets quoted)."""
    return quote(url, safe=":/?#&=%+,;@!$*'~.-_")


def percent(value: float) -> str:
    return f"{100 * value:.1f} %"
