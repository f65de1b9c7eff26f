#!/usr/bin/env bash
# The binary interface of rft's MPI layer: the MPI test programs compiled now by rft's mpicc and
# by Debian's mpicc.mpich (MPICH 4.0.2's header and libmpich.so.12), each run unmodified under
# rft's mpiexec on rft's library; the loader must resolve MPICH's soname to rft's file. Then a
# CMake project finds rft's MPI with find_package(MPI), and mpicc -show names what it links.
# Prints one line per check and exits non-zero if any failed.
set -uo pipefail
runfiles=${TEST_SRCDIR:-$PWD}/${TEST_WORKSPACE:-rft}
sdk=$runfiles/ulfm_api/mpi/sdk
# The tools find their prefix from where their file really is (runfiles are links to it).
real_sdk=$(dirname "$(dirname "$(readlink -f "$sdk/bin/mpicc")")")
sources=$runfiles/tests/mpi
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/mpi_abi.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
passed=0
pass() { echo "ok: $*"; passed=$((passed + 1)); }
fail() { echo "FAILED: $*"; failed=$((failed + 1)); }

# A sanitizer build of the library needs the programs built with the same sanitizer (as
# tests/install does).
symbols=$(nm -D "$sdk/lib/libmpi.so.12" 2>/dev/null)  # not piped into grep -q: pipefail
sanitize=()
grep -q "__asan_init" <<<"$symbols" && sanitize+=(-fsanitize=address)
grep -q "__tsan_init" <<<"$symbols" && sanitize+=(-fsanitize=thread)
grep -q "__ubsan_handle_" <<<"$symbols" && sanitize+=(-fsanitize=undefined)

run() {  # NAME EXPECTED_LINES MPIEXEC_ARGS... -- PROGRAM ARGS...
  local name=$1 expected=$2 out
  shift 2
  out=$(timeout 120 "$sdk/bin/mpiexec" --timeout 100 "$@" 2>&1)
  local status=$?
  local good
  good=$(grep -c ": [0-9]* checks, 0 failed" <<<"$out")
  if ((status == 0 && good == expected)) && ! grep -q "CHECK failed" <<<"$out"; then
    pass "$name"
  else
    fail "$name (status $status, $good of $expected ranks passed)"
    tail -n 30 <<<"$out"
  fi
}

compilers=(rft)
if command -v mpicc.mpich >/dev/null; then
  compilers+=(mpich)
else
  fail "mpicc.mpich is missing (tools/setup.sh installs Debian's mpich and libmpich-dev)"
fi
for compiler in "${compilers[@]}"; do
  for program in mpi_basics mpi_coll_derived mpi_ulfm mpi_intercomm mpi_spawn; do
    if [[ $compiler == rft ]]; then
      cc=("$sdk/bin/mpicc")
    else
      cc=(mpicc.mpich)
    fi
    if ! "${cc[@]}" -std=c11 -D_POSIX_C_SOURCE=200809L "${sanitize[@]}" -I"$sources" \
      "$sources/$program.c" \
      -o "$work/$program.$compiler" 2>"$work/cc.log"; then
      fail "$compiler mpicc: $program did not build"
      cat "$work/cc.log"
    fi
  done
  [[ -x "$work/mpi_basics.$compiler" ]] || continue
  run "$compiler-built mpi_basics, 4 ranks" 4 -n 4 "$work/mpi_basics.$compiler"
  run "$compiler-built mpi_coll_derived, 3 ranks" 3 -n 3 "$work/mpi_coll_derived.$compiler"
  run "$compiler-built mpi_ulfm failures, 4 ranks, rank 2 dies" 3 -n 4 --with-ft ulfm \
    "$work/mpi_ulfm.$compiler" failures 2
  run "$compiler-built mpi_ulfm revoke-loop" 3 -n 3 --with-ft ulfm "$work/mpi_ulfm.$compiler" \
    revoke-loop 20
  run "$compiler-built mpi_intercomm, 5 ranks" 5 -n 5 --with-ft ulfm \
    "$work/mpi_intercomm.$compiler"
  run "$compiler-built mpi_spawn, 3 ranks spawn 2, then 1 + 2 (spawn_multiple)" 8 -n 3 \
    "$work/mpi_spawn.$compiler"
done

# The MPICH-built program asks the loader for libmpich.so.12: with mpiexec's loader path it
# must be rft's file, and without it Debian's MPICH (or nothing).
if [[ -x "$work/mpi_basics.mpich" ]]; then
  resolved=$(LD_LIBRARY_PATH=$sdk/lib ldd "$work/mpi_basics.mpich" | awk '/libmpich.so.12/ {print $3}')
  if [[ "$resolved" == "$sdk/lib/libmpich.so.12" ]] && cmp -s "$resolved" "$sdk/lib/libmpi.so.12" &&
    grep -q " T PMPIX_Comm_agree" <<<"$symbols"; then
    pass "libmpich.so.12 resolves to rft's library ($resolved)"
  else
    fail "libmpich.so.12 resolved to '$resolved', not $sdk/lib/libmpich.so.12"
  fi
fi

# PMPI: a profiling layer's MPI_Send wraps rft's PMPI_Send.
cat >"$work/profile.c" <<'PROFILE'
#include <mpi.h>
#include <stdio.h>
static int sends = 0;
int MPI_Send(const void* b, int c, MPI_Datatype t, int d, int g, MPI_Comm m) {
  ++sends;
  return PMPI_Send(b, c, t, d, g, m);
}
int main(int argc, char** argv) {
  int rank, x = 7;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) MPI_Send(&x, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
  if (rank == 1) MPI_Recv(&x, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  printf("profile: rank %d: sends %d x %d\n", rank, sends, x);
  MPI_Finalize();
  return 0;
}
PROFILE
if "$sdk/bin/mpicc" "${sanitize[@]}" "$work/profile.c" -o "$work/profile" &&
  out=$(timeout 60 "$sdk/bin/mpiexec" -n 2 "$work/profile" 2>&1) &&
  grep -q "rank 0: sends 1 x 7" <<<"$out" && grep -q "rank 1: sends 0 x 7" <<<"$out"; then
  pass "PMPI interposition: the program's MPI_Send wraps PMPI_Send"
else
  fail "PMPI interposition"
  echo "${out:-}"
fi

# mpicc's own account of what it adds, as autotools and CMake read it.
show=$("$sdk/bin/mpicc" -show x.c -o x)
if [[ "$show" == *"-I$real_sdk/include"* && "$show" == *"-L$real_sdk/lib"* &&
  "$show" == *"-lmpi"* ]] && [[ "$("$sdk/bin/mpicc" -showme:link)" == *"-lmpi"* ]] &&
  [[ "$("$sdk/bin/mpicc" -showme:compile)" == "-I$real_sdk/include" ]]; then
  pass "mpicc -show, -showme:compile, -showme:link"
else
  fail "mpicc -show printed: $show"
fi

# CMake's FindMPI with rft's mpicc: it must find rft's library and build a program that runs.
if command -v cmake >/dev/null; then
  mkdir -p "$work/cmake"
  cat >"$work/cmake/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.16)
project(rft_mpi_probe C)
find_package(MPI REQUIRED COMPONENTS C)
add_executable(probe probe.c)
target_link_libraries(probe PRIVATE MPI::MPI_C)
CMAKE
  cp "$work/profile.c" "$work/cmake/probe.c"
  if cmake -S "$work/cmake" -B "$work/cmake/build" -DMPI_C_COMPILER="$sdk/bin/mpicc" \
    -DCMAKE_C_FLAGS="${sanitize[*]}" -DCMAKE_EXE_LINKER_FLAGS="${sanitize[*]}" \
    >"$work/cmake.log" 2>&1 && cmake --build "$work/cmake/build" >>"$work/cmake.log" 2>&1 &&
    grep -q "Found MPI_C: $real_sdk/lib/libmpi.so" "$work/cmake.log" &&
    out=$(timeout 60 "$sdk/bin/mpiexec" -n 2 "$work/cmake/build/probe" 2>&1) &&
    grep -q "rank 1: sends 0 x 7" <<<"$out"; then
    pass "CMake find_package(MPI) with MPI_C_COMPILER=rft's mpicc"
  else
    fail "CMake find_package(MPI)"
    tail -n 20 "$work/cmake.log"
  fi
else
  fail "cmake is missing (tools/setup.sh installs it)"
fi

echo "mpi_abi: $passed passed, $failed failed"
((failed == 0))
