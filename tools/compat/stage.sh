#!/usr/bin/env bash
# Copies the binaries tools/compat/run.sh needs out of a Bazel output tree into a staging
# folder, at once: later builds overwrite bazel-bin, and a compatibility run must test one
# consistent set. The layout under the staging folder is bazel-bin's (tools/rftrun/rftrun,
# examples/detect_failure, tests/multiproc/*_worker, bench/rft_bench_p2p).
#
#   bash tools/compat/stage.sh STAGING_DIR [BAZEL_BIN]     (BAZEL_BIN defaults to ./bazel-bin)
set -euo pipefail
cd "$(dirname "$0")/../.."
dest=${1:?usage: stage.sh STAGING_DIR [BAZEL_BIN]}
src=${2:-bazel-bin}
required=(tools/rftrun/rftrun examples/detect_failure tests/multiproc/dataplane_worker
  tests/multiproc/detector_worker tests/multiproc/ucx_mesh_worker tests/multiproc/bootstrap_worker)
optional=(bench/rft_bench_p2p)  # only scenario d needs it; it is skipped loudly when absent

mkdir -p "$dest"
for f in "${required[@]}" "${optional[@]}"; do
  if [[ ! -x "$src/$f" ]]; then
    for r in "${required[@]}"; do
      if [[ $r == "$f" ]]; then
        echo "stage: $src/$f is missing" >&2
        exit 1
      fi
    done
    echo "stage: $src/$f is missing (optional)" >&2
    continue
  fi
  mkdir -p "$dest/$(dirname "$f")"
  # -L: bazel-bin is a symlink into the output base; copy the files, not the links.
  cp -L --preserve=mode,timestamps "$src/$f" "$dest/$f"
done
# The binaries link rft statically; what they load at run time must come from the system
# (checked again inside the root by run.sh).
missing=$(ldd "$dest"/tools/rftrun/rftrun "$dest"/examples/detect_failure "$dest"/tests/multiproc/* \
  2>/dev/null | grep 'not found' | sort -u || true)
if [[ -n $missing ]]; then
  echo "stage: unresolved libraries on this machine:" >&2
  echo "$missing" >&2
fi
# Checksums, so a report can say exactly which binaries it ran (the list itself left out).
sums=$(cd "$dest" && find . -type f ! -name SHA256SUMS -print0 | sort -z | xargs -0 sha256sum)
echo "$sums" >"$dest/SHA256SUMS"
echo "stage: $(find "$dest" -type f ! -name SHA256SUMS | wc -l) binaries in $dest"
