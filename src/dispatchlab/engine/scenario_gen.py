"""Seeded scenario generators, and resolution of a scenario argument.

``gen:NAME:key=value,...`` names a generator (``dispatchlab simulate --scenario``); a path
names a scenario file. Generators:

- ``constant`` — ``what``, ``value`` [, ``target``]: one change at time 0.
- ``day-night`` — ``what`` (default ``power_cap``), ``day``, ``night`` values, ``day_start``
  / ``day_end`` hours (default 8 and 18, counted from time 0 = midnight), ``days``
  (default 7) [, ``target``].
- ``random-walk`` — ``what`` (default ``alive_nodes``), ``mean``, ``range``, ``step``
  (default 1), ``period`` (s), ``until`` (s), ``seed``: every period the value stays,
  rises or falls by ``step`` with equal probability, bounded in ``[mean − range,
  mean + range]``, starting at ``mean``.
- ``curve`` — ``file`` (CSV with ``time,value`` columns: a power or price curve),
  ``what`` (default ``desired_utilization``), ``low`` / ``high`` (default 0.2 / 1),
  ``invert`` (0/1, default 0) [, ``target``]: the curve mapped linearly onto
  ``[low, high]`` (its minimum to ``low``, its maximum to ``high``; ``invert=1`` maps the
  maximum to ``low``, as for a price: expensive hours get the lowest share).
- ``capacity-walk`` — ``mean``, ``range``, ``period`` (s), ``until`` (s), ``seed``,
  ``model`` (``slides`` or ``authors``) [, ``step``]: the variable-capacity walks of
  Robert et al. (:mod:`dispatchlab.engine.capacity`), as ``alive_nodes`` rows.
- ``temperature`` — ``season`` (``summer`` / ``winter``), ``days`` (default 30), ``step``
  (s, default 900), ``seed``, ``sd`` (°C of day-to-day noise, default 1.5) [, ``tmin``,
  ``tmax``, ``min_hour``, ``max_hour``]: ambient temperature day profiles
  (:func:`dispatchlab.engine.temperature.season_profile`), as ``temperature`` rows.

A path names a scenario file, or a capacity file (``time,alive`` CSV or the authors'
variation format, :func:`dispatchlab.engine.capacity.load_capacity`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from dispatchlab.engine.capacity import capacity_walk, is_capacity_file, load_capacity
from dispatchlab.engine.scenario import Change, Scenario, load_scenario
from dispatchlab.errors import ConfigError
from dispatchlab.keyvalue import split_key_values
from dispatchlab.traces.resolve import resolve_source

ScenarioArg = Scenario | str | Path | Sequence["Scenario | str | Path"] | None


def _params(spec: str, text: str) -> dict[str, str]:
    return split_key_values(text, field="scenario", context=f"scenario '{spec}': ")


#: Most rows a generator may make (a period of 1 s over 1e10 s asked for 74.5 GiB).
MAX_ROWS = 2_000_000


def _num(p: dict[str, str], key: str, spec: str, default: float | None = None) -> float:
    """A finite number (``nan``/``inf`` are refused: they used to crash later)."""
    if key not in p:
        if default is None:
            raise ConfigError(f"scenario '{spec}': '{key}' is required", field=key)
        return default
    text = p.pop(key)
    try:
        value = float(text)
    except ValueError:
        raise ConfigError(f"scenario '{spec}': {key} must be a number", field=key) from None
    if not math.isfinite(value):
        raise ConfigError(f"scenario '{spec}': {key} must be a finite number, got {text}",
                          field=key)
    return value


def _int(p: dict[str, str], key: str, spec: str, default: int | None = None) -> int:
    """A whole number (``0.5`` is refused, not rounded)."""
    value = _num(p, key, spec, None if default is None else float(default))
    if value != int(value):
        raise ConfigError(f"scenario '{spec}': {key} must be a whole number, got {value:g}",
                          field=key)
    return int(value)


def _rows(count: float, spec: str, field: str) -> None:
    """Refuse a generator that would make more than :data:`MAX_ROWS` rows."""
    if count > MAX_ROWS:
        raise ConfigError(f"scenario '{spec}': {count:,.0f} rows, more than the "
                          f"{MAX_ROWS:,} a generated scenario may have (raise the period or "
                          "lower until/days)", field=field)


def constant(p: dict[str, str], spec: str) -> Scenario:
    """One change at time 0."""
    what = p.pop("what", "power_cap")
    target = p.pop("target", "")
    value = _num(p, "value", spec)
    return Scenario([Change(0, what, value, target)], source=spec)


def day_night(p: dict[str, str], spec: str) -> Scenario:
    """A value for the day hours and another for the night, repeated for ``days`` days."""
    what = p.pop("what", "power_cap")
    target = p.pop("target", "")
    day, night = _num(p, "day", spec), _num(p, "night", spec)
    h0, h1 = _num(p, "day_start", spec, 8), _num(p, "day_end", spec, 18)
    days = _int(p, "days", spec, 7)
    if not 0 <= h0 < h1 <= 24 or days < 1:
        raise ConfigError(f"scenario '{spec}': need 0 ≤ day_start < day_end ≤ 24, days ≥ 1",
                          field="day_start")
    _rows(2 * days, spec, "days")
    rows = [Change(0, what, night, target)]
    for d in range(days):
        base = d * 86400
        rows.append(Change(base + int(h0 * 3600), what, day, target))
        rows.append(Change(base + int(h1 * 3600), what, night, target))
    return Scenario(rows, source=spec)


def random_walk(p: dict[str, str], spec: str) -> Scenario:
    """Bounded lazy random walk: stay / up / down by ``step`` with equal probability."""
    what = p.pop("what", "alive_nodes")
    target = p.pop("target", "")
    mean, span = _num(p, "mean", spec), _num(p, "range", spec)
    step = _num(p, "step", spec, 1)
    period, until = _int(p, "period", spec), _int(p, "until", spec)
    seed = _int(p, "seed", spec, 0)
    if period <= 0 or until < 0 or span < 0 or step <= 0:
        raise ConfigError(f"scenario '{spec}': need period > 0, until ≥ 0, range ≥ 0, "
                          "step > 0", field="period")
    _rows(until // period, spec, "until")
    if what == "alive_nodes" and mean - span < 0:
        raise ConfigError(f"scenario '{spec}': mean − range is below 0 alive nodes",
                          field="range")
    rng = np.random.default_rng(seed)
    n = until // period
    moves = rng.integers(-1, 2, size=n) * step
    value = mean
    rows = [Change(0, what, value, target)]
    for k in range(n):
        nxt = min(max(value + float(moves[k]), mean - span), mean + span)
        if nxt != value:
            rows.append(Change((k + 1) * period, what, nxt, target))
            value = nxt
    return Scenario(rows, source=spec)


def curve(p: dict[str, str], spec: str) -> Scenario:
    """A power or price curve from a CSV file, rescaled onto ``[low, high]``."""
    import pandas as pd

    what = p.pop("what", "desired_utilization")
    target = p.pop("target", "")
    path = p.pop("file", "")
    low, high = _num(p, "low", spec, 0.2), _num(p, "high", spec, 1.0)
    invert = _num(p, "invert", spec, 0.0)
    if not path:
        raise ConfigError(f"scenario '{spec}': 'file' is required", field="file")
    if invert not in (0.0, 1.0):
        raise ConfigError(f"scenario '{spec}': invert must be 0 or 1", field="invert")
    try:
        frame = pd.read_csv(path, comment="#", skipinitialspace=True)
    except (OSError, ValueError) as exc:
        raise ConfigError(f"{path}: cannot read the curve: {exc}", field="file") from None
    if not {"time", "value"} <= set(frame.columns) or frame.empty:
        raise ConfigError(f"{path}: expected a header with time,value and at least one row",
                          field="file")
    times = pd.to_numeric(frame["time"], errors="coerce").to_numpy()
    values = pd.to_numeric(frame["value"], errors="coerce").to_numpy()
    bad = np.flatnonzero(~np.isfinite(times) | ~np.isfinite(values) | (times < 0)
                         | (times != np.round(times)))
    if len(bad):
        raise ConfigError(f"{path}: line {int(bad[0]) + 2}: time must be a whole number of "
                          "seconds ≥ 0 and value a finite number", field="file")
    lo, hi = float(values.min()), float(values.max())
    scaled = np.zeros_like(values) if hi == lo else (values - lo) / (hi - lo)
    if invert:
        scaled = 1.0 - scaled
    shares = low + (high - low) * scaled
    return Scenario([Change(int(t), what, float(v), target) for t, v in zip(times, shares,
                                                                            strict=True)],
                    source=spec)
def capacity_walk_gen(p: dict[str, str], spec: str) -> Scenario:
    """Robert et al.'s capacity random walks (``model=slides|authors``)."""
    model = p.pop("model", "slides")
    step = _int(p, "step", spec, 0) or None
    mean, span = _int(p, "mean", spec), _int(p, "range", spec)
    period, until = _int(p, "period", spec), _int(p, "until", spec)
    if period > 0:
        _rows(until // period, spec, "until")
    return capacity_walk(mean, span, period, until, _int(p, "seed", spec, 0), model, step)


def temperature_gen(p: dict[str, str], spec: str) -> Scenario:
    """Summer / winter ambient temperature day profiles (seeded)."""
    from dispatchlab.engine.temperature import season_profile

    season = p.pop("season", "summer")
    opt = {k: _num(p, k, spec) for k in ("tmin", "tmax", "min_hour", "max_hour") if k in p}
    try:
        days, step = _int(p, "days", spec, 30), _int(p, "step", spec, 900)
        if step > 0:
            _rows(days * 86400 / step, spec, "days")
        times, temps = season_profile(
            season, days=days, step=step, seed=_int(p, "seed", spec, 0),
            sd=_num(p, "sd", spec, 1.5), **opt)
    except ValueError as exc:
        raise ConfigError(f"scenario '{spec}': {exc}", field="temperature") from None
    return Scenario([Change(int(t), "temperature", float(v)) for t, v in zip(times, temps,
                                                                             strict=True)],
                    source=spec)


GENERATORS: dict[str, Callable[[dict[str, str], str], Scenario]] = {
    "constant": constant,
    "day-night": day_night,
    "random-walk": random_walk,
    "curve": curve,
    "capacity-walk": capacity_walk_gen,
    "temperature": temperature_gen,
}


def generate_scenario(spec: str) -> Scenario:
    """A scenario from ``gen:NAME:key=value,...``."""
    _, _, rest = spec.partition(":")
    name, _, text = rest.partition(":")
    gen = GENERATORS.get(name)
    if gen is None:
        raise ConfigError(f"unknown scenario generator '{name}' (known: "
                          f"{', '.join(GENERATORS)})", field="scenario")
    p = _params(spec, text)
    out = gen(p, spec)
    if p:
        raise ConfigError(f"scenario '{spec}': unknown parameter(s) {', '.join(sorted(p))}",
                          field="scenario")
    return out


def _require_text(p: Path) -> None:
    """A scenario or capacity file must be UTF-8 text (a gzipped one used to end in a
    ``UnicodeDecodeError``); Parquet files are binary by design."""
    if p.is_dir():
        raise ConfigError(f"{p}: is a folder, not a scenario file", field="scenario")
    if p.suffix == ".parquet" or not p.is_file():
        return
    try:
        p.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{p}: not a UTF-8 text file (byte {exc.start}; compressed?): "
                          "expected a time,what,value[,target] CSV, a capacity file or "
                          "Parquet", field="scenario") from None


def resolve_scenario(arg: ScenarioArg) -> Scenario | None:
    """A scenario from an object, a file path, a ``gen:`` spec, or a list of them (merged)."""
    if arg is None:
        return None
    if isinstance(arg, Scenario):
        return arg
    if isinstance(arg, (str, Path)):
        text = str(arg)
        if text.startswith("gen:"):
            return generate_scenario(text)
        text = str(resolve_source(text))
        _require_text(Path(text))
        return load_capacity(text) if is_capacity_file(text) else load_scenario(text)
    out: Scenario | None = None
    for part in arg:
        one = resolve_scenario(part)
        if one is not None:
            out = one if out is None else out.merged(one)
    return out
