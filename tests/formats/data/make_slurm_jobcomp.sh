#!/bin/bash
# Submits a small mix of jobs to the local Slurm and waits until all are in the completion log.
# Made tests/formats/data/slurm_jobcomp.log (Slurm 22.05.8 jobcomp/filetxt, 4 nodes x 4 CPUs):
#   JOBCOMP=ROOT/jobcomp.log tools/slurm-local --root ROOT --keep -- tests/formats/data/make_slurm_jobcomp.sh
# (WorkDir= then rewritten to /home/root).
set -u
export SBATCH_OUTPUT=/dev/null  # no slurm-<id>.out left in the folder it is run from
ids=()
ids+=($(sbatch --parsable -J ok2 -n2 -t 2 --wrap "sleep 3"))
ids+=($(sbatch --parsable -J wide -N2 -n6 -t 10 --wrap "sleep 5"))
ids+=($(sbatch --parsable -J fails -n1 -t 5 --wrap "sleep 1; exit 3"))
ids+=($(sbatch --parsable -J unlimited -n1 -t UNLIMITED --wrap "sleep 2"))
ids+=($(sbatch --parsable -J hms -n1 -t 0-00:03:30 --wrap "sleep 2"))
ids+=($(sbatch --parsable -J timeout -n1 -t 1 --wrap "sleep 300"))
held=$(sbatch --parsable -J held -n16 -t 3 --hold --wrap "sleep 1"); ids+=($held)
run=$(sbatch --parsable -J killed -n4 -t 5 --wrap "sleep 60"); ids+=($run)
sleep 6
scancel "$held"
scancel "$run"
ids+=($(sbatch --parsable -J late -n3 -t 2 --wrap "sleep 4"))
echo "jobs: ${ids[*]}"
for i in $(seq 1 200); do
  n=$(grep -c '^JobId=' "$JOBCOMP" 2>/dev/null || echo 0)
  [ "$n" -ge "${#ids[@]}" ] && break
  sleep 1
done
echo "records: $n"
squeue
