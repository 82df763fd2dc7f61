"""Hugging Face config.json to a model adapter, with the arithmetic of every quantity.

The importer reads only config.json (bounded, at most ``MAX_CONFIG_BYTES``), counts every parameter
from the shapes it names, and returns an :class:`ImportedModel`: the adapter in the audited byte form
(embedding, always-on, one routed expert, resident) at the chosen weight storage, the KV cache split
into full-attention, sliding-window and recurrent-state parts at the chosen KV precision, the prefill
fields, and one audit Step per derived quantity.

Storage (:mod:`servebound.importers.hf.storage`): by default the storage the release ships, read from
its quantization_config (:mod:`servebound.importers.hf.release`; BF16 when it has none). A
``weight_format`` overrides it: a uniform layout (:data:`FORMATS`, small tensors kept at 16 bits
when the format is narrower), a llama.cpp file type (:data:`LLAMA_CPP_MIXES`: each tensor typed by
llama.cpp's quantizer rules, small tensors f32), or a split (:data:`SPLIT_WEIGHT_FORMATS`). Block-format
scales are included through the format's bytes per element; padding is not.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path

from servebound.core.formats import FORMATS, KV_FORMATS
from servebound.core.model import Experts, LayerShape, ModelAdapter, Weights
from servebound.core.steps import Step
from servebound.errors import InputError
from servebound.importers.audit import ImportedModel
from servebound.importers.consistency import check, hf_declared
from servebound.importers.hf.blocks import Block, Count
from servebound.importers.hf.cache import kv_shapes, prefill_shape
from servebound.importers.hf.families import FAMILIES, SUPPORTED_MODEL_TYPES, WRAPPERS, Arch, Cfg
from servebound.importers.hf.hub import fetch_config
from servebound.importers.hf.llama_cpp import LLAMA_CPP_MIXES
from servebound.importers.hf.release import (
    ReleaseCache,
    cache_precision,
    modelopt_sidecar,
    quantization_config,
    release_plan,
)
from servebound.importers.hf.storage import (
    StoragePlan,
    StoredBytes,
    linear_params_by_mode,
    mix_bytes,
    plan_bytes,
)
from servebound.importers.modes import LLAMA_CPP_IF_PUBLISHED, if_published_note, linear_mode
from servebound.inputs import bounded

__all__ = [
    "LLAMA_CPP_MIXES",
    "MAX_CONFIG_BYTES",
    "MIXED_WEIGHT_FORMATS",
    "QUANTIZER_FORMATS",
    "SPLIT_WEIGHT_FORMATS",
    "SUPPORTED_MODEL_TYPES",
    "import_hf_config",
    "quantization_config",
]

#: A config.json is a few kilobytes; anything past this cap is refused unread.
MAX_CONFIG_BYTES = 4 * 1024 * 1024

#: Checkpoints that store routed experts in one format and every other matrix in another:
#: name -> (other matrices, routed experts). DeepSeek V4's release: FP8 (E4M3) with FP4 (E2M1) routed
#: experts under one power-of-two (UE8M0) scale per 32 values, the MXFP4 layout (config expert_dtype fp4).
#: gpt-oss: MXFP4 routed experts, attention, router, embedding and head in BF16 (its quantization_config's
#: modules_to_not_convert). Laguna's FP8 release: FP8 routed experts; attention, the dense first layer,
#: router, shared expert and head in BF16 (its compressed-tensors ``ignore`` list). Kimi K2.5: routed
#: experts int4 in groups of 32, everything else BF16 (its compressed-tensors ``ignore`` list).
SPLIT_WEIGHT_FORMATS: dict[str, tuple[str, str]] = {
    "fp8_mxfp4_experts": ("fp8", "mxfp4"),
    "bf16_mxfp4_experts": ("bf16", "mxfp4"),
    "bf16_fp8_experts": ("bf16", "fp8"),
    "bf16_int4_g32_experts": ("bf16", "int4_g32"),
}

#: A quantizer's release of a BF16 model: every linear layer in the named layout, the embedding and the
#: output head left in BF16, as FP8 and FP4 quantizers (llm-compressor's recipes ignore lm_head, ModelOpt
#: excludes it, and neither converts embeddings) write them. The catalog's synthetic fp8 and nvfp4
#: profiles use these; a plain ``fp8`` or ``nvfp4`` stays the uniform layout.
QUANTIZER_FORMATS: dict[str, str] = {"fp8_linear": "fp8", "nvfp4_linear": "nvfp4"}

#: Per-tensor mixes and splits, accepted as ``weight_format`` beside :data:`FORMATS`; a llama.cpp
#: file type wins over the layout of the same name (``q4_0`` is the llama.cpp file, output head Q6_K).
MIXED_WEIGHT_FORMATS: tuple[str, ...] = (*LLAMA_CPP_MIXES, *SPLIT_WEIGHT_FORMATS, *QUANTIZER_FORMATS)

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


def import_hf_config(
    source: str | Path,
    *,
    weight_format: str | None = None,
    kv_precision: str | None = None,
    offline: bool = False,
    revision: str | None = None,
    release_cache: bool | str | None = None,
) -> ImportedModel:
    """Import a Hugging Face ``config.json`` as a model adapter with its audit trail.

    ``source``: a config.json path, a folder holding one, or a hub id ``org/name`` (fetched with
    huggingface_hub at ``revision``, config.json only; ``offline`` or HF_HUB_OFFLINE looks in the local
    cache only; huggingface_hub's endpoint, proxy and token settings apply). ``weight_format``
    None stores the weights as the release ships them (its quantization_config; BF16 without one);
    a name overrides it: a :data:`FORMATS` (core.formats) layout, a llama.cpp file type
    (:data:`LLAMA_CPP_MIXES`: ``q4_k_m``, ``q4_0``, ``q8_0`` ...), or a :data:`SPLIT_WEIGHT_FORMATS` key.
    ``kv_precision`` is the cache element format (a KV format key such as bf16 or fp8); None takes the
    one the release states (its quantization_config's kv_cache_scheme or kv_cache_quant_algo, or a
    ModelOpt ``hf_quant_config.json`` beside the file) where the release itself is imported (its own
    storage, or ``release_cache`` True: a curated word for the release's storage), else BF16; a
    ``release_cache`` string is the cache of the checkpoint the import stands for, with where it is
    stated (``"fp8: NVIDIA's NVFP4 checkpoints state ..."``). The adapter's ``sources["kv_precision"]``
    says which. Multimodal
    configs import their language model (text_config); vision and audio towers are left out and the
    audit says so.

    Raises InputError for an unreadable, oversized or malformed file, an unknown model_type (the
    message lists the supported ones), a missing or mistyped field (named in the message), or a
    quantization_config this importer does not model (pass ``weight_format`` then).
    """
    if (
        weight_format is not None
        and weight_format not in FORMATS
        and weight_format not in MIXED_WEIGHT_FORMATS
    ):
        known = ", ".join(dict.fromkeys([*FORMATS, *MIXED_WEIGHT_FORMATS]))
        raise InputError("weight_format", f"unknown format {weight_format!r}; known: {known}")
    if kv_precision is not None and kv_precision not in KV_FORMATS:
        raise InputError(
            "kv_precision", f"unknown precision {kv_precision!r}; known: {', '.join(KV_FORMATS)}"
        )
    raw, label = _load(source, offline=offline, revision=revision)
    raw = _with_sidecar(raw, source)
    cfg, text_type, multimodal = _language_model(raw)
    declared = hf_declared(raw)
    if declared is not None:  # the keys against each other: the check every importer shares
        check(declared)
    arch = FAMILIES[text_type](cfg, text_type)
    arch.notes = cfg.notes
    storage = _storage(raw, cfg, weight_format)
    release = weight_format is None if release_cache is None else release_cache
    cache = cache_precision(raw, release, kv_precision)
    return _assemble(arch, raw, label, multimodal, storage, cache)


def _with_sidecar(raw: dict[str, object], source: str | Path) -> dict[str, object]:
    """A config without a quantization_config, with the ModelOpt ``hf_quant_config.json`` beside it
    read as one (NVIDIA's checkpoints ship their quantization there)."""
    path = Path(source)
    sidecar = (path if path.is_dir() else path.parent) / "hf_quant_config.json"
    if quantization_config(raw) is not None or not (path.exists() and sidecar.is_file()):
        return raw
    return {**raw, "quantization_config": modelopt_sidecar(_parse(sidecar))}


# ---------------------------------------------------------------------------------------------------
# Reading


#: A Hub revision: a branch, tag or commit (letters, digits, ``.``, ``_``, ``-``, ``/``; never ``..``).
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$")


def check_revision(revision: str | None) -> None:
    """A revision as a branch, tag or commit spells it; a path such as ``../../etc`` is refused."""
    if revision is not None and (not _REVISION.match(revision) or ".." in revision):
        raise InputError(
            "revision",
            f"{revision!r} is no branch, tag or commit name; give e.g. main, v1.0 or a commit hash",
        )


def _load(source: str | Path, *, offline: bool, revision: str | None) -> tuple[dict[str, object], str]:
    check_revision(revision)
    path = Path(source).resolve() if str(source).strip() in (".", "..") else Path(source)
    if path.is_dir():
        path = path / "config.json"
        if not path.is_file():
            raise InputError("source", f"{source} holds no config.json")
        return _parse(path), _label(path)
    if path.is_file():
        return _parse(path), _label(path)
    text = str(source)
    if _HUB_ID.match(text) and not text.endswith(".json"):
        copy = _catalog_copy(text) if revision is None else None  # the copy is of one revision only
        if copy is not None:
            return _parse(copy), text

        return _parse(fetch_config(text, revision=revision, local_only=offline)), text
    raise InputError("source", f"{source}: no such file or folder, and not a hub id of the form org/name")


def _label(path: Path) -> str:
    return path.parent.name.replace("__", "/") if path.name == "config.json" else path.stem


def _catalog_copy(repo_id: str) -> Path | None:
    """The config.json the model catalog ships for ``repo_id`` (``org__name/config.json``, matched
    without case, as the Hub matches ids), or None: a catalog model imports with no network."""
    folder = Path(__file__).resolve().parents[1] / "catalog" / "data" / "models"
    wanted = repo_id.replace("/", "__").lower()
    if folder.is_dir():
        for entry in folder.iterdir():
            if entry.name.lower() == wanted and (entry / "config.json").is_file():
                return entry / "config.json"
    return None


def _parse(path: Path) -> dict[str, object]:
    """Read at most MAX_CONFIG_BYTES + 1 bytes under the one data-file policy (servebound.inputs.bounded)."""
    field = f"source {path.name}"
    data = bounded.read_json(path, field, max_bytes=MAX_CONFIG_BYTES)
    return bounded.require_object(data, field)


def _language_model(raw: Mapping[str, object]) -> tuple[Cfg, str, bool]:
    """The config of the language model and its model_type; multimodal wrappers yield text_config."""
    model_type = raw.get("model_type")
    if not isinstance(model_type, str):
        raise InputError(
            "model_type", "missing or not a string; a Hugging Face config.json names its model_type"
        )
    if model_type in FAMILIES:
        return Cfg(raw), model_type, False
    if model_type not in WRAPPERS:
        raise InputError(
            "model_type", f"{model_type!r} is not supported; supported: {', '.join(SUPPORTED_MODEL_TYPES)}"
        )
    text = raw.get("text_config")
    if not isinstance(text, dict):
        raise InputError(
            "text_config", f"missing or not an object; {model_type} keeps its language model there"
        )
    merged = dict(text)
    for key in ("tie_word_embeddings", "torch_dtype", "dtype"):
        if merged.get(key) is None and raw.get(key) is not None:
            merged[key] = raw[key]
    text_type = merged.get("model_type", WRAPPERS[model_type])
    if not isinstance(text_type, str) or text_type not in FAMILIES:
        raise InputError(
            "text_config.model_type", f"{text_type!r} is not supported; supported: {', '.join(FAMILIES)}"
        )
    return Cfg(merged, "text_config."), text_type, True


# ---------------------------------------------------------------------------------------------------# ---------------------------------------------------------------------------------------------------
# Assembly, step by step: storage choice, parameter counts, stored bytes, weights, cache, prefill, facts


@dataclass(frozen=True)
class _Storage:
    """The chosen storage: a plan of one layout per group, or a llama.cpp file type (``mix``)."""

    name: str
    plan: StoragePlan | None
    mix: str | None

    @property
    def mode(self) -> str:
        """The arithmetic mode of the linear FLOPs: llama.cpp multiplies int8-quantized activations
        against every block type (F16 files in fp16); a plan at its fastest swept layout."""
        if self.mix is not None:
            return linear_mode(LLAMA_CPP_MIXES[self.mix])
        assert self.plan is not None
        return linear_mode(self.plan.fastest.name)


def _storage(raw: Mapping[str, object], cfg: Cfg, weight_format: str | None) -> _Storage:
    """The release's own storage when ``weight_format`` is None, else the named one."""
    if weight_format is None:
        quant = quantization_config(raw)
        if quant is None:
            return _Storage("bf16", StoragePlan.uniform(FORMATS["bf16"]), None)
        plan = release_plan(cfg.data, quant)
        return _Storage(plan.name, plan, None)
    if weight_format in LLAMA_CPP_MIXES:
        return _Storage(weight_format, None, weight_format)
    if weight_format in SPLIT_WEIGHT_FORMATS:
        dense, routed = SPLIT_WEIGHT_FORMATS[weight_format]
        plan = StoragePlan.split(weight_format, FORMATS[dense], FORMATS[routed])
        return _Storage(weight_format, plan, None)
    if weight_format in QUANTIZER_FORMATS:
        linear, bf16 = FORMATS[QUANTIZER_FORMATS[weight_format]], FORMATS["bf16"]
        why = f"{weight_format}: every linear layer {linear.name}; embedding and output head BF16 (not converted)"
        plan = StoragePlan(linear.name, bf16, bf16, linear, linear, linear, why)
        return _Storage(linear.name, plan, None)
    return _Storage(weight_format, StoragePlan.uniform(FORMATS[weight_format]), None)


@dataclass(frozen=True)
class _Counts:
    """Parameter counts of each weight group."""

    embedding: Count
    head: Count
    final_norm: Count
    always: Count
    expert: Count
    mtp: Count
    routed: int
    per_token: int
    moe_layers: int

    @property
    def total(self) -> Count:
        return self.embedding + self.always + self.expert.times(self.routed) + self.mtp

    @property
    def active(self) -> Count:
        return self.embedding + self.always + self.expert.times(self.per_token)


def _sum(blocks: list[Block], part: str) -> Count:
    total = Count()
    for block in blocks:
        total = total + getattr(block, part)
    return total


def _counts(arch: Arch, blocks: list[Block]) -> _Counts:
    """Embedding (none when tied), head, final norm, always-on, one routed expert, MTP; experts agree."""
    head = arch.table
    final_norm = Count(0, arch.final_norms * arch.hidden + arch.head_bias)
    moe = [b for b in blocks if b.routed]
    routed = per_token = 0
    if moe:
        pairs = {(b.routed, b.per_token) for b in moe}
        if len(pairs) > 1:
            raise InputError("num_experts", f"MoE layers disagree on experts and top-k: {sorted(pairs)}")
        ((routed, per_token),) = pairs
        if per_token > routed:
            raise InputError("num_experts_per_tok", f"{per_token} exceeds the {routed} routed experts")
    mtp = _sum(arch.mtp, "always") + sum((b.expert.times(b.routed) for b in arch.mtp), Count())
    return _Counts(
        embedding=Count() if arch.tied else arch.table,
        head=head,
        final_norm=final_norm,
        always=head + final_norm + _sum(blocks, "always"),
        expert=_sum(moe, "expert"),
        mtp=mtp,
        routed=routed,
        per_token=per_token,
        moe_layers=len(moe),
    )


def _param_steps(arch: Arch, blocks: list[Block], counts: _Counts, multimodal: bool) -> list[Step]:
    """The assumptions, then one line per block kind and the totals."""
    steps = [Step("assumption", 0.0, note) for note in arch.notes]
    if multimodal:
        steps.append(
            Step(
                "assumption",
                0.0,
                "multimodal config: the language model (text_config) only; vision/audio towers are not counted",
            )
        )
    embedding, total, active = counts.embedding, counts.total, counts.active
    tie = "tied to the output head" if arch.tied else "untied: resident, not swept"
    steps.append(
        Step("params.embedding", embedding.total, f"{arch.vocab} vocab x {arch.hidden} hidden ({tie})")
    )
    steps.append(
        Step("params.output_head", counts.head.total, f"{arch.vocab} vocab x {arch.hidden} hidden, swept")
    )
    for (block_label, formula), n in Counter((b.label, b.formula) for b in blocks).items():
        per = next(b for b in blocks if b.label == block_label and b.formula == formula)
        size = per.always + per.expert.times(per.routed)
        steps.append(Step(f"params.{block_label}", n * size.total, f"{n} x ({formula}) = {n} x {size.total}"))
    if arch.mtp:
        steps.append(
            Step("params.mtp", counts.mtp.total, f"{arch.mtp[0].formula}; resident, not swept in decode")
        )
    expert = counts.expert.total
    steps.append(
        Step(
            "total_params",
            total.total,
            f"embedding {embedding.total} + always-on {counts.always.total} + {counts.routed} x expert "
            f"{expert} + MTP {counts.mtp.total}",
        )
    )
    steps.append(
        Step(
            "active_params",
            active.total,
            f"embedding {embedding.total} + always-on {counts.always.total} + {counts.per_token} x expert "
            f"{expert}",
        )
    )
    return steps


def _stored(storage: _Storage, arch: Arch, counts: _Counts) -> StoredBytes:
    if storage.mix is not None:
        return mix_bytes(storage.mix, arch, counts.head, counts.final_norm, counts.routed)
    assert storage.plan is not None
    return plan_bytes(storage.plan, arch, counts.head, counts.final_norm)


def _weights(stored: StoredBytes, counts: _Counts) -> tuple[Weights, list[Step]]:
    """The byte form of the adapter: embedding, always-on, one routed expert, resident."""
    routed = counts.routed
    resident = stored.embedding + stored.always + routed * stored.expert + stored.mtp
    weights = Weights(
        embedding_bytes=stored.embedding,
        always_on_bytes=stored.always,
        expert_bytes=stored.expert if routed else 0.0,
        experts=Experts(routed, counts.per_token) if routed else None,
        resident_bytes=resident,
    )
    always = counts.always
    steps = [
        Step(
            "embedding_bytes",
            stored.embedding,
            f"{counts.embedding.total} params x {stored.embedding_formula}",
        ),
        Step(
            "always_on_bytes",
            stored.always,
            f"{always.matrix} matrix params x {stored.matrix_formula} + {always.small} small params x "
            f"{stored.small_bytes:g} B (attention, norms, routers, dense and shared MLPs, output head)",
        ),
    ]
    if routed:
        steps.append(
            Step(
                "expert_bytes",
                stored.expert,
                f"one routed expert across {counts.moe_layers} MoE layers: {counts.expert.matrix} matrix"
                f" + {counts.expert.small} small params",
            )
        )
    steps.append(
        Step(
            "resident_bytes",
            resident,
            f"embedding {stored.embedding:.0f} + always-on {stored.always:.0f} + {routed} x expert "
            f"{stored.expert:.0f} + MTP {stored.mtp:.0f}",
        )
    )
    return weights, steps


def _facts(
    arch: Arch, raw: Mapping[str, object], blocks: list[Block], counts: _Counts, multimodal: bool
) -> dict[str, object]:
    facts: dict[str, object] = {
        "model_type": raw.get("model_type"),
        "language_model_type": arch.model_type,
        "multimodal": multimodal,
        "layers": len(arch.layers),
        "blocks": dict(Counter(b.label for b in blocks)),
        "hidden_size": arch.hidden,
        "vocab_size": arch.vocab,
        "tie_word_embeddings": arch.tied,
        "dtype": arch.dtype,
        "routed_experts": counts.routed,
        "experts_per_token": counts.per_token,
        "moe_layers": counts.moe_layers,
        "mtp_params": counts.mtp.total,
        "embedding_params": counts.embedding.total,
        "output_head_params": counts.head.total,
        "context_limit_tokens": arch.context_limit_tokens,
        "notes": tuple(arch.notes),
    }
    quant = quantization_config(raw)
    if quant is not None and isinstance(quant.get("quant_method"), str):
        facts["checkpoint_quantization"] = quant["quant_method"]
    return facts


def _assemble(
    arch: Arch,
    raw: Mapping[str, object],
    label: str,
    multimodal: bool,
    storage: _Storage,
    cache: ReleaseCache,
) -> ImportedModel:
    kv_precision, cache_source = cache.precision, cache.source
    blocks = [block for layer in arch.layers for block in layer]
    e_kv = KV_FORMATS[kv_precision].bytes_per_element
    counts = _counts(arch, blocks)
    steps = _param_steps(arch, blocks, counts, multimodal)
    stored = _stored(storage, arch, counts)
    weights, weight_steps = _weights(stored, counts)
    kv_alloc, kv_read, kv_steps = kv_shapes(blocks, e_kv, kv_precision)
    prefill, prefill_steps = prefill_shape(blocks, kv_alloc, storage.mode, cache.attention)
    if storage.plan is not None and (split := linear_params_by_mode(storage.plan, blocks)):
        prefill = replace(prefill, linear_params_by_mode=split)
        shares = ", ".join(f"{mode} {params:,.0f}" for mode, params in split)
        prefill_steps.append(
            Step(
                "prefill.linear_params_by_mode",
                float(sum(params for _, params in split)),
                f"P_lin,active by the mode its weights multiply in ({shares}): each part charged at its own rate",
            )
        )
    if storage.mix is not None and storage.mix in LLAMA_CPP_IF_PUBLISHED:
        engine_mode = LLAMA_CPP_IF_PUBLISHED[storage.mix]
        prefill = replace(prefill, linear_mode_if_published=engine_mode)
        prefill_steps.append(
            Step(
                "prefill.linear_mode",
                0.0,
                f"{storage.mode}; " + if_published_note(engine_mode, storage.mix.upper(), storage.mode),
            )
        )
    # stored.steps (bytes per parameter) lead the byte lines, after the parameter lines' assumptions
    assumptions = [s for s in steps if s.quantity == "assumption"]
    steps = assumptions + stored.steps + [s for s in steps if s.quantity != "assumption"]
    steps += weight_steps + kv_steps + prefill_steps
    adapter = ModelAdapter(
        id=_slug(label),
        name=label,
        weights=weights,
        kv_alloc=kv_alloc,
        kv_read=kv_read,
        prefill=prefill,
        context_limit_tokens=arch.context_limit_tokens,
        weight_precision=storage.name,
        kv_precision=kv_precision,
        kv_bytes_per_element=e_kv,
        sources={"config": label, "kv_precision": cache_source},
        shape=_layer_shape(arch),
    )
    return ImportedModel(
        adapter=adapter,
        architecture=arch.model_type,
        source=label,
        steps=tuple(steps),
        total_params=float(counts.total.total),
        active_params=float(counts.active.total),
        facts=_facts(arch, raw, blocks, counts, multimodal),
    )


def _layer_shape(arch: Arch) -> LayerShape | None:
    """How the model splits over devices: layers, residual width, the query heads a tensor-parallel
    degree must divide (their greatest common divisor) and the heads the cache splits over (the
    fewest of any attention layer). None without softmax attention (no head to split by)."""
    attention = [b for layer in arch.layers for b in layer if b.query_heads]
    if not attention:
        return None
    return LayerShape(
        layers=len(arch.layers),
        hidden_size=arch.hidden,
        query_heads=math.gcd(*(b.query_heads for b in attention)),
        cache_shards=min(b.cache_shards for b in attention),
        moe_layers=sum(1 for layer in arch.layers if any(b.routed for b in layer)),
    )


def _slug(label: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-") or "model"
