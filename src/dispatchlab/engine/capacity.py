"""Variable capacity: how many machines are alive over time (Robert et al., SPEC §7).

A capacity scenario says only HOW MANY machines are alive; it is a list of
``alive_nodes`` changes, and WHICH machines leave or join is the dispatcher's choice through
its ``choose_nodes`` hook (default: the highest indices leave first, the lowest join
first). Two sources:

- **files** (:func:`load_capacity`): a CSV with a ``time,alive`` header (one row per
  change, times in seconds from the workload's origin), or the authors' variation-file
  format — a first line with the starting count, then ``time count`` lines (whitespace
  separated, times relative to the same origin);
- **seeded random walks** (:func:`capacity_walk`), ``gen:capacity-walk:…``:

  - ``model=slides`` (default) — the walk of the slides: every ``period`` the count stays,
    rises or falls by ``step`` (default 1) with equal probability; at a bound of
    ``[mean − range, mean + range]`` it stays or moves inward, each with probability ½;
  - ``model=authors`` — the walk of the authors' generator (``vargen.py`` in
    github.com/lucasperotin/variableResources): every period it moves by
    ``step = range // 4`` up or down with probability ½ each, clipped to the bounds, so it
    stays put only when it would leave them.

  Both start at ``mean`` at time 0 and run until ``until`` (s); rows are written only when
  the count changes.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

from dispatchlab.engine.scenario import Change, Scenario
from dispatchlab.errors import ConfigError
from dispatchlab.keyvalue import parses

WALK_MODELS = ("slides", "authors")


def walk_counts(mean: int, span: int, periods: int, seed: int, model: str = "slides",
                step: int | None = None) -> np.ndarray:
    """Alive count in each of ``periods + 1`` consecutive periods (the first is ``mean``)."""
    if model not in WALK_MODELS:
        raise ConfigError(f"capacity walk: unknown model '{model}' (known: "
                          f"{', '.join(WALK_MODELS)})", field="model")
    if span < 0 or mean - span < 0 or periods < 0:
        raise ConfigError(f"capacity walk: need range ≥ 0, mean − range ≥ 0 and a "
                          f"non-negative length, got mean={mean}, range={span}", field="range")
    if step is None:
        step = 1 if model == "slides" else max(1, span // 4)
    if step <= 0:
        raise ConfigError(f"capacity walk: step must be > 0, got {step}", field="step")
    lo, hi = mean - span, mean + span
    rng = np.random.default_rng(seed)
    out = np.empty(periods + 1, dtype=np.int64)
    value = mean
    out[0] = value
    if model == "slides":
        draws = rng.random(periods)
        for k in range(periods):
            u = draws[k]
            up_ok, down_ok = value + step <= hi, value - step >= lo
            if up_ok and down_ok:  # stay / up / down, one third each
                value += step if u < 1 / 3 else (-step if u < 2 / 3 else 0)
            elif up_ok:            # at the lower bound: stay or up, one half each
                value += step if u < 0.5 else 0
            elif down_ok:          # at the upper bound: stay or down
                value -= step if u < 0.5 else 0
            out[k + 1] = value
    else:
        ups = rng.integers(0, 2, size=periods)
        for k in range(periods):
            value = min(max(value + (step if ups[k] else -step), lo), hi)
            out[k + 1] = value
    return out


def counts_to_scenario(times: np.ndarray | list[int], counts: np.ndarray | list[int],
                       source: str) -> Scenario:
    """``alive_nodes`` rows for a count series (a row only where the count changes)."""
    rows: list[Change] = []
    last: int | None = None
    for t, c in zip(times, counts, strict=True):
        if c != last:
            rows.append(Change(int(t), "alive_nodes", float(c)))
            last = int(c)
    return Scenario(rows, source=source)


def capacity_walk(mean: int, span: int, period: int, until: int, seed: int = 0,
                  model: str = "slides", step: int | None = None) -> Scenario:
    """A seeded capacity random walk (see the module docstring) as a scenario."""
    if period <= 0 or until < 0:
        raise ConfigError(f"capacity walk: need period > 0 and until ≥ 0, got period="
                          f"{period}, until={until}", field="period")
    n = until // period
    counts = walk_counts(mean, span, n, seed, model, step)
    times = np.arange(n + 1, dtype=np.int64) * period
    spec = (f"capacity-walk(model={model}, mean={mean}, range={span}, period={period}, "
            f"until={until}, seed={seed}" + (f", step={step})" if step else ")"))
    return counts_to_scenario(times, counts, spec)


def is_capacity_file(path: str | Path) -> bool:
    """Whether ``path`` holds a capacity file (``time,alive`` CSV or the authors' format)
    rather than a general scenario file."""
    p = Path(path)
    if p.suffix == ".parquet" or not p.is_file():
        return False
    with p.open() as fh:
        for line in fh:
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            head = text.replace(" ", "").lower()
            return head.startswith("time,alive") or parses(float, text)  # authors': the mean
    return False


def load_capacity(path: str | Path) -> Scenario:
    """Read a capacity file: ``time,alive`` CSV or the authors' ``mean`` + ``time count``."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such capacity file", field="scenario")
    times: list[int] = []
    counts: list[int] = []
    csv = False
    first = True
    with p.open() as fh:
        for n, line in enumerate(fh, start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            if first and text.replace(" ", "").lower().startswith("time,alive"):
                csv, first = True, False
                continue
            fields = [f.strip() for f in text.split(",")] if csv else text.split()
            if first and not csv:  # the authors' first line: the starting count
                first = False
                if len(fields) != 1:
                    raise ConfigError(f"{p}: line {n}: expected the starting machine count "
                                      f"alone on the first line, got '{text}'", field="alive")
                times.append(0)
                counts.append(_whole(fields[0], p, n, "alive"))
                continue
            if len(fields) != 2:
                raise ConfigError(f"{p}: line {n}: expected 'time{',' if csv else ' '}count',"
                                  f" got '{text}'", field="alive")
            t = _whole(fields[0], p, n, "time")
            if times and t < times[-1]:
                raise ConfigError(f"{p}: line {n}: time {t} goes back (previous "
                                  f"{times[-1]})", field="time")
            times.append(t)
            counts.append(_whole(fields[1], p, n, "alive"))
    if not times:
        raise ConfigError(f"{p}: empty capacity file", field="scenario")
    return counts_to_scenario(times, counts, str(p))


def _whole(text: str, p: Path, line: int, field: str) -> int:
    try:
        v = float(text)
    except ValueError:
        raise ConfigError(f"{p}: line {line}: {field} '{text}' is not a number",
                          field=field) from None
    if not math.isfinite(v) or v != int(v) or v < 0:
        raise ConfigError(f"{p}: line {line}: {field} {text} is not a whole number ≥ 0",
                          field=field)
    return int(v)


def read_variation_rows(path: str | Path) -> tuple[int, list[tuple[int, int]]]:
    """An authors' variation file as their simulator reads it: the starting count and
    every ``time count`` row in file order, the rows that change nothing included (they
    are events there, and reorder ties). Times are absolute, as in the file."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such variation file", field="scenario")
    initial: int | None = None
    rows: list[tuple[int, int]] = []
    with p.open() as fh:
        for n, line in enumerate(fh, start=1):
            fields = line.split()
            if not fields:
                continue
            if initial is None:
                if len(fields) != 1:
                    raise ConfigError(f"{p}: line {n}: expected the starting machine count "
                                      f"alone on the first line, got '{line.strip()}'",
                                      field="alive")
                initial = _whole(fields[0], p, n, "alive")
                continue
            if len(fields) != 2:
                raise ConfigError(f"{p}: line {n}: expected 'time count', got "
                                  f"'{line.strip()}'", field="alive")
            t = _whole(fields[0], p, n, "time")
            if rows and t < rows[-1][0]:
                raise ConfigError(f"{p}: line {n}: time {t} goes back (previous "
                                  f"{rows[-1][0]})", field="time")
            rows.append((t, _whole(fields[1], p, n, "alive")))
    if initial is None:
        raise ConfigError(f"{p}: empty variation file", field="scenario")
    return initial, rows
