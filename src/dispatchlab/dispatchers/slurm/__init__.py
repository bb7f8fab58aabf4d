"""The ``slurm`` family: Slurm's own scheduling (priorities, main scheduler, backfill,
cons_tres node choice) configured from an operator's ``slurm.conf``."""
