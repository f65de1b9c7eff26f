/* A C99 program over rft.h alone: every collective, blocking and non-blocking, across real
 * processes under rftrun (collectives_test.cc drives it). Modes:
 *   all        every collective with every root, in place where it applies, small and large,
 *              on COMM_WORLD and on a split communicator (whose ranks are not job ranks);
 *              non-blocking ones overlapping; the progress rule; bad arguments
 *   fail V     rank V dies (SIGKILL) at an agreed point: the survivors' non-blocking and
 *              blocking collectives return RFT_ERR_PROC_FAILED and none waits forever
 *   revoke     rank 0 revokes a duplicate of world while the others wait in an ibarrier on it
 * Each rank prints "<mode> ok rank=R" when its checks passed, "FAILED: ..." (exit 3) otherwise. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/multiproc/c_worker_checks.h"
#include "ulfm_api/rft.h"

#define W RFT_COMM_WORLD
#define MAX_RANKS 16

static int g_rank, g_size;

/* A value only member `r` of a communicator contributes at position `i`. */
static long Value(int r, size_t i) { return 1000L * r + (long)i; }

/* Waits for `request` when `nonblocking` (the call that started it returned `rc`). */
static int Finish(int rc, int nonblocking, rft_request_t* request) {
  if (rc != RFT_SUCCESS || !nonblocking) return rc;
  return rft_wait(request, NULL);
}

/* ---- all ---- */

/* Every collective once on `comm`, blocking or not. `count` elements per block. */
static void EveryCollective(rft_comm_t comm, size_t count, int nonblocking) {
  int me, n;
  CHECK_OK(rft_comm_rank(comm, &me));
  CHECK_OK(rft_comm_size(comm, &n));
  rft_request_t rq = RFT_REQUEST_NULL;
  rft_request_t* r = nonblocking ? &rq : NULL;
  long* mine = malloc(count * sizeof(long));
  long* all = malloc((size_t)n * count * sizeof(long));
  long* expected = malloc((size_t)n * count * sizeof(long));
  CHECK(mine != NULL && all != NULL && expected != NULL, "out of memory");
  for (size_t i = 0; i < count; ++i) mine[i] = Value(me, i);

  CHECK_OK(Finish(nonblocking ? rft_ibarrier(comm, r) : rft_barrier(comm), nonblocking, r));

  /* allreduce, out of place and in place */
  CHECK_OK(Finish(nonblocking ? rft_iallreduce(mine, all, count, RFT_LONG, RFT_SUM, comm, r)
                              : rft_allreduce(mine, all, count, RFT_LONG, RFT_SUM, comm),
                  nonblocking, r));
  for (size_t i = 0; i < count; ++i) {
    long sum = 0;
    for (int m = 0; m < n; ++m) sum += Value(m, i);
    CHECK(all[i] == sum, "allreduce [%zu] = %ld, expected %ld (n %d, count %zu)", i, all[i], sum, n,
          count);
  }
  memcpy(all, mine, count * sizeof(long));
  CHECK_OK(Finish(nonblocking ? rft_iallreduce(RFT_IN_PLACE, all, count, RFT_LONG, RFT_MAX, comm, r)
                              : rft_allreduce(RFT_IN_PLACE, all, count, RFT_LONG, RFT_MAX, comm),
                  nonblocking, r));
  for (size_t i = 0; i < count; ++i) CHECK(all[i] == Value(n - 1, i), "max [%zu] = %ld", i, all[i]);

  for (int root = 0; root < n; ++root) {
    /* bcast */
    for (size_t i = 0; i < count; ++i) all[i] = me == root ? Value(root, i) : -1;
    CHECK_OK(Finish(nonblocking ? rft_ibcast(all, count, RFT_LONG, root, comm, r)
                                : rft_bcast(all, count, RFT_LONG, root, comm),
                    nonblocking, r));
    for (size_t i = 0; i < count; ++i) CHECK(all[i] == Value(root, i), "bcast from %d", root);

    /* reduce */
    for (size_t i = 0; i < count; ++i) all[i] = -1;
    CHECK_OK(Finish(nonblocking ? rft_ireduce(mine, all, count, RFT_LONG, RFT_SUM, root, comm, r)
                                : rft_reduce(mine, all, count, RFT_LONG, RFT_SUM, root, comm),
                    nonblocking, r));
    if (me == root) {
      for (size_t i = 0; i < count; ++i) {
        long sum = 0;
        for (int m = 0; m < n; ++m) sum += Value(m, i);
        CHECK(all[i] == sum, "reduce to %d [%zu] = %ld", root, i, all[i]);
      }
    }

    /* gather, then in place at the root */
    for (int pass = 0; pass < 2; ++pass) {
      const int in_place = pass == 1 && me == root;
      for (size_t k = 0; k < (size_t)n * count; ++k) all[k] = -1;
      if (in_place) memcpy(all + (size_t)root * count, mine, count * sizeof(long));
      const void* send = in_place ? RFT_IN_PLACE : mine;
      CHECK_OK(Finish(nonblocking ? rft_igather(send, count, RFT_LONG, all, root, comm, r)
                                  : rft_gather(send, count, RFT_LONG, all, root, comm),
                      nonblocking, r));
      if (me == root) {
        for (int m = 0; m < n; ++m) {
          for (size_t i = 0; i < count; ++i) {
            CHECK(all[(size_t)m * count + i] == Value(m, i), "gather to %d: block %d [%zu] = %ld",
                  root, m, i, all[(size_t)m * count + i]);
          }
        }
      }
    }

    /* scatter: the root's block m is (m, i) */
    for (int m = 0; m < n; ++m) {
      for (size_t i = 0; i < count; ++i) expected[(size_t)m * count + i] = Value(m, i);
    }
    for (size_t i = 0; i < count; ++i) all[i] = -1;
    CHECK_OK(Finish(nonblocking ? rft_iscatter(expected, all, count, RFT_LONG, root, comm, r)
                                : rft_scatter(expected, all, count, RFT_LONG, root, comm),
                    nonblocking, r));
    for (size_t i = 0; i < count; ++i) {
      CHECK(all[i] == Value(me, i), "scatter from %d [%zu] = %ld", root, i, all[i]);
    }

    /* gatherv and scatterv: member m's block is m + 1 elements, in reverse order of members */
    size_t counts[MAX_RANKS], displacements[MAX_RANKS], total = 0;
    for (int m = n - 1; m >= 0; --m) {
      counts[m] = (size_t)m + 1;
      displacements[m] = total;
      total += counts[m] + 1; /* a gap the collectives must not touch */
    }
    long* varied = malloc((total + 1) * sizeof(long));
    long block[MAX_RANKS + 1];
    CHECK(varied != NULL, "out of memory");
    for (size_t k = 0; k < total; ++k) varied[k] = -7;
    for (size_t i = 0; i <= (size_t)me; ++i) block[i] = Value(me, i);
    CHECK_OK(Finish(nonblocking ? rft_igatherv(block, (size_t)me + 1, RFT_LONG, varied, counts,
                                               displacements, root, comm, r)
                                : rft_gatherv(block, (size_t)me + 1, RFT_LONG, varied, counts,
                                              displacements, root, comm),
                    nonblocking, r));
    if (me == root) {
      for (int m = 0; m < n; ++m) {
        for (size_t i = 0; i < counts[m]; ++i) {
          CHECK(varied[displacements[m] + i] == Value(m, i), "gatherv block %d [%zu]", m, i);
        }
        CHECK(varied[displacements[m] + counts[m]] == -7, "gatherv wrote into a gap");
      }
    }
    for (size_t i = 0; i <= (size_t)me; ++i) block[i] = -1;
    if (me == root) {
      for (int m = 0; m < n; ++m) {
        for (size_t i = 0; i < counts[m]; ++i) varied[displacements[m] + i] = Value(m, i) + 5;
      }
    }
    CHECK_OK(Finish(nonblocking ? rft_iscatterv(varied, counts, displacements, block,
                                                (size_t)me + 1, RFT_LONG, root, comm, r)
                                : rft_scatterv(varied, counts, displacements, block, (size_t)me + 1,
                                               RFT_LONG, root, comm),
                    nonblocking, r));
    for (size_t i = 0; i <= (size_t)me; ++i) {
      CHECK(block[i] == Value(me, i) + 5, "scatterv from %d [%zu] = %ld", root, i, block[i]);
    }
    free(varied);
  }

  /* allgather, out of place and in place */
  for (size_t k = 0; k < (size_t)n * count; ++k) all[k] = -1;
  CHECK_OK(Finish(nonblocking ? rft_iallgather(mine, count, RFT_LONG, all, comm, r)
                              : rft_allgather(mine, count, RFT_LONG, all, comm),
                  nonblocking, r));
  for (int m = 0; m < n; ++m) {
    for (size_t i = 0; i < count; ++i) {
      CHECK(all[(size_t)m * count + i] == Value(m, i), "allgather block %d [%zu]", m, i);
    }
  }
  for (size_t k = 0; k < (size_t)n * count; ++k) all[k] = -1;
  memcpy(all + (size_t)me * count, mine, count * sizeof(long));
  CHECK_OK(Finish(nonblocking ? rft_iallgather(RFT_IN_PLACE, count, RFT_LONG, all, comm, r)
                              : rft_allgather(RFT_IN_PLACE, count, RFT_LONG, all, comm),
                  nonblocking, r));
  for (int m = 0; m < n; ++m) {
    CHECK(all[(size_t)m * count] == Value(m, 0), "in-place allgather block %d", m);
  }

  /* allgatherv: member m's block is m + 1 elements */
  size_t counts[MAX_RANKS], displacements[MAX_RANKS], total = 0;
  for (int m = 0; m < n; ++m) {
    counts[m] = (size_t)m + 1;
    displacements[m] = total;
    total += counts[m];
  }
  long gathered[MAX_RANKS * (MAX_RANKS + 1) / 2];
  long block[MAX_RANKS];
  for (size_t i = 0; i <= (size_t)me; ++i) block[i] = Value(me, i);
  CHECK_OK(Finish(nonblocking ? rft_iallgatherv(block, (size_t)me + 1, RFT_LONG, gathered, counts,
                                                displacements, comm, r)
                              : rft_allgatherv(block, (size_t)me + 1, RFT_LONG, gathered, counts,
                                               displacements, comm),
                  nonblocking, r));
  for (int m = 0; m < n; ++m) {
    for (size_t i = 0; i < counts[m]; ++i) {
      CHECK(gathered[displacements[m] + i] == Value(m, i), "allgatherv block %d [%zu]", m, i);
    }
  }

  /* alltoall: block m of member me's send is (me * 100 + m, i) */
  long* out = malloc((size_t)n * count * sizeof(long));
  CHECK(out != NULL, "out of memory");
  for (int m = 0; m < n; ++m) {
    for (size_t i = 0; i < count; ++i) out[(size_t)m * count + i] = Value(me * 100 + m, i);
  }
  CHECK_OK(Finish(nonblocking ? rft_ialltoall(out, count, RFT_LONG, all, comm, r)
                              : rft_alltoall(out, count, RFT_LONG, all, comm),
                  nonblocking, r));
  for (int m = 0; m < n; ++m) {
    for (size_t i = 0; i < count; ++i) {
      CHECK(all[(size_t)m * count + i] == Value(m * 100 + me, i), "alltoall from %d [%zu]", m, i);
    }
  }

  /* alltoallv: member a sends b + 1 elements to member b */
  size_t send_counts[MAX_RANKS], send_displacements[MAX_RANKS];
  size_t receive_counts[MAX_RANKS], receive_displacements[MAX_RANKS];
  size_t sent = 0, received = 0;
  for (int m = 0; m < n; ++m) {
    send_counts[m] = (size_t)m + 1;
    send_displacements[m] = sent;
    sent += send_counts[m];
    receive_counts[m] = (size_t)me + 1;
    receive_displacements[m] = received;
    received += receive_counts[m];
  }
  long to[MAX_RANKS * (MAX_RANKS + 1) / 2], from[MAX_RANKS * MAX_RANKS];
  for (int m = 0; m < n; ++m) {
    for (size_t i = 0; i < send_counts[m]; ++i) {
      to[send_displacements[m] + i] = Value(me * 100 + m, i);
    }
  }
  CHECK_OK(Finish(nonblocking
                      ? rft_ialltoallv(to, send_counts, send_displacements, from, receive_counts,
                                       receive_displacements, RFT_LONG, comm, r)
                      : rft_alltoallv(to, send_counts, send_displacements, from, receive_counts,
                                      receive_displacements, RFT_LONG, comm),
                  nonblocking, r));
  for (int m = 0; m < n; ++m) {
    for (size_t i = 0; i < receive_counts[m]; ++i) {
      CHECK(from[receive_displacements[m] + i] == Value(m * 100 + me, i), "alltoallv from %d", m);
    }
  }
  free(out);
  free(mine);
  free(all);
  free(expected);
}

/* Non-blocking collectives in flight together, completed in another order than started. */
static void Overlapping(void) {
  rft_request_t requests[4];
  long one = g_rank + 1, sum = 0, maximum = 0;
  int value = g_rank == 0 ? 77 : 0;
  CHECK_OK(rft_ibarrier(W, &requests[0]));
  CHECK_OK(rft_iallreduce(&one, &sum, 1, RFT_LONG, RFT_SUM, W, &requests[1]));
  CHECK_OK(rft_ibcast(&value, 1, RFT_INT, 0, W, &requests[2]));
  CHECK_OK(rft_iallreduce(&one, &maximum, 1, RFT_LONG, RFT_MAX, W, &requests[3]));
  int done = 0;
  CHECK_OK(rft_wait(&requests[3], NULL));
  rft_status_t statuses[4];
  CHECK_OK(rft_testall(3, requests, &done, statuses)); /* may or may not be done yet */
  if (!done) CHECK_OK(rft_waitall(3, requests, statuses));
  for (int i = 0; i < 4; ++i) CHECK(requests[i] == RFT_REQUEST_NULL, "request %d not released", i);
  CHECK(sum == (long)g_size * (g_size + 1) / 2 && maximum == g_size && value == 77,
        "overlapping: sum %ld max %ld bcast %d", sum, maximum, value);

  /* waitany over collectives */
  CHECK_OK(rft_ibarrier(W, &requests[0]));
  CHECK_OK(rft_iallreduce(&one, &sum, 1, RFT_LONG, RFT_SUM, W, &requests[1]));
  for (int left = 2; left > 0; --left) {
    int index = -1;
    CHECK_OK(rft_waitany(2, requests, &index, NULL));
    CHECK(index == 0 || index == 1, "waitany index %d", index);
  }
  CHECK(requests[0] == RFT_REQUEST_NULL && requests[1] == RFT_REQUEST_NULL, "waitany left one");

  /* The progress rule: rank 1 waits for its ibarrier, then sends to rank 0, which waits for
   * that message before it waits for its own ibarrier. Rank 1's barrier needs rank 0's later
   * rounds, which only progress inside rank 0's blocking receive. */
  if (g_size >= 2) {
    rft_request_t barrier;
    int token = 0;
    CHECK_OK(rft_ibarrier(W, &barrier));
    if (g_rank == 0) {
      CHECK_OK(rft_recv(&token, 1, RFT_INT, 1, 5, W, NULL));
      CHECK(token == 11, "token %d", token);
    } else if (g_rank == 1) {
      CHECK_OK(rft_wait(&barrier, NULL));
      token = 11;
      CHECK_OK(rft_send(&token, 1, RFT_INT, 0, 5, W));
    }
    CHECK_OK(rft_wait(&barrier, NULL));
  }
}

/* Bad arguments, each on COMM_SELF (an error at one member of a larger communicator would leave
 * the others waiting: MPI's rule, the caller's bug). */
static void BadArguments(void) {
  rft_comm_t self = RFT_COMM_SELF;
  CHECK_OK(rft_comm_set_errhandler(self, RFT_ERRORS_RETURN));
  long a[4] = {1, 2, 3, 4}, b[4];
  size_t counts[1] = {4}, displacements[1] = {0};
  CHECK_CODE(rft_gatherv(a, 4, RFT_LONG, b, NULL, displacements, 0, self), RFT_ERR_ARG);
  CHECK(strstr(rft_last_error_message(), "counts is NULL") != NULL, "message: %s",
        rft_last_error_message());
  CHECK_CODE(rft_gatherv(a, 3, RFT_LONG, b, counts, displacements, 0, self), RFT_ERR_ARG);
  CHECK_CODE(rft_bcast(a, 4, RFT_LONG, 1, self), RFT_ERR_ARG);
  CHECK(strstr(rft_last_error_message(), "root") != NULL, "message: %s", rft_last_error_message());
  CHECK_CODE(rft_alltoall(RFT_IN_PLACE, 1, RFT_LONG, b, self), RFT_ERR_ARG);
  CHECK_CODE(rft_allreduce(a, b, 4, RFT_DOUBLE, RFT_BXOR, self), RFT_ERR_ARG);
  CHECK_CODE(rft_ibarrier(self, NULL), RFT_ERR_ARG);
  size_t huge[1] = {SIZE_MAX / 2};
  CHECK_CODE(rft_allgatherv(a, SIZE_MAX / 2, RFT_LONG, b, huge, displacements, self), RFT_ERR_ARG);
  /* after the errors, the communicator still works */
  CHECK_OK(rft_gatherv(a, 4, RFT_LONG, b, counts, displacements, 0, self));
  CHECK(b[3] == 4, "gatherv on self gave %ld", b[3]);

  /* a collective request cannot be cancelled; freeing its communicator while it runs frees the
   * handle at once and the communicator after the request completes (MPI's rule) */
  rft_comm_t dup, copy;
  CHECK_OK(rft_comm_dup(W, &dup));
  CHECK_OK(rft_comm_set_errhandler(dup, RFT_ERRORS_RETURN));
  rft_request_t request;
  CHECK_OK(rft_ibarrier(dup, &request));
  CHECK_CODE(rft_cancel(&request), RFT_ERR_ARG);
  copy = dup;
  CHECK_OK(rft_comm_free(&dup));
  CHECK_CODE(rft_barrier(copy), RFT_ERR_ARG);
  CHECK_OK(rft_wait(&request, NULL));
}

static void All(void) {
  CHECK(g_size <= MAX_RANKS, "at most %d ranks", MAX_RANKS);
  /* 3 elements (latency-bound algorithms), 40000 (320 kB: the ring allreduce) */
  const size_t counts[] = {3, 40000};
  for (int c = 0; c < 2; ++c) {
    for (int nonblocking = 0; nonblocking < 2; ++nonblocking) {
      EveryCollective(W, counts[c], nonblocking);
    }
  }
  /* a split communicator: the odd and the even ranks, in reverse order */
  rft_comm_t half;
  CHECK_OK(rft_comm_split(W, g_rank % 2, -g_rank, &half));
  EveryCollective(half, 5, 0);
  EveryCollective(half, 5, 1);
  CHECK_OK(rft_comm_free(&half));
  Overlapping();
  BadArguments();
}

/* ---- fail V ---- */

static void Fail(int victim) {
  CHECK(victim >= 0 && victim < g_size, "victim %d", victim);
  rft_comm_set_errhandler(W, RFT_ERRORS_RETURN);
  long one = 1, sum = 0;
  for (int i = 0; i < 20; ++i) {
    CHECK_OK(rft_allreduce(&one, &sum, 1, RFT_LONG, RFT_SUM, W));
    CHECK(sum == g_size, "sum %ld", sum);
  }
  /* The victim ends itself once every other member told it that it is past the allreduces (a
   * member still in one when the victim died could rightly give up on it). */
  int token = 0;
  if (g_rank == victim) {
    for (int r = 0; r < g_size; ++r) {
      if (r != victim) CHECK_OK(rft_recv(&token, 1, RFT_INT, r, 77, W, NULL));
    }
    raise(SIGKILL);
  }
  CHECK_OK(rft_send(&token, 1, RFT_INT, victim, 77, W));
  rft_request_t request = RFT_REQUEST_NULL;
  int rc = rft_iallreduce(&one, &sum, 1, RFT_LONG, RFT_SUM, W, &request);
  if (rc == RFT_SUCCESS) rc = rft_wait(&request, NULL);
  CHECK_CODE(rc, RFT_ERR_PROC_FAILED);
  CHECK(request == RFT_REQUEST_NULL, "the failed request was not released");
  /* known failed now: refused at once, blocking or not */
  CHECK_CODE(rft_barrier(W), RFT_ERR_PROC_FAILED);
  CHECK_CODE(rft_igather(&one, 1, RFT_LONG, &sum, 0, W, &request), RFT_ERR_PROC_FAILED);
}

/* ---- revoke ---- */

static void Revoke(void) {
  rft_comm_t dup;
  CHECK_OK(rft_comm_dup(W, &dup));
  CHECK_OK(rft_comm_set_errhandler(dup, RFT_ERRORS_RETURN));
  CHECK_OK(rft_barrier(W));
  rft_request_t request;
  if (g_rank == 0) {
    CHECK_OK(rft_comm_revoke(dup));
    CHECK_CODE(rft_ibarrier(dup, &request), RFT_ERR_REVOKED);
  } else {
    /* the revoke may arrive before this ibarrier starts, or while it runs */
    const int rc = rft_ibarrier(dup, &request);
    CHECK(rc == RFT_SUCCESS || rc == RFT_ERR_REVOKED, "ibarrier returned %s", rft_error_name(rc));
    if (rc == RFT_SUCCESS) CHECK_CODE(rft_wait(&request, NULL), RFT_ERR_REVOKED);
  }
  CHECK_OK(rft_barrier(W));
  CHECK_OK(rft_comm_free(&dup));
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2) {
    fprintf(stderr, "usage: collectives_worker all | fail V | revoke\n");
    return 2;
  }
  int provided = -1;
  CHECK_OK(rft_init(NULL, NULL, RFT_FT_NOTIFY, &provided));
  CHECK_OK(rft_comm_rank(W, &g_rank));
  CHECK_OK(rft_comm_size(W, &g_size));
  const char* mode = argv[1];
  if (strcmp(mode, "all") == 0) {
    All();
  } else if (strcmp(mode, "fail") == 0 && argc > 2) {
    Fail(atoi(argv[2]));
  } else if (strcmp(mode, "revoke") == 0) {
    Revoke();
  } else {
    fprintf(stderr, "collectives_worker: unknown mode %s\n", mode);
    return 2;
  }
  CHECK_OK(rft_finalize());
  printf("%s ok rank=%d\n", mode, g_rank);
  return 0;
}
