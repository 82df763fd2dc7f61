"""Decode traffic per emitted token: q(b), its compute-roofed q_eff(b), and the private cache reads.

The one place decode's bytes per token are computed: decode, its context range and the cost floor read
it (``servebound.core.decode`` re-exports both names).
"""

from __future__ import annotations

from servebound.core.arith import Values, as_values, maximum
from servebound.core.model import ModelAdapter
from servebound.core.workload import Speculation, Workload


def private_read_bytes(model: ModelAdapter, speculation: Speculation | None, contexts: Values) -> Values:
    """The cache bytes one session reads per step at read context L (one or an array): K_read(L), plus
    gamma K_read,draft(L) with a draft. No batch shares them (decode, its context range and the cost
    floor all read this)."""
    private = model.kv_read.bytes_at(contexts)
    if speculation is not None:
        private = private + speculation.draft_tokens * speculation.draft.kv_read.bytes_at(contexts)
    return private


class _Traffic:
    """q(b) and b*q(b) for one setting: the only place per-token decode traffic is computed."""

    def __init__(self, model: ModelAdapter, workload: Workload, compute_bytes: float = 0.0) -> None:
        self.model = model
        #: R c / rho, the compute roof in bytes per emitted token (0.0 without compute: q unchanged).
        self.compute_bytes = compute_bytes
        self.mode = workload.expert_traffic
        self.kv_read = model.kv_read.bytes_at(workload.read_context_tokens)
        self.spec = workload.speculation
        self.private = (
            self.kv_read
            if self.spec is None
            else private_read_bytes(model, self.spec, workload.read_context_tokens)
        )
        #: q(b) at the integer batches asked so far (a decode asks some several times).
        self._at: dict[int, float] = {}

    def per_token(self, batch: Values) -> Values:
        """q_KV(b) = W_batch(b)/b + K_read, or q_spec(b) with a draft (one batch or an array)."""
        if type(batch) is int:
            q = self._at.get(batch)
            if q is None:
                q = self._at[batch] = float(self._per_token(float(batch)))
            return q
        return self._per_token(batch)

    def _per_token(self, batch: Values) -> Values:
        b = as_values(batch)
        spec = self.spec
        if spec is None:
            return self.model.weights.batch(b, self.mode) / b + self.kv_read
        gamma = spec.draft_tokens
        rho = spec.tokens_per_step
        shared = self.model.weights.batch(b * (gamma + 1), self.mode) + gamma * spec.draft.weights.batch(
            b, self.mode
        )
        return shared / (b * rho) + self.private / rho

    def effective(self, batch: Values) -> Values:
        """q_eff(b) = max(q(b), R c / rho): the step's time per emitted token, in bytes at R."""
        q = self.per_token(batch)
        return q if self.compute_bytes <= 0.0 else maximum(q, self.compute_bytes)

    def per_session_scalar(self, batch: int, bandwidth: float) -> float:
        return float(bandwidth / (batch * self.effective(batch)))

    def compute_catches_up(self, batch: int) -> bool:
        """t_cmp(b) >= t_mem(b), i.e. q(b) <= R c / rho (never without compute)."""
        return self.compute_bytes > 0.0 and float(self.per_token(batch)) <= self.compute_bytes
