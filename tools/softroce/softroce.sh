#!/usr/bin/env bash
# Runs a command inside a qemu guest that has a real RDMA device: Debian's own kernel with
# rdma_rxe (soft-RoCE) on a virtual netdev, booted under TCG (no KVM needed). This machine's
# kernel has no RDMA; the guest's has, so verbs, rdmacm, perftest and UCX's rc transport run
# there for real. Exit status: the command's; 124 when the guest ran out of time; 125 when it
# could not be set up (the guest's console log is printed then).
#
#   tools/softroce/softroce.sh [OPTIONS] -- COMMAND          one guest; COMMAND runs in bash
#   tools/softroce/softroce.sh --pair [OPTIONS] -- CMD1 CMD2  two guests on one virtual link:
#                                 CMD1 on 192.0.2.1, CMD2 on 192.0.2.2, $SOFTROCE_PEER is
#                                 the other's address; the status is the first non-zero one
#   tools/softroce/softroce.sh --shell                       an interactive shell in a guest
#
# Options:
#   --add DIR        copy DIR's contents to /job in the guest (the working directory; /job and
#                    /job/bin lead PATH); the shared libraries its ELF files need come along
#   --timeout SEC    wall-clock limit per guest (default 600)
#   --boot-limit SEC[,SEC]  how long a guest may take to bring rxe0 up before it is booted
#                    once more, the job not yet started (default 120); a second value is the
#                    second boot's limit. Two stalled boots: status 125
#   --cpus N         virtual CPUs per guest (default 2, 1 per guest with --pair)
#   --memory MIB     memory per guest (default 1024)
#   --console FILE   keep the guest's console log (the kernel's and guest_init's messages)
#
# In the guest: device rxe0, port 1, GID index 1 (RoCE v2 over IPv4), locked memory unlimited,
# $SOFTROCE_IP and $SOFTROCE_NETDEV. UCX over rxe wants UCX_TLS=rc,
# UCX_NET_DEVICES=rxe0:1 and UCX_UD_ETH_DGID_CHECK=n. See docs/softroce.md.
set -uo pipefail
here=$(cd "$(dirname "$(readlink -f "$0")")" && pwd)
# shellcheck source=files.sh
source "$here/files.sh"
cache=${RFT_SOFTROCE_CACHE:-/var/tmp/rft-softroce}

usage() {
  sed -n '8,11p;15,23p' "$0" >&2
  echo "softroce: $*" >&2
  exit 2
}

pair=0 shell=0 timeout=600 boot_limits=(120 120) cpus='' memory=1024 console='' adds=()
while (($# > 0)); do
  case $1 in
    --pair) pair=1 ;;
    --shell) shell=1 ;;
    --add) (($# > 1)) || usage "--add needs a directory"; adds+=("$2"); shift ;;
    --timeout) (($# > 1)) || usage "--timeout needs seconds"; timeout=$2; shift ;;
    --boot-limit)
      (($# > 1)) || usage "--boot-limit needs seconds"
      IFS=, read -r -a boot_limits <<<"$2"
      ((${#boot_limits[@]} == 1)) && boot_limits+=("${boot_limits[0]}")
      ((${#boot_limits[@]} == 2)) || usage "--boot-limit '$2': expected SEC or SEC,SEC"
      shift ;;
    --cpus) (($# > 1)) || usage "--cpus needs a number"; cpus=$2; shift ;;
    --memory) (($# > 1)) || usage "--memory needs MiB"; memory=$2; shift ;;
    --console) (($# > 1)) || usage "--console needs a file"; console=$2; shift ;;
    --) shift; break ;;
    *) usage "unknown argument '$1'" ;;
  esac
  shift
done
for number in "$timeout" "${boot_limits[@]}" "$memory" ${cpus:+"$cpus"}; do
  [[ "$number" =~ ^[1-9][0-9]*$ ]] || usage "'$number' is not a positive whole number"
done
for dir in "${adds[@]}"; do [[ -d "$dir" ]] || usage "--add $dir: not a directory"; done
if ((shell)); then
  (($# == 0)) || usage "--shell takes no command"
elif ((pair)); then
  (($# == 2)) || usage "--pair needs two commands after --, got $#"
else
  (($# >= 1)) || usage "no command after --"
fi
command -v qemu-system-x86_64 >/dev/null || {
  echo "softroce: qemu-system-x86_64 is missing (tools/setup.sh installs qemu-system-x86)" >&2
  exit 125
}
"$here/build_image.sh" || {
  echo "softroce: building the guest image failed" >&2
  exit 125
}

declare -A in_base
while IFS= read -r file; do in_base[$file]=1; done <"$cache/base.files"

work=$(mktemp -d "${TMPDIR:-/tmp}/rft-softroce.XXXXXX")
guests=()
cleanup() {
  local pid
  for pid in "${guests[@]}"; do kill "$pid" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# The job's archive, appended to the base initramfs: /job, the libraries its ELF files need
# that the base lacks (at their host paths), and /job.sh.
make_initrd() {  # OUT COMMAND
  local out=$1 command=$2 job=$work/job-root dir file lib
  rm -rf "$job"
  mkdir -p "$job/job"
  for dir in "${adds[@]}"; do cp -a "$dir/." "$job/job/"; done
  while IFS= read -r -d '' file; do
    is_elf "$file" || continue
    for lib in $(libraries_of "$file"); do
      [[ -n "${in_base[$(guest_path "$lib")]:-}" ]] && continue
      copy_file "$job" "$lib" || return 1
      touch "$job/job/.libraries"
    done
  done < <(find "$job/job" -type f -print0)
  printf '%s\n' "$command" >"$job/job.sh"
  pack_initramfs "$job" "$work/job.cpio" || return 1
  cat "$cache/base.cpio" "$work/job.cpio" >"$out"
}

# The command's output, without the start and exit markers guest_init puts around it; the status
# in $2.
split_output() {  # OUTPUT_FILE STATUS_FILE
  python3 - "$1" "$2" <<'PY'
import re, sys
data = open(sys.argv[1], 'rb').read()
if data.startswith(b'@@rft-softroce-start@@\n'):
    data = data[len(b'@@rft-softroce-start@@\n'):]
found = re.search(rb'\n@@rft-softroce-exit=(\d+)@@\n', data)
if found:
    data = data[:found.start()]
    open(sys.argv[2], 'w').write(found.group(1).decode())
sys.stdout.buffer.write(data)
PY
}

# boot NAME IP NET QEMU_ARGS...: starts a guest in the background (pid in guests[]).
boot() {
  local name=$1 ip=$2 net=$3
  shift 3
  local append="console=ttyS0 loglevel=4 panic=-1 cryptomgr.notests=1"
  append+=" rft.net=$net rft.ip=$ip rft.name=$name"
  ((shell)) && append+=" rft.shell=1"
  local qemu=(qemu-system-x86_64 -accel "tcg,thread=multi" -cpu max -smp "${cpus:-$((pair ? 1 : 2))}"
    -m "$memory" -nodefaults -no-reboot -display none -kernel "$cache/vmlinux"
    -initrd "$work/$name.cpio" -append "$append" "$@")
  if ((shell)); then
    "${qemu[@]}" -serial mon:stdio -serial "file:$work/$name.out"
    return
  fi
  timeout --kill-after=5 "$timeout" "${qemu[@]}" -serial "file:$work/$name.console" \
    -serial "file:$work/$name.out" </dev/null &
  guests+=($!)
}

# finish NAME PID: waits for the guest, prints its output, returns the command's status.
finish() {
  local name=$1 pid=$2 qemu_status status
  wait "$pid"
  qemu_status=$?
  split_output "$work/$name.out" "$work/$name.status"
  if [[ -n "$console" ]]; then
    if ((pair)); then cp "$work/$name.console" "$console.$name"; else cp "$work/$name.console" "$console"; fi
  fi
  if [[ ! -s "$work/$name.status" ]]; then
    if ((qemu_status == 124)); then
      echo "softroce: $name ran out of its ${timeout} s; its console ends:" >&2
    else
      echo "softroce: $name stopped without reporting (qemu status $qemu_status); console:" >&2
    fi
    tail -n 25 "$work/$name.console" >&2
    return $((qemu_status == 124 ? 124 : 125))
  fi
  status=$(cat "$work/$name.status")
  if ((status == 125)); then
    echo "softroce: $name could not set up rxe0; its console ends:" >&2
    tail -n 25 "$work/$name.console" >&2
  fi
  return "$status"
}

if ((shell)); then
  make_initrd "$work/guest1.cpio" "" || exit 125
  boot guest1 192.0.2.1/24 dummy -nic none
  exit $?
fi

# A boot that stalls is retried once. In CI one guest in about a thousand printed nothing at
# all on its console and ran out of its 600 s (2026-11-29): the kernel or qemu had stalled
# before the guest's init said a word, so the job had not started and retrying it repeats
# nothing of the command. Whatever happens after "rxe0 ready" is the command's and is never
# retried.

# came_up NAME PID LIMIT: 0 once NAME's init has marked the job's start on its port (rxe0 is up)
# or the guest has stopped (finish then tells why); 1 when neither happened within LIMIT s.
came_up() {
  local name=$1 pid=$2 deadline=$((SECONDS + $3))
  while ((SECONDS < deadline)); do
    grep -q '^@@rft-softroce-start@@' "$work/$name.out" 2>/dev/null && return 0
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.2
  done
  return 1
}

# stalled NAME ATTEMPT: says that NAME did not come up and stops every guest of this attempt;
# after the last attempt, gives up with 125.
stalled() {
  local name=$1 attempt=$2 pid
  echo "softroce: $name did not bring rxe0 up in ${boot_limits[attempt - 1]} s (boot $attempt);" \
    "its console ends:" >&2
  tail -n 10 "$work/$name.console" >&2
  for pid in "${guests[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${guests[@]}"; do wait "$pid" 2>/dev/null; done
  guests=()
  rm -f "$work"/*.console "$work"/*.out "$work"/*.sock
  if ((attempt == ${#boot_limits[@]})); then
    echo "softroce: giving up after $attempt stalled boots" >&2
    exit 125
  fi
  echo "softroce: booting again (the job had not started)" >&2
}

if ((!pair)); then
  make_initrd "$work/guest1.cpio" "$*" || exit 125
  for attempt in 1 2; do
    boot guest1 192.0.2.1/24 dummy -nic none
    came_up guest1 "${guests[0]}" "${boot_limits[attempt - 1]}" && break
    stalled guest1 "$attempt"
  done
  finish guest1 "${guests[0]}"
  exit $?
fi

# Two guests joined by a datagram link over two unix sockets: no host networking at all, and
# ~5 ms per round trip (qemu's TCP socket link took ~55 ms).
link() {  # OWN OTHER MAC
  echo "-netdev dgram,id=link,local.type=unix,local.path=$work/$1.sock,remote.type=unix,remote.path=$work/$2.sock"
  echo "-device virtio-net-pci,netdev=link,mac=$3"
}
make_initrd "$work/guest1.cpio" "export SOFTROCE_PEER=192.0.2.2; $1" || exit 125
make_initrd "$work/guest2.cpio" "export SOFTROCE_PEER=192.0.2.1; $2" || exit 125
boot_pair() {
  # shellcheck disable=SC2046
  boot guest1 192.0.2.1/24 virtio $(link guest1 guest2 52:54:00:00:00:01)
  # Packets to a socket that does not exist yet are lost: the second guest starts once the
  # first one's socket is there.
  for _ in $(seq 1 100); do
    [[ -S "$work/guest1.sock" ]] && break
    sleep 0.1
  done
  # shellcheck disable=SC2046
  boot guest2 192.0.2.2/24 virtio $(link guest2 guest1 52:54:00:00:00:02)
}
# Either guest stalling boots both again: the other's job would wait for its peer.
for attempt in 1 2; do
  boot_pair
  came_up guest1 "${guests[0]}" "${boot_limits[attempt - 1]}" || { stalled guest1 "$attempt"; continue; }
  came_up guest2 "${guests[1]}" "${boot_limits[attempt - 1]}" && break
  stalled guest2 "$attempt"
done
echo "=== guest1 (192.0.2.1)"
finish guest1 "${guests[0]}"
status1=$?
echo "=== guest2 (192.0.2.2)"
finish guest2 "${guests[1]}"
status2=$?
((status1 != 0)) && exit "$status1"
exit "$status2"
