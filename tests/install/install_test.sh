#!/usr/bin/env bash
# Installs rft into a scratch prefix, builds a consumer with pkg-config as a make/CMake user
# would, and runs it under the installed rftrun.
set -euo pipefail

runfiles="${TEST_SRCDIR:?}"
prefix="${TEST_TMPDIR:?}/prefix"
work="${TEST_TMPDIR}/consumer"
mkdir -p "$work"

RUNFILES_DIR="$runfiles" bash "$runfiles/rft/install" --prefix="$prefix"
for f in bin/rftrun bin/rft_info lib/librft.so lib/pkgconfig/rft.pc include/rft/base/status.h \
         include/rft/transport/bootstrap/bootstrap.h; do
  [[ -e "$prefix/$f" ]] || { echo "FAIL: $f was not installed"; exit 1; }
done

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[[ "$(pkg-config --modversion rft)" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "FAIL: rft.pc version"; exit 1; }

cat > "$work/consumer.cc" <<'CC'
#include <cstdio>
#include "base/error.h"
#include "transport/bootstrap/bootstrap.h"
int main() {
  auto job = rft::transport::Bootstrap::Init();
  if (!job.ok()) { std::printf("init: %s\n", job.status().ToString().c_str()); return 1; }
  const char blob[] = "addr";
  auto all = (*job)->Exchange("consumer.addr", std::as_bytes(std::span(blob)));
  if (!all.ok() || all->size() != (*job)->size()) return 1;
  std::printf("consumer %u of %u ok (%s)\n", (*job)->rank(), (*job)->size(),
              rft_error_name(RFT_ERR_PROC_FAILED));
  return 0;
}
CC
# A sanitizer build of librft.so needs its consumers built with the same sanitizer.
sanitize=()
symbols=$(nm -D "$prefix/lib/librft.so")
grep -q "__asan_init" <<<"$symbols" && sanitize+=(-fsanitize=address)
grep -q "__tsan_init" <<<"$symbols" && sanitize+=(-fsanitize=thread)
grep -q "__ubsan_handle_" <<<"$symbols" && sanitize+=(-fsanitize=undefined)
# shellcheck disable=SC2046
g++ -Wall -Wextra -Werror "${sanitize[@]}" "$work/consumer.cc" -o "$work/consumer" \
  $(pkg-config --cflags --libs rft)

out=$("$prefix/bin/rftrun" -n 2 --timeout 30 "$work/consumer" 2>&1) || { echo "FAIL: job: $out"; exit 1; }
echo "$out"
[[ $(grep -c "consumer . of 2 ok (RFT_ERR_PROC_FAILED)" <<<"$out") -eq 2 ]] || { echo "FAIL: output"; exit 1; }

info=$("$prefix/bin/rft_info" 2>&1) || { echo "FAIL: rft_info: $info"; exit 1; }
grep -q "RFT_PMIX_TIMEOUT" <<<"$info" || { echo "FAIL: rft_info lacks the settings"; exit 1; }
echo "PASS"
