"""Model names as people type them, resolved offline to one catalog profile.

``profile_id_for`` (which ``catalog.models.get_model`` and every surface's model lookup call) reads
anything that is not a profile id. A name is read, in order, as:

- an Ollama tag (``llama3.3:70b``, ``gpt-oss:120b``, ``qwen3:30b-a3b-q8_0``): ``data/model_names.toml``
  maps each library tag to the profile Ollama ships (its default quantization, with the library page as
  source); a quantization in the tag picks that format of the same model;
- a Hub id (``meta-llama/Llama-3.3-70B-Instruct``), a GGUF or MLX repository of it
  (``unsloth/Qwen3-30B-A3B-GGUF:Q4_K_M``, ``mlx-community/Qwen3-8B-4bit``), an LM Studio key
  (``qwen/qwen3-30b-a3b``) or a GGUF file name (``Qwen3-30B-A3B-Q4_K_M.gguf``): the repository name is
  matched against the catalog's Hub ids, then as loose words;
- loose words (``gemma 3 27b``, ``qwen3 30b a3b q4``): case, spaces, dots and dashes do not matter, and
  size and quantization tokens come in any order. Every word must name the model; among the models
  that match, the newest version of a line wins (``llama 70b`` is Llama 3.3, not Llama 2), then the
  one with the fewest words beyond those typed; a tie is an error listing the candidates.

A quantization word picks the format: its catalog name (``q4_k_m``, ``fp8``, ``mlx_4bit``) or a short
form (``q4`` is Q4_K_M where the model has it, ``q8`` Q8_0, ``4bit`` MLX 4-bit, ``fp16`` F16). A GGUF
repository without one is Q4_K_M, as llama.cpp's ``-hf`` picks.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import NamedTuple

from servebound.catalog import snapshot
from servebound.core.formats import format_words
from servebound.errors import InputError, check_id_length
from servebound.inputs import bounded, package_data

#: One profile's place: (model id, weight format, native).
Place = tuple[str, str, bool]

#: Quantization words as people write them (longest first), matched between separators. The
#: patterns of this module are compiled on first use (``re``'s own cache), not when a decode by
#: catalog id imports it.
_QUANT = (
    r"(?<![a-z0-9])("
    r"iq\d_[a-z]+|q\d_k_[sml]|q\d_0_qat|q\d_[01]|q\d_k|q\d"
    r"|mxfp4_moe|mxfp4|nvfp4|fp8|bf16|fp16|f16|fp32|f32"
    r"|mlx_\d+bit(?:_g\d+)?|\d+bit|mlx|qat|int4|int8|awq|gptq"
    r")(?![a-z0-9])"
)
#: Short quantization words -> catalog formats, in order of preference.
_QUANT_ALIASES: dict[str, tuple[str, ...]] = {
    "q4": ("q4_k_m", "q4_0", "q4_k_s", "iq4_xs", "q4_1"),
    "q4_k": ("q4_k_m", "q4_k_s"),
    "q5": ("q5_k_m", "q5_0"),
    "q5_k": ("q5_k_m",),
    "q6": ("q6_k",),
    "q8": ("q8_0",),
    "q2": ("q2_k",),
    "q3": ("q3_k_m",),
    "fp16": ("f16", "fp16"),
    "f16": ("f16", "fp16"),
    "f32": ("fp32",),
    "mxfp4": ("mxfp4_moe",),
    "4bit": ("mlx_4bit",),
    "5bit": ("mlx_5bit",),
    "6bit": ("mlx_6bit",),
    "8bit": ("mlx_8bit", "mlx_8bit_g32"),
    "mlx": ("mlx_4bit",),
    "qat": ("q4_0_qat",),
}
#: Tokens of a size: 30b, 0.6b, 135m, a3b (active), 8x7b, 128e (experts), 2507 (a date).
_SIZE = r"^(?:a?\d+(?:\.\d+)?[bm]|\d+x\d+(?:\.\d+)?b|\d+e)$"
_SPLIT_FILE_PART = r"-\d{5}-of-\d{5}$"
_SYNONYMS = {"instruct": {"instruct", "it", "chat"}, "it": {"instruct", "it"}, "chat": {"chat", "instruct"}}
#: A GGUF repository's suffix, and the quantization llama.cpp's -hf takes when none is named.
_GGUF_SUFFIX = r"[-_]gguf$"
DEFAULT_GGUF = "q4_k_m"
#: How many candidates an ambiguity lists.
MAX_LISTED = 8


class NameChoiceError(InputError):
    """A name the catalog knows but cannot take as one profile (several models match, the model has no
    such format, an Ollama tag the table lacks): its message lists the choices."""


class OllamaTag(NamedTuple):
    """One Ollama library tag and the catalog profile it names (a table row; a named tuple, which a
    decode by catalog id does not pay a dataclass's construction for)."""

    tag: str
    profile: str
    latest: bool
    source: str


@cache
def ollama_tags() -> dict[str, OllamaTag]:
    """The Ollama library tags the catalog knows, by tag (``latest`` spelled out too)."""
    text = package_data.read_text("servebound.catalog", "data", "model_names.toml")
    rows = bounded.parse_toml(text, "model_names.toml").get("ollama", [])
    out: dict[str, OllamaTag] = {}
    for row in rows:
        entry = OllamaTag(row["tag"], row["profile"], bool(row.get("latest", False)), row["source"])
        out[entry.tag] = entry
        if entry.latest:
            out[entry.tag.split(":")[0] + ":latest"] = entry
    return out


@cache
def hub_ids() -> dict[str, str]:
    """Each catalog model's Hub id, by model id: models.toml's entries as the catalog snapshot keeps
    them (its header, read in about a millisecond; importing tomllib and parsing models.toml took about 18)."""
    return {str(row["id"]): str(row["hf_id"]) for row in snapshot.header(snapshot.AUDITS)["entries"]}


def split_quant(text: str) -> tuple[str, str | None]:
    """(the text without its last quantization word, the format that word names in lower case with
    ``_``, or None). Earlier ones stay words of the name (``Qwen3-32B-FP8-Q8_0``: the Q8_0 GGUF of
    the FP8 release); ``mlx`` beside a bit width is MLX at that width (``mlx 4bit``: ``mlx_4bit``)."""
    lowered = text.lower()
    found = list(re.finditer(_QUANT, lowered.replace("-", "_")))
    if not found:
        return lowered, None
    drop = [found[-1]]
    word = found[-1].group(1)
    bits = [m for m in found[-2:] if re.fullmatch(r"\d+bit", m.group(1))]
    if len(found) > 1 and {m.group(1) for m in found[-2:]} & {"mlx"} and bits:
        drop, word = found[-2:], f"mlx_{bits[0].group(1)}"
    rest = lowered
    for match in sorted(drop, key=lambda m: -m.start()):
        rest = rest[: match.start()] + " " + rest[match.end() :]
    return rest, word


def tokens(text: str) -> list[str]:
    """The words of a name: lower case, split at anything but letters, digits and dots, and a word
    like ``qwen3`` or ``llama3.3`` split into its name and version (sizes kept whole)."""
    out: list[str] = []
    for word in re.split(r"[^a-z0-9.]+", text.lower()):
        word = word.strip(".")
        if not word:
            continue
        if re.match(_SIZE, word) or word.isdigit():
            out.append(word)
            continue
        out.extend(p.strip(".") for p in re.findall(r"[a-z]+|\d+(?:\.\d+)*", word) if p.strip("."))
    return out


def _version(words: list[str]) -> tuple[float, ...]:
    for word in words:
        if not re.match(_SIZE, word) and re.fullmatch(r"\d+(?:\.\d+)*", word) and len(word) < 4:
            return tuple(float(p) for p in word.split("."))
    return ()


def _profile(places: Mapping[str, Place], model: str, fmt: str | None, ref: str) -> str:
    """The profile of ``model`` at the format a quantization word names (its native format without
    one); a word the model has no format for is an error listing its formats."""
    mine = {f: pid for pid, (base, f, _) in places.items() if base == model}
    native = next(pid for pid, (base, _, nat) in places.items() if base == model and nat)
    if fmt is None:
        return native
    if fmt in mine:
        return mine[fmt]
    for wanted in _QUANT_ALIASES.get(fmt, ()):
        if wanted in mine:
            return mine[wanted]
    if f"{model}-{fmt}" in places:  # a release of that name (qwen3-32b-fp8: Qwen's own FP8 checkpoint)
        return f"{model}-{fmt}"
    native_fmt = places[native][1]
    if fmt in native_fmt.split("_"):  # mxfp4 for a release that stores its experts in MXFP4
        return native
    raise NameChoiceError(
        "model",
        f"{ref!r}: {model} has no {fmt} format in the catalog; its formats: {', '.join(mine)} "
        f"(profile '{model}' is {places[native][1]}, '{model}-FORMAT' the others)",
    )


def _ollama(key: str, places: Mapping[str, Place]) -> str | None:
    """The profile of an Ollama tag (``name:tag``, ``name:latest``, with or without ``library/``)."""
    table = ollama_tags()
    if ":" not in key:  # a bare name is the catalog's or loose words, not Ollama's latest
        return None
    if key in table:
        return table[key].profile
    name, tag = key.split(":", 1)
    rest, quant = split_quant(tag)
    size = tokens(rest)[:1]
    base = table.get(f"{name}:{size[0]}") if size else None
    if base is None:
        known = sorted(t for t in table if t.startswith(f"{name}:"))
        if known:
            raise NameChoiceError(
                "model", f"{key!r}: the catalog knows these {name} tags: {', '.join(known)}"
            )
        return None
    return _profile(places, places[base.profile][0], quant, key)


def _hub(ref: str, places: Mapping[str, Place]) -> str | None:
    """A Hub id, a GGUF/MLX repository of one, an LM Studio key or a GGUF file name."""
    text = ref.strip()
    quant: str | None = None
    gguf_file = text.lower().endswith(".gguf")
    if gguf_file:
        text = re.sub(_SPLIT_FILE_PART, "", re.split(r"[\\/]", text)[-1][: -len(".gguf")])
    elif re.search(r":[\w.+-]+$", text):
        text, quant = text.rsplit(":", 1)
        quant = quant.lower().replace("-", "_")
    name = text.rpartition("/")[2]
    name_lower = name.lower()
    is_gguf = bool(re.search(_GGUF_SUFFIX, name_lower))
    name_lower = re.sub(_GGUF_SUFFIX, "", name_lower)
    by_name: dict[str, str] = {}
    for model_id, hub in hub_ids().items():
        hub_org, _, hub_name = hub.lower().partition("/")
        by_name.setdefault(hub_name, model_id)
        by_name.setdefault(f"{hub_org}_{hub_name}", model_id)  # bartowski/Qwen_Qwen3-8B-GGUF
    model = by_name.get(name_lower)
    if model is None:
        rest, word = split_quant(name_lower)
        quant = quant or word
        model = by_name.get(re.sub(r"[-_ ]+$", "", rest.strip()).replace(" ", "-"))
        if model is None:
            model = _loose(rest, places, ref, missing_ok=True)
            if model is None:
                return None
    if quant is None and (is_gguf or gguf_file):
        quant = DEFAULT_GGUF
    return _profile(places, model, quant, ref)


def _loose(text: str, places: Mapping[str, Place], ref: str, missing_ok: bool = False) -> str | None:
    """The model loose words name (see the module's rules); None when none does and ``missing_ok``."""
    wanted = tokens(text)
    if not any(re.search(r"[a-z]", w) for w in wanted):  # digits alone would match a version ('-1': r1)
        if missing_ok:
            return None
        raise InputError("model", _unknown(ref, list(places)) if wanted else "give a model id, file or name")
    models = dict.fromkeys(base for base, _, _ in places.values())
    hubs = hub_ids()
    found: list[tuple[str, list[str]]] = []
    for model in models:
        own = tokens(model)
        every = set(own) | set(tokens(hubs.get(model, "")))
        if all((_SYNONYMS.get(w, {w}) & every) for w in wanted):
            found.append((model, own))
    if not found:
        if missing_ok:
            return None
        raise InputError("model", _unknown(ref, list(places)))
    exact = [m for m, own in found if sorted(own) == sorted(wanted)]
    if len(exact) == 1:
        return exact[0]
    newest: dict[str, tuple[float, ...]] = {}
    for _, own in found:
        newest[own[0]] = max(newest.get(own[0], ()), _version(own))
    found = [(m, own) for m, own in found if _version(own) == newest[own[0]]]
    extra = {m: len([w for w in own if w not in wanted and not re.match(_SIZE, w)]) for m, own in found}
    fewest = min(extra.values())
    best = [m for m, _ in found if extra[m] == fewest]
    if len(best) == 1:
        return best[0]
    listed = ", ".join(best[:MAX_LISTED]) + (" ..." if len(best) > MAX_LISTED else "")
    raise NameChoiceError(
        "model", f"{ref!r} names more than one catalog model: {listed}; add a word that tells them apart"
    )


def _unknown(ref: str, ids: list[str]) -> str:
    from rapidfuzz import process

    key = ref.strip().lower()
    matches = [m[0] for m in process.extract(key, ids, limit=3, score_cutoff=60)]
    hint = f"; did you mean {', '.join(repr(m) for m in matches)}?" if matches else ";"
    return f"{ref!r} is not in the catalog{hint} `servebound search WORDS` finds a model, `servebound models list` shows all"


def profile_id_for(ref: str, missing_ok: bool = False) -> str | None:
    """The profile id of a model as a person typed it: a profile id, an Ollama tag, a Hub id (with a
    quantization), a GGUF file name or loose words, among the catalog snapshot's profiles. Every
    surface's model lookup passes here. Unknown names raise InputError with the closest ids (None with
    ``missing_ok``); ambiguous ones raise listing the candidates."""
    check_id_length(ref, "model")
    named = _display_names().get(ref.strip().lower())
    return named if named is not None else find_profile(ref, snapshot.places(), missing_ok)


def profile_name(name: str | None, hf_id: str, weight_format: str) -> str:
    """A profile's display name: the model's name (its Hub repository's where the index gives none)
    and its weight format as people write it: ``Llama-3.3-70B-Instruct (Q4_K_M)``, ``Qwen3-8B (MLX
    4-bit)``, ``gpt-oss-20b (BF16, experts in MXFP4)``."""
    return f"{name or hf_id.split('/')[-1]} ({format_words(weight_format)})"


@cache
def _display_names() -> dict[str, str]:
    """Each profile's display name (lower case) and its id, from the snapshot's index: the name its
    pages show is a name it answers to."""
    entries = {str(row["id"]): row for row in snapshot.header(snapshot.AUDITS)["entries"]}
    return {
        profile_name(entries[base]["name"], entries[base]["hf_id"], fmt).lower(): pid
        for pid, (base, fmt, _) in snapshot.places().items()
    }


def find_profile(ref: str, places: Mapping[str, Place], missing_ok: bool = False) -> str | None:
    """The profile id a typed name means (see the module's rules). A name that matches no model is an
    InputError naming the closest ids, or None with ``missing_ok``; an ambiguous one is an InputError
    listing the candidates."""
    key = ref.strip().lower()
    if key in places:
        return key
    dashed = re.sub(r"\s+", "-", key)  # a profile id typed with spaces
    if dashed in places:
        return dashed
    key = re.sub(r"^(?:https?://)?(?:ollama\.com/)?library/", "", key)  # Ollama's own namespace
    if "/" not in key and "\\" not in key and not key.endswith(".gguf"):
        tagged = _ollama(key, places) if re.fullmatch(r"[a-z0-9._-]+(:[\w.+-]+)?", key) else None
        if tagged is not None:
            return tagged
        if ":" in key:
            key = key.replace(":", " ")
    else:
        hub = _hub(ref, places)
        if hub is not None or missing_ok:
            return hub
    rest, quant = split_quant(key)
    model = _loose(rest, places, ref, missing_ok)
    return None if model is None else _profile(places, model, quant, ref)
