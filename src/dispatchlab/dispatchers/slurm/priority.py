"""Job priorities as Slurm 22.05 computes them: ``priority/basic`` and
``priority/multifactor`` (with Fair Tree fair share from the usage the run records).

Sources (Slurm 22.05.8, ``SchedMD/slurm`` tag ``slurm-22-05-8-1``):

- basic: ``src/plugins/priority/basic/priority_basic.c``, ``priority_p_set``: each
  submitted job gets one less than the previous one, starting below ``TOP_PRIORITY``
  (``0xffff0000``, ``src/slurmctld/job_mgr.c``): first come, first served.
- multifactor: ``src/plugins/priority/multifactor/priority_multifactor.c``,
  ``set_priority_factors`` and ``_get_priority_internal``: priority =
  ``PriorityWeightAge × age + PriorityWeightFairshare × fair share + PriorityWeightJobSize
  × job size + PriorityWeightPartition × partition + PriorityWeightQOS × QOS − nice``,
  truncated to an integer, at least 1. age = min(wait, ``PriorityMaxAge``) /
  ``PriorityMaxAge``; job size (not ``SMALL_RELATIVE_TO_TIME``) = (min nodes / nodes +
  CPUs / cluster CPUs) / 2, or with ``PriorityFavorSmall`` ((nodes − min nodes) / nodes +
  (cluster CPUs − CPUs) / cluster CPUs) / 2; partition = ``PriorityJobFactor`` / the
  largest ``PriorityJobFactor`` (``src/slurmctld/read_config.c``, ``norm_priority``).
- usage and its decay: ``_decay_thread`` and ``_apply_new_usage``: every
  ``PriorityCalcPeriod`` all usage is multiplied by ``d^Δ`` with ``d = 1 − 0.693 /
  PriorityDecayHalfLife`` and Δ the seconds since the previous pass, and each job that ran
  in the period adds ``CPUs × r × d^r`` for the ``r`` seconds it ran in it; pending jobs'
  priorities are recomputed then (and set at submission).
- fair share, Fair Tree (the default since 19.05): ``fair_tree.c``, ``_calc_assoc_fs`` and
  ``_calc_tree_fs``: level fair share = shares / effective usage; users sorted by it,
  ties sharing a rank; factor = rank / number of users, the first ranked = 1. With
  ``PriorityFlags=NO_FAIR_TREE``: 2^(−effective usage / shares)
  (``priority_p_calc_fs_factor``; effective usage = the user's share of the root's
  usage for a user under root, ``_set_assoc_usage_efctv``).

What stands in for what the simulation lacks (docs/slurm_twin.md): every user is an
association with one share directly under the root account (no ``sacctmgr`` tree yet),
so shares are ``1 / users`` and effective usage is the user's share of all usage; users
count from their first submission; min nodes is 1 (``sbatch -n``, no ``-N`` in a trace);
QOS priorities live in slurmdbd, so the QOS factor is 0; traces carry no nice value (0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

TOP_PRIORITY = 0xFFFF0000


@dataclass(frozen=True)
class PrioritySettings:
    """The ``Priority*`` settings of a slurm.conf (seconds for times)."""

    kind: str = "basic"
    weight_age: int = 0
    weight_fairshare: int = 0
    weight_jobsize: int = 0
    weight_partition: int = 0
    weight_qos: int = 0
    max_age: int = 7 * 86400
    decay_half_life: int = 7 * 86400
    calc_period: int = 300
    favor_small: bool = False
    fair_tree: bool = True


class Priorities:
    """Each job's current priority (``value[job]``), kept as Slurm keeps it: set at
    submission, recomputed at every ``PriorityCalcPeriod`` pass (:meth:`advance`)."""

    def __init__(self, settings: PrioritySettings, n_nodes: int, cluster_cpus: int,
                 part_norm: list[float]):
        self.s = settings
        self.n_nodes = n_nodes
        self.cluster_cpus = cluster_cpus
        self.part_norm = part_norm  # per partition: PriorityJobFactor / max
        self.value: dict[int, int] = {}
        self.usage: dict[int, float] = {}  # user → decayed raw usage (CPU-seconds)
        self.fs_factor: dict[int, float] = {}
        self.last_calc = 0
        hl = settings.decay_half_life
        self.decay = 1.0 - 0.693 / hl if hl > 0 else 1.0
        self._submitted = 0

    # -- the factors -------------------------------------------------------------------
    def age(self, submit: int, now: int) -> float:
        """Age factor: min(wait, PriorityMaxAge) / PriorityMaxAge."""
        wait = max(now - submit, 0)
        return 1.0 if wait >= self.s.max_age else wait / self.s.max_age

    def job_size(self, cpus: int, min_nodes: int = 1) -> float:
        """Job-size factor (``set_priority_factors``, not SMALL_RELATIVE_TO_TIME)."""
        n, c = self.n_nodes, self.cluster_cpus
        if self.s.favor_small:
            js = ((n - min_nodes) / n + (c - cpus) / c) / 2 if cpus else (n - min_nodes) / n
        else:
            js = (min_nodes / n + cpus / c) / 2 if cpus else min_nodes / n
        return min(max(js, 0.0), 1.0)

    def multifactor(self, submit: int, now: int, cpus: int, part: int, user: int) -> int:
        """``_get_priority_internal``: the weighted sum, truncated, at least 1."""
        s = self.s
        total = 0.0
        if s.weight_age:
            total += s.weight_age * self.age(submit, now)
        if s.weight_fairshare:
            total += s.weight_fairshare * self.fs_factor.get(user, 1.0)
        if s.weight_jobsize:
            total += s.weight_jobsize * self.job_size(cpus)
        if s.weight_partition:
            total += s.weight_partition * self.part_norm[part]
        return max(int(total), 1)

    # -- Slurm's passes ----------------------------------------------------------------
    def on_submit(self, job: int, submit: int, now: int, cpus: int, part: int,
                  user: int) -> None:
        """A job arrives: its first priority (basic: one less than the previous job)."""
        if user not in self.usage:
            self.usage[user] = 0.0
            self._fair_tree()
        if self.s.kind == "basic":
            self.value[job] = max(TOP_PRIORITY - 1 - self._submitted, 1)
        else:
            self.value[job] = self.multifactor(submit, now, cpus, part, user)
        self._submitted += 1

    def charge(self, user: int, cpus: int, start: int, end: int, period_start: int,
               period_end: int) -> None:
        """``_apply_new_usage``: a job that ran from ``start`` to ``end`` (``end`` may be
        in the future) adds its CPU-seconds within the period, decayed by ``d^r``."""
        r = min(end, period_end) - max(start, period_start)
        if r > 0:
            self.usage[user] = self.usage.get(user, 0.0) + cpus * r * self.decay ** r

    def decay_all(self, delta: int) -> None:
        """``_apply_decay``: every user's usage times ``d^Δ``."""
        if delta <= 0 or self.decay == 1.0:
            return
        factor = max(self.decay ** delta, 2.2250738585072014e-308)
        for u in self.usage:
            self.usage[u] *= factor

    def _fair_tree(self) -> None:
        """Fair Tree on a flat tree: every user one share under root; with
        ``PriorityFlags=NO_FAIR_TREE`` the classic factor 2^(−U/S) instead
        (``priority_p_calc_fs_factor``, ``FairShareDampeningFactor`` 1)."""
        users = list(self.usage)
        if not users:
            return
        total = sum(self.usage.values())
        share = 1.0 / len(users)
        if not self.s.fair_tree:
            for u in users:
                used = self.usage[u] / total if total > 0 else 0.0
                self.fs_factor[u] = 2.0 ** (-used / share)
            return

        def level(u: int) -> float:
            used = self.usage[u] / total if total > 0 else 0.0
            return math.inf if used == 0 else share / used

        ranked = sorted(users, key=level, reverse=True)
        n = len(users)
        rank = rnt = n
        prev: float | None = None
        for u in ranked:
            lv = level(u)
            if prev is None or lv != prev:
                rank = rnt
            self.fs_factor[u] = rank / n
            rnt -= 1
            prev = lv

    def recalc(self, now: int, pending: dict[int, tuple[int, int, int, int]]) -> None:
        """End of a ``PriorityCalcPeriod`` pass: fair-share factors, then every pending
        job's priority (``pending``: job → (submit, cpus, partition, user))."""
        if self.s.kind == "basic":
            return
        if self.s.weight_fairshare:
            self._fair_tree()
        for job, (submit, cpus, part, user) in pending.items():
            self.value[job] = self.multifactor(submit, now, cpus, part, user)
