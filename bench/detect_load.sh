#!/usr/bin/env bash
# False suspicions under load: RUNS failure-free jobs of N ranks, 1 s each, while two busy
# loops (one per core here) compete for the CPU. Prints one JSON line: runs, runs with a
# suspicion or a failed job, the suspicions counted, and the ticks at which a silent peer was
# excused as starved (its control thread runnable, waiting for a core). A bad run's whole output
# is kept in $TMPDIR/detect_load.runN.log.
#
#   bench/detect_load.sh [RUNS] [N]      defaults: 1000 runs, n = 4
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-1000}
n=${2:-4}
bazel build --config=opt --color=no --curses=no --noshow_progress \
  //bench:rft_bench_detect //tools/rftrun 2>/dev/null
bin=$(bazel info --config=opt bazel-bin 2>/dev/null)
loaders=()
for ((c = 0; c < $(nproc); c++)); do
  bash -c 'while :; do :; done' &
  loaders+=($!)
done
trap 'kill "${loaders[@]}" 2>/dev/null || true' EXIT
bad=0
suspicions=0
starved=0
for ((i = 0; i < runs; i++)); do
  out=$("$bin/tools/rftrun/rftrun" -n "$n" --timeout 60 --no-tag-output \
    "$bin/bench/rft_bench_detect" --idle 1 --json 2>&1) || true
  read -r count excused < <(printf '%s\n' "$out" | python3 -c '
import json, sys
lines = [json.loads(l) for l in sys.stdin if l.startswith("{")]
ok = len(lines) == int(sys.argv[1])
print(sum(l["suspicions"] for l in lines) if ok else -1, sum(l["starved_ticks"] for l in lines))' "$n")
  starved=$((starved + excused))
  if [[ "$count" != 0 ]]; then
    bad=$((bad + 1))
    [[ "$count" -gt 0 ]] && suspicions=$((suspicions + count))
    printf 'run %d: %s\n' "$i" "$(printf '%s\n' "$out" | grep -v '^{' | head -3)" >&2
    printf '%s\n' "$out" >"${TMPDIR:-/tmp}/detect_load.run$i.log"  # the whole run, to diagnose
  fi
done
echo "{\"bench\":\"detect_load\",\"n\":$n,\"runs\":$runs,\"bad_runs\":$bad,\"suspicions\":$suspicions,\"starved_ticks\":$starved}"
