"""The hardware catalog file's shape (pydantic): device, system and quoted rows with their sources.

Ranges and sources are checked by the lint (catalog/lint.py), so that one run reports every problem of
a broken file rather than the first. ``catalog.hardware`` turns validated rows into records.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from servebound.core.hardware import ArithmeticMode

Finite = Annotated[float, Field(allow_inf_nan=False)]
Mode = ArithmeticMode


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ComputeRow(_Strict):
    """Dense peak rates in TFLOPS (TOPS for int8), keyed exactly as the contract's compute_tflops."""

    fp4: Finite | None = None
    fp8: Finite | None = None
    int8: Finite | None = None
    bf16: Finite | None = None
    fp16: Finite | None = None
    fp16_acc16: Finite | None = None
    fp32: Finite | None = None

    def present(self) -> dict[str, float]:
        return {mode: value for mode, value in self.model_dump().items() if value is not None}


class SourcesRow(_Strict):
    """Where each number came from. ``compute`` backs every compute mode without its own key."""

    memory_gb: str | None = None
    bandwidth_gb_per_s: str | None = None
    price_usd: str | None = None
    compute: str | None = None
    fp4: str | None = None
    fp8: str | None = None
    int8: str | None = None
    bf16: str | None = None
    fp16: str | None = None
    fp16_acc16: str | None = None
    fp32: str | None = None


class PriceRow(_Strict):
    """A device's ``[price]`` table: on-demand rental in USD per device-hour (with the provider, the
    date the price was read and its source) and board power in W (with its source). The purchase
    price is the row's ``price_usd``."""

    rental_usd_per_hour: Finite | None = None
    rental_provider: str | None = Field(default=None, max_length=120)
    rental_date: str | None = Field(default=None, max_length=40)
    rental_source: str | None = Field(default=None, max_length=600)
    board_power_w: Finite | None = None
    board_power_source: str | None = Field(default=None, max_length=600)


class DeviceRow(_Strict):
    """One ``[[device]]`` table."""

    id: str = Field(min_length=1, max_length=120)
    name: str = Field(min_length=1, max_length=200)
    vendor: str = Field(min_length=1, max_length=60)
    device_class: str = Field(alias="class")
    year: int | None = None
    memory_gb: Finite
    memory_type: str = Field(min_length=1, max_length=80)
    memory_label_gb: Finite | None = None
    bandwidth_gb_per_s: Finite
    price_usd: Finite | None = None
    provenance: Literal["peak", "measured"] = "peak"
    sparse_halved: tuple[Mode, ...] = ()
    derived: tuple[Mode, ...] = ()
    aliases: tuple[str, ...] = ()
    low_confidence: bool = False
    notes: str = ""
    compute_tflops: ComputeRow = ComputeRow()
    sources: SourcesRow = SourcesRow()
    price: PriceRow | None = None


class QuotedRow(_Strict):
    """A vendor's own aggregate for a system, kept as a cross-check against N x the member."""

    memory_gb: Finite | None = None
    bandwidth_gb_per_s: Finite | None = None
    compute_tflops: ComputeRow = ComputeRow()
    sparse_halved: tuple[Mode, ...] = ()
    source: str | None = None


class InterconnectSourcesRow(_Strict):
    scale_up_gb_per_s: str | None = None
    scale_out_gb_per_s: str | None = None


class InterconnectRow(_Strict):
    """``[system.interconnect]``: the scale-up domain (devices per domain, per-device GB/s each way to a
    device of its domain, the link) and the per-device GB/s each way to a device of another domain."""

    scale_up_devices: int
    scale_up_gb_per_s: Finite
    scale_up_link: str = Field(min_length=1, max_length=200)
    scale_out_gb_per_s: Finite
    scale_out_link: str = Field(min_length=1, max_length=200)
    sources: InterconnectSourcesRow = InterconnectSourcesRow()


class SystemRow(_Strict):
    """One ``[[system]]`` table: ``count`` identical ``member`` devices."""

    id: str = Field(min_length=1, max_length=120)
    name: str = Field(min_length=1, max_length=200)
    system_class: str = Field(alias="class", default="multi-device system")
    member: str = Field(min_length=1)
    count: int
    year: int | None = None
    aliases: tuple[str, ...] = ()
    notes: str = ""
    quoted: QuotedRow | None = None
    interconnect: InterconnectRow | None = None


class CatalogFile(_Strict):
    device: tuple[DeviceRow, ...] = ()
    system: tuple[SystemRow, ...] = ()
