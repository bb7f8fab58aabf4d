"""Workloads: jobs as columns, read from SWF, Eurora batches, tables or generators.

Names are imported on first use (PEP 562): reading an SWF trace must not import pandas.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from dispatchlab.lazy import lazy_exports

__all__ = [
    "EuroraOptions",
    "Queue",
    "SwfOptions",
    "Workload",
    "detect_format",
    "generate",
    "list_eurora_batches",
    "list_generators",
    "load_csv",
    "load_eurora",
    "load_parquet",
    "load_power_predictions",
    "load_swf",
    "load_system_queues",
    "load_workload",
    "save_workload",
    "trace_info",
    "write_csv",
    "write_parquet",
    "write_schedule_swf",
    "write_swf",
]

__getattr__, __dir__ = lazy_exports(__name__, {
    "EuroraOptions": "eurora", "list_eurora_batches": "eurora", "load_eurora": "eurora",
    "load_power_predictions": "eurora", "load_system_queues": "eurora",
    "generate": "generators", "list_generators": "generators",
    "detect_format": "load", "load_workload": "load", "save_workload": "load",
    "load_csv": "native", "load_parquet": "native", "write_csv": "native",
    "write_parquet": "native", "SwfOptions": "swf", "load_swf": "swf",
    "write_schedule_swf": "swf_writer", "write_swf": "swf_writer",
    "trace_info": "trace_summary", "Queue": "workload", "Workload": "workload",
})

if TYPE_CHECKING:
    from dispatchlab.workload.eurora import (
        EuroraOptions,
        list_eurora_batches,
        load_eurora,
        load_power_predictions,
        load_system_queues,
    )
    from dispatchlab.workload.generators import generate, list_generators
    from dispatchlab.workload.load import detect_format, load_workload, save_workload
    from dispatchlab.workload.native import load_csv, load_parquet, write_csv, write_parquet
    from dispatchlab.workload.swf import SwfOptions, load_swf
    from dispatchlab.workload.swf_writer import write_schedule_swf, write_swf
    from dispatchlab.workload.trace_summary import trace_info
    from dispatchlab.workload.workload import Queue, Workload
