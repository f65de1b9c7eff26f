/* Example: a communicator split made safe by an agreement (rft.h, C99).
 *
 *   rftrun -n 4 --ft safe_split [--victim V]
 *
 * Every process splits its parent communicator in two (color = rank % 2). A split is collective,
 * and when a member fails it may fail at some members and succeed at others: a process whose
 * split returned a valid communicator cannot tell whether its peers got theirs. So all of the
 * parent's members then agree (rft_comm_agree) on "my split succeeded". Uniform agreement gives
 * every survivor the same answer: with a 1 and no failure, every split is good and is kept;
 * otherwise every process frees whatever it got (a valid communicator too: it may contain the
 * dead process, or a peer may have none), acknowledges the failures, shrinks the parent to the
 * survivors and splits that again. Then each half sums its members' world ranks with an
 * allreduce, and every process prints the sum beside the one it computes from the parent's
 * members. With --victim V, world rank V ends itself (SIGKILL) just before its first split. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ulfm_api/rft.h"

enum { kMaxProcesses = 4096 };

static int g_rank; /* in the world */

static void Die(const char* what, int rc) {
  fprintf(stderr, "safe_split: rank %d: %s: %s (%s)\n", g_rank, what, rft_error_name(rc),
          rft_last_error_message());
  exit(1);
}

/* The world rank of each member of `comm`, in `comm`'s order; returns the size. */
static int WorldRanks(rft_comm_t comm, int* world_ranks) {
  rft_group_t group = RFT_GROUP_NULL, world = RFT_GROUP_NULL;
  int size = 0, ranks[kMaxProcesses];
  rft_comm_group(comm, &group);
  rft_comm_group(RFT_COMM_WORLD, &world);
  rft_group_size(group, &size);
  for (int r = 0; r < size; ++r) ranks[r] = r;
  int rc = rft_group_translate_ranks(group, size, ranks, world, world_ranks);
  if (rc != RFT_SUCCESS) Die("translate ranks", rc);
  rft_group_free(&group);
  rft_group_free(&world);
  return size;
}

int main(int argc, char** argv) {
  int victim = -1;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--victim") == 0 && i + 1 < argc) {
      victim = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: safe_split [--victim V]\n");
      return 2;
    }
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  int provided, world_size;
  int rc = rft_init(&argc, &argv, RFT_FT_NOTIFY, &provided);
  if (rc != RFT_SUCCESS) Die("init", rc);
  rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN);
  rft_comm_rank(RFT_COMM_WORLD, &g_rank);
  rft_comm_size(RFT_COMM_WORLD, &world_size);
  if (world_size > kMaxProcesses) Die("too many processes", RFT_ERR_ARG);

  rft_comm_t parent = RFT_COMM_WORLD, half = RFT_COMM_NULL;
  int rank = 0, shrinks = 0, acknowledged = 0;
  for (;;) {
    rft_comm_rank(parent, &rank);
    if (g_rank == victim && shrinks == 0) raise(SIGKILL);
    half = RFT_COMM_NULL;
    rc = rft_comm_split(parent, rank % 2, rank, &half);
    int ok = rc == RFT_SUCCESS;
    const int agreed = rft_comm_agree(parent, &ok);
    if (agreed != RFT_SUCCESS && agreed != RFT_ERR_PROC_FAILED) Die("agree", agreed);
    /* PROC_FAILED with a 1: every split succeeded, but a member failed that not everyone had
     * acknowledged, so it may sit in one of the halves: they are not trusted either. */
    if (ok && agreed == RFT_SUCCESS) break;
    if (half != RFT_COMM_NULL) rft_comm_free(&half);
    /* The agreement made every failure of its set known here; acknowledging them says this
     * process has handled them (nothing waits on ANY_SOURCE here, so it is bookkeeping). */
    int size = 0;
    rft_comm_size(parent, &size);
    if ((rc = rft_comm_ack_failed(parent, size, &acknowledged)) != RFT_SUCCESS) Die("ack", rc);
    rft_comm_t survivors = RFT_COMM_NULL;
    if ((rc = rft_comm_shrink(parent, &survivors)) != RFT_SUCCESS) Die("shrink", rc);
    if (parent != RFT_COMM_WORLD) rft_comm_free(&parent);
    parent = survivors;
    rft_comm_set_errhandler(parent, RFT_ERRORS_RETURN);
    ++shrinks;
  }

  /* The expected sum, from the parent alone: its members of this process's color. */
  int world_ranks[kMaxProcesses];
  const int parent_size = WorldRanks(parent, world_ranks);
  long expected = 0;
  int expected_members = 0;
  for (int r = rank % 2; r < parent_size; r += 2) {
    expected += world_ranks[r];
    ++expected_members;
  }
  long mine = g_rank, sum = -1;
  if ((rc = rft_allreduce(&mine, &sum, 1, RFT_LONG, RFT_SUM, half)) != RFT_SUCCESS) {
    Die("allreduce over the half", rc);
  }
  int members = 0;
  rft_comm_size(half, &members);
  const int right = sum == expected && members == expected_members;
  printf(
      "safe_split: rank %d %s: color %d, %d members, sum %ld (expected %ld), %d of %d processes "
      "after %d shrink(s)\n",
      g_rank, right ? "ok" : "WRONG", rank % 2, members, sum, expected, parent_size, world_size,
      shrinks);
  rft_comm_free(&half);
  if (parent != RFT_COMM_WORLD) rft_comm_free(&parent);
  rft_finalize();
  return right ? 0 : 3;
}
