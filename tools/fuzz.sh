#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ with clang (ASan + UBSan, no Bazel) and runs each one for
# a while on a copy of its seed corpus plus its saved regression inputs. Prints one line per
# target and, last, "fuzz: N passed, N failed"; exits non-zero if any target failed. A missing
# compiler or fuzzer runtime fails every target: a fuzz run that cannot run must not look green.
#
# The fuzzing time is a budget for the whole run, split evenly over the targets it runs (at
# least 5 s each), so that adding a target does not lengthen CI. The budget is fuzzing alone:
# every target first runs its regression inputs and seed corpus in full, however short its share
# (libFuzzer checks the time only after them), and the builds come on top. A target (its build,
# then its fuzzing) uses one core: RFT_FUZZ_JOBS of them run at once (default: the cores), each
# with its whole share, so the stage's wall time is the budget divided by the cores.
#
#   tools/fuzz.sh                          every target, 150 s of fuzzing in all
#   RFT_FUZZ_SECONDS=600 tools/fuzz.sh wire_header     one target, longer
#   RFT_FUZZ_TOTAL_SECONDS=600             the budget of the whole run (default 150)
#   RFT_FUZZ_SECONDS=60                    seconds per target instead, whatever the budget
#   RFT_FUZZ_OUT=/tmp/somewhere            build and work directory (default /tmp/rft-fuzz)
#   RFT_FUZZ_CXX=clang++-15                compiler (default clang++-14)
#   RFT_FUZZ_NICE=0                        niceness of builds and runs (default 10: CI's other
#                                          stages come first; 0 for a long run that must get CPU)
#   RFT_FUZZ_JOBS=1                        targets at once (default: nproc)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
repo=$(pwd)

out=${RFT_FUZZ_OUT:-/tmp/rft-fuzz}
total_seconds=${RFT_FUZZ_TOTAL_SECONDS:-150}
cxx=${RFT_FUZZ_CXX:-clang++-14}
niceness=${RFT_FUZZ_NICE:-10}
lanes=${RFT_FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
# shellcheck disable=SC2054  # the commas are clang's
flags=(-std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
  -Wall -Wextra -I"$repo")

# The repo sources each target links, found from its includes. Narrow on purpose: no UCX, no
# PMIx, nothing with threads or I/O.
base_status="base/status.cc base/check.cc base/error.cc"
base_config="base/config.cc base/settings.cc $base_status"
declare -A sources=(
  [wire_header]="transport/wire/wire_header.cc"
  [rendezvous]="transport/wire/rendezvous.cc"
  [broadcast]="detector/reliable_broadcast.cc detector/live_ring.cc base/rank_set.cc $base_status"
  [heartbeat]="detector/heartbeat_ring.cc detector/live_ring.cc base/rank_set.cc $base_status"
  [config]="$base_config"
  [log_level]="base/log.cc $base_config"
  [rank_set]="base/rank_set.cc $base_status"
  [rftrun_options]="tools/rftrun/options.cc $base_config"
  [peer_record]="detector/peer_record.cc $base_status"
  [dataplane_record]="transport/dataplane/record.cc $base_status"
  [qp_table]="transport/verbs/qp_address.cc $base_status"
  [cpu_list]="transport/bootstrap/cpu_placement.cc $base_status"
  [era_message]="agreement/era_message.cc agreement/era_node.cc base/rank_set.cc $base_status"
  [merge_record]="ulfm_api/merge_record.cc transport/bootstrap/rank_space.cc base/rank_set.cc $base_status"
)
all_targets=(wire_header rendezvous broadcast heartbeat config log_level rank_set rftrun_options
  peer_record dataplane_record qp_table cpu_list era_message merge_record)

if (($# > 0)); then
  targets=("$@")
else
  targets=("${all_targets[@]}")
fi

# Whole seconds: libFuzzer's -max_total_time takes nothing else.
for value in "$total_seconds" "${RFT_FUZZ_SECONDS:-1}"; do
  if [[ ! "$value" =~ ^[0-9]+$ ]]; then
    echo "fuzz: RFT_FUZZ_TOTAL_SECONDS and RFT_FUZZ_SECONDS are whole seconds, not \"$value\""
    echo "fuzz: 0 passed, ${#targets[@]} failed"
    exit 1
  fi
done
if [[ ! "$lanes" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz: RFT_FUZZ_JOBS is a count of targets at once (1 or more), not \"$lanes\""
  echo "fuzz: 0 passed, ${#targets[@]} failed"
  exit 1
fi
if [[ -n "${RFT_FUZZ_SECONDS:-}" ]]; then
  seconds=$RFT_FUZZ_SECONDS
else
  seconds=$((total_seconds / ${#targets[@]}))
  ((seconds < 5)) && seconds=5
fi
echo "fuzz: ${#targets[@]} targets, $seconds s of fuzzing each, $lanes at once"

mkdir -p "$out/bin" "$out/logs" "$out/results"

# Rebuilds bin/<target>_fuzz when it is missing or older than any of its sources or headers.
build() {
  local target=$1 bin="$out/bin/$1_fuzz"
  local -a srcs
  read -r -a srcs <<<"fuzz/${target}_fuzz.cc ${sources[$target]}"
  if [[ -x "$bin" ]] && [[ -z "$(find fuzz base agreement detector transport tools/rftrun ulfm_api \
    \( -name '*.cc' -o -name '*.h' \) -newer "$bin" -print -quit)" ]]; then
    return 0
  fi
  nice -n "$niceness" "$cxx" "${flags[@]}" "${srcs[@]}" -o "$bin" >"$out/logs/$target.build" 2>&1
}

if ! command -v "$cxx" >/dev/null 2>&1; then
  echo "fuzz: compiler $cxx not found (install clang-14 and libclang-rt-14-dev)" >&2
fi

fuzz_one() {  # TARGET: builds and fuzzes it; its last line says passed or failed
  local target=$1 work log status execs cov detail
  local -a dirs
  if [[ -z "${sources[$target]+set}" ]]; then
    echo "fuzz $target: failed (no such target; known: ${all_targets[*]})"
    return 1
  fi
  if ! build "$target"; then
    sed 's/^/  /' "$out/logs/$target.build" | tail -n 20
    echo "fuzz $target: failed (build failed; see $out/logs/$target.build)"
    return 1
  fi
  # Work on a copy: the fuzzer adds what it finds to its first corpus directory, and the seed
  # corpus in the repo stays small and reviewed.
  work="$out/work/$target"
  rm -rf "$work"
  mkdir -p "$work/corpus" "$work/artifacts"
  if [[ -d "fuzz/corpus/$target" ]]; then
    cp -r "fuzz/corpus/$target/." "$work/corpus/"
  fi
  dirs=("$work/corpus")
  # Saved crashers run first thing, as part of the corpus: a regression fails the target.
  if [[ -d "fuzz/regressions/$target" ]] && [[ -n "$(ls -A "fuzz/regressions/$target")" ]]; then
    dirs+=("fuzz/regressions/$target")
  fi
  log="$out/logs/$target.log"
  UBSAN_OPTIONS=print_stacktrace=1 nice -n "$niceness" "$out/bin/${target}_fuzz" \
    -max_total_time="$seconds" -timeout=5 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "${dirs[@]}" >"$log" 2>&1
  status=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
  detail="${execs:-?} execs, ${cov:-?} coverage"
  # Success needs both a clean exit and the final stats: a binary that died before fuzzing
  # (e.g. a missing runtime library) prints none.
  if ((status == 0)) && [[ -n "$execs" ]]; then
    echo "fuzz $target: passed ($detail)"
  else
    grep -E 'ERROR|SUMMARY|runtime error|fuzz property violated|Test unit written' "$log" |
      head -n 8 | sed 's/^/  /'
    echo "fuzz $target: failed ($detail; exit $status; log $log, inputs in $work/artifacts)"
  fi
}

# Up to $lanes targets at once, each one's lines kept apart and printed in the targets' order.
for target in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= lanes)); do wait -n; done
  fuzz_one "$target" >"$out/results/$target" 2>&1 &
done
wait
passed=0
failed=0
for target in "${targets[@]}"; do
  cat "$out/results/$target"
  if tail -n 1 "$out/results/$target" | grep -q "^fuzz $target: passed"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
  fi
done

echo "fuzz: $passed passed, $failed failed"
((failed == 0))
