"""Registers the built-in dispatcher presets."""

from __future__ import annotations

from dispatchlab.dispatchers.fifo import StrictFifo
from dispatchlab.dispatchers.registry import register

register("fifo", StrictFifo, "strict FIFO (submit order) with first-fit allocation")
