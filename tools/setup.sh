#!/usr/bin/env bash
# Installs the Debian 12 packages that building and testing rft need, only those missing.
# Idempotent: a second run installs nothing and takes a second.
set -euo pipefail

PACKAGES=(
  bazel-bootstrap g++ pkg-config python3 clang-format
  libucx-dev ucx-utils
  rdma-core ibverbs-providers libibverbs-dev librdmacm-dev ibverbs-utils
  libhwloc-dev libpmix-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  iproute2 procps
  libmpich-dev mpich cmake  # the MPI layer's binary-interface test: MPICH's header, mpicc.mpich
  gdb                    # rftrun --get-stack-traces (the multi-process tests pass it)
  debootstrap            # the compatibility stage's Debian trixie root (tools/compat)
  slurmctld slurmd slurm-client munge  # the Slurm stage's single-node cluster (tools/slurm)
  clang-14 libclang-rt-14-dev  # libFuzzer (tools/fuzz.sh)
  qemu-system-x86 busybox-static perftest  # soft-RoCE guests (tools/softroce)
)

missing=()
for package in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#PACKAGES[@]} packages present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
echo "setup: done"
