/* A C99 program over rft.h alone: the public API's semantics across real processes under rftrun
 * (api_test.cc drives it). Modes:
 *   basics            point-to-point, probe, cancel, collectives, communicators, groups, error
 *                     handlers and bad arguments, with every member alive
 *   pending           n = 3: ULFM's PROC_FAILED_PENDING rule (rank 2 dies at an agreed point)
 *   revoke ORIGIN     every rank waits in a receive on a duplicate of world; ORIGIN revokes it
 *   fatal             n = 3: rank 2 dies; world keeps ERRORS_ARE_FATAL, so the others' next
 *                     collective aborts the job
 *   finalize K        the last K ranks die after a barrier; the others finalize at once
 *   parting           every rank but the last sends the last one a rendezvous message and then
 *                     a stream of eager ones, and finalizes at once; the last rank receives only
 *                     half a second later: nothing sent before a finalize is lost
 *   scope KIND        n = 4, halves {0,1} and {2,3}: an error on the first half at rank 0 with
 *                     its handler ERRORS_ARE_FATAL (KIND fatal) or ERRORS_ABORT (KIND abort)
 *   iagrees           100 rft_comm_iagree outstanding at every rank, rank 0 half a second late
 *   abort             n = 3: rank 1 aborts world and the launcher refuses (the test arms
 *                     abort.refused@1): rft_abort kills the others by pid and never returns
 *   async             RFT_FT_ASYNC: the last rank dies; the others' callback runs once for it
 *   none              RFT_FT_NONE: the last rank dies; the launcher ends the job
 *   initial HANDLER   world and self start with HANDLER (return, fatal or abort: what the test
 *                     gave rftrun --initial-errhandler); with return or fatal, rank 0 then sends
 *                     to rank size, which comes back as RFT_ERR_ARG or ends the job
 *   initial-bad       rft_init refuses RFT_INITIAL_ERRHANDLER=mpi_errors_ignore, naming it, and
 *                     initialises nothing: with the variable gone, it succeeds
 * Each rank prints "<mode> ok rank=R" when its checks passed, "FAILED: ..." (exit 3) otherwise. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/multiproc/c_worker_checks.h"
#include "ulfm_api/rft.h"

#define W RFT_COMM_WORLD

static int g_rank, g_size;

/* RFT_FT_ASYNC's callback (on rft's control thread): the failed ranks, in order. */
static int g_async_calls = 0;
static int g_async_rank = -1;
static void OnFailure(int job_rank, void* data) {
  (void)data;
  __atomic_store_n(&g_async_rank, job_rank, __ATOMIC_SEQ_CST);
  __atomic_add_fetch(&g_async_calls, 1, __ATOMIC_SEQ_CST);
}

static void Start(int level) {
  int provided = -1;
  if (level == RFT_FT_ASYNC) CHECK_OK(rft_set_failure_callback(OnFailure, NULL));
  CHECK_OK(rft_init(NULL, NULL, level, &provided));
  CHECK(provided == level, "provided level %d", provided);
  CHECK_OK(rft_comm_rank(W, &g_rank));
  CHECK_OK(rft_comm_size(W, &g_size));
}

static void Finish(const char* mode) {
  CHECK_OK(rft_finalize());
  int flag = 0;
  CHECK_OK(rft_finalized(&flag));
  CHECK(flag == 1, "not finalized");
  printf("%s ok rank=%d\n", mode, g_rank);
  fflush(stdout);
}

static int Contains(const char* text, const char* part) { return strstr(text, part) != NULL; }

/* ---- basics ---- */

static void PointToPoint(void) {
  const int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
  int out = g_rank * 10, in = -1;
  rft_status_t st;
  CHECK_OK(rft_sendrecv(&out, 1, RFT_INT, next, 7, &in, 1, RFT_INT, prev, 7, W, &st));
  CHECK(in == prev * 10 && st.source == prev && st.tag == 7 && st.count == sizeof(int),
        "sendrecv got %d from %d tag %d count %zu", in, st.source, st.tag, st.count);

  rft_request_t requests[2];
  rft_status_t statuses[2];
  CHECK_OK(rft_irecv(&in, 1, RFT_INT, RFT_ANY_SOURCE, RFT_ANY_TAG, W, &requests[0]));
  CHECK_OK(rft_isend(&out, 1, RFT_INT, next, 8, W, &requests[1]));
  CHECK_OK(rft_waitall(2, requests, statuses));
  CHECK(requests[0] == RFT_REQUEST_NULL && requests[1] == RFT_REQUEST_NULL, "handles not reset");
  CHECK(statuses[0].source == prev && statuses[0].tag == 8 && in == prev * 10,
        "any-source receive got %d from %d", in, statuses[0].source);

  /* probe, then receive what it saw */
  CHECK_OK(rft_send(&out, 1, RFT_INT, next, 9, W));
  CHECK_OK(rft_probe(prev, 9, W, &st));
  CHECK(st.source == prev && st.count == sizeof(int), "probe saw %d, %zu bytes", st.source,
        st.count);
  int flag = 0;
  CHECK_OK(rft_iprobe(RFT_ANY_SOURCE, 9, W, &flag, &st));
  CHECK(flag == 1 && st.source == prev, "iprobe flag %d source %d", flag, st.source);
  CHECK_OK(rft_recv(&in, 1, RFT_INT, prev, 9, W, &st));

  /* a receive nobody matches, cancelled */
  rft_request_t lonely;
  CHECK_OK(rft_irecv(&in, 1, RFT_INT, prev, 99, W, &lonely));
  int done = 1;
  CHECK_OK(rft_test(&lonely, &done, &st));
  CHECK(done == 0, "an unmatched receive tested done");
  CHECK_OK(rft_cancel(&lonely));
  CHECK_OK(rft_wait(&lonely, &st));
  CHECK(st.cancelled == 1 && lonely == RFT_REQUEST_NULL, "cancelled %d", st.cancelled);
  CHECK_OK(rft_wait(&lonely, &st)); /* a null request is complete */

  /* rft_send_now: small messages leave at once (or say they did not, and rft_send carries
   * them), in order; a rendezvous-sized one never does; a missing flag is an argument error. */
  int at_once = 0;
  for (int i = 0; i < 10; ++i) {
    int sent = -1, value = 100 * g_rank + i;
    CHECK_OK(rft_send_now(&value, 1, RFT_INT, next, 11, W, &sent));
    CHECK(sent == 0 || sent == 1, "sent %d", sent);
    if (sent) {
      ++at_once;
    } else {
      CHECK_OK(rft_send(&value, 1, RFT_INT, next, 11, W));
    }
  }
  for (int i = 0; i < 10; ++i) {
    CHECK_OK(rft_recv(&in, 1, RFT_INT, prev, 11, W, &st));
    CHECK(in == 100 * prev + i, "send_now message %d: got %d", i, in);
  }
  CHECK(at_once > 0, "no small message left at once (%d of 10)", at_once);
  static int large[1 << 16];
  int sent = -1;
  CHECK_OK(rft_send_now(large, 1 << 16, RFT_INT, next, 12, W, &sent));
  CHECK(sent == 0, "a 256 KiB message left at once");
  CHECK_CODE(rft_send_now(&out, 1, RFT_INT, next, 12, W, NULL), RFT_ERR_ARG);

  /* truncation names itself */
  int64_t big = 42;
  int8_t small = 0;
  CHECK_OK(rft_send(&big, 1, RFT_INT64, next, 10, W));
  CHECK_CODE(rft_recv(&small, 1, RFT_INT8, prev, 10, W, &st), RFT_ERR_TRUNCATE);
}

static void Collectives(void) {
  CHECK_OK(rft_barrier(W));
  int data[1000];
  for (int i = 0; i < 1000; ++i) data[i] = g_rank == g_size - 1 ? i * 3 : -1;
  CHECK_OK(rft_bcast(data, 1000, RFT_INT, g_size - 1, W));
  for (int i = 0; i < 1000; ++i) CHECK(data[i] == i * 3, "bcast [%d] = %d", i, data[i]);

  long sum = 0, mine = g_rank + 1;
  CHECK_OK(rft_allreduce(&mine, &sum, 1, RFT_LONG, RFT_SUM, W));
  CHECK(sum == (long)g_size * (g_size + 1) / 2, "allreduce sum %ld", sum);
  double x = 1.0 / (g_rank + 3);
  CHECK_OK(rft_allreduce(RFT_IN_PLACE, &x, 1, RFT_DOUBLE, RFT_SUM, W));
  /* every rank holds the same bits */
  double all[64];
  CHECK(g_size <= 64, "too many ranks for this check");
  CHECK_OK(rft_allgather(&x, 1, RFT_DOUBLE, all, W));
  for (int r = 0; r < g_size; ++r)
    CHECK(memcmp(&all[r], &x, sizeof x) == 0, "rank %d's sum differs", r);
  int max_rank = -1;
  CHECK_OK(rft_allreduce(&g_rank, &max_rank, 1, RFT_INT, RFT_MAX, W));
  CHECK(max_rank == g_size - 1, "max %d", max_rank);
  int product = -1, two = 2;
  CHECK_OK(rft_reduce(&two, &product, 1, RFT_INT, RFT_PROD, 0, W));
  if (g_rank == 0) CHECK(product == 1 << g_size, "reduce product %d", product);
  int ranks[64];
  CHECK_OK(rft_allgather(&g_rank, 1, RFT_INT, ranks, W));
  for (int r = 0; r < g_size; ++r) CHECK(ranks[r] == r, "allgather [%d] = %d", r, ranks[r]);
}

static void Communicators(void) {
  rft_comm_t dup;
  CHECK_OK(rft_comm_dup(W, &dup));
  int result = -1, rank = -1;
  CHECK_OK(rft_comm_compare(W, dup, &result));
  CHECK(result == RFT_CONGRUENT, "compare %d", result);
  CHECK_OK(rft_comm_rank(dup, &rank));
  CHECK(rank == g_rank, "dup rank %d", rank);
  /* a message on the duplicate is not seen on world */
  const int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
  int token = 5, in = 0, flag = 1;
  CHECK_OK(rft_send(&token, 1, RFT_INT, next, 1, dup));
  CHECK_OK(rft_barrier(dup));
  CHECK_OK(rft_iprobe(prev, 1, W, &flag, RFT_STATUS_IGNORE));
  CHECK(flag == 0, "a message on the duplicate matched on world");
  CHECK_OK(rft_recv(&in, 1, RFT_INT, prev, 1, dup, RFT_STATUS_IGNORE));

  /* split by parity, reversed by key */
  rft_comm_t half;
  CHECK_OK(rft_comm_split(W, g_rank % 2, -g_rank, &half));
  int half_size = 0;
  CHECK_OK(rft_comm_size(half, &half_size));
  CHECK_OK(rft_comm_rank(half, &rank));
  CHECK(half_size == (g_size - g_rank % 2 + 1) / 2, "split size %d", half_size);
  CHECK(rank == half_size - 1 - g_rank / 2, "split rank %d, expected %d", rank,
        half_size - 1 - g_rank / 2);
  long one = 1, count = 0;
  CHECK_OK(rft_allreduce(&one, &count, 1, RFT_LONG, RFT_SUM, half));
  CHECK(count == half_size, "allreduce over the split %ld", count);

  rft_comm_t undefined;
  CHECK_OK(rft_comm_split(W, g_rank == 0 ? RFT_UNDEFINED : 1, 0, &undefined));
  CHECK((g_rank == 0) == (undefined == RFT_COMM_NULL), "UNDEFINED color gave a communicator");

  /* create from a group without rank 0 */
  rft_group_t world_group, without_zero;
  CHECK_OK(rft_comm_group(W, &world_group));
  const int zero = 0;
  CHECK_OK(rft_group_excl(world_group, 1, &zero, &without_zero));
  int group_rank = -2;
  CHECK_OK(rft_group_rank(without_zero, &group_rank));
  CHECK(group_rank == (g_rank == 0 ? RFT_UNDEFINED : g_rank - 1), "group rank %d", group_rank);
  int translated = -2, mine = g_rank;
  CHECK_OK(rft_group_translate_ranks(world_group, 1, &mine, without_zero, &translated));
  CHECK(translated == group_rank, "translated %d", translated);
  rft_comm_t created;
  CHECK_OK(rft_comm_create(W, without_zero, &created));
  CHECK((g_rank == 0) == (created == RFT_COMM_NULL), "create at rank %d", g_rank);
  if (created != RFT_COMM_NULL) {
    CHECK_OK(rft_barrier(created));
    CHECK_OK(rft_comm_free(&created));
  }
  /* a freed group is refused by value at this member, and by every member together */
  rft_group_t stale_group = without_zero;
  CHECK_OK(rft_group_free(&without_zero));
  rft_comm_t refused = RFT_COMM_NULL;
  CHECK_CODE(rft_comm_create(W, g_rank == 0 ? stale_group : world_group, &refused), RFT_ERR_ARG);
  CHECK(Contains(rft_last_error_message(), g_rank == 0 ? "freed" : "another member"), "message: %s",
        rft_last_error_message());
  CHECK_OK(rft_group_free(&world_group));
  CHECK(world_group == RFT_GROUP_NULL, "group handle not reset");

  /* freed handles are refused by value */
  rft_comm_t stale = dup;
  CHECK_OK(rft_comm_free(&dup));
  CHECK(dup == RFT_COMM_NULL, "handle not reset");
  CHECK_CODE(rft_barrier(stale), RFT_ERR_ARG);
  CHECK(Contains(rft_last_error_message(), "freed"), "message: %s", rft_last_error_message());
  CHECK_OK(rft_comm_free(&half));
  if (undefined != RFT_COMM_NULL) CHECK_OK(rft_comm_free(&undefined));
  CHECK_CODE(rft_comm_free(&(rft_comm_t){W}), RFT_ERR_ARG);

  /* more communicators over time than may live at once: contexts are reused */
  for (int i = 0; i < 2100; ++i) {
    rft_comm_t c;
    CHECK_OK(rft_comm_dup(W, &c));
    CHECK_OK(rft_comm_free(&c));
  }
  CHECK_OK(rft_comm_dup(W, &dup));
  CHECK_OK(
      rft_sendrecv(&token, 1, RFT_INT, next, 3, &in, 1, RFT_INT, prev, 3, dup, RFT_STATUS_IGNORE));
  CHECK_OK(rft_comm_free(&dup));
}

static int g_handler_calls = 0;
static int g_handler_code = 0;
static void CountingHandler(rft_comm_t comm, int error, const char* message, void* data) {
  (void)message;
  CHECK(comm == W && data == &g_handler_calls, "handler got another communicator or data");
  ++g_handler_calls;
  g_handler_code = error;
}

/* A handler that calls rft, as a ULFM handler does: its message must live through the call
 * (the inner errors rewrite rft's last-error text) and the handler it replaces stays alive. */
static int g_reentrant_ok = 0;
static void ReentrantHandler(rft_comm_t comm, int error, const char* message, void* data) {
  (void)error;
  (void)data;
  char saved[512];
  snprintf(saved, sizeof saved, "%s", message);
  CHECK_CODE(rft_barrier(RFT_COMM_NULL), RFT_ERR_ARG); /* to COMM_SELF's handler: RETURN */
  CHECK_CODE(rft_comm_split(RFT_COMM_NULL, -4, 0, &(rft_comm_t){RFT_COMM_NULL}), RFT_ERR_ARG);
  CHECK_OK(rft_comm_set_errhandler(comm, RFT_ERRORS_RETURN)); /* drops this handler's last use */
  CHECK(strcmp(saved, message) == 0, "the message changed under the handler: '%s' was '%s'",
        message, saved);
  CHECK(Contains(message, "tag -9"), "message: %s", message);
  g_reentrant_ok = 1;
}

static void BadArguments(void) {
  int value = 0;
  CHECK_CODE(rft_send(&value, 1, RFT_INT, g_size, 0, W), RFT_ERR_ARG);
  char expected[64];
  snprintf(expected, sizeof expected, "rank %d", g_size);
  CHECK(Contains(rft_last_error_message(), expected), "message: %s", rft_last_error_message());
  CHECK_CODE(rft_send(&value, 1, RFT_INT, 0, -5, W), RFT_ERR_ARG);
  CHECK(Contains(rft_last_error_message(), "tag -5"), "message: %s", rft_last_error_message());
  CHECK_CODE(rft_recv(&value, 1, RFT_INT, -7, 0, W, RFT_STATUS_IGNORE), RFT_ERR_ARG);
  CHECK_CODE(rft_send(&value, 1, (rft_datatype_t)77, 0, 0, W), RFT_ERR_ARG);
  CHECK(Contains(rft_last_error_message(), "datatype 77"), "message: %s", rft_last_error_message());
  CHECK_CODE(rft_allreduce(&value, &value, 1, RFT_INT, (rft_op_t)99, W), RFT_ERR_ARG);
  CHECK(Contains(rft_last_error_message(), "op 99"), "message: %s", rft_last_error_message());
  double d = 0;
  CHECK_CODE(rft_allreduce(&d, &d, 1, RFT_DOUBLE, RFT_BXOR, W), RFT_ERR_ARG);
  CHECK_CODE(rft_barrier(RFT_COMM_NULL), RFT_ERR_ARG);
  CHECK_CODE(rft_bcast(&value, 1, RFT_INT, g_size + 3, W), RFT_ERR_ARG);
  CHECK_CODE(rft_comm_split(W, -4, 0, &(rft_comm_t){RFT_COMM_NULL}), RFT_ERR_ARG);
  CHECK(Contains(rft_last_error_message(), "color -4"), "message: %s", rft_last_error_message());
  CHECK_CODE(rft_comm_ack_failed(W, -1, NULL), RFT_ERR_ARG);
  CHECK_CODE(rft_init(NULL, NULL, RFT_FT_NOTIFY, NULL), RFT_ERR_OTHER);

  /* a user handler sees the error and the caller still gets the code */
  rft_errhandler_t counting;
  CHECK_OK(rft_comm_create_errhandler(CountingHandler, &g_handler_calls, &counting));
  CHECK_OK(rft_comm_set_errhandler(W, counting));
  CHECK_OK(rft_errhandler_free(&counting)); /* world keeps it alive */
  CHECK_CODE(rft_send(&value, 1, RFT_INT, -3, 0, W), RFT_ERR_ARG);
  CHECK(g_handler_calls == 1 && g_handler_code == RFT_ERR_ARG, "handler calls %d code %d",
        g_handler_calls, g_handler_code);
  rft_errhandler_t reentrant;
  CHECK_OK(rft_comm_create_errhandler(ReentrantHandler, NULL, &reentrant));
  CHECK_OK(rft_comm_set_errhandler(W, reentrant));
  CHECK_OK(rft_errhandler_free(&reentrant));
  CHECK_CODE(rft_send(&value, 1, RFT_INT, 0, -9, W), RFT_ERR_ARG);
  CHECK(g_reentrant_ok, "the re-entrant handler did not finish");
  CHECK_OK(rft_comm_set_errhandler(W, RFT_ERRORS_RETURN));
}

/* A request completes once: a wait on the handle it cleared is a no-op; a copy of the handle is
 * stale and refused (RFT_ERR_ARG), also once its slot serves a new request. Under ASan a missing
 * check is a use of freed pool memory or a double release. */
static void StaleRequests(void) {
  int sent = g_rank, got = -1;
  rft_request_t send, recv, copy, spare;
  CHECK_OK(rft_irecv(&got, 1, RFT_INT, 0, 7, RFT_COMM_SELF, &recv));
  CHECK_OK(rft_isend(&sent, 1, RFT_INT, 0, 7, RFT_COMM_SELF, &send));
  copy = recv;
  CHECK_OK(rft_wait(&recv, RFT_STATUS_IGNORE));
  CHECK(recv == RFT_REQUEST_NULL && got == g_rank, "wait left %p, got %d", (void*)recv, got);
  CHECK_OK(rft_wait(&recv, RFT_STATUS_IGNORE)); /* a second wait: the null request */
  CHECK_OK(rft_wait(&send, RFT_STATUS_IGNORE));
  CHECK_CODE(rft_wait(&copy, RFT_STATUS_IGNORE), RFT_ERR_ARG);
  CHECK(Contains(rft_last_error_message(), "stale"), "message: %s", rft_last_error_message());
  int flag = 0;
  CHECK_CODE(rft_test(&copy, &flag, RFT_STATUS_IGNORE), RFT_ERR_ARG);
  CHECK_CODE(rft_cancel(&copy), RFT_ERR_ARG);
  /* the slot serves new requests (last in, first out); the old handle still names nothing */
  got = -1;
  CHECK_OK(rft_irecv(&got, 1, RFT_INT, 0, 8, RFT_COMM_SELF, &recv));
  CHECK_OK(rft_irecv(&got, 1, RFT_INT, 0, 9, RFT_COMM_SELF, &spare));
  rft_request_t pair[2] = {spare, copy};
  CHECK_CODE(rft_waitall(2, pair, RFT_STATUSES_IGNORE), RFT_ERR_ARG);
  CHECK(Contains(rft_last_error_message(), "index 1"), "message: %s", rft_last_error_message());
  CHECK_CODE(rft_wait(&copy, RFT_STATUS_IGNORE), RFT_ERR_ARG);
  CHECK_OK(rft_cancel(&spare));
  CHECK_OK(rft_wait(&spare, RFT_STATUS_IGNORE));
  CHECK_OK(rft_send(&sent, 1, RFT_INT, 0, 8, RFT_COMM_SELF));
  CHECK_OK(rft_wait(&recv, RFT_STATUS_IGNORE));
  CHECK(got == g_rank, "the request in the reused slot got %d", got);
}

/* MPI's free: a communicator freed with requests pending goes once they complete; they complete
 * as usual. Done more times than there are context pairs, so a free that never happened shows. */
static void FreeWithPendingRequests(void) {
  enum { kRounds = 2100, kInts = 16384 }; /* 64 KiB: past the eager limit, the send stays pending */
  static int sent[kInts], got[kInts];
  const int next = (g_rank + 1) % g_size, prev = (g_rank + g_size - 1) % g_size;
  for (int round = 0; round < kRounds; ++round) {
    rft_comm_t dup, copy;
    CHECK_OK(rft_comm_dup(W, &dup));
    for (int i = 0; i < kInts; ++i) sent[i] = g_rank * 7919 + round + i;
    rft_request_t requests[2];
    CHECK_OK(rft_irecv(got, kInts, RFT_INT, prev, 3, dup, &requests[0]));
    CHECK_OK(rft_isend(sent, kInts, RFT_INT, next, 3, dup, &requests[1]));
    copy = dup;
    CHECK_OK(rft_comm_free(&dup));
    CHECK(dup == RFT_COMM_NULL, "free left the handle");
    CHECK_CODE(rft_barrier(copy), RFT_ERR_ARG); /* freed for the program at once */
    CHECK_OK(rft_waitall(2, requests, RFT_STATUSES_IGNORE));
    for (int i = 0; i < kInts; i += 1021) {
      CHECK(got[i] == prev * 7919 + round + i, "round %d: got[%d] = %d", round, i, got[i]);
    }
  }
}

/* The calls an Open MPI ULFM user looks for: the empty group, the granted level, names, range
 * groups, testany/waitsome/testsome, counts in elements. */
static void MoreCalls(void) {
  int size = -1, level = -1;
  CHECK_OK(rft_group_size(RFT_GROUP_EMPTY, &size));
  CHECK(size == 0, "RFT_GROUP_EMPTY has %d members", size);
  rft_group_t empty = RFT_GROUP_EMPTY;
  CHECK_CODE(rft_group_free(&empty), RFT_ERR_ARG);
  CHECK_OK(rft_query_ft_level(&level));
  CHECK(level == RFT_FT_NOTIFY, "level %d", level);

  rft_comm_t dup;
  CHECK_OK(rft_comm_dup(W, &dup));
  char name[RFT_MAX_OBJECT_NAME];
  int length = -1;
  CHECK_OK(rft_comm_get_name(W, name, &length));
  CHECK(strcmp(name, "COMM_WORLD") == 0 && length == 10, "world is named '%s' (%d)", name, length);
  CHECK_OK(rft_comm_set_name(dup, "solver rows"));
  CHECK_OK(rft_comm_get_name(dup, name, &length));
  CHECK(strcmp(name, "solver rows") == 0 && length == 11, "name '%s' (%d)", name, length);
  char long_name[200];
  memset(long_name, 'x', sizeof long_name - 1);
  long_name[sizeof long_name - 1] = '\0';
  CHECK_CODE(rft_comm_set_name(dup, long_name), RFT_ERR_ARG);
  CHECK(Contains(rft_last_error_message(), "199 bytes"), "message: %s", rft_last_error_message());
  /* errors name the communicator by its name */
  int value = 0;
  CHECK_OK(rft_comm_set_errhandler(dup, RFT_ERRORS_RETURN));
  CHECK_CODE(rft_send(&value, 1, RFT_INT, g_size, 0, dup), RFT_ERR_ARG);
  CHECK(Contains(rft_last_error_message(), "solver rows"), "message: %s", rft_last_error_message());
  CHECK_OK(rft_comm_free(&dup));

  /* ranges: the even ranks, counted down; everyone but rank 0 */
  rft_group_t world, evens, rest;
  CHECK_OK(rft_comm_group(W, &world));
  const int last_even = (g_size - 1) / 2 * 2;
  const int down[1][3] = {{last_even, 0, -2}};
  CHECK_OK(rft_group_range_incl(world, 1, down, &evens));
  CHECK_OK(rft_group_size(evens, &size));
  CHECK(size == last_even / 2 + 1, "range_incl: %d members", size);
  int first = -1, zero = 0;
  CHECK_OK(rft_group_translate_ranks(evens, 1, &zero, world, &first));
  CHECK(first == last_even, "range_incl's first member is world rank %d", first);
  const int head[1][3] = {{0, 0, 1}};
  CHECK_OK(rft_group_range_excl(world, 1, head, &rest));
  CHECK_OK(rft_group_size(rest, &size));
  CHECK(size == g_size - 1, "range_excl: %d members", size);
  CHECK_OK(rft_group_free(&rest));
  const int zero_stride[1][3] = {{0, 0, 0}};
  CHECK_CODE(rft_group_range_incl(world, 1, zero_stride, &rest), RFT_ERR_ARG);
  const int away[1][3] = {{0, g_size - 1, -1}};
  if (g_size > 1) CHECK_CODE(rft_group_range_incl(world, 1, away, &rest), RFT_ERR_ARG);
  const int beyond[1][3] = {{0, g_size, 1}};
  CHECK_CODE(rft_group_range_incl(world, 1, beyond, &rest), RFT_ERR_ARG);
  CHECK_OK(rft_group_free(&evens));
  CHECK_OK(rft_group_free(&world));

  /* testany, testsome, waitsome over messages to self */
  int got[3] = {-1, -1, -1}, sent[3] = {10, 11, 12}, index = -7, flag = -1, outcount = -1;
  int indices[3];
  rft_status_t statuses[3], status;
  rft_request_t requests[3];
  for (int i = 0; i < 3; ++i) {
    CHECK_OK(rft_irecv(&got[i], 1, RFT_INT, 0, 20 + i, RFT_COMM_SELF, &requests[i]));
  }
  CHECK_OK(rft_testany(3, requests, &index, &flag, &status));
  CHECK(flag == 0 && index == RFT_UNDEFINED, "testany with nothing sent: flag %d index %d", flag,
        index);
  CHECK_OK(rft_testsome(3, requests, &outcount, indices, statuses));
  CHECK(outcount == 0, "testsome with nothing sent: %d", outcount);
  CHECK_OK(rft_send(&sent[1], 1, RFT_INT, 0, 21, RFT_COMM_SELF));
  flag = 0;
  for (int spins = 0; !flag && spins < 1000000; ++spins) {
    CHECK_OK(rft_testany(3, requests, &index, &flag, &status));
  }
  CHECK(flag == 1 && index == 1 && got[1] == 11 && requests[1] == RFT_REQUEST_NULL,
        "testany: flag %d index %d got %d", flag, index, got[1]);
  int elements = -1;
  CHECK_OK(rft_get_count(&status, RFT_INT, &elements));
  CHECK(elements == 1, "get_count: %d ints", elements);
  CHECK_OK(rft_get_count(&status, RFT_DOUBLE, &elements));
  CHECK(elements == RFT_UNDEFINED, "4 bytes as doubles: %d", elements);
  CHECK_OK(rft_send(&sent[0], 1, RFT_INT, 0, 20, RFT_COMM_SELF));
  CHECK_OK(rft_send(&sent[2], 1, RFT_INT, 0, 22, RFT_COMM_SELF));
  int done = 0;
  while (done < 2) {
    CHECK_OK(rft_waitsome(3, requests, &outcount, indices, statuses));
    CHECK(outcount >= 1 && outcount <= 2 - done, "waitsome: %d", outcount);
    for (int i = 0; i < outcount; ++i) {
      CHECK(got[indices[i]] == sent[indices[i]] && statuses[i].tag == 20 + indices[i],
            "waitsome: request %d got %d tag %d", indices[i], got[indices[i]], statuses[i].tag);
    }
    done += outcount;
  }
  CHECK_OK(rft_waitsome(3, requests, &outcount, indices, statuses));
  CHECK(outcount == RFT_UNDEFINED, "waitsome with every handle null: %d", outcount);
  CHECK_OK(rft_testany(3, requests, &index, &flag, &status));
  CHECK(flag == 1 && index == RFT_UNDEFINED, "testany, all null: flag %d index %d", flag, index);
}

static void Basics(void) {
  CHECK_OK(rft_comm_set_errhandler(W, RFT_ERRORS_RETURN));
  /* errors with no communicator (a null or freed handle) go to COMM_SELF's handler */
  CHECK_OK(rft_comm_set_errhandler(RFT_COMM_SELF, RFT_ERRORS_RETURN));
  PointToPoint();
  Collectives();
  Communicators();
  BadArguments();
  StaleRequests();
  FreeWithPendingRequests();
  MoreCalls();
  CHECK_OK(rft_barrier(W));
}

/* ---- pending: rank 0 receives, rank 1 sends, rank 2 dies ---- */

static void Pending(void) {
  CHECK(g_size == 3, "pending needs 3 ranks, not %d", g_size);
  CHECK_OK(rft_comm_set_errhandler(W, RFT_ERRORS_RETURN));
  rft_comm_t spare; /* a second view of the same failure, not acknowledged */
  CHECK_OK(rft_comm_dup(W, &spare));
  CHECK_OK(rft_comm_set_errhandler(spare, RFT_ERRORS_RETURN));
  int go = 1;
  if (g_rank == 2) {
    /* dies once rank 0 has posted its receives */
    CHECK_OK(rft_recv(&go, 1, RFT_INT, 0, 1, W, RFT_STATUS_IGNORE));
    raise(SIGKILL);
  }
  if (g_rank == 1) {
    CHECK_OK(rft_recv(&go, 1, RFT_INT, 0, 2, W, RFT_STATUS_IGNORE));
    const int first = 101, second = 102;
    CHECK_OK(rft_send(&first, 1, RFT_INT, 0, 5, W));
    CHECK_OK(rft_send(&second, 1, RFT_INT, 0, 5, W));
    /* world has a failed member: a collective fails, and never hangs */
    CHECK_CODE(rft_barrier(W), RFT_ERR_PROC_FAILED);
    return;
  }
  int a = 0, b = 0;
  rft_request_t requests[2];
  rft_status_t statuses[2];
  CHECK_OK(rft_irecv(&a, 1, RFT_INT, RFT_ANY_SOURCE, 5, W, &requests[0]));
  CHECK_OK(rft_irecv(&b, 1, RFT_INT, 1, 5, W, &requests[1]));
  CHECK_OK(rft_send(&go, 1, RFT_INT, 2, 1, W));
  /* held: the any-source receive by the unacknowledged failure, the other not done */
  CHECK_CODE(rft_waitall(2, requests, statuses), RFT_ERR_IN_STATUS);
  CHECK(statuses[0].error == RFT_ERR_PROC_FAILED_PENDING && statuses[1].error == RFT_ERR_PENDING,
        "statuses %s, %s", rft_error_name(statuses[0].error), rft_error_name(statuses[1].error));
  CHECK(requests[0] != RFT_REQUEST_NULL && requests[1] != RFT_REQUEST_NULL, "a request was freed");
  CHECK_CODE(rft_wait(&requests[0], RFT_STATUS_IGNORE), RFT_ERR_PROC_FAILED_PENDING);
  /* the dead one, named */
  int dead = 0;
  CHECK_CODE(rft_recv(&dead, 1, RFT_INT, 2, 0, W, RFT_STATUS_IGNORE), RFT_ERR_PROC_FAILED);
  CHECK_CODE(rft_send(&dead, 1, RFT_INT, 2, 0, W), RFT_ERR_PROC_FAILED);
  /* get_failed names it; acknowledge it */
  rft_group_t failed, world_group;
  CHECK_OK(rft_comm_get_failed(W, &failed));
  int failed_size = 0, translated = -1;
  const int zero = 0;
  CHECK_OK(rft_group_size(failed, &failed_size));
  CHECK_OK(rft_comm_group(W, &world_group));
  CHECK_OK(rft_group_translate_ranks(failed, 1, &zero, world_group, &translated));
  CHECK(failed_size == 1 && translated == 2, "failed group size %d, member %d", failed_size,
        translated);
  int acked = -1;
  CHECK_OK(rft_comm_ack_failed(W, 5, &acked));
  CHECK(acked == 1, "acknowledged %d", acked);
  CHECK_OK(rft_comm_ack_failed(W, 0, &acked));
  CHECK(acked == 1, "acknowledgements went back to %d", acked);
  rft_group_t acked_group;
  CHECK_OK(rft_comm_failure_get_acked(W, &acked_group));
  int acked_size = 0;
  CHECK_OK(rft_group_size(acked_group, &acked_size));
  CHECK(acked_size == 1, "acked group size %d", acked_size);
  /* now rank 1 sends: the first message goes to the any-source receive, posted first */
  CHECK_OK(rft_send(&go, 1, RFT_INT, 1, 2, W));
  CHECK_OK(rft_waitall(2, requests, statuses));
  CHECK(a == 101 && b == 102 && statuses[0].source == 1,
        "matched out of order: any-source got %d, named got %d", a, b);
  /* on the other communicator the failure is not acknowledged */
  CHECK_CODE(rft_recv(&a, 1, RFT_INT, RFT_ANY_SOURCE, 0, spare, RFT_STATUS_IGNORE),
             RFT_ERR_PROC_FAILED);
  int flag = 1;
  /* a probe keeps no request to hold, so, as a blocking receive, PROC_FAILED */
  CHECK_CODE(rft_iprobe(RFT_ANY_SOURCE, 0, spare, &flag, RFT_STATUS_IGNORE), RFT_ERR_PROC_FAILED);
  CHECK(Contains(rft_last_error_message(), "acknowledge"), "message: %s", rft_last_error_message());
  CHECK_CODE(rft_probe(RFT_ANY_SOURCE, 0, spare, RFT_STATUS_IGNORE), RFT_ERR_PROC_FAILED);
  CHECK_OK(rft_comm_failure_ack(spare));
  CHECK_OK(rft_iprobe(RFT_ANY_SOURCE, 0, spare, &flag, RFT_STATUS_IGNORE));
  CHECK(flag == 0, "a message appeared");
  CHECK_CODE(rft_barrier(W), RFT_ERR_PROC_FAILED);
  CHECK_CODE(rft_comm_dup(W, &spare), RFT_ERR_PROC_FAILED);
  CHECK_OK(rft_group_free(&failed));
  CHECK_OK(rft_group_free(&acked_group));
  CHECK_OK(rft_group_free(&world_group));
}

/* ---- revoke ---- */

static double Seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void Revoke(int origin) {
  CHECK(origin >= 0 && origin < g_size, "origin %d", origin);
  rft_comm_t comm;
  CHECK_OK(rft_comm_dup(W, &comm));
  CHECK_OK(rft_comm_set_errhandler(comm, RFT_ERRORS_RETURN));
  CHECK_OK(rft_barrier(W));
  int value = 0;
  if (g_rank == origin) {
    int revoked = 1;
    CHECK_OK(rft_comm_is_revoked(comm, &revoked));
    CHECK(revoked == 0, "revoked before the revoke");
    CHECK_OK(rft_comm_revoke(comm));
    CHECK_OK(rft_comm_revoke(comm)); /* idempotent */
  }
  const double start = Seconds();
  CHECK_CODE(rft_recv(&value, 1, RFT_INT, RFT_ANY_SOURCE, 0, comm, RFT_STATUS_IGNORE),
             RFT_ERR_REVOKED);
  const double waited = Seconds() - start;
  int revoked = 0;
  CHECK_OK(rft_comm_is_revoked(comm, &revoked));
  CHECK(revoked == 1, "not revoked after the receive ended REVOKED");
  CHECK_CODE(rft_send(&value, 1, RFT_INT, 0, 0, comm), RFT_ERR_REVOKED);
  CHECK_CODE(rft_barrier(comm), RFT_ERR_REVOKED);
  CHECK_CODE(rft_comm_dup(comm, &(rft_comm_t){RFT_COMM_NULL}), RFT_ERR_REVOKED);
  CHECK_OK(rft_comm_free(&comm));
  CHECK_OK(rft_barrier(W)); /* world is untouched */
  if (g_rank != origin) printf("revoke waited %.1f us\n", waited * 1e6);
}

/* Rank 1 revokes a dup with fault point revoke.one_notice armed: its notice reaches rank 0 alone
 * and it dies before its own flood. Every survivor waits in a named receive from a live member
 * that never sends: only rank 0's relay of the notice (RevokeService) can end rank 2's and 3's
 * with RFT_ERR_REVOKED. */
static void RevokeRelay(void) {
  CHECK(g_size == 4, "4 ranks, not %d", g_size);
  CHECK_OK(rft_comm_set_errhandler(W, RFT_ERRORS_RETURN));
  rft_comm_t comm;
  CHECK_OK(rft_comm_dup(W, &comm));
  CHECK_OK(rft_comm_set_errhandler(comm, RFT_ERRORS_RETURN));
  CHECK_OK(rft_barrier(W));
  /* Rank 1 dies only once every rank is out of the barrier (else it may fail there). */
  int token = 0;
  if (g_rank != 1) CHECK_OK(rft_send(&token, 1, RFT_INT, 1, 78, W));
  if (g_rank == 1) {
    for (int r = 0; r < g_size; ++r) {
      if (r != 1) CHECK_OK(rft_recv(&token, 1, RFT_INT, r, 78, W, RFT_STATUS_IGNORE));
    }
    rft_comm_revoke(comm);
    CHECK(0, "alive after revoke.one_notice");
  }
  static const int kFrom[4] = {2, -1, 3, 0};
  int value = 0;
  CHECK_CODE(rft_recv(&value, 1, RFT_INT, kFrom[g_rank], 0, comm, RFT_STATUS_IGNORE),
             RFT_ERR_REVOKED);
  CHECK_OK(rft_comm_free(&comm));
  /* Nobody leaves while another survivor still waits on it. */
  rft_comm_t survivors;
  CHECK_OK(rft_comm_shrink(W, &survivors));
  CHECK_OK(rft_barrier(survivors));
  CHECK_OK(rft_comm_free(&survivors));
}

/* The ranks from `first_victim` on end themselves (SIGKILL) once every other rank has told them
 * it is past everything before this call: a collective that a victim finished while another
 * rank was still in it may otherwise fail there (ULFM allows that; a test must not depend on
 * luck). */
static void VictimsDieWhenAllAreReady(int first_victim) {
  int token = 0;
  for (int v = first_victim; v < g_size; ++v) {
    if (v != g_rank) CHECK_OK(rft_send(&token, 1, RFT_INT, v, 77, W));
  }
  if (g_rank < first_victim) return;
  for (int r = 0; r < g_size; ++r) {
    if (r != g_rank) CHECK_OK(rft_recv(&token, 1, RFT_INT, r, 77, W, RFT_STATUS_IGNORE));
  }
  raise(SIGKILL);
}

/* ---- fatal: the default handler on world ---- */

static void Fatal(void) {
  CHECK(g_size == 3, "fatal needs 3 ranks");
  CHECK_OK(rft_barrier(W));
  VictimsDieWhenAllAreReady(2);
  /* ERRORS_ARE_FATAL: this does not return */
  rft_barrier(W);
  rft_barrier(W);
  CHECK(0, "a failed collective returned under ERRORS_ARE_FATAL");
}

/* ---- the initial error handler (RFT_INITIAL_ERRHANDLER, rftrun --initial-errhandler) ---- */

static rft_errhandler_t HandlerOf(rft_comm_t comm) {
  rft_errhandler_t handler = NULL;
  CHECK_OK(rft_comm_get_errhandler(comm, &handler));
  const rft_errhandler_t predefined = handler;
  CHECK_OK(rft_errhandler_free(&handler));
  return predefined;
}

static void InitialHandler(const char* kind) {
  const rft_errhandler_t expected = strcmp(kind, "return") == 0  ? RFT_ERRORS_RETURN
                                    : strcmp(kind, "abort") == 0 ? RFT_ERRORS_ABORT
                                                                 : RFT_ERRORS_ARE_FATAL;
  CHECK(HandlerOf(W) == expected, "COMM_WORLD does not start with ERRORS_%s", kind);
  CHECK(HandlerOf(RFT_COMM_SELF) == expected, "COMM_SELF does not start with ERRORS_%s", kind);
  CHECK_OK(rft_barrier(W));
  if (g_rank == 0 && expected != RFT_ERRORS_ABORT) {
    int value = 1;
    const int rc = rft_send(&value, 1, RFT_INT, g_size, 0, W);
    /* only ERRORS_RETURN gets here */
    CHECK(expected == RFT_ERRORS_RETURN, "a send to rank %d returned under ERRORS_ARE_FATAL",
          g_size);
    CHECK_CODE(rc, RFT_ERR_ARG);
    char rank_text[32];
    snprintf(rank_text, sizeof(rank_text), "rank %d", g_size);
    CHECK(Contains(rft_last_error_message(), rank_text), "the message does not name %s", rank_text);
  }
  CHECK_OK(rft_barrier(W));
}

/* Before rft_init: a bad name is refused, and nothing is left half initialised. */
static void RefusedInitialHandler(void) {
  CHECK(setenv("RFT_INITIAL_ERRHANDLER", "mpi_errors_ignore", 1) == 0, "setenv");
  int provided = -1;
  CHECK_CODE(rft_init(NULL, NULL, RFT_FT_NOTIFY, &provided), RFT_ERR_ARG);
  CHECK(Contains(rft_last_error_message(), "RFT_INITIAL_ERRHANDLER=\"mpi_errors_ignore\""),
        "the message does not name the value");
  int flag = 1;
  CHECK_OK(rft_initialized(&flag));
  CHECK(flag == 0, "initialised after a refused rft_init");
  CHECK(unsetenv("RFT_INITIAL_ERRHANDLER") == 0, "unsetenv");
}

/* ---- fault levels: ASYNC calls back once per failure; NONE ends the job ---- */

static void Async(void) {
  CHECK_OK(rft_comm_set_errhandler(W, RFT_ERRORS_RETURN));
  CHECK_OK(rft_barrier(W));
  VictimsDieWhenAllAreReady(g_size - 1);
  const double start = Seconds();
  while (__atomic_load_n(&g_async_calls, __ATOMIC_SEQ_CST) == 0) {
    CHECK(Seconds() - start < 20, "no failure callback within 20 s");
    int flag = 0;
    CHECK_OK(rft_iprobe(0, 999, W, &flag, RFT_STATUS_IGNORE)); /* progress */
  }
  /* a moment for a second call, which must not come */
  const double settle = Seconds();
  while (Seconds() - settle < 0.2) {
  }
  const int calls = __atomic_load_n(&g_async_calls, __ATOMIC_SEQ_CST);
  const int rank = __atomic_load_n(&g_async_rank, __ATOMIC_SEQ_CST);
  CHECK(calls == 1 && rank == g_size - 1, "%d calls, last for rank %d", calls, rank);
}

static void NoneLevel(void) {
  CHECK_OK(rft_barrier(W));
  VictimsDieWhenAllAreReady(g_size - 1);
  /* the launcher ends this process; until then it waits */
  const double start = Seconds();
  while (Seconds() - start < 20) {
    int flag = 0;
    rft_iprobe(0, 999, W, &flag, RFT_STATUS_IGNORE);
  }
  CHECK(0, "still alive 20 s after a failure at fault level NONE");
}

/* ---- scope: world in halves A = {0, 1} and B = {2, 3}; an error on A at rank 0 with A's
 * handler ERRORS_ARE_FATAL (every process ends) or ERRORS_ABORT (only A's) ---- */

static void HandlerScope(const char* kind) {
  CHECK(g_size == 4, "scope needs 4 ranks");
  CHECK_OK(rft_comm_set_errhandler(W, RFT_ERRORS_RETURN));
  rft_comm_t half;
  CHECK_OK(rft_comm_split(W, g_rank / 2, 0, &half));
  CHECK_OK(rft_comm_set_errhandler(
      half, strcmp(kind, "fatal") == 0 ? RFT_ERRORS_ARE_FATAL : RFT_ERRORS_ABORT));
  /* Rank 0 may leave the barrier, and its handler's abort end a member, before a slower member
   * (under TSan) has left it: that one then sees the failure here, and waits below as the
   * others do. */
  const int fenced = rft_barrier(W);
  CHECK(fenced == RFT_SUCCESS ||
            (g_rank != 0 && (fenced == RFT_ERR_PROC_FAILED || fenced == RFT_ERR_PROC_ABORTED)),
        "barrier: %s", rft_error_name(fenced));
  int value = 0;
  if (g_rank == 0) {
    rft_send(&value, 1, RFT_INT, 9, 0, half); /* rank 9 of 2: the handler ends the scope */
    CHECK(0, "the %s handler returned", kind);
  }
  /* Everyone else waits for a message rank 0 never sends. An abort is not atomic: a process it
   * ends may first see another one it ended fail. So rank 1 (half A) waits on, to be killed;
   * half B works on for half a second before it says it went on, time for an abort of the whole
   * job to reach it too. */
  const int rc = rft_recv(&value, 1, RFT_INT, 0, 5, W, RFT_STATUS_IGNORE);
  const int aborted = strcmp(kind, "abort") == 0;
  if (g_rank < 2 || !aborted) {
    CHECK(rc == RFT_ERR_PROC_FAILED || rc == RFT_ERR_PROC_ABORTED, "recv returned %s",
          rft_error_name(rc));
  } else {
    /* Rank 0 announced the abort (a reliable broadcast, sent before the launcher acted), so
     * half B comes to know A's failures as aborts (MPI-4's MPI_ERR_PROC_ABORTED). The failure
     * itself may reach it first (the receive above says PROC_FAILED then); the announcement
     * follows within milliseconds: a collective on world says PROC_ABORTED within 5 s. */
    CHECK(rc == RFT_ERR_PROC_FAILED || rc == RFT_ERR_PROC_ABORTED, "recv returned %s",
          rft_error_name(rc));
    int barrier_rc = RFT_SUCCESS;
    for (int tries = 0; (barrier_rc = rft_barrier(W)) != RFT_ERR_PROC_ABORTED && tries < 5000;
         ++tries) {
      CHECK(barrier_rc == RFT_ERR_PROC_FAILED, "barrier on world returned %s",
            rft_error_name(barrier_rc));
      nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 1000000}, NULL);
    }
    CHECK_CODE(barrier_rc, RFT_ERR_PROC_ABORTED);
    printf("half B sees the abort rank=%d\n", g_rank);
  }
  if (g_rank < 2) {
    nanosleep(&(struct timespec){.tv_sec = 10, .tv_nsec = 0}, NULL);
    CHECK(0, "rank %d of half A outlived the abort by 10 s", g_rank);
  }
  CHECK_OK(rft_barrier(half)); /* half B works on */
  nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 500000000}, NULL);
  CHECK_OK(rft_barrier(half));
  printf("half B goes on rank=%d\n", g_rank);
  CHECK_OK(rft_comm_free(&half));
}

/* ---- abort: rank 1 aborts world; its launcher refuses (RFT_FAULT_INJECT=abort.refused@1) ---- */

static void AbortRefused(void) {
  CHECK(g_size == 3, "abort needs 3 ranks");
  CHECK_OK(rft_comm_set_errhandler(W, RFT_ERRORS_RETURN));
  /* Rank 1 may leave the barrier and kill rank 0 before rank 2 is out of it (seen under ASan):
   * there the barrier reports the abort's first victim. */
  const int opened = rft_barrier(W);
  CHECK(opened == RFT_SUCCESS || (g_rank != 1 && opened == RFT_ERR_PROC_FAILED),
        "opening barrier returned %s", rft_error_name(opened));
  if (g_rank == 1) {
    rft_abort(W, 7);
    CHECK(0, "rft_abort returned");
  }
  /* Killed here by rank 1's last resort; a survivor would see PROC_FAILED and say so. */
  int value = 0;
  const int rc = rft_recv(&value, 1, RFT_INT, 1, 5, W, RFT_STATUS_IGNORE);
  printf("outlived the abort (receive returned %d)\n", rc);
  fflush(stdout);
  exit(0);
}

/* ---- iagrees: any number outstanding, members far apart ---- */

static void ManyIagrees(void) {
  enum { kAgreements = 100 };
  rft_comm_t dup;
  CHECK_OK(rft_comm_dup(W, &dup));
  CHECK_OK(rft_comm_set_errhandler(dup, RFT_ERRORS_RETURN));
  if (g_rank == 0) nanosleep(&(struct timespec){.tv_sec = 0, .tv_nsec = 500000000}, NULL);
  static int flags[kAgreements];
  static rft_request_t requests[kAgreements];
  for (int i = 0; i < kAgreements; ++i) {
    /* agreement i: every member's flag has bit (i % 30) and the member's own bit 30 set except at
     * the last member, so the AND is exactly bit (i % 30) */
    flags[i] = (1 << (i % 30)) | (g_rank == g_size - 1 ? 0 : 1 << 30);
    CHECK_OK(rft_comm_iagree(dup, &flags[i], &requests[i]));
  }
  CHECK_OK(rft_waitall(kAgreements, requests, RFT_STATUSES_IGNORE));
  for (int i = 0; i < kAgreements; ++i) {
    CHECK(flags[i] == 1 << (i % 30), "agreement %d: flag %#x", i, (unsigned)flags[i]);
  }
  CHECK_OK(rft_comm_free(&dup));
}

/* ---- finalize after failures ---- */

static void FinalizeAfter(int victims) {
  CHECK(victims >= 0 && victims < g_size, "victims %d", victims);
  CHECK_OK(rft_comm_set_errhandler(W, RFT_ERRORS_RETURN));
  CHECK_OK(rft_barrier(W));
  VictimsDieWhenAllAreReady(g_size - victims);
}

/* ---- parting: what a finalizing sender sent still arrives ---- */

enum { kPartingEager = 600, kPartingEagerInts = 256, kPartingLargeInts = 64 * 1024 };

static int PartingValue(int sender, int message, int i) {
  return sender * 1000003 + message * 7 + i;
}

static void Parting(void) {
  CHECK(g_size >= 2, "parting needs 2 ranks or more");
  const int receiver = g_size - 1;
  static int large[kPartingLargeInts];
  int eager[kPartingEagerInts];
  if (g_rank != receiver) {
    for (int i = 0; i < kPartingLargeInts; ++i) large[i] = PartingValue(g_rank, -1, i);
    rft_request_t request = RFT_REQUEST_NULL;
    CHECK_OK(rft_isend(large, kPartingLargeInts, RFT_INT, receiver, 1, W, &request));
    /* Eager sends complete once handed to the transport: the last ones may still be on their way
     * when this rank finalizes, and must arrive all the same. */
    for (int m = 0; m < kPartingEager; ++m) {
      for (int i = 0; i < kPartingEagerInts; ++i) eager[i] = PartingValue(g_rank, m, i);
      CHECK_OK(rft_send(eager, kPartingEagerInts, RFT_INT, receiver, 2, W));
    }
    CHECK_OK(rft_wait(&request, RFT_STATUS_IGNORE));
    return; /* Finish finalizes at once */
  }
  /* Late on purpose (not a fault injection: any lateness must work, this one makes the senders'
   * finalize come first in the usual run). */
  const double start = Seconds();
  while (Seconds() - start < 0.5) {
    struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
  }
  for (int sender = 0; sender < receiver; ++sender) {
    CHECK_OK(rft_recv(large, kPartingLargeInts, RFT_INT, sender, 1, W, RFT_STATUS_IGNORE));
    for (int i = 0; i < kPartingLargeInts; ++i) {
      CHECK(large[i] == PartingValue(sender, -1, i), "large message from rank %d: int %d is %d",
            sender, i, large[i]);
    }
    for (int m = 0; m < kPartingEager; ++m) {
      CHECK_OK(rft_recv(eager, kPartingEagerInts, RFT_INT, sender, 2, W, RFT_STATUS_IGNORE));
      for (int i = 0; i < kPartingEagerInts; ++i) {
        CHECK(eager[i] == PartingValue(sender, m, i), "eager message %d from rank %d: int %d is %d",
              m, sender, i, eager[i]);
      }
    }
  }
}

int main(int argc, char** argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: api_worker basics|pending|revoke ORIGIN|fatal|finalize K|parting|async|none|"
            "initial HANDLER|initial-bad\n");
    return 2;
  }
  setvbuf(stdout, NULL, _IOLBF, 0);
  const char* mode = argv[1];
  if (strcmp(mode, "initial-bad") == 0) RefusedInitialHandler();
  Start(strcmp(mode, "async") == 0  ? RFT_FT_ASYNC
        : strcmp(mode, "none") == 0 ? RFT_FT_NONE
                                    : RFT_FT_NOTIFY);
  if (strcmp(mode, "basics") == 0) {
    Basics();
  } else if (strcmp(mode, "pending") == 0) {
    Pending();
  } else if (strcmp(mode, "revoke") == 0 && argc == 3) {
    Revoke(atoi(argv[2]));
  } else if (strcmp(mode, "revoke-relay") == 0) {
    RevokeRelay();
  } else if (strcmp(mode, "fatal") == 0) {
    Fatal();
  } else if (strcmp(mode, "finalize") == 0 && argc == 3) {
    FinalizeAfter(atoi(argv[2]));
  } else if (strcmp(mode, "parting") == 0) {
    Parting();
  } else if (strcmp(mode, "scope") == 0 && argc == 3) {
    HandlerScope(argv[2]);
  } else if (strcmp(mode, "iagrees") == 0) {
    ManyIagrees();
  } else if (strcmp(mode, "abort") == 0) {
    AbortRefused();
  } else if (strcmp(mode, "async") == 0) {
    Async();
  } else if (strcmp(mode, "none") == 0) {
    NoneLevel();
  } else if (strcmp(mode, "initial") == 0 && argc == 3) {
    InitialHandler(argv[2]);
  } else if (strcmp(mode, "initial-bad") == 0) {
    CHECK(HandlerOf(W) == RFT_ERRORS_ARE_FATAL, "COMM_WORLD does not start with the default");
  } else {
    fprintf(stderr, "api_worker: unknown mode \"%s\"\n", mode);
    return 2;
  }
  Finish(mode);
  return 0;
}
