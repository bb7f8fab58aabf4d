"""The shared reading of ``key=value`` spec values (cp=, dec=, dardis=, offline=)."""

from __future__ import annotations

import pytest

from dispatchlab.dispatchers.spec_values import convert_field, sorted_spelling
from dispatchlab.errors import ConfigError


@pytest.mark.parametrize("raw, kind, value", [
    ("6", int, 6), ("6", "int", 6), ("0.5", "float | None", 0.5), ("auto", "float | None", None),
    ("Yes", bool, True), ("off", "bool", False), ("wait+tardiness", "tuple[str, ...]",
                                                  ("wait", "tardiness")),
    (" nodes ", str, "nodes"),
])
def test_values(raw: str, kind: object, value: object) -> None:
    assert convert_field("k", raw, kind) == value


@pytest.mark.parametrize("raw, kind, message", [
    ("many", int, "is not a number"), ("1.5x", "float", "is not a number"),
    ("maybe", bool, "yes/no"), ("none", int, "is not a number"),
])
def test_bad_values_name_the_key(raw: str, kind: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as err:
        convert_field("retries", raw, kind)
    assert err.value.field == "retries"


def test_sorted_spelling_puts_the_head_first() -> None:
    assert sorted_spelling({"retries": "6", "dardis": "dardis70", "depth": "8"}, "dardis") \
        == "dardis=dardis70,depth=8,retries=6"
