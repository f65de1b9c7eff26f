/* Example: after failures, every survivor learns the same, complete set of failed processes
 * (rft.h, C99).
 *
 *   rftrun -n 5 --ft all_failures [--victims V1,V2,...] [--busy SECONDS]
 *
 * What one process knows of failures is its own: the detector tells each survivor at its own
 * pace, and rft_comm_get_failed may list one victim here and two there. A program that must act
 * on "who is gone" (reassign their data, log them, restart them) needs the same answer
 * everywhere. rft_comm_shrink gives it: its new communicator holds the members outside the failed
 * set it agreed on, the same at every survivor, so the group difference between the old
 * communicator's group and the new one's is that set, identical everywhere. Each survivor prints
 * it, translated to world ranks and sorted, on a line that has no rank in it: the lines are equal.
 *
 * The victims (--victims) end themselves (SIGKILL) right after a barrier of the whole world, so
 * every one of them has arrived there and the failure set is known in advance. The survivors then
 * meet at a second barrier, which fails; whoever saw a failure revokes the world (no survivor
 * stays in a collective the victims will never join), all agree on the outcome, and shrink. With
 * --busy S the processes first do allreduce rounds for S seconds, so a launcher's kill
 * (rftrun --kill) lands in them at an instant the program does not know; a failed round revokes
 * the world too, and the set is whatever the shrink agrees on, still the same everywhere. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ulfm_api/rft.h"

enum { kMaxProcesses = 4096 };

static int g_rank; /* in the world */

static void Die(const char* what, int rc) {
  fprintf(stderr, "all_failures: rank %d: %s: %s (%s)\n", g_rank, what, rft_error_name(rc),
          rft_last_error_message());
  exit(1);
}

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Allreduce rounds until every member's clock has passed `seconds`: each round carries the
 * maximum of "my time is up", so all members leave in the same round. 0 when a round fails. */
static int Work(double seconds) {
  const double end = Now() + seconds;
  for (;;) {
    int done = Now() >= end, all_done = 0;
    if (rft_allreduce(&done, &all_done, 1, RFT_INT, RFT_MAX, RFT_COMM_WORLD) != RFT_SUCCESS) {
      return 0;
    }
    if (all_done) return 1;
  }
}

static int Ascending(const void* a, const void* b) {
  const int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

int main(int argc, char** argv) {
  static char is_victim[kMaxProcesses];
  double busy = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--victims") == 0 && i + 1 < argc) {
      for (char* p = argv[++i]; *p != '\0';) {
        const long v = strtol(p, &p, 10);
        if (v >= 0 && v < kMaxProcesses) is_victim[v] = 1;
        if (*p == ',')
          ++p;
        else if (*p != '\0')
          return 2;
      }
    } else if (strcmp(argv[i], "--busy") == 0 && i + 1 < argc) {
      busy = atof(argv[++i]);
    } else {
      fprintf(stderr, "usage: all_failures [--victims V1,V2,...] [--busy SECONDS]\n");
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

  int ok = busy > 0 ? Work(busy) : 1;
  /* The agreed point: past this barrier every process has arrived; the victims leave. */
  if (ok) ok = rft_barrier(RFT_COMM_WORLD) == RFT_SUCCESS;
  if (is_victim[g_rank]) raise(SIGKILL);
  if (ok) ok = rft_barrier(RFT_COMM_WORLD) == RFT_SUCCESS;
  if (!ok) rft_comm_revoke(RFT_COMM_WORLD);
  /* What this process knows by itself, for contrast: possibly not every victim yet. */
  rft_group_t known = RFT_GROUP_NULL;
  int known_here = 0;
  rft_comm_get_failed(RFT_COMM_WORLD, &known);
  rft_group_size(known, &known_here);
  rft_group_free(&known);
  const int agreed = rft_comm_agree(RFT_COMM_WORLD, &ok);
  if (agreed != RFT_SUCCESS && agreed != RFT_ERR_PROC_FAILED) Die("agree", agreed);
  rft_comm_t survivors = RFT_COMM_NULL;
  if ((rc = rft_comm_shrink(RFT_COMM_WORLD, &survivors)) != RFT_SUCCESS) Die("shrink", rc);
  rft_comm_set_errhandler(survivors, RFT_ERRORS_RETURN);

  /* The failed set: world's group minus the survivors', in world ranks, sorted. The difference
   * keeps the order of world's group; translating and sorting make the line independent of it. */
  rft_group_t world = RFT_GROUP_NULL, alive = RFT_GROUP_NULL, failed = RFT_GROUP_NULL;
  rft_comm_group(RFT_COMM_WORLD, &world);
  rft_comm_group(survivors, &alive);
  if ((rc = rft_group_difference(world, alive, &failed)) != RFT_SUCCESS) Die("difference", rc);
  int nfailed = 0, ranks[kMaxProcesses], world_ranks[kMaxProcesses];
  rft_group_size(failed, &nfailed);
  for (int r = 0; r < nfailed; ++r) ranks[r] = r;
  rc = rft_group_translate_ranks(failed, nfailed, ranks, world, world_ranks);
  if (rc != RFT_SUCCESS) Die("translate ranks", rc);
  qsort(world_ranks, (size_t)nfailed, sizeof(int), Ascending);
  char line[16 * kMaxProcesses] = "all_failures: failed:";
  size_t used = strlen(line);
  for (int r = 0; r < nfailed; ++r) {
    used += (size_t)snprintf(line + used, sizeof(line) - used, " %d", world_ranks[r]);
  }
  if (nfailed == 0) snprintf(line + used, sizeof(line) - used, " none");
  printf("%s\n", line);
  rft_group_free(&failed);
  rft_group_free(&alive);
  rft_group_free(&world);

  /* The survivors' communicator works: every member adds its world rank. */
  long mine = g_rank, sum = -1, expected = 0;
  for (int r = 0, f = 0; r < world_size; ++r) {
    if (f < nfailed && world_ranks[f] == r) {
      ++f;
    } else {
      expected += r;
    }
  }
  rc = rft_allreduce(&mine, &sum, 1, RFT_LONG, RFT_SUM, survivors);
  if (rc != RFT_SUCCESS) Die("allreduce over the survivors", rc);
  int size = 0;
  rft_comm_size(survivors, &size);
  const int right = sum == expected && size == world_size - nfailed;
  printf(
      "all_failures: rank %d %s: %d of %d processes survive, sum %ld (expected %ld); %d failure(s) "
      "known here before the agreement\n",
      g_rank, right ? "ok" : "WRONG", size, world_size, sum, expected, known_here);
  rft_comm_free(&survivors);
  rft_finalize();
  return right ? 0 : 3;
}
