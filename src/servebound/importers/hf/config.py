"""What every architecture family shares: typed config access, the Arch record, common fields.

Every shape is read from the config by name. Where a family's published config relies on a library
default (Gemma 3's sparse text_config, Llama's absent num_key_value_heads), the default is written here
with the class it comes from and recorded as a note in the audit; where a config lacks head_dim the
importer derives hidden_size / num_attention_heads and says so. Anything else absent is an InputError
naming the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from servebound.errors import InputError
from servebound.importers.hf.blocks import (
    Block,
    Count,
    gqa_attention,
    moe_block,
)
from servebound.importers.hf.mixers import StateStorage

#: Layer counts are walked one by one; past this a config is hostile or broken (the GGUF reader's cap too).
MAX_LAYERS = 65_536

#: Bytes per element of the dtypes configs name for recurrent state and checkpoints.
DTYPE_BYTES: dict[str, float] = {
    "float32": 4.0,
    "float": 4.0,
    "fp32": 4.0,
    "bfloat16": 2.0,
    "bf16": 2.0,
    "float16": 2.0,
    "fp16": 2.0,
    "half": 2.0,
}

_MISSING = object()


class Cfg:
    """Typed, named access to one level of a config mapping. Errors name the dotted field."""

    def __init__(self, data: Mapping[str, object], where: str = "") -> None:
        self.data = data
        self.where = where
        self.notes: list[str] = []

    def name(self, key: str) -> str:
        return f"{self.where}{key}"

    def note(self, text: str) -> None:
        """Record an assumption once (a helper called per layer notes it at its first call)."""
        if text not in self.notes:
            self.notes.append(text)

    def has(self, key: str) -> bool:
        return self.data.get(key) is not None

    def _raw(self, key: str, default: object) -> object:
        value = self.data.get(key)
        if value is None:
            if default is _MISSING:
                raise InputError(
                    self.name(key), "missing from config.json; this architecture needs it to count shapes"
                )
            if default not in (0, False):
                self.notes.append(f"{self.name(key)} absent: using {default!r} (the library default)")
            return default
        return value

    def integer(self, key: str, default: object = _MISSING, *, minimum: int = 1) -> int:
        value = self._raw(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            else:
                raise InputError(self.name(key), f"expected an integer, got {value!r}")
        if value < minimum:
            raise InputError(self.name(key), f"must be at least {minimum}, got {value}")
        if "layers" in key and value > MAX_LAYERS:
            raise InputError(self.name(key), f"{value} layers is beyond any model; at most {MAX_LAYERS:,}")
        return value

    def opt_integer(self, key: str, *, minimum: int = 1) -> int | None:
        if not self.has(key):
            return None
        return self.integer(key, minimum=minimum)

    def flag(self, key: str, default: bool) -> bool:
        value = self.data.get(key)
        if value is None:
            return default
        if not isinstance(value, bool):
            raise InputError(self.name(key), f"expected true or false, got {value!r}")
        return value

    def text(self, key: str, default: object = _MISSING) -> str:
        value = self._raw(key, default)
        if not isinstance(value, str):
            raise InputError(self.name(key), f"expected a string, got {value!r}")
        return value

    def items(self, key: str, length: int | None = None) -> list[object]:
        value = self._raw(key, _MISSING)
        if not isinstance(value, list):
            raise InputError(self.name(key), f"expected a list, got {type(value).__name__}")
        if length is not None and len(value) != length:
            raise InputError(self.name(key), f"has {len(value)} entries; expected {length} (one per layer)")
        return value

    def sub(self, key: str) -> Cfg:
        value = self._raw(key, _MISSING)
        if not isinstance(value, dict):
            raise InputError(self.name(key), f"expected an object, got {type(value).__name__}")
        child = Cfg(value, f"{self.name(key)}.")
        child.notes = self.notes
        return child


@dataclass
class Arch:
    """A language model as layers of blocks, plus embedding, output head and MTP blocks."""

    model_type: str
    hidden: int
    vocab: int
    tied: bool
    layers: list[list[Block]]
    context_limit_tokens: int | None
    mtp: list[Block] = field(default_factory=list)
    final_norms: int = 1
    #: Bias vector of the output head (GPT-J's lm_head), counted with the final norm as small tensors.
    head_bias: int = 0
    dtype: str = "bfloat16"
    notes: list[str] = field(default_factory=list)
    facts: dict[str, object] = field(default_factory=dict)

    @property
    def table(self) -> Count:
        """One vocab x hidden table (the input embedding, or the output head)."""
        return Count(self.vocab * self.hidden, 0)


def head_dim_of(c: Cfg, hidden: int, heads: int) -> int:
    if c.has("head_dim"):
        return c.integer("head_dim")
    if hidden % heads:
        raise InputError(c.name("head_dim"), f"missing and hidden_size {hidden} is not a multiple of {heads}")
    c.note(
        f"{c.name('head_dim')} absent: derived hidden_size / num_attention_heads = {hidden} / {heads}"
        f" = {hidden // heads}"
    )
    return hidden // heads


def decoder_shape(c: Cfg) -> tuple[int, int, int, int, int]:
    """A GQA decoder's hidden size, layers, query heads, KV heads and head_dim (see :func:`kv_heads_of`,
    :func:`head_dim_of`)."""
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    return hidden, layers, heads, kv_heads_of(c, heads), head_dim_of(c, hidden, heads)


def kv_heads_of(c: Cfg, heads: int) -> int:
    if c.has("num_key_value_heads"):
        return c.integer("num_key_value_heads")
    c.note(f"{c.name('num_key_value_heads')} absent: multi-head attention, kv heads = {heads}")
    return heads


def dtype_of(c: Cfg) -> str:
    for key in ("torch_dtype", "dtype"):
        value = c.data.get(key)
        if isinstance(value, str):
            return value
    return "bfloat16"


def make_arch(
    c: Cfg,
    model_type: str,
    hidden: int,
    layers: list[list[Block]],
    *,
    tied_default: bool = False,
    **extra: Any,
) -> Arch:
    """The fields every family reads the same way: vocabulary, tied embeddings, context limit, dtype."""
    return Arch(
        model_type=model_type,
        hidden=hidden,
        vocab=c.integer("vocab_size"),
        tied=c.flag("tie_word_embeddings", tied_default),
        layers=layers,
        context_limit_tokens=c.opt_integer("max_position_embeddings"),
        dtype=dtype_of(c),
        **extra,
    )


def state_dtype_of(c: Cfg, *keys: str) -> tuple[str, float]:
    for key in keys:
        value = c.data.get(key)
        if isinstance(value, str):
            if value not in DTYPE_BYTES:
                raise InputError(c.name(key), f"unknown dtype {value!r}; known: {', '.join(DTYPE_BYTES)}")
            return value, DTYPE_BYTES[value]
    dtype = dtype_of(c)
    return dtype, DTYPE_BYTES.get(dtype, 2.0)


def state_storage_of(c: Cfg, *keys: str) -> StateStorage:
    """A recurrent mixer's state at the first dtype ``keys`` name (see :func:`state_dtype_of`), its
    convolution inputs at the model dtype."""
    state_dtype, state_bytes = state_dtype_of(c, *keys)
    return StateStorage(state_dtype, state_bytes, DTYPE_BYTES.get(dtype_of(c), 2.0))


def layer_types_of(c: Cfg, layers: int, allowed: set[str]) -> list[str] | None:
    if not c.has("layer_types"):
        return None
    kinds = c.items("layer_types", layers)
    for kind in kinds:
        if kind not in allowed:
            raise InputError(c.name("layer_types"), f"unknown layer type {kind!r}; known: {sorted(allowed)}")
    return [str(kind) for kind in kinds]


def full_attention(
    c: Cfg,
    hidden: int,
    *,
    window: int | None = None,
    q_heads: int | None = None,
    label: str | None = None,
    **options: Any,
) -> Block:
    """Softmax attention with its shapes read from the config: query heads (``num_attention_heads``
    unless ``q_heads`` is given per layer), KV heads and head_dim (see :func:`kv_heads_of`,
    :func:`head_dim_of`). ``window`` None is full attention; ``options`` pass to ``gqa_attention``
    (biases, norms, QK norm, gates). Every family with plain softmax attention builds it here."""
    heads = c.integer("num_attention_heads")
    return gqa_attention(
        hidden=hidden,
        q_heads=heads if q_heads is None else q_heads,
        kv_heads=kv_heads_of(c, heads),
        head_dim=head_dim_of(c, hidden, heads),
        window=window,
        label=label or ("full attention" if window is None else "sliding attention"),
        **options,
    )


def gated_moe(
    c: Cfg, hidden: int, routed: str, width: str, *, per_token: str = "num_experts_per_tok", **options: Any
) -> Block:
    """A gated MoE layer labelled "MoE" whose expert count, experts per token and expert width are the
    config's ``routed``, ``per_token`` and ``width`` keys; ``options`` pass to ``moe_block`` (shared
    experts, gates, biases)."""
    return moe_block(
        hidden=hidden,
        routed=c.integer(routed),
        per_token=c.integer(per_token),
        width=c.integer(width),
        gated=True,
        label="MoE",
        **options,
    )
