#!/usr/bin/env bash
# Builds rft and runs every test: the default build, then the sanitizer builds (asan, ubsan,
# tsan unless RFT_TEST_CONFIGS says otherwise). Prints one line per configuration and, last,
# "N passed, N failed" counting GoogleTest cases (one per test case, not per Bazel target).
#
#   tools/test.sh                       all configurations
#   RFT_TEST_CONFIGS="default asan" tools/test.sh
set -uo pipefail
cd "$(dirname "$0")/.."

CONFIGS=${RFT_TEST_CONFIGS:-"default asan ubsan tsan"}
BAZEL_FLAGS=(--color=no --curses=no --show_progress_rate_limit=30)
[[ "${CI:-}" == "true" ]] && BAZEL_FLAGS+=(--noshow_progress)

total_passed=0
total_failed=0

# Formatting is part of the code standard (Google style, 100 columns: .clang-format).
echo "=== clang-format --dry-run --Werror"
mapfile -t sources < <(git ls-files '*.cc' '*.h' '*.c' 2>/dev/null || find . -name '*.cc' -o -name '*.h')
if clang-format --dry-run --Werror "${sources[@]}"; then
  echo "=== format: 1 passed, 0 failed (${#sources[@]} files)"
  total_passed=$((total_passed + 1))
else
  echo "=== format: 0 passed, 1 failed (run clang-format -i on the files above)"
  total_failed=$((total_failed + 1))
fi

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
done
echo "$total_passed passed, $total_failed failed"
[[ $total_failed -eq 0 ]]
