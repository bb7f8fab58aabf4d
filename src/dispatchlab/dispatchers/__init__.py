"""Dispatchers (policies) and the registry that names them."""

from dispatchlab.dispatchers.base import BaseDispatcher, Dispatcher
from dispatchlab.dispatchers.registry import get_dispatcher, presets, register

__all__ = ["BaseDispatcher", "Dispatcher", "get_dispatcher", "presets", "register"]
