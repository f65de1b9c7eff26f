/* The main demo (tools/demo.sh): ULFM's story in one run. An iterative computation loses one
 * process to SIGKILL and another to a hang (SIGSTOP) at instants chosen by the caller; the
 * survivors detect both, revoke, agree and shrink, and still end with the exact result.
 *
 *   rftrun -n 6 --ft ulfm_demo [--iterations T] [--kill RANK@MS] [--stop RANK@MS]
 *
 * Iteration i adds f(k) over its chunk of kChunk indices to a total every member holds: the
 * chunk is dealt round-robin over the live members and one allreduce sums their parts; each
 * iteration then sleeps 1 ms, so T iterations last about T ms. After each allreduce the members
 * agree on whether it succeeded everywhere (a member whose allreduce failed first revokes, so
 * nobody stays blocked in it); with a 1 everywhere every survivor adds the sum, otherwise none
 * does and the survivors shrink and redo the iteration. --kill and --stop make the named world
 * rank signal itself once MS ms have passed since the common start.
 *
 * What it prints: the victims say when they signal themselves; at the end the lowest survivor
 * gathers and prints, per survivor, when its failure notices arrived (the failure callback of
 * RFT_FT_ASYNC, i.e. when the detector's word reached that process) and which of its calls
 * failed and how; then the recovery rounds it went through and what each took; then every
 * survivor prints its total beside the exact one and exits 0 only if they are equal. Times are
 * ms since a start all members share (rank 0's CLOCK_MONOTONIC, broadcast; one node). */
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ulfm_api/rft.h"

enum { kChunk = 64, kMaxEvents = 4 };

static int64_t F(int64_t k) { return (k * k) % 1000003 + 1; }

static int64_t NowNs(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* What one process saw, gathered to the reporter as bytes (every member runs this binary). */
typedef struct Seen {
  int32_t world_rank;
  int32_t notices; /* failure notices received (the callback) */
  int32_t errors;  /* calls that failed (the first of each recovery round) */
  int32_t rounds;  /* recovery rounds */
  int32_t notice_rank[kMaxEvents];
  int64_t notice_ns[kMaxEvents];
  int64_t error_ns[kMaxEvents];
  int32_t error_call[kMaxEvents]; /* 0 allreduce, 1 agree */
  int32_t error_code[kMaxEvents];
  /* Per round: start (the failed call's return), after the revoke and the agreement, after the
   * shrink; the iteration redone; members before and after. */
  int64_t round_ns[kMaxEvents][3];
  int32_t round_iteration[kMaxEvents];
  int32_t round_sizes[kMaxEvents][2];
  int32_t round_redone[kMaxEvents]; /* 0: the agreement kept the iteration's sum */
} Seen;

static Seen g_seen;
static atomic_int g_notice_count;

/* Runs on rft's control thread: records the instant the failure notice arrived. */
static void OnFailure(int job_rank, void* user_data) {
  (void)user_data;
  const int slot = atomic_load(&g_notice_count);
  if (slot >= kMaxEvents) return;
  g_seen.notice_rank[slot] = job_rank;
  g_seen.notice_ns[slot] = NowNs();
  atomic_store(&g_notice_count, slot + 1);
}

static void Die(int rank, const char* what, int rc) {
  fprintf(stderr, "ulfm_demo: rank %d: %s: %s (%s)\n", rank, what, rft_error_name(rc),
          rft_last_error_message());
  exit(1);
}

/* "RANK@MS" into its parts; 0 when malformed. */
static int ParseFault(const char* text, long* rank, long* ms) {
  char* end = NULL;
  *rank = strtol(text, &end, 10);
  if (end == text || *end != '@' || *rank < 0) return 0;
  const char* at = end + 1;
  *ms = strtol(at, &end, 10);
  return end != at && *end == '\0' && *ms >= 0;
}

static double Ms(int64_t ns, int64_t start_ns) { return (double)(ns - start_ns) / 1e6; }

static const char* ShortName(int code) {
  switch (code) {
    case RFT_ERR_PROC_FAILED:
      return "PROC_FAILED";
    case RFT_ERR_REVOKED:
      return "REVOKED";
    default:
      return rft_error_name(code);
  }
}

static void PrintSeen(const Seen* s, int64_t start_ns) {
  char line[512];
  int used = snprintf(line, sizeof line, "  rank %d: callback", s->world_rank);
  for (int i = 0; i < s->notices && i < kMaxEvents; ++i) {
    used += snprintf(line + used, sizeof line - (size_t)used, "%s for %d at %.1f",
                     i == 0 ? "" : ",", s->notice_rank[i], Ms(s->notice_ns[i], start_ns));
  }
  if (s->notices == 0) used += snprintf(line + used, sizeof line - (size_t)used, " nothing");
  used += snprintf(line + used, sizeof line - (size_t)used, "; failed calls:");
  for (int i = 0; i < s->errors && i < kMaxEvents; ++i) {
    used += snprintf(line + used, sizeof line - (size_t)used, "%s %s %s %.1f", i == 0 ? "" : ",",
                     s->error_call[i] == 0 ? "allreduce" : "agree", ShortName(s->error_code[i]),
                     Ms(s->error_ns[i], start_ns));
  }
  if (s->errors == 0) snprintf(line + used, sizeof line - (size_t)used, " none");
  printf("%s\n", line);
}

static void PrintRounds(const Seen* s) {
  for (int r = 0; r < s->rounds && r < kMaxEvents; ++r) {
    const int64_t* t = s->round_ns[r];
    printf(
        "ulfm_demo: recovery %d at iteration %d: revoke + agree %.2f ms, shrink %.2f ms: "
        "%d -> %d processes, %s\n",
        r + 1, s->round_iteration[r], (double)(t[1] - t[0]) / 1e6, (double)(t[2] - t[1]) / 1e6,
        s->round_sizes[r][0], s->round_sizes[r][1],
        s->round_redone[r] ? "the iteration redone" : "its sum kept");
  }
}

int main(int argc, char** argv) {
  long iterations = 3000, kill_rank = -1, kill_ms = 0, stop_rank = -1, stop_ms = 0;
  for (int i = 1; i < argc; i += 2) {
    const char* value = i + 1 < argc ? argv[i + 1] : NULL;
    if (value != NULL && strcmp(argv[i], "--iterations") == 0 && atol(value) > 0) {
      iterations = atol(value);
    } else if (value != NULL && strcmp(argv[i], "--kill") == 0 &&
               ParseFault(value, &kill_rank, &kill_ms)) {
    } else if (value != NULL && strcmp(argv[i], "--stop") == 0 &&
               ParseFault(value, &stop_rank, &stop_ms)) {
    } else {
      fprintf(stderr,
              "ulfm_demo: bad argument '%s'%s%s; usage: ulfm_demo [--iterations T>0] "
              "[--kill RANK@MS] [--stop RANK@MS]\n",
              argv[i], value ? " " : "", value ? value : "");
      return 2;
    }
  }
  rft_set_failure_callback(OnFailure, NULL);
  int provided = 0, world_rank = 0, world_size = 0;
  int rc = rft_init(&argc, &argv, RFT_FT_ASYNC, &provided);
  if (rc != RFT_SUCCESS) Die(-1, "init", rc);
  rft_comm_rank(RFT_COMM_WORLD, &world_rank);
  rft_comm_size(RFT_COMM_WORLD, &world_size);
  rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN);
  g_seen.world_rank = world_rank;
  if (kill_rank >= world_size || stop_rank >= world_size || (kill_rank == 0 || stop_rank == 0)) {
    if (world_rank == 0) {
      fprintf(stderr, "ulfm_demo: a victim must be a rank in 1..%d (got --kill %ld --stop %ld)\n",
              world_size - 1, kill_rank, stop_rank);
    }
    rft_finalize();
    return 2;
  }

  /* The origin every member reports against: rank 0's clock, broadcast on a communicator of its
   * own. A victim may fault as soon as it is out of the broadcast (--kill R@0) while a slower
   * member is still in it; the others' revocation of world then cannot reach this broadcast,
   * and should a dead relay fail it all the same, that member takes its own clock (off by the
   * broadcast's lag, a millisecond or so) and goes on: the failure meets it in the loop. */
  rft_comm_t clock_comm = RFT_COMM_NULL;
  rc = rft_comm_dup(RFT_COMM_WORLD, &clock_comm);
  if (rc != RFT_SUCCESS) Die(world_rank, "dup", rc);
  rft_comm_set_errhandler(clock_comm, RFT_ERRORS_RETURN);
  int64_t start_ns = NowNs();
  if (rft_bcast(&start_ns, 1, RFT_INT64, 0, clock_comm) != RFT_SUCCESS) start_ns = NowNs();
  rft_comm_free(&clock_comm);
  if (world_rank == 0) {
    printf("ulfm_demo: %d processes, %ld iterations of a sum every member holds", world_size,
           iterations);
    if (kill_rank > 0) printf("; rank %ld is killed at %ld ms", kill_rank, kill_ms);
    if (stop_rank > 0) printf("; rank %ld hangs at %ld ms", stop_rank, stop_ms);
    printf("\n");
    fflush(stdout);
  }

  rft_comm_t comm = RFT_COMM_WORLD; /* the live members; world until the first shrink */
  int64_t total = 0;
  const struct timespec pause = {0, 1000000};
  for (long i = 0; i < iterations;) {
    const double now_ms = Ms(NowNs(), start_ns);
    if ((world_rank == kill_rank && now_ms >= kill_ms) ||
        (world_rank == stop_rank && now_ms >= stop_ms)) {
      const int sig = world_rank == kill_rank ? SIGKILL : SIGSTOP;
      printf("ulfm_demo: rank %d %s itself at %.1f ms (iteration %ld)\n", world_rank,
             sig == SIGKILL ? "SIGKILLs" : "SIGSTOPs (hangs)", now_ms, i);
      fflush(stdout);
      raise(sig);
    }
    int rank = 0, size = 0;
    rft_comm_rank(comm, &rank);
    rft_comm_size(comm, &size);
    int64_t part = 0, sum = 0;
    for (int64_t k = i * kChunk + rank; k < (i + 1) * kChunk; k += size) part += F(k);
    const int reduced = rft_allreduce(&part, &sum, 1, RFT_INT64, RFT_SUM, comm);
    const int64_t reduced_at = NowNs();
    int ok = reduced == RFT_SUCCESS;
    if (!ok) rft_comm_revoke(comm); /* whoever still waits in this communicator gets out */
    const int agreed = rft_comm_agree(comm, &ok);
    if (agreed != RFT_SUCCESS && agreed != RFT_ERR_PROC_FAILED) Die(world_rank, "agree", agreed);
    const int64_t agreed_at = NowNs();
    /* Where this round's trouble showed first: the allreduce, or else the agreement. */
    const int64_t trouble_at = reduced != RFT_SUCCESS ? reduced_at : agreed_at;
    if (g_seen.errors < kMaxEvents && (reduced != RFT_SUCCESS || agreed != RFT_SUCCESS)) {
      const int e = g_seen.errors++;
      g_seen.error_ns[e] = trouble_at;
      g_seen.error_call[e] = reduced != RFT_SUCCESS ? 0 : 1;
      g_seen.error_code[e] = reduced != RFT_SUCCESS ? reduced : agreed;
    }
    if (ok) {
      total += sum; /* every survivor, or none */
      ++i;
      nanosleep(&pause, NULL);
    }
    if (!ok || agreed == RFT_ERR_PROC_FAILED) {
      rft_comm_t survivors = RFT_COMM_NULL;
      rc = rft_comm_shrink(comm, &survivors);
      if (rc != RFT_SUCCESS) Die(world_rank, "shrink", rc);
      if (g_seen.rounds < kMaxEvents) {
        const int r = g_seen.rounds++;
        g_seen.round_ns[r][0] = trouble_at;
        g_seen.round_ns[r][1] = agreed_at;
        g_seen.round_ns[r][2] = NowNs();
        g_seen.round_iteration[r] = (int32_t)(ok ? i - 1 : i);
        g_seen.round_redone[r] = !ok;
        g_seen.round_sizes[r][0] = size;
        rft_comm_size(survivors, &g_seen.round_sizes[r][1]);
      }
      if (comm != RFT_COMM_WORLD) rft_comm_free(&comm);
      comm = survivors;
      rft_comm_set_errhandler(comm, RFT_ERRORS_RETURN);
    }
  }
  g_seen.notices = atomic_load(&g_notice_count);

  /* The lowest survivor prints what every survivor saw; a failure now only loses the table. */
  int rank = 0, size = 0;
  rft_comm_rank(comm, &rank);
  rft_comm_size(comm, &size);
  Seen* all = rank == 0 ? calloc((size_t)size, sizeof(Seen)) : NULL;
  rc = rft_gather(&g_seen, sizeof(Seen), RFT_BYTE, all, 0, comm);
  if (rank == 0) {
    printf(
        "ulfm_demo: how each survivor learned of the failures (ms since the start):\n"
        "  (callback: the detector's word arrived; PROC_FAILED: its own call met the dead; "
        "REVOKED: another's revoke came first)\n");
    for (int r = 0; r < (rc == RFT_SUCCESS ? size : 1); ++r) {
      PrintSeen(rc == RFT_SUCCESS ? &all[r] : &g_seen, start_ns);
    }
    PrintRounds(&g_seen);
    fflush(stdout);
  }
  free(all);
  rft_barrier(comm); /* the table first, then the results */

  int64_t exact = 0;
  for (int64_t k = 0; k < iterations * kChunk; ++k) exact += F(k);
  printf("ulfm_demo: rank %d: total %lld, exact %lld: %s, with %d of %d processes\n", world_rank,
         (long long)total, (long long)exact, total == exact ? "exact" : "WRONG", size, world_size);
  if (comm != RFT_COMM_WORLD) rft_comm_free(&comm);
  rft_finalize();
  return total == exact ? 0 : 3;
}
