#!/bin/bash
# Runs one rftrun job as two nodes on this host: node 0 listens on a free loopback port and
# node 1 joins it, each an rftrun of its own. Prints node 0's output, then node 1's, each
# followed by "=== node N exit STATUS"; exits 0 (the tests judge the statuses printed).
#
#   two_nodes.sh RFTRUN 'NODE0 ARGS' 'NODE1 ARGS' [PATTERN [stop]]
#
# NODEn ARGS are rftrun options, the program and its arguments (split on spaces). With
# PATTERN, node 1 is lost once its output has PATTERN: its rftrun and then its processes are
# killed by PID, as a crashed node would vanish. With "stop" as well, node 1's rftrun is
# stopped instead (a hung node) and resumed once node 0 has exited.
set -u
rftrun=$1 node0_args=$2 node1_args=$3 lose_after=${4:-} how=${5:-kill}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# shellcheck disable=SC2086  # the arguments are meant to split
"$rftrun" --nodes 2 --listen 127.0.0.1:0 --node-name node0 $node0_args >"$work/0" 2>&1 &
node0=$!
port=
for _ in $(seq 1 600); do  # node 0 prints its port as it starts listening
  port=$(grep -o 'waits for the others at 127.0.0.1:[0-9]*' "$work/0" | cut -d: -f2)
  [[ -n $port ]] && break
  kill -0 "$node0" 2>/dev/null || break
  sleep 0.1
done
if [[ -z $port ]]; then
  echo "two_nodes.sh: node 0 never listened; its output:"
  kill -KILL "$node0" 2>/dev/null
  cat "$work/0"
  exit 1
fi
# Started directly (not inside a compound command), so that $node1 is rftrun's own PID.
# shellcheck disable=SC2086
"$rftrun" --join "127.0.0.1:$port" --node-name node1 $node1_args >"$work/1" 2>&1 &
node1=$!

if [[ -n $lose_after ]]; then
  for _ in $(seq 1 600); do
    grep -q -- "$lose_after" "$work/1" && break
    kill -0 "$node1" 2>/dev/null || break
    sleep 0.1
  done
  if [[ $how == stop ]]; then
    kill -STOP "$node1"
    wait "$node0"
    status0=$?
    kill -CONT "$node1"
  else
    children=$(pgrep -P "$node1")
    kill -KILL "$node1"
    for pid in $children; do kill -KILL "$pid" 2>/dev/null; done
  fi
fi
wait "$node1"
status1=$?
if [[ -z ${status0:-} ]]; then
  wait "$node0"
  status0=$?
fi
cat "$work/0"
echo "=== node 0 exit $status0"
cat "$work/1" 2>/dev/null
echo "=== node 1 exit $status1"
