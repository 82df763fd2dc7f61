"""F_hw lookups for the arithmetic modes a model's prefill adapter selects: one lookup for prefill and decode."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum

from servebound.core.formats import format_words
from servebound.core.hardware import ARITHMETIC_MODES, Hardware
from servebound.core.model import PrefillShape


class BoundBy(StrEnum):
    """Which line of the roofline sets a time: memory or compute (memory on a tie, and memory when
    compute is unavailable). Decode's step at b* and prefill's t_pf,min both report it."""

    MEMORY = "memory"
    COMPUTE = "compute"


def bound_by(memory_s: float, compute_s: float | None) -> BoundBy:
    """The line that sets max(memory_s, compute_s): compute only when strictly slower."""
    return BoundBy.COMPUTE if compute_s is not None and compute_s > memory_s else BoundBy.MEMORY


#: servebound's rule for a mode the hardware row publishes no rate for, where it departs from the
#: derivation's (which reports the compute result as unavailable). One sentence for every surface: the
#: results' assumptions, /derivation and /methodology.
MISSING_RATE_RULE = (
    "Where a hardware row publishes no rate for a needed mode, servebound departs from the derivation's "
    "rule (compute unavailable): it charges the mode engines unpack that format to on silicon without "
    "matrix units for it, else the fastest rate the row publishes, provided the row publishes the fastest "
    "mode of its silicon, since no mode runs faster and the time stays a bound (a looser one, most at long "
    "context where attention dominates); only a row that omits its silicon's fastest mode leaves the "
    "compute result unavailable. Each result names the mode charged and why."
)


@dataclass(frozen=True)
class ModeCharge:
    """The rate a path is charged at: the mode whose rate was used (None when the row publishes no
    rate at all) and why, when it is not the path's own mode (empty when it is)."""

    mode: str | None
    flop_per_s: float | None
    reason: str = ""

    @property
    def fallback(self) -> bool:
        return bool(self.reason)


def fastest_mode(hardware: Hardware) -> tuple[str, float] | None:
    """The mode with the largest rate the row publishes (the first in ARITHMETIC_MODES order on a
    tie), or None when it publishes none."""
    rates = hardware.compute_flop_per_s
    if not rates:
        return None
    order = {mode: i for i, mode in enumerate(ARITHMETIC_MODES)}
    mode = min(rates, key=lambda m: (-rates[m], order.get(m, len(order))))
    return mode, rates[mode]


def charge_mode(hardware: Hardware, mode: str) -> ModeCharge:
    """F_hw for ``mode``, or the rate charged in its place when the row does not publish it.

    1. The row's own rate for ``mode``.
    2. A format mode the device's family has no matrix hardware for (FP4 on Ada or Hopper, FP8 on
       Ampere): the mode engines unpack it to (``Hardware.family``), with that rule's source.
    3. Otherwise the fastest rate the row publishes: no mode runs faster than the fastest, so the
       time stays a lower bound (a looser one). That holds only where the row publishes the fastest
       mode of its family's silicon (``Family.fastest_mode``): a row that omits it (Apple M5's Neural
       Accelerators, Arc A770's XMX, RDNA's WMMA INT8) gets no rate, since a faster unpublished mode
       could beat every published one.
    4. A row with no rate at all, or one of those: None, and the figure is memory-only.
    """
    rate = hardware.compute_rate(mode)
    if rate is not None:
        return ModeCharge(mode, rate)
    family = hardware.family
    rule = None if family is None else family.unpacked(mode)
    if family is not None and rule is not None:
        for target in rule.to:
            target_rate = hardware.compute_rate(target)
            if target_rate is not None:
                return ModeCharge(
                    target,
                    target_rate,
                    f"{family.id} has no {mode} matrix hardware; engines unpack {mode} weights to "
                    f"{target} and multiply there ({rule.source})",
                )
    fastest = fastest_mode(hardware)
    if fastest is None:
        return ModeCharge(None, None, f"the hardware row publishes no compute rate: memory only (no {mode})")
    if family is not None and hardware.compute_rate(family.fastest_mode) is None:
        # The silicon has a faster mode than any the row publishes: no published rate bounds this one.
        return ModeCharge(
            None,
            None,
            f"the hardware row publishes no {mode} rate, and no rate for {family.fastest_mode}, the fastest "
            f"mode of {family.id} silicon, so no published rate bounds it: memory only ({family.source})",
        )
    return ModeCharge(
        fastest[0],
        fastest[1],
        f"the hardware row publishes no {mode} rate; charged the fastest rate it publishes "
        f"({fastest[0]}): no mode runs faster, so the time stays a bound",
    )


@dataclass(frozen=True)
class ModeRates:
    """F_linear and F_attention charged for the modes a prefill adapter selects.

    ``linear_mode`` / ``attention_mode`` are the modes the path runs at; ``linear_flop_per_s`` /
    ``attention_flop_per_s`` the rates charged (the mode's own, or a fallback: ``*_mode_charged`` and
    ``*_charge_reason`` say which and why; None only where the row publishes no rate at all).
    ``needs_*`` is False when the path has no work (no linear parameters, no attention terms), so a
    missing rate there does not make compute unavailable. ``missing_modes`` lists the needed modes
    the hardware row does not publish (charged at a fallback, or memory-only when it has none).
    """

    linear_mode: str
    attention_mode: str
    linear_flop_per_s: float | None
    attention_flop_per_s: float | None
    needs_linear: bool
    needs_attention: bool
    linear_mode_choice: str = ""
    linear_mode_charged: str | None = None
    attention_mode_charged: str | None = None
    linear_charge_reason: str = ""
    attention_charge_reason: str = ""
    missing_modes: tuple[str, ...] = ()
    #: Where the linear math mixes modes: (mode, parameters, mode charged, rate charged) per part; the
    #: linear rate is then their harmonic combination P / sum(P_i / F_i), so A_linear / F_linear is
    #: exactly the sum of each part's time at its own rate.
    linear_split: tuple[tuple[str, float, str | None, float | None], ...] = ()

    @property
    def available(self) -> bool:
        """Every path with work has a rate to charge (its own or a fallback)."""
        return not (
            (self.needs_linear and self.linear_flop_per_s is None)
            or (self.needs_attention and self.attention_flop_per_s is None)
        )

    @property
    def fallback(self) -> bool:
        """A needed path is charged at a rate other than its own mode's."""
        return bool(
            (self.needs_linear and self.linear_charge_reason)
            or (self.needs_attention and self.attention_charge_reason)
        )

    @property
    def charge_note(self) -> str:
        """One sentence for every surface: the fallback used, or that the figure is memory-only."""
        if not self.available:
            missing_linear = self.needs_linear and self.linear_flop_per_s is None
            why = self.linear_charge_reason if missing_linear else self.attention_charge_reason
            return f"compute unavailable, so this figure is memory-only: {why}"
        parts = []
        if self.needs_linear and self.linear_charge_reason:
            parts.append(
                f"linear math ({_said(self.linear_mode)}) charged at {_said(self.linear_mode_charged)}"
            )
        if self.needs_attention and self.attention_charge_reason:
            parts.append(
                f"attention ({_said(self.attention_mode)}) charged at {_said(self.attention_mode_charged)}"
            )
        return "; ".join(parts)


def linear_mode_for(
    hardware: Hardware, shape: PrefillShape, linear_mode: str | None = None
) -> tuple[str, str]:
    """The mode the linear math is charged at on ``hardware``, and a sentence saying why.

    A mode given by the caller wins. Otherwise the model's ``linear_mode_if_published`` is charged where
    the hardware row publishes a rate for it, and the model's ``linear_mode`` where it does not: both are
    modes the model's engine uses (llama.cpp's F16 files run at ``fp16_acc16`` on its CUDA backend and
    accumulate in FP32, ``fp16``, elsewhere), so neither is a rate borrowed for another mode. A row that
    publishes neither leaves the compute roofline unavailable, as for any missing mode.
    """
    if linear_mode is not None:
        return linear_mode, f"{linear_mode}: given for this run"
    preferred = shape.linear_mode_if_published
    if preferred is None or preferred == shape.linear_mode:
        return shape.linear_mode, f"{shape.linear_mode}: the model's linear mode"
    if hardware.compute_rate(preferred) is not None:
        return preferred, (
            f"{preferred}: the model's engine uses it where the hardware publishes it "
            f"(else {shape.linear_mode})"
        )
    return shape.linear_mode, (
        f"{shape.linear_mode}: the hardware publishes no {preferred} rate, the mode the model's engine "
        f"uses where one is published"
    )


def mode_rates(
    hardware: Hardware, shape: PrefillShape, linear_mode: str | None = None, attention_mode: str | None = None
) -> ModeRates:
    """Look up F_hw for the adapter's (or the given) linear and attention modes, with the fallback of
    :func:`charge_mode` where the row lacks one: the one lookup that prefill and decode share. Each
    (shape, modes) is looked up once per hardware record (``Hardware.lookups``)."""
    return hardware.looked_up(
        ("mode_rates", shape, linear_mode, attention_mode),
        lambda: _mode_rates(hardware, shape, linear_mode, attention_mode),
    )


def _mode_rates(
    hardware: Hardware, shape: PrefillShape, linear_mode: str | None, attention_mode: str | None
) -> ModeRates:
    linear, choice = linear_mode_for(hardware, shape, linear_mode)
    if linear_mode is None and shape.linear_params_by_mode:
        return _split_rates(hardware, shape, attention_mode)
    attention = attention_mode or shape.attention_mode
    needs_linear = shape.linear_active_params > 0
    needs_attention = (
        shape.attention_global_flops_per_pair > 0
        or (shape.attention_local_flops_per_pair > 0 and shape.attention_window_tokens > 0)
        or shape.attention_state_flops_per_token > 0
    )
    linear_charge = charge_mode(hardware, linear)
    attention_charge = charge_mode(hardware, attention)
    unpublished: list[str] = []
    for needed, mode in ((needs_linear, linear), (needs_attention, attention)):
        if needed and hardware.compute_rate(mode) is None and mode not in unpublished:
            unpublished.append(mode)
    return ModeRates(
        linear_mode=linear,
        attention_mode=attention,
        linear_flop_per_s=linear_charge.flop_per_s,
        attention_flop_per_s=attention_charge.flop_per_s,
        needs_linear=needs_linear,
        needs_attention=needs_attention,
        linear_mode_choice=choice,
        linear_mode_charged=linear_charge.mode,
        attention_mode_charged=attention_charge.mode,
        linear_charge_reason=linear_charge.reason,
        attention_charge_reason=attention_charge.reason,
        missing_modes=tuple(unpublished),
    )


def _split_rates(hardware: Hardware, shape: PrefillShape, attention_mode: str | None) -> ModeRates:
    """The rates where the linear math mixes modes: each part charged at its own mode's rate (or that
    mode's fallback), F_linear = P / sum(P_i / F_i); unavailable when any part has no rate."""
    whole = _mode_rates(hardware, replace(shape, linear_params_by_mode=()), shape.linear_mode, attention_mode)
    # The part in the model's linear mode runs where its engine runs that mode (``linear_mode_for``:
    # llama.cpp's F16 tensors at fp16_acc16 where the row publishes it).
    engine, _ = linear_mode_for(hardware, shape, None)
    charges = [
        charge_mode(hardware, engine if mode == shape.linear_mode else mode)
        for mode, _ in shape.linear_params_by_mode
    ]
    parts = []
    inverse: float | None = 0.0
    for (mode, params), charge in zip(shape.linear_params_by_mode, charges, strict=True):
        parts.append((mode, params, charge.mode, charge.flop_per_s))
        if inverse is not None:
            inverse = None if charge.flop_per_s is None else inverse + params / charge.flop_per_s
    total = sum(params for _, params in shape.linear_params_by_mode)
    reasons = [
        f"{mode}: {charge.reason}"
        for (mode, _), charge in zip(shape.linear_params_by_mode, charges, strict=True)
        if charge.reason
    ]
    unpublished: list[str] = []  # the linear mode, each part's, then attention's (calc.js keeps this order)
    order = [shape.linear_mode, *(mode for mode, _ in shape.linear_params_by_mode)]
    for needed, mode in (
        *((whole.needs_linear, m) for m in order),
        (whole.needs_attention, whole.attention_mode),
    ):
        if needed and hardware.compute_rate(mode) is None and mode not in unpublished:
            unpublished.append(mode)
    modes = " + ".join(f"{mode} ({params / total:.0%})" for mode, params in shape.linear_params_by_mode)
    return replace(
        whole,
        linear_mode=shape.linear_mode,
        linear_flop_per_s=None if inverse is None or inverse <= 0 else total / inverse,
        linear_mode_choice=f"split by mode: {modes} of P_lin,active, each at its own rate",
        linear_mode_charged=None
        if inverse is None
        else " + ".join(dict.fromkeys(str(part[2]) for part in parts)),
        linear_charge_reason="; ".join(reasons),
        missing_modes=tuple(unpublished),
        linear_split=tuple(parts),
    )


def _said(mode: str | None) -> str:
    """An arithmetic mode as people write it (FP4, BF16, FP16 with FP16 accumulate)."""
    return "none" if mode is None else format_words(mode)
