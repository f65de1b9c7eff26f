#!/usr/bin/env bash
# Compatibility stage: runs rft binaries built on this Debian 12 machine (UCX 1.13, PMIx 4.2)
# inside the Debian trixie root of make-root.sh (UCX 1.18, PMIx 5.0, Open MPI 5.0 with PRRTE
# 3.0), under rftrun, PRRTE's prterun and Open MPI's mpirun. Every scenario prints
# `compat NAME: passed|failed (reason)`; the last line is `compat: N passed, N failed` and the
# exit status is non-zero on any failure. A stage that cannot run (not root, no complete root,
# missing binaries) is a failure too, never a silent pass.
#
#   bash tools/compat/run.sh STAGING_DIR      (made by tools/compat/stage.sh; root needed)
#
# RFT_COMPAT_ROOT: the trixie root (default /var/tmp/rft-trixie).
# RFT_COMPAT_LOGS: where each scenario's full output is kept (default a new /tmp/rft-compat.*).
set -euo pipefail

root=${RFT_COMPAT_ROOT:-/var/tmp/rft-trixie}
logs=${RFT_COMPAT_LOGS:-$(mktemp -d /tmp/rft-compat.XXXXXX)}
mkdir -p "$logs"
scenario_stage=compat
# shellcheck source=tools/scenarios.sh
source "$(dirname "$0")/../scenarios.sh"

# --- Preconditions: each missing one fails the stage loudly. ---
stage=${1:-}
if [[ -z $stage || ! -d $stage ]]; then
  verdict setup "usage: run.sh STAGING_DIR (from tools/compat/stage.sh); got '${stage}'"
  finish || exit 1
fi
stage=$(cd "$stage" && pwd)
if [[ $EUID -ne 0 ]]; then
  verdict setup "must run as root (chroot and mounts)"
  finish || exit 1
fi
if [[ ! -f $root/.rft-compat-complete ]]; then
  verdict setup "no complete trixie root at $root (no stamp): run tools/compat/make-root.sh"
  finish || exit 1
fi
for f in tools/rftrun/rftrun examples/detect_failure tests/multiproc/dataplane_worker \
  tests/multiproc/detector_worker tests/multiproc/ucx_mesh_worker; do
  if [[ ! -x $stage/$f ]]; then
    verdict setup "$stage/$f is missing"
    finish || exit 1
  fi
done

# --- The root for this run: binaries in /opt/rft, host /proc, /dev, /dev/shm, /sys and a
# private /tmp. Every mount is made private (no propagation back to the host even where the
# host's mounts are shared) and undone on any exit; processes still running inside the root
# (a hung rank, an orphaned daemon) are killed by PID first, or the unmounts would be busy. ---
mounted=()
reap_root() {  # kills every process whose root directory is the compat root (all ours)
  local p pid
  for p in /proc/[0-9]*; do
    pid=${p#/proc/}
    [[ $pid == "$$" ]] && continue
    if [[ $(readlink "$p/root" 2>/dev/null) == "$root" ]]; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}
cleanup() {
  reap_root
  sleep 0.2
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" ||
      echo "compat: could not unmount ${mounted[i]}" >&2
  done
  mounted=()
}
trap cleanup EXIT
# An interrupted run is not a result: say so (the EXIT trap still unmounts).
trap 'echo "compat: interrupted after $passed passed, $failed failed: no result"; exit 130' \
  INT TERM HUP

if grep -q " $root/" /proc/self/mounts; then
  verdict setup "$root already has mounts (another run.sh, or an interrupted one):
$(grep " $root/" /proc/self/mounts)"
  finish || exit 1
fi
bind() {  # SOURCE TARGET
  mount --bind "$1" "$2"
  mounted+=("$2")
  mount --make-private "$2"
}
bind /proc "$root/proc"
bind /sys "$root/sys"
bind /dev "$root/dev"
bind /dev/shm "$root/dev/shm"
mount -t tmpfs -o mode=1777,size=1g rft-compat-tmp "$root/tmp"
mounted+=("$root/tmp")
mount --make-private "$root/tmp"

rm -rf "$root/opt/rft"
mkdir -p "$root/opt/rft"
cp -a "$stage/." "$root/opt/rft/"
bin=/opt/rft  # inside the root

# Inside the root: a clean environment, so nothing of the host (PATH, LD_LIBRARY_PATH, UCX_*,
# RFT_*, PMIX_*) leaks in. Root may run Open MPI only with these two variables set.
root_env=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
  TMPDIR=/tmp LANG=C.UTF-8 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
in_root() {  # SECONDS [VAR=VALUE...] COMMAND ARGS... ; bounded by timeout, then SIGKILL
  local seconds=$1
  shift
  nice -n 10 timeout -k 5 "$seconds" chroot "$root" /usr/bin/env -i "${root_env[@]}" "$@"
}

# --- Scenario runner: run once, then check (tools/scenarios.sh); reasons accumulate in $why.
run() {  # NAME SECONDS [VAR=VALUE...] COMMAND ARGS...
  out="$logs/$1.log"
  limit=$2
  why=()
  shift
  status=0
  in_root "$@" >"$out" 2>&1 || status=$?
  reap_root  # a stopped or orphaned rank must not outlive its scenario
}

# --- 0. Libraries: everything the binaries load resolves inside the root. ---
why=()
for f in $(cd "$stage" && find . -type f -perm -u+x | sort); do
  if ! missing=$(chroot "$root" /lib64/ld-linux-x86-64.so.2 --list "$bin/${f#./}" 2>&1); then
    why+=("$f: the loader refused it")
  elif grep -q 'not found' <<<"$missing"; then
    why+=("$f: $(grep 'not found' <<<"$missing" | awk '{print $1}' | tr '\n' ' ')not found")
  fi
done
verdict libraries "${why[@]}"
chroot "$root" /lib64/ld-linux-x86-64.so.2 --list "$bin/tools/rftrun/rftrun" |
  grep -E 'libpmix|libucp|libucs|libhwloc' | awk '{print "    | rftrun loads " $3}'

# --- a. The demo under rftrun, beside the same binaries on this (bookworm) machine. ---
# Faults at 3 s, not the README's 1 s: start-up in the root (PMIx 5, 5 ranks on 2 cores) took
# over a second, and this scenario compares the survivors' story with the same binaries on this
# machine, so both must see the faults after start-up (a fault during start-up is handled too,
# but tells another story: detector_test covers it).
demo=(-n 5 --ft --timeout 40 --kill 2@3.0 --stop 3@3.5)
# 5 ranks (4 under prterun, beside its daemon) on 2 cores: the default heartbeat timeout (20 ms)
# declares dead a rank the scheduler leaves waiting that long (docs/detector.md: a node loaded
# beyond its cores); a CI run lost demo-prterun's victim so, before its kill. Hence the tolerant
# settings of the worker scenarios below (detector_test.cc's); the stopped rank is known 1 s later.
tolerant=(RFT_HEARTBEAT_PERIOD=10ms RFT_HEARTBEAT_TIMEOUT=1s)
# A loaded machine can still be starting up at 3 s: the example then prints a negative "known at"
# (known before its computation began), which is the same story and must normalize the same.
normalize() {  # the survivors' story without timings or sources (those vary from run to run)
  sed -E 's/ \(source: [^)]*\), known at -?[0-9.]+ ms//' "$1" | grep -E '^\[[0-9]+\] rank ' | sort
}
bookworm_log="$logs/bookworm-demo.log"
bookworm_status=0
nice -n 10 timeout -k 5 50 env -u LD_LIBRARY_PATH "${tolerant[@]}" \
  "$stage/tools/rftrun/rftrun" "${demo[@]}" "$stage/examples/detect_failure" --expect 2 \
  >"$bookworm_log" 2>&1 || bookworm_status=$?
echo "    | bookworm reference: exit status $bookworm_status," \
  "$(grep -c 'finishing cleanly' "$bookworm_log" || true) survivors finished cleanly"

run demo-rftrun 50 "${tolerant[@]}" "$bin/tools/rftrun/rftrun" "${demo[@]}" \
  "$bin/examples/detect_failure" --expect 2
expect_status 0
expect_lines "finishing cleanly" 3
expect_lines "came back" 1
if [[ $bookworm_status -ne 0 ]]; then
  why+=("the bookworm reference itself failed (status $bookworm_status): see $bookworm_log")
elif ! difference=$(diff <(normalize "$bookworm_log") <(normalize "$out")); then
  why+=("survivors' output differs from bookworm's: $(head -4 <<<"$difference" | tr '\n' ' ')")
fi
decide demo-rftrun

# --- b. Worker scenarios of tests/multiproc/*_test.cc under rftrun, same expectations. ---
w=$bin/tests/multiproc

# UCX endpoints alone (no detector): the mesh of ucx_endpoints_test.cc.
run ucx-mesh-4 70 "$bin/tools/rftrun/rftrun" -n 4 --timeout 60 "$w/ucx_mesh_worker" mesh
expect_status 0
expect_lines "mesh ok n=4" 4
expect_none FAILED
decide ucx-mesh-4

# The data plane's matching rules (dataplane_test.cc RulesTest n=2).
run dataplane-rules-2 100 "$bin/tools/rftrun/rftrun" -n 2 --timeout 90 "$w/dataplane_worker" rules
expect_status 0
expect_lines "rules ok n=2" 2
decide dataplane-rules-2

# More ranks than the 2 cores: blocking progress (dataplane_test.cc MeshTest n=4).
run dataplane-mesh-4 100 "$bin/tools/rftrun/rftrun" -n 4 --timeout 90 "$w/dataplane_worker" mesh
expect_status 0
expect_lines "mesh ok n=4 blocking=1" 4
decide dataplane-mesh-4

# A peer that has the launcher kill it once every survivor posted operations on it: they
# complete with PROC_FAILED, survivors go on.
run dataplane-failure-4 100 "$bin/tools/rftrun/rftrun" -n 4 --timeout 90 --ft \
  "$w/dataplane_worker" failure --victim 2
expect_status 0
expect_lines "survivors ok without rank 2" 3
expect_none FAILED
decide dataplane-failure-4

# The detector: a crash (the victim SIGKILLs itself at an agreed instant) and a hang (SIGSTOP,
# found only by heartbeats, then killed by the launcher: fail-stop), detector_test.cc.
run detector-kill-4 70 "${tolerant[@]}" "$bin/tools/rftrun/rftrun" -n 4 --ft --timeout 60 \
  "$w/detector_worker" fault kill --victim 2
expect_status 137  # a crash rftrun did not cause is the job's status, even under --ft
expect_lines "fault ok" 3
expect_none FAILED
decide detector-kill-4

run detector-stop-4 70 "${tolerant[@]}" "$bin/tools/rftrun/rftrun" -n 4 --ft --timeout 60 \
  "$w/detector_worker" fault stop --victim 3
expect_status 0
expect_lines "fault ok" 3
expect_at_least "source=heartbeat" 1
expect_at_least "aborted on request" 1
decide detector-stop-4

# No fault, default heartbeat settings: nobody is suspected.
run detector-quiet-4 70 "$bin/tools/rftrun/rftrun" -n 4 --ft --timeout 60 \
  "$w/detector_worker" quiet --seconds 1
expect_status 0
expect_lines "quiet ok" 4
decide detector-quiet-4

# --- c. Under PRRTE and Open MPI. PRRTE 3.0.8 has no --enable-recovery (docs/launchers.md):
# its runtime options "recoverable" (the job survives a failed process) and "notifyerrors"
# (a PMIx event to every remaining process) are the equivalent; Open MPI 5 spells it
# --with-ft ulfm. 4 ranks on 2 cores need oversubscription allowed. The victim of
# detector_worker kills itself at a protocol point; detect_failure has no such option, so its
# victim is SIGKILLed by PID from this script once every rank is up. ---
prte_ft=(prterun --allow-run-as-root --runtime-options "recoverable,notifyerrors"
  --map-by :oversubscribe)
ompi_ft=(mpirun --with-ft ulfm --map-by :oversubscribe)

run detector-kill-prterun 70 "${tolerant[@]}" "${prte_ft[@]}" -n 4 --timeout 60 \
  "$w/detector_worker" fault kill --victim 2
expect_lines "fault ok" 3
expect_none FAILED
echo "    | prterun exit status $status"
decide detector-kill-prterun

run detector-kill-mpirun 70 "${tolerant[@]}" "${ompi_ft[@]}" -n 4 --timeout 60 \
  "$w/detector_worker" fault kill --victim 2
expect_lines "fault ok" 3
expect_none FAILED
echo "    | mpirun exit status $status"
decide detector-kill-mpirun

# A rank killed from this script by its PID (found by PMIX_RANK in its environment), DELAY
# seconds after it started, as rftrun's --kill RANK@DELAY does: for programs whose victim does
# not kill itself (detect_failure, dataplane_worker's failure mode).
pid_of_rank() {  # PROGRAM_NAME RANK -> PID of that rank inside the root, if running
  local p
  for p in /proc/[0-9]*; do
    [[ $(readlink "$p/root" 2>/dev/null) == "$root" ]] || continue
    [[ $(cat "$p/comm" 2>/dev/null) == "${1:0:15}" ]] || continue
    if tr '\0' '\n' <"$p/environ" 2>/dev/null | grep -qx "PMIX_RANK=$2"; then
      echo "${p#/proc/}"
      return 0
    fi
  done
  return 1
}
run_killing() {  # NAME SECONDS PROGRAM_NAME RANK DELAY [VAR=VALUE...] COMMAND ARGS...
  local name=$1 seconds=$2 program=$3 rank=$4 delay=$5 job victim="" i
  shift 5
  out="$logs/$name.log"
  limit=$seconds
  why=()
  status=0
  in_root "$seconds" "$@" >"$out" 2>&1 &
  job=$!
  for ((i = 0; i < 200; i++)); do  # up to 20 s for the victim to start
    victim=$(pid_of_rank "$program" "$rank" || true)
    [[ -n $victim ]] && break
    kill -0 "$job" 2>/dev/null || break
    sleep 0.1
  done
  if [[ -n $victim ]]; then
    sleep "$delay"
    if kill -KILL "$victim" 2>/dev/null; then
      echo "    | $name: SIGKILLed rank $rank (pid $victim) from the script ${delay} s after it started"
    else
      why+=("rank $rank (pid $victim) was gone before the kill at ${delay} s")
    fi
  else
    why+=("rank $rank was not running to be killed (never started, or already dead)")
  fi
  wait "$job" || status=$?
  reap_root
}

run_killing demo-prterun 60 detect_failure 2 3 "${tolerant[@]}" "${prte_ft[@]}" -n 4 --timeout 50 \
  "$bin/examples/detect_failure" --expect 1 --wait 20
expect_lines "finishing cleanly" 3
expect_lines "came back" 1
echo "    | prterun exit status $status"
decide demo-prterun

# The launcher's failure event alone (no detector): dataplane_test.cc's failure scenario; the
# victim asks the launcher to kill it (PMIx_Abort of itself) once the survivors are ready.
for launcher in prterun mpirun; do
  if [[ $launcher == prterun ]]; then cmd=("${prte_ft[@]}"); else cmd=("${ompi_ft[@]}"); fi
  run "dataplane-failure-$launcher" 70 "${cmd[@]}" -n 4 \
    --timeout 60 "$w/dataplane_worker" failure --victim 2
  expect_lines "survivors ok without rank 2" 3
  expect_none FAILED
  echo "    | $launcher exit status $status"
  decide "dataplane-failure-$launcher"
done

# --- d. Latency: rft_bench_p2p at 2 ranks, 8 bytes, under rftrun and under mpirun with its
# default binding (one core per rank) and without binding; plus what progress mode the data
# plane chose under each (dataplane_worker mesh prints blocking=0|1). ---
p50_of() { awk '$1 == 8 && NF == 5 {print $3; exit}' "$1"; }
median() { sort -g | awk '{v[NR] = $1} END {if (NR) print v[int((NR + 1) / 2)]}'; }
reps=${RFT_COMPAT_REPS:-3}  # this machine is shared and noisy: the median of a few runs
if [[ ! -x $stage/bench/rft_bench_p2p ]]; then
  verdict latency "no bench/rft_bench_p2p in $stage: cannot measure"
else
  why=()
  declare -A p50
  for launcher in rftrun mpirun mpirun-bind-none; do
    case $launcher in
      rftrun) cmd=("$bin/tools/rftrun/rftrun" -n 2 --timeout 120 --no-tag-output) ;;
      mpirun) cmd=(mpirun -n 2) ;;
      mpirun-bind-none) cmd=(mpirun -n 2 --bind-to none) ;;
    esac
    values=()
    for ((r = 1; r <= reps; r++)); do
      run "latency-$launcher-$r" 130 "${cmd[@]}" "$bin/bench/rft_bench_p2p" --sizes 8
      value=$(p50_of "$out")
      if [[ $status -ne 0 || -z $value ]]; then
        why+=("$launcher: status $status, no 8-byte p50 (see $out)")
      else
        values+=("$value")
      fi
    done
    p50[$launcher]=$(printf '%s\n' "${values[@]}" | median)
    # The bench's header says which progress mode the data plane chose (polling or blocking).
    mode=$(grep -m1 -oE '[a-z]+ progress' "$out" || echo "?")
    echo "    | $launcher: 8-byte p50 ${p50[$launcher]:-?} us (median of ${values[*]:-nothing}); $mode"
  done
  if [[ -n ${p50[rftrun]} && -n ${p50[mpirun]} ]]; then
    echo "    | mpirun / rftrun 8-byte p50: $(awk -v a="${p50[mpirun]}" -v b="${p50[rftrun]}" \
      'BEGIN {printf "%.2f", a / b}')x"
  fi
  verdict latency "${why[@]}"
fi

finish
