"""What a dispatcher that plans for profit resolves at the start of a run: the PUE table,
the prices and the ambient temperature, from its user-facing settings.

One resolution for every planning dispatcher (the ``offline-*`` dispatchers and the hybrid
pipeline with a search planner), so that the same settings mean the same profit model:

- ``cooling``: ``air`` | ``hybrid`` | a CSV table, with an optional ``:scaled`` suffix that
  fits the table's last breakpoint to ``max_it_power()`` (the caller's rule for the
  machine's highest IT power);
- ``prices``: ``cheap`` | ``expensive`` | ``K1:K2`` (a colon, as dispatcher specs split on
  commas; ``K1,K2`` is accepted too);
- ``temperature``: ``None`` — the run's scenario ``temperature`` rows (announced to
  dispatchers); ``summer`` | ``winter`` — the seeded season profile of
  :mod:`dispatchlab.engine.temperature` over ``days`` days (one seed's profiles share their
  first days, so a longer profile extends a shorter one); anything else — a scenario
  argument (file or ``gen:temperature:...``) with ``temperature`` rows;
- the energy price: the run's scenario ``energy_price`` rows (announced,
  :mod:`dispatchlab.energy.tariff`), when it has any, replace ``K2`` over time — the planner
  then prices each stretch of energy at the price in force, as the run's profit accounting
  does.

Every bad setting is a one-line :class:`ConfigError` naming the field and the dispatcher.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from dispatchlab.dispatchers.offline_plan.planner.objective import ProfitModel
from dispatchlab.energy.cooling import PueTable
from dispatchlab.energy.profit import Prices
from dispatchlab.errors import ConfigError, DispatchlabError

#: ``temperature`` values naming a seeded season profile.
SEASONS = ("summer", "winter")


@dataclass(frozen=True)
class ProfitInputs:
    """The resolved table, prices and temperature step series (°C from ``temp_times[k]``),
    and the scenario's energy price steps (none: the constant K2 of ``prices``)."""

    table: PueTable
    prices: Prices
    temp_times: tuple[int, ...]
    temp_values: tuple[float, ...]
    price_times: tuple[int, ...] = ()
    price_values: tuple[float, ...] = ()

    def model(self, start: int, end: int) -> ProfitModel:
        """The profit model of the window ``[start, end)``."""
        return ProfitModel(self.table, self.temp_times, self.temp_values, start, end,
                           self.prices, price_times=self.price_times,
                           price_values=self.price_values)


def resolve_profit_inputs(who: str, *, cooling: str, prices: str, temperature: str | None,
                          scenario: object, days: int, seed: int,
                          max_it_power: Callable[[], float]) -> ProfitInputs:
    """The profit model's inputs for dispatcher ``who`` (module doc); ``scenario`` is the
    run's announced scenario (``view.scenario``), ``days`` the length of a season
    profile, ``seed`` its seed."""
    from dispatchlab.energy.cooling import pue_table
    from dispatchlab.energy.profit import parse_prices

    name, _, suffix = cooling.partition(":")
    if suffix not in ("", "scaled"):
        raise ConfigError(f"{who}: cooling '{cooling}': the only suffix is ':scaled'",
                          field="cooling")
    try:
        table = pue_table(name)
    except DispatchlabError:
        raise
    except ValueError as exc:
        raise ConfigError(f"{who}: {exc}", field="cooling") from None
    if suffix == "scaled":
        table = table.scaled(max_it_power())
    try:
        price = parse_prices(prices.replace(":", ","))
    except ValueError as exc:
        raise ConfigError(f"{who}: {exc}", field="prices") from None
    from dispatchlab.energy.tariff import price_steps

    times, values = _temperature(who, temperature, scenario, days, seed)
    pt, pv = price_steps(scenario)
    return ProfitInputs(table, price, times, values, tuple(int(t) for t in pt),
                        tuple(float(v) for v in pv))


def _temperature(who: str, temperature: str | None, scenario: object, days: int, seed: int
                 ) -> tuple[tuple[int, ...], tuple[float, ...]]:
    from dispatchlab.engine.temperature import season_profile, temperature_steps

    if temperature is None:
        times, values = temperature_steps(scenario)
        if not len(times):
            raise ConfigError(
                f"{who}: no ambient temperature: put temperature rows in the run's "
                "scenario, or give temperature=summer|winter|FILE", field="temperature")
    elif temperature in SEASONS:
        times, values = season_profile(temperature, days=max(days, 1), seed=seed)
    else:
        from dispatchlab.engine.scenario_gen import resolve_scenario

        try:
            times, values = temperature_steps(resolve_scenario(temperature))
        except DispatchlabError:
            raise
        except ValueError as exc:
            raise ConfigError(f"{who}: temperature '{temperature}': {exc}",
                              field="temperature") from None
        if not len(times):
            raise ConfigError(f"{who}: {temperature}: no temperature rows",
                              field="temperature")
    return tuple(int(t) for t in times), tuple(float(v) for v in values)
