#!/usr/bin/env bash
# Installs Debian's Slurm daemons, client commands and munge (for tests/live), and slurmdbd
# with MariaDB (for the local cluster's accounting: sacct, sshare), unless present. The
# local cluster runs private daemons in temporary folders: a system MariaDB service the
# install may start is never used.
set -euo pipefail
need=()
for prog in /usr/sbin/slurmctld /usr/sbin/slurmd /usr/bin/sbatch /usr/sbin/munged \
            /usr/sbin/slurmdbd /usr/sbin/mariadbd /usr/bin/mariadb-install-db; do
    [ -x "$prog" ] || need+=("$prog")
done
if [ ${#need[@]} -eq 0 ]; then
    exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt_retry() {
    for attempt in $(seq 1 30); do
        if "$@"; then return 0; fi
        echo "setup-slurm: '$*' failed (attempt $attempt; dpkg lock held?), retrying in 10 s" >&2
        sleep 10
    done
    return 1
}
apt_retry apt-get update
apt_retry apt-get install -y --no-install-recommends slurmctld slurmd slurm-client munge \
    slurmdbd mariadb-server
