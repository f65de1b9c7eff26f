#!/usr/bin/env bash
# Builds rft and runs every test: the default build, then the sanitizer builds (asan, which is
# ASan and UBSan in one build, and tsan, unless RFT_TEST_CONFIGS says otherwise; ubsan alone is
# for developers and checks nothing asan does not), the compatibility stage (the default build's
# binaries in a Debian trixie root: UCX 1.18, PMIx 5, PRRTE/Open MPI 5; tools/compat/), Slurm
# (a single-node cluster of this machine running the default build's programs; tools/slurm/), the
# fuzz targets (tools/fuzz.sh) and the soft-RoCE guests' self-test (tools/softroce). Prints one
# line per configuration or stage with its wall time, then the times again, one line each, and,
# last, "N passed, N failed" counting the format and layering checks, GoogleTest cases (one per
# test case, not per Bazel target), compatibility and Slurm scenarios, fuzz targets and soft-RoCE
# checks.
#
# tsan runs the tests that can race, not every test a second time: the tests whose own sources
# start a thread (std::thread, std::jthread, pthread_create, std::async), the tests that depend
# on a library whose sources do (the control plane and the death watch in detector/, rftrun's
# launcher, ...) or on libpmix or UCX, whose own threads call into rft (PMIx's progress thread
# runs rft's callbacks; UCX has an async thread, and its memory hooks run in whichever thread
# unmaps), and every test in //tests/multiproc. The sources are searched at each run and bazel
# query maps them to the tests, so a new thread brings its tests in without an edit here. The
# tests left out have no second thread in the process, so no race for TSan to find; the default
# build and asan still run them. TSan builds only what the tests it runs need (the rest of //...
# is built by the default and asan stages, whose warnings are the same but for -Wtsan's fence
# check, which the threaded code all reaches). If the query fails, tsan runs all of //... and
# says so. asan runs every test, and builds only the tests and what they need; its reports are
# printed without symbols and named after the run (tools/symbolize_reports.py).
#
# Bazel's disk cache, outside the clone, lets a run on a machine that has built before reuse its
# actions (every clone has an output base of its own): RFT_BAZEL_DISK_CACHE, default
# ~/.cache/rft-bazel-disk; empty turns it off. Bazel 4 never trims it; delete it when it is too
# big. In CI (CI=true) no test result comes from it (--nocache_test_results): every CI run runs
# every test, as it did when each run started cold.
#
#   tools/test.sh                       everything
#   RFT_TEST_CONFIGS="default asan" RFT_TEST_STAGES="fuzz" tools/test.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

CONFIGS=${RFT_TEST_CONFIGS:-"default asan tsan"}
STAGES=${RFT_TEST_STAGES:-"slurm compat fuzz softroce"}
BAZEL_FLAGS=(--color=no --curses=no --show_progress_rate_limit=30)
[[ "${CI:-}" == "true" ]] && BAZEL_FLAGS+=(--noshow_progress)
# Unset: the default; set but empty: no disk cache. Without a HOME there is no default either.
disk_cache=${RFT_BAZEL_DISK_CACHE-${HOME:+$HOME/.cache/rft-bazel-disk}}
CACHE_FLAGS=()
[[ -n "$disk_cache" ]] && CACHE_FLAGS=(--disk_cache="$disk_cache")
TEST_FLAGS=()
[[ "${CI:-}" == "true" ]] && TEST_FLAGS=(--nocache_test_results)

total_passed=0
total_failed=0

# Wall time per configuration and stage, for the summary before the last line.
timed_names=()
timed_seconds=()
record_time() {  # NAME SECONDS
  timed_names+=("$1")
  timed_seconds+=("$2")
}

# Formatting is part of the code standard (Google style, 100 columns: .clang-format).
echo "=== clang-format --dry-run --Werror"
start=$SECONDS
mapfile -t sources < <(git ls-files '*.cc' '*.h' '*.c' '*.hpp' 2>/dev/null || find . -name '*.cc' -o -name '*.h')
if clang-format --dry-run --Werror "${sources[@]}"; then
  echo "=== format: 1 passed, 0 failed (${#sources[@]} files; $((SECONDS - start)) s)"
  total_passed=$((total_passed + 1))
else
  echo "=== format: 0 passed, 1 failed (run clang-format -i on the files above;" \
    "$((SECONDS - start)) s)"
  total_failed=$((total_failed + 1))
fi
record_time format $((SECONDS - start))

# What the compatibility and soft-RoCE stages boot comes from Debian's mirror on a fresh machine:
# the trixie root (~70 s) and the guests' kernel and initramfs (~40 s), mostly waits on the
# network and the disk. Both are made in the background while the default build compiles, and
# their stages wait for them (each script does nothing when its result is there already). The
# default configuration's tests start only once both are done, so that no test shares the CPUs
# with them.
prepare_dir=$(mktemp -d)
declare -A prepare_pids=()
prepare() {  # NAME SCRIPT: runs SCRIPT in the background, its output to $prepare_dir/NAME
  bash "$2" >"$prepare_dir/$1" 2>&1 &
  prepare_pids[$1]=$!
}
# prepared NAME: waits for NAME's preparation; prints its output and returns its status.
prepared() {
  [[ -n "${prepare_pids[$1]:-}" ]] || return 0
  local status=0
  wait "${prepare_pids[$1]}" || status=$?
  unset "prepare_pids[$1]"
  cat "$prepare_dir/$1"
  return "$status"
}
[[ " $STAGES " == *" compat "* ]] && prepare compat-root tools/compat/make-root.sh
[[ " $STAGES " == *" softroce "* ]] && prepare softroce-image tools/softroce/build_image.sh

# The layering (docs/architecture.md): Bazel must refuse a lower layer's dependency on a higher
# one. //transport/layering_check:upward is such a dependency; building it has to fail, and for
# that reason.
echo "=== layering: bazel build //transport/layering_check:upward (must be refused)"
start=$SECONDS
layering_log=$(mktemp)
if bazel build "${BAZEL_FLAGS[@]}" "${CACHE_FLAGS[@]}" //transport/layering_check:upward \
  >"$layering_log" 2>&1; then
  echo "=== layering: 0 passed, 1 failed (the transport could depend on the detector;" \
    "$((SECONDS - start)) s)"
  total_failed=$((total_failed + 1))
elif grep -q "is not visible from target '//transport/layering_check:upward'" "$layering_log"; then
  echo "=== layering: 1 passed, 0 failed ($((SECONDS - start)) s)"
  total_passed=$((total_passed + 1))
else
  tail -n 20 "$layering_log"
  echo "=== layering: 0 passed, 1 failed (the build failed for another reason;" \
    "$((SECONDS - start)) s)"
  total_failed=$((total_failed + 1))
fi
record_time layering $((SECONDS - start))
rm -f "$layering_log"

# The tests that can race (see the header), for tsan to run: prints their labels, one a line,
# then "RUN ALL": how many tests tsan runs, how many //... holds. Fails if a query does.
tsan_threaded_tests() {
  # libpmix and UCX start threads of their own; they are Bazel targets without sources here.
  local -a threaded=(//third_party/system:pmix //third_party/system:ucx)
  local -a files labels
  local f dir
  mapfile -t files < <(
    { git ls-files --cached --others --exclude-standard '*.cc' '*.h' '*.c' '*.hpp' 2>/dev/null ||
      find . -name 'bazel-*' -prune -o \( -name '*.cc' -o -name '*.h' -o -name '*.c' \
        -o -name '*.hpp' \) -print; } | sed 's|^\./||' |
      xargs -r -d '\n' grep -lE 'std::j?thread([^:[:alnum:]_]|$)|pthread_create|std::async' \
        2>/dev/null)
  # A file's label: the package is the nearest directory above it with a BUILD file.
  for f in "${files[@]}"; do
    dir=$(dirname "$f")
    while [[ "$dir" != "." && ! -f "$dir/BUILD" && ! -f "$dir/BUILD.bazel" ]]; do
      dir=$(dirname "$dir")
    done
    [[ "$dir" == "." ]] && dir=""
    labels+=("//$dir:${f#"${dir:+$dir/}"}")
  done
  # Matched by name among the source files Bazel knows: a file no rule uses (or a new one not in
  # a BUILD file yet) selects nothing, where naming it would fail the query.
  if ((${#labels[@]} > 0)); then
    local regex
    # shellcheck disable=SC2016  # sed's $, not the shell's
    regex=$(printf '%s\n' "${labels[@]}" | sed 's/[].[\*^$()+?{|]/\\&/g; s/^/^/; s/$/$/' |
      paste -sd'|')
    threaded+=("filter('$regex', kind('source file', //...:*))")
  fi
  local all="kind('.*_test', //...) except attr(tags, '\bmanual\b', //...)"
  local set
  set=$(printf ' + %s' "${threaded[@]}")
  set=${set# + }
  local -a all_tests run_tests
  mapfile -t all_tests < <(bazel query --color=no --curses=no "$all" 2>/dev/null; echo "rc=$?")
  [[ "${all_tests[-1]}" == "rc=0" ]] || return 1
  unset 'all_tests[-1]'
  mapfile -t run_tests < <(bazel query --color=no --curses=no \
    "($all) intersect (rdeps(//..., $set) + //tests/multiproc/...)" 2>/dev/null; echo "rc=$?")
  [[ "${run_tests[-1]}" == "rc=0" ]] || return 1
  unset 'run_tests[-1]'
  ((${#all_tests[@]} > 0 && ${#run_tests[@]} > 0)) || return 1
  printf '%s\n' "${run_tests[@]}"
  echo "${#run_tests[@]} ${#all_tests[@]}"
}

# A stage's own last line "<name>: N passed, N failed" is added to the totals; a stage that
# ends without one counts as one failure.
add_stage() {  # NAME LOG SECONDS
  local line
  record_time "$1" "$3"
  line=$(grep -E "^$1: [0-9]+ passed, [0-9]+ failed" "$2" | tail -n 1)
  if [[ -z "$line" ]]; then
    echo "=== $1: 0 passed, 1 failed (the stage printed no summary; $3 s)"
    total_failed=$((total_failed + 1))
    return
  fi
  read -r p f < <(sed -E 's/^[^:]+: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/' <<<"$line")
  echo "=== $1: $p passed, $f failed ($3 s)"
  total_passed=$((total_passed + p))
  total_failed=$((total_failed + f))
}

run_stage() {  # NAME TITLE SCRIPT: runs SCRIPT when NAME is among the stages
  [[ " $STAGES " == *" $1 "* ]] || return 0
  echo "=== $2"
  local log start=$SECONDS
  log=$(mktemp)
  bash "$3" 2>&1 | tee "$log"
  add_stage "$1" "$log" $((SECONDS - start))
  rm -f "$log"
}

for config in $CONFIGS; do
  start=$SECONDS
  config_flag=()
  [[ "$config" != "default" ]] && config_flag=(--config="$config")
  targets=(//...)
  note=""
  build_flags=()
  if [[ "$config" == "asan" ]]; then
    # The tests and what they need: the other programs (benchmarks, the verbs device checks)
    # compile with the same warnings in the default stage, and linking each under ASan took
    # minutes of a cold run.
    build_flags=(--build_tests_only)
    note=": the tests and what they need"
    # Reports without symbols: LeakSanitizer symbolizes the stacks of the leaks it suppresses
    # (libpmix's, at every exit), and the first symbolization reads every loaded library's debug
    # information; that was 27% of this stage's multi-process tests (docs/reliability.md). The
    # reports of failed tests get their names after the run (symbolize_reports.py, below).
    build_flags+=(--test_env=ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:symbolize=0)
  fi
  if [[ "$config" == "tsan" ]]; then
    if mapfile -t threaded < <(tsan_threaded_tests; echo "rc=$?") && [[ "${threaded[-1]}" == "rc=0" ]]
    then
      read -r run_count all_count <<<"${threaded[-2]}"
      threaded=("${threaded[@]:0:${#threaded[@]}-2}")
      # The threaded tests and what they need: the rest neither builds nor runs under TSan.
      targets=("${threaded[@]}")
      note=": the ${#threaded[@]} threaded tests"
      echo "=== tsan: runs the $run_count threaded tests of $all_count (tools/test.sh's header)"
    else
      echo "=== tsan: bazel query could not select the threaded tests; TSan runs all of //..."
    fi
    # Races inside libraries that rft cannot avoid (the file says which and why). By absolute
    # path: the tests' processes run in Bazel's sandbox, each from its own directory.
    build_flags+=("--test_env=TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1:suppressions=$PWD/tools/tsan_suppressions.txt")
  fi
  log=$(mktemp)
  if [[ "$config" == "default" && ${#prepare_pids[@]} -gt 0 ]]; then
    # Compiled beside the preparations above; the tests run after them. (Its errors come again
    # from bazel test, which counts them.)
    echo "=== bazel build //... (beside the compatibility root and the soft-RoCE image)"
    bazel build "${BAZEL_FLAGS[@]}" "${CACHE_FLAGS[@]}" --keep_going "${targets[@]}" >/dev/null 2>&1
    for name in "${!prepare_pids[@]}"; do
      wait "${prepare_pids[$name]}"
    done
  fi
  echo "=== bazel test //... ${config_flag[*]:-}$note"
  bazel test "${BAZEL_FLAGS[@]}" "${CACHE_FLAGS[@]}" "${TEST_FLAGS[@]}" "${config_flag[@]}" \
    "${build_flags[@]}" --keep_going "${targets[@]}" 2>&1 | tee "$log"
  testlogs=$(bazel info "${CACHE_FLAGS[@]}" "${config_flag[@]}" bazel-testlogs 2>/dev/null)
  read -r passed failed < <(python3 tools/count_tests.py "$log" "$testlogs")
  if [[ "$config" == "asan" && "$failed" != 0 ]]; then
    # The logs Bazel lists under the failed targets, their sanitizer frames named.
    mapfile -t failed_logs < <(grep -oE '^ +/\S+/test\.log$' "$log" | sed 's/^ *//')
    ((${#failed_logs[@]} > 0)) && python3 tools/symbolize_reports.py \
      "$(bazel info "${CACHE_FLAGS[@]}" "${config_flag[@]}" execution_root 2>/dev/null)" \
      "${failed_logs[@]}"
  fi
  echo "=== $config: $passed passed, $failed failed ($((SECONDS - start)) s)"
  record_time "$config" $((SECONDS - start))
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  rm -f "$log"
  if [[ "$config" == "default" && " $STAGES " == *" compat "* ]]; then
    # Staged now: the sanitizer builds overwrite bazel-bin. Counted in the compat stage's time.
    start=$SECONDS
    stage_dir=$(mktemp -d /var/tmp/rft-compat-stage.XXXXXX)
    if ! bash tools/compat/stage.sh "$stage_dir"; then
      echo "=== compat: could not stage the default build's binaries"
      compat_ready=0
    else
      compat_ready=1
    fi
    compat_staging_seconds=$((SECONDS - start))
  fi
  if [[ "$config" == "default" ]]; then
    # Now too, while bazel-bin is the default build's.
    run_stage slurm "Slurm: a single-node cluster of this machine (tools/slurm)" tools/slurm/run.sh
    slurm_ran=1
  fi
done
if [[ " $STAGES " == *" slurm "* && -z "${slurm_ran:-}" ]]; then
  echo "=== slurm: 0 passed, 1 failed (it runs the default build's programs: add default to" \
    "RFT_TEST_CONFIGS or leave slurm out of RFT_TEST_STAGES)"
  total_failed=$((total_failed + 1))
fi

if [[ " $STAGES " == *" compat "* ]]; then
  echo "=== compatibility: Debian trixie root (tools/compat)"
  start=$SECONDS
  log=$(mktemp)
  # The root made in the background: its output first (its status aside: make-root.sh, which does
  # nothing when the root is complete, tries again and says why when it is not).
  prepared compat-root >"$log" 2>&1
  cat "$log"
  if [[ "${compat_ready:-0}" -eq 1 ]] && bash tools/compat/make-root.sh 2>&1 | tee -a "$log"; then
    bash tools/compat/run.sh "$stage_dir" 2>&1 | tee -a "$log"
  fi
  add_stage compat "$log" $((SECONDS - start + ${compat_staging_seconds:-0}))
  rm -rf "$log" "${stage_dir:-/nonexistent}"
fi

run_stage fuzz "fuzzing: libFuzzer targets (tools/fuzz.sh)" tools/fuzz.sh
# The image's own output only when it failed: the stage builds it again, and says why.
[[ " $STAGES " == *" softroce "* ]] && ! prepared softroce-image >/dev/null &&
  cat "$prepare_dir/softroce-image"
rm -rf "$prepare_dir"
run_stage softroce "soft-RoCE: qemu guests with rdma_rxe (tools/softroce)" tools/softroce/selftest.sh

for i in "${!timed_names[@]}"; do
  printf '=== time: %-9s %6d s\n' "${timed_names[$i]}" "${timed_seconds[$i]}"
done
printf '=== time: %-9s %6d s\n' total "$SECONDS"
echo "$total_passed passed, $total_failed failed"
[[ $total_failed -eq 0 ]]
