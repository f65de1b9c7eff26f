/* The seed's MPIX_Comm_split_safe in MPI form (examples/safe_split.c is its rft.h twin, and
 * prints the same lines): a split made safe by an agreement.
 *
 *   mpiexec -n 4 --with-ft ulfm safe_split [--victim V]
 *
 * A split is collective, and when a member fails it may succeed at some members and fail at
 * others. So the parent's members agree (MPIX_Comm_agree) on "my split succeeded"; on anything
 * but a uniform success every process frees what it got, acknowledges the failures, shrinks the
 * parent and splits again. Each half then sums its members' world ranks. With --victim V, world
 * rank V ends itself (SIGKILL) just before its first split. Builds with any MPI with ULFM. */
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
  fprintf(stderr, "safe_split: rank %d: %s: %s\n", world_rank, what, text);
  exit(1);
}

/* MPIX_Comm_split_safe: MPI_Comm_split whose outcome is the same at every survivor of `parent`:
 * MPI_SUCCESS with a communicator everywhere, or an error class everywhere (and no
 * communicator). */
static int split_safe(MPI_Comm parent, int color, int key, MPI_Comm* half) {
  *half = MPI_COMM_NULL;
  const int rc = MPI_Comm_split(parent, color, key, half);
  int ok = rc == MPI_SUCCESS;
  const int agreed = MPIX_Comm_agree(parent, &ok);
  int agreed_class = agreed;
  if (agreed != MPI_SUCCESS) MPI_Error_class(agreed, &agreed_class);
  if (agreed_class != MPI_SUCCESS && agreed_class != MPIX_ERR_PROC_FAILED) die("agree", agreed);
  /* PROC_FAILED with a 1: every split succeeded, but a member failed that not everyone had
   * acknowledged, so it may sit in one of the halves: they are not trusted either. */
  if (ok && agreed_class == MPI_SUCCESS) return MPI_SUCCESS;
  if (*half != MPI_COMM_NULL) MPI_Comm_free(half);
  return MPIX_ERR_PROC_FAILED;
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
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int world_size;
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &world_size);
  if (world_size > kMaxProcesses) die("too many processes", MPI_ERR_ARG);

  MPI_Comm parent = MPI_COMM_WORLD, half = MPI_COMM_NULL;
  int rank = 0, shrinks = 0, rc;
  for (;;) {
    MPI_Comm_rank(parent, &rank);
    if (world_rank == victim && shrinks == 0) raise(SIGKILL);
    if (split_safe(parent, rank % 2, rank, &half) == MPI_SUCCESS) break;
    MPIX_Comm_failure_ack(parent);
    MPI_Comm survivors = MPI_COMM_NULL;
    if ((rc = MPIX_Comm_shrink(parent, &survivors)) != MPI_SUCCESS) die("shrink", rc);
    if (parent != MPI_COMM_WORLD) MPI_Comm_free(&parent);
    parent = survivors;
    MPI_Comm_set_errhandler(parent, MPI_ERRORS_RETURN);
    ++shrinks;
  }

  /* The expected sum, from the parent alone: its members of this process's color. */
  MPI_Group group, world;
  static int ranks[kMaxProcesses], world_ranks[kMaxProcesses];
  int parent_size = 0;
  MPI_Comm_group(parent, &group);
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_size(group, &parent_size);
  for (int r = 0; r < parent_size; ++r) ranks[r] = r;
  MPI_Group_translate_ranks(group, parent_size, ranks, world, world_ranks);
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  long expected = 0;
  int expected_members = 0;
  for (int r = rank % 2; r < parent_size; r += 2) {
    expected += world_ranks[r];
    ++expected_members;
  }
  long mine = world_rank, sum = -1;
  if ((rc = MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, half)) != MPI_SUCCESS) {
    die("allreduce over the half", rc);
  }
  int members = 0;
  MPI_Comm_size(half, &members);
  const int right = sum == expected && members == expected_members;
  printf(
      "safe_split: rank %d %s: color %d, %d members, sum %ld (expected %ld), %d of %d processes "
      "after %d shrink(s)\n",
      world_rank, right ? "ok" : "WRONG", rank % 2, members, sum, expected, parent_size, world_size,
      shrinks);
  MPI_Comm_free(&half);
  if (parent != MPI_COMM_WORLD) MPI_Comm_free(&parent);
  MPI_Finalize();
  return right ? 0 : 3;
}
