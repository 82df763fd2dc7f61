"""F_hw lookups for the arithmetic modes a model's prefill adapter selects: one lookup for prefill and decode."""

from __future__ import annotations

from dataclasses import dataclass

from servebound.core.hardware import Hardware
from servebound.core.model import PrefillShape


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


def mode_rates(
    hardware: Hardware, shape: PrefillShape, linear_mode: str | None = None, attention_mode: str | None = None
) -> ModeRates:
    """Look up F_hw for the adapter's (or the given) linear and attention modes: the one lookup that
    prefill and decode share."""
    linear = linear_mode or shape.linear_mode
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
    )
