/* A C99 program over rft.h: fault-tolerant agreement and shrink across real processes under
 * rftrun (agreement_test.cc drives it). Modes:
 *   basics       every member alive: 200 agreements with changing flags (blocking and
 *                non-blocking), agreement on a revoked communicator, shrink equal to dup
 *   after V      rank V dies once every member returned from an agreement (a barrier): the next
 *                agreement returns RFT_ERR_PROC_FAILED with the survivors' AND at every survivor,
 *                names V in get_failed; after the acknowledgement agreements succeed; shrink
 *                gives the survivors in order, and a collective on it works
 *   during V     rank V dies inside an agreement (after starting it): every survivor gets the
 *                same outcome, one of the two the semantics allow; shrink then excludes V
 *   ishrink [V]  rft_comm_ishrink (after rank V died at an agreed point), with a communicator
 *                created while it runs; the result as shrink's
 *   shrink-during V  rank V dies inside a shrink: the survivors' results agree, and a second
 *                shrink has exactly them
 *   warnings [V] odd ranks raise rank-many warnings (rft_warning), rank V dies first at an
 *                agreed point; finalize prints one line per odd survivor
 *   iagree-windows V  windows of 8 outstanding iagrees while rank V dies after posting window
 *                40 (V -1: the test's rftrun --kill at an instant nobody knows); every survivor
 *                prints a hash of all its outcomes up to two windows after the first failure
 *   guarded      every member alive: guarded agreements (rft_comm_agree_deadline) with changing
 *                flags give the AND and an empty cut-off group, interleaved with plain ones; bad
 *                deadlines (0, -1, NaN, infinity, over a year) are RFT_ERR_ARG naming the value
 * Each rank prints "<mode> ok rank=R" when its checks passed, and what it decided as
 * "decided rc=... flag=..." for the test to compare; "FAILED: ..." (exit 3) otherwise. */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/multiproc/c_worker_checks.h"
#include "ulfm_api/rft.h"

#define W RFT_COMM_WORLD

static int g_rank, g_size;

/* Member r's flag in round `round`: every bit set but one that depends on both, so the AND
 * changes from round to round and says who took part. */
static int FlagOf(int r, int round) { return ~(1 << ((r + round) % 31)); }

static int AndOf(const int* members, int count, int round) {
  int flag = ~0;
  for (int i = 0; i < count; ++i) flag &= FlagOf(members[i], round);
  return flag;
}

static void Basics(void) {
  int everyone[64];
  CHECK(g_size <= 64, "at most 64 ranks");
  for (int r = 0; r < g_size; ++r) everyone[r] = r;
  for (int round = 0; round < 200; ++round) {
    int flag = FlagOf(g_rank, round);
    if (round % 2 == 0) {
      CHECK_OK(rft_comm_agree(W, &flag));
    } else {
      rft_request_t request = RFT_REQUEST_NULL;
      CHECK_OK(rft_comm_iagree(W, &flag, &request));
      CHECK_OK(rft_wait(&request, RFT_STATUS_IGNORE));
      CHECK(request == RFT_REQUEST_NULL, "the request was not freed");
    }
    CHECK(flag == AndOf(everyone, g_size, round), "round %d: flag %x, expected %x", round, flag,
          AndOf(everyone, g_size, round));
  }
  /* Several non-blocking agreements outstanding at once, a blocking one among them, completed
   * in reverse order: each gets its own round's AND (numbering follows the calls). */
  {
    enum { kOutstanding = 5 };
    int flags[kOutstanding];
    rft_request_t requests[kOutstanding];
    for (int i = 0; i < kOutstanding; ++i) {
      flags[i] = FlagOf(g_rank, 300 + i);
      if (i == 2) {
        CHECK_OK(rft_comm_agree(W, &flags[i]));
        requests[i] = RFT_REQUEST_NULL;
      } else {
        CHECK_OK(rft_comm_iagree(W, &flags[i], &requests[i]));
      }
    }
    for (int i = kOutstanding - 1; i >= 0; --i) {
      if (requests[i] != RFT_REQUEST_NULL) CHECK_OK(rft_wait(&requests[i], RFT_STATUS_IGNORE));
      CHECK(flags[i] == AndOf(everyone, g_size, 300 + i), "outstanding %d: flag %x, expected %x", i,
            flags[i], AndOf(everyone, g_size, 300 + i));
    }
  }
  /* A revoked communicator still agrees and shrinks (to a working one). */
  rft_comm_t dup = RFT_COMM_NULL, shrunk = RFT_COMM_NULL;
  CHECK_OK(rft_comm_dup(W, &dup));
  CHECK_OK(rft_comm_set_errhandler(dup, RFT_ERRORS_RETURN));
  CHECK_OK(rft_comm_revoke(dup));
  int flag = 1;
  CHECK_OK(rft_comm_agree(dup, &flag));
  CHECK(flag == 1, "flag %d on the revoked communicator", flag);
  CHECK_CODE(rft_barrier(dup), RFT_ERR_REVOKED);
  CHECK_OK(rft_comm_shrink(dup, &shrunk));
  int size = 0, rank = -1, result = 0;
  CHECK_OK(rft_comm_size(shrunk, &size));
  CHECK_OK(rft_comm_rank(shrunk, &rank));
  CHECK(size == g_size && rank == g_rank, "shrink without failure: size %d rank %d", size, rank);
  CHECK_OK(rft_comm_compare(W, shrunk, &result));
  CHECK(result == RFT_CONGRUENT, "shrink without failure compares %d, expected congruent", result);
  int one = 1, sum = 0;
  CHECK_OK(rft_allreduce(&one, &sum, 1, RFT_INT, RFT_SUM, shrunk));
  CHECK(sum == g_size, "allreduce on the shrunk communicator: %d", sum);
  CHECK_OK(rft_comm_free(&shrunk));
  CHECK_OK(rft_comm_free(&dup));
  /* Bad arguments. */
  CHECK_CODE(rft_comm_agree(W, NULL), RFT_ERR_ARG);
  CHECK_CODE(rft_comm_shrink(W, NULL), RFT_ERR_ARG);
  CHECK_CODE(rft_comm_iagree(W, &flag, NULL), RFT_ERR_ARG);
}

/* The survivors of `victim`, and this rank's checks after it died. */
/* The shrunk communicator of the survivors of `victim` (-1: none): its size, ranks in order, and
 * a collective and an agreement on it. */
static void CheckShrunk(rft_comm_t shrunk, int victim, const char* mode) {
  const int expected = victim < 0 ? g_size : g_size - 1;
  int size = 0, rank = -1;
  CHECK_OK(rft_comm_size(shrunk, &size));
  CHECK_OK(rft_comm_rank(shrunk, &rank));
  CHECK(size == expected, "%s: shrunk to %d members, expected %d", mode, size, expected);
  CHECK(rank == (victim < 0 || g_rank < victim ? g_rank : g_rank - 1),
        "%s: rank %d in the shrunk communicator", mode, rank);
  int one = 1, sum = 0;
  CHECK_OK(rft_allreduce(&one, &sum, 1, RFT_INT, RFT_SUM, shrunk));
  CHECK(sum == expected, "%s: allreduce on the shrunk communicator: %d", mode, sum);
}

static void ShrinkAndCheck(int victim, const char* mode) {
  rft_comm_t shrunk = RFT_COMM_NULL;
  CHECK_OK(rft_comm_shrink(W, &shrunk));
  CheckShrunk(shrunk, victim, mode);
  int flag = 1;
  CHECK_OK(rft_comm_agree(shrunk, &flag));
  CHECK_OK(rft_comm_free(&shrunk));
}

/* The agreed point where a victim dies: once a barrier is over at the victim, every member has
 * entered it, so every member returned from the agreement before it. A member still in the
 * barrier when the victim dies gets RFT_ERR_PROC_FAILED from it, which is fine here. */
static void Fence(void) {
  const int rc = rft_barrier(W);
  CHECK(rc == RFT_SUCCESS || rc == RFT_ERR_PROC_FAILED, "barrier: %s", rft_error_name(rc));
}

static int FailedCount(void) {
  rft_group_t failed = RFT_GROUP_NULL;
  int count = -1;
  CHECK_OK(rft_comm_get_failed(W, &failed));
  CHECK_OK(rft_group_size(failed, &count));
  CHECK_OK(rft_group_free(&failed));
  return count;
}

static void After(int victim) {
  int survivors[64], count = 0;
  for (int r = 0; r < g_size; ++r) {
    if (r != victim) survivors[count++] = r;
  }
  int flag = FlagOf(g_rank, 0);
  CHECK_OK(rft_comm_agree(W, &flag));
  Fence();
  if (g_rank == victim) raise(SIGKILL);
  flag = FlagOf(g_rank, 1);
  const int rc = rft_comm_agree(W, &flag);
  printf("decided rc=%s flag=%x\n", rft_error_name(rc), flag);
  fflush(stdout);
  /* The victim never contributed: the decision excludes it, and nobody had acknowledged it. */
  CHECK_CODE(rc, RFT_ERR_PROC_FAILED);
  CHECK(flag == AndOf(survivors, count, 1), "flag %x, expected the survivors' AND %x", flag,
        AndOf(survivors, count, 1));
  CHECK(FailedCount() == 1, "get_failed after the agreement names %d ranks", FailedCount());
  int acked = 0;
  CHECK_OK(rft_comm_ack_failed(W, 1, &acked));
  flag = FlagOf(g_rank, 2);
  CHECK_OK(rft_comm_agree(W, &flag));
  CHECK(flag == AndOf(survivors, count, 2), "after ack: flag %x", flag);
  ShrinkAndCheck(victim, "after");
}

static void During(int victim) {
  int flag = FlagOf(g_rank, 0);
  CHECK_OK(rft_comm_agree(W, &flag));
  Fence();
  flag = FlagOf(g_rank, 1);
  if (g_rank == victim) {
    /* Contributes, then dies before it can learn the outcome. */
    rft_request_t request = RFT_REQUEST_NULL;
    CHECK_OK(rft_comm_iagree(W, &flag, &request));
    raise(SIGKILL);
  }
  const int rc = rft_comm_agree(W, &flag);
  printf("decided rc=%s flag=%x\n", rft_error_name(rc), flag);
  fflush(stdout);
  CHECK(rc == RFT_SUCCESS || rc == RFT_ERR_PROC_FAILED, "rc %s", rft_error_name(rc));
  CHECK_OK(rft_comm_failure_ack(W));
  ShrinkAndCheck(victim, "during");
}

/* The victim dies inside a shrink, after contributing to it: every survivor gets a communicator
 * of the same size (with the victim as a failed member, or without it) and the same members; a
 * second shrink of that one has every survivor and nobody else. */
static void ShrinkDuring(int victim) {
  Fence();
  rft_comm_t first = RFT_COMM_NULL;
  if (g_rank == victim) {
    rft_request_t request = RFT_REQUEST_NULL;
    CHECK_OK(rft_comm_ishrink(W, &first, &request));
    raise(SIGKILL);
  }
  CHECK_OK(rft_comm_shrink(W, &first));
  int size = 0;
  CHECK_OK(rft_comm_size(first, &size));
  CHECK(size == g_size || size == g_size - 1, "first shrink: %d members", size);
  /* Every survivor reports the same: compared line by line by the test. */
  printf("decided rc=SUCCESS flag=%d\n", size);
  fflush(stdout);
  rft_comm_t second = RFT_COMM_NULL;
  CHECK_OK(rft_comm_shrink(first, &second));
  CHECK_OK(rft_comm_size(second, &size));
  CHECK(size == g_size - 1, "second shrink: %d members, expected %d", size, g_size - 1);
  int one = 1, sum = 0;
  CHECK_OK(rft_allreduce(&one, &sum, 1, RFT_INT, RFT_SUM, second));
  CHECK(sum == g_size - 1, "allreduce on the second shrink: %d", sum);
  CHECK_OK(rft_comm_free(&second));
  CHECK_OK(rft_comm_free(&first));
}

/* Shrink and free in a loop; the victim dies inside the 40th shrink, after contributing. With
 * RFT_EAGER_LIMIT=0 the shrink's fast-path packets travel by rendezvous, so a packet buffer the
 * victim's death leaves behind must still be alive when a peer reads it. Every survivor reports
 * the sizes it got (a hash) once: the test compares them. */
static void ShrinkLoop(int victim) {
  enum { kRounds = 120, kVictimRound = 40 };
  Fence();
  uint64_t sizes_hash = 1469598103934665603ull;
  for (int round = 0; round < kRounds; ++round) {
    rft_comm_t shrunk = RFT_COMM_NULL;
    if (g_rank == victim && round == kVictimRound) {
      rft_request_t request = RFT_REQUEST_NULL;
      CHECK_OK(rft_comm_ishrink(W, &shrunk, &request));
      raise(SIGKILL);
    }
    CHECK_OK(rft_comm_shrink(W, &shrunk));
    int size = 0;
    CHECK_OK(rft_comm_size(shrunk, &size));
    CHECK(size == g_size || (round >= kVictimRound && size == g_size - 1),
          "round %d: shrink has %d members", round, size);
    sizes_hash = (sizes_hash ^ (uint64_t)size) * 1099511628211ull;
    CHECK_OK(rft_comm_free(&shrunk));
  }
  rft_comm_t last = RFT_COMM_NULL;
  CHECK_OK(rft_comm_shrink(W, &last));
  int one = 1, sum = 0;
  CHECK_OK(rft_allreduce(&one, &sum, 1, RFT_INT, RFT_SUM, last));
  CHECK(sum == g_size - 1, "allreduce over the survivors: %d", sum);
  CHECK_OK(rft_comm_free(&last));
  printf("decided rc=SUCCESS flag=%llu\n", (unsigned long long)sizes_hash);
  fflush(stdout);
}

/* rft_comm_ishrink of world, with `victim` (-1: none) dead at an agreed point first, and a
 * communicator created while it runs (a dup of COMM_SELF): the shrunk one is right, and both
 * work side by side. */
static void Ishrink(int victim) {
  if (victim >= 0) {
    Fence();
    if (g_rank == victim) raise(SIGKILL);
  }
  rft_comm_t shrunk = RFT_COMM_NULL, self = RFT_COMM_NULL;
  rft_request_t request = RFT_REQUEST_NULL;
  CHECK_OK(rft_comm_ishrink(W, &shrunk, &request));
  CHECK_OK(rft_comm_dup(RFT_COMM_SELF, &self));
  CHECK_OK(rft_wait(&request, NULL));
  CHECK(shrunk != RFT_COMM_NULL, "ishrink: no communicator after completion");
  CheckShrunk(shrunk, victim, "ishrink");
  int self_size = 0;
  CHECK_OK(rft_comm_size(self, &self_size));
  CHECK(self_size == 1, "dup of COMM_SELF has %d members", self_size);
  int flag = 1;
  CHECK_OK(rft_comm_agree(shrunk, &flag));
  CHECK_OK(rft_comm_free(&self));
  CHECK_OK(rft_comm_free(&shrunk));
  /* Nothing leaked: the next blocking shrink takes contexts as usual. */
  rft_comm_t again = RFT_COMM_NULL;
  CHECK_OK(rft_comm_ishrink(W, &again, &request));
  CHECK_OK(rft_wait(&request, NULL));
  CheckShrunk(again, victim, "second ishrink");
  CHECK_OK(rft_comm_free(&again));
  CHECK_CODE(rft_comm_ishrink(W, NULL, &request), RFT_ERR_ARG);
}

static void Warnings(int victim) {
  if (victim >= 0) {
    Fence();
    if (g_rank == victim) raise(SIGKILL);
  }
  for (int i = 0; i < g_rank % 2 * g_rank; ++i) {
    char message[64];
    snprintf(message, sizeof message, "residual too large on rank %d (%d)", g_rank, i);
    CHECK_OK(rft_warning(message));
  }
  /* Errors of calls without a communicator go to COMM_SELF's handler. */
  CHECK_OK(rft_comm_set_errhandler(RFT_COMM_SELF, RFT_ERRORS_RETURN));
  CHECK_CODE(rft_warning(NULL), RFT_ERR_ARG);
}

static void Guarded(void) {
  int everyone[64];
  CHECK(g_size <= 64, "at most 64 ranks");
  for (int r = 0; r < g_size; ++r) everyone[r] = r;
  for (int round = 0; round < 50; ++round) {
    int flag = FlagOf(g_rank, round);
    rft_group_t cut = RFT_GROUP_NULL;
    CHECK_OK(rft_comm_agree_deadline(W, &flag, 30.0, &cut));
    CHECK(flag == AndOf(everyone, g_size, round), "round %d: flag %x", round, flag);
    int cut_size = -1;
    CHECK_OK(rft_group_size(cut, &cut_size));
    CHECK(cut_size == 0, "round %d: %d member(s) cut off with everyone alive", round, cut_size);
    CHECK_OK(rft_group_free(&cut));
    flag = FlagOf(g_rank, round + 1); /* a plain one in between: the numbering stays shared */
    CHECK_OK(rft_comm_agree(W, &flag));
    CHECK(flag == AndOf(everyone, g_size, round + 1), "round %d: plain flag %x", round, flag);
  }
  const double bad[] = {0.0, -1.0, NAN, INFINITY, 4e7};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
    int flag = 1;
    CHECK_CODE(rft_comm_agree_deadline(W, &flag, bad[i], NULL), RFT_ERR_ARG);
    CHECK(strstr(rft_last_error_message(), "deadline") != NULL, "message: %s",
          rft_last_error_message());
  }
  int flag = 1;
  CHECK_CODE(rft_comm_agree_deadline(W, NULL, 1.0, NULL), RFT_ERR_ARG);
  CHECK_OK(rft_comm_agree_deadline(W, &flag, 30.0, NULL)); /* still in step after refusals */
  CHECK(flag == 1, "flag %d after the refusals", flag);
  CHECK(rft_agree_default_deadline(100.0) == 20.0, "default deadline of 100 s: %g",
        rft_agree_default_deadline(100.0));
  CHECK(rft_agree_default_deadline(-5.0) == 0.0, "default deadline of -5 s: %g",
        rft_agree_default_deadline(-5.0));
}

/* Windows of 8 outstanding iagrees, one after the other, while a member dies: by its own hand
 * after posting window 40 (VICTIM >= 0), or by the launcher's kill at an instant nobody knows
 * (VICTIM -1, rftrun --kill). Outcomes are uniform, so every survivor sees the first failed
 * window at the same place, goes on two more windows and stops there; each prints one line with
 * a hash of every (error, flag) it got, which the test compares. */
static void IagreeWindows(int victim) {
  enum { kWindow = 8, kMaxWindows = 200000 };
  int flags[kWindow];
  rft_request_t requests[kWindow];
  rft_status_t statuses[kWindow];
  uint64_t hash = 1469598103934665603ull;
  int failed_at = -1, window = 0;
  for (; window < kMaxWindows && (failed_at < 0 || window < failed_at + 3); ++window) {
    for (int k = 0; k < kWindow; ++k) {
      flags[k] = FlagOf(g_rank, window * kWindow + k);
      CHECK_OK(rft_comm_iagree(W, &flags[k], &requests[k]));
    }
    if (g_rank == victim && window == 40) raise(SIGKILL);
    const int rc = rft_waitall(kWindow, requests, statuses);
    CHECK(rc == RFT_SUCCESS || rc == RFT_ERR_IN_STATUS, "window %d: %s", window,
          rft_error_name(rc));
    for (int k = 0; k < kWindow; ++k) {
      const int error = rc == RFT_SUCCESS ? RFT_SUCCESS : statuses[k].error;
      CHECK(error == RFT_SUCCESS || error == RFT_ERR_PROC_FAILED, "window %d, agreement %d: %s",
            window, k, rft_error_name(error));
      if (error != RFT_SUCCESS && failed_at < 0) failed_at = window;
      hash = (hash ^ (uint64_t)(uint32_t)error) * 1099511628211ull;
      hash = (hash ^ (uint64_t)(uint32_t)flags[k]) * 1099511628211ull;
    }
  }
  CHECK(failed_at >= 0, "no failure in %d windows", window);
  printf("decided rc=windows%d flag=%016llx\n", window, (unsigned long long)hash);
  fflush(stdout);
}

int main(int argc, char** argv) {
  CHECK(argc >= 2, "usage: agreement_worker MODE [VICTIM]");
  int provided = -1;
  CHECK_OK(rft_init(&argc, &argv, RFT_FT_NOTIFY, &provided));
  CHECK_OK(rft_comm_rank(W, &g_rank));
  CHECK_OK(rft_comm_size(W, &g_size));
  CHECK_OK(rft_comm_set_errhandler(W, RFT_ERRORS_RETURN));
  const char* mode = argv[1];
  if (strcmp(mode, "basics") == 0) {
    Basics();
  } else if (strcmp(mode, "ishrink") == 0) {
    Ishrink(argc >= 3 ? atoi(argv[2]) : -1);
  } else if (strcmp(mode, "shrink-loop") == 0 && argc >= 3) {
    ShrinkLoop(atoi(argv[2]));
  } else if (strcmp(mode, "shrink-during") == 0 && argc >= 3) {
    ShrinkDuring(atoi(argv[2]));
  } else if (strcmp(mode, "warnings") == 0) {
    Warnings(argc >= 3 ? atoi(argv[2]) : -1);
  } else if (strcmp(mode, "guarded") == 0) {
    Guarded();
  } else if (strcmp(mode, "after") == 0 && argc >= 3) {
    After(atoi(argv[2]));
  } else if (strcmp(mode, "during") == 0 && argc >= 3) {
    During(atoi(argv[2]));
  } else if (strcmp(mode, "iagree-windows") == 0 && argc >= 3) {
    IagreeWindows(atoi(argv[2]));
  } else {
    CHECK(0, "unknown mode %s", mode);
  }
  printf("%s ok rank=%d\n", mode, g_rank);
  fflush(stdout);
  CHECK_OK(rft_finalize());
  return 0;
}
