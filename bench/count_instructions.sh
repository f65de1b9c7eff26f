#!/usr/bin/env bash
# Counts the instructions one 8 B round trip costs, per process, with callgrind
# (docs/performance.md, "Where a round trip's instructions go"): rft over UCX beside UCX's own
# ucp_am_lat on this host, or with --verbs rft over the verbs backend beside perftest's
# ib_send_lat in a soft-RoCE guest. Instruction counts do not move with the load on this shared
# host (nor with the emulation's swings in the guest), so a change of a few instructions on the
# hot path shows here where a timed run would lose it in the noise.
#
#   bench/count_instructions.sh [--verbs] [--json] [--top N] [--keep DIR]
#
# --keep DIR keeps the callgrind files and their annotations there, to look further.
#
# Each program runs twice under callgrind, with N and 2N round trips; bench/instructions.py
# takes the difference of each function's own count between the runs, divided by the extra
# round trips: what one round trip costs it, start-up and exit cancelled out. The functions that
# spin while a process waits for its reply are counted apart as "polling": how often they spin
# depends on how long the other side takes, so that figure varies from run to run and the
# others do not. In the guest, callgrind sees user space only: the kernel's share of a verbs
# send (rxe runs there) is the same for rft and for ib_send_lat, and is not counted.
set -euo pipefail
cd "$(dirname "$0")/.."
verbs=0
keep=''
report=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --verbs) verbs=1 ;;
    --json) report+=(--json) ;;
    --top) report+=(--top "$2"); shift ;;
    --keep) keep=$2; shift ;;
    *) echo "count_instructions.sh: unknown argument '$1': expected --verbs, --json, --top N or --keep DIR" >&2
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
trap 'if [[ -n $keep ]]; then mkdir -p "$keep" && cp -r "$work"/. "$keep"/; fi; rm -rf "$work"' EXIT

annotate() {  # FILE...: FILE.txt, its functions' own counts
  local f
  for f in "$@"; do callgrind_annotate --auto=no --threshold=100 "$f" >"$f.txt" 2>/dev/null; done
}
# rftrun starts rank 0 first: the lower process id of each run is rank 0.
rank_file() {  # DIR RANK
  echo "$1/$(find "$1" -name 'out.*' ! -name '*.txt' -printf '%f\n' | sort -t. -k2 -n |
    sed -n "$(($2 + 1))p")"
}

if ((verbs)); then
  stage=$work/stage
  mkdir -p "$stage/valgrind-lib"
  cp "$bin/tools/rftrun/rftrun" "$bin/bench/rft_bench_p2p" bench/count_instructions_guest.sh \
    "$stage/"
  # Debian's valgrind is a script that runs valgrind.bin; the guest has no perl or python, so
  # the launcher goes in under the script's name.
  launcher=$(command -v valgrind.bin || command -v valgrind)
  cp "$launcher" "$stage/valgrind"
  cp /usr/libexec/valgrind/callgrind-amd64-linux /usr/libexec/valgrind/vgpreload_core-amd64-linux.so \
    /usr/libexec/valgrind/default.supp "$stage/valgrind-lib/"
  status=0
  tools/softroce/softroce.sh --timeout 1800 --memory 3072 --add "$stage" -- count_instructions_guest.sh \
    >"$work/guest.out" 2>&1 || status=$?
  if ((status != 0)) || ! grep -q '^callgrind-files-end' "$work/guest.out"; then
    echo "count_instructions.sh: the guest run failed (status $status); its output ends:" >&2
    grep -v '^[A-Za-z0-9+/=]*$' "$work/guest.out" | tail -n 30 >&2
    exit 1
  fi
  mkdir -p "$work/files"
  sed -n '/^callgrind-files-begin/,/^callgrind-files-end/p' "$work/guest.out" | sed '1d;$d' |
    base64 -d | gzip -dc | tar -xf - -C "$work/files"
  f=$work/files
  annotate "$(rank_file "$f/rft2000" 0)" "$(rank_file "$f/rft2000" 1)" \
    "$(rank_file "$f/rft6000" 0)" "$(rank_file "$f/rft6000" 1)" \
    "$f/ib_send_lat2000.out" "$f/ib_send_lat6000.out"
  # --iters 2000 and 6000 differ by 4,400 round trips (warm-up included); -n by 4,000.
  python3 bench/instructions.py "${report[@]}" \
    "rft verbs rank 0:$(rank_file "$f/rft2000" 0).txt:$(rank_file "$f/rft6000" 0).txt:4400" \
    "rft verbs rank 1:$(rank_file "$f/rft2000" 1).txt:$(rank_file "$f/rft6000" 1).txt:4400" \
    "ib_send_lat:$f/ib_send_lat2000.out.txt:$f/ib_send_lat6000.out.txt:4000"
  exit 0
fi

# rft: both ranks profiled, the ping-pong alone (--latency-only); --iters 4000 and 8000 differ by
# 4,400 round trips (warm-up included) and nothing else.
for iters in 4000 8000; do
  mkdir -p "$work/rft$iters"
  RFT_SHM_RINGS=n RFT_RENDEZVOUS=ucx RFT_PROGRESS=poll "$bin"/tools/rftrun/rftrun -n 2 \
    --timeout 600 valgrind --tool=callgrind --callgrind-out-file="$work/rft$iters/out.%p" \
    "$bin"/bench/rft_bench_p2p --sizes 8 --iters "$iters" --latency-only >/dev/null 2>&1
done
# UCX's reference: the client's side of ucp_am_lat with peer error handling (what rft runs with).
port=$((20000 + RANDOM % 20000))
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
annotate "$(rank_file "$work/rft4000" 0)" "$(rank_file "$work/rft4000" 1)" \
  "$(rank_file "$work/rft8000" 0)" "$(rank_file "$work/rft8000" 1)" "$work"/ucx*.out
python3 bench/instructions.py "${report[@]}" \
  "rft rank 0:$(rank_file "$work/rft4000" 0).txt:$(rank_file "$work/rft8000" 0).txt:4400" \
  "rft rank 1:$(rank_file "$work/rft4000" 1).txt:$(rank_file "$work/rft8000" 1).txt:4400" \
  "ucp_am_lat -e:$work/ucx20000.out.txt:$work/ucx40000.out.txt:20000"
