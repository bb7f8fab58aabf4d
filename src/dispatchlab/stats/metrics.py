"""What each run-level metric means for comparisons: its label, unit and which way is better."""

from __future__ import annotations

from dataclasses import dataclass

from dispatchlab.errors import ConfigError


@dataclass(frozen=True)
class MetricInfo:
    """How to show and rank one summary metric.

    ``unit`` is ``"s"`` (durations, shown as min/h/d), ``"ratio"`` (shown as %), ``"ms"``,
    ``"%"`` or ``""`` (plain number).
    """

    key: str
    label: str
    unit: str
    lower_is_better: bool = True


_ROWS: tuple[MetricInfo, ...] = (
    MetricInfo("mean_wait", "mean wait", "s"),
    MetricInfo("median_wait", "median wait", "s"),
    MetricInfo("p90_wait", "p90 wait", "s"),
    MetricInfo("max_wait", "max wait", "s"),
    MetricInfo("mean_slowdown", "mean slowdown", ""),
    MetricInfo("mean_bounded_slowdown", "mean bounded slowdown", ""),
    MetricInfo("max_bounded_slowdown", "max bounded slowdown", ""),
    MetricInfo("makespan", "makespan", "s"),
    MetricInfo("utilization", "utilization (cores)", "ratio", lower_is_better=False),
    MetricInfo("killed", "killed at wall-time", ""),
    MetricInfo("late_jobs", "late jobs (wait > ewt)", ""),
    MetricInfo("total_tardiness", "total tardiness", "s"),
    MetricInfo("weighted_queue_time", "weighted queue time", ""),
    MetricInfo("mean_weighted_queue_time", "mean weighted queue time (EWT)", ""),
    MetricInfo("weighted_tardiness", "weighted tardiness", ""),
    MetricInfo("mean_queue_length", "mean queue length", ""),
    MetricInfo("max_queue_length", "max queue length", ""),
    MetricInfo("dispatch_time_mean_ms", "decision time (mean)", "ms"),
    MetricInfo("dispatch_time_max_ms", "decision time (max)", "ms"),
    MetricInfo("dispatch_overhead_pct", "decision overhead", "%"),
    # variable capacity (workload metrics_window; dispatchlab.metrics.variable_capacity)
    MetricInfo("goodput", "goodput", "ratio", lower_is_better=False),
    MetricInfo("max_stretch", "max stretch", ""),
    MetricInfo("mean_stretch", "mean stretch", ""),
    MetricInfo("aborted_volume", "aborted volume (core-s)", ""),
    MetricInfo("aborted_count", "aborted runs", ""),
    MetricInfo("utilization_alive", "utilization of alive cores", "ratio",
               lower_is_better=False),
    # profit (a cooling model selected; dispatchlab.energy.profit): over the run, and up to
    # the last submission (``_sub``, the thesis's comparison window)
    MetricInfo("profit", "profit", "", lower_is_better=False),
    MetricInfo("profit_sub", "profit at the last submission", "", lower_is_better=False),
    MetricInfo("mean_pue", "mean PUE", ""),
    MetricInfo("cooling_kwh", "cooling energy (kWh)", ""),
)

#: The metrics experiments can rank and summarize, by summary key.
METRICS: dict[str, MetricInfo] = {m.key: m for m in _ROWS}

#: Summary keys that measure the machine running the simulation, not the simulated system:
#: they differ between two runs of the same configuration.
TIMING_KEYS = frozenset(
    {
        "sim_seconds",
        "jobs_per_second",
        "dispatch_time_mean_ms",
        "dispatch_time_max_ms",
        "dispatch_time_total_s",
        "dispatch_overhead_pct",
    }
)


def metric_info(key: str, *, field: str = "metric") -> MetricInfo:
    """The catalogue entry of ``key``; a ConfigError naming ``field`` when unknown."""
    try:
        return METRICS[key]
    except KeyError:
        known = ", ".join(METRICS)
        raise ConfigError(f"unknown metric '{key}' (known: {known})", field=field) from None
