#!/usr/bin/env bash
# Regenerates the figures of docs/performance.md: runs the benchmarks that feed the plots (opt
# build), keeps their --json lines under docs/img/data/, and draws docs/img/*.png with
# bench/plot.py. Prints progress as it goes; takes ~10 minutes.
#
#   bash bench/results.sh [--rounds R]     (R rounds of compare_mpi.sh, default 4)
#
# Open MPI's side of compare_mpi.sh needs root and the compatibility stage's trixie root
# (tools/compat/make-root.sh); without them the MPI plots show rft alone.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=4
while (($#)); do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    *) echo "results: unknown argument $1 (expected --rounds R)" >&2; exit 2 ;;
  esac
done
[[ $rounds =~ ^[1-9][0-9]*$ ]] || { echo "results: --rounds $rounds: expected a count" >&2; exit 2; }
step() { echo "results: [$(date +%T)] $*" >&2; }
if ! /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  step "installing python3-matplotlib (Debian)"
  sudo=()
  [[ $EUID -ne 0 ]] && sudo=(sudo)
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q python3-matplotlib >/dev/null
fi
data=docs/img/data
mkdir -p "$data"
step "building (opt)"
bazel build --config=opt --color=no --curses=no --noshow_progress //bench:mpi_bench \
  //ulfm_api/mpi:sdk //bench:rft_bench_launcher_events //bench:rft_bench_sim_detect \
  //tools/rftrun 2>/dev/null
bin=$(bazel info --config=opt bazel-bin 2>/dev/null)
step "rft beside Open MPI 5: bench/compare_mpi.sh --rounds $rounds"
bash bench/compare_mpi.sh --rounds "$rounds" --json >"$data/compare_mpi.json"
step "a SIGKILL known at every survivor: rft_bench_launcher_events --faults 20"
"$bin/bench/rft_bench_launcher_events" --faults 20 --json --rftrun "$bin/tools/rftrun/rftrun" \
  >"$data/launcher_events.json"
step "detection versus ranks in the simulator: rft_bench_sim_detect --max-n 65536"
"$bin/bench/rft_bench_sim_detect" --max-n 65536 --json >"$data/sim_detect.json"
step "plotting"
/usr/bin/python3 bench/plot.py --out docs/img --mpi "$data/compare_mpi.json" \
  --kill "$data/launcher_events.json" --sim "$data/sim_detect.json"
step "done: docs/img/*.png from docs/img/data/*.json"
