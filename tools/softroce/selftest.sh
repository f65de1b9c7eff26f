#!/usr/bin/env bash
# Checks the soft-RoCE harness end to end: a guest boots with an active rxe0, verbs traffic
# flows in one guest (perftest) and between two, UCX's rc transport works over rxe, and the
# command's exit status comes out, and rft's own verbs programs (rft_info, the verbs backend's
# loopback check, its RC mesh and its eager channel between rftrun's ranks, the data plane over
# the verbs backend, the detector's heartbeats by RDMA WRITE and the control messages by SEND,
# from the `bazel build` this stage follows) see and use rxe0; jobs on UCX over rc end without
# stalling and lose nothing; and TSan and ASan builds of the workers find no race and no memory
# error on the verbs paths. Prints one line per check and, last, "softroce: N passed, N failed".
# A guest that cannot boot fails every check that needs it: nothing passes without having run.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
run=$here/softroce.sh
passed=0
failed=0
last_passed=0  # whether the last check passed
root=$(cd "$here/../.." && pwd)
out=$(mktemp)
stage=$(mktemp -d)
sanitized=$(mktemp -d)  # sanitizer builds of the workers, kept aside (see the builds below)
trap 'rm -rf "$out" "$stage" "$sanitized" ${batch_root:+"$batch_root"}' EXIT

# all_match, selected, check, stage, check_binary, check_two_nodes.
# shellcheck source=tools/softroce/check_lib.sh
source "$here/check_lib.sh"

# The host's sanitizer stages never reach the verbs code (no device there): TSan and ASan builds
# (with UBSan) of the workers run in the guest too. Built first and copied aside
# ($sanitized/CONFIG/), since bazel-bin points at the last config's output directory.
sanitized_targets="//tests/multiproc:dataplane_worker //tests/multiproc:detector_worker \
  //tests/multiproc:agreement_worker //tests/multiproc:growth_worker"
for config in tsan asan; do
  command -v bazel >/dev/null 2>&1 || break
  # With SOFTROCE_ONLY, built when it names the config (e.g. SOFTROCE_ONLY=tsan-control).
  [[ -z ${SOFTROCE_ONLY:-} || $SOFTROCE_ONLY == *$config* ]] || continue
  mkdir -p "$sanitized/$config"
  # shellcheck disable=SC2086  # the targets are meant to split
  if (cd "$root" && bazel build --config=$config --color=no --curses=no --noshow_progress \
    $sanitized_targets) >"$out" 2>&1; then
    for target in $sanitized_targets; do
      cp "$root/bazel-bin/tests/multiproc/${target##*:}" "$sanitized/$config/"
    done
  else
    echo "softroce: building the $config workers failed; the $config checks will fail:"
    tail -n 20 "$out" | sed 's/^/  /'
  fi
done

# rft's programs in the plain configuration: bazel-bin names the last build's outputs, which in
# CI are a sanitizer's (tools/test.sh runs the sanitizer stages first; each config has its own
# output directory, so after tools/test.sh this is found in the cache). Only what the guests run
# is named, not all of //...
if command -v bazel >/dev/null 2>&1; then
  if ! (cd "$root" && bazel build --color=no --curses=no --noshow_progress //tools/rft_info \
    //tools/rftrun //tests/verbs:loopback_check //tests/verbs:mesh_check \
    //tests/verbs:channel_check //tests/verbs:async_check \
    //tests/verbs:grow_check //tests/verbs:close_check //tests/verbs:cm_check \
    //tests/multiproc:dataplane_worker //tests/multiproc:detector_worker //examples:respawn_solver \
    //tests/multiproc:agreement_worker //tests/multiproc:api_worker \
    //tests/multiproc:growth_worker //tests/mpi:mpi_basics) >"$out" 2>&1; then
    echo "softroce: building rft's programs failed; the checks that need them will fail:"
    tail -n 20 "$out" | sed 's/^/  /'
  fi
fi

ucx_env="UCX_TLS=rc UCX_NET_DEVICES=rxe0:1 UCX_UD_ETH_DGID_CHECK=n"
# A client retries until its server listens: guests boot at the emulator's pace.
retry='for attempt in $(seq 1 20); do "$@" && exit 0; sleep 1; done; exit 1'

check device 0 'state:[[:space:]]+PORT_ACTIVE' -- 'ibv_devinfo -d rxe0 -v'
check exit-status 7 '^before the exit$' -- 'echo before the exit; exit 7'
# A guest that does not come up in time is booted once more, before its job started: a boot
# limit of 1 s (a boot takes several) makes the first boot stall and the second (120 s) run the
# job, once; two stalled boots give up with 125.
check boot-again 0 "$(printf '%s\n' '^softroce: guest1 did not bring rxe0 up in 1 s \(boot 1\)' \
  '^softroce: booting again \(the job had not started\)$' '^the job ran$')" \
  --boot-limit 1,120 -- 'echo the job ran'
check boot-stalled 125 "$(printf '%s\n' '^softroce: guest1 did not bring rxe0 up in 1 s \(boot 2\)' \
  '^softroce: giving up after 2 stalled boots$')" --boot-limit 1 -- 'echo the job ran'
check verbs-one-guest 0 't_typical' -- \
  "ib_send_lat -d rxe0 -x 1 -n 200 >server.log 2>&1 &
   bash -c '$retry' client ib_send_lat -d rxe0 -x 1 -n 200 \"\$SOFTROCE_IP\""
check ucx-rc 0 'Final:' -- \
  "export $ucx_env
   ucx_perftest -t tag_lat -n 1000 >server.log 2>&1 &
   bash -c '$retry' client ucx_perftest -t tag_lat -n 1000 \"\$SOFTROCE_IP\""
check verbs-two-guests 0 't_typical' --pair -- \
  'ib_write_lat -d rxe0 -x 1 -n 200' \
  "bash -c '$retry' client ib_write_lat -d rxe0 -x 1 -n 200 \"\$SOFTROCE_PEER\""
check_binary rft-info-verbs 0 \
  "$(printf '%s\n' '^verbs: rxe0 port 1: active, Ethernet' \
    '^verbs: rxe0 limits: [1-9][0-9]* QPs, [1-9][0-9]* receives per shared receive queue, [1-9][0-9]* CQ entries$')" \
  bazel-bin/tools/rft_info/rft_info rft_info
# Two processes started by hand connect the eager channel by IP address through the RDMA
# connection manager (no PMIx), and echo 300 messages of every size class: in one guest, then
# across two, where the listener starts 2 s late so that the connecting side must try again.
#
# by_ip PROGRAM PORT ARGS: the guest command that starts `PROGRAM --listen PORT ARGS` in the
# background, runs `PROGRAM --connect $SOFTROCE_IP:PORT ARGS`, prints the listener's output and
# "statuses CONNECTOR LISTENER", and fails when either failed.
by_ip() {
  printf '%s' "$1 --listen $2 $3 >/tmp/listener.out 2>&1 & listener=\$!
   $1 --connect \"\$SOFTROCE_IP:$2\" $3; c=\$?; wait \$listener; l=\$?
   cat /tmp/listener.out; echo \"statuses \$c \$l\"; exit \$((c | l))"
}
check_binary verbs-cm 0 \
  "$(printf '%s\n' '^verbs cm: listener: 300 messages ok over rxe0' \
    '^verbs cm: connecting side: 300 messages ok over rxe0' '^statuses 0 0$')" \
  bazel-bin/tests/verbs/cm_check "$(by_ip cm_check 7471 '--messages 300')"
if selected verbs-cm-two-guests && stage verbs-cm-two-guests bazel-bin/tests/verbs/cm_check; then
  check verbs-cm-two-guests 0 \
    "$(printf '%s\n' '^verbs cm: listener: 300 messages ok over rxe0' \
      '^verbs cm: connecting side: 300 messages ok over rxe0')" \
    --pair --add "$stage" -- 'sleep 2; cm_check --listen 7471 --messages 300' \
    'cm_check --connect "$SOFTROCE_PEER:7471" --messages 300'
fi
# The eager channel's benchmark between two processes started by hand, connected by IP.
check_binary verbs-cm-bench 0 \
  "$(printf '%s\n' '^ *8 +yes +300 +[0-9.]+ ' '^# bandwidth: 8192-byte messages' '^statuses 0 0$')" \
  bazel-bin/bench/rft_bench_verbs \
  "$(by_ip rft_bench_verbs 7472 '--iters 300 --reps 1 --sizes 8')"
# bench/verbs_compare.sh across two guests: perftest and the benchmark, by IP, every size. Only
# rft's figures and the serving side's status are asserted: perftest under emulation may print
# "inf" for a size, which the script leaves out (and then exits 1).
if selected verbs-compare-two-guests &&
  stage verbs-compare-two-guests \
    "bazel-bin/bench/rft_bench_verbs bench/verbs_compare.sh bench/client_server.sh"; then
  check verbs-compare-two-guests 0 \
    "$(printf '%s\n' '^\{"bench":"verbs_latency","n":2,"nodes":2,"size":8,' \
      '^\{"bench":"verbs_latency","n":2,"nodes":2,"size":8192,' \
      '^\{"bench":"verbs_bandwidth","n":2,"nodes":2,' 'served 1 reps for .* \(status 0\)$')" \
    --pair --add "$stage" -- \
    'verbs_compare.sh --reps 1 --iters 100 --collect "$SOFTROCE_PEER"; echo "collected: $?"' \
    'verbs_compare.sh --reps 1 --iters 100 --serve "$SOFTROCE_PEER"'
fi
check_binary verbs-loopback 0 '^verbs loopback: dead peer -> ' \
  bazel-bin/tests/verbs/loopback_check loopback_check
# Three ranks under rftrun (PMIx in the guest), RC QPs between them: the ring and the writes on
# every rank, then rank 2 raises SIGKILL and rank 0's send to it fails. rftrun --ft reports a
# rank that killed itself as a crash (137); that status is the one expected, and the patterns
# show that every rank got through its steps.
check_binary verbs-mesh 0 \
  "$(printf '%s\n' 'rank 0: ring ok' 'rank 1: ring ok' 'rank 2: ring ok' \
    'rank 0: write ok' 'rank 1: write ok' 'rank 2: write ok' \
    '^\[0\] verbs mesh: rank 0: dead peer 2 -> .* after [0-9]+ ms$')" \
  "bazel-bin/tools/rftrun/rftrun bazel-bin/tests/verbs/mesh_check" \
  'rftrun --ft -n 3 mesh_check --kill-last; status=$?
   echo "rftrun exit status $status"; [ "$status" = 137 ]'

# The eager channel between three ranks: every size class, the burst through the credit window,
# the explicit credits and RDMA WRITEs on the channel's QPs (the heartbeats' path) on every
# rank, then rank 2 raises SIGKILL and rank 0's failure callback reports it once (137 from
# rftrun, as for the mesh).
check_binary verbs-channel 0 \
  "$(printf '%s\n' 'rank 0: sizes ok' 'rank 1: sizes ok' 'rank 2: sizes ok' \
    'rank 0: inline ok' 'rank 1: inline ok' 'rank 2: inline ok' \
    'rank 0: burst ok' 'rank 1: burst ok' 'rank 2: burst ok' \
    'rank 0: credits ok' 'rank 1: credits ok' 'rank 2: credits ok' \
    'rank 0: writes ok' 'rank 1: writes ok' 'rank 2: writes ok' \
    '^\[0\] verbs channel: rank 0: dead peer 2 -> .* after [0-9]+ ms$' \
    '^\[0\] verbs channel: rank 0: failure ok ')" \
  "bazel-bin/tools/rftrun/rftrun bazel-bin/tests/verbs/channel_check" \
  'rftrun --ft -n 3 channel_check --kill-last; status=$?
   echo "rftrun exit status $status"; [ "$status" = 137 ]'

# Sleeping instead of spinning, four ranks on the guest's two CPUs: each rank with nothing to
# do waits in WaitForCompletion; an idle wait costs next to no CPU, and a message wakes it.
check_binary verbs-channel-blocking 0 \
  "$(printf '%s\n' 'rank 0: blocking ok .*sent the wake-up' 'rank 1: blocking ok .*woken by' \
    'rank 2: blocking ok .*woken by' 'rank 3: blocking ok .*woken by' 'rank 3: burst ok')" \
  "bazel-bin/tools/rftrun/rftrun bazel-bin/tests/verbs/channel_check" \
  'rftrun -n 4 channel_check --blocking'

# Ranks whose eager configurations differ (the last one has half the credits) refuse to connect
# to each other, naming both, and connect to everyone else.
check_binary verbs-channel-mismatch 0 \
  "$(printf '%s\n' '^\[0\] verbs channel: rank 0: refused rank 2: .* uses 8 credits of' \
    '^\[2\] verbs channel: rank 2: refused rank 1: .* uses 16 credits of' \
    'rank 0: mismatch ok' 'rank 1: mismatch ok' 'rank 2: mismatch ok')" \
  "bazel-bin/tools/rftrun/rftrun bazel-bin/tests/verbs/channel_check" \
  'rftrun -n 3 channel_check --mismatch'

# A channel that grows for a rank joining late (grow_check: docs/verbs.md, "Replacements"): the
# survivors are refused a QP for it while every place in their receive queue is held, take a
# failed rank's place, and the greeting handshake lets the bursts queued on both sides through.
check_binary verbs-channel-grow 0 \
  "$(printf '%s\n' '^\[0\] verbs grow: rank 0: refused while full: .*no place left' \
    'rank 0: grown ok: 48 messages each way with ranks 1 and 3$' \
    'rank 1: grown ok: 48 messages each way with ranks 0 and 3$' \
    'rank 3: grown ok: 48 messages each way with ranks 0 and 1$')" \
  "bazel-bin/tools/rftrun/rftrun bazel-bin/tests/verbs/grow_check" \
  'rftrun -n 3 grow_check'

# Pairs closing their QPs by agreement (close_check: docs/verbs.md, "Closing a pair"): with one
# place per process, ranks 0 and 1 close, rank 0's place goes to rank 2, and after that pair
# closes too, ranks 0 and 1 connect again; every pair's messages arrive in order. Last, rank 0
# closes with 8 SENDs and WRITEs outstanding, which all complete as flushed. No close reports a
# failure.
check_binary verbs-channel-close 0 \
  "$(printf '%s\n' '^\[0\] verbs close: rank 0: refused: .*no place left.*not connected' \
    'rank 0: closed with 8 requests outstanding: all flushed$' \
    'rank 0: close ok: 96 from rank 1 over 2 closes, 48 from rank 2 over 1 close, in order' \
    'rank 1: close ok: 96 from rank 0 over 2 closes, in order' \
    'rank 2: close ok: 48 from rank 0 over 1 close, in order')" \
  "bazel-bin/tools/rftrun/rftrun bazel-bin/tests/verbs/close_check" \
  'rftrun -n 3 close_check'

# The device's asynchronous events through the eager channel: the guest's netdev under rxe0 goes
# down and comes back, and the channel counts the port-down and port-up events without failing
# a peer.
check_binary verbs-async 0 \
  "$(printf '%s\n' '^verbs async: port down seen after [0-9]+ ms$' \
    '^verbs async: port up seen after [0-9]+ ms$' '^verbs async: port events ok ')" \
  bazel-bin/tests/verbs/async_check 'async_check "$SOFTROCE_NETDEV"'

# The data plane over the verbs backend (RFT_TRANSPORT=verbs): the same worker and checks as on
# UCX (tests/multiproc/dataplane_test.cc), with the same-node rings and CMA off so that every
# peer is reached through verbs (each rank says so). rules: matching, wildcards, truncation,
# probes, cancel, and the eager/rendezvous boundary sizes (the RDMA READ rendezvous); mesh: three
# ranks sleeping on the completion channel (four ranks' worth of work on two CPUs); failure: rank
# 1 is killed with operations of both sizes pending on it, and the survivors' complete with
# RFT_ERR_PROC_FAILED through the failure registry. These checks are not about the detector:
# its timeout is 1 s, as in the detector's checks, so that a guest slowed by a busy host (the
# default 20 ms once declared two live ranks failed in `failure`) does not fail them.
patient_detector="RFT_HEARTBEAT_PERIOD=20ms RFT_HEARTBEAT_TIMEOUT=1s"
dataplane_env="export RFT_TRANSPORT=verbs RFT_SHM_RINGS=n RFT_RENDEZVOUS=ucx $ucx_env $patient_detector"
dataplane_bins="bazel-bin/tools/rftrun/rftrun bazel-bin/tests/multiproc/dataplane_worker"
check_binary dataplane-verbs-rules 0 \
  "$(printf '%s\n' '^\[0\] rank 0: paths to 1 peers: 0 ring, 1 verbs$' \
    '^\[1\] rank 1: paths to 1 peers: 0 ring, 1 verbs$' '^\[0\] rules ok n=2' '^\[1\] rules ok n=2')" \
  "$dataplane_bins" "$dataplane_env; rftrun -n 2 dataplane_worker rules"
check_binary dataplane-verbs-mesh 0 \
  "$(printf '%s\n' '^\[2\] rank 2: paths to 2 peers: 0 ring, 2 verbs$' \
    '^\[0\] mesh ok n=3 blocking=1' '^\[1\] mesh ok n=3 blocking=1' '^\[2\] mesh ok n=3 blocking=1')" \
  "$dataplane_bins" "$dataplane_env RFT_PROGRESS=block; rftrun -n 3 dataplane_worker mesh"
check_binary dataplane-verbs-failure 0 \
  "$(printf '%s\n' '^\[3\] rank 3: paths to 3 peers: 0 ring, 3 verbs$' \
    '^\[0\] failure completed in .* survivors ok without rank 1$' \
    '^\[2\] failure completed in .* survivors ok without rank 1$' \
    '^\[3\] failure completed in .* survivors ok without rank 1$')" \
  "$dataplane_bins" "$dataplane_env; rftrun --ft -n 4 dataplane_worker failure --victim 1"
# The MPI layer's own checks (tests/mpi/mpi_basics.c) on the verbs data plane; among them the
# synchronous sends (MPI_Issend, Ssend, Ssend_init), which at every size, 0 bytes included, go
# as a descriptor the receiver READs only once matched: none may complete before its receive
# is posted.
check_binary mpi-verbs-basics 0 \
  "$(printf '%s\n' '^\[0\] mpi_basics: rank 0: [0-9]+ checks, 0 failed$' \
    '^\[1\] mpi_basics: rank 1: [0-9]+ checks, 0 failed$' \
    '^\[2\] mpi_basics: rank 2: [0-9]+ checks, 0 failed$')" \
  "bazel-bin/tools/rftrun/rftrun bazel-bin/tests/mpi/mpi_basics" \
  "$dataplane_env; rftrun -n 3 --timeout 300 mpi_basics"
# Messages read in pieces (RFT_VERBS_READ_SIZE=4k: a 64 KiB message is 16 READs, 4 in flight
# per QP, the rest waiting for room): the same rules and mesh, byte for byte.
check_binary dataplane-verbs-read-pieces 0 \
  "$(printf '%s\n' '^\[0\] rules ok n=2' '^\[1\] rules ok n=2' '^\[0\] mesh ok n=3' \
    '^\[1\] mesh ok n=3' '^\[2\] mesh ok n=3' '^rules status 0, mesh status 0$')" \
  "$dataplane_bins" "$dataplane_env RFT_VERBS_READ_SIZE=4k; rftrun -n 2 dataplane_worker rules
   rules=\$?; rftrun -n 3 dataplane_worker mesh; mesh=\$?
   echo \"rules status \$rules, mesh status \$mesh\"; [ \$rules = 0 ] && [ \$mesh = 0 ]"
# A receive whose done message cannot leave (rank 1 used up its credits towards rank 0, which
# sits in a fence) stays pending until the done message is on the wire: the channel must not
# queue it and count it as sent.
check_binary dataplane-verbs-done 0 \
  "$(printf '%s\n' '^\[0\] cma-done ok rank=0 flooded=[0-9]+ path=verbs$' \
    '^\[1\] cma-done ok rank=1 flooded=')" \
  "$dataplane_bins" "$dataplane_env; rftrun -n 2 dataplane_worker cma-done"
# QPs on demand (docs/verbs.md, "Connecting on demand"): four ranks that talk in pairs make QPs
# for their partners only, whichever end sends first: both at once (0 and 1), the higher rank
# asking (3 to 2), the lower rank sending its address unasked (0 to 2).
check_binary dataplane-verbs-on-demand 0 \
  "$(printf '%s\n' '^\[0\] on-demand ok rank=0 qps=2$' '^\[1\] on-demand ok rank=1 qps=1$' \
    '^\[2\] on-demand ok rank=2 qps=2$' '^\[3\] on-demand ok rank=3 qps=1$')" \
  "$dataplane_bins" "$dataplane_env RFT_PROGRESS=block; rftrun -n 4 dataplane_worker on-demand"
# UCX's worker resting while verbs carries the messages (poll mode, where each process has a
# CPU): a link message that reaches a process whose worker rests is still found, and a verbs
# ping-pong lets the worker rest.
check_binary dataplane-verbs-ucx-rest 0 \
  "$(printf '%s\n' '^\[0\] ucx-rest ok rank=0 skipped=[1-9][0-9]*$' \
    '^\[1\] ucx-rest ok rank=1 skipped=[1-9][0-9]*$')" \
  "$dataplane_bins" "$dataplane_env RFT_PROGRESS=poll; rftrun -n 2 dataplane_worker ucx-rest"
# The same with the pair on UCX (rank 1 without verbs, RFT_TRANSPORT=ucx there): rank 0's worker
# carries its peer's messages and must never rest.
check_binary dataplane-verbs-ucx-rest-mixed 0 \
  "$(printf '%s\n' '^\[0\] ucx-rest-mixed ok rank=0 verbs=1 skipped=0$' \
    '^\[1\] ucx-rest-mixed ok rank=1 verbs=0 skipped=0$')" \
  "$dataplane_bins" "$dataplane_env RFT_PROGRESS=poll RFT_TRANSPORT=auto
   rftrun -n 2 sh -c '[ \"\$PMIX_RANK\" = 1 ] && export RFT_TRANSPORT=ucx; exec dataplane_worker ucx-rest-mixed'"
# The checks below that expect closes and returns to happen as they asked wait longer for a place
# (RFT_VERBS_PLACE_WAIT): the 5 ms default is made for real hardware, and a busy emulated guest
# may take longer to answer a request to close. The wait stays well inside the PMIx fence's
# bound (RFT_PMIX_TIMEOUT, raised to match): a rank done first sits in the final fence, outside
# rft, and a pair of two others that asked it to close waits out RFT_VERBS_PLACE_WAIT before it
# goes through UCX. With a 60 s wait and the 10 s fence, asan-dataplane-verbs-return timed out
# that way once in CI (2026-11-28). return-stalled and the churn checks run with short waits.
patient_places="RFT_VERBS_PLACE_WAIT=10s RFT_PMIX_TIMEOUT=60s"
# A working set of one peer (RFT_VERBS_PEERS=1; docs/verbs.md, "A working set of peers"): a pair
# one of whose ends has no place left is refused a QP and talks through UCX; its queued small and
# large messages arrive in order, and each rank ends with a QP for its one partner only.
check_binary dataplane-verbs-working-set 0 \
  "$(printf '%s\n' '^\[0\] working-set ok rank=0 qps=1 partner=3$' \
    '^\[1\] working-set ok rank=1 qps=1 partner=2$' '^\[2\] working-set ok rank=2 qps=1 partner=1$' \
    '^\[3\] working-set ok rank=3 qps=1 partner=0$')" \
  "$dataplane_bins" \
  "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=1 RFT_VERBS_CLOSE_IDLE=n; rftrun -n 4 dataplane_worker working-set"
# The same with idle pairs giving their place back (docs/verbs.md, "Giving a place back"): ranks
# 0 and 1 each close their idle pair by agreement and connect in the places that came back;
# what each sent its old partner during the close arrives through UCX, in order; a busy pair
# refuses to close (rank 1 announced a large message rank 0 has not read); then every rank sends
# every other one at once, and nothing is lost or reordered.
check_binary dataplane-verbs-give-back 0 \
  "$(printf '%s\n' '^\[0\] give-back step 2 ok rank=0 closed with 3 qps=1$' \
    '^\[1\] give-back step 2 ok rank=1 closed with 2 qps=1$' \
    '^\[2\] give-back step 2 ok rank=2 closed with 1 qps=0$' \
    '^\[3\] give-back step 2 ok rank=3 closed with 0 qps=0$' \
    '^\[0\] give-back step 4 ok rank=0 refused=1$' \
    '^\[0\] give-back ok rank=0 closed=[1-9][0-9]* qps=[01]$' \
    '^\[1\] give-back ok rank=1 closed=[1-9][0-9]* qps=[01]$' \
    '^\[2\] give-back ok rank=2 closed=[1-9][0-9]* qps=[01]$' \
    '^\[3\] give-back ok rank=3 closed=[1-9][0-9]* qps=[01]$')" \
  "$dataplane_bins" \
  "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=1 $patient_places; rftrun -n 4 dataplane_worker give-back"
# Both ends of a pair asking each other to close at once (pairs 0-1 and 2-3 connect, then 0-2
# and 1-3 talk, all at once): the lower rank answers, and every rank ends with its new partner.
check_binary dataplane-verbs-give-back-crossing 0 \
  "$(printf '%s\n' '^\[0\] give-back-crossing ok rank=0 closed with 1 qps=1 verbs to 2$' \
    '^\[1\] give-back-crossing ok rank=1 closed with 0 qps=1 verbs to 3$' \
    '^\[2\] give-back-crossing ok rank=2 closed with 3 qps=1 verbs to 0$' \
    '^\[3\] give-back-crossing ok rank=3 closed with 2 qps=1 verbs to 1$')" \
  "$dataplane_bins" \
  "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=1 $patient_places; rftrun -n 4 dataplane_worker give-back-crossing"
# A death during a close, at an agreed point (RFT_FAULT_INJECT): the end asked to close dies as
# the request arrives, or the asker as the agreement arrives (the other end's QP quiet). The
# survivors' operations on the victim end with RFT_ERR_PROC_FAILED through the registry, the
# failure frees the place, and the two survivors then talk through verbs (137: rftrun reports
# the victim's SIGKILL as a crash).
check_binary dataplane-verbs-give-back-death-requested 137 \
  "$(printf '%s\n' '^\[0\] give-back-death ok rank=0 victim=2 verbs to 1$' \
    '^\[1\] give-back-death ok rank=1 victim=2 verbs to 0$')" \
  "$dataplane_bins" "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=1 $patient_places \
    RFT_FAULT_INJECT=verbs.close.requested@2; rftrun --ft -n 3 dataplane_worker give-back-death --victim 2"
check_binary dataplane-verbs-give-back-death-closing 137 \
  "$(printf '%s\n' '^\[1\] give-back-death ok rank=1 victim=0 verbs to 2$' \
    '^\[2\] give-back-death ok rank=2 victim=0 verbs to 1$')" \
  "$dataplane_bins" "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=1 $patient_places \
    RFT_FAULT_INJECT=verbs.close.closing@0; rftrun --ft -n 3 dataplane_worker give-back-death --victim 0"
# Pairs that moved to UCX coming back to verbs after RFT_VERBS_RETURN_AFTER messages through UCX
# (docs/verbs.md, "Coming back"): a closed pair, closing another for the place; a refused pair
# refused again at each attempt; three ranks streaming to each other at once with one place each
# (closes, returns and refusals over and over), and five ranks with two places each; a process
# asked to close that is away from rft (the waiting pair goes through UCX after
# RFT_VERBS_PLACE_WAIT, and comes back later); and a death as the pair comes back. Every message
# arrives in order.
check_binary dataplane-verbs-return 0 \
  "$(printf '%s\n' '^\[0\] return step 3 ok rank=0 returned=1 closed=2 qps=1$' \
    '^\[1\] return step 3 ok rank=1 returned=1 closed=1 qps=1$' \
    '^\[2\] return step 3 ok rank=2 returned=0 closed=1 qps=0$' \
    '^\[0\] return ok rank=0$' '^\[1\] return ok rank=1$' '^\[2\] return ok rank=2$')" \
  "$dataplane_bins" "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=1 $patient_places RFT_VERBS_RETURN_AFTER=4; \
    rftrun -n 3 dataplane_worker return"
check_binary dataplane-verbs-return-refused 0 \
  "$(printf '%s\n' '^\[0\] return-refused ok rank=0 qps=0 tried=2\+$' \
    '^\[1\] return-refused ok rank=1 qps=1 tried=0$' '^\[2\] return-refused ok rank=2 qps=1 tried=0$')" \
  "$dataplane_bins" "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=1 RFT_VERBS_CLOSE_IDLE=n \
    RFT_VERBS_RETURN_AFTER=4; rftrun -n 3 dataplane_worker return-refused"
check_binary dataplane-verbs-return-churn 0 \
  "$(printf '%s\n' '^\[0\] return-churn ok rank=0 ' '^\[1\] return-churn ok rank=1 ' \
    '^\[2\] return-churn ok rank=2 ')" \
  "$dataplane_bins" "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=1 RFT_VERBS_RETURN_AFTER=1; \
    rftrun -n 3 dataplane_worker return-churn"
check_binary dataplane-verbs-return-churn-5 0 \
  "$(printf '%s\n' '^\[0\] return-churn ok rank=0 ' '^\[2\] return-churn ok rank=2 ' \
    '^\[4\] return-churn ok rank=4 ')" \
  "$dataplane_bins" "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=2 RFT_VERBS_RETURN_AFTER=1; \
    rftrun -n 5 dataplane_worker return-churn"
check_binary dataplane-verbs-return-stalled 0 \
  "$(printf '%s\n' '^\[0\] return-stalled step 2 ok rank=0$' '^\[2\] return-stalled step 2 ok rank=2$' \
    '^\[0\] return-stalled ok rank=0 qps=1$' '^\[1\] return-stalled ok rank=1 qps=0$' \
    '^\[2\] return-stalled ok rank=2 qps=1$')" \
  "$dataplane_bins" "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=1 RFT_VERBS_RETURN_AFTER=4 \
    RFT_VERBS_PLACE_WAIT=100ms; rftrun -n 3 dataplane_worker return-stalled"
check_binary dataplane-verbs-return-death 137 \
  "$(printf '%s\n' '^\[0\] return-death ok rank=0 verbs to 2$' '^\[2\] return-death ok rank=2 verbs to 0$')" \
  "$dataplane_bins" "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=1 $patient_places RFT_VERBS_RETURN_AFTER=2 \
    RFT_FAULT_INJECT=verbs.return.taken@1; rftrun --ft -n 3 dataplane_worker return-death"
# The rendezvous's registration cache: buffers sent from and received into again are found
# registered; unmapped and mapped again at the same address, they are registered anew (the
# contents are checked, so a stale registration fails the check).
check_binary dataplane-verbs-registration-cache 0 \
  "$(printf '%s\n' '^\[0\] reg-cache ok rank=0 hits=[0-9]+ misses=[0-9]+ invalidations=[1-9]' \
    '^\[1\] reg-cache ok rank=1 hits=[0-9]+ misses=[0-9]+ invalidations=[1-9]')" \
  "$dataplane_bins" "$dataplane_env; rftrun -n 2 dataplane_worker reg-cache"
# The RDMA READ of a rendezvous whose sender died after announcing it: the READ fails on the
# dead QP and the receive ends with RFT_ERR_PROC_FAILED, with no failure registry to say so
# first (137: rftrun reports the rank that raised SIGKILL as a crash).
check_binary dataplane-verbs-read-death 0 \
  "$(printf '%s\n' '^\[0\] rank 0: paths to 1 peers: 0 ring, 1 verbs$' \
    '^\[0\] read-death ok: PROC_FAILED after [0-9.]+ ms$')" \
  "$dataplane_bins" \
  "$dataplane_env; rftrun --ft -n 2 dataplane_worker read-death; status=\$?
   echo \"rftrun exit status \$status\"; [ \"\$status\" = 137 ]"

# Heartbeats by RDMA WRITE (detector/verbs_heartbeats.h): the control plane's message channel's
# QPs write every heartbeat word into the observer's slot. quiet: three ranks for 2 s, every heartbeat
# written through a QP and no suspicion (a write that did not land would be one); stop: a
# stopped rank's silence is found by its observer (source=heartbeat) and it is killed.
detector_env="export $ucx_env RFT_HEARTBEAT_PERIOD=20ms RFT_HEARTBEAT_TIMEOUT=1s RFT_LOG_LEVEL=info"
detector_bins="bazel-bin/tools/rftrun/rftrun bazel-bin/tests/multiproc/detector_worker"
check_binary detector-verbs-heartbeats 0 \
  "$(printf '%s\n' '^\[0\] \[rft:0\] info: heartbeats by RDMA WRITE to 2 of 2 peers, control messages by SEND to 2$' \
    '^\[0\] quiet ok rank=0 heartbeats=[1-9][0-9]* by_rdma_write=[1-9]' \
    '^\[1\] quiet ok rank=1 heartbeats=[1-9][0-9]* by_rdma_write=[1-9]' \
    '^\[2\] quiet ok rank=2 heartbeats=[1-9][0-9]* by_rdma_write=[1-9]')" \
  "$detector_bins" "$detector_env; rftrun --ft -n 3 detector_worker quiet --seconds 2"
check_binary detector-verbs-heartbeat-stop 0 \
  "$(printf '%s\n' '^\[1\] \[rft:1\] info: heartbeats by RDMA WRITE to 2 of 2 peers, control messages by SEND to 2$' \
    'fault ok rank=[01] victim=2 source=heartbeat' \
    '^\[0\] fault ok rank=0 victim=2 ' '^\[1\] fault ok rank=1 victim=2 ')" \
  "$detector_bins" "$detector_env; rftrun --ft -n 3 detector_worker fault stop --victim 2"
# The control messages by verbs SEND (RFT_CONTROL_SOCKETS=n: same-node peers take the network
# path): a revocation's flood reaches every rank with no UCX message (the origin may get none
# back), a SEND ended a sleeping control thread's wait, and a kill is news to every survivor.
check_binary control-verbs-revoke 0 \
  "$(printf '%s\n' \
    '^\[0\] revoke ok rank=0 .* control_by_ucx=0 by_verbs=[1-9][0-9]* received_by_verbs=[1-9]' \
    '^\[1\] revoke ok rank=1 .* control_by_ucx=0 by_verbs=[1-9][0-9]* ' \
    '^\[2\] revoke ok rank=2 .* control_by_ucx=0 by_verbs=[1-9][0-9]* received_by_verbs=[1-9]' \
    '^\[[02]\] revoke ok .* verbs_wakeups=[1-9]')" \
  "$detector_bins" \
  "$detector_env RFT_CONTROL_SOCKETS=n; rftrun --ft -n 3 detector_worker revoke --origin 1"
# Six ranks: each makes message channel QPs for its static neighbours only (ranks at a distance
# of 1, 2 or 4: four of five peers; docs/verbs.md, "Control messages by SEND"), and a
# revocation's flood, which travels between neighbours, still needs no UCX message.
check_binary control-verbs-neighbours 0 \
  "$(for r in 0 1 2 3 4 5; do
    printf '%s\n' "^\\[$r\\] \\[rft:$r\\] info: heartbeats by RDMA WRITE to 4 of 5 peers, "\
"control messages by SEND to 4\$" "^\\[$r\\] revoke ok rank=$r .* control_by_ucx=0 by_verbs=[1-9]"
  done)" \
  "$detector_bins" \
  "$detector_env RFT_CONTROL_SOCKETS=n; rftrun --ft -n 6 detector_worker revoke --origin 1"
check_binary control-verbs-fault 137 \
  "$(printf '%s\n' '^\[0\] fault ok rank=0 victim=2 ' '^\[1\] fault ok rank=1 victim=2 ')" \
  "$detector_bins" \
  "$detector_env RFT_CONTROL_SOCKETS=n; rftrun --ft -n 3 detector_worker fault kill --victim 2"
# Ranks 1 and 2 of 6 die at once: the ring repaired around them joins ranks 0 and 3, which are
# not neighbours (distance 3) and made no QP for each other at start-up. The observe request of
# the repair offers one (docs/verbs.md, "Control messages by SEND"), and within 20 s every
# survivor's heartbeats, those to the repaired ring's observer included, go by RDMA WRITE.
check_binary control-verbs-ring-repair 137 \
  "$(for r in 0 3 4 5; do
    printf '%s\n' "^\\[$r\\] fault ok rank=$r victim=1 .* heartbeats_by_rdma_write_after_windows="
  done
  printf '%s\n' '^\[0\] .* control messages by SEND to rank 3 on demand: ' \
    '^\[3\] .* control messages by SEND to rank 0 on demand: ')" \
  "$detector_bins" \
  "$detector_env RFT_CONTROL_SOCKETS=n; rftrun --ft -n 6 detector_worker fault kill --victim 1,2 --writes"
# Ranks that end at different times tell the peers that would see their QPs close (their
# observed rank among them): nobody records the first one to leave as failed.
check_binary control-verbs-departure 0 \
  "$(printf '%s\n' '^\[0\] staggered ok rank=0' '^\[1\] staggered ok rank=1' \
    '^\[2\] staggered ok rank=2' '^\[3\] staggered ok rank=3')" \
  "$detector_bins" "$detector_env RFT_CONTROL_SOCKETS=n; rftrun --ft -n 4 detector_worker staggered"
# The whole stack on verbs (data plane and control messages): member 1 of RANKS dies inside an
# agreement (agreement_worker during 1), and the survivors decide one outcome.
agreement_during_check() {  # NAME RANKS PATTERNS [MORE_ENV]
  check_binary "$1" 137 "$(printf '%s\n' "$3" '^outcomes=1$')" \
    "bazel-bin/tools/rftrun/rftrun bazel-bin/tests/multiproc/agreement_worker" \
    "$detector_env RFT_CONTROL_SOCKETS=n RFT_TRANSPORT=verbs RFT_SHM_RINGS=n RFT_RENDEZVOUS=ucx ${4:-}; \
     rftrun --ft -n $2 agreement_worker during 1 >/tmp/out 2>&1; s=\$?; cat /tmp/out; \
     echo outcomes=\$(grep -o 'decided rc=.*' /tmp/out | sort -u | wc -l); exit \$s"
}
# Four ranks: the agreement's rounds, the failure's news and the data all by verbs.
agreement_during_check agreement-verbs-during 4 \
  "$(printf '%s\n' 'info: heartbeats by RDMA WRITE to 3 of 3 peers, control messages by SEND to 3$' \
    '^\[0\] during ok rank=0' '^\[2\] during ok rank=2' '^\[3\] during ok rank=3')"
# Six ranks: the tree rebuilt over the survivors makes rank 0 the parent of rank 3, which is not
# its neighbour (distance 3), so neither made a QP for the other at start-up. The first round
# between them goes through UCX, preceded by an offer of a QP; the other end connects and
# answers before its own next message, so both ends log the pair as connected on demand before
# the agreement that follows can end (docs/verbs.md, "Control messages by SEND").
agreement_during_check agreement-verbs-non-neighbours 6 \
  "$(printf '%s\n' 'info: heartbeats by RDMA WRITE to 4 of 5 peers, control messages by SEND to 4$' \
    '^\[0\] during ok rank=0' '^\[3\] during ok rank=3' '^\[5\] during ok rank=5' \
    '^\[0\] .* control messages by SEND to rank 3 on demand: ' \
    '^\[3\] .* control messages by SEND to rank 0 on demand: ')"
# The same, but the end that answers the offer fails to connect its QP (RFT_FAULT_INJECT's
# verbs.offer.fails, armed at both ends since either may offer first): it declines, the offering
# end withdraws its QP, both keep the pair on UCX, and the agreement decides as before.
agreement_during_check agreement-verbs-offer-declined 6 \
  "$(printf '%s\n' '^\[0\] during ok rank=0' '^\[3\] during ok rank=3' '^\[5\] during ok rank=5' \
    '^\[(0|3)\] .* control messages to rank (0|3) through UCX: .*fault injected at verbs.offer.fails' \
    '^\[(0|3)\] .* control messages to rank (0|3) through UCX: it could not connect a QP$')" \
  "RFT_FAULT_INJECT=verbs.offer.fails@0,verbs.offer.fails@3"
# Recovery on verbs: the respawn solver (examples/respawn_solver.cc, as in spawn_test) loses
# process 2 of 4 at iteration 300; the survivors revoke, agree, spawn a replacement and restore
# its state from its buddy's checkpoint, and all four totals are exact. Every pair talks by
# verbs, data and control planes both: the survivors among themselves, and each survivor with
# the replacement (job rank 4). The data plane's QPs are made when a pair first talks: each
# survivor, the lower rank, sends its QP's address over UCX, and the replacement connects,
# answers and waits for the greeting (docs/verbs.md, "Connecting on demand"); the control
# plane's when the replacement joined ("Replacements").
check_binary recovery-verbs-respawn 137 \
  "$(printf '%s\n' 'info: heartbeats by RDMA WRITE to 3 of 3 peers, control messages by SEND to 3$' \
    'info: verbs: ranks \{4\} joined; their QPs are made when a message first needs them$' \
    '\[rft:4\] info: verbs: connected to rank 0, awaiting its greeting' \
    '\[rft:4\] info: verbs: connected to rank 1, awaiting its greeting' \
    '\[rft:4\] info: verbs: connected to rank 3, awaiting its greeting' \
    'info: heartbeats by RDMA WRITE and control messages by SEND to rank 0, which made QPs for this replacement$' \
    'info: heartbeats by RDMA WRITE and control messages by SEND to rank 3, which made QPs for this replacement$' \
    '^\[s1:0\] respawn_solver: rank 2: total .* after 0 respawn\(s\) \(a replacement\)$' \
    '^exact=4$')" \
  "bazel-bin/tools/rftrun/rftrun bazel-bin/examples/respawn_solver" \
  "$detector_env RFT_CONTROL_SOCKETS=n RFT_TRANSPORT=verbs RFT_SHM_RINGS=n; \
   rftrun -n 4 --ft --timeout 300 respawn_solver --iterations 600 --victim 2 --die-at 300 \
   >/tmp/out 2>&1; s=\$?; cat /tmp/out; \
   echo exact=\$(grep -cE 'total ([0-9]+) \(exact \1\)' /tmp/out); exit \$s"

# A replacement joins on verbs (tests/multiproc/growth_worker.cc, which growth_test runs on the
# host): rank 2 of 3 dies, a replacement (job rank 3) joins, and every pair exchanges an eager
# and a large message (RDMA READ) through verbs, the replacement's data-plane QPs connected
# when the pair first talks (its control-plane QPs when it joined).
# While all are quiet, every process writes its heartbeats to its observer by RDMA (the ring of
# 0, 1 and 3 has the replacement observe one survivor and be observed by the other).
# Then rank 1 dies and the replacement raises SIGKILL: the others learn both, and a receive
# posted on the replacement completes with PROC_FAILED.
check_binary growth-verbs 137 \
  "$(printf '%s\n' 'rank 0 exchanged messages with the grown job' \
    'rank 1 exchanged messages with the grown job' 'rank 3 exchanged messages with the grown job' \
    'rank 0 reaches 3 by verbs$' 'rank 1 reaches 3 by verbs$' 'rank 3 reaches 0 by verbs$' \
    'rank 3 reaches 1 by verbs$' 'rank 0 reaches 1 by verbs$' \
    'rank 0 wrote [1-9][0-9]* heartbeats by RDMA while quiet' \
    'rank 1 wrote [1-9][0-9]* heartbeats by RDMA while quiet' \
    'rank 3 wrote [1-9][0-9]* heartbeats by RDMA while quiet' \
    'rank 0 learned rank 1 failed' 'rank 3 learned rank 1 failed' \
    'rank 0 learned replacement 3 failed')" \
  "bazel-bin/tools/rftrun/rftrun bazel-bin/tests/multiproc/growth_worker" \
  "$detector_env RFT_CONTROL_SOCKETS=n RFT_TRANSPORT=verbs RFT_SHM_RINGS=n RFT_RENDEZVOUS=ucx; \
   rftrun -n 3 --ft --timeout 120 growth_worker >/tmp/out 2>&1; s=\$?; cat /tmp/out; \
   if grep -q "FAILED:" /tmp/out; then exit 3; fi; exit \$s"

# The end of a job on UCX over rc (RFT_TRANSPORT=ucx: what a cluster without the verbs backend
# runs). Ranks that end together (an agreement job) and one by one (staggered) close their
# endpoints without waiting out the 2 s teardown bound: departed peers' endpoints are
# force-closed, and a flush stops waiting for a peer once it departs
# (docs/detector.md, "Fail-stop for every source, and clean ends"). Before, every run logged up
# to 5 "did not flush" warnings.
# And no UCX warning of an unused UCX_MM_ERROR_HANDLING (rft sets it only when UCX_TLS allows
# shared memory).
check_binary ucx-rc-finalize 0 \
  "$(printf '%s\n' '^\[0\] basics ok rank=0' '^\[3\] basics ok rank=3' \
    '^\[0\] staggered ok rank=0' '^\[3\] staggered ok rank=3' '^flush-warnings=0$' \
    '^unused-variables=0$')" \
  "bazel-bin/tools/rftrun/rftrun bazel-bin/tests/multiproc/agreement_worker \
   bazel-bin/tests/multiproc/detector_worker" \
  "$detector_env RFT_CONTROL_SOCKETS=n RFT_TRANSPORT=ucx RFT_SHM_RINGS=n; \
   rftrun --ft -n 4 agreement_worker basics >/tmp/out 2>&1; a=\$?; \
   rftrun --ft -n 4 detector_worker staggered >>/tmp/out 2>&1; b=\$?; cat /tmp/out; \
   echo flush-warnings=\$(grep -c 'did not flush' /tmp/out); \
   echo unused-variables=\$(grep -c 'unused env variable' /tmp/out); exit \$((a | b))"
# Senders that finalize right after their last sends, over rc, before the receiver looks: every
# message arrives intact (a flush is what delivers the last ones).
check_binary ucx-rc-parting 0 \
  "$(printf '%s\n' '^\[0\] parting ok rank=0' '^\[1\] parting ok rank=1' \
    '^\[2\] parting ok rank=2' '^\[3\] parting ok rank=3')" \
  "bazel-bin/tools/rftrun/rftrun bazel-bin/tests/multiproc/api_worker" \
  "$detector_env RFT_CONTROL_SOCKETS=n RFT_TRANSPORT=ucx RFT_SHM_RINGS=n; \
   rftrun --ft -n 4 api_worker parting"

# Sanitizer builds on the verbs paths (the host's sanitizer stages have no device). TSan:
# heartbeats by RDMA WRITE, a revocation's flood by SEND, the data plane's verbs path sleeping
# on its completion channel, and the whole stack through an agreement with a death. ASan (leaks
# included): the data plane's eager/rendezvous boundaries and RDMA READs, a death with
# operations pending, the revocation and the agreement. A report fails the check even when the
# job ends well. TSan runs with UCX's mmap hooks off, as in the host's TSan config (.bazelrc:
# glibc's madvise at thread exit reaches TSan's interceptor through them after the thread's
# TSan state is gone, and the process dies of SIGSEGV).
# A sanitizer slows every process several times over in an emulated guest: the detector gets a
# 1 s timeout, or the default 20 ms declares live ranks dead (seen in CI).
slow_env="RFT_HEARTBEAT_PERIOD=20ms RFT_HEARTBEAT_TIMEOUT=1s"
tsan_env="export TSAN_OPTIONS=halt_on_error=0:second_deadlock_stack=1 UCX_MEM_MMAP_HOOK_MODE=none $slow_env"
asan_env="export ASAN_OPTIONS=detect_leaks=1 $slow_env"
# sanitizer_check NAME STATUS PATTERNS WORKER ENV RFTRUN_ARGS, with NAME tsan-* or asan-*: that
# build of WORKER under rftrun, ENV first; wants STATUS, PATTERNS and no sanitizer report.
sanitizer_check() {
  local name=$1 want=$2 pattern=$3 worker=$4 env=$5 args=$6 config=${1%%-*} report
  report='WARNING: ThreadSanitizer'
  [[ $config == asan ]] && report='ERROR: (Address|Leak)Sanitizer'
  local config_env=$tsan_env
  [[ $config == asan ]] && config_env=$asan_env
  check_binary "$name" "$want" "$(printf '%s\n' "$pattern" '^sanitizer_reports=0$')" \
    "bazel-bin/tools/rftrun/rftrun $sanitized/$config/$worker" \
    "$env; $config_env; rftrun $args >/tmp/out 2>&1; s=\$?; cat /tmp/out; \
     echo sanitizer_reports=\$(grep -Ec '$report' /tmp/out); exit \$s"
}
# Both builds: a revocation's flood by SEND, a replacement joining on verbs, and the whole stack
# through an agreement with a death.
for config in tsan asan; do
  sanitizer_check "$config-control-verbs-revoke" 0 \
    "$(printf '%s\n' '^\[0\] revoke ok rank=0 .* control_by_ucx=0 by_verbs=[1-9]' \
      '^\[2\] revoke ok rank=2 .* control_by_ucx=0 by_verbs=[1-9]')" \
    detector_worker "$detector_env RFT_CONTROL_SOCKETS=n" \
    "--ft -n 3 --timeout 300 detector_worker revoke --origin 1"
  # A replacement joining on verbs: both planes grow their QPs on the control and data-plane
  # threads while heartbeats run, then two deaths.
  sanitizer_check "$config-growth-verbs" 137 \
    "$(printf '%s\n' 'rank 3 exchanged messages with the grown job' 'rank 0 reaches 3 by verbs$' \
      'rank 3 wrote [1-9][0-9]* heartbeats by RDMA while quiet' \
      'rank 0 learned replacement 3 failed')" \
    growth_worker "$detector_env RFT_CONTROL_SOCKETS=n RFT_TRANSPORT=verbs RFT_SHM_RINGS=n \
      RFT_RENDEZVOUS=ucx" "-n 3 --ft --timeout 300 growth_worker"
  sanitizer_check "$config-agreement-verbs-during" 137 \
    "$(printf '%s\n' '^\[0\] during ok rank=0' '^\[2\] during ok rank=2' '^\[3\] during ok rank=3')" \
    agreement_worker "$detector_env RFT_CONTROL_SOCKETS=n RFT_TRANSPORT=verbs RFT_SHM_RINGS=n" \
    "--ft -n 4 --timeout 300 agreement_worker during 1"
done
sanitizer_check tsan-detector-verbs-heartbeats 0 \
  "$(printf '%s\n' '^\[0\] quiet ok rank=0 heartbeats=[1-9][0-9]* by_rdma_write=[1-9]' \
    '^\[2\] quiet ok rank=2 heartbeats=[1-9][0-9]* by_rdma_write=[1-9]')" \
  detector_worker "$detector_env" "--ft -n 3 --timeout 300 detector_worker quiet --seconds 2"
sanitizer_check tsan-dataplane-verbs-mesh 0 \
  "$(printf '%s\n' '^\[0\] mesh ok n=3 blocking=1' '^\[2\] mesh ok n=3 blocking=1')" \
  dataplane_worker "$dataplane_env RFT_PROGRESS=block" "-n 3 --timeout 300 dataplane_worker mesh"
sanitizer_check asan-dataplane-verbs-rules 0 \
  "$(printf '%s\n' '^\[0\] rules ok n=2' '^\[1\] rules ok n=2')" \
  dataplane_worker "$dataplane_env" "-n 2 --timeout 300 dataplane_worker rules"
# The control plane's QPs offered on demand (control-verbs-ring-repair above), under ASan.
sanitizer_check asan-control-verbs-ring-repair 137 \
  "$(printf '%s\n' '^\[0\] fault ok rank=0 victim=1 .* heartbeats_by_rdma_write_after_windows=' \
    '^\[3\] fault ok rank=3 victim=1 .* heartbeats_by_rdma_write_after_windows=' \
    '^\[0\] .* control messages by SEND to rank 3 on demand: ')" \
  detector_worker "$detector_env RFT_CONTROL_SOCKETS=n" \
  "--ft -n 6 --timeout 300 detector_worker fault kill --victim 1,2 --writes"
# Pairs closing to give their place back (dataplane-verbs-give-back above), under ASan and TSan.
sanitizer_check asan-dataplane-verbs-give-back 0 \
  "$(printf '%s\n' '^\[0\] give-back step 4 ok rank=0 refused=1$' \
    '^\[0\] give-back ok rank=0 closed=1 qps=1$' '^\[3\] give-back ok rank=3 closed=1 qps=1$')" \
  dataplane_worker "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=1 $patient_places" \
  "-n 4 --timeout 300 dataplane_worker give-back"
sanitizer_check tsan-dataplane-verbs-give-back-crossing 0 \
  "$(printf '%s\n' '^\[0\] give-back-crossing ok rank=0 closed with 1 qps=1 verbs to 2$' \
    '^\[3\] give-back-crossing ok rank=3 closed with 2 qps=1 verbs to 1$')" \
  dataplane_worker "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=1 $patient_places" \
  "-n 4 --timeout 300 dataplane_worker give-back-crossing"
# Pairs coming back to verbs (dataplane-verbs-return above), under ASan and TSan.
sanitizer_check asan-dataplane-verbs-return 0 \
  "$(printf '%s\n' '^\[0\] return ok rank=0$' '^\[2\] return ok rank=2$')" \
  dataplane_worker "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=1 $patient_places RFT_VERBS_RETURN_AFTER=4" \
  "-n 3 --timeout 300 dataplane_worker return"
sanitizer_check tsan-dataplane-verbs-return-churn 0 \
  "$(printf '%s\n' '^\[0\] return-churn ok rank=0 ' '^\[2\] return-churn ok rank=2 ')" \
  dataplane_worker "$dataplane_env RFT_PROGRESS=block RFT_VERBS_PEERS=1 RFT_VERBS_RETURN_AFTER=1" \
  "-n 3 --timeout 300 dataplane_worker return-churn"
sanitizer_check asan-dataplane-verbs-failure 0 \
  "$(printf '%s\n' '^\[0\] failure completed in .* survivors ok without rank 1$' \
    '^\[3\] failure completed in .* survivors ok without rank 1$')" \
  dataplane_worker "$dataplane_env" "--ft -n 4 --timeout 300 dataplane_worker failure --victim 1"

# Two nodes: one rft job across the two guests (rftrun's node link over the virtual network, every
# rank's peers on the other guest reached through that guest's own rxe device). rules: the data
# plane's matching and eager/rendezvous boundaries between the nodes (the RDMA READ crosses
# them); during: the whole stack on verbs, a member on the second node dies inside an agreement
# and the three survivors on both nodes decide one outcome (137: rftrun reports the rank that
# raised SIGKILL; node 0 takes the job's status from node 1).
check_two_nodes dataplane-verbs-two-nodes 0 \
  "$(printf '%s\n' '^\[0\] rank 0: paths to 1 peers: 0 ring, 1 verbs$' \
    '^\[1\] rank 1: paths to 1 peers: 0 ring, 1 verbs$' '^\[0\] rules ok n=2' '^\[1\] rules ok n=2')" \
  "$dataplane_bins" "$dataplane_env" "-n 1 --timeout 300 dataplane_worker rules"
check_two_nodes agreement-verbs-two-nodes 137 \
  "$(printf '%s\n' 'node 0 of 2 \(guest1\): ranks 0\.\.1 of 4' 'node 1 of 2 \(guest2\): ranks 2\.\.3 of 4' \
    '^\[0\] \[rft:0\] info: heartbeats by RDMA WRITE to 3 of 3 peers, control messages by SEND to 3$' \
    '^\[0\] during ok rank=0' '^\[1\] during ok rank=1' '^\[2\] during ok rank=2' \
    '^outcome (decided rc=.*)$')" \
  "bazel-bin/tools/rftrun/rftrun bazel-bin/tests/multiproc/agreement_worker" \
  "$detector_env RFT_TRANSPORT=verbs" \
  "-v --ft -n 2 --timeout 300 agreement_worker during 3 >/tmp/out 2>&1; s=\$?; cat /tmp/out; \
   grep -o 'decided rc=.*' /tmp/out | sort -u | sed 's/^/outcome /'; exit \$s"
if ((last_passed)); then
  # Across the guests, one outcome: every survivor printed the same decision.
  outcomes=$(grep -o '^outcome decided rc=.*' "$out" | sort -u | wc -l)
  if ((outcomes != 1)); then
    passed=$((passed - 1))
    failed=$((failed + 1))
    echo "softroce check agreement-verbs-two-nodes: FAILED ($outcomes distinct outcomes across the nodes)"
    grep '^outcome ' "$out" | sed 's/^/  /'
  fi
fi

# check_binary's checks, queued above, in a few shared guests (check_lib.sh, "Batches").
run_batches

echo "softroce: $passed passed, $failed failed"
((failed == 0))
