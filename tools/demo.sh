#!/usr/bin/env bash
# The main demo: a job of 5 processes runs the failure detector and the data plane; rank 2 is
# killed at 1 s and rank 3 hangs (SIGSTOP) at 1.5 s. The survivors learn of the crash within a
# millisecond or two and of the hang within ~25 ms (its heartbeat observer declares it, the
# launcher kills it: fail-stop), pass a token around their ring and finish cleanly (status 0).
set -euo pipefail
cd "$(dirname "$0")/.."
bazel build --color=no --curses=no //tools/rftrun //examples:detect_failure
set -x
bazel-bin/tools/rftrun/rftrun -n 5 --ft --kill 2@1.0 --stop 3@1.5 \
  bazel-bin/examples/detect_failure --expect 2
