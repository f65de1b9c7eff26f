/* A C99 program over rft.h alone: requests the program frees (rft_request_free) and
 * communicators only their members create (rft_comm_create_group), across real processes under
 * rftrun (api_objects_test.cc drives it). Modes:
 *   request_free          n >= 2: freed sends and receives still deliver; a freed handle and its
 *                         copies are stale; a truncation on a freed receive reaches COMM_SELF's
 *                         handler; a freed non-blocking collective; a communicator freed while a
 *                         freed request on it runs; 2,000 freed sends leak nothing
 *   create_group          n = 4: disjoint and overlapping groups create at the same time (the
 *                         others do not call); bad arguments are refused at every member
 *   create_group_failure  n = 4: rank 3 dies at an agreed point; a group without it still
 *                         creates, one with it is PROC_FAILED; a revoked parent is REVOKED
 * Each rank prints "<mode> ok rank=R" when its checks passed, "FAILED: ..." (exit 3) otherwise. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tests/multiproc/c_worker_checks.h"
#include "ulfm_api/rft.h"

#define W RFT_COMM_WORLD

static int g_rank, g_size;

static double Seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* COMM_SELF's handler: the errors of freed requests come here. */
static int g_self_calls = 0;
static int g_self_code = 0;
static void SelfHandler(rft_comm_t comm, int error, const char* message, void* data) {
  (void)comm;
  (void)message;
  (void)data;
  ++g_self_calls;
  g_self_code = error;
}

/* Drives rft (a probe progresses it) until `*flag` is set or 10 s pass; sleeps between looks,
 * since ranks may outnumber cores. */
static void ProgressUntil(const int* flag) {
  const double deadline = Seconds() + 10;
  const struct timespec pause = {0, 100000};
  while (!*flag && Seconds() < deadline) {
    int found = 0;
    CHECK_OK(rft_iprobe(RFT_ANY_SOURCE, 999, W, &found, RFT_STATUS_IGNORE));
    nanosleep(&pause, NULL);
  }
}

static void RequestFree(void) {
  const int peer = g_rank == 0 ? 1 : 0;
  int data[8], i;
  rft_request_t request = RFT_REQUEST_NULL;
  if (g_rank > 1) return;

  /* A freed send still delivers; the handle is cleared and a copy of it is stale. */
  if (g_rank == 0) {
    rft_request_t copy;
    for (i = 0; i < 8; ++i) data[i] = 100 + i;
    CHECK_OK(rft_isend(data, 8, RFT_INT, peer, 1, W, &request));
    copy = request;
    CHECK_OK(rft_request_free(&request));
    CHECK(request == RFT_REQUEST_NULL, "the handle was not cleared");
    CHECK_CODE(rft_wait(&copy, RFT_STATUS_IGNORE), RFT_ERR_ARG);
    CHECK(strstr(rft_last_error_message(), "stale") != NULL, "no word of a stale handle");
    CHECK_CODE(rft_request_free(&copy), RFT_ERR_ARG);
    CHECK_CODE(rft_request_free(&request), RFT_ERR_ARG); /* RFT_REQUEST_NULL */
  } else {
    memset(data, 0, sizeof data);
    CHECK_OK(rft_recv(data, 8, RFT_INT, peer, 1, W, RFT_STATUS_IGNORE));
    for (i = 0; i < 8; ++i) CHECK(data[i] == 100 + i, "data[%d] = %d", i, data[i]);
  }

  /* A freed receive still receives: the message sent after it arrives after it (the pair's
   * order), so once that one is in, so is this. */
  if (g_rank == 1) {
    int after = 0;
    memset(data, 0, sizeof data);
    CHECK_OK(rft_irecv(data, 8, RFT_INT, peer, 2, W, &request));
    CHECK_OK(rft_request_free(&request));
    CHECK_OK(rft_send(&after, 1, RFT_INT, peer, 0, W)); /* the receive is posted */
    CHECK_OK(rft_recv(&after, 1, RFT_INT, peer, 3, W, RFT_STATUS_IGNORE));
    for (i = 0; i < 8; ++i) CHECK(data[i] == 200 + i, "data[%d] = %d", i, data[i]);
  } else {
    int after = 0;
    for (i = 0; i < 8; ++i) data[i] = 200 + i;
    CHECK_OK(rft_recv(&after, 1, RFT_INT, peer, 0, W, RFT_STATUS_IGNORE));
    CHECK_OK(rft_send(data, 8, RFT_INT, peer, 2, W));
    CHECK_OK(rft_send(&after, 1, RFT_INT, peer, 3, W));
  }

  /* A freed receive that is truncated: no handle is left, so COMM_SELF's handler hears of it. */
  if (g_rank == 1) {
    int small = 0, go = 0;
    rft_errhandler_t handler;
    CHECK_OK(rft_comm_create_errhandler(SelfHandler, NULL, &handler));
    CHECK_OK(rft_comm_set_errhandler(RFT_COMM_SELF, handler));
    CHECK_OK(rft_errhandler_free(&handler));
    CHECK_OK(rft_irecv(&small, 1, RFT_INT, peer, 4, W, &request));
    CHECK_OK(rft_request_free(&request));
    CHECK_OK(rft_send(&go, 1, RFT_INT, peer, 0, W));
    ProgressUntil(&g_self_calls);
    CHECK(g_self_calls == 1 && g_self_code == RFT_ERR_TRUNCATE,
          "COMM_SELF's handler: %d call(s), %s", g_self_calls, rft_error_name(g_self_code));
    CHECK_OK(rft_comm_set_errhandler(RFT_COMM_SELF, RFT_ERRORS_RETURN));
  } else {
    int go = 0;
    CHECK_OK(rft_recv(&go, 1, RFT_INT, peer, 0, W, RFT_STATUS_IGNORE));
    CHECK_OK(rft_send(data, 8, RFT_INT, peer, 4, W));
  }

  /* Many freed sends: each request is released when its send ends (finalize then reports no
   * leak: the test checks the output). */
  for (i = 0; i < 2000; ++i) {
    /* Each send's buffer stays untouched until the receiver has it all (MPI's rule; a send may
     * still read it after it was freed). */
    static int values[2000];
    int got = -1;
    if (g_rank == 0) {
      values[i] = i;
      CHECK_OK(rft_isend(&values[i], 1, RFT_INT, peer, 6, W, &request));
      CHECK_OK(rft_request_free(&request));
    } else {
      CHECK_OK(rft_recv(&got, 1, RFT_INT, peer, 6, W, RFT_STATUS_IGNORE));
      CHECK(got == i, "message %d carried %d", i, got);
    }
  }
}

/* A communicator freed while a freed request on it still runs: it goes once that ends. The dup
 * is collective over world; ranks 0 and 1 use it. */
static void FreedRequestOnAFreedCommunicator(void) {
  rft_request_t request = RFT_REQUEST_NULL;
  const int peer = g_rank == 0 ? 1 : 0;
  {
    rft_comm_t dup;
    int value = 7, got = 0;
    CHECK_OK(rft_comm_dup(W, &dup));
    if (g_rank > 1) {
      CHECK_OK(rft_comm_free(&dup));
    } else if (g_rank == 0) {
      CHECK_OK(rft_isend(&value, 1, RFT_INT, peer, 5, dup, &request));
      CHECK_OK(rft_request_free(&request));
      CHECK_OK(rft_comm_free(&dup));
      CHECK(dup == RFT_COMM_NULL, "the freed communicator's handle was not cleared");
    } else {
      CHECK_OK(rft_recv(&got, 1, RFT_INT, peer, 5, dup, RFT_STATUS_IGNORE));
      CHECK(got == 7, "got %d", got);
      CHECK_OK(rft_comm_free(&dup));
    }
  }
}

/* A freed non-blocking collective: the members' next collective still matches. */
static void FreedCollective(void) {
  rft_request_t request = RFT_REQUEST_NULL;
  int one = 1;
  CHECK_OK(rft_ibarrier(W, &request));
  CHECK_OK(rft_request_free(&request));
  CHECK_OK(rft_allreduce(RFT_IN_PLACE, &one, 1, RFT_INT, RFT_SUM, W));
  CHECK(one == g_size, "allreduce after a freed ibarrier: %d", one);
}

/* The new communicator of `ranks` (world ranks) by rft_comm_create_group: its order is the
 * group's, and an allreduce over it sums the members' world ranks. */
static rft_comm_t CreateGroupOf(int n, const int* ranks, int tag) {
  rft_group_t world_group, group;
  rft_comm_t comm = RFT_COMM_NULL;
  int i, rank = -1, size = 0, sum = 0, expected = 0;
  CHECK_OK(rft_comm_group(W, &world_group));
  CHECK_OK(rft_group_incl(world_group, n, ranks, &group));
  CHECK_OK(rft_comm_create_group(W, group, tag, &comm));
  CHECK_OK(rft_group_free(&group));
  CHECK_OK(rft_group_free(&world_group));
  CHECK(comm != RFT_COMM_NULL, "no communicator");
  CHECK_OK(rft_comm_size(comm, &size));
  CHECK_OK(rft_comm_rank(comm, &rank));
  CHECK(size == n, "size %d, expected %d", size, n);
  CHECK(rank >= 0 && rank < n && ranks[rank] == g_rank, "rank %d in the new communicator", rank);
  sum = g_rank;
  CHECK_OK(rft_allreduce(RFT_IN_PLACE, &sum, 1, RFT_INT, RFT_SUM, comm));
  for (i = 0; i < n; ++i) expected += ranks[i];
  CHECK(sum == expected, "allreduce %d, expected %d", sum, expected);
  return comm;
}

static int CreateGroupCode(int n, const int* ranks, int tag) {
  rft_group_t world_group, group;
  rft_comm_t comm = RFT_COMM_NULL;
  int rc;
  CHECK_OK(rft_comm_group(W, &world_group));
  CHECK_OK(rft_group_incl(world_group, n, ranks, &group));
  rc = rft_comm_create_group(W, group, tag, &comm);
  CHECK(rc != RFT_SUCCESS || comm != RFT_COMM_NULL, "success without a communicator");
  if (comm != RFT_COMM_NULL) CHECK_OK(rft_comm_free(&comm));
  CHECK_OK(rft_group_free(&group));
  CHECK_OK(rft_group_free(&world_group));
  return rc;
}

static void CreateGroup(void) {
  static const int even[] = {0, 2}, odd[] = {3, 1}, low[] = {0, 1, 2}, high[] = {3, 2, 1};
  rft_comm_t comm;
  CHECK(g_size == 4, "needs 4 ranks, has %d", g_size);
  /* Disjoint groups at the same time, the same tag (odd's order reversed). */
  comm = CreateGroupOf(2, g_rank % 2 == 0 ? even : odd, 7);
  CHECK_OK(rft_comm_free(&comm));
  /* Overlapping groups, told apart by their tags; 0 and 3 each call one, 1 and 2 both, in the
   * same order. */
  if (g_rank != 3) {
    comm = CreateGroupOf(3, low, 1);
    CHECK_OK(rft_comm_free(&comm));
  }
  if (g_rank != 0) {
    comm = CreateGroupOf(3, high, 2);
    CHECK_OK(rft_comm_free(&comm));
  }
  /* A caller outside its group; a negative tag, refused at both members (neither hangs). */
  if (g_rank == 3) CHECK_CODE(CreateGroupCode(2, even, 1), RFT_ERR_ARG);
  if (g_rank == 0 || g_rank == 2) CHECK_CODE(CreateGroupCode(2, even, -5), RFT_ERR_ARG);
  CHECK(strstr(rft_last_error_message(), "tag") != NULL || g_rank % 2 == 1, "message: %s",
        rft_last_error_message());
  {
    rft_comm_t self_comm = RFT_COMM_NULL;
    rft_group_t self_group;
    CHECK_OK(rft_comm_group(RFT_COMM_SELF, &self_group));
    CHECK_CODE(rft_comm_create_group(W, self_group, 0, NULL), RFT_ERR_ARG);
    CHECK_CODE(rft_comm_create_group(W, RFT_GROUP_NULL, 0, &self_comm), RFT_ERR_ARG);
    CHECK_OK(rft_comm_create_group(W, self_group, 0, &self_comm)); /* a group of one */
    CHECK_OK(rft_group_free(&self_group));
    CHECK_OK(rft_comm_free(&self_comm));
  }
  CHECK_OK(rft_barrier(W));
}

static void CreateGroupFailure(void) {
  static const int survivors[] = {0, 1, 2}, all[] = {0, 1, 2, 3};
  rft_comm_t dup, comm;
  int token = 0, r, revoked = 0;
  rft_group_t failed;
  int failed_size = 0;
  CHECK(g_size == 4, "needs 4 ranks, has %d", g_size);
  CHECK_OK(rft_comm_dup(W, &dup));
  /* Rank 3 dies once the others told it they are past the dup. */
  if (g_rank == 3) {
    for (r = 0; r < 3; ++r) CHECK_OK(rft_recv(&token, 1, RFT_INT, r, 77, W, RFT_STATUS_IGNORE));
    raise(SIGKILL);
  }
  CHECK_OK(rft_send(&token, 1, RFT_INT, 3, 77, W));
  /* Wait until the failure is known here. */
  {
    const double deadline = Seconds() + 10;
    while (failed_size == 0 && Seconds() < deadline) {
      int found = 0;
      (void)rft_iprobe(0, 999, W, &found, RFT_STATUS_IGNORE);
      CHECK_OK(rft_comm_get_failed(W, &failed));
      CHECK_OK(rft_group_size(failed, &failed_size));
      CHECK_OK(rft_group_free(&failed));
    }
    CHECK(failed_size == 1, "rank 3's death not known after 10 s");
  }
  /* Only the members' failures count: the survivors still create. */
  comm = CreateGroupOf(3, survivors, 3);
  CHECK_OK(rft_comm_free(&comm));
  CHECK_CODE(CreateGroupCode(4, all, 4), RFT_ERR_PROC_FAILED);
  /* A revoked parent: REVOKED at every member. */
  if (g_rank == 0) CHECK_OK(rft_comm_revoke(dup));
  {
    const double deadline = Seconds() + 10;
    while (!revoked && Seconds() < deadline) CHECK_OK(rft_comm_is_revoked(dup, &revoked));
    CHECK(revoked, "the revocation did not arrive in 10 s");
  }
  {
    rft_group_t dup_group, group;
    CHECK_OK(rft_comm_group(dup, &dup_group));
    CHECK_OK(rft_group_incl(dup_group, 3, survivors, &group));
    comm = RFT_COMM_NULL;
    CHECK_CODE(rft_comm_create_group(dup, group, 5, &comm), RFT_ERR_REVOKED);
    CHECK(comm == RFT_COMM_NULL, "a communicator from a revoked parent");
    CHECK_OK(rft_group_free(&group));
    CHECK_OK(rft_group_free(&dup_group));
  }
  CHECK_OK(rft_comm_free(&dup));
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  int provided = -1;
  CHECK_OK(rft_init(NULL, NULL, RFT_FT_NOTIFY, &provided));
  CHECK_OK(rft_comm_rank(W, &g_rank));
  CHECK_OK(rft_comm_size(W, &g_size));
  CHECK_OK(rft_comm_set_errhandler(W, RFT_ERRORS_RETURN));
  /* Errors with no communicator (a stale request handle) come back too. */
  CHECK_OK(rft_comm_set_errhandler(RFT_COMM_SELF, RFT_ERRORS_RETURN));
  if (strcmp(mode, "request_free") == 0) {
    CHECK(g_size >= 2, "needs 2 ranks or more");
    FreedCollective(); /* first: the collectives below give it time to end everywhere */
    RequestFree();
    FreedRequestOnAFreedCommunicator();
  } else if (strcmp(mode, "create_group") == 0) {
    CreateGroup();
  } else if (strcmp(mode, "create_group_failure") == 0) {
    CreateGroupFailure();
  } else {
    printf("FAILED: unknown mode '%s'\n", mode);
    return 2;
  }
  CHECK_OK(rft_finalize());
  printf("%s ok rank=%d\n", mode, g_rank);
  fflush(stdout);
  return 0;
}
