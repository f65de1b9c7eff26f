#!/usr/bin/env bash
# Builds a minimal Debian trixie root (UCX 1.18, PMIx 5, Open MPI 5 with PRRTE) in which
# tools/compat/run.sh runs rft binaries built on this Debian 12 machine: the libraries they
# were linked against are replaced by newer ones, the way a user on a newer distribution runs them.
#
#   bash tools/compat/make-root.sh          (root; RFT_COMPAT_ROOT overrides /var/tmp/rft-trixie)
#
# Idempotent: a complete root carries a stamp file and is left as it is.
set -euo pipefail

root=${RFT_COMPAT_ROOT:-/var/tmp/rft-trixie}
mirror=${RFT_COMPAT_MIRROR:-http://deb.debian.org/debian}
stamp="$root/.rft-compat-complete"
# The runtime packages rft binaries load (see `ldd` on rftrun and the workers): UCX and its
# verbs/rdmacm providers, PMIx, hwloc, the C++ runtime; openmpi-bin brings mpirun and PRRTE's
# prterun; procps for ps/pgrep when a scenario must find a rank's PID.
packages=(libucx0 ucx-utils libpmix2t64 libhwloc15 libibverbs1 librdmacm1 libstdc++6 libgcc-s1
  openmpi-bin libnuma1 procps)

if [[ $EUID -ne 0 ]]; then
  echo "make-root: must run as root (debootstrap and chroot)" >&2
  exit 1
fi

versions() {
  # What the root provides, from its own tools and package database.
  echo "make-root: root $root"
  echo "make-root: Debian $(cat "$root/etc/debian_version")"
  # (ucx_info's "failed to get boot id" without /proc is noise: only its version lines)
  chroot "$root" ucx_info -v 2>/dev/null | grep '^# Library version' | sed 's/^/make-root: ucx_info -v: /'
  chroot "$root" dpkg-query -W -f='make-root: ${Package} ${Version}\n' \
    libucx0 libpmix2t64 libhwloc15 openmpi-bin libprrte3 2>/dev/null || true
  chroot "$root" mpirun --version 2>/dev/null | head -1 | sed 's/^/make-root: mpirun --version: /'
  chroot "$root" prterun --version 2>/dev/null | head -1 | sed 's/^/make-root: prterun --version: /'
}

if [[ -f "$stamp" ]]; then
  echo "make-root: $root is complete (stamp $stamp); nothing to do"
  versions
  exit 0
fi

start=$(date +%s)
if ! command -v debootstrap >/dev/null; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends debootstrap
fi

# A half-made root (interrupted run, no stamp) is started over: debootstrap refuses to finish
# one reliably. Mounts of an interrupted run.sh must be gone first, or rm would descend into them.
if [[ -e "$root" ]]; then
  if grep -q " $root/" /proc/self/mounts; then
    echo "make-root: $root still has mounts (an interrupted run.sh?); unmount them first:" >&2
    grep " $root/" /proc/self/mounts >&2
    exit 1
  fi
  echo "make-root: $root is incomplete (no stamp); starting over"
  rm -rf --one-file-system "$root"
fi

nice -n 10 debootstrap --variant=minbase trixie "$root" "$mirror"

# Packages inside the root. /proc is needed by some maintainer scripts; it is unmounted
# whatever happens. Services must not start inside a chroot (policy-rc.d 101).
mount -t proc proc "$root/proc"
trap 'umount "$root/proc" 2>/dev/null || true' EXIT
printf '#!/bin/sh\nexit 101\n' >"$root/usr/sbin/policy-rc.d"
chmod +x "$root/usr/sbin/policy-rc.d"
chroot "$root" apt-get update
DEBIAN_FRONTEND=noninteractive nice -n 10 chroot "$root" apt-get install -y \
  --no-install-recommends "${packages[@]}"
chroot "$root" apt-get clean
umount "$root/proc"
trap - EXIT

date -u +%FT%TZ >"$stamp"
echo "make-root: built in $(($(date +%s) - start)) s"
versions
