#!/usr/bin/env bash
# Builds rft and runs every test: the default build, then the sanitizer builds (asan, which is
# ASan and UBSan in one build, and tsan, unless RFT_TEST_CONFIGS says otherwise; ubsan alone is
# for developers and checks nothing asan does not), the compatibility stage (the default build's
# binaries in a Debian trixie root: UCX 1.18, PMIx 5, PRRTE/Open MPI 5; tools/compat/), the
# fuzz targets (tools/fuzz.sh) and the soft-RoCE guests' self-test (tools/softroce). Prints one
# line per configuration or stage and, last, "N passed, N failed" counting the format and
# layering checks, GoogleTest cases (one per test case, not per Bazel target), compatibility
# scenarios, fuzz targets and soft-RoCE checks.
#
#   tools/test.sh                       everything
#   RFT_TEST_CONFIGS="default asan" RFT_TEST_STAGES="fuzz" tools/test.sh
set -uo pipefail
cd "$(dirname "$0")/.."

CONFIGS=${RFT_TEST_CONFIGS:-"default asan tsan"}
STAGES=${RFT_TEST_STAGES:-"compat fuzz softroce"}
BAZEL_FLAGS=(--color=no --curses=no --show_progress_rate_limit=30)
[[ "${CI:-}" == "true" ]] && BAZEL_FLAGS+=(--noshow_progress)

total_passed=0
total_failed=0

# Formatting is part of the code standard (Google style, 100 columns: .clang-format).
echo "=== clang-format --dry-run --Werror"
mapfile -t sources < <(git ls-files '*.cc' '*.h' '*.c' '*.hpp' 2>/dev/null || find . -name '*.cc' -o -name '*.h')
if clang-format --dry-run --Werror "${sources[@]}"; then
  echo "=== format: 1 passed, 0 failed (${#sources[@]} files)"
  total_passed=$((total_passed + 1))
else
  echo "=== format: 0 passed, 1 failed (run clang-format -i on the files above)"
  total_failed=$((total_failed + 1))
fi

# The layering (docs/architecture.md): Bazel must refuse a lower layer's dependency on a higher
# one. //transport/layering_check:upward is such a dependency; building it has to fail, and for
# that reason.
echo "=== layering: bazel build //transport/layering_check:upward (must be refused)"
layering_log=$(mktemp)
if bazel build "${BAZEL_FLAGS[@]}" //transport/layering_check:upward >"$layering_log" 2>&1; then
  echo "=== layering: 0 passed, 1 failed (the transport could depend on the detector)"
  total_failed=$((total_failed + 1))
elif grep -q "is not visible from target '//transport/layering_check:upward'" "$layering_log"; then
  echo "=== layering: 1 passed, 0 failed"
  total_passed=$((total_passed + 1))
else
  tail -n 20 "$layering_log"
  echo "=== layering: 0 passed, 1 failed (the build failed for another reason)"
  total_failed=$((total_failed + 1))
fi
rm -f "$layering_log"

for config in $CONFIGS; do
  config_flag=()
  [[ "$config" != "default" ]] && config_flag=(--config="$config")
  log=$(mktemp)
  echo "=== bazel test //... ${config_flag[*]:-}"
  bazel test "${BAZEL_FLAGS[@]}" "${config_flag[@]}" --keep_going //... 2>&1 | tee "$log"
  testlogs=$(bazel info "${config_flag[@]}" bazel-testlogs 2>/dev/null)
  read -r passed failed < <(python3 tools/count_tests.py "$log" "$testlogs")
  echo "=== $config: $passed passed, $failed failed"
  total_passed=$((total_passed + passed))
  total_failed=$((total_failed + failed))
  rm -f "$log"
  if [[ "$config" == "default" && " $STAGES " == *" compat "* ]]; then
    # Staged now: the sanitizer builds overwrite bazel-bin.
    stage_dir=$(mktemp -d /var/tmp/rft-compat-stage.XXXXXX)
    if ! bash tools/compat/stage.sh "$stage_dir"; then
      echo "=== compat: could not stage the default build's binaries"
      compat_ready=0
    else
      compat_ready=1
    fi
  fi
done

# A stage's own last line "<name>: N passed, N failed" is added to the totals; a stage that
# ends without one counts as one failure.
add_stage() {  # NAME LOG
  local line
  line=$(grep -E "^$1: [0-9]+ passed, [0-9]+ failed" "$2" | tail -n 1)
  if [[ -z "$line" ]]; then
    echo "=== $1: 0 passed, 1 failed (the stage printed no summary)"
    total_failed=$((total_failed + 1))
    return
  fi
  read -r p f < <(sed -E 's/^[^:]+: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/' <<<"$line")
  echo "=== $1: $p passed, $f failed"
  total_passed=$((total_passed + p))
  total_failed=$((total_failed + f))
}

if [[ " $STAGES " == *" compat "* ]]; then
  echo "=== compatibility: Debian trixie root (tools/compat)"
  log=$(mktemp)
  if [[ "${compat_ready:-0}" -eq 1 ]] && bash tools/compat/make-root.sh 2>&1 | tee "$log"; then
    bash tools/compat/run.sh "$stage_dir" 2>&1 | tee -a "$log"
  fi
  add_stage compat "$log"
  rm -rf "$log" "${stage_dir:-/nonexistent}"
fi

run_stage() {  # NAME TITLE SCRIPT: runs SCRIPT when NAME is among the stages
  [[ " $STAGES " == *" $1 "* ]] || return 0
  echo "=== $2"
  local log
  log=$(mktemp)
  bash "$3" 2>&1 | tee "$log"
  add_stage "$1" "$log"
  rm -f "$log"
}
run_stage fuzz "fuzzing: libFuzzer targets (tools/fuzz.sh)" tools/fuzz.sh
run_stage softroce "soft-RoCE: qemu guests with rdma_rxe (tools/softroce)" tools/softroce/selftest.sh
echo "$total_passed passed, $total_failed failed"
[[ $total_failed -eq 0 ]]
