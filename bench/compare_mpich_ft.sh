#!/usr/bin/env bash
# What happens to the survivors when one process of three is SIGKILLed: bench/dead_peer.c, built
# once by Debian's mpicc.mpich (MPICH 4.0.2), run under MPICH's own mpiexec.hydra (as shipped, and
# with MPIR_CVAR_ENABLE_FT=1, MPICH's switch for its ULFM calls, and with each rank under a
# shell, so that hydra sees the victim's shell exit rather than a kill) and, the same binary,
# under rft's mpiexec. Prints each run's output and a one-line verdict per run.
#
#   bazel build //ulfm_api/mpi:sdk && bash bench/compare_mpich_ft.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
command -v mpicc.mpich >/dev/null && command -v mpiexec.hydra >/dev/null || {
  echo "compare_mpich_ft: needs Debian's mpich and libmpich-dev" >&2
  exit 2
}
sdk=$(bazel info bazel-bin 2>/dev/null)/ulfm_api/mpi/sdk
[[ -x $sdk/bin/mpiexec ]] || {
  echo "compare_mpich_ft: build first: bazel build //ulfm_api/mpi:sdk" >&2
  exit 2
}
work=$(mktemp -d /tmp/compare_mpich_ft.XXXXXX)
trap 'rm -rf "$work"' EXIT
mpicc.mpich -std=c11 -D_POSIX_C_SOURCE=200809L bench/dead_peer.c -o "$work/dead_peer" || exit 1

run() {  # NAME COMMAND...: run it (60 s at most), show its output, then the verdict
  local name=$1
  shift
  local start=$SECONDS status=0
  timeout 60 "$@" >"$work/out" 2>&1 || status=$?
  grep -v '^/lib\|^/usr\|dead_peer(+' "$work/out" | sed "s/^/  /"
  local ok
  ok=$(grep -c 'dead_peer: rank [0-9]*: revoke returned 0, shrink 0: 2 survivors' "$work/out")
  echo "compare_mpich_ft: $name: $ok of 2 survivors revoked and shrank; status $status," \
    "$((SECONDS - start)) s"
}
echo "== MPICH 4.0.2, mpiexec.hydra -disable-auto-cleanup"
run mpich mpiexec.hydra -n 3 -disable-auto-cleanup "$work/dead_peer"
echo "== MPICH 4.0.2, mpiexec.hydra -disable-auto-cleanup, MPIR_CVAR_ENABLE_FT=1"
run mpich-ft env MPIR_CVAR_ENABLE_FT=1 mpiexec.hydra -n 3 -disable-auto-cleanup "$work/dead_peer"
echo "== MPICH 4.0.2, each rank under a shell that outlives it (hydra sees an exit, not a kill)"
printf '#!/bin/sh\n"%s"\nexit $?\n' "$work/dead_peer" >"$work/wrapper"
chmod +x "$work/wrapper"
run mpich-wrapped mpiexec.hydra -n 3 -disable-auto-cleanup "$work/wrapper"
echo "== the same binary on rft: mpiexec -n 3 --with-ft ulfm"
run rft "$sdk/bin/mpiexec" -n 3 --with-ft ulfm --timeout 50 "$work/dead_peer"
