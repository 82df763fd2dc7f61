"""The model adapter: the handful of quantities through which an architecture enters the bounds."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cached_property

from servebound.core.arith import Values, as_values, filled
from servebound.core.errors import InputError
from servebound.core.experts import ExpertTraffic, distinct_experts
from servebound.core.formats import format_words
from servebound.core.hardware import require_finite, require_non_negative, require_positive
from servebound.core.kv import KVShape

#: The most routed experts a model may have (real MoE models have up to a few hundred per layer).
MAX_ROUTED_EXPERTS = 100_000
#: The longest context a model may state (a billion tokens, far past any trained model's).
MAX_CONTEXT_TOKENS = 10**9


@dataclass(frozen=True)
class Experts:
    """E routed experts, k chosen per token."""

    routed: int
    per_token: int

    @cached_property
    def log_keep(self) -> float:
        """log1p(-k/E): the log of the chance that one routing misses a given expert."""
        return math.log1p(-self.per_token / self.routed)

    def __post_init__(self) -> None:
        if isinstance(self.routed, int) and self.routed > MAX_ROUTED_EXPERTS:
            raise InputError(
                "experts.routed",
                f"{self.routed:,} routed experts is beyond any real model; at most {MAX_ROUTED_EXPERTS:,}",
            )
        if not 1 <= self.per_token <= self.routed:
            raise InputError(
                "experts",
                f"per_token must be between 1 and routed (got per_token {self.per_token!r}, routed {self.routed!r})",
            )


@dataclass(frozen=True)
class Weights:
    """The audited byte form of the weights; the parameter form converts into it.

    ``embedding_bytes``: untied input embedding, resident but not swept (only selected rows are read).
    ``always_on_bytes``: swept every iteration whatever the routing (attention, norms, router, dense and
    shared-expert MLPs, output head). ``expert_bytes``: one routed expert. ``resident_bytes``: W_resident.
    ``bytes_per_param`` is e_w when the weights came from the parameter form, else None.
    """

    embedding_bytes: float
    always_on_bytes: float
    expert_bytes: float = 0.0
    experts: Experts | None = None
    resident_bytes: float | None = None
    bytes_per_param: float | None = None

    def __post_init__(self) -> None:
        for name in ("embedding_bytes", "expert_bytes"):
            require_non_negative(getattr(self, name), f"weights.{name}", "bytes")
        # always-on bytes are only required finite: the parameter form derives them, and counts that leave
        # a negative part are refused where they are read (the model file's check names the counts).
        require_finite(self.always_on_bytes, "weights.always_on_bytes", "bytes")
        if self.resident_bytes is not None:
            require_positive(self.resident_bytes, "weights.resident_bytes", "bytes")
        if self.bytes_per_param is not None:
            require_positive(self.bytes_per_param, "weights.bytes_per_param", "bytes")

    @classmethod
    def from_params(
        cls,
        *,
        bytes_per_param: float,
        total_params: float,
        active_params: float,
        embedding_params: float = 0.0,
        experts: Experts | None = None,
        resident_bytes: float | None = None,
    ) -> Weights:
        """p_expert = (P_total - P_active) / (E - k); always-on = P_active - k p_expert - P_embed."""
        if experts is None or experts.per_token >= experts.routed:
            expert_params = 0.0
            always_on_params = total_params - embedding_params
        else:
            expert_params = (total_params - active_params) / (experts.routed - experts.per_token)
            always_on_params = active_params - experts.per_token * expert_params - embedding_params
        return cls(
            embedding_bytes=embedding_params * bytes_per_param,
            always_on_bytes=always_on_params * bytes_per_param,
            expert_bytes=expert_params * bytes_per_param,
            experts=experts if expert_params > 0 else None,
            resident_bytes=resident_bytes,
            bytes_per_param=bytes_per_param,
        )

    @property
    def resident(self) -> float:
        """W_resident: the given override, else embedding + always-on + E experts."""
        if self.resident_bytes is not None:
            return self.resident_bytes
        routed = self.experts.routed if self.experts else 0
        return self.embedding_bytes + self.always_on_bytes + routed * self.expert_bytes

    @property
    def saturated(self) -> float:
        """W_sat = W_batch(inf): always-on plus every routed expert, the most one sweep can fetch."""
        routed = self.experts.routed if self.experts else 0
        return self.always_on_bytes + routed * self.expert_bytes

    @property
    def active(self) -> float:
        """W_active = W_batch(1) under minimum traffic: always-on plus k experts."""
        per_token = self.experts.per_token if self.experts else 0
        return self.always_on_bytes + per_token * self.expert_bytes

    def batch(self, routings: Values, mode: ExpertTraffic = ExpertTraffic.EXPECTED) -> Values:
        """W_batch(n): always-on bytes plus one expert's bytes per distinct expert touched by n routings
        (one count or an array of counts)."""
        experts = self.experts
        if type(routings) is float:  # one count (every decode and bisection step): on floats, inline
            if experts is None:
                return float(self.always_on_bytes)
            if mode is ExpertTraffic.EXPECTED and experts.per_token < experts.routed:
                # expected_distinct_experts at one count: -E expm1(n log1p(-k/E)).
                touched = -experts.routed * math.expm1(routings * experts.log_keep)
                return self.always_on_bytes + self.expert_bytes * touched
        n = as_values(routings)
        if experts is None:
            return filled(n, self.always_on_bytes)
        touched = distinct_experts(n, experts.routed, experts.per_token, mode)
        return self.always_on_bytes + self.expert_bytes * touched


@dataclass(frozen=True)
class PrefillShape:
    """The two prefill adapter entries plus the arithmetic modes the runtime selects.

    a_attn(c, l) = alpha_global * (l + (c+1)/2) + alpha_local/c * sum_{j=1..c} min(l+j, w) + alpha_state.
    """

    linear_active_params: float
    attention_global_flops_per_pair: float = 0.0
    attention_local_flops_per_pair: float = 0.0
    attention_window_tokens: int = 0
    attention_state_flops_per_token: float = 0.0
    kv_write_bytes_per_token: float = 0.0
    linear_mode: str = "bf16"
    attention_mode: str = "bf16"
    #: A mode the model's engine runs the linear math at instead of ``linear_mode`` on hardware whose
    #: row publishes a rate for it (llama.cpp's F16 files: its CUDA backend multiplies F16 weights
    #: with FP16 accumulate, ``fp16_acc16``). Where the row has no such rate ``linear_mode`` is charged;
    #: :func:`servebound.core.rates.linear_mode_for` makes the choice and says which and why.
    linear_mode_if_published: str | None = None
    #: P_lin,active split by the mode each part multiplies in, ((mode, params), ...), where the weights
    #: mix storage formats (MXFP4 experts beside BF16 attention projections): each part is charged at its
    #: own mode's rate (:func:`servebound.core.rates.mode_rates`). Empty: every linear FLOP runs at
    #: ``linear_mode``. The parts sum to ``linear_active_params``.
    linear_params_by_mode: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class LayerShape:
    """What a parallel layout needs beyond the adapter: how the model splits over devices.

    ``layers``: transformer layers (pipeline stages split them; tensor-parallel all-reduces run twice
    per layer). ``hidden_size``: the residual width d, the activation a token carries between devices.
    ``query_heads``: a tensor-parallel degree must divide it (the greatest common divisor over
    attention layers). ``cache_shards``: the heads the KV cache splits over (the fewest KV heads of any
    attention layer; 1 for a latent cache); a tensor-parallel degree past it replicates the cache.
    ``moe_layers``: layers with routed experts (each costs an expert dispatch and combine).
    """

    layers: int
    hidden_size: int
    query_heads: int
    cache_shards: int
    moe_layers: int = 0


@dataclass(frozen=True)
class ModelAdapter:
    """Adapter(M) = [W_resident, W_batch(n), K_alloc(L), K_read(L), rho, P_lin,active, a_attn].

    ``kv_bytes_per_element`` records the cache element width the KV bytes were given at (2 for bf16),
    so a workload can ask for another KV precision. ``context_limit_tokens`` is the model's trained
    context (max_position_embeddings), used to bound prompt-length ranges.
    """

    id: str
    name: str
    weights: Weights
    kv_alloc: KVShape
    kv_read: KVShape
    prefill: PrefillShape | None = None
    context_limit_tokens: int | None = None
    weight_precision: str | None = None
    kv_precision: str | None = None
    kv_bytes_per_element: float | None = None
    sources: dict[str, str] = field(default_factory=dict, compare=False)
    #: How the model splits over devices (parallel layouts); None when the source does not say.
    shape: LayerShape | None = None

    def __post_init__(self) -> None:
        """NaN, infinite or negative cache sizes are refused here, as the model file refuses them."""
        for part, kv in (("kv_alloc", self.kv_alloc), ("kv_read", self.kv_read)):
            for name in ("global_bytes_per_token", "local_bytes_per_token", "state_bytes"):
                require_non_negative(getattr(kv, name), f"model.{part}.{name}", "bytes")
        limit = self.context_limit_tokens
        if limit is not None and not 1 <= limit <= MAX_CONTEXT_TOKENS:
            raise InputError(
                "model.context_limit",
                f"{limit:,} tokens: a model's context is 1 to {MAX_CONTEXT_TOKENS:,} tokens; fix the file's "
                "context length (or leave it out: the workload's context then applies)",
            )
        if self.weights.resident <= 0:
            raise InputError(
                "model.weights", f"W_resident must be above 0 bytes (got {self.weights.resident!r})"
            )

    def with_kv_scale(self, factor: float, precision: str | None) -> ModelAdapter:
        """The same model with its attention cache entries scaled to another element width."""
        prefill = self.prefill
        if prefill is not None:
            prefill = replace(prefill, kv_write_bytes_per_token=prefill.kv_write_bytes_per_token * factor)
        return replace(
            self,
            kv_alloc=self.kv_alloc.scaled(factor),
            kv_read=self.kv_read.scaled(factor),
            prefill=prefill,
            kv_precision=precision,
            kv_bytes_per_element=(
                self.kv_bytes_per_element * factor if self.kv_bytes_per_element is not None else None
            ),
            sources={**self.sources, "kv_precision": f"asked for: {_written(precision)}"},
        )


def _written(precision: str | None) -> str:
    """A cache format as people write it (FP8, Q8_0), or the model's own where none is named."""
    return "the model's own" if precision is None else format_words(precision)
