"""Read a delimited text table (``|``-separated sacct exports) column-wise, all as strings,
knowing each row's line in the file.

Arrow's multi-threaded CSV reader does the parsing; rows whose field count differs from
the header's are found again by an exact pass that names their lines (an error, or
skipped and counted).
"""

from __future__ import annotations

import gzip
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pv

from dispatchlab.arrays import IntArray
from dispatchlab.errors import WorkloadError
from dispatchlab.input_files import decode_utf8
from dispatchlab.input_files import read_bytes as input_bytes


@dataclass
class DelimitedTable:
    """The columns (arrow strings, by header name), each row's line, bad lines skipped."""

    table: pa.Table
    lines: IntArray
    bad_lines: int
    names: list[str]


def read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped when it is gzip (by its magic, not its name), checked to
    be UTF-8 text (a bad byte is an error naming its line), without a byte-order mark."""
    def fail(why: str) -> WorkloadError:
        return WorkloadError(why, source=str(path))

    data = input_bytes(path, fail, limit=None)
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (EOFError, OSError) as exc:
            raise WorkloadError(f"damaged gzip data ({exc})", source=str(path)) from None
    decode_utf8(data, fail)
    if data[:3] == b"\xef\xbb\xbf":  # a UTF-8 byte-order mark would hide the first column
        data = data[3:]
    return data


def read_delimited(path: Path, delimiter: str, *, skip_bad_lines: bool = False,
                   data: bytes | None = None,
                   columns: Sequence[str] | None = None) -> DelimitedTable:
    """The table of ``path`` (first non-blank line = header, or ``columns`` names them
    when the file has none); a trailing delimiter on every line (sacct ``--parsable``) is
    allowed."""
    raw = read_bytes(path) if data is None else data
    lead = len(raw) - len(raw.lstrip(b"\r\n"))  # blank lines before the header
    head = raw.count(b"\n", 0, lead)  # 0-based line of the header
    cut = raw.find(b"\n", lead)
    first = raw[lead:len(raw) if cut < 0 else cut + 1].decode("utf-8", "replace")
    if columns is not None:  # no header: the first line is a record
        body_at, head = lead, head - 1
        header = delimiter.join(columns)
        if first.rstrip("\r\n").endswith(delimiter) and (
                first.count(delimiter) == len(columns)):
            header += delimiter  # sacct --parsable: a delimiter ends every line
    else:
        body_at = len(raw) if cut < 0 else cut + 1
        header = first.rstrip("\r\n")
    if not header.strip():
        raise WorkloadError("empty file: no header line", source=str(path))
    names = header.split(delimiter)
    trailing = len(names) > 1 and names[-1] == ""
    if trailing:
        names = names[:-1]
    if len(set(names)) != len(names) or any(not n.strip() for n in names):
        where = "the column names given" if columns is not None else "header line"
        raise WorkloadError(f"{where} has empty or repeated column names: {header!r}",
                            source=str(path), line=None if columns is not None else head + 1,
                            field="columns" if columns is not None else None)
    column_names = [*names, "__trailing__"] if trailing else names
    invalid: list[str] = []

    def on_invalid(row: pv.InvalidRow) -> str:
        invalid.append(row.text)
        return "skip"

    body = memoryview(raw)[body_at:]  # no copy of a large file
    if re.search(rb"\S", body) is None:  # a header and no record
        table = pa.table({c: pa.array([], pa.string()) for c in column_names})
    else:
        try:
            table = pv.read_csv(
                pa.BufferReader(pa.py_buffer(body)),
                read_options=pv.ReadOptions(column_names=column_names),
                parse_options=pv.ParseOptions(delimiter=delimiter, quote_char=False,
                                              invalid_row_handler=on_invalid),
                convert_options=pv.ConvertOptions(
                    column_types={c: pa.string() for c in column_names},
                    strings_can_be_null=False, quoted_strings_can_be_null=False))
        except pa.ArrowInvalid as exc:
            raise WorkloadError(f"unreadable table ({exc})", source=str(path)) from None
    blank_inside = (raw.find(b"\n\n", body_at) >= 0 or raw.find(b"\n\r\n", body_at) >= 0
                    or raw.startswith((b"\n", b"\r\n"), body_at))
    if blank_inside:  # find each row's line
        lines = _nonblank_lines(raw[body_at:]) + head + 2
    else:
        lines = np.arange(table.num_rows + len(invalid), dtype=np.int64) + head + 2
    bad_lines = 0
    if invalid:
        bad = _bad_lines(raw, delimiter, len(column_names), has_header=columns is None)
        if not skip_bad_lines:
            lineno, fields = bad[0]
            raise WorkloadError(f"expected {len(names)} '{delimiter}'-separated fields as in "
                                f"the {'header' if columns is None else 'columns given'}, "
                                f"found {fields - trailing} (truncated or joined line?)",
                                source=str(path), line=lineno)
        bad_lines = len(bad)
        lines = lines[~np.isin(lines, np.array([b[0] for b in bad], np.int64))]
    if trailing:
        table = table.drop_columns(["__trailing__"])
    if len(lines) != table.num_rows:  # cannot happen unless the two passes disagree
        raise WorkloadError(f"read {table.num_rows} rows but counted {len(lines)} lines",
                            source=str(path))
    return DelimitedTable(table=table, lines=lines, bad_lines=bad_lines, names=names)


def _nonblank_lines(body: bytes) -> IntArray:
    """0-based numbers of the non-blank lines of ``body``."""
    buf = np.frombuffer(body, np.uint8)
    ends = np.flatnonzero(buf == 10)
    starts = np.r_[0, ends + 1]
    stops = np.r_[ends, len(body)]
    width = stops - starts
    cr = (width > 0) & (buf[np.clip(stops - 1, 0, max(len(body) - 1, 0))] == 13)
    return np.flatnonzero((width - cr) > 0).astype(np.int64)


def _bad_lines(raw: bytes, delimiter: str, expected: int,
               has_header: bool = True) -> list[tuple[int, int]]:
    """(line, fields found) of every non-blank line after the header with another count."""
    out: list[tuple[int, int]] = []
    seen_header = not has_header
    for lineno, line in enumerate(raw.decode("utf-8", "replace").split("\n"), start=1):
        text = line.rstrip("\r")
        if not text:
            continue
        if not seen_header:
            seen_header = True
            continue
        fields = text.count(delimiter) + 1
        if fields != expected:
            out.append((lineno, fields))
    return out
