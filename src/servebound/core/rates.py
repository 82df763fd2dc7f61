"""F_hw lookups for the arithmetic modes a model's prefill adapter selects: one lookup for prefill and decode."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from servebound.core.hardware import Hardware
from servebound.core.model import PrefillShape


class BoundBy(StrEnum):
    """Which line of the roofline sets a time: memory or compute (memory on a tie, and memory when
    compute is unavailable). Decode's step at b* and prefill's t_pf,min both report it."""

    MEMORY = "memory"
    COMPUTE = "compute"


def bound_by(memory_s: float, compute_s: float | None) -> BoundBy:
    """The line that sets max(memory_s, compute_s): compute only when strictly slower."""
    return BoundBy.COMPUTE if compute_s is not None and compute_s > memory_s else BoundBy.MEMORY


@dataclass(frozen=True)
class ModeRates:
    """F_linear and F_attention for the modes a prefill adapter selects (None where the row has none).

    ``needs_*`` is False when the path has no work (no linear parameters, no attention terms), so a
    missing rate there does not make compute unavailable. ``missing_modes`` lists the needed modes
    the hardware row does not publish.
    """

    linear_mode: str
    attention_mode: str
    linear_flop_per_s: float | None
    attention_flop_per_s: float | None
    needs_linear: bool
    needs_attention: bool
    linear_mode_choice: str = ""

    @property
    def missing_modes(self) -> tuple[str, ...]:
        missing: list[str] = []
        if self.needs_linear and self.linear_flop_per_s is None:
            missing.append(self.linear_mode)
        if self.needs_attention and self.attention_flop_per_s is None and self.attention_mode not in missing:
            missing.append(self.attention_mode)
        return tuple(missing)

    @property
    def available(self) -> bool:
        return not self.missing_modes


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
    """Look up F_hw for the adapter's (or the given) linear and attention modes: the one lookup that
    prefill and decode share."""
    linear, choice = linear_mode_for(hardware, shape, linear_mode)
    attention = attention_mode or shape.attention_mode
    needs_attention = (
        shape.attention_global_flops_per_pair > 0
        or (shape.attention_local_flops_per_pair > 0 and shape.attention_window_tokens > 0)
        or shape.attention_state_flops_per_token > 0
    )
    return ModeRates(
        linear_mode=linear,
        attention_mode=attention,
        linear_flop_per_s=hardware.compute_rate(linear),
        attention_flop_per_s=hardware.compute_rate(attention),
        needs_linear=shape.linear_active_params > 0,
        needs_attention=needs_attention,
        linear_mode_choice=choice,
    )
