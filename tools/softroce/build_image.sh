#!/usr/bin/env bash
# Builds what every soft-RoCE guest boots, into $RFT_SOFTROCE_CACHE (default
# /var/tmp/rft-softroce):
#   vmlinux    Debian's own kernel (the one linux-image-amd64 depends on), unpacked from its
#              package, never installed on the host, as an uncompressed ELF: qemu boots it
#              through its PVH entry and skips the decompression, ~8 s under TCG
#   base.cpio  the initramfs every guest shares: the kernel modules rxe needs, busybox, bash,
#              iproute2's ip and rdma, the verbs user space (rxe provider, ibverbs-utils,
#              perftest), UCX's tools and transports, PMIx's plugins, and guest_init as /init
# Nothing is rebuilt when this script, files.sh and guest_init are unchanged. Needs Debian's
# package lists (apt-get update) for the first build; see docs/softroce.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=files.sh
source "$here/files.sh"
cache=${RFT_SOFTROCE_CACHE:-/var/tmp/rft-softroce}
mkdir -p "$cache"
cd "$cache"

recipe=$(cat "$here/build_image.sh" "$here/files.sh" "$here/guest_init" | sha256sum | cut -c1-16)
if [[ -s vmlinux && -s base.cpio && -s base.files && "$(cat recipe 2>/dev/null)" == "$recipe" ]]; then
  exit 0
fi

# The kernel: Debian bookworm's 6.1 has rdma_rxe as a module.
kernel_package=$(apt-cache depends linux-image-amd64 2>/dev/null |
  awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
[[ -n "$kernel_package" ]] || {
  echo "softroce: no kernel package behind linux-image-amd64 (run apt-get update)" >&2
  exit 1
}
if [[ ! -d "kernel/$kernel_package" ]]; then
  rm -rf download && mkdir download
  (cd download && apt-get download "$kernel_package" >/dev/null)
  mkdir -p "kernel/$kernel_package"
  dpkg -x download/"${kernel_package}"_*.deb "kernel/$kernel_package"
  rm -rf download
fi
tree=$cache/kernel/$kernel_package
release=$(ls "$tree/lib/modules")
modules=$tree/lib/modules/$release
# The package ships no modules.dep.
[[ -s "$modules/modules.dep" ]] || busybox depmod -b "$tree" "$release"
python3 - "$tree/boot/vmlinuz-$release" vmlinux.new <<'PY'
import lzma, sys
image = open(sys.argv[1], 'rb').read()
start = image.find(b'\xfd7zXZ\x00')  # the compressed kernel inside the bzImage
if start < 0:
    sys.exit('softroce: no xz payload in ' + sys.argv[1])
elf = lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(image[start:])
if elf[:4] != b'\x7fELF':
    sys.exit('softroce: the payload of ' + sys.argv[1] + ' is not an ELF file')
open(sys.argv[2], 'wb').write(elf)
PY

root=$cache/root
rm -rf "$root"
mkdir -p "$root"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc,proc,sys,dev,tmp,run,root,job}
for dir in bin sbin lib lib64; do ln -s "usr/$dir" "$root/$dir"; done

# Kernel modules: rxe, the RDMA core and connection managers, the netdevs, and what they need.
wanted="rdma_rxe ib_uverbs ib_core rdma_ucm rdma_cm ib_cm iw_cm ib_umad configfs udp_tunnel
  ip6_udp_tunnel dummy veth virtio_net virtio_pci net_failover failover crc32_generic"
# shellcheck disable=SC2086
python3 - "$modules/modules.dep" $wanted >module_list <<'PY'
import os, sys
dep_file, wanted = sys.argv[1], sys.argv[2:]
needs, path_of = {}, {}
for line in open(dep_file):
    path, _, rest = line.strip().partition(':')
    name = os.path.basename(path).split('.ko')[0].replace('-', '_')
    path_of[name] = path
    needs[path] = rest.split()
todo = []
for name in wanted:
    if name.replace('-', '_') in path_of:
        todo.append(path_of[name.replace('-', '_')])
    else:
        print('softroce: module ' + name + ' is not loadable (built in?)', file=sys.stderr)
closure = set()
while todo:
    path = todo.pop()
    if path not in closure:
        closure.add(path)
        todo.extend(needs[path])
print('\n'.join(sorted(closure)))
PY
while read -r path; do
  mkdir -p "$(dirname "$root/lib/modules/$release/$path")"
  cp "$modules/$path" "$root/lib/modules/$release/$path"
done <module_list
cp "$modules"/modules.{builtin,builtin.modinfo,order} "$root/lib/modules/$release/"
busybox depmod -b "$root" "$release"

# User space. busybox-static gives the applets nothing else provides.
cp "$(command -v busybox)" "$root/usr/bin/busybox"
libdir=$(softroce_libdir)
tools="bash ldconfig ip rdma ibv_devices ibv_devinfo ibv_rc_pingpong ibv_ud_pingpong
  ib_send_lat ib_write_lat ib_read_lat ib_send_bw ib_write_bw ib_read_bw ucx_info ucx_perftest"
for tool in $tools; do
  path=$(PATH=$PATH:/sbin:/usr/sbin command -v "$tool") || {
    echo "softroce: $tool not found on this host (tools/setup.sh installs it)" >&2
    exit 1
  }
  copy_with_libraries "$root" "$path"
done
# Loaded at run time, so ldd does not name them: the rxe verbs provider, UCX's transports, and
# libgcc_s (glibc opens it for thread exit and cancellation).
copy_with_libraries "$root" "$libdir"/libibverbs/librxe-rdmav*.so "$libdir/libgcc_s.so.1"
for module in "$libdir"/ucx/*.so*; do copy_with_libraries "$root" "$module"; done
# PMIx (rftrun and rft's bootstrap) finds its plugins through the component path that
# pmix-mca-params.conf names; without the file and the plugins it still runs, but with no
# compression of large values and no prm (the server's event upcall), unlike on the host. Its
# help texts make its errors readable.
pmix=$libdir/pmix2
for module in "$pmix"/lib/pmix/*.so; do copy_with_libraries "$root" "$module"; done
mkdir -p "$root$pmix/share"
cp -a "$pmix/share/." "$root$pmix/share/"
mkdir -p "$root/etc/libibverbs.d"
cp /etc/libibverbs.d/rxe.driver "$root/etc/libibverbs.d/"  # only rxe: others warn at load
for applet in $(busybox --list); do
  [[ -e "$root/usr/bin/$applet" || -e "$root/usr/sbin/$applet" ]] ||
    ln -s busybox "$root/usr/bin/$applet"
done

printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534::/nonexistent:/bin/false\n' \
  >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
printf '127.0.0.1 localhost\n192.0.2.1 guest1\n192.0.2.2 guest2\n' >"$root/etc/hosts"
printf '%s\n' "$libdir" "/job/lib" >"$root/etc/ld.so.conf"
ldconfig -r "$root"
cp "$here/guest_init" "$root/init"
chmod 755 "$root/init"  # a non-executable /init makes the kernel fall back to busybox's init

# What the base holds, so a job's archive brings only the libraries it lacks.
(cd "$root" && find . ! -type d | cut -c2- | LC_ALL=C sort) >base.files.new
pack_initramfs "$root" base.cpio.new
mv vmlinux.new vmlinux
mv base.files.new base.files
mv base.cpio.new base.cpio
echo "$recipe" >recipe
rm -rf "$root" module_list
echo "softroce: image of $kernel_package ready in $cache ($(du -sh base.cpio | cut -f1) initramfs)" >&2
