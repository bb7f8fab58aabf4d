"""Workloads: jobs as columns, read from SWF, Eurora batches, tables or generators."""

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
from dispatchlab.workload.trace_info import trace_info
from dispatchlab.workload.workload import Queue, Workload

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
