#!/usr/bin/env bash
# The main demo: a job of 4 processes exchanges addresses, rank 2 is killed at 0.5 s, and
# the survivors learn of it within milliseconds and finish cleanly (exit status 0).
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build --color=no --curses=no //tools/rftrun //examples:detect_failure
set -x
bazel-bin/tools/rftrun/rftrun -n 4 --ft --kill 2@0.5 bazel-bin/examples/detect_failure --expect 1
