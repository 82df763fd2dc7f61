"""Per-session cache bytes as global + local-window + fixed state (the hybrid adapter's shape)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from servebound.core.arith import Values, as_values, minimum

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

    from servebound.core.arith import Floats

#: Context lengths past 2^53 tokens are not representable exactly and mean "unbounded" here.
CONTEXT_CAP = 2**53


@dataclass(frozen=True)
class KVShape:
    """K(L) = global * L + local * min(L, window) + state, in bytes for one session.

    ``global_bytes_per_token`` covers full-attention layers (or latent caches), ``local_bytes_per_token``
    the sliding-window layers capped at ``window_tokens``, ``state_bytes`` recurrent or linear-attention
    state that does not grow with context.
    """

    global_bytes_per_token: float = 0.0
    local_bytes_per_token: float = 0.0
    window_tokens: int = 0
    state_bytes: float = 0.0

    def bytes_at(self, context_tokens: Values) -> Values:
        """K(L) for a context of ``context_tokens`` tokens (one length, or an array of lengths)."""
        return (
            self.global_bytes_per_token * context_tokens
            + self.local_bytes_per_token * minimum(context_tokens, float(self.window_tokens))
            + self.state_bytes
        )

    def bytes_over(self, context_tokens: ArrayLike) -> Floats:
        """K(L) over an array of contexts (figures): :meth:`bytes_at` on a float64 array."""
        return self.bytes_at(as_values(context_tokens))

    @property
    def grows_with_context(self) -> bool:
        return self.global_bytes_per_token > 0 or (self.local_bytes_per_token > 0 and self.window_tokens > 0)

    def scaled(self, factor: float) -> KVShape:
        """The same cache at another element width: attention entries scale, recurrent state does not."""
        return KVShape(
            global_bytes_per_token=self.global_bytes_per_token * factor,
            local_bytes_per_token=self.local_bytes_per_token * factor,
            window_tokens=self.window_tokens,
            state_bytes=self.state_bytes,
        )

    def max_context_within(self, budget_bytes: float) -> int | None:
        """The largest integer L >= 0 with K(L) <= budget; -1 when even L = 0 exceeds it; None when
        K never exceeds it. The closed form is checked against K itself so rounding cannot overshoot.
        """
        guess = self._inverse(budget_bytes)
        if guess is None or guess < 0:
            return guess
        guess = min(guess, CONTEXT_CAP)
        # The closed form is exact up to rounding: a few steps either way settle it.
        for _ in range(4):
            if guess > 0 and self.bytes_at(guess) > budget_bytes:
                guess -= 1
            elif guess < CONTEXT_CAP and self.bytes_at(guess + 1) <= budget_bytes:
                guess += 1
            else:
                break
        else:
            # Rounding moved K far from the closed form (a per-token size lost next to the state):
            # bisect on [0, CONTEXT_CAP] with K itself, which is monotone.
            if self.bytes_at(CONTEXT_CAP) <= budget_bytes:
                return None
            lo, hi = 0, CONTEXT_CAP
            while hi - lo > 1:
                mid = (lo + hi) // 2
                if self.bytes_at(mid) <= budget_bytes:
                    lo = mid
                else:
                    hi = mid
            return lo
        return None if guess >= CONTEXT_CAP else guess

    def _inverse(self, budget_bytes: float) -> int | None:
        """A ratio past CONTEXT_CAP (a vanishing per-token size) counts as unbounded.

        K is piecewise linear and non-decreasing, so the inverse is closed form: first inside the
        window (slope global + local), then beyond it (slope global).
        """
        if budget_bytes < self.state_bytes:
            return -1
        room = budget_bytes - self.state_bytes
        steep = self.global_bytes_per_token + self.local_bytes_per_token
        if self.window_tokens > 0 and steep > 0:
            at_window = steep * self.window_tokens
            if room < at_window:
                return _floor_capped(room / steep)
            room -= at_window
            if self.global_bytes_per_token <= 0:
                return None
            return self.window_tokens + _floor_capped(room / self.global_bytes_per_token)
        if self.global_bytes_per_token <= 0:
            return None
        return _floor_capped(room / self.global_bytes_per_token)


def _floor_capped(ratio: float) -> int:
    return CONTEXT_CAP if not ratio < CONTEXT_CAP else math.floor(ratio)
