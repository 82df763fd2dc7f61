"""What a system costs per hour, and where that number came from (the edge: catalog and flags).

Order: ``--usd-per-hour`` overrides everything; otherwise ``pricing`` picks the basis. ``auto`` takes
the row's on-demand rental price when it has one, else the owned cost from its purchase price;
``rental`` and ``owned`` insist on one. Owned cost = purchase / (years * 8,766 h * utilization)
+ board power * USD per kWh, with the defaults stated in the assumptions. No price is ever invented:
a row without the needed figure is an error that says which flag to give.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from servebound.catalog.hardware import get_hardware
from servebound.core.advice import Note, Setting
from servebound.core.cost import (
    DEFAULT_AMORTIZATION_YEARS,
    DEFAULT_USD_PER_KWH,
    DEFAULT_UTILIZATION,
    OwnedCost,
)
from servebound.core.hardware import Hardware
from servebound.errors import InputError
from servebound.inputs.declare import check_record, record_inputs
from servebound.inputs.records import MAX_USD_PER_HOUR, MIN_USD_PER_HOUR
from servebound.inputs.resolve import _looks_like_file, hardware_ref
from servebound.inputs.workload import given

if TYPE_CHECKING:
    from servebound.catalog.hardware import DevicePrice


class Pricing(StrEnum):
    AUTO = "auto"
    RENTAL = "rental"
    OWNED = "owned"


#: The shortest amortization (about four days) and the lowest utilization (0.1% of hours) a price is
#: computed for: below them the hourly cost runs to absurd numbers (1e-300 years gave 1.8e299 USD/h).
MIN_AMORTIZATION_YEARS = 0.01
MIN_UTILIZATION = 0.001


@dataclass(frozen=True)
class OwnedInputs:
    """The owned-hardware inputs (``--purchase-usd`` .. ``--usd-per-kwh``), each within what a real
    purchase could be (checked when built, on every surface); None means the row's figure (purchase,
    power) or the stated default."""

    purchase_usd: float | None = given(
        None, "Owned: purchase price of the system [default: catalog].", minimum=1, maximum=1e10, unit="USD"
    )
    amortization_years: float = given(
        DEFAULT_AMORTIZATION_YEARS,
        "Owned: years the purchase is spread over.",
        minimum=MIN_AMORTIZATION_YEARS,
        maximum=100,
        unit="years",
    )
    utilization: float = given(
        DEFAULT_UTILIZATION, "Owned: fraction of hours in use (0-1].", minimum=MIN_UTILIZATION, maximum=1
    )
    power_w: float | None = given(
        None,
        "Owned: power draw of the system in W [default: board power].",
        minimum=0.1,
        maximum=1e8,
        unit="W",
    )
    usd_per_kwh: float = given(
        DEFAULT_USD_PER_KWH, "Owned: electricity price.", minimum=1e-3, maximum=100, unit="USD/kWh"
    )

    def __post_init__(self) -> None:
        check_record(self)

    def given_names(self) -> list[str]:
        """The owned inputs set away from their defaults, as flags."""
        return [
            f"--{spec.name.replace('_', '-')}"
            for spec in record_inputs(OwnedInputs)
            if getattr(self, spec.name) != spec.default
        ]


@dataclass(frozen=True)
class ResolvedPrice:
    """The system's price per hour, the basis it came from, its source, and what it assumed."""

    usd_per_hour: float
    basis: str
    source: str
    assumptions: dict[str, Any]


def _positive(
    field: str, value: float | None, *, at_most: float | None = None, at_least: float | None = None
) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not math.isfinite(value) or value <= 0:
        raise InputError(field, f"must be a positive finite number (got {value!r})")
    if at_most is not None and value > at_most:
        raise InputError(field, f"must be at most {at_most:g} (got {value:g})")
    if at_least is not None and value < at_least:
        raise InputError(field, f"must be at least {at_least:g} (got {value:g}); check the unit")


def _no_conflict(mode: Pricing, usd_per_hour: float | None, owned: OwnedInputs) -> None:
    """Inputs that contradict each other are refused, naming both, instead of one silently winning."""
    owned_given = owned.given_names()
    if usd_per_hour is not None and mode is not Pricing.AUTO:
        raise InputError(
            "usd_per_hour",
            f"--usd-per-hour sets the price itself, so --pricing {mode.value} would be ignored; give one of them",
        )
    if usd_per_hour is not None and owned_given:
        raise InputError(
            "usd_per_hour",
            f"--usd-per-hour sets the price itself, so {', '.join(owned_given)} would be ignored; give one "
            "or the other",
        )
    if mode is Pricing.RENTAL and owned_given:
        raise InputError(
            "pricing",
            f"--pricing rental prices the rental; {', '.join(owned_given)} only price owned hardware: drop "
            "them or give --pricing owned",
        )


def catalog_price(ref: str | Hardware) -> DevicePrice | None:
    """The catalog row's prices behind a hardware reference, or None for a file (a file carries none)."""
    if isinstance(ref, Hardware):
        ref = ref.id
    ref = hardware_ref(ref)
    if _looks_like_file(ref):
        return None
    try:
        return get_hardware(ref).price
    except InputError:
        return None


def resolve_price(
    hardware: Hardware,
    price: DevicePrice | None,
    *,
    usd_per_hour: float | None = None,
    pricing: Pricing | str = Pricing.AUTO,
    owned: OwnedInputs | None = None,
) -> ResolvedPrice:
    """The price per hour of the whole system ``hardware`` (from its catalog ``price`` when given)."""
    owned = owned or OwnedInputs()
    _positive("usd_per_hour", usd_per_hour, at_most=MAX_USD_PER_HOUR, at_least=MIN_USD_PER_HOUR)
    try:
        mode = Pricing(pricing)
    except ValueError:
        raise InputError("pricing", f"use auto, rental or owned (got {pricing!r})") from None
    _no_conflict(mode, usd_per_hour, owned)
    if usd_per_hour is not None:
        return ResolvedPrice(
            usd_per_hour=float(usd_per_hour),
            basis="override",
            source="the price per hour given",
            assumptions={"pricing": "override", "usd_per_hour": float(usd_per_hour)},
        )
    rental = price.rental_usd_per_hour if price is not None else None
    if mode is not Pricing.OWNED and rental is not None:
        assert price is not None
        return ResolvedPrice(
            usd_per_hour=rental,
            basis="rental",
            source=f"on-demand rental, {price.rental_provider}, read {price.rental_date}: {price.rental_source}",
            assumptions={
                "pricing": "rental (on-demand, per device-hour times the device count)",
                "usd_per_hour": rental,
                "rental_provider": price.rental_provider,
                "rental_date": price.rental_date,
            },
        )
    if mode is Pricing.RENTAL:
        raise InputError(
            "pricing",
            Note.of(
                f"hardware '{hardware.id}' has no on-demand rental price in the catalog; give ",
                Setting("usd_per_hour", placeholder="X"),
                " or ",
                Setting("pricing", "owned"),
            ),
        )
    purchase = (
        owned.purchase_usd if owned.purchase_usd is not None else (price.purchase_usd if price else None)
    )
    if purchase is None:
        raise InputError(
            "usd_per_hour",
            Note.of(
                f"hardware '{hardware.id}' has no rental or purchase price"
                f"{' in the catalog' if price is not None else ' (a hardware file carries none)'}; give ",
                Setting("usd_per_hour", placeholder="X"),
                ", or ",
                Setting("purchase_usd", placeholder="P"),
                " for the owned cost",
            ),
        )
    power = owned.power_w if owned.power_w is not None else (price.board_power_w if price else None)
    cost = OwnedCost(
        purchase_usd=purchase,
        amortization_years=owned.amortization_years,
        utilization=owned.utilization,
        power_w=power,
        usd_per_kwh=owned.usd_per_kwh,
    )
    purchase_from = (
        "the purchase price given"
        if owned.purchase_usd is not None
        else (price.purchase_source if price and price.purchase_source else "catalog price_usd")
    )
    power_from = (
        "the board power given"
        if owned.power_w is not None
        else (price.board_power_source if price and price.board_power_w is not None else None)
    )
    return ResolvedPrice(
        usd_per_hour=cost.usd_per_hour,
        basis="owned",
        source=(
            f"owned: purchase {purchase:,.0f} USD ({purchase_from}) over {owned.amortization_years:g} years at "
            f"{owned.utilization:.0%} utilization"
            + (
                f" + {power:,.0f} W ({power_from}) at {owned.usd_per_kwh:g} USD/kWh"
                if power is not None
                else "; power not counted (the row states no board power, and none was given)"
            )
        ),
        assumptions={
            "pricing": "owned: purchase / (amortization_years * 8766 h * utilization) + power_w / 1000 * usd_per_kwh",
            "usd_per_hour": cost.usd_per_hour,
            "purchase_usd": purchase,
            "amortization_years": owned.amortization_years,
            "utilization": owned.utilization,
            "power_w": power,
            "power_counted": cost.power_counted,
            "usd_per_kwh": owned.usd_per_kwh,
            "capital_usd_per_hour": cost.capital_usd_per_hour,
            "power_usd_per_hour": cost.power_usd_per_hour,
        },
    )


def price_json(price: DevicePrice | None) -> dict[str, Any]:
    """A row's [price] figures as JSON (null where unknown), each with its source."""
    keys = (
        "rental_usd_per_hour",
        "rental_provider",
        "rental_date",
        "rental_source",
        "purchase_usd",
        "purchase_source",
        "board_power_w",
        "board_power_source",
    )
    return {key: None if price is None else getattr(price, key) for key in keys}
