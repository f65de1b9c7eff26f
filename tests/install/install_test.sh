#!/usr/bin/env bash
# Installs rft into a scratch prefix, builds a C99 and a C++17 consumer with pkg-config as a
# make/CMake user would, and runs both under the installed rftrun.
set -euo pipefail

runfiles="${TEST_SRCDIR:?}"
prefix="${TEST_TMPDIR:?}/prefix"
work="${TEST_TMPDIR}/consumer"
mkdir -p "$work"

RUNFILES_DIR="$runfiles" bash "$runfiles/rft/install" --prefix="$prefix"
for f in bin/rftrun bin/rft_info lib/librft.so lib/pkgconfig/rft.pc include/rft/rft.h \
         include/rft/rft.hpp include/rft/ulfm_api/rft.h include/rft/base/error.h; do
  [[ -e "$prefix/$f" ]] || { echo "FAIL: $f was not installed"; exit 1; }
done
# Only the public interface: no internal header is installed.
[[ ! -e "$prefix/include/rft/base/status.h" && ! -d "$prefix/include/rft/transport" ]] \
  || { echo "FAIL: internal headers were installed"; exit 1; }

export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
[[ "$(pkg-config --modversion rft)" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "FAIL: rft.pc version"; exit 1; }
if pkg-config --cflags rft | grep -q -- "-std="; then
  echo "FAIL: rft.pc imposes a language standard: $(pkg-config --cflags rft)"; exit 1
fi

# A C99 program, built with gcc as a C user would.
cat > "$work/consumer.c" <<'C'
#include <stdio.h>
#include <rft.h>
int main(int argc, char** argv) {
  int provided, rank, size;
  if (rft_init(&argc, &argv, RFT_FT_NOTIFY, &provided) != RFT_SUCCESS) return 1;
  rft_comm_rank(RFT_COMM_WORLD, &rank);
  rft_comm_size(RFT_COMM_WORLD, &size);
  long sum = 0, one = 1;
  if (rft_allreduce(&one, &sum, 1, RFT_LONG, RFT_SUM, RFT_COMM_WORLD) != RFT_SUCCESS) return 1;
  printf("c consumer %d of %d ok (sum %ld, %s)\n", rank, size, sum,
         rft_error_name(RFT_ERR_PROC_FAILED));
  return rft_finalize();
}
C
# A C++17 program over rft.hpp.
cat > "$work/consumer.cc" <<'CC'
#include <cstdio>
#include <rft.hpp>
int main() {
  rft::Environment env;
  rft::Comm world = rft::Comm::World();
  int token = world.Rank();
  world.Bcast(&token, 1, 0);
  try {
    world.Send(&token, 1, world.Size(), 0);  // no such rank
  } catch (const rft::Error& e) {
    if (e.code() == RFT_ERR_ARG) std::printf("c++17 consumer %d ok (token %d)\n", world.Rank(), token);
  }
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
gcc -std=c99 -Wall -Wextra -Werror "${sanitize[@]}" "$work/consumer.c" -o "$work/consumer_c" \
  $(pkg-config --cflags --libs rft)
# shellcheck disable=SC2046
g++ -std=c++17 -Wall -Wextra -Werror "${sanitize[@]}" "$work/consumer.cc" -o "$work/consumer_cc" \
  $(pkg-config --cflags --libs rft)

out=$("$prefix/bin/rftrun" -n 2 --timeout 30 "$work/consumer_c" 2>&1) || { echo "FAIL: C job: $out"; exit 1; }
echo "$out"
[[ $(grep -c "c consumer . of 2 ok (sum 2, RFT_ERR_PROC_FAILED)" <<<"$out") -eq 2 ]] || { echo "FAIL: C output"; exit 1; }
out=$("$prefix/bin/rftrun" -n 2 --timeout 30 "$work/consumer_cc" 2>&1) || { echo "FAIL: C++ job: $out"; exit 1; }
echo "$out"
[[ $(grep -c "c++17 consumer . ok (token 0)" <<<"$out") -eq 2 ]] || { echo "FAIL: C++ output"; exit 1; }

# The MPI layer, installed: a program built by the installed mpicc runs under the installed
# mpiexec, and pkg-config rft-mpi names the same library.
cat > "$work/mpi_consumer.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char** argv) {
  int rank, size, sum = 0, one = 1;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  printf("mpi consumer %d of %d ok (sum %d)\n", rank, size, sum);
  return MPI_Finalize();
}
C
"$prefix/bin/mpicc" -std=c99 -Wall -Wextra -Werror "${sanitize[@]}" "$work/mpi_consumer.c" \
  -o "$work/mpi_consumer"
[[ "$(pkg-config --libs rft-mpi)" == *"-L$prefix/lib"*"-lmpi"* ]] ||
  { echo "FAIL: rft-mpi.pc: $(pkg-config --libs rft-mpi)"; exit 1; }
out=$("$prefix/bin/mpiexec" -n 2 --timeout 30 "$work/mpi_consumer" 2>&1) || { echo "FAIL: MPI job: $out"; exit 1; }
echo "$out"
[[ $(grep -c "mpi consumer . of 2 ok (sum 2)" <<<"$out") -eq 2 ]] || { echo "FAIL: MPI output"; exit 1; }

info=$("$prefix/bin/rft_info" 2>&1) || { echo "FAIL: rft_info: $info"; exit 1; }
grep -q "RFT_PMIX_TIMEOUT" <<<"$info" || { echo "FAIL: rft_info lacks the settings"; exit 1; }
echo "PASS"
