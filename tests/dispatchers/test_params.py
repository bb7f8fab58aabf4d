"""``Parametrized``: parameters read back from the constructor's signature, and the one
``describe()`` with its three declarations (merged, omitted at default, attributes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dispatchlab.dispatchers.allocators import ALLOCATORS
from dispatchlab.dispatchers.dardis.shutdown import DardisShutdown
from dispatchlab.dispatchers.rule_based.orderings import ORDERINGS
from dispatchlab.dispatchers.rule_based.policy import Policy
from dispatchlab.dispatchers.rule_based.selection import SELECTIONS, get_selection
from dispatchlab.params import Attributes, Parametrized


@dataclass(frozen=True)
class Limits(Parametrized):
    runs: int = 3
    seconds: float | None = None


class Part(Parametrized):
    name = "part"
    omitted_at_default = ("depth",)

    def __init__(self, depth: int | None = None, *args: int, **kwargs: int) -> None:
        self.depth = depth
        self._seen = 0  # run state


class Whole(Parametrized):
    merged_params = ("limits",)
    described_attributes: ClassVar[Attributes] = {
        "family": "kind.upper", "group": {"first": "part.depth", "n": "limits.runs"}}
    kind = type("Kind", (), {"upper": "W"})

    def __init__(self, part: Part, limits: Limits, name: str = "whole") -> None:
        self.part = part
        self.limits = limits
        self.name = name
        self.started = 0  # public run state: not a parameter, never described


class Forgetful(Parametrized):
    def __init__(self, size: int) -> None:
        self._size = size


def test_params_from_the_signature_and_deep_parts() -> None:
    whole = Whole(Part(4), Limits(runs=5))
    assert whole.get_params(deep=False) == {"part": whole.part, "limits": whole.limits,
                                            "name": "whole"}
    deep = whole.get_params()
    assert deep["part__depth"] == 4 and deep["limits__runs"] == 5
    assert Part(2).get_params() == {"depth": 2}  # *args, **kwargs are not parameters


def test_describe_with_its_declarations() -> None:
    whole = Whole(Part(None), Limits(runs=5))
    whole.started = 99
    assert whole.describe() == {"name": "whole", "part": {"name": "part"}, "runs": 5,
                                "seconds": None, "family": "W",
                                "group": {"first": None, "n": 5}}
    assert Part(7).describe() == {"name": "part", "depth": 7}
    assert Limits().describe() == {"runs": 3, "seconds": None}  # no name: none recorded


def test_a_parameter_not_stored_is_named() -> None:
    with pytest.raises(TypeError, match=r"Forgetful .* parameter 'size' as self.size"):
        Forgetful(3).describe()


def test_a_subclass_describes_the_base_parameters_it_fixes() -> None:
    doc = DardisShutdown(0.3).describe()
    assert doc["rate"] == 3.0 and doc["full_window"] is False  # Dardis's, fixed here
    assert "rate" not in DardisShutdown(0.3).get_params()  # not its own parameter
    assert list(doc)[-1] == "off_fraction"  # the base's parameters first


_DEPTHS = st.one_of(st.none(), st.integers(1, 500))


@given(order=st.sampled_from(sorted(ORDERINGS)), select=st.sampled_from(sorted(SELECTIONS)),
       alloc=st.sampled_from(sorted(ALLOCATORS)), depth=_DEPTHS,
       estimate=st.sampled_from(["walltime", "real", "heuristic", "heuristic-request"]))
def test_policy_description_and_clone(order: str, select: str, alloc: str,
                                      depth: int | None, estimate: str) -> None:
    if select == "strict":
        depth = None
    policy = Policy(order, get_selection(select, depth), alloc, estimate)
    doc = policy.describe()
    assert doc["ordering"] == {"name": order}
    assert doc["allocator"] == {"name": ALLOCATORS[alloc].name}
    assert doc["selection"] == {"name": SELECTIONS[select].name,
                                **({} if depth is None else {"depth": depth})}
    est = {"name": estimate} if not estimate.startswith("heuristic") else {
        "name": estimate, "history": 2, **({"key": "request"} if "request" in estimate else {})}
    assert doc["estimate"] == est
    assert set(doc) == {"name", "ordering", "selection", "allocator", "estimate"}
    assert Policy(**policy.get_params(deep=False)).describe() == doc
