"""Slurm's spellings of times, durations and limits, one value at a time or a column at once.

Slurm writes durations as ``[days-]hours:minutes:seconds`` (``1-02:03:04``, ``00:05:00``),
CPU times as ``minutes:seconds.millis`` (``05:03.120``), and accepts as time limits the
``sbatch --time`` forms ``minutes``, ``minutes:seconds``, ``hours:minutes:seconds``,
``days-hours``, ``days-hours:minutes`` and ``days-hours:minutes:seconds``. A limit may be
``UNLIMITED`` (or ``INFINITE``) or ``Partition_Limit`` (the partition's, unknown to the log);
a negative duration prints as ``INVALID``. Date-times are ``YYYY-MM-DDTHH:MM:SS`` in the
local time of the machine that wrote them (``SLURM_TIME_FORMAT`` may change that; an ISO
offset or ``Z``, and Unix seconds, are understood too), and ``Unknown`` / ``None`` when
the event has not happened.

Public API: :func:`parse_duration` (:func:`duration_seconds` keeps a fraction),
:func:`parse_limit`, :func:`parse_limit_minutes`, :func:`parse_time`, their column
versions :func:`duration_column`,
:func:`limit_column`, :func:`time_column`, and :func:`machine_timezone` (the zone local
times written on this machine are in). Scalars raise :class:`SpellingError` (a
``ValueError``) on anything else; columns return a mask of the unreadable rows so the
reader can name the first one's line.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from dispatchlab.arrays import BoolArray, FloatArray, IntArray

#: Spellings of "no limit".
UNLIMITED = frozenset({"UNLIMITED", "INFINITE", "-1"})
#: Spellings of "the partition's limit" (not recorded in the log).
PARTITION_LIMIT = frozenset({"Partition_Limit", "PARTITION_LIMIT"})
#: Spellings of "has not happened" in a date-time field.
NO_TIME = frozenset({"Unknown", "unknown", "None", "", "N/A", "0"})

_DURATION = re.compile(
    r"^(?:(?P<d>\d+)-)?(?:(?P<a>\d+)(?::(?P<b>\d+))?(?::(?P<c>\d+))?)(?P<frac>\.\d+)?$")


class SpellingError(ValueError):
    """A value that is none of Slurm's spellings for its kind."""


def parse_duration(text: str) -> int:
    """Seconds of a Slurm duration (rounded up when fractional); see the module doc and
    :func:`duration_seconds`."""
    return math.ceil(duration_seconds(text))


def duration_seconds(text: str) -> float:
    """Seconds of a Slurm duration, a fraction of a second kept (``00:00:01.5`` → 1.5).

    With a day part the rest reads ``hours[:minutes[:seconds]]`` (``days-hours`` forms);
    without one, one number is minutes, two ``minutes:seconds``, three
    ``hours:minutes:seconds``. ``UNLIMITED``, ``Partition_Limit`` and ``INVALID`` are not
    durations: use :func:`parse_limit` for limits.
    """
    s = text.strip()
    m = _DURATION.match(s)
    if m is None:
        raise SpellingError(f"not a Slurm duration: {text!r} (expected [days-]hh:mm:ss, "
                            "mm:ss or minutes)")
    d, a, b, c = (int(g) if g is not None else None for g in m.group("d", "a", "b", "c"))
    assert a is not None
    if d is not None:  # days-hours[:minutes[:seconds]]
        parts = (d * 24 + a, b or 0, c or 0)
    elif c is not None:  # hours:minutes:seconds
        parts = (a, b or 0, c)
    elif b is not None:  # minutes:seconds
        parts = (0, a, b)
    else:  # minutes
        parts = (0, a, 0)
    hours, minutes, seconds = parts
    if (d is not None or c is not None) and minutes >= 60:
        raise SpellingError(f"minutes must be below 60 in {text!r}")
    if (b is not None or c is not None) and seconds >= 60:
        raise SpellingError(f"seconds must be below 60 in {text!r}")
    frac = m.group("frac")
    return hours * 3600 + minutes * 60 + seconds + (float(frac) if frac else 0.0)


def parse_limit(text: str) -> int | None:
    """Seconds of a time limit in duration form (sacct's ``Timelimit``); None for
    ``UNLIMITED`` and ``Partition_Limit``."""
    s = text.strip()
    if s in UNLIMITED or s in PARTITION_LIMIT:
        return None
    return parse_duration(s)


def parse_limit_minutes(text: str) -> int | None:
    """Seconds of a time limit written as a whole number of **minutes** (the job completion
    log's ``TimeLimit=60``) or in duration form; None for ``UNLIMITED`` and
    ``Partition_Limit``."""
    s = text.strip()
    if s.isdigit():
        return int(s) * 60
    return parse_limit(s)


def parse_time(text: str, timezone: str = "UTC") -> int | None:
    """Unix seconds of a Slurm date-time, read in ``timezone`` unless it carries an offset;
    None for ``Unknown`` / ``None`` / empty. Unix seconds (``SLURM_TIME_FORMAT=%s``) pass
    through."""
    s = text.strip()
    if s in NO_TIME:
        return None
    if s.isdigit():
        return int(s)
    try:
        moment = datetime.fromisoformat(s.replace(" ", "T", 1))
    except ValueError:
        raise SpellingError(f"not a Slurm date-time: {text!r} (expected "
                            "YYYY-MM-DDTHH:MM:SS, Unknown or None)") from None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=ZoneInfo(timezone))
    return int(moment.timestamp())


def machine_timezone() -> str:
    """This machine's IANA time zone (``TZ``, else the zone ``/etc/localtime`` links to,
    else ``/etc/timezone``; ``UTC`` when none names a known zone): the zone in which
    Slurm daemons running here write their local times."""
    names = [os.environ.get("TZ", "").lstrip(":")]
    link = os.path.realpath("/etc/localtime")
    names.append(link.split("zoneinfo/", 1)[1] if "zoneinfo/" in link else "")
    try:
        with open("/etc/timezone") as fh:
            names.append(fh.read().strip())
    except OSError:
        pass
    for name in names:
        if not name:
            continue
        try:
            ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            continue
        return name
    return "UTC"


def _arrow(values: object) -> pa.ChunkedArray:
    """Values as one arrow string column, nulls as ``""`` (Python values stripped of
    surrounding blanks; arrow columns are taken as read)."""
    if isinstance(values, pa.ChunkedArray):
        arr = values
    elif isinstance(values, pa.Array):
        arr = pa.chunked_array([values])
    else:
        items: Iterable[Any] = (values.astype(object).where(values.notna(), "")
                                if isinstance(values, pd.Series) else values)  # type: ignore[assignment]
        arr = pa.chunked_array([pa.array([str(v).strip() for v in items], pa.string())])
    if arr.type != pa.string():
        arr = pc.cast(arr, pa.string())
    return pc.fill_null(arr, "") if arr.null_count else arr


def _mask(values: pa.ChunkedArray | pa.Array) -> BoolArray:
    return np.asarray(pc.fill_null(values, False).to_numpy(zero_copy_only=False), dtype=bool)


def _among(text: pa.ChunkedArray, words: frozenset[str]) -> BoolArray:
    """Rows equal to one of a few ``words`` (a few comparisons: much cheaper than
    ``is_in``'s hash set on a million rows)."""
    out = np.zeros(len(text), bool)
    for word in sorted(words):
        out |= _mask(pc.equal(text, word))
    return out


def _ints(values: pa.ChunkedArray | pa.Array) -> IntArray:
    filled = pc.fill_null(pc.cast(values, pa.int64()), 0)
    return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=np.int64)


def _parse_rest(text: pa.ChunkedArray, todo: BoolArray, parse: object) -> tuple[
        FloatArray, BoolArray]:
    """Values of the rows in ``todo``, each distinct spelling parsed once in Python."""
    out = np.full(len(text), np.nan)
    bad = np.zeros(len(text), bool)
    rows = np.flatnonzero(todo)
    if not len(rows):
        return out, bad
    sub = pc.take(text, pa.array(rows))
    codes, uniques = pd.factorize(pd.Series(sub.to_pylist(), dtype=object))
    vals = np.full(len(uniques), np.nan)
    bad_u = np.zeros(len(uniques), bool)
    for k, u in enumerate(uniques):
        try:
            v = parse(u)  # type: ignore[operator]
        except SpellingError:
            bad_u[k] = True
            continue
        vals[k] = np.nan if v is None else v
    out[rows] = vals[codes]
    bad[rows] = bad_u[codes]
    return out, bad


def duration_column(values: object) -> tuple[FloatArray, BoolArray]:
    """Seconds of each duration (NaN where empty; a fraction of a second kept, for the
    reader to round and count) and a mask of unreadable values.

    Each distinct spelling is parsed once (a million ``Elapsed`` values hold far fewer
    distinct ones): the usual ``[d-]hh:mm:ss`` form column-wise, any other in Python.
    """
    encoded = pc.dictionary_encode(_arrow(values)).combine_chunks()
    words = encoded.dictionary
    index = np.asarray(pc.fill_null(encoded.indices, 0).to_numpy(zero_copy_only=False),
                       dtype=np.int64)
    m = pc.extract_regex(words, r"^(?:(?P<d>\d+)-)?(?P<h>\d+):(?P<m>[0-5]\d):(?P<s>[0-5]\d)$")
    hit = _mask(pc.is_valid(m))
    day = pc.struct_field(m, "d")
    secs = (_ints(pc.if_else(pc.equal(day, ""), "0", day)) * 86400
            + _ints(pc.struct_field(m, "h")) * 3600 + _ints(pc.struct_field(m, "m")) * 60
            + _ints(pc.struct_field(m, "s"))).astype(np.float64)
    empty = _mask(pc.equal(words, ""))
    rest, bad = _parse_rest(pa.chunked_array([words]), ~hit & ~empty, duration_seconds)
    out = np.where(hit, secs, rest)
    out[empty] = np.nan
    if not len(words):
        return np.full(len(index), np.nan), np.zeros(len(index), bool)
    return out[index], bad[index]


def limit_column(values: object) -> tuple[FloatArray, BoolArray, BoolArray, BoolArray]:
    """Seconds of each limit (NaN when none applies), and masks: unlimited,
    partition limit, unreadable. Plain integers are durations in minutes, as Slurm reads
    them."""
    text = _arrow(values)
    unlimited = _among(text, UNLIMITED)
    partition = _among(text, PARTITION_LIMIT)
    blank = pc.if_else(pa.chunked_array([pa.array(unlimited | partition)]), "", text)
    seconds, bad = duration_column(blank)
    return seconds, unlimited, partition, bad


def time_column(values: object, timezone: str = "UTC") -> tuple[
        FloatArray, BoolArray, BoolArray]:
    """Unix seconds of each date-time (NaN for ``Unknown``/``None``/empty), a mask of
    unreadable values (or local times inside a DST gap) and one of local times that a DST
    change made ambiguous (read as the first, summer-time, instant). Values with an
    offset or ``Z`` keep their own; Unix seconds pass through."""
    text = _arrow(values)
    n = len(text)
    missing = _among(text, NO_TIME)
    naive = pc.strptime(text, format="%Y-%m-%dT%H:%M:%S", unit="s", error_is_null=True)
    plain = _mask(pc.is_valid(naive)) & ~missing
    out = np.full(n, np.nan)
    bad = np.zeros(n, bool)
    ambiguous = np.zeros(n, bool)
    if plain.any():
        early, bad_p, ambiguous = _localize(naive, timezone)
        bad |= plain & bad_p
        ambiguous &= plain
        out[plain] = early[plain]
    other = ~missing & ~plain
    digits = np.zeros(n, bool)
    if other.any():
        digits = other & _mask(pc.match_substring_regex(text, r"^\d{5,}$"))
    if digits.any():
        out[digits] = _ints(pc.if_else(pa.chunked_array([pa.array(digits)]), text, "0"))[digits]
    rest, bad_rest = _parse_rest(text, ~missing & ~plain & ~digits,
                                 lambda s: parse_time(s, timezone))
    todo = ~missing & ~plain & ~digits
    out[todo] = rest[todo]
    bad |= bad_rest
    out[bad] = np.nan
    return out, bad, ambiguous


def in_dst_gap(text: str, timezone: str) -> bool:
    """True when ``text`` is a valid naive date-time that does not exist in ``timezone``
    (the hour the clocks skip when daylight-saving time begins)."""
    from datetime import UTC, datetime
    from zoneinfo import ZoneInfo

    try:
        naive = datetime.strptime(text.strip(), "%Y-%m-%dT%H:%M:%S")
        zone = ZoneInfo(timezone)
    except (ValueError, KeyError):
        return False
    back = naive.replace(tzinfo=zone).astimezone(UTC).astimezone(zone).replace(tzinfo=None)
    return back != naive


def _localize(naive: pa.ChunkedArray, timezone: str) -> tuple[IntArray, BoolArray, BoolArray]:
    """Unix seconds of naive local timestamps, a mask of those inside a DST gap (which do
    not exist) and one of those a DST change made ambiguous (read as the earlier)."""
    n = len(naive)
    if timezone == "UTC":
        return _seconds(naive, "UTC", "earliest"), np.zeros(n, bool), np.zeros(n, bool)
    try:  # the usual case: no local time in a DST gap
        early = _seconds(naive, timezone, "earliest", "raise")
        late = _seconds(naive, timezone, "latest", "raise")
        return early, np.zeros(n, bool), early != late
    except pa.ArrowInvalid:
        pass
    early = _seconds(naive, timezone, "earliest")
    late = _seconds(naive, timezone, "latest")
    local = _seconds(naive, "UTC", "earliest")
    back = pc.local_timestamp(pc.assume_timezone(naive, timezone=timezone,
                                                 ambiguous="earliest", nonexistent="earliest"))
    gap = local != _seconds(back, "UTC", "earliest")
    return early, gap, (early != late) & ~gap


def _seconds(naive: pa.ChunkedArray, timezone: str, choice: str,
             nonexistent: str | None = None) -> IntArray:
    """Unix seconds of naive timestamps read in ``timezone`` (DST: ``choice``)."""
    if timezone != "UTC":
        naive = pc.assume_timezone(naive, timezone=timezone, ambiguous=choice,
                                   nonexistent=nonexistent or choice)
    return _ints(pc.cast(naive, pa.int64()))
