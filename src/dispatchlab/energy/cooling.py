"""Cooling model: PUE as a piecewise-linear table of IT power, one row per ambient temperature.

A :class:`PueTable` gives the Power Usage Effectiveness ``PUE = (P_it + P_cooling) / P_it``
of the machine for an IT power ``P_it`` (W) and an ambient temperature (°C), as in Bridi's
thesis (2018) §6.5.3 and Table 6.1 (which cites Conficoni et al. [99] for the full table).

Rules (tested in ``tests/energy/test_cooling.py``):

- **power**: linear interpolation between the breakpoints of the temperature's row; below
  the first breakpoint the first value holds (the PUE of a nearly idle machine); above the
  last breakpoint it is an error (``ValueError``) — use :meth:`PueTable.scaled` to fit the
  table to a bigger machine.
- **temperature**: the row of the 5 °C step containing it, i.e. the *nearest lower* row
  (``10 <= T < 15`` uses row 10), as the thesis's segments of "approximately uniform
  temperature (within an interval of 5 degrees)" select ``PUE[s.t]``. Below the first row
  the first row holds (colder air cools no worse); at or above the last row + 5 °C it is an
  error.

Default tables (``air``, ``hybrid``) are **our reconstruction**: the thesis prints two cells
of one table (air cooling, 55 000 and 55 500 W at 10 °C and 15 °C) and reports the
families' levels (air ≈ 1.4 in summer and ≈ 1.1 in winter, hybrid ≈ 1.1 and ≈ 1.003, the
"slope change" PUEs of Table 6.2). We build each row from three figures per temperature:
below the knee ``P_k`` (where the chillers start) the cooling power is ``(b − 1) · P``
(PUE ``b``); above it, it grows with the steeper slope ``a``:
``C(P) = (b − 1) · P_k + a · (P − P_k)``. Rows 10 and 15 °C of ``air`` reproduce Table 6.1
exactly at 55 000 and 55 500 W; the other rows are chosen to give the families' levels.
Rows are tabulated every 500 W (Table 6.1's step) from 0 to 120 kW, which covers the thesis
machine (300 nodes × 32 cores × at most 11.11 W per core = 106.7 kW of job power).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

#: Temperature step of the tables (°C).
TEMPERATURE_STEP = 5.0

#: Breakpoints of the default tables: every 500 W from 0 to 120 kW.
DEFAULT_POWER = tuple(float(p) for p in range(0, 120_001, 500))

#: (temperature °C, PUE below the knee b, knee P_k W, cooling slope above the knee a).
AIR_ROWS: tuple[tuple[float, float, float, float], ...] = (
    (-10, 1.085, 40_000, 0.095),
    (-5, 1.090, 36_000, 0.100),
    (0, 1.095, 32_000, 0.105),
    (5, 1.105, 27_000, 0.115),
    (10, 1.120, 22_500, 0.128),   # Table 6.1: 1.1247272727 at 55 000 W, 1.1247567568 at 55 500
    (15, 1.414, 19_000, 0.416),   # Table 6.1: 1.4153090909 at 55 000 W, 1.4153153153 at 55 500
    (20, 1.425, 16_000, 0.440),
    (25, 1.435, 13_000, 0.455),
    (30, 1.445, 10_000, 0.470),
    (35, 1.460, 7_000, 0.490),
    (40, 1.480, 4_000, 0.520),
)
HYBRID_ROWS: tuple[tuple[float, float, float, float], ...] = (
    (-10, 1.0025, 60_000, 0.004),
    (-5, 1.0025, 60_000, 0.004),
    (0, 1.0025, 60_000, 0.004),
    (5, 1.003, 55_000, 0.005),
    (10, 1.010, 50_000, 0.020),
    (15, 1.030, 45_000, 0.060),
    (20, 1.055, 40_000, 0.100),
    (25, 1.075, 35_000, 0.120),
    (30, 1.090, 30_000, 0.140),
    (35, 1.110, 25_000, 0.160),
    (40, 1.130, 20_000, 0.190),
)


@dataclass(frozen=True)
class PueTable:
    """PUE per ambient temperature (rows, °C, ascending, 5 °C steps) and IT power
    (columns, W breakpoints, ascending); ``pue[i_temp][i_power]``."""

    name: str
    temperatures: tuple[float, ...]
    it_power: tuple[float, ...]
    pue: tuple[tuple[float, ...], ...]

    def __post_init__(self) -> None:
        t, p = np.asarray(self.temperatures, float), np.asarray(self.it_power, float)
        if len(t) < 1 or len(p) < 2:
            raise ValueError(f"PUE table '{self.name}': needs a row and two breakpoints")
        if not np.allclose(np.diff(t), TEMPERATURE_STEP):
            raise ValueError(f"PUE table '{self.name}': temperatures must rise in "
                             f"{TEMPERATURE_STEP:g} °C steps, got {list(self.temperatures)}")
        if (np.diff(p) <= 0).any() or p[0] < 0:
            raise ValueError(f"PUE table '{self.name}': IT power breakpoints must be "
                             f"non-negative and strictly ascending")
        if len(self.pue) != len(t) or any(len(r) != len(p) for r in self.pue):
            raise ValueError(f"PUE table '{self.name}': pue must be {len(t)} rows × "
                             f"{len(p)} columns")
        if not all(math.isfinite(v) and v >= 1.0 for r in self.pue for v in r):
            raise ValueError(f"PUE table '{self.name}': every PUE must be finite and >= 1")

    @property
    def max_power(self) -> float:
        """Last IT power breakpoint (W): the highest power the table covers."""
        return self.it_power[-1]

    def row_of(self, temperature_c: float) -> int:
        """Index of the row for ``temperature_c``: the nearest lower row (first row below
        the table); ``ValueError`` at or above the last row + 5 °C, or if not finite."""
        t0 = self.temperatures[0]
        top = self.temperatures[-1] + TEMPERATURE_STEP
        if not math.isfinite(temperature_c) or temperature_c >= top:
            raise ValueError(f"PUE table '{self.name}': temperature {temperature_c:g} °C "
                             f"outside the table (rows {t0:g}..{self.temperatures[-1]:g} °C)")
        return max(0, math.floor((temperature_c - t0) / TEMPERATURE_STEP))

    def pue_at(self, it_power_w: float, temperature_c: float) -> float:
        """PUE at ``it_power_w`` W and ``temperature_c`` °C (rules in the module doc)."""
        return float(self.pue_many(np.array([it_power_w]), np.array([temperature_c]))[0])

    def pue_many(self, it_power_w: np.ndarray, temperature_c: np.ndarray) -> np.ndarray:
        """Vectorised :meth:`pue_at` over matching arrays."""
        power = np.asarray(it_power_w, dtype=np.float64)
        temp = np.asarray(temperature_c, dtype=np.float64)
        if power.shape != temp.shape:
            raise ValueError("pue_many: power and temperature arrays differ in shape")
        if (power < 0).any() or not np.isfinite(power).all():
            raise ValueError(f"PUE table '{self.name}': IT power must be finite and >= 0")
        over = power > self.max_power * (1 + 1e-12)
        if over.any():
            raise ValueError(f"PUE table '{self.name}': IT power {power[over].max():,.0f} W "
                             f"above the table's last breakpoint {self.max_power:,.0f} W "
                             f"(scale the table to the machine)")
        rows = np.array([self.row_of(float(t)) for t in np.unique(temp)], dtype=np.int64)
        row = rows[np.searchsorted(np.unique(temp), temp)]
        bp = np.asarray(self.it_power)
        table = np.asarray(self.pue)
        p = np.clip(power, bp[0], bp[-1])
        k = np.clip(np.searchsorted(bp, p, side="right") - 1, 0, len(bp) - 2)
        frac = (p - bp[k]) / (bp[k + 1] - bp[k])
        return table[row, k] + frac * (table[row, k + 1] - table[row, k])

    def scaled(self, max_it_power_w: float) -> PueTable:
        """The same table with its breakpoints rescaled so the last one is
        ``max_it_power_w`` (a machine of another size with the same cooling plant ratio)."""
        if not max_it_power_w > 0:
            raise ValueError(f"PUE table '{self.name}': scale to a positive power, "
                             f"got {max_it_power_w}")
        f = max_it_power_w / self.max_power
        return replace(self, name=f"{self.name}@{max_it_power_w:g}W",
                       it_power=tuple(p * f for p in self.it_power))

    def slope_change(self, temperature_c: float) -> tuple[float, float]:
        """(IT power W, PUE) where the PUE of the temperature's row rises most from one
        breakpoint to the next (thesis §6.8.3, "the work-load in which the PUE has the
        higher increment"): the start of that step, where the chillers start."""
        r = self.pue[self.row_of(temperature_c)]
        k = int(np.argmax(np.diff(np.asarray(r))))
        return self.it_power[k], r[k]

    def describe(self) -> dict[str, object]:
        """JSON-ready summary (not the whole table)."""
        return {"name": self.name, "temperatures_c": [self.temperatures[0],
                                                       self.temperatures[-1]],
                "rows": len(self.temperatures), "breakpoints": len(self.it_power),
                "max_it_power_w": self.max_power}

    def to_csv(self, path: str | Path) -> None:
        """Write the table as ``temperature,<W>,<W>,...`` CSV (the format :func:`pue_table`
        reads)."""
        from dispatchlab.atomic_output import atomic_output

        with atomic_output(path) as tmp, open(tmp, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["temperature", *(f"{p:g}" for p in self.it_power)])
            for t, row in zip(self.temperatures, self.pue, strict=True):
                w.writerow([f"{t:g}", *(repr(v) for v in row)])


def knee_table(name: str, rows: tuple[tuple[float, float, float, float], ...],
               power: tuple[float, ...] = DEFAULT_POWER) -> PueTable:
    """A table from per-temperature (T, b, P_k, a) knee figures (module doc)."""
    p = np.asarray(power, dtype=np.float64)
    out = []
    for _, b, pk, a in rows:
        cooling = np.where(p <= pk, (b - 1) * p, (b - 1) * pk + a * (p - pk))
        pue = np.where(p > 0, 1 + np.divide(cooling, p, out=np.zeros_like(p), where=p > 0),
                       b)
        out.append(tuple(float(v) for v in pue))
    return PueTable(name=name, temperatures=tuple(float(r[0]) for r in rows),
                    it_power=tuple(power), pue=tuple(out))


def load_pue_csv(path: str | Path) -> PueTable:
    """Read a ``temperature,<W>,<W>,...`` CSV table (one row per temperature)."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"PUE table file {p}: not found")
    with open(p, newline="") as f:
        lines = [(i, r) for i, r in enumerate(csv.reader(f), 1)
                 if r and not r[0].lstrip().startswith("#")]
    if len(lines) < 2:
        raise ValueError(f"{p}: a header and at least one row are needed")
    (hl, head), body = lines[0], lines[1:]
    if head[0].strip().lower() != "temperature":
        raise ValueError(f"{p}:{hl}: first column must be 'temperature'")
    try:
        power = tuple(float(v) for v in head[1:])
    except ValueError:
        raise ValueError(f"{p}:{hl}: IT power breakpoints (W) must be numbers") from None
    temps, pue = [], []
    for ln, r in body:
        if len(r) != len(head):
            raise ValueError(f"{p}:{ln}: {len(r)} fields, the header has {len(head)}")
        try:
            temps.append(float(r[0]))
            pue.append(tuple(float(v) for v in r[1:]))
        except ValueError:
            raise ValueError(f"{p}:{ln}: fields must be numbers") from None
    try:
        return PueTable(name=p.stem, temperatures=tuple(temps), it_power=power,
                        pue=tuple(pue))
    except ValueError as e:
        raise ValueError(f"{p}: {e}") from None


def pue_table(spec: str) -> PueTable:
    """``air`` | ``hybrid`` (the default reconstructed tables) | path to a CSV table."""
    if spec == "air":
        return knee_table("air", AIR_ROWS)
    if spec == "hybrid":
        return knee_table("hybrid", HYBRID_ROWS)
    if Path(spec).suffix.lower() == ".csv" or Path(spec).is_file():
        return load_pue_csv(spec)
    raise ValueError(f"cooling '{spec}': expected 'air', 'hybrid' or a CSV table file")
