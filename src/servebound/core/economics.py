"""The serving-economics lecture's quantities (shared/spec/serving-economics.md), each one function.

The text's equations were lost in transcription; each form here is derived again from its prose and
checked against the numbers it states (tests/test_economics.py):

* hardware balance: a multiply-add is 2 FLOPs, so F / (2R) multiplies per byte fetched, and
  F e_w / (2R) per weight of e_w bytes (~300 FP4 multiplies per weight on a Blackwell GPU);
* balance batch: the weight fetch W / R equals the weight multiply b 2 P_active / F at
  b = F W / (2 P_active R); with W = e_w P_total (every expert touched) that is
  (F e_w / 2R) x (P_total / P_active), the hardware constant times the sparsity (300 x 8 = 2,400);
  exactly, W = W_batch(b) and b solves the fixed point; with the KV read and attention included,
  b (2 P / F_lin + a_attn / F_attn) = (W_batch(b) + b K_read) / R;
* drain time C / R (288 GB / 20 TB/s = 14.4 ms), the natural step time; batches departing every tau
  seconds queue a request at most 2 tau and deliver b / tau tokens per second;
* API-price forensics: at a long-context surcharge breakpoint L* the KV fetch equals the compute,
  b L* kappa / R = b 2 P_active / F, so kappa = 2 P_active R / (F L*) bytes of KV per token; an
  output/input price ratio says decode spends that many times the compute floor per token; a cache
  hold time maps to the memory tier whose drain time (capacity / bandwidth) is nearest;
* equal-cost training: pre-training 6 N D_pre, RL c_rl N D_rl / eta (c_rl between 2 and 6, eta the
  relative efficiency of RL's decode-heavy work), inference 2 N D_inf; N divides out; lifetime
  inference tokens are traffic x life; over-training is D_pre against Chinchilla's 20 N.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from servebound.core.errors import InputError
from servebound.core.experts import ExpertTraffic
from servebound.core.model import Weights
from servebound.core.prefill_cost import sweep_fixed_point

#: Chinchilla's compute-optimal tokens per parameter.
CHINCHILLA_TOKENS_PER_PARAM = 20.0
SECONDS_PER_DAY = 86_400.0


# --- hardware balance and the balance batch --------------------------------------------------------


@dataclass(frozen=True)
class HardwareBalance:
    """F / (2R) multiplies per byte fetched, and per weight of ``bytes_per_weight`` bytes."""

    flop_per_s: float
    bandwidth_bytes_per_s: float
    bytes_per_weight: float
    multiplies_per_byte: float
    multiplies_per_weight: float


def hardware_balance(
    flop_per_s: float, bandwidth_bytes_per_s: float, bytes_per_weight: float
) -> HardwareBalance:
    """F / (2R) multiplies per byte; times e_w, multiplies per weight fetched."""
    per_byte = flop_per_s / (2.0 * bandwidth_bytes_per_s)
    return HardwareBalance(
        flop_per_s, bandwidth_bytes_per_s, bytes_per_weight, per_byte, per_byte * bytes_per_weight
    )


def sparsity_balance_batch(multiplies_per_weight: float, total_params: float, active_params: float) -> float:
    """The lecture's approximation: (F e_w / 2R) x (P_total / P_active), every expert's weights fetched."""
    return multiplies_per_weight * total_params / active_params


def every_expert_balance_batch(
    flop_per_s: float, saturated_bytes: float, linear_active_params: float, bandwidth_bytes_per_s: float
) -> float:
    """The balance batch with every expert's weights fetched: F_linear W_all / (2 P_lin,active R),
    the lecture's (F e_w / 2R) x (P_total / P_active) written in the adapter's bytes."""
    return flop_per_s * saturated_bytes / (2.0 * linear_active_params * bandwidth_bytes_per_s)


def balance_batch(
    weights: Weights,
    *,
    bandwidth_bytes_per_s: float,
    seconds_per_session_step: float,
    kv_read_bytes: float = 0.0,
    expert_traffic: ExpertTraffic = ExpertTraffic.EXPECTED,
) -> float | None:
    """The real b where compute time equals memory time: b c R = W_batch(b) + b K_read, so
    b = W_batch(b) / (R c - K_read); None when the private KV read alone outlasts the compute
    (R c <= K_read: memory stays ahead at every batch). With K_read = 0 and c = 2 P_lin / F this is
    the prefill crossover S* = W_batch(S*) F / (2 P_lin R)."""
    denominator = bandwidth_bytes_per_s * seconds_per_session_step - kv_read_bytes
    if denominator <= 0:
        return None
    return sweep_fixed_point(weights, expert_traffic, 1.0 / denominator)


# --- step time, trains and traffic --------------------------------------------------------------------


def drain_time_s(capacity_bytes: float, bandwidth_bytes_per_s: float) -> float:
    """C / R: the time to read the whole memory once, the natural step time."""
    return capacity_bytes / bandwidth_bytes_per_s


@dataclass(frozen=True)
class TrainSchedule:
    """Batches of ``batch`` sessions departing every ``interval_s``: worst-case queueing 2 tau (a
    request just missing one departure waits for the next, then rides a step), and b / tau tokens/s."""

    batch: float
    interval_s: float
    steps_per_s: float
    worst_queueing_s: float
    tok_s: float


def train_schedule(batch: float, interval_s: float) -> TrainSchedule:
    return TrainSchedule(batch, interval_s, 1.0 / interval_s, 2.0 * interval_s, batch / interval_s)


# --- reading infrastructure off API prices ----------------------------------------------------------


def kv_bytes_per_token_from_breakpoint(
    active_params: float, flop_per_s: float, bandwidth_bytes_per_s: float, breakpoint_tokens: float
) -> float:
    """kappa = 2 P_active R / (F L*): the KV bytes per context token that make the KV fetch equal the
    compute at the surcharge breakpoint L* (the batch cancels)."""
    return 2.0 * active_params * bandwidth_bytes_per_s / (flop_per_s * breakpoint_tokens)


@dataclass(frozen=True)
class PriceRatioReading:
    """Output/input price ratio rho_p: prefill sits on the compute floor, so decode spends rho_p times
    the compute time per token; the memory-bound share of a decode step is 1 - 1 / rho_p."""

    output_usd_per_mtok: float
    input_usd_per_mtok: float
    ratio: float
    memory_share: float


def price_ratio_reading(output_usd_per_mtok: float, input_usd_per_mtok: float) -> PriceRatioReading:
    """ratio = output / input price, read as decode time per token over the compute floor per token;
    the memory-bound share of a step is 1 - 1/ratio. A decode token costs at least its compute floor,
    so a ratio below 1 has no such reading (an InputError: the prices are swapped or not cost-based)."""
    ratio = output_usd_per_mtok / input_usd_per_mtok
    if ratio < 1.0:
        raise InputError(
            "output_usd",
            f"the output price {output_usd_per_mtok:g} is below the input price {input_usd_per_mtok:g} "
            f"(ratio {ratio:g}); decode costs at least the compute floor, so the reading needs output >= "
            "input: check the two prices are not swapped",
        )
    return PriceRatioReading(output_usd_per_mtok, input_usd_per_mtok, ratio, 1.0 - 1.0 / ratio)


@dataclass(frozen=True)
class MemoryTier:
    """One tier of storage per device: capacity and read bandwidth, with their source."""

    name: str
    device: str
    capacity_bytes: float
    bandwidth_bytes_per_s: float
    source: str

    @property
    def drain_time_s(self) -> float:
        return drain_time_s(self.capacity_bytes, self.bandwidth_bytes_per_s)


#: A small sourced table of tiers, fastest first (decimal units as the vendors give them).
MEMORY_TIERS: tuple[MemoryTier, ...] = (
    MemoryTier(
        "HBM",
        "Rubin GPU (the lecture's figures)",
        288e9,
        20e12,
        "shared/spec/serving-economics.md: 'On the Rubin generation that is 288 GB / 20 TB/s'",
    ),
    MemoryTier(
        "host DDR",
        "one AMD EPYC 9004 socket, 12 channels of DDR5-4800 with 512 GB RDIMMs",
        6e12,
        460.8e9,
        "https://www.tomshardware.com/news/amd-confirms-12-ddr5-memory-channels-on-genoa "
        "(460.8 GB/s per socket; 12 x 512 GB = 6 TB)",
    ),
    MemoryTier(
        "flash",
        "Samsung PM1743 15.36 TB NVMe SSD (PCIe 5.0 x4)",
        15.36e12,
        13e9,
        "AnandTech (Ryan Smith, 2021-12-23), 'Samsung Announces First PCIe 5.0 Enterprise SSD: PM1743', as "
        "mirrored at http://www.awof.org/samsung-announces-first-pcie-50-enterprise-ssd-pm1743-coming-in-2022.html "
        "(15.36 TB; sequential read 13,000 MB/s)",
    ),
    MemoryTier(
        "disk",
        "Seagate Exos X24 24 TB hard disk",
        24e12,
        285e6,
        "https://blocksandfiles.com/2023/10/18/seagate-pips-toshiba-and-wd-with-24tb-drive/ (24 TB; maximum "
        "sustained data rate 285 MBps)",
    ),
)


#: The lecture's own reading of the two cache prices, hold time (s) -> tier: a 5-minute cache on flash,
#: a 1-hour cache on spinning disk (it puts flash's drain time at about a minute, disk's at about an
#: hour). Our tier rows can place a hold elsewhere; the cache-tier answer states both.
LECTURE_CACHE_TIERS: tuple[tuple[float, str], ...] = ((300.0, "flash"), (3600.0, "disk"))
LECTURE_CACHE_TIERS_SOURCE = (
    "shared/spec/serving-economics.md, 'Cache pricing and memory tiers': 'a 5-minute cache tier and a 1-hour "
    "cache tier probably map to flash and spinning disk'"
)


def tier_for_hold_time(hold_s: float, tiers: tuple[MemoryTier, ...] = MEMORY_TIERS) -> MemoryTier:
    """The tier whose drain time is nearest the hold time on a log scale (a tier is well matched to
    holds around its drain time: shorter wastes its capacity, longer its bandwidth)."""
    return min(tiers, key=lambda t: abs(math.log(hold_s / t.drain_time_s)))


# --- the equal-cost training heuristic --------------------------------------------------------------


@dataclass(frozen=True)
class EqualCost:
    """Set pre-training, RL and inference compute equal (the minimum of a sum of competing costs tends
    to sit where they are equal). Per active parameter N (which divides out):

        6 D_pre = (c_rl / eta) D_rl = 2 D_inf,   D_inf = traffic x life.

    ``pretrain_tokens_equal_cost`` = D_inf / 3 and ``rl_tokens_equal_cost`` = 2 eta D_inf / c_rl are
    the exact equal-cost counts; the text's conclusion reads them as "about the same" as D_inf (the
    factors are within what the analysis can resolve), so ``over_training`` compares D_inf with
    Chinchilla's 20 N, and ``over_training_equal_cost`` the exact D_pre.
    """

    traffic_tok_s: float
    life_s: float
    active_params: float
    rl_flops_per_param_token: float
    rl_efficiency: float
    inference_tokens: float
    pretrain_tokens_equal_cost: float
    rl_tokens_equal_cost: float
    chinchilla_tokens: float
    over_training: float
    over_training_equal_cost: float


def equal_cost(
    traffic_tok_s: float,
    life_s: float,
    active_params: float,
    *,
    rl_flops_per_param_token: float = 4.0,
    rl_efficiency: float = 0.3,
    tokens_per_param: float = CHINCHILLA_TOKENS_PER_PARAM,
) -> EqualCost:
    inference = traffic_tok_s * life_s
    chinchilla = tokens_per_param * active_params
    pretrain = 2.0 * inference / 6.0
    return EqualCost(
        traffic_tok_s=traffic_tok_s,
        life_s=life_s,
        active_params=active_params,
        rl_flops_per_param_token=rl_flops_per_param_token,
        rl_efficiency=rl_efficiency,
        inference_tokens=inference,
        pretrain_tokens_equal_cost=pretrain,
        rl_tokens_equal_cost=2.0 * rl_efficiency * inference / rl_flops_per_param_token,
        chinchilla_tokens=chinchilla,
        over_training=inference / chinchilla,
        over_training_equal_cost=pretrain / chinchilla,
    )
