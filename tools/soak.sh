#!/usr/bin/env bash
# Runs the multi-process test suites N times in a row, each round with fresh results (nothing
# cached), while `load` busy loops compete for the CPUs, and prints one line per round and a last
# line "soak: R rounds, N passed, N failed". A flaky test shows as a failed round, with its log
# kept in $RFT_SOAK_OUT/round-K.log.
#
#   tools/soak.sh                     50 rounds, 2 busy loops, //tests/multiproc:all
#   tools/soak.sh 10 2 //tests/multiproc:detector_test --config=asan
#   tools/soak.sh 50 2 "//tests/multiproc:all -//tests/multiproc:fault_matrix_test"
#
# The third argument is a space-separated target list (a leading '-' excludes); extra
# arguments after it go to `bazel test`.
set -uo pipefail
cd "$(dirname "$0")/.."

rounds=${1:-50}
load=${2:-2}
read -r -a targets <<<"${3:-//tests/multiproc:all}"
shift $(($# > 3 ? 3 : $#))
out=${RFT_SOAK_OUT:-/tmp/rft-soak}
mkdir -p "$out"

# Build first, without load: the rounds then only run tests.
bazel build "$@" -- "${targets[@]}" >"$out/build.log" 2>&1 || {
  tail -n 20 "$out/build.log"
  echo "soak: build failed"
  exit 1
}

spinners=()
stop_spinners() {
  for pid in "${spinners[@]}"; do kill "$pid" 2>/dev/null; done
}
trap stop_spinners EXIT
for ((i = 0; i < load; i++)); do
  (while :; do :; done) &
  spinners+=($!)
done

passed=0
failed=0
start=$(date +%s)
for ((round = 1; round <= rounds; round++)); do
  log="$out/round-$round.log"
  t0=$(date +%s)
  if bazel test --nocache_test_results --test_output=errors "$@" -- "${targets[@]}" >"$log" 2>&1; then
    passed=$((passed + 1))
    rm -f "$log"
    echo "round $round: passed ($(($(date +%s) - t0)) s)"
  else
    failed=$((failed + 1))
    echo "round $round: FAILED ($(($(date +%s) - t0)) s; log $log)"
    grep -E '^//.*FAILED|^\[  FAILED' "$log" | head -n 5 | sed 's/^/  /'
  fi
done
echo "soak: $rounds rounds in $(($(date +%s) - start)) s under $load busy loops," \
  "$passed passed, $failed failed"
((failed == 0))
