"""Options shared by the commands that load a workload (SWF cleaning and slicing)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from dispatchlab.workload.eurora import EuroraOptions
from dispatchlab.workload.swf import SwfOptions


@dataclass
class LoadOptions:
    """What the user said about how to read the workload."""

    format: str | None = None
    skip: int = 0
    limit: int | None = None
    swf_procs: str = "allocated"
    swf_missing_estimate: str = "runtime"
    swf_units: str = "pool"
    swf_cores_per_node: int | None = None
    drop_zero_runtime: bool = False
    keep_invalid: bool = False
    skip_bad_lines: bool = False
    eurora_units: str = "requested"

    def reader_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for :func:`dispatchlab.workload.load.load_workload`."""
        kwargs: dict[str, Any] = {"format": self.format}
        if self.format in (None, "swf"):
            kwargs["swf"] = SwfOptions(
                procs=self.swf_procs,  # type: ignore[arg-type]
                missing_estimate=self.swf_missing_estimate,  # type: ignore[arg-type]
                units=self.swf_units,  # type: ignore[arg-type]
                cores_per_node=self.swf_cores_per_node,
                drop_zero_runtime=self.drop_zero_runtime,
                drop_invalid=not self.keep_invalid,
                skip=self.skip,
                limit=self.limit,
                skip_bad_lines=self.skip_bad_lines,
            )
        if self.eurora_units != "requested" and self.format in (None, "eurora"):
            kwargs["eurora"] = EuroraOptions(units=self.eurora_units)  # type: ignore[arg-type]
        # every reader slices (SWF after cleaning, through its options): pass the slice
        # whatever the format, so a detected CSV/Parquet/Eurora file is sliced too
        kwargs["skip"] = self.skip
        kwargs["limit"] = self.limit
        return kwargs
