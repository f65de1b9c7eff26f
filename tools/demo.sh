#!/usr/bin/env bash
# The main demo: ULFM's story at 6 processes. examples/ulfm_demo.c sums a series, every member
# holding the total; one process is SIGKILLed and another hangs (SIGSTOP) at random instants.
# The survivors detect both (the hang by its missing heartbeats, after which the launcher kills
# it), revoke, agree and shrink, and finish with the exact total. The program prints who failed,
# when each survivor heard of it and which of its calls failed how, what each recovery took, and
# every survivor's total beside the exact one. Exit 0 only when all 4 survivors are exact.
#
#   bash tools/demo.sh [SEED]     (the same SEED picks the same victims and instants)
set -euo pipefail
cd "$(dirname "$0")/.."
seed=${1:-$((RANDOM % 1000))}
[[ $seed =~ ^[0-9]+$ ]] || { echo "demo: SEED must be a number, got '$seed'" >&2; exit 2; }
bazel build --color=no --curses=no //tools/rftrun //examples:ulfm_demo
RANDOM=$seed
victims=(1 2 3 4 5)
killed=${victims[RANDOM % 5]}
stopped=$killed
while [[ $stopped == "$killed" ]]; do stopped=${victims[RANDOM % 5]}; done
kill_ms=$((200 + RANDOM % 1600))
stop_ms=$((200 + RANDOM % 1600))
command=(bazel-bin/tools/rftrun/rftrun -n 6 --ft --timeout 60 bazel-bin/examples/ulfm_demo
  --iterations 2000 --kill "$killed@$kill_ms" --stop "$stopped@$stop_ms")
echo "demo: seed $seed: ${command[*]}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
"${command[@]}" 2>&1 | tee "$log" || status=$?
# rftrun's own status is 137 here: a rank killed itself, which rftrun reports as the job's
# worst exit. The demo's verdict is the survivors' results.
exact=$(grep -c ': exact, with 4 of 6 processes' "$log" || true)
if [[ $exact == 4 ]]; then
  echo "demo: all 4 survivors ended with the exact total (rftrun status $status)"
else
  echo "demo: FAILED: $exact of 4 survivors printed the exact total (rftrun status $status)"
  exit 1
fi
