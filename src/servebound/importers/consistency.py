"""The one cross-check of an imported model's shape: its header's keys against each other and against
its tensors, the same for every importer.

A GGUF's metadata, a config.json and a safetensors checkpoint's config each state a model's shape
(layers, width, query and KV heads, head size); the tensors hold it. A hand-edited or corrupted header
that contradicts itself or its tensors would import as another model and decode to a wrong ceiling
(KV heads 0 beside key and value projections gave 0 cache bytes per token). Each importer describes
what its header states (:class:`Declared`) and, where it has tensors, what they show
(:class:`Observed`) in these format-neutral terms, under its own key names (:class:`Keys`), and calls
:func:`check`, which raises one InputError naming the key and the contradiction.

Only real contradictions are refused. The head size is not always width / heads (Gemma, Qwen3 state
``head_dim``; MLA caches a latent), so a projection's size is compared with heads x head size only
where the header states the head size of a plain (non-latent) attention layer; a query projection may
hold a multiple of it (gated attention stacks the gate beside the queries).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from servebound.errors import InputError

T = TypeVar("T")


@dataclass(frozen=True)
class Keys:
    """What a format calls each shape key (for messages): ``llama.block_count`` or ``num_hidden_layers``,
    and how it names a layer's tensors (``blk.N``, ``model.layers.N``)."""

    layers: str
    hidden: str
    heads: str
    kv_heads: str
    head_dim: str
    layer_tensors: str


@dataclass(frozen=True)
class Declared:
    """The shape a header states. ``layers`` decoder layers, stated as ``stated_layers`` (GGUF's
    block_count counts ``extra_layers`` MTP blocks too); per decoder layer, ``heads`` query heads and
    ``kv_heads`` KV heads (0: no softmax attention there); ``hidden`` the residual width. A per-layer
    tuple of one value holds for every layer (a config.json states one count for all).

    The projections' sizes the header implies, per layer (None: not checked there, as for a latent
    cache): ``query_units``, the size a query projection is a whole multiple of (heads x head size; a
    gated layer stacks its gate beside the queries), and ``key_rows``, the sizes a key projection may
    have (KV heads x head size; more than one where a format states global and local variants).
    ``states_head_size``: the header states the head size (otherwise it is width / heads, which the
    heads must divide). ``every_layer_attends``: the head counts hold for every layer (a config.json's
    keys), so 0 KV heads beside query heads is a contradiction by itself."""

    keys: Keys
    layers: int
    hidden: int | None
    heads: tuple[int, ...]
    kv_heads: tuple[int, ...]
    query_units: tuple[int | None, ...] = ()
    key_rows: tuple[frozenset[int] | None, ...] = ()
    states_head_size: bool = False
    stated_layers: int | None = None
    extra_layers: int = 0
    every_layer_attends: bool = False


@dataclass(frozen=True)
class Observed:
    """What the tensors show: the layer indices present, the embedding table's row width (with the
    tensor's name), and per layer the query and key projections' output sizes and a tensor name for
    each layer holding attention or key/value projections."""

    layer_indices: frozenset[int]
    embedding: tuple[str, int] | None = None
    q_rows: Mapping[int, int] = field(default_factory=dict)
    k_rows: Mapping[int, int] = field(default_factory=dict)
    attention: Mapping[int, str] = field(default_factory=dict)
    key_value: Mapping[int, str] = field(default_factory=dict)


def _at(values: tuple[T, ...], layer: int) -> T | None:
    """A per-layer value: the layer's own, the one value given for every layer, or None past the end."""
    if len(values) == 1:
        return values[0]
    return values[layer] if layer < len(values) else None


def check(declared: Declared, observed: Observed | None = None) -> None:
    """Raise InputError for the first contradiction: in the header itself, then against the tensors."""
    if declared.hidden is not None and declared.hidden <= 0:
        raise InputError(declared.keys.hidden, f"is {declared.hidden}; the hidden size must be positive")
    if observed is not None:
        _check_layers(declared, observed)
        _check_width(declared, observed)
        _check_zero_heads(declared, observed)
    _check_header(declared)
    if observed is not None:
        _check_sizes(declared, observed)


def _check_header(d: Declared) -> None:
    k = d.keys
    varies = len(set(d.heads)) > 1 or len(set(d.kv_heads)) > 1
    for layer in range(max(len(d.heads), len(d.kv_heads))):
        heads, kv = _at(d.heads, layer) or 0, _at(d.kv_heads, layer) or 0
        where = f" (layer {layer})" if varies else ""
        if kv > heads:
            raise InputError(
                k.kv_heads,
                f"{kv} KV heads exceed {k.heads.rpartition('.')[2]} {heads}{where}; "
                "each KV head serves one or more query heads",
            )
        if kv and heads % kv:
            raise InputError(
                k.kv_heads,
                f"{kv} KV heads do not divide {k.heads.rpartition('.')[2]} {heads}{where}: grouped-query "
                "attention shares each KV head among an equal group of query heads",
            )
        if d.every_layer_attends and heads and not kv:
            raise InputError(
                k.kv_heads, f"is 0 beside {heads} query heads{where}: attention caches at least one KV head"
            )
        if heads and kv and not d.states_head_size and d.hidden is not None and d.hidden % heads:
            raise InputError(
                k.heads,
                f"{heads} heads do not divide the width {k.hidden.rpartition('.')[2]} {d.hidden}{where}, "
                f"and no {k.head_dim} states the head size; state {k.head_dim} or fix the head count",
            )


def _check_layers(d: Declared, o: Observed) -> None:
    k = d.keys
    stated = d.stated_layers if d.stated_layers is not None else d.layers
    if not o.layer_indices:
        raise InputError(k.layers, f"is {stated} but the file lists no {k.layer_tensors} tensors")
    top = max(o.layer_indices) + 1
    allowed = {d.layers, d.layers + d.extra_layers}
    if top > d.layers + d.extra_layers or top not in allowed:
        first, _, _ = k.layer_tensors.rpartition("N")
        raise InputError(k.layers, f"is {stated} but the tensors hold layers {first}0 to {first}{top - 1}")


def _check_width(d: Declared, o: Observed) -> None:
    if o.embedding is None or d.hidden is None:
        return
    name, width = o.embedding
    if width != d.hidden:
        raise InputError(d.keys.hidden, f"is {d.hidden} but {name} rows hold {width} elements")


def _check_zero_heads(d: Declared, o: Observed) -> None:
    k = d.keys
    for layer in sorted(o.attention):
        if _at(d.heads, layer) == 0:
            raise InputError(
                k.heads, f"is 0 for layer {layer}, which holds attention tensor {o.attention[layer]!r}"
            )
    for layer in sorted(o.key_value):
        if _at(d.kv_heads, layer) == 0:
            raise InputError(
                k.kv_heads,
                f"is 0 for layer {layer}, which holds key/value tensor {o.key_value[layer]!r}: "
                "a layer with key and value projections caches them (0 KV heads would cache nothing)",
            )


def _check_sizes(d: Declared, o: Observed) -> None:
    k = d.keys
    for layer, rows in sorted(o.q_rows.items()):
        unit = _at(d.query_units, layer)
        if unit and rows % unit:
            raise InputError(
                k.heads,
                f"layer {layer}'s query projection holds {rows} rows, not a multiple of {unit} "
                f"({_at(d.heads, layer)} heads x the head size): the header contradicts its tensors",
            )
    for layer, rows in sorted(o.k_rows.items()):
        allowed = _at(d.key_rows, layer)
        if allowed and rows not in allowed:
            sizes = " or ".join(str(n) for n in sorted(allowed))
            raise InputError(
                k.kv_heads,
                f"layer {layer}'s key projection holds {rows} rows, not {sizes} "
                f"({_at(d.kv_heads, layer)} KV heads x the head size): the header contradicts its tensors",
            )


# Hugging Face checkpoints (config.json, safetensors): the descriptions both importers check -------------

#: The keys a config.json names its shape with (the first present is read), its MTP layer count keys.
HF_LAYERS = ("num_hidden_layers", "n_layer", "num_layers")
HF_HIDDEN = ("hidden_size", "n_embd", "d_model")
HF_HEADS = ("num_attention_heads", "n_head", "num_heads")
HF_KV_HEADS = ("num_key_value_heads",)
HF_MTP_LAYERS = ("num_nextn_predict_layers", "mtp_num_hidden_layers")
#: Tensor dtypes whose shape is the matrix's own (packed 4-bit and integer storage reshapes it).
_PLAIN_DTYPES = frozenset({"F64", "F32", "F16", "BF16", "F8_E4M3", "F8_E5M2"})
_HF_BLOCK = re.compile(r"(?:^|\.)layers\.(\d+)\.")
_HF_PROJECTION = re.compile(r"(?:^|\.)layers\.(\d+)\.(?:self_attn|attention|attn)\.([qkvo])_proj\.weight$")
_HF_SET_APART = re.compile(
    r"(?:^|\.)(?:vision_tower|vision_model|visual|vision_encoder|vision|multi_modal_projector|mm_projector|"
    r"audio_tower|audio_model|audio|mtp|mtp_layers|nextn)(?:\.|$)"
)


def _first_int(scope: Mapping[str, Any], keys: tuple[str, ...]) -> tuple[str, int] | None:
    for key in keys:
        value = scope.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return key, value
    return None


def _per_layer(value: object, layers: int) -> tuple[int, ...] | None:
    """A config's per-layer list of counts, when it holds one non-negative integer per layer."""
    if not isinstance(value, list) or len(value) != layers or not layers:
        return None
    if all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value):
        return tuple(value)
    return None


def hf_declared(config: Mapping[str, Any]) -> Declared | None:
    """What a config.json states, from its language model's keys (``text_config`` for a multimodal
    wrapper); None where it states no layer count or no attention heads (recurrent, or keys this check
    does not know). KV heads default to the query heads, as the importer reads them."""
    scope: Mapping[str, Any] = config
    prefix = ""
    layers, heads = _first_int(scope, HF_LAYERS), _first_int(scope, HF_HEADS)
    text = config.get("text_config")
    if (layers is None or heads is None) and isinstance(text, Mapping):
        scope, prefix = text, "text_config."
        layers, heads = _first_int(scope, HF_LAYERS), _first_int(scope, HF_HEADS)
    if layers is None or heads is None:
        return None
    hidden = _first_int(scope, HF_HIDDEN)
    kv = _first_int(scope, HF_KV_HEADS) or heads
    extra = _first_int(scope, HF_MTP_LAYERS)
    keys = Keys(
        layers=prefix + layers[0],
        hidden=prefix + (hidden[0] if hidden else HF_HIDDEN[0]),
        heads=prefix + heads[0],
        kv_heads=prefix + HF_KV_HEADS[0],
        head_dim=prefix + "head_dim",
        layer_tensors="model.layers.N",
    )
    n = max(layers[1], 0)
    # Per-layer head counts where the config lists them (Laguna's num_attention_heads_per_layer).
    per_heads = _per_layer(scope.get(f"{heads[0]}_per_layer"), n) or (heads[1],)
    per_kv = _per_layer(scope.get(f"{HF_KV_HEADS[0]}_per_layer"), n) or (kv[1],)
    query_units: tuple[int | None, ...] = ()
    key_rows: tuple[frozenset[int] | None, ...] = ()
    head_dim = scope.get("head_dim")
    if not isinstance(head_dim, int) and hidden and heads[1] and hidden[1] % heads[1] == 0:
        head_dim = hidden[1] // heads[1]
    # A latent cache (kv_lora_rank) has no K projection; per-layer block configs (Nemotron-NAS) set
    # their own head groups: projection sizes are checked only outside those.
    if isinstance(head_dim, int) and "kv_lora_rank" not in scope and "block_configs" not in scope:
        head_sizes = {head_dim, *(v for v in (scope.get("global_head_dim"),) if isinstance(v, int))}
        extra_kv = {v for v in (scope.get("num_global_key_value_heads"),) if isinstance(v, int)}
        query_units = tuple(h for h in per_heads)
        key_rows = tuple(frozenset(c * size for c in {k, *extra_kv} for size in head_sizes) for k in per_kv)
    return Declared(
        keys,
        n,
        hidden[1] if hidden else None,
        per_heads,
        per_kv,
        query_units,
        key_rows,
        states_head_size=isinstance(scope.get("head_dim"), int) or "kv_lora_rank" in scope,
        extra_layers=max(extra[1], 0) if extra else 0,
        every_layer_attends=True,
    )


def hf_observed(tensors: Iterable[tuple[str, str, tuple[int, ...]]]) -> Observed:
    """What a safetensors checkpoint's tensors (name, dtype, shape) show: the decoder's layer indices
    (vision, audio and named MTP towers set apart), the embedding's width, and per layer the query and
    key projections' output rows (plain dtypes only: packed storage reshapes the matrix)."""
    indices: set[int] = set()
    q_rows: dict[int, int] = {}
    k_rows: dict[int, int] = {}
    attention: dict[int, str] = {}
    key_value: dict[int, str] = {}
    embedding: tuple[str, int] | None = None
    for name, dtype, shape in tensors:
        if _HF_SET_APART.search(name):
            continue
        if name.endswith("embed_tokens.weight") and len(shape) == 2 and dtype in _PLAIN_DTYPES:
            embedding = (name, shape[1])
        if (block := _HF_BLOCK.search(name)) is not None:
            indices.add(int(block.group(1)))
        if (match := _HF_PROJECTION.search(name)) is None:
            continue
        layer, part = int(match.group(1)), match.group(2)
        attention.setdefault(layer, name)
        if part in ("k", "v"):
            key_value.setdefault(layer, name)
        if part in ("q", "k") and len(shape) == 2 and dtype in _PLAIN_DTYPES:
            (q_rows if part == "q" else k_rows)[layer] = shape[0]
    return Observed(frozenset(indices), embedding, q_rows, k_rows, attention, key_value)


__all__ = ["Declared", "Keys", "Observed", "check", "hf_declared", "hf_observed"]
