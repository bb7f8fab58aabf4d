"""PA-HPC-SIM's schedulers (Borghesi et al.'s power-aware simulator), for comparison with
numbers published from it: ``pa-list`` (its list scheduler, jobs by wall-time) and
``pa-easy`` (its EASY backfilling), each driven as its online dispatcher drives it.

Both reproduce the peer's starts on the Eurora batches under its accounting (job power from
its formula, no idle power: ``--job-power pa-hpc-sim --no-idle-power``; docs/power.md and
``benchmarks/results/pa_hpc_sim_crosscheck.md``).
"""
