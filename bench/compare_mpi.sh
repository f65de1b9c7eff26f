#!/usr/bin/env bash
# The same MPI benchmark (bench/mpi_bench.c) on rft and on Open MPI 5 in one session: ROUNDS
# rounds, alternating which MPI runs first, each run printing its --json figures; then a table
# of the medians over rounds and the median of each round's own rft / Open MPI ratio. rft's run
# also gives the MPI layer's cost over rft.h ("layer", mpi_bench's alternating repetitions).
#
#   bench/compare_mpi.sh [--rounds R] [--iters N] [--reps R] [--no-ompi] [--json]
#
# Needs an opt build: bazel build --config=opt //bench:mpi_bench //ulfm_api/mpi:sdk. Open MPI
# runs in the compatibility stage's trixie root (tools/compat/make-root.sh; root, and this
# script adds libopenmpi-dev and gcc there on first use) with `mpirun --with-ft ulfm --mca btl
# self,sm`, 2 ranks, as the figures of docs/performance.md were measured.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
rounds=3
iters=2000
reps=9
ompi=1
json=0
while (($#)); do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --no-ompi) ompi=0; shift ;;
    --json) json=1; shift ;;
    *) echo "compare_mpi: unknown argument $1" >&2; exit 2 ;;
  esac
done
bin=$(bazel info --config=opt bazel-bin 2>/dev/null)
sdk=$bin/ulfm_api/mpi/sdk
[[ -x "$bin/bench/mpi_bench" && -x "$sdk/bin/mpiexec" ]] || {
  echo "compare_mpi: build first: bazel build --config=opt //bench:mpi_bench //ulfm_api/mpi:sdk" >&2
  exit 2
}
out=$(mktemp -d /tmp/compare_mpi.XXXXXX)
root=${RFT_COMPAT_ROOT:-/var/tmp/rft-trixie}
mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount "${mounted[i]}" 2>/dev/null; done
}
trap cleanup EXIT

if ((ompi)); then
  if [[ $EUID -ne 0 || ! -f "$root/.rft-compat-complete" ]]; then
    echo "compare_mpi: no trixie root at $root (run tools/compat/make-root.sh as root), or not" \
      "root: Open MPI is left out" >&2
    ompi=0
  fi
fi
in_root() {
  chroot "$root" /usr/bin/env -i PATH=/usr/bin:/bin HOME=/root TMPDIR=/tmp \
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "$@"
}
if ((ompi)); then
  for d in proc sys dev dev/shm; do
    mount --bind "/$d" "$root/$d" && mount --make-private "$root/$d" && mounted+=("$root/$d")
  done
  if ! in_root sh -c 'command -v mpicc >/dev/null && test -f /usr/include/x86_64-linux-gnu/openmpi/mpi.h' 2>/dev/null &&
    ! in_root test -f /usr/lib/x86_64-linux-gnu/openmpi/include/mpi.h; then
    echo "compare_mpi: adding libopenmpi-dev and gcc to the trixie root" >&2
    in_root apt-get install -y -q --no-install-recommends libopenmpi-dev gcc libc6-dev >/dev/null
  fi
  mkdir -p "$root/opt/compare_mpi"
  cp bench/mpi_bench.c "$root/opt/compare_mpi/"
  in_root mpicc -O2 -std=c11 /opt/compare_mpi/mpi_bench.c -o /opt/compare_mpi/mpi_bench || {
    echo "compare_mpi: Open MPI's mpicc failed" >&2
    exit 1
  }
fi

run_rft() {
  "$sdk/bin/mpiexec" -n 2 --with-ft ulfm --timeout 600 --no-rft-libpath \
    "$bin/bench/mpi_bench" --json --name rft --iters "$iters" --reps "$reps" 2>/dev/null |
    sed 's/^\[[0-9]*\] //' | grep '^{'
}
run_ompi() {
  in_root timeout 600 mpirun --with-ft ulfm --mca btl self,sm -n 2 \
    /opt/compare_mpi/mpi_bench --json --name ompi --iters "$iters" --reps "$reps" 2>/dev/null |
    grep '^{'
}
for ((round = 0; round < rounds; round++)); do
  echo "compare_mpi: round $((round + 1)) of $rounds" >&2
  if ((round % 2 == 0 || !ompi)); then
    run_rft >"$out/rft.$round"
    ((ompi)) && run_ompi >"$out/ompi.$round"
  else
    run_ompi >"$out/ompi.$round"
    run_rft >"$out/rft.$round"
  fi
done
python3 - "$out" "$rounds" "$json" <<'PY'
import json, statistics, sys, glob, os
out, rounds, as_json = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
def load(name, r):
    path = os.path.join(out, f"{name}.{r}")
    if not os.path.exists(path): return {}
    return {(d["bench"], d["size"]): d for d in map(json.loads, open(path)) }
runs = {n: [load(n, r) for r in range(rounds)] for n in ("rft", "ompi")}
keys = sorted({k for run in runs["rft"] for k in run}, key=lambda k: (k[0], k[1]))
rows = []
for key in keys:
    rft = [run[key]["value"] for run in runs["rft"] if key in run]
    ompi = [run[key]["value"] for run in runs["ompi"] if key in run]
    layer = [run[key]["layer"] for run in runs["rft"] if key in run and "layer" in run[key]]
    unit = next(run[key]["unit"] for run in runs["rft"] if key in run)
    pairs = [a / b for a, b in zip(
        [run.get(key, {}).get("value") for run in runs["rft"]],
        [run.get(key, {}).get("value") for run in runs["ompi"]]) if a and b]
    row = {"bench": key[0], "size": key[1], "unit": unit, "rft": statistics.median(rft)}
    if ompi: row["ompi"] = statistics.median(ompi)
    if pairs: row["rft_over_ompi"] = statistics.median(pairs)
    if layer: row["mpi_over_rft_h"] = statistics.median(layer)
    row["rounds"] = len(rft)
    rows.append(row)
# The speed targets (issue 41): ratios to Open MPI in the same run, a few rft-internal ratios,
# and revoke's absolute median and 99th percentile. "keep" rows are where rft leads and must not fall behind.
TARGETS = {
    ("barrier", 0): ("rft/ompi", "<=", 0.8), ("allreduce", 8): ("rft/ompi", "<=", 0.8),
    ("bcast", 8): ("rft/ompi", "<=", 0.8), ("reduce", 8): ("rft/ompi", "<=", 0.8),
    ("bandwidth", 8): ("rft/ompi", ">=", 1.2), ("bandwidth", 1048576): ("rft/ompi", ">=", 1.0),
    ("pingpong", 8): ("rft/ompi", "<=", 1.0), ("agree", 0): ("rft/ompi", "<=", 1.0),
    ("shrink", 0): ("rft/ompi", "<=", 1.0), ("dup", 0): ("rft/ompi", "<=", 1.0),
    ("iagree", 0): ("iagree/agree", "<=", 1.5), ("ishrink", 0): ("ishrink/shrink", "<=", 1.5),
    ("revoke", 0): ("us", "<=", 3.0), ("revoke_p99", 0): ("us", "<=", 20.0),
}
by_key = {(r["bench"], r["size"]): r for r in rows}
for key, (what, sense, bound) in TARGETS.items():
    row = by_key.get(key)
    if row is None: continue
    if what == "rft/ompi":
        value = row.get("rft_over_ompi")
    elif what == "us":
        value = row["rft"]
    else:
        base = by_key.get((what.split("/")[1], 0))
        value = row["rft"] / base["rft"] if base else None
    if value is None: continue
    row["target"] = f"{what} {sense} {bound}"
    row["target_value"] = value
    row["target_met"] = value <= bound if sense == "<=" else value >= bound
if as_json:
    for row in rows: print(json.dumps(row))
else:
    print(f"{'bench':10} {'bytes':>8} {'unit':5} {'rft':>10} {'ompi':>10} {'rft/ompi':>9} "
          f"{'MPI/rft.h':>9}  target")
    for r in rows:
        o = f"{r['ompi']:10.3f}" if "ompi" in r else f"{'-':>10}"
        q = f"{r['rft_over_ompi']:9.3f}" if "rft_over_ompi" in r else f"{'-':>9}"
        l = f"{r['mpi_over_rft_h']:9.3f}" if "mpi_over_rft_h" in r else f"{'':>9}"
        t = ""
        if "target" in r:
            t = f"  {r['target']}: {r['target_value']:.2f} {'met' if r['target_met'] else 'NOT MET'}"
        print(f"{r['bench']:10} {r['size']:8d} {r['unit']:5} {r['rft']:10.3f} {o} {q} {l}{t}")
    print("(bandwidth: MB/s, higher is better; the rest: microseconds, lower is better)")
PY
