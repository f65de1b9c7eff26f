/* Example: the iterative computation of solver.c, but a dead process is replaced instead of
 * shrunk away, and its state comes back from a buddy's in-memory checkpoint (rft.h, C99).
 *
 *   rftrun -n 4 --ft respawn_solver [--iterations T] [--checkpoint C]
 *                                   [--victim V --die-at K] [--victim-again W --die-again L]
 *                                   [--victim2 W] [--victim-early E]
 *
 * Unlike solver.c, each process owns state nobody else has: the running total of its own share
 * of the indices (index k of iteration i belongs to rank k mod n, and n never changes). Every C
 * iterations each process copies its state to its buddy (rank + 1 mod n); an agreement commits
 * the copies everywhere at once, so the committed checkpoints always belong to one iteration.
 *
 * Each iteration ends with an allreduce (the global total so far, for progress) and an agreement
 * on whether it succeeded everywhere. When it did not, the members revoke, call rft_comm_replace
 * (one new process per dead one, each taking a dead rank), and restore: every survivor rolls
 * back to its committed checkpoint, each replacement receives its own from its buddy, and a new
 * checkpoint is committed before the loop goes on. A failure during the spawn or the restore
 * starts the recovery again on the communicator it has by then. Two neighbours dying together
 * lose a checkpoint: every member learns it from the restore's agreement, says so and stops
 * (exit status 4). A recovery that has not succeeded after kMaxRecoveryRounds rounds in a row
 * gives up (exit status 5). A replacement whose start fails because a member failed meanwhile
 * (its spawners give that merge up and spawn again) says so and exits 0: it was never part of
 * the computation.
 *
 * --victim V --die-at K: original process V ends itself at the start of iteration K;
 * --victim-again W --die-again L: a second one, original process W at iteration L. --victim2 W:
 * original process W ends itself right after the first spawn returns, inside the restore.
 * --victim-early E: original process E ends itself before the first checkpoint is committed. At
 * the end every member prints the sum of all states and the exact total; they match. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ulfm_api/rft.h"

enum { kChunk = 64, kStateTag = 7, kMaxRecoveryRounds = 20 };

typedef struct {
  int64_t iteration; /* the next iteration to run */
  int64_t total;     /* this rank's share, summed over iterations before `iteration` */
} State;

static int64_t F(int64_t k) { return (k * k) % 1000003 + 1; }

static void Die(const char* what, int rc) {
  fprintf(stderr, "respawn_solver: %s: %s (%s)\n", what, rft_error_name(rc),
          rft_last_error_message());
  exit(1);
}

/* Copies `state` to the buddy and receives the left neighbour's; committed (both the own copy
 * and the buddy's) only when every member agrees the exchange worked. 1 when committed. */
static int Checkpoint(rft_comm_t comm, const State* state, State* own, State* buddy_copy) {
  int rank = 0, size = 0;
  rft_comm_rank(comm, &rank);
  rft_comm_size(comm, &size);
  State received;
  int rc = rft_sendrecv(state, sizeof(State), RFT_BYTE, (rank + 1) % size, kStateTag, &received,
                        sizeof(State), RFT_BYTE, (rank + size - 1) % size, kStateTag, comm,
                        RFT_STATUS_IGNORE);
  int ok = rc == RFT_SUCCESS;
  if (!ok) rft_comm_revoke(comm);
  const int agreed = rft_comm_agree(comm, &ok);
  if (!ok || agreed != RFT_SUCCESS) return 0;
  *own = *state;
  *buddy_copy = received;
  return 1;
}

/* After a spawn: every member learns who is new; each new member gets its checkpoint from its
 * buddy, every survivor rolls back to its own, and a fresh checkpoint is committed. 1 when done. */
static int Restore(rft_comm_t comm, int is_new, State* state, State* own, State* buddy_copy) {
  int rank = 0, size = 0;
  rft_comm_rank(comm, &rank);
  rft_comm_size(comm, &size);
  int news[64];
  if (size > 64) Die("restore", RFT_ERR_ARG);
  int rc = rft_allgather(&is_new, 1, RFT_INT, news, comm);
  int ok = rc == RFT_SUCCESS;
  int lost = 0; /* a new rank whose buddy is new too: its checkpoint died with both */
  for (int r = 0; ok && r < size; ++r) lost |= news[r] && news[(r + 1) % size];
  if (ok && !lost) {
    const int buddy = (rank + 1) % size, left = (rank + size - 1) % size;
    if (news[rank]) {
      rc = rft_recv(own, sizeof(State), RFT_BYTE, buddy, kStateTag, comm, RFT_STATUS_IGNORE);
    } else if (news[left]) {
      rc = rft_send(buddy_copy, sizeof(State), RFT_BYTE, left, kStateTag, comm);
    }
    ok = rc == RFT_SUCCESS;
  }
  if (!ok) rft_comm_revoke(comm);
  /* Bit 0: this member's part worked; bit 1: it saw no lost checkpoint. The agreement ANDs them
   * (its flag is set also when it reports a failure), so every member stops alike: one that
   * stopped alone would look like one more failure to the others, who would spawn again. */
  int flag = (ok ? 1 : 0) | (lost ? 0 : 2);
  const int agreed = rft_comm_agree(comm, &flag);
  if (!(flag & 2)) {
    fprintf(stderr,
            "respawn_solver: rank %d: two neighbours died together, a checkpoint is lost: giving "
            "up\n",
            rank);
    rft_finalize(); /* joins rft's threads: a sanitizer build reports none left running */
    exit(4);
  }
  if (!(flag & 1) || agreed != RFT_SUCCESS) return 0;
  *state = *own;
  return Checkpoint(comm, state, own, buddy_copy);
}

/* Spawns replacements on `*comm` and restores, until a round succeeds (at most
 * kMaxRecoveryRounds); `*comm` is the merged communicator then. `is_new`: this process is a
 * replacement that has not restored yet. `world_rank`: -1 in a replacement. */
static void Recover(rft_comm_t* comm, int is_new, char** spawn_args, State* state, State* own,
                    State* buddy_copy, int* respawns, long victim2, int world_rank) {
  for (int round = 0;; ++round) {
    if (round == kMaxRecoveryRounds) {
      fprintf(stderr, "respawn_solver: no recovery after %d rounds in a row: giving up\n", round);
      rft_finalize();
      exit(5);
    }
    if (!is_new || *respawns > 0) {
      rft_comm_t merged = RFT_COMM_NULL;
      const int rc = rft_comm_replace(*comm, (const char* const*)spawn_args, &merged);
      if (rc == RFT_ERR_PROC_FAILED) continue; /* someone died during it: again */
      if (rc != RFT_SUCCESS) Die("spawn", rc);
      if (*comm != RFT_COMM_WORLD) rft_comm_free(comm);
      *comm = merged;
      rft_comm_set_errhandler(*comm, RFT_ERRORS_RETURN);
      ++*respawns;
      if (world_rank >= 0 && world_rank == victim2 && *respawns == 1 && !is_new) raise(SIGKILL);
    }
    if (Restore(*comm, is_new, state, own, buddy_copy)) return;
    ++*respawns; /* a replacement that failed to restore spawns with the others next */
  }
}

int main(int argc, char** argv) {
  long iterations = 2000, every = 10, victim = -1, die_at = -1, victim_again = -1, die_again = -1,
       victim2 = -1, victim_early = -1;
  int replacement = 0;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--replacement") == 0) {
      replacement = 1;
    } else if (i + 1 < argc && strcmp(argv[i], "--iterations") == 0) {
      iterations = atol(argv[++i]);
    } else if (i + 1 < argc && strcmp(argv[i], "--checkpoint") == 0) {
      every = atol(argv[++i]);
    } else if (i + 1 < argc && strcmp(argv[i], "--victim") == 0) {
      victim = atol(argv[++i]);
    } else if (i + 1 < argc && strcmp(argv[i], "--die-at") == 0) {
      die_at = atol(argv[++i]);
    } else if (i + 1 < argc && strcmp(argv[i], "--victim-again") == 0) {
      victim_again = atol(argv[++i]);
    } else if (i + 1 < argc && strcmp(argv[i], "--die-again") == 0) {
      die_again = atol(argv[++i]);
    } else if (i + 1 < argc && strcmp(argv[i], "--victim2") == 0) {
      victim2 = atol(argv[++i]);
    } else if (i + 1 < argc && strcmp(argv[i], "--victim-early") == 0) {
      victim_early = atol(argv[++i]);
    } else {
      fprintf(stderr,
              "usage: respawn_solver [--iterations T] [--checkpoint C] [--victim V --die-at K] "
              "[--victim-again W --die-again L] [--victim2 W] [--victim-early E]\n");
      return 2;
    }
  }
  if (every < 1) every = 1;
  /* A replacement runs this program with --replacement, and the same iterations. */
  char iterations_text[32], every_text[32];
  snprintf(iterations_text, sizeof(iterations_text), "%ld", iterations);
  snprintf(every_text, sizeof(every_text), "%ld", every);
  char* spawn_args[] = {
      argv[0], "--replacement", "--iterations", iterations_text, "--checkpoint", every_text, NULL};

  int rc = rft_init(&argc, &argv, RFT_FT_NOTIFY, NULL);
  if (replacement && rc == RFT_ERR_PROC_FAILED) {
    /* A member failed while this one joined: its spawners give this merge up and spawn again.
     * It never took part, so its end is not the job's failure. */
    fprintf(stderr, "respawn_solver: a replacement not taken (%s): exiting\n",
            rft_last_error_message());
    return 0;
  }
  if (rc != RFT_SUCCESS) Die("init", rc);
  rft_comm_t comm = RFT_COMM_WORLD;
  int world_rank = -1, respawns = 0;
  State state = {0, 0}, own = {0, 0}, buddy_copy = {0, 0};
  if (replacement) {
    rft_comm_get_parent(&comm);
    if (comm == RFT_COMM_NULL) Die("a replacement without a parent communicator", RFT_ERR_ARG);
    rft_comm_set_errhandler(comm, RFT_ERRORS_RETURN);
    Recover(&comm, 1, spawn_args, &state, &own, &buddy_copy, &respawns, -1, -1);
  } else {
    rft_comm_rank(RFT_COMM_WORLD, &world_rank);
    rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN);
    /* A failure before the first checkpoint is committed (a kill landing early, or start-up that
     * took long) loses nothing: every state is still the initial one, which `own` and
     * `buddy_copy` hold already, so the members recover as from any checkpoint. */
    if (world_rank == victim_early) raise(SIGKILL);
    if (!Checkpoint(comm, &state, &own, &buddy_copy)) {
      Recover(&comm, 0, spawn_args, &state, &own, &buddy_copy, &respawns, victim2, world_rank);
    }
  }

  int rank = 0, size = 0;
  rft_comm_size(comm, &size);
  while (state.iteration < iterations) {
    if (world_rank >= 0 && ((world_rank == victim && state.iteration == die_at) ||
                            (world_rank == victim_again && state.iteration == die_again))) {
      raise(SIGKILL);
    }
    rft_comm_rank(comm, &rank);
    int64_t part = 0, progress = 0;
    for (int64_t k = state.iteration * kChunk + rank; k < (state.iteration + 1) * kChunk;
         k += size) {
      part += F(k);
    }
    rc = rft_allreduce(&part, &progress, 1, RFT_INT64, RFT_SUM, comm);
    int ok = rc == RFT_SUCCESS;
    if (!ok) rft_comm_revoke(comm);
    const int agreed = rft_comm_agree(comm, &ok);
    if (ok && agreed == RFT_SUCCESS) {
      state.total += part;
      ++state.iteration;
      if (state.iteration % every == 0 && Checkpoint(comm, &state, &own, &buddy_copy)) continue;
      if (state.iteration % every != 0) continue;
    }
    Recover(&comm, 0, spawn_args, &state, &own, &buddy_copy, &respawns, victim2, world_rank);
  }

  int64_t total = 0, exact = 0;
  rc = rft_allreduce(&state.total, &total, 1, RFT_INT64, RFT_SUM, comm);
  if (rc != RFT_SUCCESS) Die("final allreduce", rc);
  for (int64_t k = 0; k < iterations * kChunk; ++k) exact += F(k);
  rft_comm_rank(comm, &rank);
  printf(
      "respawn_solver: rank %d: total %lld (exact %lld) with %d of %d processes after %d "
      "respawn(s)%s\n",
      rank, (long long)total, (long long)exact, size, size, respawns,
      replacement ? " (a replacement)" : "");
  if (comm != RFT_COMM_WORLD) rft_comm_free(&comm);
  rft_finalize();
  return total == exact ? 0 : 3;
}
