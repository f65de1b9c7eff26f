/* mpi_bench: MPI-level latency, bandwidth, collectives and ULFM operations, from one source that
 * builds with rft's mpicc and with any other MPI's (Open MPI 5, MPICH), so the same program runs
 * on rft and on another MPI in one session (bench/compare_mpi.sh).
 *
 *   mpiexec -n 2 mpi_bench [--iters N] [--reps R] [--json] [--quick]
 *                          [--only pingpong|bandwidth|collectives|ulfm|revoke]
 *
 * Figures (microseconds unless said; each the median over R repetitions of a timed batch of N
 * iterations, the slowest rank's for collectives):
 *   pingpong SIZE      one-way time of a SIZE-byte ping-pong between ranks 0 and 1 (8 B .. 1 MiB)
 *   bandwidth SIZE     MB/s of a window of 64 non-blocking sends from rank 0 to rank 1 and one
 *                      8-byte reply (osu_bw's pattern), 8 B .. 1 MiB (8 B only with --quick)
 *   barrier, allreduce 8 (MPI_DOUBLE, SUM), bcast 8, reduce 8 (MPI_DOUBLE, SUM to rank 0)
 *   dup                MPI_Comm_dup of COMM_WORLD and MPI_Comm_free
 *   agree              MPIX_Comm_agree on COMM_WORLD, nothing failed
 *   iagree             MPIX_Comm_iagree and MPI_Wait at once (ULFM's nonblocking agreement)
 *   shrink             MPIX_Comm_shrink of COMM_WORLD and MPI_Comm_free, nothing failed
 *   ishrink            MPIX_Comm_ishrink, MPI_Wait and MPI_Comm_free
 *   revoke             rank 0 revokes a dup of COMM_WORLD while rank 1 waits in a receive on it;
 *                      time until rank 1's reply (one 8-byte message) reached rank 0
 * Built in rft's tree (RFT_MPI_BENCH_WITH_RFT_H), it also times the same 8-byte ping-pong and
 * allreduce through rft.h in alternating repetitions: "layer" = MPI / rft.h, the MPI layer's cost.
 * --json prints one JSON object per figure; otherwise a table. */
#include <mpi.h>
#if defined(OPEN_MPI) || defined(RFT_MPI)
#include <mpi-ext.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef RFT_MPI_BENCH_WITH_RFT_H
#include "ulfm_api/rft.h"
#endif

static int rank, size, iters = 2000, reps = 9, json = 0;
static const char* mpi_name = "mpi";
static const char* only = NULL; /* --only GROUP: run that group alone */

static int wanted(const char* group) { return only == NULL || strcmp(only, group) == 0; }

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* v, int n) {
  qsort(v, (size_t)n, sizeof(double), compare_doubles);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The slower operations' batch: a twentieth of --iters, at least 10. */
static int slow_iters(void) { return iters / 20 > 10 ? iters / 20 : 10; }

/* The slowest rank's value (collectives), at every rank. */
static double slowest(double mine) {
  double all = mine;
  MPI_Allreduce(&mine, &all, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return all;
}

static void report(const char* name, long size_bytes, double value, const char* unit,
                   double ratio) {
  if (rank != 0) return;
  if (json) {
    printf("{\"bench\":\"%s\",\"mpi\":\"%s\",\"size\":%ld,\"value\":%.4f,\"unit\":\"%s\"", name,
           mpi_name, size_bytes, value, unit);
    if (ratio > 0) printf(",\"layer\":%.4f", ratio);
    printf(",\"ranks\":%d,\"iters\":%d,\"reps\":%d}\n", size, iters, reps);
  } else {
    printf("%-10s %-10s %9ld %12.3f %s", mpi_name, name, size_bytes, value, unit);
    if (ratio > 0) printf("   MPI / rft.h %.3f", ratio);
    printf("\n");
  }
  fflush(stdout);
}

static double pingpong_once(char* buffer, int bytes, int n) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < n; ++i) {
    if (rank == 0) {
      MPI_Send(buffer, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(buffer, bytes, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(buffer, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buffer, bytes, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
  }
  return (MPI_Wtime() - t0) * 1e6 / (2.0 * n);
}

#ifdef RFT_MPI_BENCH_WITH_RFT_H
static double pingpong_rft_once(char* buffer, int bytes, int n) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < n; ++i) {
    if (rank == 0) {
      rft_send(buffer, (size_t)bytes, RFT_BYTE, 1, 1, RFT_COMM_WORLD);
      rft_recv(buffer, (size_t)bytes, RFT_BYTE, 1, 1, RFT_COMM_WORLD, RFT_STATUS_IGNORE);
    } else if (rank == 1) {
      rft_recv(buffer, (size_t)bytes, RFT_BYTE, 0, 1, RFT_COMM_WORLD, RFT_STATUS_IGNORE);
      rft_send(buffer, (size_t)bytes, RFT_BYTE, 0, 1, RFT_COMM_WORLD);
    }
  }
  return (MPI_Wtime() - t0) * 1e6 / (2.0 * n);
}

static double allreduce_rft_once(int n) {
  double x = rank, y = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < n; ++i) rft_allreduce(&x, &y, 1, RFT_DOUBLE, RFT_SUM, RFT_COMM_WORLD);
  return slowest((MPI_Wtime() - t0) * 1e6 / n);
}
#endif

static double allreduce_once(int n) {
  double x = rank, y = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < n; ++i) MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  return slowest((MPI_Wtime() - t0) * 1e6 / n);
}

static void bench_pingpong(int quick) {
  const int max = quick ? 1 << 16 : 1 << 20;
  char* buffer = calloc((size_t)max, 1);
  for (int bytes = 8; bytes <= max; bytes *= 4) {
    const int n = bytes >= (1 << 16) ? slow_iters() : iters;
    double* v = calloc((size_t)reps, sizeof(double));
    double* w = calloc((size_t)reps, sizeof(double));
    double* ratio = calloc((size_t)reps, sizeof(double));
    int layered = 0;
    pingpong_once(buffer, bytes, n / 10 + 1); /* warm-up */
    for (int r = 0; r < reps; ++r) {
#ifdef RFT_MPI_BENCH_WITH_RFT_H
      if (bytes == 8) {
        /* Alternating order, so that neither layer always runs first in a pair. */
        if (r % 2) {
          w[r] = pingpong_rft_once(buffer, bytes, n);
          v[r] = pingpong_once(buffer, bytes, n);
        } else {
          v[r] = pingpong_once(buffer, bytes, n);
          w[r] = pingpong_rft_once(buffer, bytes, n);
        }
        ratio[r] = v[r] / w[r];
        layered = 1;
        continue;
      }
#endif
      v[r] = pingpong_once(buffer, bytes, n);
    }
    report("pingpong", bytes, median(v, reps), "us", layered ? median(ratio, reps) : 0);
    free(v), free(w), free(ratio);
  }
  free(buffer);
}

static void bench_bandwidth(int bytes) {
  enum { kWindow = 64 };
  char* buffer = calloc((size_t)bytes * kWindow, 1);
  char ack = 0;
  MPI_Request requests[kWindow];
  const int n = bytes >= (1 << 16) ? 20 : iters / 10 + 1;
  double* v = calloc((size_t)reps, sizeof(double));
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) {
      if (rank == 0) {
        for (int k = 0; k < kWindow; ++k) {
          MPI_Isend(buffer + (size_t)k * bytes, bytes, MPI_BYTE, 1, 2, MPI_COMM_WORLD,
                    &requests[k]);
        }
        MPI_Waitall(kWindow, requests, MPI_STATUSES_IGNORE);
        MPI_Recv(&ack, 1, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        for (int k = 0; k < kWindow; ++k) {
          MPI_Irecv(buffer + (size_t)k * bytes, bytes, MPI_BYTE, 0, 2, MPI_COMM_WORLD,
                    &requests[k]);
        }
        MPI_Waitall(kWindow, requests, MPI_STATUSES_IGNORE);
        MPI_Send(&ack, 1, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
      }
    }
    const double seconds = MPI_Wtime() - t0;
    v[r] = (double)bytes * kWindow * n / seconds / 1e6;
  }
  report("bandwidth", bytes, median(v, reps), "MB/s", 0);
  free(v), free(buffer);
}

/* Times batches of n calls of `op` after a barrier, once per repetition, and reports the median
 * of the slowest rank's time per call. */
static void time_calls(const char* name, long size_bytes, int n, void (*op)(void)) {
  double* v = calloc((size_t)reps, sizeof(double));
  for (int r = 0; r < reps; ++r) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    for (int i = 0; i < n; ++i) op();
    v[r] = slowest((MPI_Wtime() - t0) * 1e6 / n);
  }
  report(name, size_bytes, median(v, reps), "us", 0);
  free(v);
}

static void barrier_call(void) { MPI_Barrier(MPI_COMM_WORLD); }

static void bcast_call(void) {
  double x = 1;
  MPI_Bcast(&x, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
}

static void reduce_call(void) {
  double x = 1, y = 0;
  MPI_Reduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
}

static void dup_call(void) {
  MPI_Comm dup;
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_free(&dup);
}

static void bench_collectives(void) {
  time_calls("barrier", 0, iters, barrier_call);
  double* v = calloc((size_t)reps, sizeof(double));
  double* w = calloc((size_t)reps, sizeof(double));
  double* ratio = calloc((size_t)reps, sizeof(double));
  int layered = 0;
  for (int r = 0; r < reps; ++r) {
#ifdef RFT_MPI_BENCH_WITH_RFT_H
    if (r % 2) {
      w[r] = allreduce_rft_once(iters);
      v[r] = allreduce_once(iters);
    } else {
      v[r] = allreduce_once(iters);
      w[r] = allreduce_rft_once(iters);
    }
    ratio[r] = v[r] / w[r];
    layered = 1;
#else
    v[r] = allreduce_once(iters);
#endif
  }
  report("allreduce", 8, median(v, reps), "us", layered ? median(ratio, reps) : 0);
  free(v), free(w), free(ratio);
  time_calls("bcast", 8, iters, bcast_call);
  time_calls("reduce", 8, iters, reduce_call);
  time_calls("dup", 0, slow_iters(), dup_call);
}

#if defined(MPIX_ERR_PROC_FAILED) || defined(MPI_ERR_PROC_FAILED)
static void agree_call(void) {
  int flag = 1;
  MPIX_Comm_agree(MPI_COMM_WORLD, &flag);
}

static void shrink_call(void) {
  MPI_Comm shrunk;
  MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk);
  MPI_Comm_free(&shrunk);
}
#endif

/* The nonblocking forms, waited for at once: what they add over the blocking calls. Open MPI 5.0
 * has MPIX_Comm_iagree but no MPIX_Comm_ishrink; its mpi-ext.h says which it has. */
#if defined(RFT_MPI) || defined(OMPI_HAVE_MPIX_COMM_IAGREE)
static void iagree_call(void) {
  int flag = 1;
  MPI_Request request;
  MPIX_Comm_iagree(MPI_COMM_WORLD, &flag, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}
#endif

#if defined(RFT_MPI) || defined(OMPI_HAVE_MPIX_COMM_ISHRINK)
static void ishrink_call(void) {
  MPI_Comm shrunk;
  MPI_Request request;
  MPIX_Comm_ishrink(MPI_COMM_WORLD, &shrunk, &request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
  MPI_Comm_free(&shrunk);
}
#endif

static void bench_ulfm(void) {
#if defined(MPIX_ERR_PROC_FAILED) || defined(MPI_ERR_PROC_FAILED)
  time_calls("agree", 0, iters, agree_call);
#if defined(RFT_MPI) || defined(OMPI_HAVE_MPIX_COMM_IAGREE)
  time_calls("iagree", 0, iters, iagree_call);
#endif
#if defined(RFT_MPI) || defined(OMPI_HAVE_MPIX_COMM_ISHRINK)
  time_calls("ishrink", 0, slow_iters(), ishrink_call);
#endif
  time_calls("shrink", 0, slow_iters(), shrink_call);
#endif
}

/* Revoke: rank 0 revokes while rank 1 waits in a receive on a dup; rank 1 replies on COMM_WORLD
 * once its receive returned. The reply's one-way time is in the figure. Each revoke is timed on
 * its own: the median and the 99th percentile over every revoke of every repetition (a mean hid
 * how often the control threads' wake-ups slowed one down). */
static void bench_revoke(void) {
#if defined(MPIX_ERR_PROC_FAILED) || defined(MPI_ERR_PROC_FAILED)
  const int revokes = slow_iters();
  const int n = revokes * reps;
  double* v = calloc((size_t)n, sizeof(double));
  for (int r = 0; r < reps; ++r) {
    for (int i = 0; i < revokes; ++i) {
      MPI_Comm dup;
      MPI_Comm_dup(MPI_COMM_WORLD, &dup);
      MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
      MPI_Barrier(MPI_COMM_WORLD);
      char byte = 0;
      if (rank == 0) {
        const double t0 = MPI_Wtime();
        MPIX_Comm_revoke(dup);
        MPI_Recv(&byte, 1, MPI_BYTE, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        v[r * revokes + i] = (MPI_Wtime() - t0) * 1e6;
      } else if (rank == 1) {
        MPI_Recv(&byte, 1, MPI_BYTE, 0, 0, dup, MPI_STATUS_IGNORE);
        MPI_Send(&byte, 1, MPI_BYTE, 0, 9, MPI_COMM_WORLD);
      }
      MPI_Comm_free(&dup);
    }
  }
  const double middle = median(v, n); /* sorts v */
  report("revoke", 0, middle, "us", 0);
  report("revoke_p99", 0, v[(int)(0.99 * (n - 1))], "us", 0);
  free(v);
#endif
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int quick = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--json") == 0) {
      json = 1;
    } else if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[i], "--iters") == 0 && i + 1 < argc) {
      iters = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
      reps = atoi(argv[++i]);
    } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
      only = argv[++i];
    } else if (strcmp(argv[i], "--name") == 0 && i + 1 < argc) {
      mpi_name = argv[++i];
    } else {
      if (rank == 0) fprintf(stderr, "mpi_bench: unknown argument \"%s\"\n", argv[i]);
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
  }
  if (only != NULL && !(strcmp(only, "pingpong") == 0 || strcmp(only, "bandwidth") == 0 ||
                        strcmp(only, "collectives") == 0 || strcmp(only, "ulfm") == 0 ||
                        strcmp(only, "revoke") == 0)) {
    if (rank == 0) {
      fprintf(stderr,
              "mpi_bench: --only \"%s\": expected pingpong, bandwidth, collectives, "
              "ulfm or revoke\n",
              only);
    }
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (size < 2 || iters < 1 || reps < 1) {
    if (rank == 0) fprintf(stderr, "mpi_bench: needs 2 or more ranks, --iters and --reps >= 1\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  if (!json && rank == 0) printf("%-10s %-10s %9s %12s\n", "mpi", "bench", "bytes", "value");
  if (wanted("pingpong")) bench_pingpong(quick);
  if (wanted("bandwidth")) {
    bench_bandwidth(8);
    if (!quick) {
      for (int bytes = 256; bytes <= (1 << 20); bytes *= 16) bench_bandwidth(bytes);
    }
  }
  if (wanted("collectives")) bench_collectives();
  if (wanted("ulfm")) bench_ulfm();
  if (wanted("revoke")) bench_revoke();
  MPI_Finalize();
  return 0;
}
