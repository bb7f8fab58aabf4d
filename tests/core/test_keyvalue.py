"""The one ``key=value`` reader shared by platform, generator, scenario and dispatcher
specs (issue 26): same pairs back, errors naming the bad item."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dispatchlab.errors import ConfigError, WorkloadError
from dispatchlab.keyvalue import (
    convert,
    parse_bool,
    parse_float,
    parse_int,
    parses,
    split_key_values,
)

KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=8)
VALUES = st.text(alphabet="abcxyz0123456789.-/+", max_size=8)


@given(st.dictionaries(KEYS, VALUES, max_size=6))
def test_round_trip(pairs: dict[str, str]) -> None:
    text = ",".join(f"{k}={v}" for k, v in pairs.items())
    assert split_key_values(text, field="spec") == pairs
    spaced = " , ".join(f" {k} = {v} " for k, v in pairs.items())
    assert list(split_key_values(spaced, field="spec").items()) == list(pairs.items())


def test_separators_and_empty_items() -> None:
    assert split_key_values("a=1&b=2,,c=", field="s", separators=",&") == {
        "a": "1", "b": "2", "c": ""}
    with pytest.raises(ConfigError, match="expected key=value, got ''"):
        split_key_values("a=1,", field="s", skip_empty=False)


@pytest.mark.parametrize(("text", "field", "message"), [
    ("a=1,b", "spec", "expected key=value, got 'b'"),
    ("=3", "spec", "expected key=value, got '=3'"),
    ("a=1,b=2,a=3", "a", "key 'a' given twice"),
])
def test_errors_name_the_item(text: str, field: str, message: str) -> None:
    with pytest.raises(WorkloadError) as err:
        split_key_values(text, field="spec", error=WorkloadError, context="gen:x: ")
    assert err.value.field == field
    assert f"gen:x: {message}" in str(err.value)


def test_key_normalised_before_the_twice_check() -> None:
    with pytest.raises(ConfigError, match="key 'cores' given twice"):
        split_key_values("CORES=1,cpu=2", field="p",
                         key=lambda k: {"cpu": "cores"}.get(k.lower(), k.lower()))


@given(st.integers())
def test_parse_int(n: int) -> None:
    assert parse_int(str(n)) == n


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_parse_float(x: float) -> None:
    assert parse_float(repr(x)) == x


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "x", ""])
def test_parse_float_refuses(text: str) -> None:
    with pytest.raises(ValueError, match="number"):
        parse_float(text)


@pytest.mark.parametrize(("text", "value"), [
    ("true", True), ("Yes", True), ("1", True), (" on ", True),
    ("false", False), ("NO", False), ("0", False), ("off", False)])
def test_parse_bool(text: str, value: bool) -> None:
    assert parse_bool(text) is value


def test_convert_names_key_and_value() -> None:
    with pytest.raises(ConfigError) as err:
        convert("jobs", "many", parse_int)
    assert err.value.field == "jobs"
    assert "bad value 'many': expected a whole number" in str(err.value)
    assert convert("ok", "maybe?", str) == "maybe?"
    with pytest.raises(ConfigError, match="true or false"):
        convert("flag", "perhaps", parse_bool)


@pytest.mark.parametrize(("parser", "text", "ok"), [
    (float, "1e3", True), (float, "-0.5", True), (float, "x", False), (float, "", False),
    (int, "12", True), (int, "1.5", False), (int, "q1", False)])
def test_parses(parser: type, text: str, ok: bool) -> None:
    assert parses(parser, text) is ok
