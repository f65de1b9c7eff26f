/* The seed's MPIX_Comm_replace in MPI form: after failures, the survivors rebuild a communicator
 * of the original size in which every survivor keeps its rank and a new process takes each dead
 * one's, using only MPI and the ULFM calls — shrink, spawn, agree, merge, split.
 *
 *   mpiexec -n N --with-ft ulfm comm_replace [--victims V1,V2,...] [--busy SECONDS]
 *
 * The victims (ranks of COMM_WORLD) end themselves (SIGKILL) once every other process has told
 * them it reached that point, so the failure lands where the program chooses. The survivors'
 * next barrier fails; whoever saw it revokes, all agree that it failed, and replace. With
 * --busy, all then do allreduce rounds for SECONDS, replacing whoever dies in them (mpiexec
 * --kill: instants the program does not know; new processes join the rounds). Each member of
 * the rebuilt communicator then prints
 *   "comm_replace: rank R of N ok: sum S" (and " (a replacement)" in a new process)
 * where S, an allreduce of the ranks, is N(N-1)/2 when every rank is held once. */
#include <mpi.h>
#if defined(OPEN_MPI) || defined(RFT_MPI)
#include <mpi-ext.h>
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { kMaxAttempts = 10 };

static int world_rank;
static const char* program;
static int busy; /* --busy given (or, in a new process, --new-busy) */

static void fail(const char* what) {
  fprintf(stderr, "comm_replace: rank %d: %s\n", world_rank, what);
  exit(1);
}

/* Both sides' last steps: merge the intercommunicator (`high` on the new processes' side),
 * agree over one's own side and across that the merge worked everywhere (and that every member
 * was `ready` for it), then split the merged communicator into the original order by `key`.
 * Frees `inter`. 0 when a failure on the way failed it. A member that is not ready still takes
 * every step: one that left instead would have finalized, not failed, and the others would wait
 * for it in the merge for ever. */
static int merge_in_order(MPI_Comm inter, int high, MPI_Comm own_side, int key, int ready,
                          MPI_Comm* rebuilt) {
  MPI_Comm merged;
  const int merged_here = MPI_Intercomm_merge(inter, high, &merged) == MPI_SUCCESS;
  int ours = ready && merged_here, theirs = ours;
  MPIX_Comm_agree(own_side, &ours);
  MPIX_Comm_agree(inter, &theirs);
  MPI_Comm_free(&inter);
  if (!(ours && theirs)) {
    if (merged_here) MPI_Comm_free(&merged);
    return 0;
  }
  int split = MPI_Comm_split(merged, 0, key, rebuilt) == MPI_SUCCESS;
  MPIX_Comm_agree(merged, &split);
  MPI_Comm_free(&merged);
  return split;
}

/* The survivors' side of one attempt: a communicator of `comm`'s size with the dead replaced
 * (`*rebuilt`), or 0 when a failure on the way asks for another attempt. */
static int replace_as_survivor(MPI_Comm comm, MPI_Comm* rebuilt) {
  MPI_Comm survivors, children;
  if (MPIX_Comm_shrink(comm, &survivors) != MPI_SUCCESS) return 0;
  MPI_Comm_set_errhandler(survivors, MPI_ERRORS_RETURN);
  int size = 0, alive = 0, rank = 0, alive_rank = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_size(survivors, &alive);
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_rank(survivors, &alive_rank);
  const int dead = size - alive;
  if (dead == 0) {
    MPI_Comm_free(&survivors);
    return MPI_Comm_dup(comm, rebuilt) == MPI_SUCCESS;
  }
  /* New processes never take a victim's part: their only argument says they are new, and
   * whether to join the --busy rounds. */
  char flag[] = "--new", busy_flag[] = "--new-busy";
  char* args[] = {busy ? busy_flag : flag, NULL};
  int spawned = MPI_Comm_spawn(program, args, dead, MPI_INFO_NULL, 0, survivors, &children,
                               MPI_ERRCODES_IGNORE) == MPI_SUCCESS;
  int everywhere = spawned;
  MPIX_Comm_agree(survivors, &everywhere);
  if (!everywhere) {
    if (spawned) MPI_Comm_free(&children);
    MPI_Comm_free(&survivors);
    return 0;
  }
  MPI_Comm_set_errhandler(children, MPI_ERRORS_RETURN);
  /* The lowest survivor tells each new process the rank it takes: the dead ranks, in order. */
  if (alive_rank == 0) {
    MPI_Group all, left, gone;
    MPI_Comm_group(comm, &all);
    MPI_Comm_group(survivors, &left);
    MPI_Group_difference(all, left, &gone);
    for (int i = 0; i < dead; ++i) {
      int old_rank = -1;
      MPI_Group_translate_ranks(gone, 1, &i, all, &old_rank);
      MPI_Send(&old_rank, 1, MPI_INT, i, 1, children);
    }
    MPI_Group_free(&gone);
    MPI_Group_free(&left);
    MPI_Group_free(&all);
  }
  /* Back in the original order: each member's key is its rank in `comm`. */
  const int done = merge_in_order(children, 0, survivors, rank, 1, rebuilt);
  MPI_Comm_free(&survivors);
  return done;
}

/* A new process's side, from MPI_Init: the rank it takes, then the merge, agreements and split
 * its parents run too. 0 when a failure on the way failed it (its parents try again, with
 * processes of their own). */
static int replace_as_new(MPI_Comm* rebuilt) {
  MPI_Comm parents;
  MPI_Comm_get_parent(&parents);
  MPI_Comm_set_errhandler(parents, MPI_ERRORS_RETURN);
  int old_rank = -1;
  /* Without its rank (the survivor that sends it died) it still goes through the merge and the
   * agreements, saying it is not ready, so that its parents learn this attempt failed. */
  const int told = MPI_Recv(&old_rank, 1, MPI_INT, 0, 1, parents, MPI_STATUS_IGNORE) == MPI_SUCCESS;
  /* Its own side: the new processes started together, in their COMM_WORLD. */
  return merge_in_order(parents, 1, MPI_COMM_WORLD, old_rank, told, rebuilt);
}

/* Replaces `*comm` by its rebuilt form (a few attempts: each may meet another failure). */
static void recover(MPI_Comm* comm) {
  MPI_Comm rebuilt;
  for (int attempt = 0; !replace_as_survivor(*comm, &rebuilt); ++attempt) {
    if (attempt + 1 == kMaxAttempts) fail("no replacement after 10 attempts");
  }
  MPI_Comm_free(comm);
  *comm = rebuilt;
  MPI_Comm_set_errhandler(*comm, MPI_ERRORS_RETURN);
}

/* --busy: allreduce rounds over `*comm` until the original processes' clocks pass `end` (a new
 * process passes 0 and stops when they do: each round carries the maximum of "my time is up").
 * A round that failed anywhere is revoked, agreed on, and recovered from by a replacement, so
 * kills at instants the program does not know (mpiexec --kill) land in them. */
static void work(MPI_Comm* comm, double end) {
  for (;;) {
    int up = end > 0 && MPI_Wtime() >= end, all_up = 0;
    int ok = MPI_Allreduce(&up, &all_up, 1, MPI_INT, MPI_MAX, *comm) == MPI_SUCCESS;
    if (!ok) MPIX_Comm_revoke(*comm);
    MPIX_Comm_agree(*comm, &ok);
    if (!ok) {
      recover(comm);
    } else if (all_up) {
      return;
    }
  }
}

static int is_victim(const char* victims, int rank) {
  for (const char* at = victims; at != NULL && *at != '\0';) {
    char* end = NULL;
    const long victim = strtol(at, &end, 10);
    if (end == at) fail("--victims: expected ranks separated by commas");
    if (victim == rank) return 1;
    at = *end == ',' ? end + 1 : end;
  }
  return 0;
}

int main(int argc, char** argv) {
  program = argv[0];
  const int is_new = argc > 1 && strncmp(argv[1], "--new", 5) == 0;
  const int new_busy = is_new && strcmp(argv[1], "--new-busy") == 0;
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) {
    /* A new process whose start met another failure (its parents', its siblings'): it never
     * took part, and its parents start another; its end must not fail the job. */
    if (is_new) {
      printf("comm_replace: a new process could not start (a failure during its start)\n");
      return 0;
    }
    fail("MPI_Init failed");
  }
  MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm parent = MPI_COMM_NULL, rebuilt = MPI_COMM_NULL;
  MPI_Comm_get_parent(&parent);
  if (is_new != (parent != MPI_COMM_NULL)) fail("--new is for the processes it spawns");
  if (is_new) {
    busy = new_busy;
    if (!replace_as_new(&rebuilt)) {
      /* Never part of the computation: its parents replace it again. */
      printf("comm_replace: a new process gave up (a failure during its start)\n");
      MPI_Finalize();
      return 0;
    }
    MPI_Comm_set_errhandler(rebuilt, MPI_ERRORS_RETURN);
    if (busy) work(&rebuilt, 0);
  } else {
    const char* victims = NULL;
    double seconds = 0;
    for (int i = 1; i + 1 < argc; ++i) {
      if (strcmp(argv[i], "--victims") == 0) victims = argv[i + 1];
      if (strcmp(argv[i], "--busy") == 0) seconds = atof(argv[i + 1]);
    }
    busy = seconds > 0;
    int size = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_dup(MPI_COMM_WORLD, &rebuilt);
    MPI_Comm_set_errhandler(rebuilt, MPI_ERRORS_RETURN);
    /* The agreed point: each victim dies once every other process said it got there (victims
     * tell each other too, before they wait). */
    int token = 1;
    for (int r = 0; r < size; ++r) {
      if (r != world_rank && is_victim(victims, r)) {
        MPI_Send(&token, 1, MPI_INT, r, 7, MPI_COMM_WORLD);
      }
    }
    if (is_victim(victims, world_rank)) {
      for (int r = 0; r < size; ++r) {
        if (r != world_rank) MPI_Recv(&token, 1, MPI_INT, r, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      }
      raise(SIGKILL);
    }
    /* The survivors learn of it from their next collective: whoever saw the failure revokes,
     * and an agreement makes "it failed" everyone's answer. */
    int ok = MPI_Barrier(rebuilt) == MPI_SUCCESS;
    if (!ok) MPIX_Comm_revoke(rebuilt);
    MPIX_Comm_agree(rebuilt, &ok);
    if (!ok) recover(&rebuilt);
    if (busy) work(&rebuilt, MPI_Wtime() + seconds);
  }
  int rank = 0, size = 0;
  MPI_Comm_rank(rebuilt, &rank);
  MPI_Comm_size(rebuilt, &size);
  long mine = rank, sum = 0;
  if (MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, rebuilt) != MPI_SUCCESS) {
    fail("the allreduce over the rebuilt communicator failed");
  }
  printf("comm_replace: rank %d of %d ok: sum %ld%s\n", rank, size, sum,
         is_new ? " (a replacement)" : "");
  MPI_Comm_free(&rebuilt);
  MPI_Finalize();
  return 0;
}
