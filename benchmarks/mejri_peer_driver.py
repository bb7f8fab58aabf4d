"""Runs the authors' malleable-job simulator (shared/peers/mejri-malleable) and prints JSON.

Executed by ``benchmarks/mejri_crosscheck.py`` with the peer's own virtual environment
(``structlog pandas scipy pyyaml matplotlib``), never with dispatchlab's. It calls the peer's
``Experiments.run_expts`` for the six setups of its ``ExperimentsTest.run_all_experiments``
in the same order, drawing the random configurations at the same points of its random
stream, and prints per set the statistics its ``Scheduler.stats`` returns plus the
configuration each setup used. Usage::

    python mejri_peer_driver.py PEER_DIR SERVERS SETS SEED [SETUP ...]
"""

from __future__ import annotations

import json
import logging
import sys


def main(argv: list[str]) -> None:
    peer, servers, sets, seed = argv[0], int(argv[1]), int(argv[2]), int(argv[3])
    wanted = set(argv[4:])
    sys.path.insert(0, peer)
    import structlog

    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    from scheduling.Experiments import Experiments
    from scheduling.Scheduler import SchedulerConfig

    # (name, config factory, reconfig, power-off, decision process): run_all_experiments
    setups = [
        ("fifo", SchedulerConfig, False, False, False),
        ("fifo_reconfig", SchedulerConfig, True, False, False),
        ("fifo_poweroff", SchedulerConfig, False, True, False),
        ("fifo_reconfig_poweroff", SchedulerConfig.random, True, True, False),
        ("random_params", SchedulerConfig.random, True, True, True),
        ("swarm_param", SchedulerConfig, True, True, True),
    ]
    out: dict[str, object] = {"servers": servers, "sets": sets, "seed": seed, "setups": {}}
    for name, make, rcfg, poff, param in setups:
        config = make()  # drawn here even when the setup is skipped: same random stream
        if wanted and name not in wanted:
            continue
        exp = Experiments(reconfig_enabled=rcfg, power_off_enabled=poff, param_enabled=param)
        stats = exp.run_expts(config=config, num_srvs=servers, num_expts=sets, seed_num=seed)
        out["setups"][name] = {  # type: ignore[index]
            "config": dict(config.to_dict()),
            "stats": [s.to_dict() for s in stats],
        }
    json.dump(out, sys.stdout, default=float)


if __name__ == "__main__":
    main(sys.argv[1:])
