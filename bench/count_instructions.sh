#!/usr/bin/env bash
# Counts the instructions one 8 B round trip costs, per rank, rft over UCX beside UCX's own
# ucp_am_lat, with callgrind (docs/performance.md, "Where a round trip's instructions go").
# Instruction counts do not move with the load on this shared host, so a change of a few
# instructions on the hot path shows here where a timed run would lose it in the noise.
#
#   bench/count_instructions.sh [--json] [--top N]
#
# Each program runs twice under callgrind, with N and 2N round trips; the difference of each
# function's own count between the runs, divided by the extra round trips, is what one round
# trip costs it (start-up, the bandwidth phase and exit cancel out). The functions that spin
# while a rank waits for its reply (rft's Progress and Wait, ucp_worker_progress, UCX's
# unnamed progress functions) are counted apart as "polling": how often they spin depends on
# how long the other rank takes, so that figure varies from run to run and the others do not.
set -euo pipefail
cd "$(dirname "$0")/.."
json=0
top=15
while [[ $# -gt 0 ]]; do
  case "$1" in
    --json) json=1 ;;
    --top) top=$2; shift ;;
    *) echo "count_instructions.sh: unknown argument '$1': expected --json or --top N" >&2
       exit 2 ;;
  esac
  shift
done
for tool in valgrind callgrind_annotate ucx_perftest; do
  command -v "$tool" >/dev/null || { echo "count_instructions.sh: $tool not found" >&2; exit 1; }
done
bazel build --config=opt --color=no --curses=no --noshow_progress \
  //bench:rft_bench_p2p //tools/rftrun 2>/dev/null
bin=$(bazel info --config=opt bazel-bin 2>/dev/null)  # not the bazel-bin link: another build may move it
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
port=$((20000 + RANDOM % 20000))

# rft: both ranks profiled; --iters 4000 and 8000 have the same 32 bandwidth windows, so the runs
# differ by 4,400 round trips (warm-up included) and nothing else.
for iters in 4000 8000; do
  mkdir -p "$work/rft$iters"
  RFT_SHM_RINGS=n RFT_RENDEZVOUS=ucx RFT_PROGRESS=poll "$bin"/tools/rftrun/rftrun -n 2 \
    --timeout 600 valgrind --tool=callgrind --callgrind-out-file="$work/rft$iters/out.%p" \
    "$bin"/bench/rft_bench_p2p --sizes 8 --iters "$iters" >/dev/null 2>&1
done
# UCX's reference: the client's side of ucp_am_lat with peer error handling (what rft runs with).
for n in 20000 40000; do
  port=$((port + 1))
  UCX_MM_ERROR_HANDLING=y ucx_perftest -p "$port" -t ucp_am_lat -s 8 -n "$n" -e >/dev/null 2>&1 &
  server=$!
  sleep 0.5
  UCX_MM_ERROR_HANDLING=y timeout 600 valgrind --tool=callgrind \
    --callgrind-out-file="$work/ucx$n.out" ucx_perftest 127.0.0.1 -p "$port" -t ucp_am_lat -s 8 \
    -n "$n" -e >/dev/null 2>&1
  wait "$server" 2>/dev/null || true
done
for f in "$work"/rft*/out.* "$work"/ucx*.out; do
  callgrind_annotate --auto=no --threshold=100 "$f" >"$f.txt" 2>/dev/null
done

python3 - "$work" "$json" "$top" <<'PY'
import collections, glob, json, os, re, sys

work, as_json, top = sys.argv[1], sys.argv[2] == "1", int(sys.argv[3])
LINE = re.compile(r"\s*([\d,]+) \([^)]*\)\s+(\S.*)$")

def own_counts(path):
    """Self instructions by function name (inlined pieces in other files added together)."""
    counts, lib = collections.Counter(), {}
    for line in open(path, errors="replace"):
        m = LINE.match(line)
        if not m or "PROGRAM TOTALS" in m.group(2):
            continue
        where = m.group(2)
        name = where.split(" [")[0]
        name = name.split(":", 1)[1] if ":" in name else name
        name = re.sub(r"\(.*", "", name)
        counts[name] += int(m.group(1).replace(",", ""))
        if "[" in where:
            lib[name] = where.rsplit("[", 1)[1].rstrip("]").rsplit("/", 1)[-1]
    return counts, lib

POLLING = {"rft::transport::DataPlane::Progress", "rft::transport::DataPlane::Wait",
           "rft::transport::DataPlane::Waitall", "ucp_worker_progress"}

def kind(name, lib):
    if name in POLLING or (lib.startswith(("libucp", "libuct")) and name.startswith("0x")):
        return "polling"
    if name.startswith("rft::"):
        return "rft"
    if lib.startswith(("libucp", "libuct", "libucs")):
        return "ucx"
    if "memcpy" in name:
        return "memcpy"
    return "other"  # the benchmark's own loop, clock reads, ...

def per_round_trip(short, long, extra):
    a, lib_a = own_counts(short)
    b, lib_b = own_counts(long)
    lib = {**lib_a, **lib_b}
    rows = {n: (b[n] - a[n]) / extra for n in set(a) | set(b)}
    return {n: v for n, v in rows.items() if abs(v) >= 0.5}, lib

def by_kind(rows, lib):
    sums = collections.Counter()
    for n, v in rows.items():
        sums[kind(n, lib.get(n, ""))] += v
    return {k: round(v, 1) for k, v in sums.items()}

results = []
for rank in (0, 1):
    # rftrun starts rank 0 first: the lower process id of each run is rank 0.
    short = sorted(glob.glob(f"{work}/rft4000/out.*.txt"), key=lambda p: int(p.split(".")[-2]))
    long = sorted(glob.glob(f"{work}/rft8000/out.*.txt"), key=lambda p: int(p.split(".")[-2]))
    rows, lib = per_round_trip(short[rank], long[rank], 4400.0)
    results.append({"program": f"rft rank {rank}", "by_kind": by_kind(rows, lib),
                    "functions": sorted(((round(v, 1), n) for n, v in rows.items()
                                         if kind(n, lib.get(n, "")) == "rft"), reverse=True),
                    "others": sorted(((round(v, 1), n) for n, v in rows.items()
                                      if kind(n, lib.get(n, "")) != "rft"), reverse=True)})
rows, lib = per_round_trip(f"{work}/ucx20000.out.txt", f"{work}/ucx40000.out.txt", 20000.0)
results.append({"program": "ucp_am_lat -e", "by_kind": by_kind(rows, lib), "functions": [],
                "others": sorted(((round(v, 1), n) for n, v in rows.items()), reverse=True)})

if as_json:
    for r in results:
        print(json.dumps({"bench": "instructions_per_round_trip", "size": 8,
                          "program": r["program"], **r["by_kind"],
                          "rft_functions": {n: v for v, n in r["functions"][:top]}}))
    sys.exit(0)
kinds = ["rft", "ucx", "memcpy", "other", "polling"]
print("instructions per 8 B round trip, per rank (callgrind; polling varies with timing)")
print("%-16s" % "program" + "".join("%10s" % k for k in kinds))
for r in results:
    print("%-16s" % r["program"] + "".join("%10.1f" % r["by_kind"].get(k, 0) for k in kinds))
for r in results[:2]:
    print(f"\n{r['program']}: rft's functions (own instructions, inlined code included)")
    for v, n in r["functions"][:top]:
        print("%8.1f  %s" % (v, n))
for r in results:
    print(f"\n{r['program']}: the other functions")
    for v, n in r["others"][:top]:
        print("%8.1f  %s" % (v, n))
PY
