#!/bin/sh
# run inside the namespace (tools/pbs-local start -- sh record.sh OUT)
set -e
OUT=$1
P=$(dirname $(dirname $(command -v qstat)))
as() { runuser -u pbsuser -- sh -c "cd && $*"; }
conf() { env PYTHONPATH=$P/lib/python/altair /usr/bin/python3 -c "
import pbs_ifl, sys
c = pbs_ifl.pbs_connect('pbshost')
rc = pbs_ifl.pbs_confirmresv(c, '$1', '$2', 0, 'PBS_RESV_CONFIRM_SUCCESS')
sys.exit(rc)"; }
T0=$(date +%s)
R0=$(as pbs_rsub -R $(date -d @$((T0+40)) +%H%M.%S) -E $(date -d @$((T0+640)) +%H%M.%S) -l select=1:ncpus=2 -N myresv | cut -d' ' -f1)
conf $R0 "(vnode1:ncpus=2)"
qmgr <<Q
create queue small queue_type=execution
set queue small resources_max.walltime=00:10:00
set queue small resources_min.walltime=00:00:10
set queue small resources_max.ncpus=2
set queue small max_run = '[o:PBS_ALL=1]'
set queue small max_queued = '[o:PBS_ALL=100]'
set queue small priority=50
set queue small enabled=true
set queue small started=true
create queue stopq queue_type=execution
set queue stopq enabled=true
set queue stopq started=false
Q
R1=$(as pbs_rsub -R $(date -d @$((T0+3590)) +%H%M.%S) -E $(date -d @$((T0+5390)) +%H%M.%S) -l select=2:ncpus=1 -l place=scatter -N later | cut -d' ' -f1)
conf $R1 "(vnode3:ncpus=1)+(vnode4:ncpus=1)"
while [ $(date +%s) -lt $((T0+43)) ]; do sleep 0.5; done
sub() { as qsub "$@" -j oe -o /dev/null -- /bin/sleep 1500; }
A=$(sub -q small -l select=1:ncpus=1 -l walltime=00:05:00)
B=$(sub -q small -l select=2:ncpus=1 -l walltime=00:08:00)
C=$(sub -q stopq -l select=1:ncpus=1 -l walltime=00:05:00)
D=$(sub -q workq -l select=1:ncpus=2 -l walltime=00:30:00)
E=$(sub -q workq -l select=2:ncpus=1 -l place=scatter -l walltime=01:00:00)
F=$(sub -q R0 -l select=1:ncpus=1 -l walltime=00:05:00)
echo $R0 $R1 $A $B $C $D $E $F
qrun -H "(vnode2:ncpus=2)" $D
qrun -H "(vnode1:ncpus=1)" $F
qrun -H "(vnode3:ncpus=1)" $A
qmgr -c "set queue small resources_max.walltime=00:06:00"
R8=$(as pbs_rsub -R $(date -d @$((T0+7200)) +%H%M) -D 00:20:00 -l select=1:ncpus=1 -N pending)
echo $R8
sleep 2
qstat -f -F json > $OUT/qstat.json
pbsnodes -av -F json > $OUT/pbsnodes.json
qmgr -c "list queue @default" > $OUT/qmgr_queues.txt
pbs_rstat -f > $OUT/pbs_rstat.txt
qstat -Qf -F json > $OUT/qstat_queues.json
pbs_rstat
