/* Recovery by replacement through the public API (rft_comm_replace, rft_comm_get_parent), under
 * rftrun --ft -n 4. Every step waits on the program's own protocol, never on a timer:
 * 1. A barrier; every other process tells rank 2 it left it, and rank 2 then kills itself. The
 *    survivors' next barrier fails (PROC_FAILED): each knows of the failure before it spawns.
 * 2. The survivors call rft_comm_replace on COMM_WORLD with this program and "replacement --die":
 *    that replacement kills itself before rft_init, so the spawn fails with RFT_ERR_PROC_FAILED
 *    at every survivor (promptly: nobody waits for what it never publishes). They spawn again
 *    with "replacement".
 * 3. The replacement finds the merged communicator with rft_comm_get_parent; every member
 *    checks its rank and size, and an allreduce over the merged communicator sums the ranks.
 * 4. Passing no program is refused at every member (RFT_ERR_ARG), and a spawn without failures
 *    starts nothing (a dup of the merged communicator).
 * A violation prints "FAILED: ..." and exits 3. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "tests/multiproc/c_worker_checks.h"

static int Sum(rft_comm_t comm, int value) {
  int sum = -1;
  CHECK_OK(rft_allreduce(&value, &sum, 1, RFT_INT, RFT_SUM, comm));
  return sum;
}

/* Steps 3 and 4 at every member of the merged communicator. */
static void UseMerged(rft_comm_t merged, const char* program, const char* who) {
  int rank = -1, size = -1;
  CHECK_OK(rft_comm_rank(merged, &rank));
  CHECK_OK(rft_comm_size(merged, &size));
  CHECK(size == 4, "merged size %d", size);
  const int sum = Sum(merged, rank);
  CHECK(sum == 0 + 1 + 2 + 3, "the merged ranks sum to %d", sum);
  printf("%s has rank %d of %d, sum %d\n", who, rank, size, sum);
  fflush(stdout);

  const char* none[] = {NULL};
  rft_comm_t refused = RFT_COMM_NULL;
  CHECK_CODE(
      rft_comm_replace(merged, rank == 1 ? none : (const char* const[]){program, NULL}, &refused),
      RFT_ERR_ARG);
  CHECK(refused == RFT_COMM_NULL, "a refused spawn gave a communicator");

  rft_comm_t again = RFT_COMM_NULL;
  const char* args[] = {program, "replacement", NULL};
  CHECK_OK(rft_comm_replace(merged, args, &again));
  int again_rank = -1;
  CHECK_OK(rft_comm_rank(again, &again_rank));
  CHECK(again_rank == rank, "rank %d after a spawn without failures, was %d", again_rank, rank);
  CHECK(Sum(again, 1) == 4, "a spawn without failures changed the members");
  CHECK_OK(rft_comm_free(&again));
}

int main(int argc, char** argv) {
  if (argc > 2 && strcmp(argv[2], "--die") == 0) raise(SIGKILL); /* a replacement dying at birth */
  CHECK_OK(rft_init(&argc, &argv, RFT_FT_NOTIFY, NULL));
  rft_comm_t parent = RFT_COMM_NULL;
  CHECK_OK(rft_comm_get_parent(&parent));
  if (argc > 1 && strcmp(argv[1], "replacement") == 0) {
    CHECK(parent != RFT_COMM_NULL, "a replacement without a parent communicator");
    CHECK_OK(rft_comm_set_errhandler(parent, RFT_ERRORS_RETURN));
    int world_size = -1;
    CHECK_OK(rft_comm_size(RFT_COMM_WORLD, &world_size));
    CHECK(world_size == 1, "a replacement's COMM_WORLD has %d processes", world_size);
    UseMerged(parent, argv[0], "replacement");
    CHECK_OK(rft_comm_free(&parent));
    CHECK_OK(rft_comm_get_parent(&parent));
    CHECK(parent == RFT_COMM_NULL, "the parent communicator is still there after its free");
    CHECK_OK(rft_finalize());
    return 0;
  }
  CHECK(parent == RFT_COMM_NULL, "an original process has a parent communicator");
  CHECK_OK(rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN));
  int rank = -1;
  CHECK_OK(rft_comm_rank(RFT_COMM_WORLD, &rank));
  CHECK_OK(rft_barrier(RFT_COMM_WORLD));
  /* The agreed point: the victim dies once every other process told it that it left the
   * barrier (a process still in it could otherwise miss the victim's last message). */
  int size = -1;
  CHECK_OK(rft_comm_size(RFT_COMM_WORLD, &size));
  if (rank == 2) {
    for (int i = 0; i < size - 1; ++i) {
      int left = -1;
      CHECK_OK(rft_recv(&left, 1, RFT_INT, RFT_ANY_SOURCE, 5, RFT_COMM_WORLD, RFT_STATUS_IGNORE));
    }
    raise(SIGKILL);
  }
  CHECK_OK(rft_send(&rank, 1, RFT_INT, 2, 5, RFT_COMM_WORLD));
  CHECK_CODE(rft_barrier(RFT_COMM_WORLD), RFT_ERR_PROC_FAILED);

  rft_comm_t merged = RFT_COMM_NULL;
  const char* dying[] = {argv[0], "replacement", "--die", NULL};
  CHECK_CODE(rft_comm_replace(RFT_COMM_WORLD, dying, &merged), RFT_ERR_PROC_FAILED);
  CHECK(merged == RFT_COMM_NULL, "a failed spawn gave a communicator");
  printf("survivor %d: the spawn whose replacement died failed\n", rank);
  const char* args[] = {argv[0], "replacement", NULL};
  CHECK_OK(rft_comm_replace(RFT_COMM_WORLD, args, &merged));
  CHECK_OK(rft_comm_set_errhandler(merged, RFT_ERRORS_RETURN));
  int merged_rank = -1;
  CHECK_OK(rft_comm_rank(merged, &merged_rank));
  CHECK(merged_rank == rank, "rank %d in the merged communicator, was %d", merged_rank, rank);
  char who[32];
  snprintf(who, sizeof(who), "survivor %d", rank);
  UseMerged(merged, argv[0], who);
  CHECK_OK(rft_comm_free(&merged));
  CHECK_OK(rft_finalize());
  return 0;
}
