"""Tensor names to adapter roles, and the audited byte form built from per-tensor bytes.

Both tensor-file importers (safetensors headers, GGUF) classify every tensor by name into one role:

- ``embedding``: the untied input embedding table. Resident; decode reads only the selected rows.
- ``head``: the output projection. Swept every iteration, so it joins the always-on bytes.
- ``always_on``: attention, norms, routers, dense and shared-expert MLPs: swept whatever the routing.
- ``routed_expert``: the routed experts of MoE layers; one expert is their total divided by E.
- ``mtp``: multi-token-prediction layers. Resident, not swept by ordinary decode.
- ``vision``: vision or audio towers and their projectors. Resident, not swept by text decode.

When the embedding is tied (no separate head tensor), the one table is read in full as the head
every step, so it counts as always-on and the untied embedding is 0.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from servebound.core.model import Experts, Weights


class TensorRole(StrEnum):
    """What a tensor is for, as far as the decode sweep is concerned."""

    EMBEDDING = "embedding"
    HEAD = "head"
    ALWAYS_ON = "always_on"
    ROUTED_EXPERT = "routed_expert"
    MTP = "mtp"
    VISION = "vision"


@dataclass(frozen=True)
class TensorEntry:
    """One tensor: its name, role, exact stored bytes and logical element count.

    ``expert`` is the routed-expert index when the name carries one (per-expert tensors), else None
    (fused tensors hold every expert of a layer). ``layer`` is the block index when the name has one.
    """

    name: str
    role: TensorRole
    size_bytes: int
    elements: int
    layer: int | None = None
    expert: int | None = None


# Hugging Face names -------------------------------------------------------------------------------

_HF_LAYER = re.compile(r"(?:^|\.)layers\.(\d+)\.")
_HF_EXPERT_INDEXED = re.compile(r"\.experts\.(\d+)\.")
_HF_EXPERT_FUSED = re.compile(r"\.experts\.[A-Za-z_]")
_HF_EMBEDDING = re.compile(
    r"(?:^|\.)(?:embed_tokens|embed_tokens_per_layer|wte|word_embeddings|tok_embeddings)\.weight$"
)
_HF_HEAD = re.compile(r"(?:^|\.)(?:lm_head|embed_out)\.weight$")
_HF_VISION = re.compile(
    r"(?:^|\.)(?:vision_tower|vision_model|visual|vision_encoder|vision|multi_modal_projector|"
    r"mm_projector|image_newline|embed_vision|audio_tower|audio_model|embed_audio|audio)(?:\.|$)"
)
_HF_MTP = re.compile(r"(?:^|\.)(?:mtp|mtp_layers|nextn)(?:\.|$)")


def classify_hf(name: str, num_hidden_layers: int | None = None) -> TensorEntry:
    """The role of a Hugging Face (safetensors) tensor name; bytes and elements are left at 0.

    ``model.layers.N.*`` with N >= ``num_hidden_layers`` is an MTP layer (DeepSeek-V3 and GLM append
    them after the decoder stack). Routed experts are ``.experts.E.*`` (per-expert tensors, Mixtral's
    ``block_sparse_moe.experts.E`` included) or ``.experts.<name>`` (fused: every expert of the layer
    in one tensor, as gpt-oss's MXFP4 ``gate_up_proj_blocks``); ``shared_expert(s)`` are always-on.
    """
    layer_match = _HF_LAYER.search(name)
    layer = int(layer_match.group(1)) if layer_match else None
    expert_match = _HF_EXPERT_INDEXED.search(name)
    expert = int(expert_match.group(1)) if expert_match else None
    if _HF_VISION.search(name):
        role = TensorRole.VISION
    elif _HF_MTP.search(name) or (
        layer is not None and num_hidden_layers is not None and layer >= num_hidden_layers
    ):
        role = TensorRole.MTP
    elif _HF_EMBEDDING.search(name):
        role = TensorRole.EMBEDDING
    elif _HF_HEAD.search(name):
        role = TensorRole.HEAD
    elif expert_match or _HF_EXPERT_FUSED.search(name):
        role = TensorRole.ROUTED_EXPERT
    else:
        role = TensorRole.ALWAYS_ON
    return TensorEntry(name, role, 0, 0, layer, expert)


# llama.cpp (GGUF) names ---------------------------------------------------------------------------

_GGUF_LAYER = re.compile(r"^blk\.(\d+)\.")
_GGUF_EXPERTS = re.compile(r"^blk\.\d+\.ffn_[a-z_]*_exps(?:\.|$)")
_GGUF_EMBEDDING = re.compile(r"^(?:token_embd|per_layer_token_embd)\.weight$")
_GGUF_HEAD = re.compile(r"^output\.weight$")
_GGUF_VISION = re.compile(r"^(?:v|a|mm|vision|audio)\.")


def classify_gguf(name: str, mtp_first_layer: int | None = None) -> TensorEntry:
    """The role of a llama.cpp tensor name; bytes and elements are left at 0.

    ``token_embd`` is the embedding, ``output.weight`` the head, ``blk.N.ffn_*_exps`` the routed
    experts (3-D, every expert of the layer), ``blk.N.ffn_*_shexp`` shared experts (always-on), and
    blocks at or past ``mtp_first_layer`` (block_count - nextn_predict_layers) MTP layers.
    """
    layer_match = _GGUF_LAYER.match(name)
    layer = int(layer_match.group(1)) if layer_match else None
    if _GGUF_VISION.match(name):
        role = TensorRole.VISION
    elif layer is not None and mtp_first_layer is not None and layer >= mtp_first_layer:
        role = TensorRole.MTP
    elif _GGUF_EMBEDDING.match(name):
        role = TensorRole.EMBEDDING
    elif _GGUF_HEAD.match(name):
        role = TensorRole.HEAD
    elif _GGUF_EXPERTS.match(name):
        role = TensorRole.ROUTED_EXPERT
    else:
        role = TensorRole.ALWAYS_ON
    return TensorEntry(name, role, 0, 0, layer, None)


# The byte form --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ByteForm:
    """Exact bytes (and logical elements) per role, summed over a checkpoint's tensors.

    ``tied`` is True when there is an input embedding but no separate head: the table is then the
    head and its ``tied_table_bytes`` count as always-on. ``routed_experts`` is E (None for a dense model).
    """

    embedding_bytes: int
    head_bytes: int
    always_on_bytes: int
    routed_expert_bytes: int
    mtp_bytes: int
    vision_bytes: int
    embedding_elements: int
    head_elements: int
    always_on_elements: int
    routed_expert_elements: int
    mtp_elements: int
    vision_elements: int
    tied: bool
    routed_experts: int | None
    tied_table_bytes: int = 0

    @property
    def resident_bytes(self) -> int:
        """Every tensor byte: W_resident as stored."""
        return (
            self.embedding_bytes
            + self.head_bytes
            + self.always_on_bytes
            + self.routed_expert_bytes
            + self.mtp_bytes
            + self.vision_bytes
        )

    @property
    def total_elements(self) -> int:
        return (
            self.embedding_elements
            + self.head_elements
            + self.always_on_elements
            + self.routed_expert_elements
            + self.mtp_elements
            + self.vision_elements
        )

    @property
    def untied_embedding_bytes(self) -> int:
        """The adapter's embedding_bytes: without the tied table, which is swept as the head."""
        return self.embedding_bytes - self.tied_table_bytes

    @property
    def swept_bytes(self) -> int:
        """The adapter's always_on_bytes: always-on tensors plus the head (the tied table included)."""
        return self.always_on_bytes + self.head_bytes + self.tied_table_bytes

    @property
    def expert_bytes(self) -> float:
        """One routed expert: total routed-expert bytes / E."""
        if not self.routed_experts:
            return 0.0
        return self.routed_expert_bytes / self.routed_experts

    @property
    def expert_elements(self) -> float:
        if not self.routed_experts:
            return 0.0
        return self.routed_expert_elements / self.routed_experts

    def active_elements(self, per_token: int | None) -> float:
        """P_active as stored elements: everything but MTP, vision and the unchosen experts.

        The input embedding is included (the derivation's convention); a tied table is counted once.
        """
        chosen = (per_token or 0) * self.expert_elements
        return self.embedding_elements + self.head_elements + self.always_on_elements + chosen

    def weights(self, per_token: int | None) -> Weights:
        """The adapter's audited byte form. ``resident_bytes`` is every tensor byte (MTP and vision
        included), which the embedding + always-on + E experts formula would miss.
        """
        experts = None
        if self.routed_experts and per_token:
            experts = Experts(routed=self.routed_experts, per_token=per_token)
        return Weights(
            embedding_bytes=float(self.untied_embedding_bytes),
            always_on_bytes=float(self.swept_bytes),
            expert_bytes=self.expert_bytes if experts else 0.0,
            experts=experts,
            resident_bytes=float(self.resident_bytes),
        )


def byte_form(entries: Iterable[TensorEntry], routed_experts: int | None) -> ByteForm:
    """Sum per-tensor bytes and elements into the byte form. ``routed_experts`` is E, or None."""
    size = dict.fromkeys(TensorRole, 0)
    count = dict.fromkeys(TensorRole, 0)
    table_bytes = 0  # the main token table; per-layer lookup tables (Gemma 3n) are never the head
    names = 0
    for entry in entries:
        size[entry.role] += entry.size_bytes
        count[entry.role] += entry.elements
        if entry.role is TensorRole.EMBEDDING and "per_layer" not in entry.name:
            table_bytes += entry.size_bytes
            names += 1
    has_head = count[TensorRole.HEAD] > 0 or size[TensorRole.HEAD] > 0
    tied = names > 0 and not has_head
    return ByteForm(
        embedding_bytes=size[TensorRole.EMBEDDING],
        head_bytes=size[TensorRole.HEAD],
        always_on_bytes=size[TensorRole.ALWAYS_ON],
        routed_expert_bytes=size[TensorRole.ROUTED_EXPERT],
        mtp_bytes=size[TensorRole.MTP],
        vision_bytes=size[TensorRole.VISION],
        embedding_elements=count[TensorRole.EMBEDDING],
        head_elements=count[TensorRole.HEAD],
        always_on_elements=count[TensorRole.ALWAYS_ON],
        routed_expert_elements=count[TensorRole.ROUTED_EXPERT],
        mtp_elements=count[TensorRole.MTP],
        vision_elements=count[TensorRole.VISION],
        tied=tied,
        routed_experts=routed_experts if size[TensorRole.ROUTED_EXPERT] > 0 else None,
        tied_table_bytes=table_bytes if tied else 0,
    )
