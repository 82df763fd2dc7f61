"""Architecture families: a parsed config.json to a list of layers of blocks.

Every shape is read from the config by name. Where a family's published config relies on a library
default (Gemma 3's sparse text_config, Llama's absent num_key_value_heads), the default is written here
with the class it comes from and recorded as a note in the audit; where a config lacks head_dim the
importer derives hidden_size / num_attention_heads and says so. Anything else absent is an InputError
naming the field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from servebound.errors import InputError
from servebound.importers.hf.blocks import (
    Block,
    Count,
    SparseIndexer,
    compressed_attention,
    dense_mlp,
    gated_delta_net,
    gqa_attention,
    hyper_connection_head,
    hyper_connections,
    lightning_attention,
    mamba1_mixer,
    mamba2_mixer,
    mla_attention,
    moe_block,
)

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
    dtype: str = "bfloat16"
    notes: list[str] = field(default_factory=list)
    facts: dict[str, object] = field(default_factory=dict)

    @property
    def table(self) -> Count:
        """One vocab x hidden table (the input embedding, or the output head)."""
        return Count(self.vocab * self.hidden, 0)


def _head_dim(c: Cfg, hidden: int, heads: int) -> int:
    if c.has("head_dim"):
        return c.integer("head_dim")
    if hidden % heads:
        raise InputError(c.name("head_dim"), f"missing and hidden_size {hidden} is not a multiple of {heads}")
    c.notes.append(
        f"{c.name('head_dim')} absent: derived hidden_size / num_attention_heads = {hidden} / {heads}"
        f" = {hidden // heads}"
    )
    return hidden // heads


def _kv_heads(c: Cfg, heads: int) -> int:
    if c.has("num_key_value_heads"):
        return c.integer("num_key_value_heads")
    c.notes.append(f"{c.name('num_key_value_heads')} absent: multi-head attention, kv heads = {heads}")
    return heads


def _dtype(c: Cfg) -> str:
    for key in ("torch_dtype", "dtype"):
        value = c.data.get(key)
        if isinstance(value, str):
            return value
    return "bfloat16"


def _arch(
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
        dtype=_dtype(c),
        **extra,
    )


def _state_dtype(c: Cfg, *keys: str) -> tuple[str, float]:
    for key in keys:
        value = c.data.get(key)
        if isinstance(value, str):
            if value not in DTYPE_BYTES:
                raise InputError(c.name(key), f"unknown dtype {value!r}; known: {', '.join(DTYPE_BYTES)}")
            return value, DTYPE_BYTES[value]
    dtype = _dtype(c)
    return dtype, DTYPE_BYTES.get(dtype, 2.0)


def _layer_types(c: Cfg, layers: int, allowed: set[str]) -> list[str] | None:
    if not c.has("layer_types"):
        return None
    kinds = c.items("layer_types", layers)
    for kind in kinds:
        if kind not in allowed:
            raise InputError(c.name("layer_types"), f"unknown layer type {kind!r}; known: {sorted(allowed)}")
    return [str(kind) for kind in kinds]


# ---------------------------------------------------------------------------------------------------
# Dense and sliding-window decoders (Llama-like, Gemma)


def _dense_decoder(c: Cfg, model_type: str) -> Arch:
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    kv = _kv_heads(c, heads)
    head_dim = _head_dim(c, hidden, heads)
    width = c.integer("intermediate_size")
    gemma = model_type in {"gemma", "gemma2", "gemma3_text"}
    tied = c.flag("tie_word_embeddings", gemma)
    window = c.opt_integer("sliding_window")
    kinds = _layer_types(c, layers, {"full_attention", "sliding_attention"})
    if kinds is None:
        if model_type == "gemma2":
            kinds = ["sliding_attention" if i % 2 == 0 else "full_attention" for i in range(layers)]
        elif model_type == "gemma3_text":
            pattern = c.integer("sliding_window_pattern", 6)
            kinds = [
                "full_attention" if (i + 1) % pattern == 0 else "sliding_attention" for i in range(layers)
            ]
        elif model_type in {"qwen2", "qwen3"} and window and c.flag("use_sliding_window", False):
            start = c.integer("max_window_layers", layers, minimum=0)
            kinds = ["sliding_attention" if i >= start else "full_attention" for i in range(layers)]
        elif model_type in {"mistral", "ministral3", "phi3"} and window:
            kinds = ["sliding_attention"] * layers
        else:
            kinds = ["full_attention"] * layers
    if "sliding_attention" in kinds and window is None:
        raise InputError(c.name("sliding_window"), "missing, but some layers are sliding-window layers")
    bias = c.flag("attention_bias", False)
    attention_args: dict[str, object] = {
        "q_bias": bias or model_type == "qwen2",
        "kv_bias": bias or model_type == "qwen2",
        "o_bias": bias and model_type in {"llama", "granite", "olmo", "olmo2", "mistral"},
        "qk_norm": {"qwen3": "head", "gemma3_text": "head", "olmo2": "full"}.get(model_type, "none"),
        "norms": 4 if gemma else (0 if model_type == "olmo" else 2),
        "fused_qkv": model_type == "phi3",
    }
    mlp_bias = c.flag("mlp_bias", False)
    out: list[list[Block]] = []
    for kind in kinds:
        sliding = kind == "sliding_attention"
        attention = gqa_attention(
            hidden=hidden,
            q_heads=heads,
            kv_heads=kv,
            head_dim=head_dim,
            window=window if sliding else None,
            label="sliding attention" if sliding else "full attention",
            **attention_args,  # type: ignore[arg-type]
        )
        out.append([attention, dense_mlp(hidden=hidden, width=width, gated=True, label="MLP", bias=mlp_bias)])
    return _arch(c, model_type, hidden, out, tied_default=tied, final_norms=0 if model_type == "olmo" else 1)


#: Gemma3TextConfig defaults (transformers), used by Google's sparse gemma-3 -it configs.
GEMMA3_TEXT_DEFAULTS: dict[str, object] = {
    "num_attention_heads": 8,
    "num_key_value_heads": 4,
    "head_dim": 256,
    "sliding_window_pattern": 6,
    "vocab_size": 262208,
    "max_position_embeddings": 131072,
    "sliding_window": 4096,
}


def _gemma3_text(c: Cfg, model_type: str) -> Arch:
    merged = {**GEMMA3_TEXT_DEFAULTS, **{k: v for k, v in c.data.items() if v is not None}}
    for key, value in GEMMA3_TEXT_DEFAULTS.items():
        if c.data.get(key) is None:
            c.notes.append(f"{c.name(key)} absent: using {value!r} (transformers Gemma3TextConfig default)")
    inner = Cfg(merged, c.where)
    inner.notes = c.notes
    return _dense_decoder(inner, "gemma3_text")


def _gemma4_text(c: Cfg, model_type: str) -> Arch:
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    kv = _kv_heads(c, heads)
    head_dim = c.integer("head_dim")
    window = c.integer("sliding_window")
    kinds = _layer_types(c, layers, {"full_attention", "sliding_attention"})
    if kinds is None:
        raise InputError(c.name("layer_types"), "missing; Gemma 4 needs the per-layer attention kinds")
    global_kv = c.integer("num_global_key_value_heads", kv)
    global_head_dim = c.integer("global_head_dim", head_dim)
    k_eq_v = c.flag("attention_k_eq_v", False)
    width = c.integer("intermediate_size")
    moe = c.flag("enable_moe_block", False)
    if c.opt_integer("num_kv_shared_layers", minimum=0):
        raise InputError(
            c.name("num_kv_shared_layers"), "KV-shared layers are not supported yet; set it to 0"
        )
    out: list[list[Block]] = []
    for kind in kinds:
        sliding = kind == "sliding_attention"
        blocks = [
            gqa_attention(
                hidden=hidden,
                q_heads=heads,
                kv_heads=kv if sliding else global_kv,
                head_dim=head_dim if sliding else global_head_dim,
                window=window if sliding else None,
                label="sliding attention"
                if sliding
                else "full attention (K=V)"
                if k_eq_v
                else "full attention",
                qk_norm="head",
                k_eq_v=k_eq_v and not sliding,
                norms=4,
            ),
            dense_mlp(hidden=hidden, width=width, gated=True, label="dense MLP"),
        ]
        if moe:
            blocks.append(
                moe_block(
                    hidden=hidden,
                    routed=c.integer("num_experts"),
                    per_token=c.integer("top_k_experts"),
                    width=c.integer("moe_intermediate_size"),
                    gated=True,
                    label="MoE",
                )
            )
        out.append(blocks)
    return _arch(c, model_type, hidden, out, tied_default=True)


# ---------------------------------------------------------------------------------------------------
# Mixture-of-experts decoders with GQA attention


def _gqa_moe(c: Cfg, model_type: str) -> Arch:
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    kv = _kv_heads(c, heads)
    head_dim = _head_dim(c, hidden, heads)
    window = c.opt_integer("sliding_window")
    kinds = _layer_types(c, layers, {"full_attention", "sliding_attention"})
    if kinds is None:
        sliding_all = model_type == "mixtral" and window is not None
        kinds = ["sliding_attention" if sliding_all else "full_attention"] * layers
    if "sliding_attention" in kinds and window is None:
        raise InputError(c.name("sliding_window"), "missing, but some layers are sliding-window layers")
    if model_type in {"mixtral", "gpt_oss", "minimax_m2", "minimax"}:
        routed, width = c.integer("num_local_experts"), c.integer("intermediate_size")
    elif model_type in {"glm4_moe"}:
        routed, width = c.integer("n_routed_experts"), c.integer("moe_intermediate_size")
    else:
        routed, width = c.integer("num_experts"), c.integer("moe_intermediate_size")
    per_token = c.integer("num_experts_per_tok")
    shared = 0
    if model_type in {"qwen2_moe", "laguna"}:
        shared = c.integer("shared_expert_intermediate_size", 0, minimum=0)
    elif model_type == "glm4_moe":
        shared = c.integer("n_shared_experts", 0, minimum=0) * width
    elif model_type == "minimax_m2":
        shared = c.integer("shared_intermediate_size", 0, minimum=0)
    dense_from = 0
    mlp_kinds: list[str]
    if model_type == "laguna":
        mlp_kinds = [str(kind) for kind in c.items("mlp_layer_types", layers)]
    else:
        if model_type == "glm4_moe":
            dense_from = c.integer("first_k_dense_replace", 0, minimum=0)
        step = c.integer("decoder_sparse_step", 1)
        only_dense = set(c.items("mlp_only_layers")) if c.has("mlp_only_layers") else set()
        mlp_kinds = [
            "dense" if (i < dense_from or i in only_dense or (i + 1) % step) else "sparse"
            for i in range(layers)
        ]
    bias = c.flag("attention_bias", model_type == "gpt_oss")
    per_layer_heads = (
        [int(str(h)) for h in c.items("num_attention_heads_per_layer", layers)]
        if c.has("num_attention_heads_per_layer")
        else [heads] * layers
    )
    qk_norm = "none"
    if model_type in {"qwen3_moe", "laguna"} or (model_type == "glm4_moe" and c.flag("use_qk_norm", False)):
        qk_norm = "head"
    if model_type == "minimax_m2" and c.flag("use_qk_norm", False):
        qk_norm = "full"
    out: list[list[Block]] = []
    for kind, mlp_kind, q_heads in zip(kinds, mlp_kinds, per_layer_heads, strict=True):
        sliding = kind == "sliding_attention"
        attention = gqa_attention(
            hidden=hidden,
            q_heads=q_heads,
            kv_heads=kv,
            head_dim=head_dim,
            window=window if sliding else None,
            label=("sliding attention" if sliding else "full attention") + f" ({q_heads} q heads)",
            q_bias=bias or model_type == "qwen2_moe",
            kv_bias=bias or model_type == "qwen2_moe",
            o_bias=bias and model_type == "gpt_oss",
            qk_norm=qk_norm,
            sinks=model_type == "gpt_oss",
            head_gate=model_type == "laguna" and bool(c.data.get("gating")),
        )
        if mlp_kind == "dense":
            mlp = dense_mlp(
                hidden=hidden, width=c.integer("intermediate_size"), gated=True, label="dense MLP"
            )
        else:
            mlp = moe_block(
                hidden=hidden,
                routed=routed,
                per_token=per_token,
                width=width,
                gated=True,
                label="MoE",
                shared_width=shared,
                shared_gate=model_type == "qwen2_moe" and shared > 0,
                router_bias=model_type == "gpt_oss",
                correction_bias=model_type in {"glm4_moe", "minimax_m2", "laguna"},
                expert_bias=model_type == "gpt_oss",
            )
        out.append([attention, mlp])
    mtp: list[Block] = []
    if model_type == "glm4_moe":
        mtp = _mtp_like(out[-1], hidden, c.integer("num_nextn_predict_layers", 0, minimum=0))
    elif model_type == "minimax_m2" and c.flag("use_mtp", False):
        modules = c.integer("num_mtp_modules", 0, minimum=0) * c.integer("mtp_transformer_layers", 1)
        mtp = _mtp_like(out[-1], hidden, modules)
    return _arch(c, model_type, hidden, out, mtp=mtp)


def _mtp_like(layer: list[Block], hidden: int, modules: int) -> list[Block]:
    """MTP modules: one decoder layer like the last plus a 2h x h input projection and norms each.
    The module's embedding and output head are shared with the main model and not counted again."""
    if modules == 0:
        return []
    layer_params = sum((b.always + b.expert.times(b.routed) for b in layer), Count())
    projection = Count(2 * hidden * hidden, 3 * hidden)
    per_module = layer_params + projection
    return [
        Block(
            label="MTP module",
            formula=(
                f"{modules} x (decoder layer {layer_params.total} + projection 2x{hidden}x{hidden} + 3 norms)"
            ),
            always=per_module.times(modules),
        )
    ]


def _llama4_text(c: Cfg, model_type: str) -> Arch:
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    kv = _kv_heads(c, heads)
    head_dim = _head_dim(c, hidden, heads)
    chunk = c.integer("attention_chunk_size")
    step = c.integer("interleave_moe_layer_step", 1)
    if c.has("no_rope_layers"):
        rope = [bool(x) for x in c.items("no_rope_layers", layers)]
    else:
        interval = c.integer("no_rope_layer_interval", 4)
        c.notes.append(
            f"{c.name('no_rope_layers')} absent: every {interval}th layer is a global NoPE layer "
            "(transformers Llama4TextConfig default); the others use chunked attention"
        )
        rope = [(i + 1) % interval != 0 for i in range(layers)]
    moe_layers = set(range(step - 1, layers, step))
    out: list[list[Block]] = []
    for i in range(layers):
        attention = gqa_attention(
            hidden=hidden,
            q_heads=heads,
            kv_heads=kv,
            head_dim=head_dim,
            window=chunk if rope[i] else None,
            label="chunked attention" if rope[i] else "global NoPE attention",
        )
        if i in moe_layers:
            width = c.integer("intermediate_size")
            mlp = moe_block(
                hidden=hidden,
                routed=c.integer("num_local_experts"),
                per_token=c.integer("num_experts_per_tok"),
                width=width,
                gated=True,
                label="MoE",
                shared_width=width,
            )
        else:
            mlp = dense_mlp(
                hidden=hidden, width=c.integer("intermediate_size_mlp"), gated=True, label="dense MLP"
            )
        out.append([attention, mlp])
    c.notes.append(
        f"chunked attention (attention_chunk_size {chunk}) is treated as a sliding window of {chunk} tokens"
    )
    return _arch(c, model_type, hidden, out)


# ---------------------------------------------------------------------------------------------------
# Latent attention (DeepSeek V2/V3/V3.2, Kimi K2, GLM-4.7-Flash, GLM-5)


def _mla_moe(c: Cfg, model_type: str) -> Arch:
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    indexer = None
    if c.has("index_topk"):
        indexer = SparseIndexer(
            c.integer("index_n_heads"), c.integer("index_head_dim"), c.integer("index_topk")
        )
    q_lora = c.opt_integer("q_lora_rank")
    dense_from = c.integer("first_k_dense_replace", 0, minimum=0)
    freq = c.integer("moe_layer_freq", 1)
    routed = c.opt_integer("n_routed_experts")
    width = c.integer("moe_intermediate_size") if routed else 0
    out: list[list[Block]] = []
    for i in range(layers):
        attention = mla_attention(
            hidden=hidden,
            heads=heads,
            q_lora_rank=q_lora,
            kv_lora_rank=c.integer("kv_lora_rank"),
            qk_nope_head_dim=c.integer("qk_nope_head_dim"),
            qk_rope_head_dim=c.integer("qk_rope_head_dim"),
            v_head_dim=c.integer("v_head_dim"),
            indexer=indexer,
            label="MLA + sparse indexer" if indexer else "MLA",
        )
        if routed and i >= dense_from and i % freq == 0:
            mlp = moe_block(
                hidden=hidden,
                routed=routed,
                per_token=c.integer("num_experts_per_tok"),
                width=width,
                gated=True,
                label="MoE",
                shared_width=c.integer("n_shared_experts", 0, minimum=0) * width,
                correction_bias=c.data.get("topk_method") == "noaux_tc",
            )
        else:
            mlp = dense_mlp(
                hidden=hidden, width=c.integer("intermediate_size"), gated=True, label="dense MLP"
            )
        out.append([attention, mlp])
    mtp = _mtp_like(out[-1], hidden, c.integer("num_nextn_predict_layers", 0, minimum=0))
    return _arch(c, model_type, hidden, out, mtp=mtp)


# ---------------------------------------------------------------------------------------------------
# Compressed and sparse attention with hyper-connections (DeepSeek V4)

#: The compression ratio whose layers the reference gives an indexer and overlapping pools (CSA).
V4_SPARSE_RATIO = 4
#: The reference keeps the compressor's running kv and score buffers in float32.
V4_COMPRESSOR_STATE_BYTES = 4.0


def _deepseek_v4(c: Cfg, model_type: str) -> Arch:
    """DeepSeek V4: per layer, attention chosen by compress_ratios (0: a sliding window only; 4: CSA,
    compressed entries read through the sparse indexer's top index_topk; other ratios: HCA, every
    compressed entry read), hyper-connections over hc_mult residual streams, and a MoE with shared
    experts (the first num_hash_layers route by token id). compress_ratios holds one more entry per MTP
    layer (num_nextn_predict_layers); MTP modules are resident and not swept."""
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    if c.integer("num_key_value_heads", 1) != 1:
        raise InputError(c.name("num_key_value_heads"), "DeepSeek V4 shares one key-value entry; expected 1")
    head_dim = c.integer("head_dim")
    o_groups = c.integer("o_groups")
    if heads % o_groups:
        raise InputError(c.name("o_groups"), f"must divide num_attention_heads {heads}, got {o_groups}")
    mtp_layers = c.integer("num_nextn_predict_layers", 0, minimum=0)
    ratios: list[int] = []
    for value in c.items("compress_ratios"):
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise InputError(c.name("compress_ratios"), f"entries must be integers >= 0, got {value!r}")
        ratios.append(value)
    if len(ratios) not in {layers, layers + mtp_layers}:
        raise InputError(
            c.name("compress_ratios"),
            f"has {len(ratios)} entries; expected {layers} layers + {mtp_layers} MTP layers",
        )
    indexer = SparseIndexer(c.integer("index_n_heads"), c.integer("index_head_dim"), c.integer("index_topk"))
    streams = c.integer("hc_mult")
    hash_layers = c.integer("num_hash_layers", 0, minimum=0)
    routed = c.integer("n_routed_experts")
    width = c.integer("moe_intermediate_size")
    attention_args: dict[str, Any] = {
        "hidden": hidden,
        "heads": heads,
        "head_dim": head_dim,
        "q_lora_rank": c.integer("q_lora_rank"),
        "o_groups": o_groups,
        "o_lora_rank": c.integer("o_lora_rank"),
        "window": c.integer("sliding_window"),
        "state_bytes_per_element": V4_COMPRESSOR_STATE_BYTES,
    }

    def layer(i: int, ratio: int) -> list[Block]:
        sparse = ratio == V4_SPARSE_RATIO
        label = (
            "sliding-window attention"
            if not ratio
            else f"CSA attention (ratio {ratio}) + indexer"
            if sparse
            else f"HCA attention (ratio {ratio})"
        )
        attention = compressed_attention(
            ratio=ratio, indexer=indexer if sparse else None, label=label, **attention_args
        )
        hashed = i < hash_layers
        mlp = moe_block(
            hidden=hidden,
            routed=routed,
            per_token=c.integer("num_experts_per_tok"),
            width=width,
            gated=True,
            label="MoE (hash-routed)" if hashed else "MoE",
            shared_width=c.integer("n_shared_experts", 0, minimum=0) * width,
            correction_bias=not hashed,
        )
        return [
            attention,
            hyper_connections(hidden=hidden, streams=streams, sites=2, label="hyper-connections"),
            mlp,
        ]

    out = [layer(i, ratio) for i, ratio in enumerate(ratios[:layers])]
    out[-1].append(hyper_connection_head(hidden=hidden, streams=streams, label="hyper-connection head"))
    mtp: list[Block] = []
    if mtp_layers:
        module, expert = Count(), Count()
        for j in range(mtp_layers):
            ratio = ratios[layers + j] if len(ratios) > layers else 0
            blocks = layer(layers + j, ratio)
            blocks.append(hyper_connection_head(hidden=hidden, streams=streams, label="MTP head"))
            module += sum((b.always for b in blocks), Count())
            expert += sum((b.expert for b in blocks), Count())
        module += Count(2 * hidden * hidden, 3 * hidden).times(mtp_layers)
        size = module + expert.times(routed)
        mtp = [
            Block(
                label="MTP module",
                formula=(
                    f"{mtp_layers} x (decoder layer with its hyper-connections and head + e_proj and h_proj "
                    f"2x{hidden}x{hidden} + 3 norms) = {size.total}"
                ),
                always=module,
                expert=expert,
                routed=routed,
            )
        ]
    if hash_layers:
        c.notes.append(
            f"the first {hash_layers} MoE layers route by token id (a vocab x top-k integer table, "
            "not a weight: not counted)"
        )
    c.notes.append(
        "hyper-connection mixing weights and compressor position biases are float32 in the reference; "
        "counted at the small-tensor width"
    )
    c.notes.append(
        "compressor running buffers (kv and score) counted as float32 state per session; the reference "
        "stores cached entries at reduced precision (FP8 main entries, FP4 indexer keys): pick kv_precision"
    )
    return _arch(c, model_type, hidden, out, mtp=mtp)


# ---------------------------------------------------------------------------------------------------
# Linear-attention and recurrent hybrids


def _qwen_hybrid(c: Cfg, model_type: str) -> Arch:
    """Qwen3-Next and Qwen3.5: gated delta-net layers with a gated full-attention layer every
    full_attention_interval layers; MoE (with a gated shared expert) or dense MLPs."""
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    kv = _kv_heads(c, heads)
    head_dim = _head_dim(c, hidden, heads)
    kinds = _layer_types(c, layers, {"full_attention", "linear_attention"})
    if kinds is None:
        interval = c.integer("full_attention_interval")
        kinds = ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(layers)]
    state_dtype, state_bytes = _state_dtype(c, "mamba_ssm_dtype")
    if not c.has("mamba_ssm_dtype"):
        c.notes.append(f"delta-net state dtype not in config: using the model dtype {state_dtype}")
    conv_dtype = _dtype(c)
    gated_output = c.flag("attn_output_gate", True)
    is_moe = c.has("num_experts")
    only_dense = set(c.items("mlp_only_layers")) if c.has("mlp_only_layers") else set()
    out: list[list[Block]] = []
    for i, kind in enumerate(kinds):
        if kind == "full_attention":
            mixer = gqa_attention(
                hidden=hidden,
                q_heads=heads,
                kv_heads=kv,
                head_dim=head_dim,
                window=None,
                label="gated full attention",
                qk_norm="head",
                output_gate=gated_output,
                q_bias=c.flag("attention_bias", False),
                kv_bias=c.flag("attention_bias", False),
            )
        else:
            mixer = gated_delta_net(
                hidden=hidden,
                key_heads=c.integer("linear_num_key_heads"),
                value_heads=c.integer("linear_num_value_heads"),
                key_head_dim=c.integer("linear_key_head_dim"),
                value_head_dim=c.integer("linear_value_head_dim"),
                conv_kernel=c.integer("linear_conv_kernel_dim"),
                state_bytes_per_element=state_bytes,
                state_dtype=state_dtype,
                conv_bytes_per_element=DTYPE_BYTES.get(conv_dtype, 2.0),
                label="gated delta-net",
            )
        if is_moe and i not in only_dense:
            mlp = moe_block(
                hidden=hidden,
                routed=c.integer("num_experts"),
                per_token=c.integer("num_experts_per_tok"),
                width=c.integer("moe_intermediate_size"),
                gated=True,
                label="MoE",
                shared_width=c.integer("shared_expert_intermediate_size", 0, minimum=0),
                shared_gate=True,
            )
        else:
            mlp = dense_mlp(hidden=hidden, width=c.integer("intermediate_size"), gated=True, label="MLP")
        out.append([mixer, mlp])
    full_index = kinds.index("full_attention") if "full_attention" in kinds else len(kinds) - 1
    mtp = _mtp_like(out[full_index], hidden, c.integer("mtp_num_hidden_layers", 0, minimum=0))
    return _arch(c, model_type, hidden, out, mtp=mtp)


def _nemotron_h(c: Cfg, model_type: str) -> Arch:
    """Nemotron-H: one mixer per layer from hybrid_override_pattern (M Mamba-2, * attention,
    - MLP, E MoE); squared-ReLU MLPs are not gated."""
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    pattern = c.text("hybrid_override_pattern")
    if len(pattern) != layers or set(pattern) - set("M*-E"):
        raise InputError(
            c.name("hybrid_override_pattern"),
            f"expected {layers} characters from M, *, -, E; got {pattern!r}",
        )
    state_dtype, state_bytes = _state_dtype(c, "mamba_ssm_cache_dtype")
    conv_bytes = DTYPE_BYTES.get(_dtype(c), 2.0)
    heads = c.integer("num_attention_heads")
    out: list[list[Block]] = []
    for symbol in pattern:
        if symbol == "M":
            block = mamba2_mixer(
                hidden=hidden,
                heads=c.integer("mamba_num_heads"),
                head_dim=c.integer("mamba_head_dim"),
                groups=c.integer("n_groups"),
                d_state=c.integer("ssm_state_size"),
                d_conv=c.integer("conv_kernel"),
                conv_bias=c.flag("use_conv_bias", True),
                state_bytes_per_element=state_bytes,
                state_dtype=state_dtype,
                conv_bytes_per_element=conv_bytes,
                label="Mamba-2",
            )
        elif symbol == "*":
            block = gqa_attention(
                hidden=hidden,
                q_heads=heads,
                kv_heads=_kv_heads(c, heads),
                head_dim=_head_dim(c, hidden, heads),
                window=None,
                label="full attention",
                norms=1,
            )
        elif symbol == "-":
            mlp = dense_mlp(hidden=hidden, width=c.integer("intermediate_size"), gated=False, label="MLP")
            block = replace(mlp, formula=mlp.formula + " + 1 norm", always=mlp.always + Count(0, hidden))
        else:
            moe = moe_block(
                hidden=hidden,
                routed=c.integer("n_routed_experts"),
                per_token=c.integer("num_experts_per_tok"),
                width=c.integer("moe_intermediate_size"),
                gated=False,
                label="MoE",
                shared_width=c.integer("n_shared_experts", 0, minimum=0)
                * c.integer("moe_shared_expert_intermediate_size", 0, minimum=0),
                correction_bias=True,
            )
            block = replace(moe, formula=moe.formula + " + 1 norm", always=moe.always + Count(0, hidden))
        out.append([block])
    return _arch(c, model_type, hidden, out)


def _granite_hybrid(c: Cfg, model_type: str) -> Arch:
    """Granite 4.0 hybrid: Mamba-2 or attention per layer_types, each followed by a MoE (with a shared
    MLP) or, without experts, a dense shared MLP."""
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    kinds = _layer_types(c, layers, {"mamba", "attention"})
    if kinds is None:
        raise InputError(c.name("layer_types"), "missing; granitemoehybrid needs mamba/attention per layer")
    heads = c.integer("num_attention_heads")
    state_dtype, state_bytes = _state_dtype(c, "mamba_ssm_cache_dtype")
    conv_bytes = DTYPE_BYTES.get(_dtype(c), 2.0)
    routed = c.integer("num_local_experts", 0, minimum=0)
    out: list[list[Block]] = []
    for kind in kinds:
        if kind == "mamba":
            expand = c.integer("mamba_expand", 2)
            head_dim = c.integer("mamba_d_head")
            mixer = mamba2_mixer(
                hidden=hidden,
                heads=c.integer("mamba_n_heads", expand * hidden // head_dim),
                head_dim=head_dim,
                groups=c.integer("mamba_n_groups"),
                d_state=c.integer("mamba_d_state"),
                d_conv=c.integer("mamba_d_conv"),
                conv_bias=c.flag("mamba_conv_bias", True),
                state_bytes_per_element=state_bytes,
                state_dtype=state_dtype,
                conv_bytes_per_element=conv_bytes,
                label="Mamba-2",
                norms=2,
            )
        else:
            mixer = gqa_attention(
                hidden=hidden,
                q_heads=heads,
                kv_heads=_kv_heads(c, heads),
                head_dim=_head_dim(c, hidden, heads),
                window=None,
                label="full attention",
                q_bias=c.flag("attention_bias", False),
                kv_bias=c.flag("attention_bias", False),
                o_bias=c.flag("attention_bias", False),
            )
        shared = c.integer("shared_intermediate_size", 0, minimum=0)
        if routed:
            mlp = moe_block(
                hidden=hidden,
                routed=routed,
                per_token=c.integer("num_experts_per_tok"),
                width=c.integer("intermediate_size"),
                gated=True,
                label="MoE",
                shared_width=shared,
            )
        else:
            mlp = dense_mlp(hidden=hidden, width=shared, gated=True, label="shared MLP")
        out.append([mixer, mlp])
    return _arch(c, model_type, hidden, out, tied_default=True)


def _mamba(c: Cfg, model_type: str) -> Arch:
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    d_inner = c.integer("intermediate_size")
    d_state = c.integer("state_size")
    dt_rank = c.integer("time_step_rank")
    state_dtype, state_bytes = _state_dtype(c)
    block = mamba1_mixer(
        hidden=hidden,
        d_inner=d_inner,
        d_state=d_state,
        d_conv=c.integer("conv_kernel"),
        dt_rank=dt_rank,
        conv_bias=c.flag("use_conv_bias", True),
        proj_bias=c.flag("use_bias", False),
        state_bytes_per_element=state_bytes,
        state_dtype=state_dtype,
        conv_bytes_per_element=state_bytes,
        label="Mamba-1",
    )
    return _arch(c, model_type, hidden, [[block] for _ in range(layers)], tied_default=True)


def _jamba(c: Cfg, model_type: str) -> Arch:
    """Jamba: attention every attn_layer_period layers (at attn_layer_offset), Mamba-1 elsewhere; MoE
    every expert_layer_period layers (at expert_layer_offset), dense MLPs elsewhere."""
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    attn_period, attn_offset = c.integer("attn_layer_period"), c.integer("attn_layer_offset", minimum=0)
    moe_period, moe_offset = c.integer("expert_layer_period"), c.integer("expert_layer_offset", minimum=0)
    state_dtype, state_bytes = _state_dtype(c)
    expand = c.integer("mamba_expand")
    d_state = c.integer("mamba_d_state")
    out: list[list[Block]] = []
    for i in range(layers):
        if i % attn_period == attn_offset:
            mixer = gqa_attention(
                hidden=hidden,
                q_heads=heads,
                kv_heads=_kv_heads(c, heads),
                head_dim=_head_dim(c, hidden, heads),
                window=None,
                label="full attention",
            )
        else:
            dt_rank = c.data.get("mamba_dt_rank")
            mixer = mamba1_mixer(
                hidden=hidden,
                d_inner=expand * hidden,
                d_state=d_state,
                d_conv=c.integer("mamba_d_conv"),
                dt_rank=c.integer("mamba_dt_rank") if dt_rank not in (None, "auto") else -(-hidden // 16),
                conv_bias=c.flag("mamba_conv_bias", True),
                proj_bias=c.flag("mamba_proj_bias", False),
                state_bytes_per_element=state_bytes,
                state_dtype=state_dtype,
                conv_bytes_per_element=state_bytes,
                label="Mamba-1",
                norms=2,
            )
        if i % moe_period == moe_offset and c.integer("num_experts", 1) > 1:
            mlp = moe_block(
                hidden=hidden,
                routed=c.integer("num_experts"),
                per_token=c.integer("num_experts_per_tok"),
                width=c.integer("intermediate_size"),
                gated=True,
                label="MoE",
            )
        else:
            mlp = dense_mlp(hidden=hidden, width=c.integer("intermediate_size"), gated=True, label="MLP")
        out.append([mixer, mlp])
    return _arch(c, model_type, hidden, out)


def _minimax(c: Cfg, model_type: str) -> Arch:
    """MiniMax-Text-01: attn_type_list picks lightning (0) or softmax (1) attention per layer; MoE."""
    hidden = c.integer("hidden_size")
    layers = c.integer("num_hidden_layers")
    heads = c.integer("num_attention_heads")
    head_dim = _head_dim(c, hidden, heads)
    kinds = c.items("attn_type_list", layers)
    out: list[list[Block]] = []
    for kind in kinds:
        if kind == 1:
            mixer = gqa_attention(
                hidden=hidden,
                q_heads=heads,
                kv_heads=_kv_heads(c, heads),
                head_dim=head_dim,
                window=None,
                label="softmax attention",
            )
        elif kind == 0:
            mixer = lightning_attention(
                hidden=hidden,
                heads=heads,
                head_dim=head_dim,
                state_bytes_per_element=4.0,
                state_dtype="float32",
                label="lightning attention",
            )
        else:
            raise InputError(c.name("attn_type_list"), f"entries must be 0 or 1, got {kind!r}")
        mlp = moe_block(
            hidden=hidden,
            routed=c.integer("num_local_experts"),
            per_token=c.integer("num_experts_per_tok"),
            width=c.integer("intermediate_size"),
            gated=True,
            label="MoE",
        )
        out.append([mixer, mlp])
    c.notes.append("lightning-attention state assumed float32 (heads x head_dim x head_dim per layer)")
    return _arch(c, model_type, hidden, out)


def _minimax_m2(c: Cfg, model_type: str) -> Arch:
    if c.has("attn_type_list") and any(kind != 1 for kind in c.items("attn_type_list")):
        return _minimax(c, model_type)
    return _gqa_moe(c, model_type)


Builder = Callable[[Cfg, str], Arch]

#: model_type (of the language model) -> builder. Multimodal wrappers map to their text model.
FAMILIES: dict[str, Builder] = {
    **dict.fromkeys(
        [
            "llama",
            "mistral",
            "ministral3",
            "qwen2",
            "qwen3",
            "phi3",
            "granite",
            "olmo",
            "olmo2",
            "gemma",
            "gemma2",
        ],
        _dense_decoder,
    ),
    "gemma3_text": _gemma3_text,
    "gemma4_text": _gemma4_text,
    **dict.fromkeys(["mixtral", "qwen2_moe", "qwen3_moe", "gpt_oss", "glm4_moe", "laguna"], _gqa_moe),
    "minimax_m2": _minimax_m2,
    "minimax": _minimax,
    "llama4_text": _llama4_text,
    **dict.fromkeys(
        ["deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "glm4_moe_lite", "glm_moe_dsa"], _mla_moe
    ),
    **dict.fromkeys(["qwen3_next", "qwen3_5_text", "qwen3_5_moe_text"], _qwen_hybrid),
    "deepseek_v4": _deepseek_v4,
    "nemotron_h": _nemotron_h,
    "granitemoehybrid": _granite_hybrid,
    "mamba": _mamba,
    "jamba": _jamba,
}

#: Multimodal wrappers whose language model sits under text_config; the value is the text
#: model_type to assume when text_config does not name one.
WRAPPERS: dict[str, str] = {
    "gemma3": "gemma3_text",
    "gemma4": "gemma4_text",
    "llama4": "llama4_text",
    "mistral3": "mistral",
    "qwen3_5": "qwen3_5_text",
    "qwen3_5_moe": "qwen3_5_moe_text",
}

SUPPORTED_MODEL_TYPES: tuple[str, ...] = tuple(sorted({*FAMILIES, *WRAPPERS}))
