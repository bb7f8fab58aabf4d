"""Workloads: jobs as columns, read from SWF, Eurora batches, tables or generators."""

from dispatchlab.workload.swf import SwfOptions, load_swf
from dispatchlab.workload.workload import Queue, Workload

__all__ = ["Queue", "SwfOptions", "Workload", "load_swf"]
