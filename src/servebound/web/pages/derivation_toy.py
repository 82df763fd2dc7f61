"""The toy setup of /derivation's figures: the text's 32B-class dense model on a 128 GB machine, its
controls (the page's query parameters, with their limits) and the numbers the figures draw (the
side-by-side boards and the sweep over reservations).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

from servebound.core.arith import np  # numpy on first use: a server starts without it
from servebound.core.decode import decode
from servebound.core.hardware import Hardware
from servebound.core.kv import KVShape
from servebound.core.model import ModelAdapter, Weights
from servebound.core.units import GB
from servebound.core.workload import MAX_BATCH, Workload
from servebound.errors import InputError

if TYPE_CHECKING:
    from numpy.typing import NDArray


# --- the toy setup of the figures -----------------------------------------------------------------

#: The figures' toy setup, as the text states it: a 32B-class dense model at 4 bits (18 GB of weights,
#: 6 GB of runtime overhead, 0.26 GB of KV per thousand tokens) on a 128 GB machine at 800 GB/s.
TOY_CAPACITY_GB = 128.0
TOY_BANDWIDTH_GB_PER_S = 800.0
TOY_WEIGHTS_GB = 18.0
TOY_OVERHEAD_GB = 6.0
TOY_KV_GB_PER_1K = 0.26
#: The read context follows the reservation at this fraction, the unread rest capped at 32k (the text's).
TOY_READ_FRACTION = 0.9
TOY_UNREAD_CAP = 32_000
TOY_RESERVED = 4_000


def read_following(reserved: int, fraction: float = TOY_READ_FRACTION, cap: int = TOY_UNREAD_CAP) -> int:
    """L_read following L_alloc: the unread rest is (1 - fraction) of the reservation (rounded half to
    even), at most ``cap``. calc.js's readFollowing is its port (checked under Node)."""
    return reserved - min(round((1.0 - fraction) * reserved), cap)


@dataclass(frozen=True)
class Toy:
    """The figures' controls: the toy machine (capacity, bandwidth), the model (weights, KV per thousand
    tokens), the runtime overhead, the reservation and how the read context follows it (fraction and
    cap of the unread rest), and a batch (None: maximize, the largest batch that fits, which is what the
    memory-power bound takes). The defaults are the text's."""

    reserved: int = TOY_RESERVED
    fraction: float = TOY_READ_FRACTION
    weights_gb: float = TOY_WEIGHTS_GB
    batch: int | None = None
    overhead_gb: float = TOY_OVERHEAD_GB
    kv_gb_per_1k: float = TOY_KV_GB_PER_1K
    unread_cap: int = TOY_UNREAD_CAP
    capacity_gb: float = TOY_CAPACITY_GB
    bandwidth_gb_per_s: float = TOY_BANDWIDTH_GB_PER_S

    @property
    def read(self) -> int:
        return read_following(self.reserved, self.fraction, self.unread_cap)

    @property
    def hardware(self) -> Hardware:
        return Hardware("toy", "toy machine", self.capacity_gb * GB, self.bandwidth_gb_per_s * GB)

    def model(self, *, private_reads: bool = True, weights_gb: float | None = None) -> ModelAdapter:
        kv = KVShape(self.kv_gb_per_1k * GB / 1000.0)
        w = self.weights_gb if weights_gb is None else weights_gb
        weights = Weights(embedding_bytes=0.0, always_on_bytes=w * GB)
        return ModelAdapter("toy", "32B-class dense, 4-bit", weights, kv, kv if private_reads else KVShape())

    def workload(self, batch: int | None = None) -> Workload:
        return Workload(
            overhead_bytes=self.overhead_gb * GB,
            alloc_context_tokens=self.reserved,
            read_context_tokens=self.read,
            floor_tok_s=0.0,
            forced_batch=batch,
        )

    @property
    def margin_gb(self) -> float:
        """The room left for sessions: C - W - O."""
        return self.capacity_gb - self.weights_gb - self.overhead_gb


@dataclass(frozen=True)
class Boards:
    """The side-by-side boards' numbers at one batch: both accountings on the same machine."""

    toy: Toy
    batch: int
    batch_mem: int
    memory_power_tok_s: float | None
    left_tok_s: float
    right_tok_s: float
    left_bytes: float
    right_bytes: float
    kv_alloc_bytes: float
    kv_read_bytes: float


def boards(toy: Toy) -> Boards:
    """Memory-power accounting (weights only) against the KV-aware bound (weights plus every session's
    read cells) at the same batch; in maximize mode the batch is b_mem."""
    full = decode(toy.hardware, toy.model(), toy.workload())
    batch_mem = full.batch_mem or 0
    batch = toy.batch if toy.batch is not None else max(batch_mem, 1)
    right = decode(toy.hardware, toy.model(), toy.workload(batch))
    left = decode(toy.hardware, toy.model(private_reads=False), toy.workload(batch))
    assert right.forced is not None and left.forced is not None
    return Boards(
        toy=toy,
        batch=batch,
        batch_mem=batch_mem,
        memory_power_tok_s=full.memory_power_tok_s,
        left_tok_s=left.forced.aggregate_tok_s,
        right_tok_s=right.forced.aggregate_tok_s,
        left_bytes=toy.weights_gb * GB,
        right_bytes=toy.weights_gb * GB + batch * right.kv_read_bytes,
        kv_alloc_bytes=right.kv_alloc_bytes,
        kv_read_bytes=right.kv_read_bytes,
    )


@dataclass(frozen=True)
class ReservationSweep:
    """Over reservations (maximize mode): sessions that fit, the memory-power bound, and the KV-aware
    aggregate at that same batch with the read context following the reservation. Closed forms over
    numpy arrays: b_mem = floor((C - W - O) / K_alloc(L)), T_mp = R (C - W - O) / (K_alloc W) and
    T(b_mem) = R / (W / b_mem + K_read(L_read)), the toy's dense, full-attention adapter."""

    reserved: NDArray[np.float64]
    read: NDArray[np.float64]
    batch_mem: NDArray[np.float64]
    memory_power_tok_s: NDArray[np.float64]
    kv_aware_tok_s: NDArray[np.float64]


def reservation_sweep(
    toy: Toy, reserved: NDArray[np.float64], weights_gb: NDArray[np.float64] | None = None
) -> ReservationSweep:
    """The sweep over reservations (and, when given, model sizes: the arrays broadcast)."""
    per_token = toy.kv_gb_per_1k * GB / 1000.0
    capacity, bandwidth = toy.capacity_gb * GB, toy.bandwidth_gb_per_s * GB
    weights = (toy.weights_gb if weights_gb is None else weights_gb) * GB
    reserved = np.broadcast_to(reserved, np.broadcast_shapes(np.shape(reserved), np.shape(weights)))
    margin = capacity - weights - toy.overhead_gb * GB
    unread = np.minimum(np.rint((1.0 - toy.fraction) * reserved), toy.unread_cap)
    read = reserved - unread
    kv_alloc = per_token * reserved
    batch_mem = np.minimum(np.floor(np.maximum(margin, 0.0) / kv_alloc), MAX_BATCH)  # the core's cap
    memory_power = bandwidth * margin / (kv_alloc * weights)
    with np.errstate(divide="ignore"):
        kv_aware = np.where(batch_mem >= 1, bandwidth / (weights / batch_mem + per_token * read), np.nan)
    return ReservationSweep(
        reserved, read, batch_mem, np.where(batch_mem >= 1, memory_power, np.nan), kv_aware
    )


# --- the toy's controls (query parameters of /derivation) -----------------------------------------

TOY_LIMITS: dict[str, tuple[float, float]] = {
    "reserved": (1, 1_000_000),
    "fraction": (0.0, 1.0),
    "weights_gb": (0.1, 10_000.0),
    "batch": (1, 100_000),
    "overhead_gb": (0.0, 10_000.0),
    "kv_gb_per_1k": (0.001, 100.0),
    "unread_cap": (0, 1_000_000),
    "capacity_gb": (1.0, 100_000.0),
    "bandwidth_gb_per_s": (1.0, 1_000_000.0),
}
TOY_INTEGERS = ("reserved", "batch", "unread_cap")


def toy_from_query(params: dict[str, str]) -> Toy:
    """The figures' controls from a query; a bad value is an InputError naming the field."""
    toy = Toy()
    changes: dict[str, float | int | None] = {}
    for name, (lo, hi) in TOY_LIMITS.items():
        raw = params.get(name)
        if raw is None or raw == "":
            continue
        try:
            value: float | int = int(raw) if name in TOY_INTEGERS else float(raw)
        except ValueError:
            kind = "a whole number" if name in TOY_INTEGERS else "a number"
            raise InputError(name, f"must be {kind}, got {raw!r}") from None
        if not (lo <= value <= hi):
            raise InputError(name, f"must be between {lo:g} and {hi:g}, got {value:g}")
        changes[name] = value
    if params.get("maximize") in ("1", "true", "on"):
        changes["batch"] = None
    toy = replace(toy, **changes)  # type: ignore[arg-type]
    if toy.overhead_gb >= toy.capacity_gb:
        raise InputError(
            "overhead_gb",
            f"must be below capacity_gb ({toy.capacity_gb:g}), got {toy.overhead_gb:g}: lower the overhead or raise the capacity",
        )
    return toy


def query_number(value: float) -> str:
    text = f"{value:g}"
    return text if float(text) == value else repr(value)


def toy_query(toy: Toy) -> dict[str, str]:
    """The query that draws ``toy``: reserved, fraction and weights always, the rest where they differ
    from the text's defaults (the script writes the same query into the address bar)."""
    default = Toy()
    out = {
        "reserved": str(toy.reserved),
        "fraction": query_number(toy.fraction),
        "weights_gb": query_number(toy.weights_gb),
    }
    if toy.batch is not None:
        out["batch"] = str(toy.batch)
    for name in ("overhead_gb", "kv_gb_per_1k", "unread_cap", "capacity_gb", "bandwidth_gb_per_s"):
        value = getattr(toy, name)
        if value != getattr(default, name):
            out[name] = str(value) if name in TOY_INTEGERS else query_number(value)
    return out


def toy_description(toy: Toy) -> dict[str, object]:
    """What the page's script needs to redraw the figures in place (data-toy on the controls): the
    parameters drawn, the text's defaults, each control's limits. The script computes every number
    with calc.js and draws with the same layout as derivation_figures."""
    return {
        "toy": asdict(toy),
        "defaults": asdict(Toy()),
        "limits": {k: list(v) for k, v in TOY_LIMITS.items()},
        "integers": list(TOY_INTEGERS),
        "controls": [{"name": n, "label": label, "slider": list(span)} for n, label, _, span in TOY_FIELDS],
    }


#: The controls: name, label, the number box's step, and the live slider's span (low, high, step, log
#: scale) that static/derivation.js adds (the number box takes anything within TOY_LIMITS).
TOY_FIELDS: tuple[tuple[str, str, str, tuple[float, float, float, bool]], ...] = (
    ("weights_gb", "weights W (GB)", "0.5", (0.5, 120.0, 0.5, False)),
    ("overhead_gb", "overhead O (GB)", "0.5", (0.0, 60.0, 0.5, False)),
    ("kv_gb_per_1k", "KV per 1k tokens (GB)", "0.01", (0.01, 2.0, 0.01, False)),
    ("reserved", "reserved context L_alloc", "1", (100.0, 1_000_000.0, 0.01, True)),
    ("fraction", "read fraction", "0.05", (0.0, 1.0, 0.05, False)),
    ("unread_cap", "unread cap (tokens)", "1000", (0.0, 200_000.0, 1000.0, False)),
    ("capacity_gb", "capacity C (GB)", "1", (16.0, 1024.0, 8.0, False)),
    ("bandwidth_gb_per_s", "bandwidth R (GB/s)", "10", (50.0, 8000.0, 10.0, False)),
    ("batch", "batch b", "1", (1.0, 500.0, 1.0, False)),
)
