"""The storage a release ships, read from its config.json's quantization_config.

- ``quant_method: mxfp4`` (gpt-oss): every linear layer MXFP4 except ``modules_to_not_convert``.
- ``quant_method: fp8``: E4M3 weights, with one float32 scale per 128 x 128 block when
  ``weight_block_size`` is [128, 128] (``fp8_block``), per tensor otherwise (``fp8``); except
  ``modules_to_not_convert``. DeepSeek V4's ``expert_dtype: fp4`` puts routed experts in MXFP4.
- ``quant_method: compressed-tensors``: the first config group's weight scheme (``nvfp4-pack-quantized``
  -> nvfp4; 8-bit floats -> fp8 or fp8_block; 4-bit integers in groups of 32 -> int4_g32), except the
  ``ignore`` list (names, or ``re:`` regular expressions).
- ``quant_method: modelopt`` (NVIDIA's ModelOpt exports; also their ``hf_quant_config.json``, whose
  ``quantization`` entry is the same keys): ``quant_algo`` NVFP4 -> nvfp4, FP8 -> fp8, except
  ``exclude_modules`` (names or shell patterns).

The cache a release states (:func:`release_kv_cache`): compressed-tensors' ``kv_cache_scheme`` (8-bit
floats -> fp8) or ModelOpt's ``kv_cache_quant_algo`` (FP8 -> fp8). NVIDIA's NVFP4 checkpoints state an
FP8 cache there, and an engine's default cache (auto) follows it, so a profile's default does too.

Input embeddings are never converted (quantizers replace linear layers only), so an FP8 or FP4 release
keeps its embedding in BF16; an output head in a not-convert list stays BF16 too. Which groups a
pattern excludes is decided by matching it against each group's module names as transformers names
them (:data:`GROUP_MODULES`); a group is excluded when any of its names matches.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from fnmatch import fnmatchcase
from typing import NamedTuple

from servebound.core.formats import FORMATS, KV_FORMATS, BlockLayout
from servebound.errors import InputError
from servebound.importers.hf.storage import StoragePlan

#: Representative module names of each weight group, as transformers' modeling code names them.
GROUP_MODULES: dict[str, tuple[str, ...]] = {
    "head": ("lm_head",),
    "attention": (
        "model.layers.0.self_attn.q_proj",
        "model.layers.0.self_attn.o_proj",
        "model.layers.0.mixer.in_proj",
        "model.layers.0.linear_attn.in_proj_qkvz",
    ),
    "mlp": (
        "model.layers.0.mlp.down_proj",
        "model.layers.0.mlp.shared_experts.down_proj",
        "model.layers.0.mlp.shared_expert.down_proj",
    ),
    "experts": ("model.layers.0.mlp.experts.0.down_proj", "model.layers.0.mlp.experts.down_proj"),
}

_BF16 = FORMATS["bf16"]
#: ModelOpt's quant_algo -> the weight layout.
_MODELOPT_ALGOS = {"NVFP4": "nvfp4", "FP8": "fp8"}


def _matches(pattern: str, name: str) -> bool:
    if pattern.startswith("re:"):
        return re.match(pattern[3:], name) is not None
    return name == pattern or fnmatchcase(name, pattern) or fnmatchcase(name, pattern + ".*")


def _excluded(patterns: list[str], group: str) -> bool:
    return any(_matches(p, name) for p in patterns for name in GROUP_MODULES[group])


def _patterns(quant: Mapping[str, object], key: str) -> list[str]:
    value = quant.get(key) or []
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise InputError(f"quantization_config.{key}", "expected a list of module names")
    return [str(p) for p in value]


def _compressed_tensors(quant: Mapping[str, object]) -> BlockLayout:
    groups = quant.get("config_groups")
    if not isinstance(groups, dict) or not groups:
        raise InputError(
            "quantization_config.config_groups", "missing; compressed-tensors names its scheme there"
        )
    first = next(iter(groups.values()))
    weights = first.get("weights") if isinstance(first, dict) else None
    if not isinstance(weights, dict):
        raise InputError("quantization_config.config_groups", "the first group has no weights scheme")
    fmt = str(first.get("format") or quant.get("format") or "")
    bits, kind = weights.get("num_bits"), weights.get("type")
    if "nvfp4" in fmt:
        return FORMATS["nvfp4"]
    if kind == "float" and bits == 8:
        return FORMATS["fp8_block" if weights.get("strategy") == "block" else "fp8"]
    if kind == "int" and bits == 4 and weights.get("group_size") == 32:
        return FORMATS["int4_g32"]
    raise InputError(
        "quantization_config.config_groups",
        f"weights scheme {fmt or kind} {bits}-bit (group {weights.get('group_size')}) is not modelled; "
        "pass --weight-format to choose the storage",
    )


#: MLX's affine quantization (mlx-lm's convert): (bits, group size) -> layout; 64 is mlx-lm's default
#: group, 32 the one mlx-community also publishes (--q-group-size 32).
_MLX_BITS = {
    (4, 64): "mlx_4bit",
    (5, 64): "mlx_5bit",
    (6, 64): "mlx_6bit",
    (8, 64): "mlx_8bit",
    (4, 32): "mlx_4bit_g32",
    (5, 32): "mlx_5bit_g32",
    (6, 32): "mlx_6bit_g32",
    (8, 32): "mlx_8bit_g32",
}
_MLX_KEYS = frozenset({"bits", "group_size", "mode"})


def mlx_plan(quant: Mapping[str, object]) -> StoragePlan:
    """An MLX checkpoint's storage from its ``quantization`` (or ``quantization_config``) entry:
    ``{"group_size": 64, "bits": 4}`` puts every linear layer and the embedding in that layout (mlx-lm
    quantizes each module it can); 4, 5, 6 or 8 bits in groups of 32 or 64. Per-module overrides or
    another setting are refused, naming --weight-format, rather than priced at a guess."""
    bits, group = quant.get("bits"), quant.get("group_size")
    overrides = [key for key in quant if key not in _MLX_KEYS]
    if overrides:
        raise InputError(
            "quantization.bits",
            f"per-module MLX quantization ({overrides[0]} ...) is not modelled; pass --weight-format "
            f"({', '.join(_MLX_BITS.values())}) for the bulk of the weights",
        )
    key = (bits, group)
    if quant.get("mode", "affine") != "affine" or key not in _MLX_BITS:
        raise InputError(
            "quantization.bits",
            f"MLX {quant.get('mode', 'affine')} {bits}-bit in groups of {group} is not modelled (affine 4, 5, 6 "
            "or 8 bits in groups of 32 or 64 are); pass --weight-format",
        )
    layout = FORMATS[_MLX_BITS[(int(str(bits)), int(str(group)))]]
    plan = StoragePlan.uniform(layout)
    why = f"release storage from the MLX quantization entry: {layout.name} (affine, {bits} bits, groups of {group})"
    return StoragePlan(plan.name, plan.embedding, plan.head, plan.attention, plan.mlp, plan.experts, why)


def release_plan(raw: Mapping[str, object], quant: Mapping[str, object]) -> StoragePlan:
    """The storage plan of a checkpoint from its quantization_config (and DeepSeek V4's expert_dtype),
    or an MLX checkpoint's quantization entry (no quant_method, bits and group_size)."""
    method = quant.get("quant_method")
    if method is None and "bits" in quant:
        return mlx_plan(quant)
    if method == "mxfp4":
        layout, keep = FORMATS["mxfp4"], _patterns(quant, "modules_to_not_convert")
    elif method == "fp8":
        block = quant.get("weight_block_size")
        layout = FORMATS["fp8_block" if block == [128, 128] else "fp8"]
        if block not in (None, [128, 128]):
            raise InputError(
                "quantization_config.weight_block_size", f"{block} is not modelled; only [128, 128]"
            )
        keep = _patterns(quant, "modules_to_not_convert")
    elif method == "compressed-tensors":
        layout, keep = _compressed_tensors(quant), _patterns(quant, "ignore")
    elif method == "modelopt":
        algo = str(quant.get("quant_algo") or "").upper()
        if algo not in _MODELOPT_ALGOS:
            raise InputError(
                "quantization_config.quant_algo",
                f"ModelOpt {algo or 'no'} quant_algo is not modelled (NVFP4, FP8 are); pass --weight-format",
            )
        layout, keep = FORMATS[_MODELOPT_ALGOS[algo]], _patterns(quant, "exclude_modules")
    else:
        raise InputError(
            "quantization_config.quant_method",
            f"{method!r} is not modelled (mxfp4, fp8, compressed-tensors, modelopt are); pass --weight-format",
        )
    chosen = {group: _BF16 if _excluded(keep, group) else layout for group in GROUP_MODULES}
    if raw.get("expert_dtype") == "fp4":
        chosen["experts"] = FORMATS["mxfp4"]
    kept = [group for group, x in chosen.items() if x is _BF16]
    why = (
        f"release storage from quantization_config ({method}): {layout.name}"
        + (
            f"; routed experts {chosen['experts'].name} (expert_dtype fp4)"
            if raw.get("expert_dtype") == "fp4"
            else ""
        )
        + f"; embedding BF16 (never converted){'; BF16 (not converted): ' + ', '.join(kept) if kept else ''}"
    )
    attention, experts = chosen["attention"].name, chosen["experts"].name
    name = attention if experts == attention else f"{attention}_{experts}_experts"
    return StoragePlan(
        name, _BF16, chosen["head"], chosen["attention"], chosen["mlp"], chosen["experts"], why
    )


def modelopt_sidecar(sidecar: Mapping[str, object]) -> dict[str, object]:
    """A ModelOpt ``hf_quant_config.json`` as the quantization_config it stands for: its
    ``quantization`` entry with ``quant_method: modelopt``."""
    inner = sidecar.get("quantization")
    if not isinstance(inner, Mapping):
        raise InputError("hf_quant_config.json", "no 'quantization' object (ModelOpt writes one)")
    return {**inner, "quant_method": "modelopt"}


def release_kv_cache(quant: Mapping[str, object] | None) -> tuple[str, str] | None:
    """The cache format a release states in its quantization_config, with the words that say where,
    or None where it states none (``kv_cache_scheme`` or ``kv_cache_quant_algo`` absent or null). A
    stated format the cache formats do not hold is an InputError naming kv_precision."""
    if quant is None:
        return None
    scheme, algo = quant.get("kv_cache_scheme"), quant.get("kv_cache_quant_algo")
    if isinstance(scheme, Mapping):
        kind, bits = scheme.get("type"), scheme.get("num_bits")
        if kind == "float" and bits == 8:
            return "fp8", "the checkpoint's quantization_config.kv_cache_scheme (8-bit float): an FP8 cache"
        stated = f"kv_cache_scheme {kind} {bits}-bit"
    elif isinstance(algo, str) and algo:
        if algo.upper() == "FP8":
            return "fp8", "the checkpoint's quantization config, kv_cache_quant_algo FP8: an FP8 cache"
        stated = f"kv_cache_quant_algo {algo}"
    else:
        return None
    raise InputError(
        "kv_precision", f"the checkpoint states a {stated} cache, which is not modelled; pass kv_precision"
    )


class ReleaseCache(NamedTuple):
    """The cache format, the words that say where it comes from, and the attention math's mode."""

    precision: str
    source: str
    attention: str


def cache_precision(raw: Mapping[str, object], release: bool | str, asked: str | None) -> ReleaseCache:
    """The cache format asked for (attention math in it, where it is a math mode), else the one the
    release states (the release itself only: another weight format is another file), else BF16. A
    stated cache keeps the attention math on the BF16 path, as the derivation assumes for an NVFP4
    checkpoint with an FP8 cache."""
    if asked is not None:
        return ReleaseCache(asked, f"asked for: {asked}", asked)
    if isinstance(release, str):
        precision, _, why = release.partition(": ")
        if precision not in KV_FORMATS or not why:
            raise InputError("release_cache", f"{release!r}: give '<cache format>: <where it is stated>'")
        stated: tuple[str, str] | None = (precision, why)
    else:
        stated = release_kv_cache(quantization_config(raw)) if release else None
    if stated is not None:
        return ReleaseCache(stated[0], f"{stated[1]}; attention math on the BF16 path", "bf16")
    return ReleaseCache(
        "bf16", "BF16: the weights' release states no cache format (an engine's default cache, auto)", "bf16"
    )


def quantization_config(raw: Mapping[str, object]) -> Mapping[str, object] | None:
    """The release's quantization_config: top-level, else under text_config, else MLX's older
    ``quantization`` entry (mlx-lm wrote only that key before it also wrote quantization_config); None
    without one (a missing, null or non-object value at each place counts as none)."""
    for key in ("quantization_config", "quantization"):
        for where in (raw, raw.get("text_config")):
            if isinstance(where, Mapping) and isinstance(where.get(key), Mapping):
                quant = where[key]
                assert isinstance(quant, Mapping)
                return quant
    return None
