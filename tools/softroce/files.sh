# shellcheck shell=bash
# Copying host files into a guest's root tree (sourced by build_image.sh and softroce.sh).

# The multiarch library directory of this host, e.g. /usr/lib/x86_64-linux-gnu.
softroce_libdir() { echo "/usr/lib/$(uname -m)-linux-gnu"; }

# Where copy_file puts PATH: under its directory's real path.
guest_path() { echo "$(readlink -f "$(dirname "$1")")/$(basename "$1")"; }

# copy_file ROOT PATH: PATH into ROOT under its directory's real path (so /lib/x.so lands in
# /usr/lib on a usr-merged host and never replaces the guest's /lib link), keeping a symbolic
# link as a link and copying what it points to as well.
copy_file() {
  local root=$1 path=$2
  [[ -e "$path" ]] || {
    echo "softroce: $path does not exist" >&2
    return 1
  }
  local dir target
  dir=$(readlink -f "$(dirname "$path")")
  target=$root$(guest_path "$path")
  [[ -e "$target" || -L "$target" ]] && return 0
  mkdir -p "$root$dir"
  if [[ -L "$path" ]]; then
    local link
    link=$(readlink "$path")
    ln -s "$link" "$target"
    if [[ "$link" == /* ]]; then copy_file "$root" "$link"; else copy_file "$root" "$dir/$link"; fi
  else
    cp -p "$path" "$target"
  fi
}

# The shared libraries the host's loader would map for ELF file PATH.
libraries_of() {
  ldd "$1" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'
}

# copy_with_libraries ROOT PATH...: each PATH and the shared libraries it needs.
copy_with_libraries() {
  local root=$1 path lib
  shift
  for path in "$@"; do
    copy_file "$root" "$path" || return 1
    for lib in $(libraries_of "$path"); do copy_file "$root" "$lib" || return 1; done
  done
}

is_elf() { [[ -f "$1" && "$(head -c 4 "$1" | od -An -c | tr -d ' ')" == '177ELF' ]]; }

# pack_initramfs DIR OUT: DIR as an uncompressed newc archive, every file owned by root.
# Uncompressed: unpacking gzip under TCG costs more than reading the larger file.
pack_initramfs() {
  (cd "$1" && find . -mindepth 1 | LC_ALL=C sort | busybox cpio -o -H newc -R 0:0 2>/dev/null) >"$2"
}
