#!/usr/bin/env bash
# Slurm stage: rft programs under a real single-node Slurm (Debian 12: Slurm 22.05, its PMIx
# plugin mpi_pmix_v4, PMIx 4.2), started here by tools/slurm/cluster.sh and stopped at the end
# whatever happens. Two ways to run, both tested (docs/launchers.md, "Slurm"):
#   - direct launch, `srun --mpi=pmix`: Slurm's PMIx server is the launcher. Runs without a
#     failure work; a process that dies ends the whole step (Slurm's PMIx plugin kills the step
#     on any error event, whatever -K or --no-kill say), and scenario "kill-ends-step" checks
#     exactly that, so a Slurm that changes it is noticed;
#   - rftrun inside the allocation, `srun -n 1 -c 2 rftrun ...`: fault tolerant, as under rftrun
#     alone: the demo, the data plane's failure rules, the detector's crash and hang cases, the
#     solver with a rank SIGKILLed by this script through its PID.
# Every scenario prints `slurm NAME: passed|failed (reason)`; the last line is
# `slurm: N passed, N failed`. A stage that cannot run (not root, daemons that do not start,
# missing binaries) is a failure, never a silent pass.
#
#   bash tools/slurm/run.sh [BAZEL_BIN]     (default ./bazel-bin, a default-configuration build)
#
# RFT_SLURM_DIR: the cluster's folder (default a new /tmp/rft-slurm.*; logs stay there).
set -euo pipefail
cd "$(dirname "$0")/../.."

dir=${RFT_SLURM_DIR:-$(mktemp -d /tmp/rft-slurm.XXXXXX)}
logs=$dir/logs
mkdir -p "$logs"
scenario_stage=slurm
# shellcheck source=tools/scenarios.sh
source tools/scenarios.sh

bin=$(cd "${1:-bazel-bin}" && pwd -P) || {
  verdict setup "no build output at '${1:-bazel-bin}'"
  finish || exit 1
}
if [[ $EUID -ne 0 ]]; then
  verdict setup "must run as root (the daemons run as root: SlurmUser=root)"
  finish || exit 1
fi
for tool in slurmctld slurmd munged srun salloc sinfo; do
  if ! command -v "$tool" >/dev/null; then
    verdict setup "$tool is not installed (tools/setup.sh installs slurmctld, slurmd, munge," \
      "slurm-client)"
    finish || exit 1
  fi
done
rftrun=$bin/tools/rftrun/rftrun
w=$bin/tests/multiproc
for f in "$rftrun" "$bin/examples/ulfm_demo" "$bin/examples/solver" "$w/dataplane_worker" \
  "$w/detector_worker" "$w/ucx_mesh_worker"; do
  if [[ ! -x $f ]]; then
    verdict setup "$f is missing (bazel build //tools/rftrun //examples/... //tests/multiproc/...)"
    finish || exit 1
  fi
done

cleanup() { bash tools/slurm/cluster.sh stop "$dir" || true; }
trap cleanup EXIT
trap 'echo "slurm: interrupted after $passed passed, $failed failed: no result"; exit 130' \
  INT TERM HUP
if ! cluster_env=$(bash tools/slurm/cluster.sh start "$dir" 2>"$logs/cluster-start.log"); then
  verdict setup "the cluster did not start: $(tail -n 3 "$logs/cluster-start.log" | tr '\n' ' ')"
  finish || exit 1
fi
export "${cluster_env?}"
echo "    | $(slurmd -V), node $(sinfo -h -N -o '%N %c CPUs %T'), PMIx plugins:" \
  "$(srun --mpi=list 2>&1 | grep -oE 'pmix[_a-z0-9]*' | sort -u | tr '\n' ' ')"

# Our cluster's processes (daemons, job steps and their ranks) carry its SLURM_CONF.
ours() {  # PID: true when that process belongs to this stage's cluster
  tr '\0' '\n' 2>/dev/null <"/proc/$1/environ" | grep -qxF "SLURM_CONF=$SLURM_CONF"
}
reap_steps() {  # ends what a scenario left: its job (scancel) and any rank still running
  scancel --quiet --user=root 2>/dev/null || true
  local p
  for p in /proc/[0-9]*; do
    [[ ${p#/proc/} == "$$" ]] && continue
    case $(cat "$p/comm" 2>/dev/null) in
      srun | salloc | rftrun | ulfm_demo | solver | *_worker) ;;
      *) continue ;;
    esac
    ours "${p#/proc/}" && kill -KILL "${p#/proc/}" 2>/dev/null || true
  done
}
run() {  # NAME SECONDS [VAR=VALUE...] COMMAND ARGS...
  out="$logs/$1.log"
  limit=$2
  why=()
  shift 2
  status=0
  nice -n 10 timeout -k 5 "$limit" env "$@" >"$out" 2>&1 || status=$?
  reap_steps
}
# Every survivor's "total X (exact Y)" (examples/solver.c) or "total X, exact Y" (ulfm_demo.c)
# has X = Y; exactly N such lines.
expect_exact_totals() {  # N
  local lines wrong
  lines=$(grep -cE 'total [0-9]+,? \(?exact [0-9]+' "$out" || true)
  wrong=$(grep -oE 'total [0-9]+,? \(?exact [0-9]+' "$out" |
    awk '{gsub(/[^0-9 ]/, ""); if ($1 != $2) n++} END {print n + 0}')
  [[ $lines -eq $1 ]] || why+=("$lines total(s), expected $1")
  [[ $wrong -eq 0 ]] || why+=("$wrong total(s) differ from the exact one")
}

tolerant=(RFT_HEARTBEAT_PERIOD=10ms RFT_HEARTBEAT_TIMEOUT=1s)  # as detector_test.cc
direct=(srun --mpi=pmix --overcommit)                # 4 ranks on 2 CPUs need --overcommit
inside=(srun -n 1 -c "$(nproc)" "$rftrun" --timeout 60)  # rftrun as the step's one task

# --- a. Direct launch: Slurm's PMIx server starts every rank. ---
# More ranks than CPUs: the data plane must choose blocking progress (blocking=1).
run mesh-direct-4 60 "${direct[@]}" -n 4 "$w/ucx_mesh_worker" mesh
expect_status 0
expect_lines "mesh ok n=4 blocking=1" 4
decide mesh-direct-4

run dataplane-rules-direct-2 100 "${direct[@]}" -n 2 "$w/dataplane_worker" rules
expect_status 0
expect_lines "rules ok n=2" 2
decide dataplane-rules-direct-2

run detector-quiet-direct-4 60 "${direct[@]}" -n 4 "$w/detector_worker" quiet --seconds 1
expect_status 0
expect_lines "quiet ok" 4
decide detector-quiet-direct-4

run solver-direct-4 100 "${direct[@]}" -n 4 "$bin/examples/solver" --iterations 2000
expect_status 0
expect_exact_totals 4
decide solver-direct-4

# An allocation (salloc), then job steps in it one after the other.
run steps-salloc 120 salloc -n 2 bash -c "srun --mpi=pmix $w/dataplane_worker rules &&
  srun --mpi=pmix $bin/examples/solver --iterations 2000"
expect_status 0
expect_lines "rules ok n=2" 2
expect_exact_totals 2
decide steps-salloc

# What Slurm does when a directly launched rank dies: its PMIx plugin's default event handler
# (pmixp_client_v2.c, _errhandler) kills the step on the lost connection, with -K0 and --no-kill
# alike, so no survivor finishes. docs/launchers.md says so; this fails if Slurm stops doing it.
run kill-ends-step 60 "${direct[@]}" -K0 --no-kill -n 4 "$bin/examples/ulfm_demo" \
  --iterations 2000 --kill 2@300
[[ $status -ne 0 && $status -ne 124 ]] || why+=("exit status $status, expected a failed step")
expect_lines "SIGKILLs itself" 1
expect_lines ": exact, with" 0
expect_at_least "Error handler invoked" 1
decide kill-ends-step

# --- b. rftrun inside the allocation: rftrun is the launcher, Slurm sees one task. ---
# The README's demo: one rank SIGKILLed, one hung, at instants of their own; 4 of 6 survive.
run demo-inside 90 "${inside[@]}" -n 6 --ft "$bin/examples/ulfm_demo" --iterations 2000 \
  --kill 2@600 --stop 4@900
expect_lines ": exact, with 4 of 6 processes" 4
expect_lines "SIGKILLs itself" 1
expect_lines "SIGSTOPs (hangs) itself" 1
decide demo-inside

run detector-kill-inside-4 70 "${tolerant[@]}" "${inside[@]}" -n 4 --ft \
  "$w/detector_worker" fault kill --victim 2
expect_lines "fault ok" 3
expect_none FAILED
decide detector-kill-inside-4

run detector-stop-inside-4 70 "${tolerant[@]}" "${inside[@]}" -n 4 --ft \
  "$w/detector_worker" fault stop --victim 3
expect_status 0
expect_lines "fault ok" 3
expect_at_least "source=heartbeat" 1
expect_at_least "aborted on request" 1
decide detector-stop-inside-4

run dataplane-failure-inside-4 100 "${inside[@]}" -n 4 --ft "$w/dataplane_worker" failure \
  --victim 2
expect_status 0
expect_lines "survivors ok without rank 2" 3
expect_none FAILED
decide dataplane-failure-inside-4

# The solver with rank 2 SIGKILLed by this script, by PID, at a random instant after it started
# (found by its PMIX_RANK among this cluster's processes): the 3 survivors end exact.
pid_of_rank() {  # PROGRAM_NAME RANK
  local p
  for p in /proc/[0-9]*; do
    [[ $(cat "$p/comm" 2>/dev/null) == "${1:0:15}" ]] || continue
    ours "${p#/proc/}" || continue
    if tr '\0' '\n' 2>/dev/null <"$p/environ" | grep -qx "PMIX_RANK=$2"; then
      echo "${p#/proc/}"
      return 0
    fi
  done
  return 1
}
delay_ms=$((200 + RANDOM % 800))
out="$logs/solver-kill-inside-4.log"
limit=100
why=()
status=0
nice -n 10 timeout -k 5 "$limit" env "${tolerant[@]}" "${inside[@]}" -n 4 --ft \
  "$bin/examples/solver" --iterations 60000 >"$out" 2>&1 &
job=$!
victim=""
for ((i = 0; i < 200; i++)); do  # up to 20 s for the victim to start
  victim=$(pid_of_rank solver 2 || true)
  [[ -n $victim ]] && break
  kill -0 "$job" 2>/dev/null || break
  sleep 0.1
done
if [[ -z $victim ]]; then
  why+=("rank 2 was not running to be killed")
else
  sleep "$(awk -v ms="$delay_ms" 'BEGIN {print ms / 1000}')"
  if kill -KILL "$victim" 2>/dev/null; then
    echo "    | solver-kill-inside-4: SIGKILLed rank 2 (pid $victim) ${delay_ms} ms after it started"
  else
    why+=("rank 2 (pid $victim) ended before the kill at ${delay_ms} ms")
  fi
fi
wait "$job" || status=$?
reap_steps
[[ $status -ne 124 ]] || why+=("hung: killed by timeout after $limit s")
expect_exact_totals 3
decide solver-kill-inside-4

finish
