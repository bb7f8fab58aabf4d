"""Named platforms shipped with dispatchlab (``--platform eurora``, ``eurora-64``, …)."""

from __future__ import annotations

import tomllib
from collections.abc import Callable
from functools import partial
from importlib import resources

import numpy as np

from dispatchlab.platform.files import parse_eurora_nodes
from dispatchlab.platform.platform import Platform
from dispatchlab.platform.power import eurora_spec


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
    return Platform(
        resources=("cores", "mem", "gpu", "mic"),
        capacity=cap,
        node_names=names,
        groups=groups,
        name="eurora",
        node_model=tuple(eurora_spec(int(g)) for g in cap[:, 2].tolist()),
    )


def eurora_node_list(preset: str) -> Platform:
    """A Eurora node list shipped in ``dispatchlab/data/platforms/<preset>.nodes``."""
    ref = resources.files("dispatchlab") / "data" / "platforms" / f"{preset}.nodes"
    return parse_eurora_nodes(
        ref.read_text(encoding="utf-8"), source=f"preset {preset}", name=preset
    )


def bundled_toml(preset: str) -> Platform:
    """A platform TOML shipped in ``dispatchlab/data/platforms/<preset>.toml``."""
    from dispatchlab.platform.files import platform_from_mapping

    ref = resources.files("dispatchlab") / "data" / "platforms" / f"{preset}.toml"
    doc = tomllib.loads(ref.read_text(encoding="utf-8"))
    return platform_from_mapping(doc, source=f"preset {preset}", name=preset)


def mejri(servers: int) -> Platform:
    """Mejri et al. (2020): identical one-unit servers with Table 1's boot (151.52 s) and
    shutdown (6.10 s) delays, rounded up to whole seconds."""
    from dispatchlab.dispatchers.malleable.cost import malleable_platform

    return malleable_platform(servers)


def thesis_300() -> Platform:
    """Bridi's thesis ch. 5–7 machine: 300 of Curie's fat nodes, 32 cores and 128 GB each;
    no node power model (the thesis counts the jobs' power only)."""
    return Platform.homogeneous(300, {"cores": 32, "mem": 128 * 1024}, name="thesis-300")


#: Preset name → factory. The ``eurora-N`` lists come from Borghesi's power-aware simulator
#: (``system_configs/nodes_#N``): GPU and MIC nodes, 16 cores (128 for ``8-big``) and 32 GB.
PRESETS: dict[str, Callable[[], Platform]] = {
    "eurora": eurora,
    "mejri-10": partial(mejri, 10),
    "mejri-100": partial(mejri, 100),
    "eurora-pbs": partial(bundled_toml, "eurora-pbs"),
    "eurora-8": partial(eurora_node_list, "eurora-8"),
    "eurora-8-big": partial(eurora_node_list, "eurora-8-big"),
    "eurora-32": partial(eurora_node_list, "eurora-32"),
    "eurora-64": partial(eurora_node_list, "eurora-64"),
    "thesis-300": thesis_300,
}

#: One line per preset, for ``--help`` texts and listings.
DESCRIPTIONS: dict[str, str] = {
    "thesis-300": "Bridi thesis ch. 5-7: 300 Curie fat nodes × 32 cores × 128 GB, no power "
    "model (job power from the workload)",
    "mejri-10": "Mejri et al. 2020: 10 one-unit servers, boot 152 s, shutdown 7 s (Table 1's "
    "151.52 s and 6.10 s rounded up)",
    "mejri-100": "Mejri et al. 2020 scale-up: 100 one-unit servers, boot 152 s, shutdown 7 s",
    "eurora": "Eurora as in the papers: 64 nodes × 16 cores × 16 GB, 32 with 2 GPUs, 32 with "
    "2 MICs",
    "eurora-pbs": "Eurora with its PBS queues: debug, parallel, longpar, np_longpar "
    "(starts 18:00-08:00 only), reservation; limits of thesis Table 3.1",
    "eurora-8": "Eurora node list nodes_#8: 8 nodes × 16 cores × 32 GB, 4 with 2 MICs, 4 with "
    "2 GPUs",
    "eurora-8-big": "Eurora node list nodes_#8_big: 8 nodes × 128 cores × 32 GB, 4 with 16 "
    "MICs, 4 with 16 GPUs",
    "eurora-32": "Eurora node list nodes_#32: 32 nodes × 16 cores × 32 GB, 16 with 2 MICs, 16 "
    "with 2 GPUs",
    "eurora-64": "Eurora node list nodes_#64: 64 nodes × 16 cores × 32 GB, 32 with 2 MICs, 32 "
    "with 2 GPUs",
}
