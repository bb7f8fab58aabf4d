"""The scenario timeline: everything about the machine that changes at given times.

One mechanism for every family: nodes leaving or joining, the number of alive nodes, a
machine-wide power cap, the ambient temperature, a desired utilization profile, or any
named signal a dispatcher wants to read. A scenario is a list of :class:`Change` rows
``(time, what, value, target)``, read from a file (CSV or Parquet with those columns) or
made by a seeded generator (:mod:`dispatchlab.engine.scenario_gen`); the engine turns the
rows into timers and applies each at its time, before the submissions of that time.

What each kind means (``value`` / ``target``):

==========================  ===============================================  ==========
``what``                    meaning                                          announced
==========================  ===============================================  ==========
``node_down``               node (or group) ``target`` leaves: its jobs      no
                            are aborted; ``value`` unused
``node_up``                 node (or group) ``target`` is back, idle         no
``alive_nodes``             ``value`` nodes are alive from now on; which     no
                            ones leave or join is the dispatcher's choice
                            (:meth:`Dispatcher.choose_nodes`), by default
                            the highest indices leave first
``power_cap``               machine-wide power cap in W (``inf``: none)       yes
``temperature``             ambient temperature in °C                        yes
``desired_utilization``     desired share (0–1) of resource ``target``       yes
                            (default ``cores``)
``energy_price``            price of a kWh from now on (the profit model's   yes
                            currency); priced by the energy accounting
``signal``                  any named value ``target`` for dispatchers       yes
==========================  ===============================================  ==========

*Announced* kinds are known in advance: dispatchers may read their whole future through
``view.scenario`` (a power-cap schedule or a desired profile is published); node changes
are not (a real scheduler learns of a lost node when it happens).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dispatchlab.arrays import FloatArray, IntArray
from dispatchlab.errors import ConfigError
from dispatchlab.input_files import readable_path

#: Kinds that change which nodes are usable.
NODE_KINDS = ("node_down", "node_up", "alive_nodes")
#: Kinds dispatchers may see ahead of time.
ANNOUNCED_KINDS = ("power_cap", "temperature", "desired_utilization", "energy_price",
                   "signal")
KINDS = NODE_KINDS + ANNOUNCED_KINDS
#: Latest time a row may have (s): later ones overflowed the engine's 64-bit clock.
MAX_TIME = 10**12


@dataclass(frozen=True, slots=True)
class Change:
    """At ``time`` (s), ``what`` becomes ``value`` (for ``target``)."""

    time: int
    what: str
    value: float = math.nan
    target: str = ""


class Scenario:
    """An ordered list of changes (stable by time: rows of one time keep their order)."""

    def __init__(self, changes: Iterable[Change] = (), *, source: str = "<memory>"):
        rows = list(changes)
        for k, c in enumerate(rows):
            _check(c, f"{source}: row {k + 1}")
        rows.sort(key=lambda c: c.time)
        self.changes: tuple[Change, ...] = tuple(rows)
        self.source = source

    def __len__(self) -> int:
        return len(self.changes)

    def __bool__(self) -> bool:
        return bool(self.changes)

    def __repr__(self) -> str:
        return f"Scenario({len(self.changes)} changes from {self.source})"

    def kinds(self) -> set[str]:
        """The kinds of change this scenario holds."""
        return {c.what for c in self.changes}

    def announced(self) -> Scenario:
        """Only the kinds dispatchers may see in advance."""
        out = Scenario(source=self.source)
        out.changes = tuple(c for c in self.changes if c.what in ANNOUNCED_KINDS)
        return out

    def steps(self, what: str, target: str = "") -> tuple[IntArray, FloatArray]:
        """The step function of one kind (and target): change times and values."""
        rows = [c for c in self.changes if c.what == what and c.target == target]
        return (np.array([c.time for c in rows], dtype=np.int64),
                np.array([c.value for c in rows], dtype=np.float64))

    def value_at(self, what: str, t: int, target: str = "", default: float = math.nan
                 ) -> float:
        """The value of ``what`` (for ``target``) in force at time ``t``."""
        times, values = self.steps(what, target)
        k = int(np.searchsorted(times, t, side="right")) - 1
        return float(values[k]) if k >= 0 else default

    def shifted(self, start: int) -> Scenario:
        """The timeline from ``start`` on, rebased to it: a file with absolute times (the
        authors' variation files) read against jobs rebased to ``start``. Rows before
        ``start`` move to time 0 in their order, so what was in force at ``start`` holds
        from 0."""
        if start < 0:
            raise ConfigError(f"scenario start must be ≥ 0 s, got {start}", field="start")
        if start == 0:
            return self
        out = Scenario(source=f"{self.source} from t={start}")
        out.changes = tuple(Change(max(0, c.time - start), c.what, c.value, c.target)
                            for c in self.changes)
        return out

    def merged(self, other: Scenario) -> Scenario:
        """Both scenarios' changes in one timeline (this one's first at equal times)."""
        return Scenario([*self.changes, *other.changes],
                        source=f"{self.source} + {other.source}")

    def describe(self) -> dict[str, object]:
        """JSON-ready summary (recorded with the results)."""
        kinds: dict[str, int] = {}
        for c in self.changes:
            kinds[c.what] = kinds.get(c.what, 0) + 1
        return {"source": self.source, "changes": len(self.changes), "kinds": kinds}

    def to_frame(self) -> object:
        """The rows as a pandas DataFrame (``time, what, value, target``)."""
        import pandas as pd

        return pd.DataFrame({"time": [c.time for c in self.changes],
                             "what": [c.what for c in self.changes],
                             "value": [c.value for c in self.changes],
                             "target": [c.target for c in self.changes]})


def _check(c: Change, where: str) -> None:
    if c.what not in KINDS:
        raise ConfigError(f"{where}: unknown change '{c.what}' (known: {', '.join(KINDS)})",
                          field="what")
    if not isinstance(c.time, int) or c.time < 0:
        raise ConfigError(f"{where}: time must be a non-negative integer, got {c.time!r}",
                          field="time")
    if c.time > MAX_TIME:
        raise ConfigError(f"{where}: time {c.time:g} s is beyond {MAX_TIME:.0e} s (some "
                          "31,700 years)", field="time")
    if c.what in ("node_down", "node_up", "signal") and not c.target:
        raise ConfigError(f"{where}: '{c.what}' needs a target", field="target")
    if c.what == "alive_nodes" and not (math.isfinite(c.value) and c.value >= 0
                                        and c.value == int(c.value)):
        raise ConfigError(f"{where}: alive_nodes needs a whole number ≥ 0, got {c.value}",
                          field="value")
    if c.what == "power_cap" and not (c.value > 0):
        raise ConfigError(f"{where}: power_cap must be > 0 W (inf for no cap), got {c.value}",
                          field="value")
    if c.what == "desired_utilization" and not (0 <= c.value <= 1):
        raise ConfigError(f"{where}: desired_utilization must be within [0, 1], got "
                          f"{c.value}", field="value")
    if c.what == "energy_price" and not (math.isfinite(c.value) and c.value >= 0):
        raise ConfigError(f"{where}: energy_price must be a finite price >= 0 per kWh, got "
                          f"{c.value}", field="value")
    if c.what in ("temperature", "signal") and not math.isfinite(c.value):
        raise ConfigError(f"{where}: {c.what} needs a finite value, got {c.value}",
                          field="value")


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario file: CSV (``time,what,value[,target]`` header), Parquet, or an
    Eurora power-cap profile (``seconds;watts`` lines, :func:`load_power_caps`)."""
    shown = Path(path)
    with readable_path(shown, lambda why: ConfigError(f"{shown}: {why}", field="scenario")
                       ) as p:
        scenario = _read_scenario(p)
    scenario.source = str(shown)
    return scenario


def _read_scenario(p: Path) -> Scenario:
    import pandas as pd

    if p.suffix != ".parquet" and _is_cap_profile(p):
        return load_power_caps(p)
    try:
        frame = pd.read_parquet(p) if p.suffix == ".parquet" else pd.read_csv(
            p, comment="#", skipinitialspace=True, dtype={"what": str, "target": str})
    except (ValueError, OSError) as exc:
        raise ConfigError(f"{p}: cannot read the scenario: {exc}", field="scenario") from None
    missing = {"time", "what", "value"} - set(frame.columns)
    if missing:
        raise ConfigError(f"{p}: missing column(s) {', '.join(sorted(missing))} (expected "
                          "time,what,value[,target])", field="scenario")
    lines = _data_lines(p, len(frame))
    rows = []
    targets = frame["target"] if "target" in frame.columns else [""] * len(frame)
    for k, (t, what, value, target) in enumerate(zip(frame["time"], frame["what"],
                                                     frame["value"], targets, strict=True)):
        line = lines[k]
        try:
            tf = float(t)
        except (TypeError, ValueError):
            raise ConfigError(f"{p}: line {line}: time '{t}' is not a number",
                              field="time") from None
        if not math.isfinite(tf) or tf != int(tf):
            raise ConfigError(f"{p}: line {line}: time {t} is not a whole number of seconds",
                              field="time")
        try:
            v = float(value) if value == value and str(value).strip() != "" else math.nan
        except (TypeError, ValueError):
            raise ConfigError(f"{p}: line {line}: value '{value}' is not a number",
                              field="value") from None
        tgt = "" if target is None or target != target else str(target).strip()
        c = Change(int(tf), str(what).strip(), v, tgt)
        _check(c, f"{p}: line {line}")
        rows.append(c)
    return Scenario(rows, source=str(p))


def _data_lines(p: Path, n: int) -> list[int]:
    """File line numbers of the ``n`` data rows of a CSV scenario (comments and blank lines
    skipped, as the reader does); row numbers for Parquet."""
    if p.suffix == ".parquet":
        return list(range(1, n + 1))
    out: list[int] = []
    with p.open(encoding="utf-8", errors="replace") as f:
        for number, text in enumerate(f, start=1):
            if text.strip() and not text.lstrip().startswith("#"):
                out.append(number)
    return (out[1:] + list(range(len(out) + 1, n + 2)))[:n]  # first kept line: the header


def cap_from_series(times: Sequence[int], watts: Sequence[float], source: str = "<memory>"
                    ) -> Scenario:
    """A power-cap scenario from parallel lists of times (s) and caps (W)."""
    return Scenario([Change(int(t), "power_cap", float(w)) for t, w in zip(times, watts,
                                                                            strict=True)],
                    source=source)


_CAP_LINE = re.compile(r"^\s*[+-]?\d+(\.\d*)?\s*;")


def _is_cap_profile(p: Path) -> bool:
    """The first non-blank line looks like ``seconds;watts``."""
    try:
        with open(p, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    return bool(_CAP_LINE.match(line))
    except (OSError, UnicodeDecodeError):
        return False
    return False


def load_power_caps(path: str | Path) -> Scenario:
    """An Eurora ``variable_power_caps`` file: one ``seconds;watts`` line per change, times
    from the workload's origin (its first arrival). Before the first line the fixed cap of
    the run (``power_cap=``, none by default) holds, as in PA-HPC-SIM."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"{p}: no such power-cap file", field="scenario")
    rows: list[Change] = []
    for lineno, raw in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        t_text, sep, w_text = line.partition(";")
        where = f"{p}: line {lineno}"
        try:
            tf, w = float(t_text), float(w_text)
        except ValueError:
            raise ConfigError(f"{where}: expected seconds;watts, got '{line}'",
                              field="power_cap") from None
        if not sep or not math.isfinite(tf) or tf != int(tf) or tf < 0:
            raise ConfigError(f"{where}: time '{t_text.strip()}' is not a whole number of "
                              "seconds ≥ 0", field="time")
        c = Change(int(tf), "power_cap", w)
        _check(c, where)
        rows.append(c)
    if not rows:
        raise ConfigError(f"{p}: no power caps in the file", field="scenario")
    return Scenario(rows, source=str(p))
