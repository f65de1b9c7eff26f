/* Example: an iterative computation that revokes, agrees, shrinks and goes on with fewer
 * processes (rft.h, C99).
 *
 *   rftrun -n 4 --ft solver [--iterations T] [--victim V --die-at K]
 *
 * Iteration i adds the values f(k) of its chunk of T * kChunk indices to a running total that
 * every process holds: the chunk is dealt round-robin over the communicator's members, and one
 * allreduce sums their parts. The total is replicated, so a process that dies loses nothing but
 * its part of the current iteration. After each allreduce the members agree (rft_comm_agree) on
 * whether it succeeded everywhere: a member whose allreduce failed revokes the communicator
 * (nobody stays blocked in it) and votes 0. With a 1 everywhere, every survivor adds the sum
 * (uniform agreement: all of them, or none); otherwise nobody does, and the survivors shrink the
 * communicator and redo the iteration among themselves. A failure the agreement reports
 * (RFT_ERR_PROC_FAILED) is acknowledged and shrunk away too. Each survivor prints its total and
 * the exact one; they match however the failure falls (--victim V --die-at K: process V ends
 * itself at the start of iteration K; or rftrun --kill at any instant). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ulfm_api/rft.h"

enum { kChunk = 64 };

static int64_t F(int64_t k) { return (k * k) % 1000003 + 1; }

static void Die(int rank, const char* what, int rc) {
  fprintf(stderr, "solver: rank %d: %s: %s (%s)\n", rank, what, rft_error_name(rc),
          rft_last_error_message());
  exit(1);
}

int main(int argc, char** argv) {
  long iterations = 2000, victim = -1, die_at = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--iterations") == 0) {
      iterations = atol(argv[i + 1]);
    } else if (strcmp(argv[i], "--victim") == 0) {
      victim = atol(argv[i + 1]);
    } else if (strcmp(argv[i], "--die-at") == 0) {
      die_at = atol(argv[i + 1]);
    } else {
      fprintf(stderr, "usage: solver [--iterations T] [--victim V --die-at K]\n");
      return 2;
    }
  }
  int provided = 0, world_rank = 0, world_size = 0;
  int rc = rft_init(&argc, &argv, RFT_FT_NOTIFY, &provided);
  if (rc != RFT_SUCCESS) Die(-1, "init", rc);
  rft_comm_rank(RFT_COMM_WORLD, &world_rank);
  rft_comm_size(RFT_COMM_WORLD, &world_size);
  rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN);

  rft_comm_t comm = RFT_COMM_WORLD; /* the live members; world until the first shrink */
  int64_t total = 0;
  int shrinks = 0;
  for (long i = 0; i < iterations;) {
    if (world_rank == victim && i == die_at) raise(SIGKILL);
    int rank = 0, size = 0;
    rft_comm_rank(comm, &rank);
    rft_comm_size(comm, &size);
    int64_t part = 0, sum = 0;
    for (int64_t k = i * kChunk + rank; k < (i + 1) * kChunk; k += size) part += F(k);
    rc = rft_allreduce(&part, &sum, 1, RFT_INT64, RFT_SUM, comm);
    int ok = rc == RFT_SUCCESS;
    if (!ok) rft_comm_revoke(comm); /* whoever still waits in this communicator gets out */
    const int agreed = rft_comm_agree(comm, &ok);
    if (agreed != RFT_SUCCESS && agreed != RFT_ERR_PROC_FAILED) Die(world_rank, "agree", agreed);
    if (ok) {
      total += sum; /* every survivor, or none */
      ++i;
    }
    if (!ok || agreed == RFT_ERR_PROC_FAILED) {
      rft_comm_t survivors = RFT_COMM_NULL;
      rc = rft_comm_shrink(comm, &survivors);
      if (rc != RFT_SUCCESS) Die(world_rank, "shrink", rc);
      if (comm != RFT_COMM_WORLD) rft_comm_free(&comm);
      comm = survivors;
      rft_comm_set_errhandler(comm, RFT_ERRORS_RETURN);
      ++shrinks;
    }
  }
  int64_t exact = 0;
  for (int64_t k = 0; k < iterations * kChunk; ++k) exact += F(k);
  int size = 0;
  rft_comm_size(comm, &size);
  printf("solver: rank %d: total %lld (exact %lld) with %d of %d processes after %d shrink(s)\n",
         world_rank, (long long)total, (long long)exact, size, world_size, shrinks);
  if (comm != RFT_COMM_WORLD) rft_comm_free(&comm);
  rft_finalize();
  return total == exact ? 0 : 3;
}
