/* Example: a 2-D process grid that revokes a column communicator when a row collective fails
 * (rft.h, C99).
 *
 *   rftrun -n 6 --ft grid --rows 2 [--iterations T] [--victim V --die-at K]
 *
 * The processes form a grid of R rows (rank = row * columns + column), with a communicator per
 * row and one per column (rft_comm_split). Every iteration sums a value over the row, then over
 * the column. When a process fails, the collectives that include it return RFT_ERR_PROC_FAILED,
 * but only there: the other members of a failed process's row are still expected in their
 * columns, where everyone else would wait for them. So a process whose row (or column)
 * operation fails revokes its other communicator: its column (or row) learns at once
 * (RFT_ERR_REVOKED) and does the same with its own other communicator. Every survivor stops,
 * knowing why, none waits forever: in the iteration of the failure, or in the one before it when
 * a revoke interrupts a collective whose last message had not yet arrived. (Rebuilding the grid
 * without the dead process needs shrink, which comes with agreement.) With --victim V --die-at
 * K, process V ends itself (SIGKILL) at the start of iteration K. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ulfm_api/rft.h"

static int g_rank;

static void Die(const char* what, int rc) {
  fprintf(stderr, "grid: rank %d: %s: %s (%s)\n", g_rank, what, rft_error_name(rc),
          rft_last_error_message());
  exit(1);
}

/* A collective's failure: tell the other communicator, and say why this process stops. */
static void Stop(int iteration, const char* where, int rc, rft_comm_t other) {
  rft_comm_revoke(other);
  printf("grid: rank %d stopped at iteration %d: %s on its %s communicator\n", g_rank, iteration,
         rft_error_name(rc), where);
}

int main(int argc, char** argv) {
  int rows = 2, iterations = 100, victim = -1, die_at = -1;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--rows") == 0 && i + 1 < argc) {
      rows = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--victim") == 0 && i + 1 < argc) {
      victim = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--die-at") == 0 && i + 1 < argc) {
      die_at = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: grid [--rows R] [--iterations T] [--victim V --die-at K]\n");
      return 2;
    }
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  int provided, size;
  int rc = rft_init(&argc, &argv, RFT_FT_NOTIFY, &provided);
  if (rc != RFT_SUCCESS) Die("init", rc);
  rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN);
  rft_comm_rank(RFT_COMM_WORLD, &g_rank);
  rft_comm_size(RFT_COMM_WORLD, &size);
  if (rows < 1 || size % rows != 0) {
    fprintf(stderr, "grid: --rows %d: expected a divisor of the %d processes\n", rows, size);
    rft_finalize();
    return 2;
  }
  const int columns = size / rows, row = g_rank / columns, column = g_rank % columns;
  rft_comm_t row_comm, column_comm;
  if ((rc = rft_comm_split(RFT_COMM_WORLD, row, column, &row_comm)) != RFT_SUCCESS) {
    Die("split into rows", rc);
  }
  if ((rc = rft_comm_split(RFT_COMM_WORLD, column, row, &column_comm)) != RFT_SUCCESS) {
    Die("split into columns", rc);
  }
  long total = 0;
  int t = 0;
  for (; t < iterations; ++t) {
    if (g_rank == victim && t == die_at) raise(SIGKILL);
    long value = g_rank + t, row_sum = 0, sum = 0;
    rc = rft_allreduce(&value, &row_sum, 1, RFT_LONG, RFT_SUM, row_comm);
    if (rc != RFT_SUCCESS) {
      Stop(t, "row", rc, column_comm);
      break;
    }
    rc = rft_allreduce(&row_sum, &sum, 1, RFT_LONG, RFT_SUM, column_comm);
    if (rc != RFT_SUCCESS) {
      Stop(t, "column", rc, row_comm);
      break;
    }
    total += sum;
  }
  if (t == iterations) {
    printf("grid: rank %d (row %d, column %d) finished %d iterations, total %ld\n", g_rank, row,
           column, iterations, total);
  }
  rft_comm_free(&row_comm);
  rft_comm_free(&column_comm);
  rft_finalize();
  return 0;
}
