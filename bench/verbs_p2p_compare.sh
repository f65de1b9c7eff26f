#!/usr/bin/env bash
# Runs rft's data plane (rft_bench_p2p) over the verbs backend beside perftest and ucx_perftest
# on the same device in one invocation, and prints the medians and ratios as JSON lines plus a
# table. Made for a soft-RoCE guest (docs/verbs.md), where only ratios mean anything:
#
#   verbs_p2p_compare.sh [--reps R] [--iters N] [--device rxe0] [--gid 1] [--address IP] [--collect PEER | --serve PEER]
#
# rftrun and rft_bench_p2p are taken from this script's directory, then PATH. Each rep runs the
# 8 B latencies first, then the 1 MiB bandwidths, every program once (interleaved, so that a
# slow stretch of an emulated guest hits every side alike):
#   perftest: ib_send_lat 8 B and ib_read_bw 1 MiB, server and client in this machine;
#   ucx_perftest: tag_lat 8 B and tag_bw 1 MiB over UCX's rc transport on the device;
#   rft_bench_p2p 8 B and 1 MiB under rftrun -n 2 with RFT_TRANSPORT=verbs, and =ucx (the
#   data plane over UCX's rc, for the same comparison inside rft).
# rft over verbs and UCX's rc run back to back, the one first in odd reps and the other in even
# ones, so that neither always follows the same program. Same-node rings and CMA are off, so
# that the two ranks talk through the device. Figures are medians over the reps: one-way
# latency (perftest's t_typical, UCX's typical, rft's p50; and the means, perftest's t_avg,
# UCX's overall average and rft's avg_us, since UCX's median moves in steps of 0.5 us in a
# guest: its clock's ticks) and bandwidth in MB/s (perftest's average, UCX's and rft's). Each
# ratio comes twice: of the medians, and the median of each rep's own ratio ("paired"), which
# a drift of the host's load over the run moves less. Exit 1 when a measurement is missing.
#
# Between two machines the same command runs on both, with the same --reps and --iters:
# `--collect PEER` where the figures are printed (the reference programs' clients, and rftrun
# --listen at --address: rank 0) and `--serve PEER` on the other (their servers, and rftrun
# --join); one rank per machine. Both count the same ports from 19000.
set -uo pipefail
source "$(dirname "$0")/client_server.sh"
parse_options "$@"
PATH=$(cd "$(dirname "$0")" && pwd):$PATH
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results=$work/results  # lines: "NAME VALUE REP"
first_port
missing=0
ucx_rc="UCX_TLS=rc,self UCX_NET_DEVICES=$device:1 UCX_UD_ETH_DGID_CHECK=n"

# record NAME VALUE: keeps a number; anything else is a missing measurement, with the log. The
# serving side keeps nothing; only a failed rft run of its own counts there.
record() {
  if [[ $mode == serve ]]; then
    [[ $2 == failed ]] && missing=1
    return 0
  fi
  if [[ "$2" =~ ^[0-9]+(\.[0-9]*)?$ ]]; then
    echo "$1 $2 $rep" >>"$results"
  else
    echo "verbs_p2p_compare: $1: no figure ('$2'); its log:" >&2
    tail -n 15 "$work/$1.log" 2>/dev/null | sed 's/^/  /' >&2
    missing=1
  fi
}

# perftest's figure in the row of SIZE: the column whose header matches PATTERN (ib_send_lat's
# header is one word per column), or, with a number for PATTERN, that column (ib_read_bw's
# "BW peak[MB/sec] BW average[MB/sec]" headers are two words each: the average is column 4).
perftest_column() {
  awk -v size="$1" -v pattern="$2" '
    pattern ~ /^[0-9]+$/ { col = pattern }
    /#bytes/ && !col { for (i = 1; i <= NF; i++) if ($i ~ pattern) col = i; next }
    col && $1 == size { print $col; exit }' "$3"
}

# rft_bench_p2p under rftrun with RFT_TRANSPORT=$1: the 8-byte latency (--iters ITERS) into
# "rft_$1_lat", or the 1 MiB bandwidth (--iters 10: windows of 64 messages, 640 MiB through the
# emulated device) into "rft_$1_bw".
run_rft() {  # TRANSPORT SIZE ITERS
  local -a launch=(rftrun -n 2)
  port=$((port + 1))
  [[ $mode == collect ]] && launch=(rftrun --nodes 2 --listen "$address:$port" -n 1)
  [[ $mode == serve ]] && launch=(rftrun --join "$peer:$port" -n 1)
  env RFT_TRANSPORT="$1" RFT_SHM_RINGS=n RFT_RENDEZVOUS=ucx $ucx_rc \
    "${launch[@]}" --no-tag-output --timeout 600 rft_bench_p2p --sizes "$2" --iters "$3" \
    --json >"$work/rft_$1.log" 2>&1
}
rft_lat() {  # TRANSPORT: the median into "rft_TRANSPORT_lat", the mean into "..._avg"
  if run_rft "$1" 8 "$iters"; then
    record "rft_$1_lat" "$(json_field p2p_latency 8 p50_us "$work/rft_$1.log")"
    record "rft_$1_avg" "$(json_field p2p_latency 8 avg_us "$work/rft_$1.log")"
  else
    record "rft_$1_lat" failed
    record "rft_$1_avg" failed
  fi
}
json_field() {  # BENCH SIZE FIELD LOG: FIELD of rft_bench_p2p's JSON line for BENCH at SIZE
  awk -F"\"$3\": *" -v bench="\"$1\"" -v size="\"size\": *$2," \
    'index($0, bench) && $0 ~ size { split($2, v, /[,}]/); print v[1]; exit }' "$4"
}
rft_bw() {  # TRANSPORT
  if run_rft "$1" 1048576 10; then
    record "rft_$1_bw" "$(json_field p2p_bandwidth 1048576 mb_s "$work/rft_$1.log")"
  else
    record "rft_$1_bw" failed
  fi
}
ucx_lat() {  # its median (in steps of 0.5 us in a guest: its clock's ticks) and its mean
  client_server "$work/ucx_tag_lat.log" env $ucx_rc ucx_perftest -t tag_lat -s 8 -n "$iters"
  record ucx_tag_lat "$(awk '/^Final/ { print $3 }' "$work/ucx_tag_lat.log")"
  record ucx_tag_avg "$(awk '/^Final/ { print $5 }' "$work/ucx_tag_lat.log")"
}

for ((rep = 1; rep <= reps; rep++)); do
  client_server "$work/ib_send_lat.log" ib_send_lat -d "$device" -x "$gid" -s 8 -n "$iters"
  record ib_send_lat "$(perftest_column 8 '^t_(typical|median)' "$work/ib_send_lat.log")"
  record ib_send_avg "$(perftest_column 8 '^t_avg' "$work/ib_send_lat.log")"
  if ((rep % 2)); then
    ucx_lat
    rft_lat verbs
  else
    rft_lat verbs
    ucx_lat
  fi
  rft_lat ucx
  client_server "$work/ib_read_bw.log" ib_read_bw -d "$device" -x "$gid" -s 1048576 -n 200
  record ib_read_bw "$(perftest_column 1048576 4 "$work/ib_read_bw.log")"
  client_server "$work/ucx_tag_bw.log" env $ucx_rc ucx_perftest -t tag_bw -s 1048576 -n 200
  record ucx_tag_bw "$(awk '/^Final/ { print $6 }' "$work/ucx_tag_bw.log")"
  rft_bw verbs
  rft_bw ucx
done

middle() {  # the median of the numbers on stdin, one per line, or nothing
  sort -g | awk '{ v[n++] = $1 }
    END { if (n) print (n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) }'
}
median() {  # NAME: the median of its values, or nothing
  awk -v name="$1" '$1 == name { print $2 }' "$results" | middle
}
each() { awk -v name="$1" '$1 == name { printf " %s", $2 }' "$results"; }
# paired A B: the median over the reps that measured both of A's figure over B's.
paired() {
  local m
  m=$(awk -v a="$1" -v b="$2" '
    $1 == a { x[$3] = $2 + 0 }
    $1 == b { y[$3] = $2 + 0 }
    END { for (r in x) if ((r in y) && y[r] > 0) printf "%.17g\n", x[r] / y[r] }' "$results" |
    middle)
  [[ -n $m ]] && printf '%.3f' "$m"
}

# line BENCH SIZE FIELD RFT REF: a JSON line and a table row for rft-verbs against REF.
line() {
  local bench=$1 size=$2 field=$3 rft=$4 ref=$5 a b ratio pair
  a=$(median "$rft")
  b=$(median "$ref")
  [[ -n "$a" && -n "$b" ]] || return
  ratio=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.3f", a / b }')
  pair=$(paired "$rft" "$ref")
  printf '{"bench":"%s","transport":"verbs","n":2,"nodes":%s,"size":%s,"reps":%s,"%s":%s,"ref":"%s","ref_%s":%s,"ratio":%s,"paired_ratio":%s}\n' \
    "$bench" "$nodes" "$size" "$reps" "$field" "$a" "$ref" "$field" "$b" "$ratio" "${pair:-null}"
  printf '%-14s %8s %-9s %10s %-14s %10s %7s %7s   %s |%s\n' "$bench" "$size" "$rft" "$a" "$ref" \
    "$b" "$ratio" "${pair:--}" "$(each "$rft")" "$(each "$ref")" >>"$work/table"
}
end_if_serving "$missing"
describe_pair "$device"
printf '# rft data plane over verbs beside perftest and UCX rc %s: %s reps; medians, their ratio,\n# the paired ratio, then each rep\n' \
  "$where" "$reps" >"$work/table"
line p2p_latency 8 p50_us rft_verbs_lat ib_send_lat
line p2p_latency 8 p50_us rft_verbs_lat ucx_tag_lat
line p2p_latency 8 p50_us rft_verbs_lat rft_ucx_lat
line p2p_latency 8 avg_us rft_verbs_avg ib_send_avg
line p2p_latency 8 avg_us rft_verbs_avg ucx_tag_avg
line p2p_latency 8 avg_us rft_verbs_avg rft_ucx_avg
line p2p_bandwidth 1048576 mb_s rft_verbs_bw ib_read_bw
line p2p_bandwidth 1048576 mb_s rft_verbs_bw ucx_tag_bw
line p2p_bandwidth 1048576 mb_s rft_verbs_bw rft_ucx_bw
cat "$work/table"
exit "$missing"
