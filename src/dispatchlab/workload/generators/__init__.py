"""Synthetic workload generators, named by specs such as ``gen:eurora-like:jobs=330,seed=3``."""

from dispatchlab.workload.generators.registry import (
    GeneratorInfo,
    generate,
    get_generator,
    is_generator_spec,
    list_generators,
    parse_generator_spec,
    register_generator,
)

__all__ = [
    "GeneratorInfo",
    "generate",
    "get_generator",
    "is_generator_spec",
    "list_generators",
    "parse_generator_spec",
    "register_generator",
]
