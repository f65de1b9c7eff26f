#!/bin/bash
# Runs one rftrun job as K nodes on this host: node 0 listens on a free loopback port and nodes
# 1..K-1 join it, each an rftrun of its own, in order (so ranks are numbered node by node).
# Prints each node's output in turn, each followed by "=== node N exit STATUS"; exits 0 (the
# tests judge the statuses printed).
#
#   nodes.sh RFTRUN [--lose N PATTERN | --hang PATTERN] 'NODE0 ARGS' 'NODE1 ARGS' ['NODE2 ARGS'...]
#
# NODEn ARGS are rftrun options, the program and its arguments (split on spaces). With --lose,
# node N is lost once its output has PATTERN: its rftrun and then its processes are killed by
# PID, as a crashed node would vanish. With --hang, the last node's rftrun is stopped instead (a
# hung node) once its output has PATTERN, and resumed once node 0 has exited.
set -u
rftrun=$1
shift
how='' pattern='' victim=''
if [[ ${1:-} == --lose ]]; then
  how=$1 victim=$2 pattern=$3
  shift 3
elif [[ ${1:-} == --hang ]]; then
  how=$1 pattern=$2
  shift 2
fi
nodes=$#
victim=${victim:-$((nodes - 1))}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# wait_for FILE PATTERN PID [INTERVAL]: until FILE has a line with PATTERN (true), or process PID
# is gone or 600 looks INTERVAL seconds apart (default 0.1) found nothing (false).
wait_for() {
  for _ in $(seq 1 600); do
    grep -q -- "$2" "$1" && return 0
    kill -0 "$3" 2>/dev/null || return 1
    sleep "${4:-0.1}"
  done
  return 1
}

# shellcheck disable=SC2086  # the arguments are meant to split
"$rftrun" --nodes "$nodes" --listen 127.0.0.1:0 --node-name node0 $1 >"$work/0" 2>&1 &
pids=($!)
# Node 0 prints its port as it starts listening.
listening='waits for the others at 127.0.0.1:[0-9]'
wait_for "$work/0" "$listening" "${pids[0]}"
port=$(grep -o "$listening*" "$work/0" | cut -d: -f2)
if [[ -z $port ]]; then
  echo "nodes.sh: node 0 never listened; its output:"
  kill -KILL "${pids[0]}" 2>/dev/null
  cat "$work/0"
  exit 1
fi
for ((n = 1; n < nodes; ++n)); do
  shift
  # Started directly (not inside a compound command), so that the PID is rftrun's own.
  # shellcheck disable=SC2086
  "$rftrun" --join "127.0.0.1:$port" --node-name "node$n" $1 >"$work/$n" 2>&1 &
  pids+=($!)
  # One at a time, so that nodes (and ranks) are numbered in the order given.
  wait_for "$work/0" "node $n (node$n) joined" "${pids[n]}" 0.05
done

declare -A status
if [[ -n $how ]]; then
  wait_for "$work/$victim" "$pattern" "${pids[victim]}"
  if [[ $how == --hang ]]; then
    kill -STOP "${pids[victim]}"
    wait "${pids[0]}"
    status[0]=$?
    kill -CONT "${pids[victim]}"
  else
    children=$(pgrep -P "${pids[victim]}")
    kill -KILL "${pids[victim]}"
    for pid in $children; do kill -KILL "$pid" 2>/dev/null; done
  fi
fi
for ((n = nodes - 1; n >= 0; --n)); do
  [[ -n ${status[$n]:-} ]] && continue
  wait "${pids[n]}"
  status[$n]=$?
done
for ((n = 0; n < nodes; ++n)); do
  cat "$work/$n" 2>/dev/null
  echo "=== node $n exit ${status[$n]}"
done
