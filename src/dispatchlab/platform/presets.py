"""Named platforms shipped with dispatchlab."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from dispatchlab.platform.platform import Platform


def eurora() -> Platform:
    """Eurora (CINECA): 64 nodes × 16 cores × 16 GB; 32 nodes with 2 GPUs, 32 with 2 MICs."""
    n = 64
    cap = np.zeros((n, 4), dtype=np.int64)
    cap[:, 0] = 16
    cap[:, 1] = 16 * 1024
    cap[:32, 2] = 2
    cap[32:, 3] = 2
    names = tuple(f"node{i:02d}" for i in range(n))
    groups = {"gpu": np.arange(32), "mic": np.arange(32, 64)}
    return Platform(resources=("cores", "mem", "gpu", "mic"), capacity=cap, node_names=names,
                    groups=groups, name="eurora")


PRESETS: dict[str, Callable[[], Platform]] = {"eurora": eurora}
