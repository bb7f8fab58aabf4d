"""dispatchlab: a fast, trustworthy simulator of HPC batch systems and their dispatchers."""

from dispatchlab.metrics.results import Results
from dispatchlab.platform.platform import Platform
from dispatchlab.simulation import simulate
from dispatchlab.workload.workload import Workload

__version__ = "0.1.0"

__all__ = ["Platform", "Results", "Workload", "__version__", "simulate"]
