"""Expand an experiment into its runs, checking every entry before anything runs.

Every workload is loaded once here (to count its jobs and cut windows), every platform
and dispatcher spec is resolved, so a typo fails in a second with the key that holds it
instead of an hour into a campaign.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from dispatchlab.errors import ConfigError, DispatchlabError
from dispatchlab.experiments.config import (
    PlannedRun,
    RunConfig,
    RunLabels,
    WorkloadRef,
    file_digest,
)
from dispatchlab.experiments.spec import ExperimentSpec, NamedSpec, WorkloadEntry
from dispatchlab.traces.errors import TraceError
from dispatchlab.traces.resolve import PREFIX as TRACE_PREFIX
from dispatchlab.traces.resolve import resolve_source

_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_RESERVED = {"seed"}
_SCENARIO_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*")
AUTO = "auto"


def plan(
    spec: ExperimentSpec, base_dir: str | Path = ".", *, source: str | None = None
) -> list[PlannedRun]:
    """All runs of ``spec`` (relative paths are taken from ``base_dir``), validated."""
    base = Path(base_dir)
    params = dict(spec.parameters)
    _check_parameters(spec, params, source)
    seeds = spec.seed_list()
    if len(set(seeds)) != len(seeds):
        raise ConfigError("seeds must be distinct", field="seeds", source=source)

    workloads = list(_workload_refs(spec, params, base, source))
    _check_distinct("workload", [(w[0], w[1], (w[2], w[5])) for w in workloads], source)
    platforms = list(_platforms(spec, params, base, source))
    _check_distinct("platform", [(p[0], p[1], sorted(p[4].items())) for p in platforms], source)
    dispatchers = list(_dispatchers(spec, params, source))
    runs: list[PlannedRun] = []
    seen: dict[str, str] = {}
    shown: dict[tuple[str, str], tuple[str, str]] = {}
    checked: set[tuple[str, str, int]] = set()
    for (w_field, w_label, window, ref, w_used, pricing, max_units), (
        p_field,
        p_label,
        p_spec,
        p_digest,
        p_used,
    ), (d_field, d_label, d_spec, d_used, d_shares) in itertools.product(
        workloads, platforms, dispatchers
    ):
        shared = {k: v for k, v in (w_used | p_used).items()}
        if any(k in shared and shared[k] != v for k, v in d_used.items()):
            continue  # this dispatcher variant belongs to another parameter combination
        pair = (f"{ref.scenario}|{ref.power_cap}", d_spec, max_units)
        if pair not in checked:
            checked.add(pair)
            _check_composition(ref, d_spec, max_units, f"{w_field} × {d_field}", source)
        for seed in seeds:
            fixed = {**shared, **d_used}
            if "seed" in _names(d_spec) or "seed" in _names(d_label):
                d_spec_s = _subst(d_spec, {"seed": seed})
                d_label_s = _subst(d_label, {"seed": seed})
            else:
                d_spec_s, d_label_s = d_spec, d_label
            cfg = RunConfig(
                workload=_seeded(ref, seed),
                platform=p_spec,
                dispatcher=d_spec_s,
                seed=seed,
                on_infeasible=spec.on_infeasible,
                platform_digest=p_digest,
                schedule_formats=tuple(spec.schedule_format),
            )
            block_params = ",".join(f"{k}={v}" for k, v in sorted(shared.items()))
            block = "|".join(
                x
                for x in (
                    w_label if window is None else f"{w_label}#w{window}",
                    p_label,
                    block_params,
                    f"pricing={pricing}" if pricing is not None else "",
                    f"seed={seed}",
                )
                if x
            )
            labels = RunLabels(
                experiment=spec.name,
                workload=w_label,
                window=window,
                platform=p_label,
                dispatcher=d_label_s,
                seed=seed,
                params=fixed,
                block=block,
                pricing=pricing,
            )
            w_where = w_field if pricing is None else f"{w_field} pricing '{pricing}'"
            where = f"{w_where} × {p_field} × {d_field} (seed {seed})"
            if cfg.key in seen:
                raise ConfigError(
                    f"{where} repeats the run of {seen[cfg.key]}", field=d_field, source=source
                )
            seen[cfg.key] = where
            first_spec, first_field = shown.setdefault((block, d_label_s), (d_spec_s, d_field))
            if first_spec != d_spec_s:
                raise ConfigError(
                    f"two dispatchers are both named '{d_label_s}' ({first_field} and "
                    f"{d_field}): their runs would be merged; give each its own name",
                    field=d_field, source=source)
            runs.append(PlannedRun(cfg, labels, shares_simulation=d_shares))
    # after the composition checks, as simulate checks what a dispatcher supports first
    _check_job_power(workloads, platforms, spec.seed_list()[0], source)
    return runs


def _check_distinct(kind: str, entries: list[tuple[str, str, Any]], source: str | None) -> None:
    """Entries (field, name, what else tells their runs apart) of two different fields may
    not share a name: their runs would carry the same labels and be merged and averaged."""
    first: dict[tuple[str, str], str] = {}
    for field, name, rest in entries:
        other = first.setdefault((name, repr(rest)), field)
        if other != field:
            raise ConfigError(
                f"two {kind}s are both named '{name}' ({other} and {field}): their runs would "
                f"be merged; give each its own name (key 'name'; without it, the name comes "
                f"from the {'file' if kind == 'workload' else 'spec'})",
                field=field, source=source)


# --- parameters ---------------------------------------------------------------------------


def _names(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text))


def _names_in(value: Any) -> set[str]:
    if isinstance(value, str):
        return _names(value)
    if isinstance(value, Mapping):
        return set().union(*(_names_in(v) for v in value.values())) if value else set()
    if isinstance(value, (list, tuple)):
        return set().union(*(_names_in(v) for v in value)) if value else set()
    return set()


def _subst(text: str, values: Mapping[str, Any]) -> str:
    return _PLACEHOLDER.sub(
        lambda m: str(values[m.group(1)]) if m.group(1) in values else m.group(0), text
    )


def _subst_value(value: Any, values: Mapping[str, Any]) -> Any:
    """Substitute inside strings; a string that is one placeholder takes the value's type."""
    if isinstance(value, str):
        m = _PLACEHOLDER.fullmatch(value)
        if m and m.group(1) in values:
            return values[m.group(1)]
        return _subst(value, values)
    if isinstance(value, Mapping):
        return {k: _subst_value(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_subst_value(v, values) for v in value]
    return value


def _combos(names: set[str], params: Mapping[str, list[Any]]) -> Iterator[dict[str, Any]]:
    keys = sorted(names - _RESERVED)
    for values in itertools.product(*(params[k] for k in keys)):
        yield dict(zip(keys, values, strict=True))


def _spec_text(entry: str | NamedSpec) -> tuple[str, str | None]:
    return (entry, None) if isinstance(entry, str) else (entry.spec, entry.name)


def _expanded(entries: Sequence[str | NamedSpec], key: str, params: Mapping[str, list[Any]]
              ) -> Iterator[tuple[str, str | None, str, str, dict[str, Any]]]:
    """Each platform or dispatcher entry (``key``) under every combination of the
    parameters it names: its field, its name, its spec and label with the values in, the
    values."""
    for i, entry in enumerate(entries):
        text, name = _spec_text(entry)
        for combo in _combos(_names(text) | _names(name or ""), params):
            s = _subst(text, combo).strip()
            yield f"{key}[{i}]", name, s, _subst(name, combo) if name else s, combo


def _check_parameters(
    spec: ExperimentSpec, params: Mapping[str, list[Any]], source: str | None
) -> None:
    used: set[str] = set()
    places: list[tuple[str, set[str]]] = []
    for i, w in enumerate(spec.workloads):
        places.append((f"workloads[{i}]", _names_in(w.model_dump())))
    for key in ("platforms", "dispatchers"):
        for i, entry in enumerate(getattr(spec, key)):
            text, name = _spec_text(entry)
            places.append((f"{key}[{i}]", _names(text) | _names(name or "")))
    for where, names in places:
        unknown = names - set(params) - _RESERVED
        if unknown:
            raise ConfigError(
                f"uses undefined parameter '{{{sorted(unknown)[0]}}}' "
                f"(defined: {', '.join(sorted(params)) or 'none'})",
                field=where,
                source=source,
            )
        used |= names
    for name, values in params.items():
        if not name.isidentifier() or name in _RESERVED:
            raise ConfigError(
                "parameter names are identifiers other than 'seed'",
                field=f"parameters.{name}",
                source=source,
            )
        if name not in used:
            raise ConfigError(
                "not used by any {placeholder} of a workload, platform or dispatcher",
                field=f"parameters.{name}",
                source=source,
            )
        if len({repr(v) for v in values}) != len(values):
            raise ConfigError("values must be distinct", field=f"parameters.{name}", source=source)


# --- workloads ----------------------------------------------------------------------------

#: field, label, window, reference (with one pricing scenario), parameters used, the
#: pricing scenario's name (None for the single-scenario keys or none), the most units
#: a job asks
WorkloadItem = tuple[str, str, int | None, WorkloadRef, dict[str, Any], str | None, int]


def _workload_refs(
    spec: ExperimentSpec, params: Mapping[str, list[Any]], base: Path, source: str | None
) -> Iterator[WorkloadItem]:
    loaded: dict[str, tuple[int, int]] = {}
    for i, entry in enumerate(spec.workloads):
        field = f"workloads[{i}]"
        names = _names_in(entry.model_dump())
        for combo in _combos(names, params):
            raw = _subst_value(entry.model_dump(), combo)
            e = WorkloadEntry.model_validate(raw)
            ref, label = _resolve_workload(e, base, field, source)
            pricings = _pricings(e, base, field, source)
            key = repr(ref.identity())
            if key not in loaded:
                # a generator seeded by the run's seed is checked with the first seed
                loaded[key] = _count_jobs(_seeded(ref, spec.seed_list()[0]), field, source)
            n, max_units = loaded[key]
            if combo:
                label = f"{label}[{','.join(f'{k}={v}' for k, v in combo.items())}]"
            windows = _as_int(e.windows, f"{field}.windows", source) or 1
            if windows == 1:
                for name, cool in pricings:
                    yield (field, label, None, replace(ref, cooling=cool), combo, name,
                           max_units)
                continue
            size = _as_int(e.window_jobs, f"{field}.window_jobs", source) or n // windows
            if windows > n:
                raise ConfigError(f"{windows} windows need at least {windows} jobs; the "
                                  f"workload has {n} (at most {n} windows of one job)",
                                  field=f"{field}.windows", source=source)
            if size < 1 or size * windows > n:
                raise ConfigError(
                    f"{windows} windows of {size} jobs need {windows * size} "
                    f"jobs; the workload has {n}",
                    field=f"{field}.windows",
                    source=source,
                )
            for w in range(windows):
                win = replace(ref, skip=(ref.skip or 0) + w * size, limit=size)
                for name, cool in pricings:
                    yield field, label, w, replace(win, cooling=cool), combo, name, max_units


def _resolve_workload(
    e: WorkloadEntry, base: Path, field: str, source: str | None
) -> tuple[WorkloadRef, str]:
    from dispatchlab.workload.load import detect_format
    from dispatchlab.workload.swf import SwfOptions

    for key in ("skip", "limit"):
        if key in e.options:
            raise ConfigError(
                f"give '{key}' on the workload, not in its options",
                field=f"{field}.options.{key}",
                source=source,
            )
    try:
        path = Path(resolve_source(e.path)).expanduser()
    except TraceError as exc:
        raise ConfigError(str(exc), field=f"{field}.path", source=source) from None
    if not path.is_absolute() and (base / path).exists():
        path = base / path
    digest = None
    options = dict(e.options)
    fmt = e.format
    if path.exists():
        path = path.resolve()
        if fmt is None:
            try:
                fmt = detect_format(path)
            except DispatchlabError as exc:
                raise ConfigError(str(exc), field=f"{field}.format", source=source) from None
        digest = file_digest(path) if path.is_file() else None
        if fmt == "swf":
            try:
                full = asdict(SwfOptions(**options))
            except TypeError as exc:
                bad = str(exc).split("'")[1] if "'" in str(exc) else "options"
                raise ConfigError(
                    "unknown SWF option", field=f"{field}.options.{bad}", source=source
                ) from None
            except DispatchlabError as exc:
                sub = getattr(exc, "field", None)
                raise ConfigError(
                    str(exc), field=f"{field}.options" + (f".{sub}" if sub else ""), source=source
                ) from None
            full.pop("skip")
            full.pop("limit")
            options = full
        text = str(path)
    else:
        text = e.path
    label = e.name or _stem(Path(e.path.removeprefix(TRACE_PREFIX)).name)
    skip = _as_int(e.skip, f"{field}.skip", source) or None
    limit = _as_int(e.limit, f"{field}.limit", source)
    options, metrics_window = _job_file_window(e, fmt, options, field, source)
    ref = WorkloadRef(text, fmt, options, skip=skip, limit=limit, digest=digest,
                      walltime_kill=e.walltime_kill, metrics_window=metrics_window,
                      power_cap=e.power_cap, settings=_settings(e, base, field, source))
    if e.scenario is not None:
        ref = replace(ref, scenario=_scenario(e.scenario, base, field, source))
    return ref, label


def _job_file_window(e: WorkloadEntry, fmt: str | None, options: dict[str, Any], field: str,
                     source: str | None) -> tuple[dict[str, Any], tuple[int, int] | None]:
    """``window_start`` / ``window`` as the reader options of a variable-capacity job file
    (as ``simulate --window-start/--window``), and the metrics window (default ``[0,
    window]``)."""
    metrics_window = e.metrics_window
    if e.window_start is None and e.window is None:
        return options, metrics_window
    key = "window_start" if e.window_start is not None else "window"
    if fmt != "vcjobs":
        raise ConfigError(f"selects jobs of a variable-capacity job file (format vcjobs); "
                          f"'{e.path}' is {fmt or 'not a file'}", field=f"{field}.{key}",
                          source=source)
    for option in ("start", "window"):
        if option in options:
            raise ConfigError(f"give either options.{option} or window_start/window, not "
                              "both", field=f"{field}.options.{option}", source=source)
    options = {**options, "start": e.window_start or 0}
    if e.window is not None:
        options["window"] = e.window
        metrics_window = metrics_window or (0, e.window)
    return options, metrics_window


def _settings(e: WorkloadEntry, base: Path, field: str, source: str | None
              ) -> dict[str, Any]:
    """The entry's run settings that differ from their defaults (a job power file made
    absolute, from the experiment's folder; the scenario start defaulting to
    ``window_start``, as in ``simulate``)."""
    from dispatchlab.run_settings import SETTING_NAMES, RunSettings

    values = {name: getattr(e, name) for name in SETTING_NAMES}
    if values["scenario_start"] is None:
        values["scenario_start"] = e.window_start
    power = e.job_power
    if power is not None and power not in ("node", "column", "pa-hpc-sim"):
        if not power.startswith("trace:") and (base / power).exists():
            values["job_power"] = str((base / power).resolve())
        elif not power.startswith("trace:") and not Path(power).exists():
            raise ConfigError(f"'{power}': no such file (give node, column, pa-hpc-sim or a "
                              "job_id;watts prediction file)", field=f"{field}.job_power",
                              source=source)
    try:
        return RunSettings(**values).changed()
    except ConfigError as exc:
        text = str(exc).removeprefix(f"field '{exc.field}': ")
        raise ConfigError(text, field=f"{field}.{exc.field}", source=source) from None


def _pricings(
    e: WorkloadEntry, base: Path, field: str, source: str | None
) -> list[tuple[str | None, dict[str, str] | None]]:
    """The entry's pricing scenarios as (name, accounting settings): the named ``pricing``
    list, or the single-scenario keys (name None), or no accounting at all."""
    single = [k for k in ("cooling", "temperature", "prices") if getattr(e, k) is not None]
    if e.pricing is None:
        if e.cooling is not None:
            return [(None, _cooling(e, e.cooling, e.temperature, e.prices, e.it_power, base,
                                    f"{field}.cooling", source))]
        if single or e.it_power != "auto":
            raise ConfigError("temperature, prices and it_power need a cooling model",
                              field=f"{field}.cooling", source=source)
        return [(None, None)]
    if single:
        raise ConfigError(f"give either 'pricing' or the single-scenario key '{single[0]}', "
                          "not both", field=f"{field}.pricing", source=source)
    out: list[tuple[str | None, dict[str, str] | None]] = []
    seen: set[str] = set()
    for k, p in enumerate(e.pricing):
        where = f"{field}.pricing[{k}]"
        if not _SCENARIO_NAME.fullmatch(p.name):
            raise ConfigError(f"scenario name '{p.name}': use letters, digits and _ . + - "
                              "(it labels rows and sets)", field=f"{where}.name", source=source)
        if p.name in seen:
            raise ConfigError(f"pricing scenario '{p.name}' is named twice",
                              field=f"{where}.name", source=source)
        seen.add(p.name)
        cool = _cooling(e, p.cooling, p.temperature, p.prices, p.it_power or e.it_power, base,
                        f"{where}.cooling", source)
        same = [name for name, c in out if c == cool]
        if same:
            raise ConfigError(f"prices the runs as '{same[0]}' does (the same definition)",
                              field=where, source=source)
        out.append((p.name, cool))
    return out


def _cooling(e: WorkloadEntry, cooling: str, temperature: str | None, prices: str | None,
             it_power: str, base: Path, field: str, source: str | None) -> dict[str, str]:
    """One pricing scenario's accounting settings, paths made absolute, checked now (errors
    name ``field``)."""
    from dispatchlab.energy.profit import cooling_setup

    out = {"cooling": cooling, "it_power": it_power}
    for key, text in (("cooling", cooling), ("temperature", temperature)):
        if text is not None and not text.startswith("gen:"):
            name, sep, suffix = text.partition(":") if key == "cooling" else (text, "", "")
            if (base / name).exists():
                text = str((base / name).resolve()) + sep + suffix
        if text is not None:
            out[key] = text
    if prices is not None:
        out["prices"] = prices
    try:
        cooling_setup(out["cooling"], _subst(out.get("temperature", ""), {"seed": 0}) or None,
                      out.get("prices"), it_power,
                      _subst_value(e.scenario, {"seed": 0}))
    except DispatchlabError as exc:
        own = getattr(exc, "field", None)  # prices, it_power, temperature or cooling
        if own in ("prices", "it_power", "temperature", "cooling"):
            text = str(exc).removeprefix(f"field '{own}': ")
            raise ConfigError(text, field=f"{field.rpartition('.')[0]}.{own}",
                              source=source) from None
        raise ConfigError(str(exc), field=field, source=source) from None
    return out


def _scenario(value: str | list[str], base: Path, field: str, source: str | None
              ) -> str | list[str]:
    """Scenario file paths made absolute (from the experiment's folder), or ``gen:`` specs;
    several are merged, as ``simulate --scenario A --scenario B`` does; checked now (with
    seed 0 standing for ``{seed}``)."""
    from dispatchlab.engine.scenario_gen import resolve_scenario

    texts = [value] if isinstance(value, str) else list(value)
    for i, text in enumerate(texts):
        if text.startswith("gen:"):
            continue
        try:
            text = str(resolve_source(text))
        except TraceError as exc:
            raise ConfigError(str(exc), field=f"{field}.scenario", source=source) from None
        path = Path(text).expanduser()
        if not path.is_absolute() and (base / path).exists():
            text = str((base / path).resolve())
        texts[i] = text
    try:
        resolve_scenario(_subst_value(texts, {"seed": 0}))
    except DispatchlabError as exc:
        raise ConfigError(str(exc), field=f"{field}.scenario", source=source) from None
    return texts[0] if isinstance(value, str) else texts


def _as_int(value: int | str | None, field: str, source: str | None) -> int | None:
    """A count after parameter substitution (a parameter may hold only integers here)."""
    if value is None or isinstance(value, int):
        return value
    raise ConfigError(f"needs an integer, got {value!r}", field=field, source=source)


def _stem(name: str) -> str:
    for suffix in (".gz", ".swf", ".csv", ".parquet"):
        name = name.removesuffix(suffix)
    return name


def _count_jobs(ref: WorkloadRef, field: str, source: str | None) -> tuple[int, int]:
    """Load the workload once, as a worker will: its job count and the most units a job
    asks."""
    from dispatchlab.workload.load import load_workload

    try:
        wl = load_workload(ref.path, **ref.load_kwargs())
    except DispatchlabError as exc:
        sub = getattr(exc, "field", None)
        where = (
            f"{field}.path" if "not found" in str(exc) or sub is None else f"{field}.options.{sub}"
        )
        raise ConfigError(str(exc), field=where, source=source) from None
    except TypeError as exc:
        raise ConfigError(
            f"reader rejected the options: {exc}", field=f"{field}.options", source=source
        ) from None
    if wl.n_jobs == 0:
        from dispatchlab.workload.load_report import no_jobs_reason

        raise ConfigError(f"the workload {ref.path} has no jobs: {no_jobs_reason(wl.meta)}",
                          field=field, source=source)
    return wl.n_jobs, int(wl.units.max())


def _check_composition(ref: WorkloadRef, d_spec: str, max_units: int, where: str,
                       source: str | None) -> None:
    """Refuse now a dispatcher whose family does not support the workload's scenario or
    jobs (as ``simulate`` would before the first event)."""
    from dispatchlab.dispatchers.registry import get_dispatcher
    from dispatchlab.engine.capabilities import check_composition
    from dispatchlab.engine.scenario_gen import resolve_scenario

    scen = resolve_scenario(_subst_value(ref.scenario, {"seed": 0}))
    try:
        check_composition(get_dispatcher(_subst(d_spec, {"seed": 0})),
                          scenario_kinds=scen.kinds() if scen is not None else set(),
                          power_cap=ref.power_cap, max_units=max_units)
    except ConfigError as exc:
        text = str(exc).removeprefix("field 'dispatcher': ")
        raise ConfigError(f"{where}: {text}", field="dispatchers", source=source) from None


def _check_job_power(workloads: Sequence[WorkloadItem], platforms: Sequence[PlatformItem],
                     seed: int, source: str | None) -> None:
    """Refuse now a ``job_power`` a workload × platform pair cannot give (a node model the
    platform lacks, a power column the workload lacks, a prediction file naming no job),
    and a power cap, fixed (``power_cap``) or varying (``power_cap`` rows of its
    ``scenario``), whose jobs have no power from anywhere, as ``simulate`` would before
    the first event."""
    from dispatchlab.engine.budget import JobColumnPower
    from dispatchlab.engine.scenario_gen import resolve_scenario
    from dispatchlab.platform.resolve import resolve_platform
    from dispatchlab.workload.load import load_workload
    from dispatchlab.workload.platform_for import platform_for

    checked: set[tuple[str, str]] = set()
    for w_field, _, _, ref, _, _, _ in workloads:
        ref = _seeded(replace(ref, cooling=None), seed)
        scen = resolve_scenario(ref.scenario) if ref.scenario is not None else None
        varying = scen is not None and "power_cap" in scen.kinds()
        if ("job_power" not in ref.settings and "job_power_fallback" not in ref.settings
                and ref.power_cap is None and not varying):
            continue
        wl = None
        for p_field, _, p_spec, _, _ in platforms:
            key = (repr(ref.identity()), p_spec)
            if key in checked:
                continue
            checked.add(key)
            wl = wl or load_workload(ref.path, **ref.load_kwargs())
            plat = platform_for(wl)[0] if p_spec == AUTO else resolve_platform(p_spec)
            try:
                model = ref.run_settings().simulate_kwargs(wl, plat)["power_model"]
            except DispatchlabError as exc:
                text = str(exc).removeprefix("field 'job_power': ")
                raise ConfigError(f"{text} ({p_field})", field=f"{w_field}.job_power",
                                  source=source) from None
            capped = ref.power_cap is not None or varying
            if capped and model is None and plat.power_table is None:
                try:  # the engine's default under a cap: the workload's power column
                    JobColumnPower(wl)
                except DispatchlabError as exc:
                    text = str(exc).removeprefix("field 'power': ")
                    if ref.power_cap is None:
                        text += "; the scenario's power_cap rows set a power cap"
                    cap_key = "power_cap" if ref.power_cap is not None else "scenario"
                    raise ConfigError(f"{text} ({p_field})", field=f"{w_field}.{cap_key}",
                                      source=source) from None


def _seeded(ref: WorkloadRef, seed: int) -> WorkloadRef:
    """Substitute ``{seed}`` in a generator's options and path."""
    if not (_names(ref.path) | _names_in(ref.options) | _names_in(ref.scenario)) & {"seed"}:
        return ref
    return replace(
        ref,
        path=_subst(ref.path, {"seed": seed}),
        options=_subst_value(ref.options, {"seed": seed}),
        scenario=_subst_value(ref.scenario, {"seed": seed}),
    )


# --- platforms and dispatchers ------------------------------------------------------------

PlatformItem = tuple[str, str, str, str | None, dict[str, Any]]


def _platforms(
    spec: ExperimentSpec, params: Mapping[str, list[Any]], base: Path, source: str | None
) -> Iterator[PlatformItem]:
    from dispatchlab.platform.resolve import resolve_platform

    for field, name, s, label, combo in _expanded(spec.platforms, "platforms", params):
        if s == AUTO:
            yield field, label, AUTO, None, combo
            continue
        candidate = Path(s).expanduser()
        if not candidate.is_absolute() and (base / candidate).exists():
            candidate = base / candidate
        digest = None
        if candidate.is_file():
            s = str(candidate.resolve())
            digest = file_digest(candidate)
            label = name or candidate.stem
        try:
            resolve_platform(s)
        except DispatchlabError as exc:
            raise ConfigError(str(exc), field=field, source=source) from None
        yield field, label, s, digest, combo


#: field, label, spec, parameters used, whether its runs may share a simulation across
#: pricing scenarios (the dispatcher does not read pricing inputs)
DispatcherItem = tuple[str, str, str, dict[str, Any], bool]


def _dispatchers(
    spec: ExperimentSpec, params: Mapping[str, list[Any]], source: str | None
) -> Iterator[DispatcherItem]:
    from dispatchlab.dispatchers.registry import get_dispatcher
    from dispatchlab.engine.capabilities import capabilities_of

    for field, _, s, label, combo in _expanded(spec.dispatchers, "dispatchers", params):
        try:
            disp = get_dispatcher(_subst(s, {"seed": 0}))
        except DispatchlabError as exc:
            raise ConfigError(
                str(exc).removeprefix("field 'dispatcher': "), field=field, source=source
            ) from None
        yield field, label, s, combo, not capabilities_of(disp).reads_pricing
