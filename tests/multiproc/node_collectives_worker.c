/* A C99 program over rft.h: the blocking barrier, bcast, reduce and allreduce that run through a
 * communicator's node area (node_collectives.h) when its members share a node and poll, driven
 * by node_collectives_test.cc. Modes:
 *   mixed SEED CALLS  CALLS collectives of random kind, root, size (some above the area's 1 KiB,
 *                     so messages and the area alternate on one communicator), operator and
 *                     in-place use, on world and a duplicate, each member pausing at random
 *                     (every member draws the same sequence from SEED); every result checked
 *   mixed SEED CALLS small  the same, 15 calls in 16 in stretches of bcasts from one root or
 *                     reduces to one, of at most 8 bytes: the members that run ahead fill the
 *                     area's entries up to the limit, many times around
 *   kill SEED         the same sequence; the last rank kills itself (SIGKILL) before a call
 *                     drawn from SEED: every call of the others returns success with the right
 *                     result or RFT_ERR_PROC_FAILED, and a final barrier returns PROC_FAILED
 *   hang SEED         the same, but the last rank stops itself (SIGSTOP): the detector declares
 *                     it failed
 *   mismatch          bcasts and reduces whose members' lengths differ: RFT_ERR_TRUNCATE
 *   revoke            rank 0 revokes a duplicate of world while the others wait in a barrier, a
 *                     bcast from rank 0 and an allreduce on it: all return RFT_ERR_REVOKED
 *   progress          rank 0's synchronous send of 64 KiB can end only if rank 1 progresses
 *                     the data plane while it waits in a barrier for rank 0
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
#define MAX_COUNT 160 /* longs: 1280 bytes, above the area's 1024 */

static int g_rank, g_size;
static int g_small; /* mostly calls of at most 8 bytes (mixed ... small) */

/* xorshift64*: the same sequence at every member from one seed. */
static uint64_t Next(uint64_t* state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 0x2545F4914F6CDD1DULL;
}

static long Value(int member, int call, size_t i) {
  return (long)((member + 1) * 7919 + call * 31 + (int)i) % 1000 - 500;
}

static void Pause(uint64_t* mine) {
  const uint64_t r = Next(mine) % 8;
  if (r < 5) return;
  struct timespec start, now;
  clock_gettime(CLOCK_MONOTONIC, &start);
  const long ns = (long)(r - 4) * 20000; /* 20..60 us */
  do {
    clock_gettime(CLOCK_MONOTONIC, &now);
  } while ((now.tv_sec - start.tv_sec) * 1000000000L + (now.tv_nsec - start.tv_nsec) < ns);
}

/* Call `call` of the sequence on `comm`: returns the code; checks the result when it succeeded. */
static int OneCall(rft_comm_t comm, uint64_t* shared, int call) {
  int me, n;
  CHECK_OK(rft_comm_rank(comm, &me));
  CHECK_OK(rft_comm_size(comm, &n));
  int kind = (int)(Next(shared) % 4);
  int root = (int)(Next(shared) % (uint64_t)n);
  size_t count =
      (Next(shared) % 8 == 0) ? 129 + Next(shared) % (MAX_COUNT - 128) : Next(shared) % 17;
  if (g_small && Next(shared) % 16 != 0) {
    /* Stretches of 100 calls: bcasts from one root (which runs ahead), or reduces to one (the
     * others run ahead), of 0 or 1 long; a call in 16 stays as drawn above. */
    const int stretch = call / 100;
    kind = stretch % 2 == 0 ? 1 : 2;
    root = (stretch / 2) % n;
    count = Next(shared) % 2;
  }
  const int op_index = (int)(Next(shared) % 3);
  const int in_place = (int)(Next(shared) % 2);
  const rft_op_t ops[] = {RFT_SUM, RFT_MAX, RFT_MIN};
  long send[MAX_COUNT], receive[MAX_COUNT];
  for (size_t i = 0; i < count; ++i) {
    send[i] = Value(me, call, i);
    receive[i] = -1;
  }
  int rc;
  switch (kind) {
    case 0:
      return rft_barrier(comm);
    case 1:
      if (me == root) memcpy(receive, send, count * sizeof(long));
      rc = rft_bcast(receive, count, RFT_LONG, root, comm);
      if (rc != RFT_SUCCESS) return rc;
      for (size_t i = 0; i < count; ++i) {
        CHECK(receive[i] == Value(root, call, i), "call %d bcast from %d [%zu] = %ld, expected %ld",
              call, root, i, receive[i], Value(root, call, i));
      }
      return rc;
    default: {
      const int all = kind == 3;
      const void* from = send;
      if (in_place && (all || me == root)) {
        memcpy(receive, send, count * sizeof(long));
        from = RFT_IN_PLACE;
      }
      rc = all ? rft_allreduce(from, receive, count, RFT_LONG, ops[op_index], comm)
               : rft_reduce(from, receive, count, RFT_LONG, ops[op_index], root, comm);
      if (rc != RFT_SUCCESS || !(all || me == root)) return rc;
      for (size_t i = 0; i < count; ++i) {
        long expected = Value(0, call, i);
        for (int m = 1; m < n; ++m) {
          const long v = Value(m, call, i);
          expected = op_index == 0   ? expected + v
                     : op_index == 1 ? (v > expected ? v : expected)
                                     : (v < expected ? v : expected);
        }
        CHECK(receive[i] == expected,
              "call %d %s op %d root %d count %zu [%zu] = %ld, expected %ld", call,
              all ? "allreduce" : "reduce", op_index, root, count, i, receive[i], expected);
      }
      return rc;
    }
  }
}

static void Mixed(uint64_t seed, int calls) {
  rft_comm_t dup;
  CHECK_OK(rft_comm_dup(W, &dup));
  uint64_t shared = seed * 2 + 1, mine = (seed + 1000003ULL * (uint64_t)(g_rank + 1)) | 1;
  for (int call = 0; call < calls; ++call) {
    Pause(&mine);
    CHECK_OK(OneCall(Next(&shared) % 3 == 0 ? dup : W, &shared, call));
  }
  CHECK_OK(rft_comm_free(&dup));
}

/* The last rank ends itself (SIGKILL, or SIGSTOP until the launcher kills it) before a call drawn
 * from the seed; the others go on and must see each call succeed or fail with PROC_FAILED. */
static void Fault(uint64_t seed, int sig) {
  CHECK_OK(rft_comm_set_errhandler(W, RFT_ERRORS_RETURN));
  const int victim = g_size - 1;
  const int calls = 60;
  uint64_t shared = seed * 2 + 1, mine = (seed + 1000003ULL * (uint64_t)(g_rank + 1)) | 1;
  const int at = (int)(Next(&shared) % (uint64_t)calls);
  int failed = 0;
  for (int call = 0; call < calls; ++call) {
    if (g_rank == victim && call == at) raise(sig);
    Pause(&mine);
    const int rc = OneCall(W, &shared, call);
    CHECK(rc == RFT_SUCCESS || rc == RFT_ERR_PROC_FAILED, "call %d returned %s", call,
          rft_error_name(rc));
    CHECK(!(failed && rc == RFT_SUCCESS), "call %d succeeded after a PROC_FAILED", call);
    failed = failed || rc == RFT_ERR_PROC_FAILED;
  }
  CHECK(g_rank != victim, "the victim (killed before call %d) went on", at);
  CHECK_CODE(rft_barrier(W), RFT_ERR_PROC_FAILED);
}

static void Revoke(void) {
  rft_comm_t dup;
  CHECK_OK(rft_comm_dup(W, &dup));
  CHECK_OK(rft_comm_set_errhandler(dup, RFT_ERRORS_RETURN));
  CHECK_OK(rft_barrier(dup)); /* sets up the area */
  long value = 1, sum = 0;
  CHECK_OK(rft_barrier(W));
  if (g_rank == 0) {
    CHECK_OK(rft_comm_revoke(dup));
  } else {
    CHECK_CODE(rft_barrier(dup), RFT_ERR_REVOKED);
    CHECK_CODE(rft_bcast(&value, 1, RFT_LONG, 0, dup), RFT_ERR_REVOKED);
    CHECK_CODE(rft_allreduce(&value, &sum, 1, RFT_LONG, RFT_SUM, dup), RFT_ERR_REVOKED);
  }
  CHECK_OK(rft_barrier(W));
  CHECK_OK(rft_comm_free(&dup));
}

/* Members whose lengths differ (an erroneous program) get RFT_ERR_TRUNCATE naming both, whether
 * both lengths go to the area's entries (at most 8 bytes), both to its slots, or one to each. */
static void Mismatch(void) {
  rft_comm_t dup;
  CHECK_OK(rft_comm_dup(W, &dup));
  CHECK_OK(rft_comm_set_errhandler(dup, RFT_ERRORS_RETURN));
  CHECK_OK(rft_barrier(dup)); /* sets up the area */
  /* {root's count, the others' count}: entry and slot, slot and entry, entries, slots. */
  const size_t counts[][2] = {{1, 2}, {2, 1}, {0, 1}, {3, 2}};
  for (size_t c = 0; c < sizeof counts / sizeof counts[0]; ++c) {
    const size_t mine = counts[c][g_rank == 0 ? 0 : 1];
    long data[3] = {1, 2, 3}, result[3] = {0, 0, 0};
    /* bcast: the root returns at once; the others find the root's length. */
    int rc = rft_bcast(data, mine, RFT_LONG, 0, dup);
    CHECK(g_rank == 0 ? rc == RFT_SUCCESS : rc == RFT_ERR_TRUNCATE,
          "bcast of %zu longs where the root sent %zu: %s", mine, counts[c][0], rft_error_name(rc));
    /* reduce: the others return at once; the root finds their length. */
    rc = rft_reduce(data, result, mine, RFT_LONG, RFT_SUM, 0, dup);
    CHECK(g_rank != 0 ? rc == RFT_SUCCESS : rc == RFT_ERR_TRUNCATE,
          "reduce of %zu longs where the others gave %zu: %s", mine, counts[c][1],
          rft_error_name(rc));
    CHECK_OK(rft_barrier(W)); /* the next case starts together */
  }
  CHECK_OK(rft_comm_free(&dup));
}

static void Progress(void) {
  enum { kBytes = 64 * 1024 };
  char* buffer = calloc(kBytes, 1);
  CHECK(buffer != NULL, "out of memory");
  CHECK_OK(rft_barrier(W)); /* sets up the area */
  if (g_rank == 0) {
    memset(buffer, 7, kBytes);
    CHECK_OK(rft_ssend(buffer, kBytes, RFT_BYTE, 1, 5, W));
  } else if (g_rank == 1) {
    rft_request_t request;
    CHECK_OK(rft_irecv(buffer, kBytes, RFT_BYTE, 0, 5, W, &request));
    CHECK_OK(rft_barrier(W));
    CHECK_OK(rft_wait(&request, NULL));
    CHECK(buffer[kBytes - 1] == 7, "received %d", buffer[kBytes - 1]);
  }
  if (g_rank != 1) CHECK_OK(rft_barrier(W));
  free(buffer);
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);
  if (argc < 2) {
    fprintf(stderr,
            "usage: node_collectives_worker mixed SEED CALLS [small] | kill SEED | hang SEED | "
            "revoke | progress | mismatch\n");
    return 2;
  }
  int provided = -1;
  CHECK_OK(rft_init(NULL, NULL, RFT_FT_NOTIFY, &provided));
  CHECK_OK(rft_comm_rank(W, &g_rank));
  CHECK_OK(rft_comm_size(W, &g_size));
  const char* mode = argv[1];
  const uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
  if (strcmp(mode, "mixed") == 0 && argc > 3) {
    g_small = argc > 4 && strcmp(argv[4], "small") == 0;
    Mixed(seed, atoi(argv[3]));
  } else if (strcmp(mode, "kill") == 0) {
    Fault(seed, SIGKILL);
  } else if (strcmp(mode, "hang") == 0) {
    Fault(seed, SIGSTOP);
  } else if (strcmp(mode, "revoke") == 0) {
    Revoke();
  } else if (strcmp(mode, "progress") == 0) {
    Progress();
  } else if (strcmp(mode, "mismatch") == 0) {
    Mismatch();
  } else {
    fprintf(stderr, "node_collectives_worker: unknown mode %s\n", mode);
    return 2;
  }
  CHECK_OK(rft_finalize());
  printf("%s ok rank=%d\n", mode, g_rank);
  return 0;
}
