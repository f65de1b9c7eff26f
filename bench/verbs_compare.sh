#!/usr/bin/env bash
# Runs the verbs eager channel's ping-pong (rft_bench_verbs) beside perftest's ib_send_lat on the
# same device in one invocation, and prints per size the medians and their ratio as JSON lines
# plus a table. Made for soft-RoCE guests (docs/verbs.md), where it runs on rxe0:
#
#   verbs_compare.sh [--reps R] [--iters N] [--device rxe0] [--gid 1] [--address IP] [--collect PEER | --serve PEER]
#
# rftrun and rft_bench_verbs are taken from this script's directory, then PATH. Each rep runs
# ib_send_lat for every size, then rft_bench_verbs --reps 1: interleaved, so that a slow stretch
# of an emulated machine hits both sides alike. Figures are medians over the reps of each side's
# median one-way latency (perftest's t_typical, rft's p50).
#
# In one machine (the default), perftest's server and client both run here, over the device's
# GID --gid at --address, and rft's two ranks under `rftrun -n 2`. Between two machines, the same
# command runs on both: `--collect PEER` on the one that prints the figures (perftest's client,
# rft's listener) and `--serve PEER` on the other (perftest's server, rft's connecting side).
# Both must be given the same --reps, --iters and sizes: they take their ports in the same
# order from 19000. A perftest run that prints no figure (it converts its TSC cycles with the CPU
# frequency it reads, and under emulation now and then prints "inf") is noted and left out; in
# one machine it is repeated up to 3 times. Exit 1 when a size ends without a figure, or a run of
# the serving side failed (its log is printed).
set -uo pipefail
source "$(dirname "$0")/client_server.sh"
parse_options "$@"
PATH=$(cd "$(dirname "$0")" && pwd):$PATH
sizes=(8 64 256 1024 4096)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
results=$work/results  # lines: "ref|rft|bw SIZE VALUE"
first_port
missing=0

# ib_send_lat SIZE: prints its t_typical, or nothing (its log is in $work/client.log).
perftest_once() {
  local size=$1
  client_server "$work/client.log" ib_send_lat -d "$device" -x "$gid" -s "$size" -n "$iters"
  # The column is found by its header: perftest versions differ in what precedes it.
  awk -v size="$size" '
    /t_typical|t_median/ { for (i = 1; i <= NF; i++) if ($i ~ /^t_(typical|median)/) col = i; next }
    col && $1 == size { print $col; exit }' "$work/client.log"
}

# ib_send_lat SIZE: appends "ref SIZE t_typical" to the results. perftest converts its TSC
# cycles with the CPU frequency it reads, and under emulation it now and then prints "inf":
# such a run is repeated (up to 3 times) and noted, never averaged in.
perftest_lat() {
  local size=$1 try value
  if [[ $mode == serve ]]; then
    perftest_once "$size"
    return
  fi
  for try in 1 2 3; do
    value=$(perftest_once "$size")
    port=$((port + 1))  # the subshell's count
    if [[ "$value" =~ ^[0-9]+(\.[0-9]*)?$ ]]; then
      echo "ref $size $value" >>"$results"
      return
    fi
    echo "verbs_compare: ib_send_lat -s $size, try $try: t_typical '${value}'; client log:" >&2
    grep -Eiv '^ *(-{5}|\*)|address|GID' "$work/client.log" | sed 's/^/  /' >&2
    # The serving side runs one server per size: no second try against it.
    [[ $mode == collect ]] && return
  done
}

# One run of the benchmark (two ranks under rftrun, or this machine's end of the pair connected
# by IP): appends "rft SIZE p50" per size and "bw SIZE MB/s".
rft_lat() {
  local -a bench=(rft_bench_verbs --json --reps 1 --iters "$iters")
  port=$((port + 1))
  case $mode in
    one) rftrun -n 2 --no-tag-output --timeout 300 "${bench[@]}" "$device" ;;
    collect) timeout 300 "${bench[@]}" --listen "$port" "$device" ;;
    serve) timeout 300 "${bench[@]}" --connect "$peer:$port" "$device" ;;
  esac >"$work/rft.log" 2>&1
  local status=$?
  if ((status != 0)); then
    echo "verbs_compare: rft_bench_verbs ended with status $status; its output:" >&2
    sed 's/^/  /' "$work/rft.log" >&2
    missing=1
    return
  fi
  awk '
    function field(line, name) {
      if (!match(line, "\"" name "\":[-0-9.e+]+")) return ""
      return substr(line, RSTART + length(name) + 3, RLENGTH - length(name) - 3)
    }
    /^\{"bench":"p2p_latency"/ { print "rft", field($0, "size"), field($0, "p50_us") }
    /^\{"bench":"p2p_bandwidth"/ { print "bw", field($0, "size"), field($0, "mb_s") }
  ' "$work/rft.log" >>"$results"
}

for ((rep = 1; rep <= reps; rep++)); do
  for size in "${sizes[@]}"; do perftest_lat "$size"; done
  rft_lat
done
end_if_serving "$missing"

# median KIND SIZE: the median of that kind's values for the size, or nothing.
median() {
  # Sorted in awk: the guest's busybox sort may lack -g.
  awk -v kind="$1" -v size="$2" '
    $1 == kind && $2 == size {
      for (i = n++; i > 0 && v[i - 1] > $3 + 0; i--) v[i] = v[i - 1]
      v[i] = $3 + 0
    }
    END { if (n) print (n % 2 ? v[(n - 1) / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) }' "$results"
}
# Every rep's value, so the spread shows.
each() {
  awk -v kind="$1" -v size="$2" '$1 == kind && $2 == size { printf " %s", $3 }' "$results"
}

rft_sizes=$(awk '$1 == "rft" { print $2 }' "$results" | sort -n -u)
table=$work/table
describe_pair "$device (GID $gid)"
printf '# verbs eager channel beside ib_send_lat %s: %s reps of %s iterations, one-way latency, medians\n' \
  "$where" "$reps" "$iters" >"$table"
printf '%8s %12s %14s %8s   %s\n' size rft_p50_us ib_send_lat_us ratio 'rft | ib_send_lat per rep' \
  >>"$table"
for size in $rft_sizes; do
  rft=$(median rft "$size")
  ref=$(median ref "$size")
  if [[ -n "$ref" ]]; then
    ratio=$(awk -v a="$rft" -v b="$ref" 'BEGIN { printf "%.3f", a / b }')
    printf '{"bench":"verbs_latency","n":2,"nodes":%s,"size":%s,"reps":%s,"iters":%s,"p50_us":%s,"ref":"ib_send_lat","ref_p50_us":%s,"ratio":%s}\n' \
      "$nodes" "$size" "$reps" "$iters" "$rft" "$ref" "$ratio"
  else
    ratio=-
    printf '{"bench":"verbs_latency","n":2,"nodes":%s,"size":%s,"reps":%s,"iters":%s,"p50_us":%s}\n' \
      "$nodes" "$size" "$reps" "$iters" "$rft"
  fi
  printf '%8s %12s %14s %8s  %s |%s\n' "$size" "$rft" "${ref:--}" "$ratio" "$(each rft "$size")" \
    "$(each ref "$size")" >>"$table"
done
bw_sizes=$(awk '$1 == "bw" { print $2 }' "$results" | sort -n -u)
for size in $bw_sizes; do
  bw=$(median bw "$size")
  printf '{"bench":"verbs_bandwidth","n":2,"nodes":%s,"size":%s,"reps":%s,"mb_s":%s}\n' "$nodes" "$size" "$reps" "$bw"
  printf '# streaming %s-byte messages: %s MB/s (reps:%s)\n' "$size" "$bw" "$(each bw "$size")" \
    >>"$table"
done
cat "$table"
for size in "${sizes[@]}"; do
  if [[ -z $(median ref "$size") || -z $(median rft "$size") ]]; then
    echo "verbs_compare: no figure for $size bytes in any rep" >&2
    missing=1
  fi
done
exit "$missing"
