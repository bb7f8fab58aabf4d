"""Everything needed to write a dispatcher of your own, in one public module.

A dispatcher subclasses :class:`BaseDispatcher` and answers :meth:`~BaseDispatcher.decide`
at each decision point: it reads the read-only :class:`SystemView` and the
:class:`Events` since its previous call, and returns decisions (:class:`Start`,
:class:`WakeAt`, :class:`Plan`, :class:`PowerOff`, :class:`PowerOn`,
:class:`Reconfigure`, :class:`Kill`, :class:`Requeue`), which the engine validates
(:class:`InvalidDecision` names the fault). :class:`Workspace` keeps the free capacity
as it will be after the starts chosen so far in one call; the allocators place a job's
units on nodes. :func:`register` names a dispatcher so that ``simulate()``, experiment
files and the other commands take it by that name; :func:`simulate` runs one, on a
workload of your own or on the bundled sample (:func:`sample_trace` on
:data:`SAMPLE_PLATFORM`).

The names listed in ``__all__`` are the stable face of the package for dispatcher
authors (``examples/custom_dispatcher.py`` imports nothing else); the modules they come
from may move. docs/architecture.md ("Writing your own dispatcher") explains each.
"""

from __future__ import annotations

from dispatchlab.dispatchers.allocators import (
    ALLOCATORS,
    Allocator,
    BestFit,
    EnergyFirst,
    FirstFit,
    MarginalPowerFirst,
    Placement,
    WorstFit,
    first_fit,
    get_allocator,
)
from dispatchlab.dispatchers.base import BaseDispatcher
from dispatchlab.dispatchers.registry import get_dispatcher, presets, register
from dispatchlab.dispatchers.workspace import Workspace
from dispatchlab.engine.capabilities import Capabilities
from dispatchlab.engine.decisions import (
    Decision,
    Kill,
    Plan,
    PowerOff,
    PowerOn,
    Reconfigure,
    Requeue,
    Start,
    WakeAt,
)
from dispatchlab.engine.events import WAKE_ON_ALL, WAKE_ON_END, WAKE_ON_SUBMIT, Events
from dispatchlab.engine.protocol import Dispatcher
from dispatchlab.engine.state import Budget, JobRequests, Running, SystemView
from dispatchlab.errors import ConfigError, InvalidDecision
from dispatchlab.metrics.results import Results
from dispatchlab.platform.node_states import BOOTING, DOWN, OFF, ON, SHUTTING_DOWN
from dispatchlab.platform.platform import Platform
from dispatchlab.simulation import simulate
from dispatchlab.traces.bundled import SAMPLE_PLATFORM, sample_trace
from dispatchlab.workload import SwfOptions, load_swf, load_workload
from dispatchlab.workload.workload import Workload

__all__ = [
    "ALLOCATORS", "BOOTING", "DOWN", "OFF", "ON", "SAMPLE_PLATFORM", "SHUTTING_DOWN",
    "WAKE_ON_ALL", "WAKE_ON_END", "WAKE_ON_SUBMIT", "Allocator", "BaseDispatcher", "BestFit",
    "Budget", "Capabilities", "ConfigError", "Decision", "Dispatcher", "EnergyFirst", "Events",
    "FirstFit", "InvalidDecision", "JobRequests", "Kill", "MarginalPowerFirst", "Placement",
    "Plan", "Platform", "PowerOff", "PowerOn", "Reconfigure", "Requeue", "Results", "Running",
    "Start", "SwfOptions", "SystemView", "WakeAt", "Workload", "Workspace", "WorstFit",
    "first_fit", "get_allocator", "get_dispatcher", "load_swf", "load_workload", "presets",
    "register", "sample_trace", "simulate",
]
