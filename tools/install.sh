#!/usr/bin/env bash
# Installs rft: bin/rftrun, bin/rft_info, lib/librft.so, include/rft/{rft.h,rft.hpp,...},
# lib/pkgconfig/rft.pc; and the MPI layer: bin/{mpicc,mpicxx,mpiexec,mpirun}, include/mpi.h
# (and mpi-ext.h), lib/libmpi.so.12 (also as libmpich.so.12), lib/pkgconfig/rft-mpi.pc.
#
#   bazel run //:install -- --prefix=DIR
#
# A relative DIR is taken from the directory bazel was started in. Applications then build
# with `pkg-config --cflags --libs rft` (PKG_CONFIG_PATH=DIR/lib/pkgconfig).
set -euo pipefail

usage() { echo "usage: install --prefix=DIR" >&2; exit 2; }
prefix=""
while (($#)); do
  case "$1" in
    --prefix=*) prefix="${1#--prefix=}" ;;
    --prefix) shift; (($#)) || usage; prefix="$1" ;;
    *) echo "install: unknown argument \"$1\"" >&2; usage ;;
  esac
  shift
done
[[ -n "$prefix" ]] || { echo "install: missing --prefix=DIR" >&2; usage; }
if [[ "$prefix" != /* ]]; then
  prefix="${BUILD_WORKING_DIRECTORY:-$PWD}/$prefix"
fi

# Inputs live in the runfiles tree of this script.
runfiles="${RUNFILES_DIR:-$0.runfiles}/rft"
[[ -d "$runfiles" ]] || runfiles="$(cd "$(dirname "$0")" && pwd)"
[[ -f "$runfiles/librft.so" ]] || { echo "install: cannot find the built files in $runfiles" >&2; exit 1; }

version=$(sed -n 's/^#define RFT_VERSION_STRING "\(.*\)"/\1/p' "$runfiles/base/version.h")
mkdir -p "$prefix/bin" "$prefix/lib/pkgconfig" "$prefix/include/rft"
# Not install(1): this script is itself named "install" in bazel's runfiles and PATH may find it.
copy() {  # MODE SOURCE DEST_FILE
  rm -f "$3"
  cp -L "$2" "$3"
  chmod "$1" "$3"
}
copy 755 "$runfiles/tools/rftrun/rftrun" "$prefix/bin/rftrun"
copy 755 "$runfiles/tools/rft_info/rft_info" "$prefix/bin/rft_info"
copy 755 "$runfiles/librft.so" "$prefix/lib/librft.so"
# The public interface only: rft.h (C), rft.hpp (C++17) and the error classes they include, at
# the paths they include each other by; <rft.h> and <rft.hpp> forward to them.
rm -rf "$prefix/include/rft"
mkdir -p "$prefix/include/rft/ulfm_api" "$prefix/include/rft/base"
for header in ulfm_api/rft.h ulfm_api/rft.hpp base/error.h base/version.h; do
  copy 644 "$runfiles/$header" "$prefix/include/rft/$header"
done
for name in rft.h rft.hpp; do
  printf '/* rft %s: forwards to the installed header. */\n#include "ulfm_api/%s"\n' \
    "$version" "$name" > "$prefix/include/rft/$name"
  chmod 644 "$prefix/include/rft/$name"
done
sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|${version:-0}|" "$runfiles/tools/rft.pc.in" \
  > "$prefix/lib/pkgconfig/rft.pc"
# The MPI layer (docs/mpi.md): mpicc/mpicxx and mpiexec/mpirun find PREFIX from where they are;
# <mpi.h> at PREFIX/include; libmpi.so.12, with the names the MPICH family's programs and
# builds look for as links to it; pkg-config rft-mpi.
sdk="$runfiles/ulfm_api/mpi/sdk"
for tool in mpicc mpicxx mpiexec mpirun; do
  copy 755 "$sdk/bin/$tool" "$prefix/bin/$tool"
done
for header in mpi.h mpi-ext.h mpi_functions.h mpi_refused.h; do
  copy 644 "$sdk/include/$header" "$prefix/include/$header"
done
copy 755 "$sdk/lib/libmpi.so.12" "$prefix/lib/libmpi.so.12"
for name in libmpi.so libmpich.so.12 libmpich.so; do
  ln -sf libmpi.so.12 "$prefix/lib/$name"
done
# The SDK's file finds its prefix from its own place; an installed one names it.
sed "s|^prefix=.*|prefix=$prefix|" "$sdk/lib/pkgconfig/rft-mpi.pc" > "$prefix/lib/pkgconfig/rft-mpi.pc"
echo "installed rft ${version} in $prefix"
