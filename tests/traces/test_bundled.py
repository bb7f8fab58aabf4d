"""The bundled real trace slice and its machine (``traces/bundled.py``), which the demo, the
composition matrix and the public module for dispatcher authors share."""

from __future__ import annotations

import numpy as np

from dispatchlab.cli.demo_cmd import demo_trace
from dispatchlab.platform.resolve import resolve_platform
from dispatchlab.traces.bundled import SAMPLE_PLATFORM, sample_trace
from dispatchlab.workload import load_swf
from dispatchlab.workload.platform_for import platform_for


def test_the_sample_is_the_kth_slice_on_its_own_machine() -> None:
    path = sample_trace()
    assert path.is_file() and path.name == "KTH-SP2-1996-2.1-cln.slice.swf.gz"
    assert demo_trace() == path
    wl = load_swf(path)
    assert len(wl.submit) == 5000
    header, _ = platform_for(wl)  # the log's MaxNodes / MaxProcs
    spec = resolve_platform(SAMPLE_PLATFORM)
    assert np.array_equal(spec.capacity, header.capacity)
    assert spec.resources == header.resources
