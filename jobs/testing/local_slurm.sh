#!/usr/bin/env bash
# Starts (or stops) a single-node Slurm cluster on this host for the tests:
#   local_slurm.sh start DIR   -> writes DIR/slurm.conf, starts munged, slurmctld, slurmd;
#                                 prints "export SLURM_CONF=DIR/slurm.conf"
#   local_slurm.sh stop DIR    -> stops the daemons started by "start DIR"
# Needs root and the Debian packages slurm-wlm and munge (.ci/install-deps).
# Config as the issue asks: proctrack/linuxproc, task/none, select/cons_tres,
# one node with this machine's CPUs, daemons started directly (no systemd).
set -euo pipefail
cmd=${1:?usage: local_slurm.sh start|stop DIR}
dir=$(mkdir -p "${2:?usage: local_slurm.sh start|stop DIR}" && cd "$2" && pwd)

stop() {
    for d in slurmd slurmctld; do
        if [[ -f $dir/$d.pid ]]; then
            pid=$(cat "$dir/$d.pid")
            kill "$pid" 2>/dev/null || true
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            rm -f "$dir/$d.pid"
        fi
    done
}
if [[ $cmd == stop ]]; then stop; exit 0; fi
[[ $cmd == start ]] || { echo "local_slurm.sh: unknown command '$cmd' (allowed: start, stop)" >&2; exit 2; }

for exe in slurmctld slurmd munged sbatch; do
    command -v "$exe" >/dev/null || {
        echo "local_slurm.sh: '$exe' not found: install the Debian packages slurm-wlm and munge (bash .ci/install-deps)" >&2
        exit 1
    }
done
[[ $(id -u) == 0 ]] || { echo "local_slurm.sh: must run as root (slurmd runs jobs as their users)" >&2; exit 1; }

# munge: one daemon per host; reuse a running one.
if ! munge -n </dev/null >/dev/null 2>&1; then
    [[ -f /etc/munge/munge.key ]] || { mungekey --create 2>/dev/null || create-munge-key -f; }
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown -R munge:munge /etc/munge /run/munge /var/log/munge /var/lib/munge 2>/dev/null || true
    if id munge >/dev/null 2>&1; then runuser -u munge -- munged; else munged --force; fi
    for _ in $(seq 50); do munge -n </dev/null >/dev/null 2>&1 && break; sleep 0.1; done
fi

host=$(hostname -s)
cpus=$(nproc)
mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2 ))
# Free ports, so a second test cluster (or a real one) does not collide.
read -r ctl_port node_port < <(python3 - <<'PY'
import socket
ports = []
socks = []
for _ in range(2):
    s = socket.socket(); s.bind(("127.0.0.1", 0)); ports.append(s.getsockname()[1]); socks.append(s)
print(*ports)
PY
)
mkdir -p "$dir/state" "$dir/spool" "$dir/log"
cat >"$dir/slurm.conf" <<CONF
ClusterName=fftunetest
SlurmctldHost=$host
SlurmctldPort=$ctl_port
SlurmdPort=$node_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MaxArraySize=${FFTUNE_TEST_MAX_ARRAY_SIZE:-1001}
MinJobAge=600
SchedulerParameters=sched_interval=1
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -i -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
for _ in $(seq 100); do
    if sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
        echo "export SLURM_CONF=$SLURM_CONF"
        exit 0
    fi
    sleep 0.2
done
echo "local_slurm.sh: the node did not become idle in 20 s; logs in $dir/log:" >&2
tail -n 20 "$dir/log/"*.log >&2 || true
stop
exit 1
