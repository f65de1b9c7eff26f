#!/usr/bin/env bash
# A single-node Slurm cluster of this machine, private to one directory: its own munge key and
# socket, its own slurm.conf, state, spool, logs and ports; no file outside DIR is written, no
# system service is touched. Debian 12's packages: slurmctld, slurmd, munge (Slurm 22.05 with
# its PMIx plugin mpi_pmix_v4 against PMIx 4.2).
#
#   bash tools/slurm/cluster.sh start DIR    writes DIR/slurm.conf, starts munged, slurmctld and
#                                            slurmd, waits until the node is idle; prints the
#                                            environment a client needs (SLURM_CONF=...)
#   bash tools/slurm/cluster.sh stop DIR     stops the three daemons by the PIDs they wrote, then
#                                            every process left with this cluster's SLURM_CONF
#                                            (job steps and their tasks); logs stay
#
# Must run as root: slurmd starts job steps as the submitting user, and the daemons run as root
# here (SlurmUser=root), so no account of the machine is needed.
set -euo pipefail

action=${1:-}
dir=${2:-}
if [[ -z $action || -z $dir ]]; then
  echo "usage: cluster.sh start|stop DIR" >&2
  exit 2
fi

daemons=(slurmd slurmctld munged)

stop() {
  dir=$(cd "$dir" && pwd)
  local name pid i
  for name in "${daemons[@]}"; do
    pid=$(cat "$dir/$name.pid" 2>/dev/null || true)
    [[ -n $pid ]] || continue
    # Only a process that is still that daemon (the PID file may be stale and the PID reused).
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$name"* ]] || continue
    kill -TERM "$pid" 2>/dev/null || true
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
  done
  # Job steps whose slurmstepd outlived slurmd, and their tasks: the daemons were started with
  # this cluster's SLURM_CONF in their environment, and everything they start inherits it.
  local p
  for p in /proc/[0-9]*; do
    [[ ${p#/proc/} == "$$" ]] && continue
    tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qxF "SLURM_CONF=$dir/slurm.conf" || continue
    kill -KILL "${p#/proc/}" 2>/dev/null || true
  done
}

free_port() {  # prints a TCP port nobody listens on, from 20000-39999
  local port
  while :; do
    port=$((20000 + RANDOM % 20000))
    ss -Htln "sport = :$port" | grep -q . || { echo "$port"; return; }
  done
}

start() {
  mkdir -p "$dir"/{state,spool,munge}
  dir=$(cd "$dir" && pwd)
  chmod 700 "$dir/munge"
  local host cpus memory ctld_port slurmd_port
  host=$(hostname -s)
  cpus=$(nproc)
  memory=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
  ctld_port=$(free_port)
  slurmd_port=$(free_port)
  # The daemons' own words go to stderr: stdout carries only the client's environment line.
  [[ -f $dir/munge/munge.key ]] || mungekey --create --keyfile="$dir/munge/munge.key" >&2
  chmod 600 "$dir/munge/munge.key"
  cat >"$dir/slurm.conf" <<CONF
# Written by tools/slurm/cluster.sh: one node, this machine, everything under $dir.
ClusterName=rft
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SwitchType=switch/none
MpiDefault=none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
ReturnToService=2
SchedulerType=sched/builtin
InactiveLimit=0
KillWait=5
MinJobAge=30
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory State=UNKNOWN
PartitionName=rft Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
  munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/munged.pid" --log-file="$dir/munged.log" --seed-file="$dir/munge/seed" >&2
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$dir/slurm.conf" -i >&2
  slurmd -f "$dir/slurm.conf" -N "$host" >&2
  local i state=""
  for ((i = 0; i < 300; i++)); do
    state=$(sinfo -h -N -o '%T' 2>/dev/null | head -n 1 || true)
    [[ $state == idle ]] && break
    sleep 0.1
  done
  if [[ $state != idle ]]; then
    echo "cluster: the node is '${state:-unknown}' after 30 s, not idle; logs in $dir" >&2
    tail -n 5 "$dir"/slurmctld.log "$dir"/slurmd.log "$dir"/munged.log >&2 || true
    return 1
  fi
  echo "SLURM_CONF=$dir/slurm.conf"
}

case $action in
  start) start ;;
  stop) stop ;;
  *) echo "cluster.sh: unknown action '$action' (start or stop)" >&2; exit 2 ;;
esac
