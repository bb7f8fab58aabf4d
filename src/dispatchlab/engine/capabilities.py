"""What a dispatcher family can be combined with, declared once per family and checked
before a run starts.

Each family's dispatcher class carries a :class:`Capabilities` record (class attribute
``capabilities``). :func:`check_composition` compares it with what a run asks for — nodes
leaving (``node_down``/``node_up``/``alive_nodes`` rows), a fixed or a varying power cap,
jobs of several units — and refuses a combination the family does not support with a
:class:`~dispatchlab.errors.ConfigError` naming the family and the missing capability,
before the first event (``simulate``, ``compare`` and ``run-experiment``, ``--dry-run``
included, call it). The other fields say how the family treats inputs every family can
run with: a desired-utilization profile (followed, or only measured), node power states
(switched by the dispatcher or not), malleable jobs (reshaped or run at their requested
size) and pricing inputs (read by the decisions or only used to price the schedule).
A dispatcher that declares nothing (a custom one) is assumed to support everything; the
engine still validates each of its decisions.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from typing import Any

from dispatchlab.errors import ConfigError

#: Scenario kinds that make nodes leave or come back.
NODE_KINDS = frozenset({"node_down", "node_up", "alive_nodes"})


@dataclass(frozen=True)
class Capabilities:
    """One family's declaration (see the module doc). The first four fields are
    requirements a run may have; the others describe behaviour and never refuse:
    ``oracle`` (the decisions read the jobs' actual run times: a what-if bound, flagged in
    the results) and ``chooses_leaving_nodes`` (the dispatcher picks which nodes leave or
    join through its ``choose_nodes`` hook) are read by the engine. ``own_simulator``:
    a family that runs in a simulator of its own, not in the engine, says here how to run
    it, and every engine run refuses it up front."""

    family: str = "custom"
    nodes_leaving: bool = True
    fixed_power_cap: bool = True
    varying_power_cap: bool = True
    multi_unit_jobs: bool = True
    follows_desired_utilization: bool = False
    switches_power_states: bool = False
    reshapes_malleable_jobs: bool = False
    reads_pricing: bool = False
    oracle: bool = False
    chooses_leaving_nodes: bool = False
    own_simulator: str = ""

    def describe(self) -> dict[str, Any]:
        """JSON-ready form (``dispatchlab dispatchers --json``)."""
        return asdict(self)


#: What a dispatcher that declares nothing is taken to support.
UNDECLARED = Capabilities()


def capabilities_of(dispatcher: object) -> Capabilities:
    """The dispatcher's declaration (its ``capabilities`` attribute), with the fields that
    may depend on its settings read from the dispatcher itself (:data:`INSTANCE_FIELDS`)."""
    caps = getattr(dispatcher, "capabilities", None)
    if not isinstance(caps, Capabilities):
        caps = UNDECLARED
    own = instance_fields(dispatcher)
    return replace(caps, reads_pricing=own["reads_pricing"], oracle=own["oracle"],
                   chooses_leaving_nodes=own["chooses_leaving_nodes"])


#: The fields a dispatcher answers itself (``reads_pricing`` and ``oracle`` attributes or
#: properties, a ``choose_nodes`` method), whatever its record says.
INSTANCE_FIELDS = ("reads_pricing", "oracle", "chooses_leaving_nodes")


def instance_fields(dispatcher: object) -> dict[str, bool]:
    """The :data:`INSTANCE_FIELDS` of ``dispatcher`` (a class gives its class-level answers
    when they are plain values)."""
    return {"reads_pricing": bool(getattr(dispatcher, "reads_pricing", False)),
            "oracle": bool(getattr(dispatcher, "oracle", False)),
            "chooses_leaving_nodes": callable(getattr(dispatcher, "choose_nodes", None))}


def required(scenario_kinds: set[str] | frozenset[str] = frozenset(),
             power_cap: float | None = None, max_units: int = 1) -> list[tuple[str, str]]:
    """What a run asks of its dispatcher: (capability field, how the run asks it)."""
    out: list[tuple[str, str]] = []
    rows = sorted(NODE_KINDS & set(scenario_kinds))
    if rows:
        out.append(("nodes_leaving", f"nodes leaving (scenario rows {', '.join(rows)})"))
    if power_cap is not None:
        out.append(("fixed_power_cap", f"a fixed power cap (--power-cap {power_cap:g} W)"))
    if "power_cap" in scenario_kinds:
        out.append(("varying_power_cap", "a varying power cap (scenario power_cap rows)"))
    if max_units > 1:
        out.append(("multi_unit_jobs", f"jobs of several units (up to {max_units})"))
    return out


def check_composition(dispatcher: object, *, scenario_kinds: set[str] | frozenset[str] = (
        frozenset()), power_cap: float | None = None, max_units: int = 1) -> None:
    """Refuse (``ConfigError``) a run whose needs the dispatcher's family does not declare."""
    caps = capabilities_of(dispatcher)
    if caps.own_simulator:
        name = getattr(dispatcher, "name", type(dispatcher).__name__)
        raise ConfigError(f"dispatcher '{name}' (family {caps.family}) runs in its own "
                          f"simulator, not in the engine: {caps.own_simulator}",
                          field="dispatcher")
    missing = [text for name, text in required(scenario_kinds, power_cap, max_units)
               if not getattr(caps, name)]
    if missing:
        name = getattr(dispatcher, "name", type(dispatcher).__name__)
        raise ConfigError(
            f"dispatcher '{name}' (family {caps.family}) does not support "
            f"{'; '.join(missing)}: choose another dispatcher or drop that input "
            "(docs/composition.md lists what each family supports)", field="dispatcher")
