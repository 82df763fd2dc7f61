"""Weight storage: the bytes of each weight group under a storage plan, with the audit lines.

Three kinds of plan:

- one layout per group (:class:`StoragePlan`): embedding, output head, attention and other mixers,
  dense and shared MLPs, routed experts, each in a layout of :data:`servebound.core.formats.FORMATS`.
  A uniform format puts every group in one layout; a checkpoint's quantization_config (see
  :mod:`servebound.importers.hf.release`) or a split format names one per group. Small tensors (norms,
  biases, routers, convolution taps) are kept at 16 bits when the group's format is narrower.
- a llama.cpp file type (:data:`LLAMA_CPP_MIXES`): every listed matrix walked in file order and typed
  by llama.cpp's rules (:func:`servebound.importers.hf.llama_cpp.llama_cpp_type`); small tensors f32.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from servebound.core.formats import FORMATS, BlockLayout
from servebound.core.steps import Step
from servebound.importers.hf.blocks import Block, Count, Matrix
from servebound.importers.hf.config import Arch
from servebound.importers.hf.llama_cpp import (
    LLAMA_CPP_70B_FAMILIES,
    LLAMA_CPP_DROPS_MTP,
    LLAMA_CPP_MIXES,
    VALUE_ROLES,
    TensorPlace,
    llama_cpp_type,
    use_more_bits,
)
from servebound.importers.modes import linear_mode

SMALL_TENSOR_BYTES = 2.0
#: llama.cpp's converter writes 1-D tensors, routers and convolution taps as f32; its quantizer keeps them.
MIX_SMALL_BYTES = 4.0


@dataclass
class StoredBytes:
    """Bytes of each weight group at a storage choice, and the audit lines that derive them."""

    embedding: float
    always: float
    expert: float
    mtp: float
    embedding_formula: str
    matrix_formula: str
    small_bytes: float
    steps: list[Step] = field(default_factory=list)


@dataclass(frozen=True)
class StoragePlan:
    """A layout per weight group. ``mlp`` covers dense and shared-expert MLPs and the MTP modules;
    ``attention`` every mixer (attention, latent attention, recurrent mixers); ``why`` says where the
    plan comes from (a format name, the checkpoint's quantization_config)."""

    name: str
    embedding: BlockLayout
    head: BlockLayout
    attention: BlockLayout
    mlp: BlockLayout
    experts: BlockLayout
    why: str = ""

    @classmethod
    def uniform(cls, layout: BlockLayout) -> StoragePlan:
        return cls(layout.name, layout, layout, layout, layout, layout)

    @property
    def drops_mtp(self) -> bool:
        """mlx-lm's converter leaves multi-token-prediction modules out of the files it writes."""
        return self.attention.name.startswith("mlx_")

    @classmethod
    def split(cls, name: str, dense: BlockLayout, experts: BlockLayout, why: str = "") -> StoragePlan:
        return cls(name, dense, dense, dense, dense, experts, why)

    def groups(self) -> dict[str, BlockLayout]:
        return {
            "embedding": self.embedding,
            "output head": self.head,
            "attention and mixers": self.attention,
            "dense and shared MLPs": self.mlp,
            "routed experts": self.experts,
        }

    @property
    def fastest(self) -> BlockLayout:
        """The narrowest layout that holds swept matrices: its arithmetic mode prices the prefill FLOPs
        (charging every FLOP at the fastest mode keeps the prefill bound a ceiling)."""
        return min((self.attention, self.mlp, self.experts), key=lambda layout: layout.bytes_per_element)


def linear_params_by_mode(plan: StoragePlan, blocks: list[Block]) -> tuple[tuple[str, float], ...]:
    """P_lin,active split by the arithmetic mode of each weight group's layout (attention and mixers,
    dense and shared MLPs, k routed experts; routers in 16 bits where their group is narrower, as small
    tensors are stored), in mode order of first appearance. Empty when every part shares one mode."""

    def mode(layout: BlockLayout) -> str:
        return linear_mode(layout.name)

    parts: dict[str, float] = {}
    for block in blocks:
        group = plan.mlp if block.routed or _is_mlp(block) else plan.attention
        router = mode(group) if group.bytes_per_element >= SMALL_TENSOR_BYTES else "bf16"
        for key, params in (
            (mode(group), block.always.matrix),
            (router, block.router_params),
            (mode(plan.experts), block.per_token * block.expert.matrix),
        ):
            if params:
                parts[key] = parts.get(key, 0.0) + float(params)
    return tuple(parts.items()) if len(parts) > 1 else ()


def layout_step(layout: BlockLayout, small: float, what: str = "") -> Step:
    return Step(
        "bytes_per_param",
        layout.bytes_per_element,
        f"{what}{layout.name}: ({layout.scale_bytes} scale + {layout.value_bytes} value bytes)"
        f" / {layout.block} elements = {layout.bytes_per_element:g} B ({layout.bits_per_element:g} bits);"
        f" small tensors at {small:g} B",
    )


def _small(layout: BlockLayout) -> float:
    return max(layout.bytes_per_element, SMALL_TENSOR_BYTES)


def _stored(count: Count, layout: BlockLayout) -> float:
    return count.matrix * layout.bytes_per_element + count.small * _small(layout)


def _is_mlp(block: Block) -> bool:
    return "MLP" in block.label or "linear layer" in block.label


def plan_bytes(plan: StoragePlan, arch: Arch, head: Count, final_norm: Count) -> StoredBytes:
    """Sum each group at its layout: routed experts (the MTP module's included) at ``experts``, a MoE
    block's shared experts and router and every dense MLP at ``mlp``, other blocks at ``attention``."""
    layouts = set(plan.groups().values())
    embedding = Count() if arch.tied else arch.table
    always = _stored(head, plan.head) + _stored(final_norm, plan.head)
    expert = 0.0
    for block in (b for layer in arch.layers for b in layer):
        group = plan.mlp if block.routed or _is_mlp(block) else plan.attention
        always += _stored(block.always, group)
        expert += _stored(block.expert, plan.experts)
    mtp = sum(_stored(b.always, plan.mlp) + _stored(b.expert.times(b.routed), plan.experts) for b in arch.mtp)
    if plan.drops_mtp:
        mtp = 0.0
    if len(layouts) == 1:
        steps = [layout_step(plan.embedding, _small(plan.embedding))]
        matrix_formula = f"{plan.embedding.bytes_per_element:g} B"
    else:
        steps = [
            layout_step(
                layout, _small(layout), f"{', '.join(g for g, x in plan.groups().items() if x == layout)} "
            )
            for layout in sorted(layouts, key=lambda x: -x.bytes_per_element)
        ]
        matrix_formula = "each group's format"
        if plan.why:
            steps.insert(0, Step("assumption", 0.0, plan.why))
    if plan.drops_mtp and arch.mtp:
        steps.append(Step("assumption", 0.0, "MLX files hold no MTP modules (mlx-lm drops them): MTP 0 B"))
    return StoredBytes(
        _stored(embedding, plan.embedding),
        always,
        expert,
        mtp,
        plan.embedding.name,
        matrix_formula,
        _small(plan.attention),
        steps,
    )


# ---------------------------------------------------------------------------------------------------
# llama.cpp file types


@dataclass
class _Tally:
    params: Counter[str] = field(default_factory=Counter)
    bytes: dict[str, float] = field(default_factory=dict)
    tensors: dict[str, Counter[str]] = field(default_factory=dict)

    def put(self, elements: int, layout: BlockLayout | None, what: str, copies: int = 1) -> float:
        """Book ``copies`` tensors of ``elements`` at ``layout`` (None: small, f32); bytes of one copy."""
        name = layout.name if layout else "f32"
        one = elements * (layout.bytes_per_element if layout else MIX_SMALL_BYTES)
        if elements and copies:
            self.params[name] += elements * copies
            self.bytes[name] = self.bytes.get(name, 0.0) + one * copies
            self.tensors.setdefault(name, Counter())[what] += 1
        return one


def _gqa(arch: Arch) -> int:
    """Query heads per KV head, from the first attention block's q and k projections."""
    for block in (b for layer in arch.layers for b in layer):
        q = next((m for m in block.matrices if m.role == "attn_q"), None)
        k = next((m for m in block.matrices if m.role == "attn_k"), None)
        if q is not None and k is not None and k.outputs:
            return max(1, q.outputs // k.outputs)
    return 1


@dataclass
class _Walk:
    """The per-file counters llama.cpp keeps while it types tensors in file order."""

    mix: str
    arch: Arch
    routed: int
    tally: _Tally = field(default_factory=_Tally)
    value_index: int = 0
    down_index: int = 0
    more_v: list[int] = field(default_factory=list)
    more_down: set[int] = field(default_factory=set)

    def __post_init__(self) -> None:
        layers = self.arch.layers
        self.values = sum(m.role in VALUE_ROLES for layer in layers for b in layer for m in b.matrices)
        self.type_70b = self.arch.model_type in LLAMA_CPP_70B_FAMILIES and len(layers) == 80
        self.gqa = _gqa(self.arch)
        self.default = FORMATS[LLAMA_CPP_MIXES[self.mix]]

    def place(self, m: Matrix, layer: int, copies: int) -> float:
        layers = len(self.arch.layers)
        down_layer = layer if self.routed > 1 else self.down_index
        where = TensorPlace(
            value_index=self.value_index,
            values=self.values,
            layer=down_layer,
            layers=layers,
            routed_experts=self.routed,
            type_70b=self.type_70b,
            gqa=self.gqa,
            falcon=self.arch.model_type == "falcon",
        )
        if m.role in VALUE_ROLES:
            if use_more_bits(self.value_index, self.values):
                self.more_v.append(layer)
            self.value_index += 1
        elif m.role.startswith("ffn_down"):
            if use_more_bits(down_layer, layers):
                self.more_down.add(layer)
            self.down_index += 1
        layout = llama_cpp_type(self.mix, m.role, m.inputs, where)
        return self.tally.put(m.elements, layout, m.role or "other", copies)

    def block(self, block: Block, layer: int) -> tuple[float, float]:
        """Bytes of one block's always-on part and of one of its routed experts."""
        always = sum(self.place(m, layer, 1) for m in block.matrices)
        expert = sum(self.place(m, layer, block.routed) for m in block.expert_matrices)
        default = self.default
        always += self.tally.put(
            block.always.matrix - sum(m.elements for m in block.matrices), default, "unlisted"
        )
        rest = block.expert.matrix - sum(m.elements for m in block.expert_matrices)
        expert += self.tally.put(rest, default, "unlisted", block.routed)
        always += self.tally.put(block.always.small, None, "norms, biases, routers")
        expert += self.tally.put(block.expert.small, None, "norms, biases, routers", block.routed)
        return always, expert


def mix_bytes(mix: str, arch: Arch, head: Count, final_norm: Count, routed: int) -> StoredBytes:
    """Walk every listed matrix in file order, give each its llama.cpp type (:func:`llama_cpp_type`),
    and sum bytes per weight group. Matrices a block does not list (MTP modules) take the file type's
    own type."""
    walk = _Walk(mix, arch, routed)
    tally = walk.tally
    embedding = 0.0
    if not arch.tied:
        embedding = tally.put(arch.table.matrix, llama_cpp_type(mix, "token_embd", arch.hidden), "token_embd")
    falcon = TensorPlace(falcon=arch.model_type == "falcon")
    always = tally.put(head.matrix, llama_cpp_type(mix, "output", arch.hidden, falcon), "output")
    always += tally.put(final_norm.small, None, "norms, biases, routers")
    expert = 0.0
    for i, layer in enumerate(arch.layers):
        for block in layer:
            block_always, block_expert = walk.block(block, i)
            always += block_always
            expert += block_expert
    mtp = 0.0
    drops_mtp = arch.model_type in LLAMA_CPP_DROPS_MTP
    for block in [] if drops_mtp else arch.mtp:
        mtp += tally.put(block.always.matrix, walk.default, "MTP")
        mtp += tally.put(block.always.small, None, "norms, biases, routers")
        mtp += block.routed * tally.put(block.expert.matrix, walk.default, "MTP", block.routed)
        mtp += block.routed * tally.put(block.expert.small, None, "norms, biases, routers", block.routed)
    label = f"the {mix.upper()} mix"
    steps = _mix_steps(walk)
    if drops_mtp and arch.mtp:
        dropped = sum(
            b.always.matrix + b.always.small + b.routed * (b.expert.matrix + b.expert.small) for b in arch.mtp
        )
        why = f"{dropped} params not written: llama.cpp's converter skips this family's MTP layers (skip_mtp)"
        steps.append(Step("mix.mtp_not_written", float(dropped), why))
    return StoredBytes(embedding, always, expert, mtp, label, label, MIX_SMALL_BYTES, steps)


def _mix_name(mix: str) -> str:
    if mix == "q4_0_qat":
        return "Google's QAT Q4_0 GGUF: embedding F16, every other matrix Q4_0"
    return f"llama.cpp's {mix.upper()} file type"


def _mix_steps(walk: _Walk) -> list[Step]:
    tally = walk.tally
    params = sum(tally.params.values())
    stored = sum(tally.bytes.values())
    bits = 8.0 * stored / params if params else 0.0
    steps = [
        Step(
            "bytes_per_param",
            stored / params if params else 0.0,
            f"{walk.mix} ({_mix_name(walk.mix)}): {stored:.0f} B / {params} params"
            f" = {stored / max(params, 1):.4f} B ({bits:.3f} bits per weight); small tensors f32",
        )
    ]
    for name, count in sorted(tally.params.items(), key=lambda item: -tally.bytes[item[0]]):
        what = ", ".join(f"{n} {role}" for role, n in tally.tensors[name].most_common())
        steps.append(
            Step(
                f"mix.{name}",
                float(count),
                f"{count} params x {tally.bytes[name] / count:g} B = {tally.bytes[name]:.0f} B; tensors: {what}",
            )
        )
    layers = len(walk.arch.layers)
    steps.append(
        Step(
            "mix.use_more_bits",
            float(len(walk.more_v) + len(walk.more_down)),
            f"use_more_bits(i, n) = i < n/8 or i >= 7n/8 or (i - n/8) % 3 == 2: attn_v Q6_K at layers "
            f"{walk.more_v} (i over {walk.values} attention-value tensors), ffn_down Q6_K at layers "
            f"{sorted(walk.more_down)} (n = {layers} layers); applies in the _M file types",
        )
    )
    steps.append(Step("mix.bits_per_weight", bits, f"8 x {stored:.0f} B / {params} params"))
    return steps
