/* The seed's MPIX_Comm_failures_allget in MPI form (examples/all_failures.c is its rft.h twin,
 * and prints the same lines): after failures, every survivor learns the same set of failed
 * processes.
 *
 *   mpiexec -n 5 --with-ft ulfm all_failures [--victims V1,V2,...] [--busy SECONDS]
 *
 * What one process knows of failures is its own. MPIX_Comm_shrink gives the same answer
 * everywhere: its communicator holds the members outside the failed set it agreed on, so the
 * group difference between the old communicator's group and the new one's is that set. The
 * victims end themselves (SIGKILL) right after a barrier of the whole world; the survivors meet
 * at a second barrier, which fails; whoever saw a failure revokes, all agree on the outcome,
 * and shrink. With --busy S they first do allreduce rounds for S seconds, so a launcher's kill
 * (mpiexec --kill) lands in them at an instant the program does not know. */
#include <mpi.h>
#if defined(OPEN_MPI) || defined(RFT_MPI)
#include <mpi-ext.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxProcesses = 4096 };

static int world_rank;

static void die(const char* what, int rc) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(rc, text, &length);
  fprintf(stderr, "all_failures: rank %d: %s: %s\n", world_rank, what, text);
  exit(1);
}

/* Allreduce rounds until every member's clock has passed `seconds`: each round carries the
 * maximum of "my time is up", so all members leave in the same round. 0 when a round fails. */
static int work(double seconds) {
  const double end = MPI_Wtime() + seconds;
  for (;;) {
    int done = MPI_Wtime() >= end, all_done = 0;
    if (MPI_Allreduce(&done, &all_done, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD) != MPI_SUCCESS) {
      return 0;
    }
    if (all_done) return 1;
  }
}

static int ascending(const void* a, const void* b) {
  const int x = *(const int*)a, y = *(const int*)b;
  return (x > y) - (x < y);
}

/* MPIX_Comm_failures_allget: the failed members of `comm` that every survivor agrees on, as a
 * group of `comm`'s (and the survivors' communicator, which the caller frees). */
static int failures_allget(MPI_Comm comm, MPI_Group* failed, MPI_Comm* survivors) {
  int rc = MPIX_Comm_shrink(comm, survivors);
  if (rc != MPI_SUCCESS) return rc;
  MPI_Group all, alive;
  MPI_Comm_group(comm, &all);
  MPI_Comm_group(*survivors, &alive);
  rc = MPI_Group_difference(all, alive, failed);
  MPI_Group_free(&all);
  MPI_Group_free(&alive);
  return rc;
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
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int world_size, rc;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size > kMaxProcesses) die("too many processes", MPI_ERR_ARG);

  int ok = busy > 0 ? work(busy) : 1;
  /* The agreed point: past this barrier every process has arrived; the victims leave. */
  if (ok) ok = MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS;
  if (is_victim[world_rank]) raise(SIGKILL);
  if (ok) ok = MPI_Barrier(MPI_COMM_WORLD) == MPI_SUCCESS;
  if (!ok) MPIX_Comm_revoke(MPI_COMM_WORLD);
  /* What this process knows by itself, for contrast: possibly not every victim yet. */
  MPI_Group known;
  int known_here = 0;
  MPIX_Comm_failure_ack(MPI_COMM_WORLD);
  MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &known);
  MPI_Group_size(known, &known_here);
  MPI_Group_free(&known);
  MPIX_Comm_agree(MPI_COMM_WORLD, &ok);
  MPI_Group failed;
  MPI_Comm survivors;
  if ((rc = failures_allget(MPI_COMM_WORLD, &failed, &survivors)) != MPI_SUCCESS) {
    die("failures_allget", rc);
  }
  MPI_Comm_set_errhandler(survivors, MPI_ERRORS_RETURN);

  /* The failed set in world ranks, sorted, on a line with no rank in it: equal everywhere. */
  MPI_Group world;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  int nfailed = 0;
  static int ranks[kMaxProcesses], world_ranks[kMaxProcesses];
  MPI_Group_size(failed, &nfailed);
  for (int r = 0; r < nfailed; ++r) ranks[r] = r;
  MPI_Group_translate_ranks(failed, nfailed, ranks, world, world_ranks);
  qsort(world_ranks, (size_t)nfailed, sizeof(int), ascending);
  static char line[16 * kMaxProcesses] = "all_failures: failed:";
  size_t used = strlen(line);
  for (int r = 0; r < nfailed; ++r) {
    used += (size_t)snprintf(line + used, sizeof(line) - used, " %d", world_ranks[r]);
  }
  if (nfailed == 0) snprintf(line + used, sizeof(line) - used, " none");
  printf("%s\n", line);
  MPI_Group_free(&failed);
  MPI_Group_free(&world);

  long mine = world_rank, sum = -1, expected = 0;
  for (int r = 0, f = 0; r < world_size; ++r) {
    if (f < nfailed && world_ranks[f] == r) {
      ++f;
    } else {
      expected += r;
    }
  }
  if ((rc = MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, survivors)) != MPI_SUCCESS) {
    die("allreduce over the survivors", rc);
  }
  int size = 0;
  MPI_Comm_size(survivors, &size);
  const int right = sum == expected && size == world_size - nfailed;
  printf(
      "all_failures: rank %d %s: %d of %d processes survive, sum %ld (expected %ld); %d failure(s) "
      "known here before the agreement\n",
      world_rank, right ? "ok" : "WRONG", size, world_size, sum, expected, known_here);
  MPI_Comm_free(&survivors);
  MPI_Finalize();
  return right ? 0 : 3;
}
