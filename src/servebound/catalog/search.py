"""Search the catalog by words: models (every profile) and hardware rows, best match first.

One function answers `servebound search`, ``servebound.search`` and ``/api/search``. Each word typed
must begin a word of the entry (its id, its Hub id or name, a hardware row's vendor and aliases): ``qwen3
30b`` finds every Qwen3 30B profile, ``4090`` the RTX 4090, ``dgx spark`` the DGX Spark. A quantization
word (``q4``, ``fp8``, ``mlx 4bit``: see ``catalog.names``) keeps the profiles of that format; without
one, models are listed at their native format. A name that resolves to one profile
(``catalog.names.profile_id_for``: ``llama3.3:70b``, a Hub id) is the first hit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from servebound.catalog.hardware import load_hardware_catalog
from servebound.catalog.models import _profile_ids, get_model
from servebound.catalog.names import (
    _QUANT_ALIASES,
    _SIZE,
    _version,
    hub_ids,
    ollama_tags,
    profile_id_for,
    split_quant,
    tokens,
)
from servebound.core.units import GB
from servebound.errors import InputError

#: What a search returns at most by default, and what it may be asked for.
DEFAULT_LIMIT = 20
MAX_LIMIT = 500
KINDS = ("model", "hardware")


@dataclass(frozen=True)
class SearchHit:
    """One entry found: its kind (``model`` or ``hardware``), catalog id, name as people read it (the
    profile's or the row's display name) and a short detail in words that the name does not say (a
    model's architecture and weights' size: its name carries its format; a row's memory and class)."""

    kind: str
    id: str
    name: str
    detail: str

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _begins(query_word: str, word: str) -> bool:
    """A typed word names an entry's word: the same, or (with a letter in it) its beginning; a number
    only whole (``4`` is not ``40``)."""
    return word == query_word or (not query_word.replace(".", "").isdigit() and word.startswith(query_word))


def _covers(wanted: list[str], words: set[str]) -> bool:
    return all(any(_begins(q, w) for w in words) for q in wanted)


def _extra(wanted: list[str], own: list[str]) -> int:
    return len([w for w in own if not any(_begins(q, w) for q in wanted)])


def _formats(quant: str) -> tuple[str, ...]:
    return (quant, *_QUANT_ALIASES.get(quant, ()))


def _model_hits(wanted: list[str], quant: str | None) -> list[tuple[tuple[Any, ...], SearchHit]]:
    hubs = hub_ids()
    by_model: dict[str, list[tuple[str, str, bool]]] = {}
    for pid, (base, fmt, native) in _profile_ids().items():
        by_model.setdefault(base, []).append((pid, fmt, native))
    found = []
    for order, (base, profiles) in enumerate(by_model.items()):
        own = tokens(base)
        if not _covers(wanted, set(own) | set(tokens(hubs.get(base, "")))):
            continue
        if quant is None:
            chosen = [p for p in profiles if p[2]]
        else:
            fmts = {fmt for _, fmt, _ in profiles}
            pick = next((f for f in _formats(quant) if f in fmts), None)
            chosen = [p for p in profiles if p[1] == pick]
        version = tuple(-v for v in _version(own)) or (0.0,)
        for pid, _, _ in chosen:
            hit = SearchHit("model", pid, _profile_name(pid), model_detail(pid))
            found.append(((version, _extra(wanted, own), order), hit))
    return found


def model_detail(pid: str) -> str:
    """A model hit's detail: what its name (``Qwen3-30B-A3B (Q4_K_M)``, which carries the weight format)
    does not say, its architecture as people write it and the size of its weights (``Qwen3 MoE, 18.6
    GB of weights``)."""
    m = get_model(pid)
    return f"{m.family_name}, {m.adapter.weights.resident / GB:,.1f} GB of weights"


def _profile_name(pid: str) -> str:
    """A profile's display name (``Llama-3.3-70B-Instruct (Q4_K_M)``), the name its pages carry."""
    return get_model(pid).name


def _hardware_hits(wanted: list[str]) -> list[tuple[tuple[Any, ...], SearchHit]]:
    found = []
    for order, row in enumerate(load_hardware_catalog()):
        own = tokens(row.id)
        if not _covers(wanted, _hardware_words(row)):
            continue
        detail = _hardware_detail(row)
        found.append((((0.0,), _extra(wanted, own), order), SearchHit("hardware", row.id, row.name, detail)))
    return found


def _hardware_words(row: Any) -> set[str]:
    """The words a hardware row answers to: its id's, name's, vendor's and aliases'."""
    words = set(tokens(row.id)) | set(tokens(row.name)) | set(tokens(row.vendor))
    for alias in row.aliases:
        words |= set(tokens(alias))
    return words


def _hardware_detail(row: Any) -> str:
    return f"{row.memory_gb:g} GB at {row.bandwidth_gb_per_s:g} GB/s, {row.device_class}"


def search(query: str, kind: str | None = None, limit: int = DEFAULT_LIMIT) -> list[SearchHit]:
    """Models and hardware rows the words name, best first (the newest version, then the fewest words
    beyond those typed, then catalog order); ``kind`` keeps one kind. An empty query is an error."""
    if kind is not None and kind not in KINDS:
        raise InputError("kind", f"{kind!r} is not a kind; use one of {', '.join(KINDS)}")
    if not 1 <= limit <= MAX_LIMIT:
        raise InputError("limit", f"{limit} is out of range; give 1 to {MAX_LIMIT}")
    if len(query) > 200:
        raise InputError("q", f"{len(query)} characters is longer than a search (200 at most)")
    rest, quant = split_quant(query)
    wanted = tokens(rest)
    if not wanted:
        raise InputError("q", "give one or more words, e.g. 'qwen3 30b' or 'rtx 4090'")
    ranked: list[tuple[tuple[Any, ...], SearchHit]] = []
    if kind in (None, "model"):
        ranked += _model_hits(wanted, quant)
    if kind in (None, "hardware") and quant is None:
        ranked += _hardware_hits(wanted)
    hits = [hit for _, hit in sorted(ranked, key=lambda pair: pair[0])]
    if kind in (None, "model"):
        try:
            named = profile_id_for(query, missing_ok=True)
        except InputError:
            named = None
        if named is not None:
            first = next((h for h in hits if h.id == named), None)
            hits = [first or _profile_hit(named)]
            hits += [h for h in _rest(ranked, named)]
    return hits[:limit]


def _profile_hit(pid: str) -> SearchHit:
    """A profile as a hit of its own (a format the words named whole: ``llama3.3:70b`` is Q4_K_M)."""
    return SearchHit("model", pid, _profile_name(pid), model_detail(pid))


def _rest(ranked: Iterable[tuple[tuple[Any, ...], SearchHit]], skip: str) -> list[SearchHit]:
    return [hit for _, hit in sorted(ranked, key=lambda pair: pair[0]) if hit.id != skip]


def browser_index(shown: set[str]) -> dict[str, Any]:
    """What a browser needs to answer :func:`search` for the ids in ``shown`` without a server (the
    static copy's ``data/names.json``, read by ``static/pickers.js``): the names the resolver takes
    whole (profile ids, Ollama tags, Hub ids; hardware ids, names and aliases), each with the id
    ``profile_id_for`` or the hardware catalog gives it; every model and hardware entry with its words
    and its place in the order :func:`search` ranks by (a model's names and details by format); the
    quantization words with the formats they
    pick; and the size-token pattern :func:`catalog.names.tokens` keeps whole."""
    hubs, places, catalog = hub_ids(), _profile_ids(), load_hardware_catalog()
    names: dict[str, list[str]] = {}

    def name(text: str, kind: str, target: str | None) -> None:
        if target in shown:
            names.setdefault(text.strip().lower(), [kind, target])

    for typed in [*places, *ollama_tags(), *hubs.values()]:
        try:
            name(typed, "model", profile_id_for(typed, missing_ok=True))
        except InputError:  # a tag of a format the catalog lacks: the search answers it
            continue
    models: dict[str, dict[str, Any]] = {}
    for pid, (base, fmt, native) in places.items():
        entry = models.setdefault(
            base, {"kind": "model", "name": hubs.get(base, base), "profiles": {}, "names": {}, "details": {}}
        )
        if pid in shown:
            entry["profiles"][fmt] = pid
            entry["names"][fmt] = _profile_name(pid)
            entry["details"][fmt] = model_detail(pid)
            if native:
                entry["native"] = pid
    entries = []
    for order, (base, entry) in enumerate(models.items()):
        own = tokens(base)
        version = tuple(-v for v in _version(own)) or (0.0,)
        words = sorted(set(own) | set(tokens(hubs.get(base, ""))))
        entries.append({**entry, "own": own, "words": words, "order": order, "version": version})
    for order, row in enumerate(catalog):
        for text in (row.id, row.name, *row.aliases):
            try:
                name(text, "hardware", catalog.get(text).id)
            except InputError:  # a row's full name is not a name the catalog takes whole
                continue
        detail = _hardware_detail(row)
        if row.id in shown:
            entries.append(
                {
                    "kind": "hardware",
                    "id": row.id,
                    "name": row.name,
                    "detail": detail,
                    "own": tokens(row.id),
                    "words": sorted(_hardware_words(row)),
                    "order": order,
                    "version": (0.0,),
                }
            )
    ranks = {v: i for i, v in enumerate(sorted({e["version"] for e in entries}))}
    for e in entries:
        e["version"] = ranks[e["version"]]
    entries = [e for e in entries if e["kind"] == "hardware" or e["profiles"]]
    fmts = {fmt for _, fmt, _ in places.values()}
    quants = {q: list(_formats(q)) for q in fmts | set(_QUANT_ALIASES)}
    return {"names": names, "entries": entries, "quants": quants, "size": _SIZE}
