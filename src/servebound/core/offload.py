"""Weights (and caches) in host RAM: llama.cpp's ``--cpu-moe``, ``--n-cpu-moe N`` and ``-ngl N``.

Two memory tiers: the device (capacity C, bandwidth R_dev) and the host (capacity C_host, bandwidth
R_host). The model's bytes split between them; one decode step reads each tier's bytes at that tier's
bandwidth, one after the other (a layer waits for the one before it), so a step of b sessions takes

    t(b) = B_dev(b) / R_dev + B_host(b) / R_host
         = (B_dev(b) + (R_dev / R_host) B_host(b)) / R_dev,

which is the single-tier roofline on an *effective* adapter whose host-tier traffic is scaled by
k = R_dev / R_host while its residency counts the device tier only (:func:`effective_model`). The
decode search (floor, b*, memory power) then runs unchanged on it. The host tier must hold its share:
its weights, and with ``-ngl`` its layers' caches, which also bound the batch.

Prefill moves the host tier's weights to the device for each chunk of at least
``HOST_COMPUTE_BELOW`` tokens (llama.cpp's op offload: a large batch runs on the GPU and the
offloaded weights cross the link, https://github.com/ggml-org/llama.cpp/pull/6083), at
min(R_link, R_host); smaller chunks are computed where the weights sit, on the CPU: they read the
host tier's weights from host memory at least once (B_host / R_host) and, where the CPU's rate F_host
is stated (``host_tflops``), do the host tier's FLOPs at no more than it, so such a chunk takes at
least max(B_host / R_host, 2 P_host c / F_host) with P_host the host tier's share of the active linear
parameters (split as the active bytes split, which undercounts the host's parameters when its weights
are the more compressed ones: ceiling-safe). Either time can overlap the device's own work, so the
chunk takes at least the larger of the two (ceiling-safe).

Where they sit (llama.cpp): ``cpu_moe`` puts every routed expert on the host; ``n_cpu_moe`` the experts
of N of the MoE layers; ``gpu_layers`` keeps N of the layers on the device and the rest (weights and
their caches) on the host. The untied input embedding stays on the host in every mode (llama.cpp keeps
the input layer on the CPU: src/llama-model.cpp, 'there is very little benefit to offloading the input
layer, so always keep it on the CPU').
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from servebound.core.advice import Note, Setting, listed
from servebound.core.arith import np
from servebound.core.errors import InputError
from servebound.core.experts import ExpertTraffic, distinct_experts
from servebound.core.fields import documented
from servebound.core.hardware import Hardware
from servebound.core.model import ModelAdapter, Weights

if TYPE_CHECKING:
    from servebound.core.arith import Floats

#: Chunks shorter than this run where the offloaded weights sit (llama.cpp's op-offload threshold:
#: batches of at least 32 tokens go to the GPU, ggml-backend's GGML_OP_OFFLOAD_MIN_BATCH).
HOST_COMPUTE_BELOW = 32

#: The host-to-device link's bandwidth when none is given: PCIe 5.0 x16 (32 GT/s x 16 lanes, 128b/130b:
#: about 63 GB/s per direction, PCI-SIG's PCIe 5.0 specification), the fastest link a consumer card has,
#: so a slower link only lowers the real speed below this ceiling.
DEFAULT_LINK_BYTES_PER_S = 63e9


#: The inputs that put weights in host RAM, and the host row, as errors name them.
_LAYERS = Setting("gpu_layers", placeholder="N")
_PLACED = listed(Setting("cpu_moe", True), Setting("n_cpu_moe", placeholder="N"), _LAYERS)
_PLACEMENTS = listed(Setting("cpu_moe"), Setting("n_cpu_moe"), Setting("gpu_layers"), last=", ")
_HOST = Setting("host", placeholder="HOST")


@dataclass(frozen=True)
class OffloadSpec:
    """What goes to host RAM and the host's memory: exactly one of ``cpu_moe``, ``n_cpu_moe``,
    ``gpu_layers``; ``host_memory_bytes`` / ``host_bandwidth_bytes_per_s`` from the flags or a host row
    (``host_id``, ``host_source``); ``link_bytes_per_s`` the host-to-device link."""

    host_memory_bytes: float
    host_bandwidth_bytes_per_s: float
    cpu_moe: bool = False
    n_cpu_moe: int | None = None
    gpu_layers: int | None = None
    link_bytes_per_s: float = DEFAULT_LINK_BYTES_PER_S
    host_id: str | None = None
    host_source: str = ""
    #: F_host: the host CPU's peak FLOP/s for the chunks it computes (None: not stated, not charged).
    host_flop_per_s: float | None = None
    #: A host CPU row (``--host-cpu``): its peak FLOP/s per mode, charged at the model's linear mode
    #: (the fastest it publishes where it lacks that mode: no mode runs faster than the fastest).
    host_cpu: str | None = None
    host_cpu_rates: tuple[tuple[str, float], ...] = ()

    def without_cpu(self) -> OffloadSpec:
        """The same offload with no host CPU rate (only the host tier's memory read is charged)."""
        return replace(self, host_flop_per_s=None, host_cpu=None, host_cpu_rates=())

    def cpu_rate(self, model: ModelAdapter) -> float | None:
        """F_host for ``model``: the stated rate, else the CPU row's rate at the model's linear mode
        (or its fastest), else None (host compute not charged)."""
        if self.host_flop_per_s is not None or not self.host_cpu_rates:
            return self.host_flop_per_s
        rates = dict(self.host_cpu_rates)
        mode = model.prefill.linear_mode if model.prefill is not None else None
        return rates.get(mode or "", max(rates.values()))

    @property
    def mode(self) -> str:
        if self.cpu_moe:
            return "cpu_moe"
        if self.n_cpu_moe is not None:
            return f"n_cpu_moe={self.n_cpu_moe}"
        return f"gpu_layers={self.gpu_layers}"


@dataclass(frozen=True)
class OffloadSplit:
    """The model's bytes per tier: ``host_expert_share`` of every routed expert, ``host_layer_share`` of
    the always-on weights and of the caches, and the embedding on the host."""

    host_expert_share: float
    host_layer_share: float
    device_resident_bytes: float
    host_resident_bytes: float

    def device_bytes(self, weights: Weights, touched_experts: float, kv_read_bytes: float) -> float:
        """B_dev for one iteration touching ``touched_experts`` distinct experts, cache read included."""
        return (
            (1.0 - self.host_layer_share) * weights.always_on_bytes
            + (1.0 - self.host_expert_share)
            * (1.0 - self.host_layer_share)
            * weights.expert_bytes
            * touched_experts
            + (1.0 - self.host_layer_share) * kv_read_bytes
        )

    def host_bytes(self, weights: Weights, touched_experts: float, kv_read_bytes: float) -> float:
        """B_host for the same iteration."""
        return (
            self.host_layer_share * weights.always_on_bytes
            + self.host_layer_share * kv_read_bytes
            + (
                self.host_expert_share
                + self.host_layer_share
                - self.host_expert_share * self.host_layer_share
            )
            * weights.expert_bytes
            * touched_experts
        )


def split(model: ModelAdapter, spec: OffloadSpec) -> OffloadSplit:
    """Where the weights sit under ``spec`` (an InputError naming the flag when it cannot apply)."""
    weights = model.weights
    routed = weights.experts.routed if weights.experts else 0
    expert_share = layer_share = 0.0
    if spec.cpu_moe or spec.n_cpu_moe is not None:
        if weights.experts is None:
            flag = "cpu_moe" if spec.cpu_moe else "n_cpu_moe"
            raise InputError(
                flag, Note.of(f"model '{model.id}' has no routed experts to keep in host RAM; use ", _LAYERS)
            )
        if spec.cpu_moe:
            expert_share = 1.0
        else:
            layers = model.shape.moe_layers if model.shape is not None else 0
            if layers <= 0:
                raise InputError("n_cpu_moe", f"model '{model.id}' does not say how many layers have experts")
            n = spec.n_cpu_moe or 0
            if not 0 <= n <= layers:
                raise InputError(
                    "n_cpu_moe", f"must be between 0 and the model's {layers} MoE layers (got {n})"
                )
            expert_share = n / layers
    else:
        layers = model.shape.layers if model.shape is not None else 0
        if layers <= 0:
            raise InputError("gpu_layers", f"model '{model.id}' does not say how many layers it has")
        n = spec.gpu_layers or 0
        if not 1 <= n <= layers:  # no layer on the device would leave it nothing to hold or read
            raise InputError("gpu_layers", f"must be between 1 and the model's {layers} layers (got {n})")
        layer_share = (layers - n) / layers
    experts_total = routed * weights.expert_bytes
    host_share_of_experts = expert_share + layer_share - expert_share * layer_share
    host = (
        weights.embedding_bytes
        + layer_share * weights.always_on_bytes
        + host_share_of_experts * experts_total
    )
    return OffloadSplit(
        host_expert_share=expert_share,
        host_layer_share=layer_share,
        device_resident_bytes=weights.resident - host,
        host_resident_bytes=host,
    )


def effective_model(
    model: ModelAdapter, where: OffloadSplit, ratio: float, cache_factor: float = 1.0
) -> ModelAdapter:
    """The single-tier adapter whose traffic at R_dev takes t = B_dev / R_dev + B_host / R_host:
    host-tier bytes scaled by ``ratio`` = R_dev / R_host, residency the device tier's only.
    ``cache_factor`` scales the reserved cache (the device's share, or more where the host's share of
    the caches binds the batch first)."""
    w = model.weights
    h, e = where.host_layer_share, where.host_expert_share
    device_expert = (1.0 - e) * (1.0 - h)
    weights = Weights(
        embedding_bytes=0.0,
        always_on_bytes=(1.0 - h) * w.always_on_bytes + ratio * h * w.always_on_bytes,
        expert_bytes=(device_expert + ratio * (1.0 - device_expert)) * w.expert_bytes,
        experts=w.experts,
        resident_bytes=where.device_resident_bytes,
        bytes_per_param=w.bytes_per_param,
    )
    return replace(
        model,
        weights=weights,
        kv_read=model.kv_read.scaled((1.0 - h) + ratio * h),
        kv_alloc=model.kv_alloc.scaled(cache_factor),
    )


@dataclass(frozen=True)
class OffloadReport:
    """The JSON ``offload`` object: where the bytes sit and what each tier moves per token."""

    mode: str = documented("`cpu_moe`, `n_cpu_moe=N` or `gpu_layers=N`: what sits in host RAM")
    host: str | None = documented("the host row's id (null: given directly)")
    host_memory_bytes: float = documented("C_host, the host RAM the tier may use", "bytes")
    host_bandwidth_bytes_per_s: float = documented("R_host, the host memory bandwidth", "bytes/s")
    link_bytes_per_s: float = documented(
        "R_link, the host-to-device link prefill moves weights over", "bytes/s"
    )
    host_flop_per_s: float | None = documented(
        "F_host, the host CPU's peak rate prefill charges its chunks under 32 tokens at (null: not "
        "stated, so only their host memory read is charged)",
        "FLOP/s",
    )
    host_cpu: str | None = documented("the host CPU row F_host comes from (null: given by flag, or none)")
    device_resident_bytes: float = documented("the weights held on the device", "bytes")
    host_resident_bytes: float = documented("the weights held in host RAM", "bytes")
    host_fits: bool = documented("the host tier holds its weights (and, with gpu_layers, its caches)")
    batch: int = documented("the batch the per-token bytes are at (b*, else 1)", "sessions")
    device_bytes_per_token: float = documented("B_dev(b) / b: device bytes moved per emitted token", "bytes")
    host_bytes_per_token: float = documented("B_host(b) / b: host bytes moved per emitted token", "bytes")
    step_time_split_s: tuple[float, float] = documented(
        "(B_dev(b) / R_dev, B_host(b) / R_host): the two terms of one step's time", "s"
    )


def tier_bytes(
    model: ModelAdapter, where: OffloadSplit, batch: int, read_tokens: int, mode: ExpertTraffic
) -> tuple[float, float]:
    """(B_dev, B_host) for one decode iteration of ``batch`` sessions reading ``read_tokens`` each."""
    w = model.weights
    touched = (
        float(distinct_experts(float(batch), w.experts.routed, w.experts.per_token, mode))
        if w.experts
        else 0.0
    )
    kv = batch * float(model.kv_read.bytes_at(read_tokens))
    return where.device_bytes(w, touched, kv), where.host_bytes(w, touched, kv)


def cache_factor(where: OffloadSplit, device_margin: float, host_margin: float) -> float:
    """The reserved cache's scale on the effective adapter: the device's share (1 - h), or more where
    the host's share h of the caches fills host RAM first (b_mem = min of the two tiers' fits)."""
    h = where.host_layer_share
    if h <= 0.0:
        return 1.0
    if host_margin <= 0.0:
        return 1e30  # no session's host share fits: b_mem = 0
    return max(1.0 - h, h * max(device_margin, 0.0) / host_margin)


def offloaded(
    hardware: Hardware, model: ModelAdapter, spec: OffloadSpec, overhead_bytes: float
) -> tuple[ModelAdapter, OffloadSplit, float]:
    """The effective adapter for ``spec`` on ``hardware``, the split, and the host's margin (host RAM
    minus the host tier's weights; negative: they do not fit, and the effective residency exceeds the
    device's memory so the verdict is ``no_resident_fit`` however much room the device has)."""
    where = split(model, spec)
    host_margin = spec.host_memory_bytes - where.host_resident_bytes
    device_margin = hardware.memory_bytes - where.device_resident_bytes - overhead_bytes
    ratio = hardware.bandwidth_bytes_per_s / spec.host_bandwidth_bytes_per_s
    eff = effective_model(model, where, ratio, cache_factor(where, device_margin, host_margin))
    if host_margin < 0:
        # The host's shortfall becomes the resident margin (C - W_resident - O = host_margin < 0): the
        # verdict is no_resident_fit whatever room the device has, since this split puts those weights
        # on the host (moving them to the device is another placement, not this one).
        short = hardware.memory_bytes - overhead_bytes - host_margin
        eff = replace(
            eff, weights=replace(eff.weights, resident_bytes=max(short, where.device_resident_bytes))
        )
    return eff, where, host_margin


def report(
    hardware: Hardware,
    model: ModelAdapter,
    spec: OffloadSpec,
    where: OffloadSplit,
    host_margin: float,
    batch: int,
    read_tokens: int,
    mode: ExpertTraffic,
) -> OffloadReport:
    """The ``offload`` object of a decode step at ``batch``."""
    dev, host = tier_bytes(model, where, batch, read_tokens, mode)
    split_s = (dev / hardware.bandwidth_bytes_per_s, host / spec.host_bandwidth_bytes_per_s)
    return tier_report(model, spec, where, host_margin, batch, (dev / batch, host / batch), split_s)


def tier_report(
    model: ModelAdapter,
    spec: OffloadSpec,
    where: OffloadSplit,
    host_margin: float,
    batch: int,
    bytes_per_token: tuple[float, float],
    split_s: tuple[float, float],
) -> OffloadReport:
    """The ``offload`` object (decode's, prefill's): at ``batch``, each tier's bytes per token and time."""
    return OffloadReport(
        mode=spec.mode,
        host=spec.host_id,
        host_memory_bytes=spec.host_memory_bytes,
        host_bandwidth_bytes_per_s=spec.host_bandwidth_bytes_per_s,
        link_bytes_per_s=spec.link_bytes_per_s,
        host_flop_per_s=spec.cpu_rate(model),
        host_cpu=spec.host_cpu,
        device_resident_bytes=where.device_resident_bytes,
        host_resident_bytes=where.host_resident_bytes,
        host_fits=host_margin >= 0,
        batch=batch,
        device_bytes_per_token=bytes_per_token[0],
        host_bytes_per_token=bytes_per_token[1],
        step_time_split_s=split_s,
    )


def prefill_host_time(
    model: ModelAdapter,
    where: OffloadSplit,
    spec: OffloadSpec,
    batch: int,
    prompt: int,
    chunk: int,
    mode: ExpertTraffic,
) -> tuple[float, float]:
    """(host bytes moved, seconds) for a batch of ``batch`` prompts of ``prompt`` tokens in chunks of
    ``chunk``: each chunk needs the host tier's share of its weight sweep W_batch(b c), over the link
    at min(R_link, R_host) for chunks of at least HOST_COMPUTE_BELOW tokens, else computed on the CPU:
    read in host memory, and no faster than the host tier's FLOPs at F_host where it is stated."""
    w = model.weights
    per_token = host_flops_per_token(model, where)
    rate = spec.cpu_rate(model)
    full, last = divmod(prompt, chunk)
    total_bytes = total_s = 0.0
    for width, count in ((chunk, full), (last, 1 if last else 0)):
        if count == 0:
            continue
        tokens = batch * width
        touched = (
            float(distinct_experts(float(tokens), w.experts.routed, w.experts.per_token, mode))
            if w.experts
            else 0.0
        )
        host = where.host_bytes(w, touched, 0.0)
        if tokens >= HOST_COMPUTE_BELOW:
            seconds = host / min(spec.link_bytes_per_s, spec.host_bandwidth_bytes_per_s)
        else:
            seconds = host / spec.host_bandwidth_bytes_per_s
            if rate is not None:
                seconds = max(seconds, tokens * per_token / rate)
        total_bytes += count * host
        total_s += count * seconds
    return total_bytes, total_s


def host_flops_per_token(model: ModelAdapter, where: OffloadSplit) -> float:
    """2 P_host: the host tier's linear FLOPs per token routed, the active linear parameters split
    as one token's active weight bytes split between the tiers (0 where the model has no prefill
    fields)."""
    if model.prefill is None:
        return 0.0
    w = model.weights
    k = w.experts.per_token if w.experts else 0
    h, e = where.host_layer_share, where.host_expert_share
    active = w.always_on_bytes + k * w.expert_bytes
    if active <= 0.0:
        return 0.0
    host = h * w.always_on_bytes + (e + h - e * h) * k * w.expert_bytes
    return 2.0 * model.prefill.linear_active_params * host / active


#: The inputs that place weights in host RAM: ``catalog.hosts.offload_spec``'s keywords, one name each on every
#: surface (the CLI's flags, the API's parameters, the pair page's form).
OFFLOAD_INPUTS: tuple[str, ...] = (
    "cpu_moe",
    "n_cpu_moe",
    "gpu_layers",
    "host",
    "host_memory_gb",
    "host_bandwidth_gb_per_s",
    "host_link_gb_per_s",
    "host_tflops",
    "host_cpu",
)


def one_shot_host_seconds(
    model: ModelAdapter, where: OffloadSplit, spec: OffloadSpec, tokens: Floats, mode: ExpertTraffic
) -> Floats:
    """:func:`prefill_host_time`'s seconds for one-shot prefills of ``tokens`` = b L routings each
    (an array: the curve's and the range's vectorized form)."""
    w = model.weights
    touched = (
        distinct_experts(tokens, w.experts.routed, w.experts.per_token, mode) if w.experts else 0.0 * tokens
    )
    h, e = where.host_layer_share, where.host_expert_share
    host = h * w.always_on_bytes + (e + h - e * h) * w.expert_bytes * touched
    link = min(spec.link_bytes_per_s, spec.host_bandwidth_bytes_per_s)
    on_cpu = host / spec.host_bandwidth_bytes_per_s
    rate = spec.cpu_rate(model)
    if rate is not None:
        on_cpu = np.maximum(on_cpu, tokens * host_flops_per_token(model, where) / rate)
    seconds: Floats = np.where(tokens >= HOST_COMPUTE_BELOW, host / link, on_cpu)
    return seconds


def one_shot_host_split(
    model: ModelAdapter, where: OffloadSplit, spec: OffloadSpec, tokens: Floats, mode: ExpertTraffic
) -> tuple[Floats, Floats]:
    """(the host tier's memory read alone, its whole time) for one-shot prefills of ``tokens``
    routings: the whole time also charges the host CPU's FLOPs for the chunks it computes."""
    read = one_shot_host_seconds(model, where, spec.without_cpu(), tokens, mode)
    if spec.cpu_rate(model) is None:
        return read, read
    return read, one_shot_host_seconds(model, where, spec, tokens, mode)
