/* Example: a 2-D grid's row and column communicators created together and validated by one
 * agreement (rft.h, C99).
 *
 *   rftrun -n 6 --ft row_column [--victim V]
 *
 * The processes of the parent communicator (the world at first) are laid out in rows of width
 * w = ceil(sqrt(n)), rank = row * w + column, the last row ragged when w does not divide n: a
 * layout for any number of processes, so the grid can be rebuilt over whoever survives. Each
 * process splits the parent twice, into its row and into its column, and then all of the
 * parent's members agree (rft_comm_agree) once on "both of my splits succeeded". One agreement
 * covers both because a grid with a good row but a bad column is of no use either. With a 1 and
 * no failure every process keeps its two communicators; otherwise every process discards both
 * (those that did succeed too: they may contain the dead process, or a peer may lack its own),
 * shrinks the parent to the survivors, lays the grid out again over them and splits again.
 * Then each process sums its members' world ranks over its row and over its column and prints
 * both sums beside the ones it computes from the parent's members. With --victim V, world rank V
 * ends itself (SIGKILL) right before creating its communicators. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ulfm_api/rft.h"

enum { kMaxProcesses = 4096 };

static int g_rank; /* in the world */

static void Die(const char* what, int rc) {
  fprintf(stderr, "row_column: rank %d: %s: %s (%s)\n", g_rank, what, rft_error_name(rc),
          rft_last_error_message());
  exit(1);
}

/* The width of the rows for n processes: the smallest w with w * w >= n, so the grid is about
 * square and only the last row is short. */
static int Width(int n) {
  int w = 1;
  while (w * w < n) ++w;
  return w;
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

/* Sums the world ranks over `comm`; `what` names it in the error. */
static long SumOfWorldRanks(rft_comm_t comm, const char* what) {
  long mine = g_rank, sum = -1;
  int rc = rft_allreduce(&mine, &sum, 1, RFT_LONG, RFT_SUM, comm);
  if (rc != RFT_SUCCESS) Die(what, rc);
  return sum;
}

int main(int argc, char** argv) {
  int victim = -1;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--victim") == 0 && i + 1 < argc) {
      victim = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: row_column [--victim V]\n");
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

  rft_comm_t parent = RFT_COMM_WORLD, row_comm = RFT_COMM_NULL, column_comm = RFT_COMM_NULL;
  int rank = 0, size = 0, width = 1, shrinks = 0;
  for (;;) {
    rft_comm_rank(parent, &rank);
    rft_comm_size(parent, &size);
    width = Width(size);
    if (g_rank == victim && shrinks == 0) raise(SIGKILL);
    row_comm = column_comm = RFT_COMM_NULL;
    /* Both splits are made whatever the first returned: every member calls the same
     * collectives, so a peer whose row split succeeded is not left alone in its column split. */
    const int row_rc = rft_comm_split(parent, rank / width, rank % width, &row_comm);
    const int column_rc = rft_comm_split(parent, rank % width, rank / width, &column_comm);
    int ok = row_rc == RFT_SUCCESS && column_rc == RFT_SUCCESS;
    const int agreed = rft_comm_agree(parent, &ok);
    if (agreed != RFT_SUCCESS && agreed != RFT_ERR_PROC_FAILED) Die("agree", agreed);
    if (ok && agreed == RFT_SUCCESS) break;
    if (row_comm != RFT_COMM_NULL) rft_comm_free(&row_comm);
    if (column_comm != RFT_COMM_NULL) rft_comm_free(&column_comm);
    rft_comm_t survivors = RFT_COMM_NULL;
    if ((rc = rft_comm_shrink(parent, &survivors)) != RFT_SUCCESS) Die("shrink", rc);
    if (parent != RFT_COMM_WORLD) rft_comm_free(&parent);
    parent = survivors;
    rft_comm_set_errhandler(parent, RFT_ERRORS_RETURN);
    ++shrinks;
  }

  /* The expected sums, from the parent's members and the layout alone. */
  int world_ranks[kMaxProcesses];
  WorldRanks(parent, world_ranks);
  const int row = rank / width, column = rank % width;
  long expected_row = 0, expected_column = 0;
  for (int r = 0; r < size; ++r) {
    if (r / width == row) expected_row += world_ranks[r];
    if (r % width == column) expected_column += world_ranks[r];
  }
  const long row_sum = SumOfWorldRanks(row_comm, "allreduce over the row");
  const long column_sum = SumOfWorldRanks(column_comm, "allreduce over the column");
  const int right = row_sum == expected_row && column_sum == expected_column;
  printf(
      "row_column: rank %d %s: %d processes in rows of %d, row %d sum %ld (expected %ld), "
      "column %d sum %ld (expected %ld), after %d shrink(s)\n",
      g_rank, right ? "ok" : "WRONG", size, width, row, row_sum, expected_row, column, column_sum,
      expected_column, shrinks);
  rft_comm_free(&row_comm);
  rft_comm_free(&column_comm);
  if (parent != RFT_COMM_WORLD) rft_comm_free(&parent);
  rft_finalize();
  return right ? 0 : 3;
}
