/* Example: the check-in scheme (rft.h, C99): a guarded agreement before each collective phase.
 *
 *   rftrun -n 4 --ft checkin [--phases P] [--budget S] [--stuck R:K] [--error R:K] [--abort R:K]
 *
 * Before phase k, every member checks in: rft_comm_agree_deadline with 20% of the time budget
 * left (rft_agree_default_deadline) and its flag "no error here". A member that does not check
 * in by then — stuck in a loop (--stuck R:K: world rank R never returns from phase K's work) —
 * is cut off: declared failed and killed, and the others learn who (the cut-off group), shrink
 * and go on. A member that found an error (--error R:K) checks in with flag 0: every member
 * learns it from the same agreement and they stop together, cleanly (exit status 3, every rank
 * says why). That is the clean stop; --abort R:K shows the brutal one, rft_abort, which kills the
 * whole job at once and nobody says anything.
 *
 * The phase itself is the solver's (examples/solver.c): a chunk of indices dealt over the members,
 * one allreduce, and an agreement on whether it succeeded everywhere, so the total is exact
 * however the failures fall (the launcher's --kill included). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ulfm_api/rft.h"

enum { kChunk = 64 };

static int64_t F(int64_t k) { return (k * 7 + 3) % 1000 + 1; }

static double Now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void Die(int rank, const char* what, int rc) {
  fprintf(stderr, "checkin: rank %d: %s: %s (%s)\n", rank, what, rft_error_name(rc),
          rft_last_error_message());
  exit(1);
}

/* "R:K" into *rank and *phase. */
static int ParsePair(const char* text, long* rank, long* phase) {
  return sscanf(text, "%ld:%ld", rank, phase) == 2 ? 0 : -1;
}

/* The world ranks of `group`, space-separated, into `out`. */
static void WorldRanks(rft_group_t group, char* out, size_t size) {
  rft_group_t world = RFT_GROUP_NULL;
  rft_comm_group(RFT_COMM_WORLD, &world);
  int n = 0;
  rft_group_size(group, &n);
  out[0] = '\0';
  for (int i = 0; i < n; ++i) {
    int mine = i, theirs = -1;
    rft_group_translate_ranks(group, 1, &mine, world, &theirs);
    size_t used = strlen(out);
    snprintf(out + used, size - used, "%s%d", i == 0 ? "" : " ", theirs);
  }
  rft_group_free(&world);
}

static void Shrink(rft_comm_t* comm, int world_rank) {
  rft_comm_t survivors = RFT_COMM_NULL;
  int rc = rft_comm_shrink(*comm, &survivors);
  if (rc != RFT_SUCCESS) Die(world_rank, "shrink", rc);
  if (*comm != RFT_COMM_WORLD) rft_comm_free(comm);
  *comm = survivors;
  rft_comm_set_errhandler(*comm, RFT_ERRORS_RETURN);
}

int main(int argc, char** argv) {
  long phases = 20, stuck_rank = -1, stuck_at = -1, error_rank = -1, error_at = -1;
  long abort_rank = -1, abort_at = -1;
  double budget = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    int bad = 0;
    if (strcmp(argv[i], "--phases") == 0) {
      phases = atol(argv[i + 1]);
    } else if (strcmp(argv[i], "--budget") == 0) {
      budget = atof(argv[i + 1]);
    } else if (strcmp(argv[i], "--stuck") == 0) {
      bad = ParsePair(argv[i + 1], &stuck_rank, &stuck_at);
    } else if (strcmp(argv[i], "--error") == 0) {
      bad = ParsePair(argv[i + 1], &error_rank, &error_at);
    } else if (strcmp(argv[i], "--abort") == 0) {
      bad = ParsePair(argv[i + 1], &abort_rank, &abort_at);
    } else {
      bad = 1;
    }
    if (bad) {
      fprintf(stderr,
              "usage: checkin [--phases P] [--budget S] [--stuck R:K] [--error R:K] "
              "[--abort R:K]\n");
      return 2;
    }
  }
  int provided = 0, world_rank = 0, world_size = 0;
  int rc = rft_init(&argc, &argv, RFT_FT_NOTIFY, &provided);
  if (rc != RFT_SUCCESS) Die(-1, "init", rc);
  rft_comm_rank(RFT_COMM_WORLD, &world_rank);
  rft_comm_size(RFT_COMM_WORLD, &world_size);
  rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN);

  const double end = Now() + budget;
  rft_comm_t comm = RFT_COMM_WORLD;
  int64_t total = 0;
  int cut_offs = 0;
  for (long k = 0; k < phases;) {
    if (world_rank == stuck_rank && k == stuck_at) {
      for (;;) { /* a bug: this rank never finishes its work (asleep, to spare the core) */
        struct timespec pause = {0, 10 * 1000 * 1000};
        nanosleep(&pause, NULL);
      }
    }
    if (world_rank == abort_rank && k == abort_at) rft_abort(RFT_COMM_WORLD, 4);
    /* Check in: "no error here", within the phase's share of the time left. */
    int no_error = !(world_rank == error_rank && k == error_at);
    const double deadline = rft_agree_default_deadline(end - Now());
    rft_group_t cut = RFT_GROUP_NULL;
    rc = rft_comm_agree_deadline(comm, &no_error, deadline > 0.05 ? deadline : 0.05, &cut);
    if (rc != RFT_SUCCESS && rc != RFT_ERR_PROC_FAILED) Die(world_rank, "check-in", rc);
    if (rc == RFT_ERR_PROC_FAILED) {
      char ranks[256];
      WorldRanks(cut, ranks, sizeof ranks);
      printf("checkin: rank %d: phase %ld: cut off or failed: %s\n", world_rank, k, ranks);
      ++cut_offs;
      rft_comm_failure_ack(comm);
      Shrink(&comm, world_rank);
    }
    if (cut != RFT_GROUP_NULL) rft_group_free(&cut);
    if (!no_error) {
      /* The clean stop: every member got the same 0 from the same agreement. */
      printf("checkin: rank %d: clean stop before phase %ld: a rank reported an error\n",
             world_rank, k);
      if (comm != RFT_COMM_WORLD) rft_comm_free(&comm);
      rft_finalize();
      return 3;
    }
    /* The phase: one allreduce, agreed to have succeeded everywhere (examples/solver.c). */
    int rank = 0, size = 0;
    rft_comm_rank(comm, &rank);
    rft_comm_size(comm, &size);
    int64_t part = 0, sum = 0;
    for (int64_t i = k * kChunk + rank; i < (k + 1) * kChunk; i += size) part += F(i);
    int ok = rft_allreduce(&part, &sum, 1, RFT_INT64, RFT_SUM, comm) == RFT_SUCCESS;
    if (!ok) rft_comm_revoke(comm);
    const int agreed = rft_comm_agree(comm, &ok);
    if (agreed != RFT_SUCCESS && agreed != RFT_ERR_PROC_FAILED) Die(world_rank, "agree", agreed);
    if (ok) {
      total += sum;
      ++k;
    }
    if (!ok || agreed == RFT_ERR_PROC_FAILED) {
      rft_comm_failure_ack(comm);
      Shrink(&comm, world_rank);
    }
  }
  int64_t exact = 0;
  for (int64_t i = 0; i < phases * kChunk; ++i) exact += F(i);
  int size = 0;
  rft_comm_size(comm, &size);
  printf("checkin: rank %d: total %lld (exact %lld) with %d of %d processes, %d cut-off round(s)\n",
         world_rank, (long long)total, (long long)exact, size, world_size, cut_offs);
  if (comm != RFT_COMM_WORLD) rft_comm_free(&comm);
  rft_finalize();
  return total == exact ? 0 : 3;
}
