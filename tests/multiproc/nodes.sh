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

# shellcheck disable=SC2086  # the arguments are meant to split
"$rftrun" --nodes "$nodes" --listen 127.0.0.1:0 --node-name node0 $1 >"$work/0" 2>&1 &
pids=($!)
port=
for _ in $(seq 1 600); do  # node 0 prints its port as it starts listening
  port=$(grep -o 'waits for the others at 127.0.0.1:[0-9]*' "$work/0" | cut -d: -f2)
  [[ -n $port ]] && break
  kill -0 "${pids[0]}" 2>/dev/null || break
  sleep 0.1
done
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
  for _ in $(seq 1 600); do
    grep -q "node $n (node$n) joined" "$work/0" && break
    kill -0 "${pids[n]}" 2>/dev/null || break
    sleep 0.05
  done
done

declare -A status
if [[ -n $how ]]; then
  for _ in $(seq 1 600); do
    grep -q -- "$pattern" "$work/$victim" && break
    kill -0 "${pids[victim]}" 2>/dev/null || break
    sleep 0.1
  done
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
