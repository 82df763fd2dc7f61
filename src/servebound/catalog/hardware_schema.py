"""The hardware catalog file's shape (pydantic rows: devices, systems, quoted totals, prices, links, with
their sources) and the structural rules every loader applies (ids, classes, system members).

Ranges and sources are checked by the lint (catalog/lint.py), so that one run reports every problem of
a broken file rather than the first. ``catalog.hardware`` turns validated rows into records.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from servebound.catalog.hardware_names import (
    _NX_FORM,
    _NX_NO_HYPHEN,
    DEVICE_CLASSES,
    MAX_SYSTEM_COUNT,
    SLUG_PATTERN,
    SYSTEM_CLASSES,
)
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
    #: The reasoning behind runtime_overhead_gb (the OS's share, a runtime's context and workspace).
    runtime_overhead_gb: str | None = None
    compute: str | None = None
    fp4: str | None = None
    fp8: str | None = None
    int8: str | None = None
    bf16: str | None = None
    fp16: str | None = None
    fp16_acc16: str | None = None
    fp32: str | None = None


class DerivedRate(_Strict):
    """A rate computed by a rule from another mode of the same row: ``value = ratio x compute[of]``.
    ``rule`` says why the ratio holds (the architecture's ratio, the derivation's own assumption)."""

    of: Mode
    ratio: Finite = Field(gt=0)
    rule: str = Field(min_length=1, max_length=600)


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
    #: O for this row: what the OS (unified memory) or the runtime (a discrete card) keeps.
    runtime_overhead_gb: Finite | None = None
    provenance: Literal["peak", "measured"] = "peak"
    sparse_halved: tuple[Mode, ...] = ()
    derived: tuple[Mode, ...] = ()
    aliases: tuple[str, ...] = ()
    low_confidence: bool = False
    notes: str = ""
    compute_tflops: ComputeRow = ComputeRow()
    sources: SourcesRow = SourcesRow()
    #: The rule behind each derived mode (``[device.derived_from]``): its source is the rule and the
    #: source of the mode it is derived from.
    derived_from: dict[Mode, DerivedRate] = Field(default_factory=dict)
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


# --------------------------------------------------------------------------------------------------
# Structural checks shared by the loader (which raises) and the lint (which reports)
# --------------------------------------------------------------------------------------------------


def structural_problems(catalog: CatalogFile) -> list[str]:
    """Problems that make the catalog unusable: bad or duplicate ids and aliases, unknown classes,
    systems whose member is missing or whose count is out of range."""
    problems: list[str] = []
    owners: dict[str, str] = {}

    def claim(name: str, owner: str, what: str) -> None:
        if not SLUG_PATTERN.match(name):
            problems.append(
                f"{owner}: {what} '{name}' is not a slug (use lowercase letters, digits, hyphens)"
            )
            return
        if name in owners:
            problems.append(f"{owner}: {what} '{name}' is already used by {owners[name]}")
            return
        if _NX_FORM.match(name) and what == "alias":
            problems.append(f"{owner}: alias '{name}' has the NxID form reserved for systems")
        owners[name] = owner

    for device in catalog.device:
        claim(device.id, f"device '{device.id}'", "id")
        if _NX_FORM.match(device.id) or _NX_NO_HYPHEN.match(device.id):
            problems.append(
                f"device '{device.id}': a device id must not start with a count; 'Nx' names systems"
            )
        if device.device_class not in DEVICE_CLASSES:
            problems.append(
                f"device '{device.id}': class '{device.device_class}' is not one of "
                + ", ".join(DEVICE_CLASSES)
            )
    device_ids = {device.id for device in catalog.device}
    for row in catalog.system:
        claim(row.id, f"system '{row.id}'", "id")
        if row.system_class not in SYSTEM_CLASSES:
            problems.append(
                f"system '{row.id}': class '{row.system_class}' is not one of {', '.join(SYSTEM_CLASSES)}"
            )
        if row.member not in device_ids:
            problems.append(f"system '{row.id}': member '{row.member}' is not a device in the catalog")
        if not 1 <= row.count <= MAX_SYSTEM_COUNT:
            problems.append(f"system '{row.id}': count {row.count} is out of range (1 to {MAX_SYSTEM_COUNT})")
        match = _NX_FORM.match(row.id)
        if match and (int(match.group(1)), match.group(2)) != (row.count, row.member):
            problems.append(f"system '{row.id}': an NxID id must be '{row.count}x-{row.member}'")
    for device in catalog.device:
        for alias in device.aliases:
            claim(alias, f"device '{device.id}'", "alias")
    for row in catalog.system:
        for alias in row.aliases:
            claim(alias, f"system '{row.id}'", "alias")
    # Vendor-free aliases are implicit: skip (not report) the ones an explicit name already holds.
    return problems
