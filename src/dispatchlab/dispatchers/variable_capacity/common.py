"""What the variable-capacity strategies share: machines of one job each, which machines
leave (the risk order), and each job's category (share of the work owned by jobs at least
as long)."""

from __future__ import annotations

import numpy as np

from dispatchlab.engine.capabilities import Capabilities
from dispatchlab.engine.state import SystemView
from dispatchlab.errors import ConfigError
from dispatchlab.params import Attributes

#: Log-scale length bins of the online area histogram: 400 bins per decade, 1 s … 10⁸ s.
BINS_PER_DECADE = 400
N_BINS = 8 * BINS_PER_DECADE + 1

#: What the strategies support: one machine per job, no power cap.
CAPABILITIES = Capabilities(family="variable-capacity", fixed_power_cap=False,
                            varying_power_cap=False, multi_unit_jobs=False)
#: The strategies' descriptions record their family with their parameters.
WITH_FAMILY: Attributes = {"family": "capabilities.family"}


def cores_column(view: SystemView) -> int:
    """Index of the ``cores`` resource; every job must be one unit (one machine)."""
    return view.platform.resources.index("cores")


def check_job(view: SystemView, job: int, ridx: int) -> int:
    """The job's cores; a job of several units or larger than every machine is refused."""
    if view.jobs.units[job] != 1:
        raise ConfigError(f"job {view.jobs.job_id[job]}: variable-capacity strategies run "
                          f"jobs on one machine each (units = 1), got "
                          f"{view.jobs.units[job]} units", field="units")
    c = int(view.req[job, ridx])
    if c > int(view.capacity[:, ridx].max()):
        raise ConfigError(f"job {view.jobs.job_id[job]}: asks {c} cores, more than any "
                          "machine has", field="cores")
    return c


def highest_leave(candidates: np.ndarray, count: int, leaving: bool) -> list[int]:
    """Risk-aware choice: machines are ordered by risk (index = risk rank); the riskiest
    (highest indices) leave first and the safest come back first."""
    picked = candidates[-count:] if leaving else candidates[:count]
    return [int(x) for x in picked]


def chosen_nodes(aware: bool, rng: np.random.Generator, candidates: np.ndarray, count: int,
                 leaving: bool) -> list[int]:
    """The machines that leave (or come back) among ``candidates``: aware, the highest
    indices leave and the lowest come back; unaware, ``count`` drawn with ``rng``, sorted."""
    if aware:
        return highest_leave(candidates, count, leaving)
    picked = rng.choice(candidates, size=count, replace=False)
    return sorted(int(x) for x in picked)


class AreaShare:
    """Online category ``C_i``: the share of the work (length × cores) of the jobs seen so
    far that is owned by jobs at least as long as job ``i`` (slides: ``C_i = Σ_{w_k ≥ w_i}
    w_k c_k / Σ w_k c_k``). Lengths are requested times (a scheduler does not know more),
    binned on a log scale (400 bins a decade: lengths within 0.6 % count as equal)."""

    __slots__ = ("_dirty", "_hist", "_suffix", "total")

    def __init__(self) -> None:
        self._hist = np.zeros(N_BINS)
        self._suffix = np.zeros(N_BINS)
        self._dirty = False
        self.total = 0.0

    @staticmethod
    def bins(lengths: np.ndarray) -> np.ndarray:
        """The histogram bins of lengths (s)."""
        safe = np.maximum(np.asarray(lengths, dtype=np.float64), 1.0)
        return np.minimum(N_BINS - 1, (np.log10(safe) * BINS_PER_DECADE).astype(np.int64))

    def add(self, length: int, cores: int) -> None:
        """A job arrived."""
        self._hist[self.bins(np.array([length]))[0]] += length * cores
        self.total += length * cores
        self._dirty = True

    def share(self, length: int) -> float:
        """``C`` of a job of this length, in ``[0, 1]`` (1 when nothing is known yet)."""
        return float(self.shares(np.array([length]))[0])

    def shares(self, lengths: np.ndarray) -> np.ndarray:
        """``C`` of jobs of these lengths."""
        if self.total <= 0:
            return np.ones(len(lengths))
        if self._dirty:
            self._suffix = np.cumsum(self._hist[::-1])[::-1]
            self._dirty = False
        return np.minimum(1.0, self._suffix[self.bins(lengths)] / self.total)


class QuantileShare:
    """Category from a fixed reference: the authors' quantile files (one length per line,
    the length below which each thousandth of the reference work lies, from their
    ``genData.py``): ``C = 1 − k / 1000`` with ``k`` the index of the first quantile longer
    than the job (``k = 1000`` past the last). Built from another trace (or the same window:
    a look at the future), unlike :class:`AreaShare`."""

    __slots__ = ("quantiles",)

    def __init__(self, quantiles: np.ndarray):
        self.quantiles = np.asarray(quantiles, dtype=np.float64)

    @classmethod
    def from_file(cls, path: str) -> QuantileShare:
        """Read an authors' quantile file."""
        return cls(np.loadtxt(path, ndmin=1))

    def add(self, length: int, cores: int) -> None:
        """Nothing to learn: the reference is fixed."""

    def shares(self, lengths: np.ndarray) -> np.ndarray:
        """``C`` of jobs of these lengths."""
        k = np.searchsorted(self.quantiles, np.asarray(lengths, dtype=np.float64),
                            side="right")
        return 1.0 - k / 1000.0
