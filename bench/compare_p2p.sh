#!/usr/bin/env bash
# Runs rft_bench_p2p beside ucx_perftest in one invocation, REPS times each, and prints the
# medians and ratios as JSON lines (DESIGN.md §6) plus a short table.
#
#   bench/compare_p2p.sh [REPS]        (default 3; builds with --config=opt first)
#
# References: ucp_am_lat 8 B and tag_bw 1 MiB, both with peer error handling and shared memory
# kept (-e, UCX_MM_ERROR_HANDLING=y: what rft runs with) and without error handling (UCX's
# best). Targets (transport issue): 8 B latency <= 1.15x ucp_am_lat; 1 MiB bandwidth >= 0.9x
# UCX's best tag_bw.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-3}
bazel build --config=opt --color=no --curses=no --noshow_progress \
  //bench:rft_bench_p2p //tools/rftrun 2>/dev/null
bin=$(bazel info --config=opt bazel-bin 2>/dev/null)  # not the bazel-bin link: another build may move it
port=$((20000 + RANDOM % 20000))

perftest() {  # ARGS... -> prints "p50_us avg_us MB/s" of the client's Final line
  port=$((port + 1))
  ucx_perftest -p "$port" "$@" >/dev/null 2>&1 &
  local server=$!
  sleep 0.5
  timeout 120 ucx_perftest 127.0.0.1 -p "$port" "$@" 2>/dev/null | awk '/^Final/ {print $3, $4, $6}'
  wait "$server" 2>/dev/null || true
}

results=$(mktemp)
for ((i = 0; i < reps; i++)); do
  read -r p50 _ _ < <(UCX_MM_ERROR_HANDLING=y perftest -t ucp_am_lat -s 8 -n 100000 -e)
  echo "ref_am_lat_eh $p50" >>"$results"
  read -r p50 _ _ < <(perftest -t ucp_am_lat -s 8 -n 100000)
  echo "ref_am_lat_best $p50" >>"$results"
  read -r _ _ bw < <(perftest -t tag_bw -s 1048576 -n 2000)
  echo "ref_tag_bw_best $bw" >>"$results"
  read -r _ _ bw < <(UCX_MM_ERROR_HANDLING=y perftest -t tag_bw -s 1048576 -n 2000 -e)
  echo "ref_tag_bw_eh $bw" >>"$results"
  "$bin"/tools/rftrun/rftrun -n 2 --timeout 120 --no-tag-output "$bin"/bench/rft_bench_p2p \
    --sizes 8,1048576 --json | python3 -c '
import json, sys
for line in sys.stdin:
    if not line.startswith("{"): continue
    r = json.loads(line)
    if r["bench"] == "p2p_latency" and r["size"] == 8: print("rft_lat_8", r["p50_us"])
    if r["bench"] == "p2p_bandwidth" and r["size"] == 1048576: print("rft_bw_1m", r["mb_s"])
' >>"$results"
done

python3 - "$results" "$reps" <<'PY'
import json, statistics, sys
values = {}
for line in open(sys.argv[1]):
    key, value = line.split()
    values.setdefault(key, []).append(float(value))
m = {k: statistics.median(v) for k, v in values.items()}
# Every repetition, so the spread is visible (this machine is shared and noisy).
for key, v in sorted(values.items()):
    print("# %-16s %s" % (key, " ".join("%g" % x for x in v)))
reps = int(sys.argv[2])
lines = [
    {"bench": "p2p_latency", "transport": "rft", "n": 2, "size": 8, "reps": reps,
     "p50_us": m["rft_lat_8"], "ref": "ucp_am_lat -e", "ref_p50_us": m["ref_am_lat_eh"],
     "ratio": round(m["rft_lat_8"] / m["ref_am_lat_eh"], 3)},
    {"bench": "p2p_latency", "transport": "rft", "n": 2, "size": 8, "reps": reps,
     "p50_us": m["rft_lat_8"], "ref": "ucp_am_lat", "ref_p50_us": m["ref_am_lat_best"],
     "ratio": round(m["rft_lat_8"] / m["ref_am_lat_best"], 3)},
    {"bench": "p2p_bandwidth", "transport": "rft", "n": 2, "size": 1048576, "reps": reps,
     "mb_s": m["rft_bw_1m"], "ref": "tag_bw", "ref_mb_s": m["ref_tag_bw_best"],
     "ratio": round(m["rft_bw_1m"] / m["ref_tag_bw_best"], 3)},
    {"bench": "p2p_bandwidth", "transport": "rft", "n": 2, "size": 1048576, "reps": reps,
     "mb_s": m["rft_bw_1m"], "ref": "tag_bw -e", "ref_mb_s": m["ref_tag_bw_eh"],
     "ratio": round(m["rft_bw_1m"] / m["ref_tag_bw_eh"], 3)},
]
for line in lines:
    print(json.dumps(line))
PY
rm -f "$results"
