#!/usr/bin/env bash
# The soft-RoCE guest's half of `bench/count_instructions.sh --verbs`, which stages this script
# with rftrun, rft_bench_p2p and callgrind (its tool files in ./valgrind-lib) and boots the
# guest. Runs under callgrind, each twice (2,000 and 6,000 round trips):
#   rft_bench_p2p 8 B over the verbs backend (both ranks profiled), and
#   ib_send_lat 8 B (its client profiled; the server runs plain),
# then prints the callgrind files, gzipped and base64-encoded, between the lines
# "callgrind-files-begin" and "callgrind-files-end" (the guest's only way out is its console).
# Exit 1 when a run failed (its log is printed).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export VALGRIND_LIB=$here/valgrind-lib
out=$(mktemp -d)
status=0

# A failed run: says so, with the end of its log.
failed() {  # WHAT LOG
  echo "count_instructions_guest: $1 failed; its log ends:" >&2
  tail -n 20 "$2" | sed 's/^/  /' >&2
  status=1
}

for iters in 2000 6000; do
  mkdir -p "$out/rft$iters"
  env RFT_TRANSPORT=verbs RFT_SHM_RINGS=n RFT_RENDEZVOUS=ucx RFT_PROGRESS=poll \
    UCX_TLS=rc,self UCX_NET_DEVICES=rxe0:1 UCX_UD_ETH_DGID_CHECK=n \
    rftrun -n 2 --timeout 900 valgrind --tool=callgrind \
    --callgrind-out-file="$out/rft$iters/out.%p" rft_bench_p2p --sizes 8 --iters "$iters" \
    --latency-only >"$out/rft$iters.log" 2>&1 ||
    failed "rft_bench_p2p --iters $iters" "$out/rft$iters.log"
done

port=$((19000 + RANDOM % 1000))
for n in 2000 6000; do
  port=$((port + 1))
  ib_send_lat -d rxe0 -x 1 -s 8 -n "$n" -p "$port" >"$out/server$n.log" 2>&1 &
  server=$!
  ran=0
  # The server starts in a moment; callgrind's client takes longer, but retry as client_server.sh.
  for _ in $(seq 1 20); do
    if timeout 600 valgrind --tool=callgrind --callgrind-out-file="$out/ib_send_lat$n.out" \
      ib_send_lat -d rxe0 -x 1 -s 8 -n "$n" -p "$port" "${SOFTROCE_IP:-127.0.0.1}" \
      >"$out/client$n.log" 2>&1; then
      ran=1
      break
    fi
    sleep 1
  done
  kill "$server" 2>/dev/null
  wait "$server" 2>/dev/null
  ((ran)) || failed "ib_send_lat -n $n" "$out/client$n.log"
done

echo "callgrind-files-begin"
(cd "$out" && tar -cf - rft2000 rft6000 ib_send_lat2000.out ib_send_lat6000.out 2>/dev/null) |
  gzip -c | base64
echo "callgrind-files-end"
exit "$status"
