"""Profit of a run: ``K1 · core-hours executed − K2 · (IT energy + cooling energy)``.

Bridi's thesis (2018) §6.5.3, Eq. 6.3 (``G·K1 − W·K2 − J·K2``) and §6.8.1 (prices).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Prices:
    """K1: currency per core-hour executed; K2: currency per kWh (IT + cooling)."""

    core_hour: float
    energy_kwh: float

    def __post_init__(self) -> None:
        for name, v in (("core_hour", self.core_hour), ("energy_kwh", self.energy_kwh)):
            if not v >= 0:
                raise ValueError(f"prices: {name} must be >= 0, got {v}")


#: The thesis's prices (§6.8.1): K1 = 0.013 €/core-hour ("cheap") or 0.10 €/core-hour
#: ("expensive"); K2 = 0.13 €/kWh.
THESIS_PRICES = {"cheap": Prices(0.013, 0.13), "expensive": Prices(0.10, 0.13)}
#: Default when none are given: the thesis's cheap core-hours.
DEFAULT_PRICES = THESIS_PRICES["cheap"]


def parse_prices(spec: str) -> Prices:
    """``cheap`` | ``expensive`` | ``K1,K2`` (€/core-hour, €/kWh)."""
    if spec in THESIS_PRICES:
        return THESIS_PRICES[spec]
    parts = spec.split(",")
    try:
        k1, k2 = (float(v) for v in parts)
    except ValueError:
        raise ValueError(f"prices '{spec}': expected 'cheap', 'expensive' or 'K1,K2' "
                         f"(currency per core-hour, per kWh)") from None
    return Prices(k1, k2)
