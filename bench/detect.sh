#!/usr/bin/env bash
# Runs the detector's benchmarks and prints medians as JSON lines (DESIGN.md §6) plus a table.
#
#   bench/detect.sh [FAULTS] [SIZES]      defaults: 20 faults per point, n = "2 4 8"
#
# - detect_kill / detect_stop: FAULTS separate jobs per n (rftrun --ft); in each, one rank
#   SIGKILLs (SIGSTOPs) itself at an agreed instant and every survivor records when its
#   failure registry had it. A fault's time is the slowest survivor's; the median and p99
#   are over faults. The victim rotates over the ranks.
# - detect_idle: CPU the detector costs with no fault (percent of one core per process, 5 s).
# - p2p_latency with the detector on and off, 8 bytes, interleaved runs, medians and ratio.
#
# Builds with --config=opt first. Environment (RFT_HEARTBEAT_*) passes through to the jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
faults=${1:-20}
sizes=${2:-"2 4 8"}
bazel build --config=opt --color=no --curses=no --noshow_progress \
  //bench:rft_bench_detect //bench:rft_bench_p2p //tools/rftrun 2>/dev/null
bin=$(bazel info --config=opt bazel-bin 2>/dev/null)
rftrun="$bin/tools/rftrun/rftrun"
results=$(mktemp)
trap 'rm -f "$results"' EXIT

for n in $sizes; do
  for fault in kill stop; do
    for ((i = 0; i < faults; i++)); do
      victim=$(( (i + 1) % n ))
      "$rftrun" -n "$n" --ft --timeout 60 --no-tag-output "$bin/bench/rft_bench_detect" \
        --fault "$fault" --victim "$victim" --json 2>/dev/null | grep '^{' >>"$results" || true
      echo "run $fault n=$n $i" >>"$results"
    done
  done
  "$rftrun" -n "$n" --timeout 60 --no-tag-output "$bin/bench/rft_bench_detect" --idle 5 --json \
    2>/dev/null | grep '^{' >>"$results" || true
done
for ((i = 0; i < 5; i++)); do
  for detector in "" "--detector"; do
    "$rftrun" -n 2 --timeout 60 --no-tag-output "$bin/bench/rft_bench_p2p" --sizes 8 $detector \
      --json 2>/dev/null | grep '"p2p_latency"' >>"$results" || true
  done
done

python3 - "$results" "$faults" <<'PY'
import json, statistics, sys
faults = {}       # (bench, n) -> [slowest survivor per run]
sources = {}      # (bench, n) -> {source: count}
idle = {}         # n -> [cpu percent]
idle_suspicions = {}
lat = {0: [], 1: []}
current = []
for line in open(sys.argv[1]):
    line = line.strip()
    if line.startswith("run "):
        _, kind, n, _ = line.split()
        key = ("detect_" + kind, int(n[2:]))
        faults.setdefault(key, [])
        if current:
            faults[key].append(max(r["latency_us"] for r in current) / 1e3)
            for r in current:
                sources.setdefault(key, {}).setdefault(r["source"], 0)
                sources[key][r["source"]] += 1
        current = []
        continue
    r = json.loads(line)
    if r["bench"].startswith("detect_") and r["bench"] != "detect_idle":
        current.append(r)
    elif r["bench"] == "detect_idle":
        idle.setdefault(r["n"], []).append(r["cpu_percent"])
        idle_suspicions[r["n"]] = idle_suspicions.get(r["n"], 0) + r["suspicions"]
    elif r["bench"] == "p2p_latency":
        lat[r["detector"]].append(r["p50_us"])

def pct(values, p):
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))]

print("# bench        n  faults  missed   p50_ms   p99_ms  first sources")
for (bench, n), values in sorted(faults.items()):
    missed = int(sys.argv[2]) - len(values)
    if not values:
        continue
    out = {"bench": bench, "n": n, "faults": len(values), "missed": missed,
           "p50_ms": round(statistics.median(values), 3), "p99_ms": round(pct(values, 99), 3),
           "sources": sources.get((bench, n), {})}
    print(json.dumps(out))
for n, values in sorted(idle.items()):
    print(json.dumps({"bench": "detect_idle", "n": n, "seconds": 5,
                      "cpu_percent": round(statistics.mean(values), 3),
                      "suspicions": idle_suspicions[n]}))
if lat[0] and lat[1]:
    off, on = statistics.median(lat[0]), statistics.median(lat[1])
    print(json.dumps({"bench": "p2p_latency", "n": 2, "size": 8, "reps": len(lat[0]),
                      "p50_us": on, "detector": 1, "ref": "detector off", "ref_p50_us": off,
                      "ratio": round(on / off, 3)}))
PY
