"""``dardis=<preset>,key=value,...`` dispatcher specs: a DARDIS preset with its protocol
parameters changed, for experiment files and ``-d`` options, e.g.
``dardis=hybrid-dardis70,last_resort=nodes`` or ``dardis=dardis-throughput,retries=6``
or ``dardis=hybrid-dardis70,planner=multi,cooling=air,temperature=summer,prices=cheap``.

Keys: ``retries`` (windows after the first), ``last_resort`` (``machine`` | ``nodes``),
``depth`` (backfilling depth), ``slot`` (seconds), ``full_window`` (the thesis's whole
backfilling window; not for the shutdown presets) and, for the hybrid presets,
``threshold``, ``offset_perc``, ``planner`` (``alg5`` | ``multi`` | ``delay`` | ``fifo``)
and the search planners' profit model and limits: ``cooling`` (``air`` | ``hybrid`` |
CSV), ``temperature`` (``summer`` | ``winter`` | FILE; default the run's scenario),
``prices`` (``cheap`` | ``expensive`` | ``K1:K2``), ``budget`` (heuristic runs / delay
iterations per day) and ``seed`` (of the season profile and the searches).
"""

from __future__ import annotations

from typing import Any

from dispatchlab.dispatchers.base import Dispatcher
from dispatchlab.dispatchers.spec_values import convert_field, sorted_spelling
from dispatchlab.errors import ConfigError

#: key → type of its value
_KEYS: dict[str, type] = {"retries": int, "depth": int, "slot": int, "full_window": bool,
                          "last_resort": str, "threshold": float, "offset_perc": float,
                          "planner": str, "cooling": str, "temperature": str,
                          "prices": str, "budget": int, "seed": int}


def parse_dardis_spec(spec: dict[str, str]) -> Dispatcher | None:
    """A DARDIS preset with changed parameters; None without a ``dardis`` key."""
    if "dardis" not in spec:
        return None
    from dispatchlab.dispatchers.dardis.presets import HYBRID, PRESETS

    name = spec["dardis"].strip()
    factories = {k: f for k, (f, _) in {**PRESETS, **HYBRID}.items()
                 if not k.startswith("rb-")}
    if name not in factories:
        raise ConfigError(f"dardis: '{name}' is not a DARDIS preset (known: "
                          f"{', '.join(sorted(factories))})", field="dardis")
    changes: dict[str, Any] = {}
    for key, raw in spec.items():
        if key == "dardis":
            continue
        if key not in _KEYS:
            raise ConfigError(f"unknown DARDIS parameter '{key}' (known: "
                              f"{', '.join(sorted(_KEYS))})", field=key)
        changes[key] = convert_field(key, raw, _KEYS[key])
    label = ",".join([name, *(f"{k}={spec[k].strip()}" for k in sorted(changes))])
    try:
        return factories[name](**changes, name=label)  # type: ignore[call-arg]
    except TypeError as exc:
        bad = str(exc).rsplit(" ", 1)[-1].strip("'")
        raise ConfigError(f"DARDIS preset '{name}' takes no parameter {bad}",
                          field=bad) from None
    except ConfigError:
        raise  # already names its field (planner, budget, ...)
    except ValueError as exc:
        raise ConfigError(f"dardis={name}: {exc}", field="dardis") from None


def canonical_dardis_spec(spec: dict[str, str]) -> str | None:
    """One spelling for a ``dardis=`` spec: the preset alone when nothing changes, else
    ``dardis=<preset>`` and the changes by key; None without a ``dardis`` key."""
    if "dardis" not in spec:
        return None
    if len(spec) == 1:
        return spec["dardis"].strip()
    return sorted_spelling(spec, "dardis")
