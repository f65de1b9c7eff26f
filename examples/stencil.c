/* Example: a 1-D stencil that routes around a dead neighbour, without revoke (rft.h, C99).
 *
 *   rftrun -n 5 --ft stencil [--iterations T] [--victim V --die-at K]
 *
 * Each process owns a block of a 1-D rod and, every iteration, trades its edge cells with its
 * left and right neighbours (tag = iteration), then averages each cell with its two neighbours.
 * When a trade fails with RFT_ERR_PROC_FAILED, the neighbour is dead: the process asks which
 * processes failed (rft_comm_get_failed), takes the next live process in that direction as its
 * neighbour, and trades again for the same iteration. The dead block is lost (the rod has a
 * hole), the others go on: no collective, no revoke. With --victim V --die-at K, process V ends
 * itself (SIGKILL) at the start of iteration K, a fault at a known point of the protocol. Each
 * survivor prints its final neighbours and the heat left in its block. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ulfm_api/rft.h"

enum { kCells = 64 };

static int g_rank, g_size;
static char* g_dead; /* [rank]: known failed */

static void Die(const char* what, int rc) {
  fprintf(stderr, "stencil: rank %d: %s: %s (%s)\n", g_rank, what, rft_error_name(rc),
          rft_last_error_message());
  exit(1);
}

/* The nearest live process from `rank` in `step` direction (-1 or +1); -1 at the rod's end. */
static int NextLive(int rank, int step) {
  for (int r = rank + step; r >= 0 && r < g_size; r += step) {
    if (!g_dead[r]) return r;
  }
  return -1;
}

static void LearnFailures(void) {
  rft_group_t failed, world;
  int rc = rft_comm_get_failed(RFT_COMM_WORLD, &failed);
  if (rc != RFT_SUCCESS) Die("get_failed", rc);
  rft_comm_group(RFT_COMM_WORLD, &world);
  int count = 0;
  rft_group_size(failed, &count);
  for (int i = 0; i < count; ++i) {
    int rank = -1;
    rft_group_translate_ranks(failed, 1, &i, world, &rank);
    if (rank >= 0) g_dead[rank] = 1;
  }
  rft_group_free(&failed);
  rft_group_free(&world);
}

/* Trades `edge` for the neighbour's edge (into `halo`), rerouting past dead neighbours. Returns
 * the neighbour finally traded with (-1: none; the halo is then a fixed 0). */
static int Trade(int* neighbour, int step, double edge, double* halo, int iteration) {
  for (;;) {
    if (*neighbour < 0) {
      *halo = 0.0;
      return -1;
    }
    const int rc = rft_sendrecv(&edge, 1, RFT_DOUBLE, *neighbour, iteration, halo, 1, RFT_DOUBLE,
                                *neighbour, iteration, RFT_COMM_WORLD, RFT_STATUS_IGNORE);
    if (rc == RFT_SUCCESS) return *neighbour;
    if (rc != RFT_ERR_PROC_FAILED) Die("trade", rc);
    LearnFailures();
    const int was = *neighbour;
    *neighbour = NextLive(g_rank, step);
    printf("stencil: rank %d: neighbour %d failed at iteration %d; now trading with %d\n", g_rank,
           was, iteration, *neighbour);
  }
}

int main(int argc, char** argv) {
  int iterations = 200, victim = -1, die_at = -1;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--iterations") == 0 && i + 1 < argc) {
      iterations = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--victim") == 0 && i + 1 < argc) {
      victim = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--die-at") == 0 && i + 1 < argc) {
      die_at = atoi(argv[++i]);
    } else {
      fprintf(stderr, "usage: stencil [--iterations T] [--victim V --die-at K]\n");
      return 2;
    }
  }
  if (iterations < 1) {
    fprintf(stderr, "stencil: --iterations %d: expected at least 1\n", iterations);
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  int provided;
  int rc = rft_init(&argc, &argv, RFT_FT_NOTIFY, &provided);
  if (rc != RFT_SUCCESS) Die("init", rc);
  rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN);
  rft_comm_rank(RFT_COMM_WORLD, &g_rank);
  rft_comm_size(RFT_COMM_WORLD, &g_size);
  g_dead = calloc((size_t)g_size, 1);
  double u[kCells + 2], next[kCells + 2];
  for (int i = 1; i <= kCells; ++i) u[i] = (g_rank * kCells + i) % 7 == 0 ? 100.0 : 0.0;
  int left = g_rank - 1, right = g_rank + 1 < g_size ? g_rank + 1 : -1;
  for (int t = 0; t < iterations; ++t) {
    if (g_rank == victim && t == die_at) raise(SIGKILL);
    Trade(&left, -1, u[1], &u[0], t);
    Trade(&right, +1, u[kCells], &u[kCells + 1], t);
    for (int i = 1; i <= kCells; ++i) next[i] = (u[i - 1] + u[i] + u[i + 1]) / 3.0;
    memcpy(&u[1], &next[1], kCells * sizeof(double));
  }
  double heat = 0;
  for (int i = 1; i <= kCells; ++i) heat += u[i];
  printf("stencil: rank %d done %d iterations, left %d right %d, heat %.3f\n", g_rank, iterations,
         left, right, heat);
  free(g_dead);
  rft_finalize();
  return 0;
}
