/* rft_comm_spawn through rft.h, under rftrun with 3 ranks that spawn 2 processes of this same
 * program ("child MODE" in their arguments: argv[1] tells them apart).
 *
 *   all     bad arguments first (maxprocs 0, a root outside, a communicator without every live
 *           process) fail with RFT_ERR_ARG at every member, nothing starts; then the spawn: the
 *           parents' intercommunicator has the 2 children as its remote group, the children's
 *           (rft_comm_get_parent) the 3 parents, and their own COMM_WORLD holds the 2 of them;
 *           point-to-point, bcast, allreduce across; merge into one communicator of 5 with the
 *           parents first, which spawns a grandchild (root: child 0). Prints "parent ok" (3),
 *           "child ok" (2) and "grandchild ok" (1).
 *   child-dies  child 1 dies at birth (before rft_init): the spawn fails with PROC_FAILED at
 *           every parent, errcodes naming child 1, and child 0's rft_init fails with PROC_FAILED
 *           (or, held in its start-up by its dead sibling past the parents' first-heartbeat
 *           timeout, child 0 is declared failed and killed too); nobody waits. Prints
 *           "child-dies ok" (3) and at most one "child init failed".
 *   parent-dies  a parent ends itself at the fault point RFT_FAULT_INJECT names (the test sets
 *           it: the root at spawn.launched, or parent 2 at merge.confirming): the other parents'
 *           spawn fails with PROC_FAILED and every child's rft_init with PROC_FAILED, cleanly
 *           and without a wait. Prints "parent-dies ok" (2) and "child init failed" (2).
 *   child-fault  child 1 dies once every parent has told it the intercommunicator works; a
 *           receive from it fails with PROC_FAILED at parent 0, which revokes; every member
 *           shrinks the intercommunicator to 3 + 1 and an allreduce over it crosses. Prints
 *           "child-fault ok" (4: the parents and child 0).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/multiproc/c_worker_checks.h"
#include "ulfm_api/rft.h"

enum { kParents = 3, kChildren = 2 };

static const char* program;

/* What each process adds to an allreduce across: parents their rank + 1, children 10 * (rank +
 * 1); each side gets the other's sum. */
static int Contribution(int is_child, int rank) { return is_child ? 10 * (rank + 1) : rank + 1; }
static const int kParentSum = 1 + 2 + 3, kChildSum = 10 + 20;

static rft_comm_t Spawn(const char* mode, int errcodes[kChildren]) {
  const char* const args[] = {"child", mode, NULL};
  rft_comm_t inter = RFT_COMM_NULL;
  const int rc = rft_comm_spawn(RFT_COMM_WORLD, program, args, kChildren, 0, &inter, errcodes);
  CHECK(rc == RFT_SUCCESS || inter == RFT_COMM_NULL, "a failed spawn left a communicator");
  if (rc != RFT_SUCCESS) return RFT_COMM_NULL;
  return inter;
}

/* Every member of both groups: the shape of the intercommunicator. */
static void CheckShape(rft_comm_t inter, int is_child) {
  int flag = 0, size = 0, remote = 0;
  CHECK_OK(rft_comm_test_inter(inter, &flag));
  CHECK_OK(rft_comm_size(inter, &size));
  CHECK_OK(rft_comm_remote_size(inter, &remote));
  CHECK(flag == 1 && size == (is_child ? kChildren : kParents) &&
            remote == (is_child ? kParents : kChildren),
        "inter %d size %d remote %d", flag, size, remote);
}

/* Every member of both groups: data crosses between them, and the merge orders them. */
static void Exchange(rft_comm_t inter, int is_child, int rank) {
  /* Point-to-point: child c and parent c swap their ranks. */
  if (rank < kChildren) {
    int mine = rank, theirs = -1;
    CHECK_OK(rft_sendrecv(&mine, 1, RFT_INT, rank, 5, &theirs, 1, RFT_INT, rank, 5, inter,
                          RFT_STATUS_IGNORE));
    CHECK(theirs == rank, "got %d from remote rank %d", theirs, rank);
  }
  int value = is_child ? -1 : 42;
  const int root = is_child ? 0 : (rank == 0 ? RFT_ROOT : RFT_PROC_NULL);
  CHECK_OK(rft_bcast(&value, 1, RFT_INT, root, inter));
  CHECK(value == 42 || !is_child, "bcast gave %d", value);
  int mine = Contribution(is_child, rank), sum = 0;
  CHECK_OK(rft_allreduce(&mine, &sum, 1, RFT_INT, RFT_SUM, inter));
  CHECK(sum == (is_child ? kParentSum : kChildSum), "allreduce across %d", sum);
  rft_comm_t merged = RFT_COMM_NULL;
  CHECK_OK(rft_intercomm_merge(inter, is_child, &merged));
  int merged_rank = -1, merged_size = 0;
  CHECK_OK(rft_comm_rank(merged, &merged_rank));
  CHECK_OK(rft_comm_size(merged, &merged_size));
  CHECK(merged_size == kParents + kChildren && merged_rank == (is_child ? kParents : 0) + rank,
        "merged rank %d of %d", merged_rank, merged_size);
  CHECK_OK(rft_allreduce(&mine, &sum, 1, RFT_INT, RFT_SUM, merged));
  CHECK(sum == kParentSum + kChildSum, "allreduce over the merged %d", sum);
  /* The merged communicator holds every live process of the job, so it may spawn again (the
   * parents' COMM_WORLD may not while the children live): one grandchild, its root a child. */
  const char* const args[] = {"child", "grandchild", NULL};
  rft_comm_t grandchild = RFT_COMM_NULL;
  int errcode = -1;
  CHECK_OK(rft_comm_spawn(merged, program, args, 1, kParents, &grandchild, &errcode));
  CHECK(errcode == RFT_SUCCESS, "errcode %s", rft_error_name(errcode));
  int one = 1;
  CHECK_OK(rft_allreduce(&one, &sum, 1, RFT_INT, RFT_SUM, grandchild));
  CHECK(sum == 100, "allreduce with the grandchild %d", sum);
  CHECK_OK(rft_comm_disconnect(&grandchild));
  CHECK(grandchild == RFT_COMM_NULL, "a disconnected handle stays");
  CHECK_OK(rft_comm_free(&merged));
}

/* The grandchild of `all`: its world is itself, its parents the 5 of the merged communicator. */
static void Grandchild(rft_comm_t parent) {
  int flag = 0, size = 0, remote = 0, mine = 100, sum = 0;
  CHECK_OK(rft_comm_test_inter(parent, &flag));
  CHECK_OK(rft_comm_size(parent, &size));
  CHECK_OK(rft_comm_remote_size(parent, &remote));
  CHECK(flag == 1 && size == 1 && remote == kParents + kChildren, "inter %d size %d remote %d",
        flag, size, remote);
  CHECK_OK(rft_allreduce(&mine, &sum, 1, RFT_INT, RFT_SUM, parent));
  CHECK(sum == kParents + kChildren, "allreduce with the merged %d", sum);
  printf("grandchild ok\n");
}

/* The parents' refused spawns: every member learns of a bad argument, whichever member had it. */
static void BadArguments(int rank) {
  const char* const args[] = {"child", "never", NULL};
  rft_comm_t inter = RFT_COMM_NULL;
  int errcodes[kChildren] = {-1, -1};
  CHECK_CODE(
      rft_comm_spawn(RFT_COMM_WORLD, program, args, rank == 0 ? 0 : kChildren, 0, &inter, errcodes),
      RFT_ERR_ARG);
  CHECK(inter == RFT_COMM_NULL && errcodes[0] == -1, "a refused spawn set its outputs");
  CHECK_CODE(rft_comm_spawn(RFT_COMM_WORLD, program, args, kChildren, rank == 2 ? 7 : 0, &inter,
                            RFT_ERRCODES_IGNORE),
             RFT_ERR_ARG);
  CHECK_CODE(rft_comm_spawn(RFT_COMM_WORLD, rank == 0 ? "" : program, args, kChildren, 0, &inter,
                            RFT_ERRCODES_IGNORE),
             RFT_ERR_ARG);
  /* rft_comm_spawn_multiple: no program, or one with an empty command (at the root only). */
  const char* const commands[] = {program, ""};
  const int counts[] = {1, 1};
  CHECK_CODE(rft_comm_spawn_multiple(RFT_COMM_WORLD, rank == 0 ? 0 : 2, commands, NULL, counts, 0,
                                     &inter, RFT_ERRCODES_IGNORE),
             RFT_ERR_ARG);
  CHECK_CODE(rft_comm_spawn_multiple(RFT_COMM_WORLD, 2, commands, NULL, counts, 0, &inter,
                                     RFT_ERRCODES_IGNORE),
             RFT_ERR_ARG);
  CHECK(strstr(rft_last_error_message(), rank == 0 ? "program 1: the command is empty"
                                                   : "the root's arguments are bad") != NULL,
        "message: %s", rft_last_error_message());
  /* A part of the job: the spawned processes could not join the rest of it. */
  rft_comm_t half = RFT_COMM_NULL;
  CHECK_OK(rft_comm_split(RFT_COMM_WORLD, rank == 0, 0, &half));
  CHECK_OK(rft_comm_set_errhandler(half, RFT_ERRORS_RETURN));
  CHECK_CODE(rft_comm_spawn(half, program, args, kChildren, 0, &inter, RFT_ERRCODES_IGNORE),
             RFT_ERR_ARG);
  CHECK(strstr(rft_last_error_message(), "is alive outside it") != NULL, "message: %s",
        rft_last_error_message());
  CHECK_OK(rft_comm_free(&half));
  rft_comm_t world = RFT_COMM_WORLD;
  CHECK_CODE(rft_comm_disconnect(&world), RFT_ERR_ARG);
  CHECK(world == RFT_COMM_WORLD, "a refused disconnect changed the handle");
}

/* `all`'s end: parent 0 sends child 0 a message whose request it frees, so it may still be on
 * its way when the disconnect starts, which waits for it; both sides disconnect. */
static void Disconnect(rft_comm_t* inter, int is_child, int rank) {
  int token = is_child ? 0 : 77;
  if (rank == 0 && !is_child) {
    rft_request_t freed = RFT_REQUEST_NULL;
    CHECK_OK(rft_isend(&token, 1, RFT_INT, 0, 6, *inter, &freed));
    CHECK_OK(rft_request_free(&freed));
  } else if (rank == 0) {
    CHECK_OK(rft_recv(&token, 1, RFT_INT, 0, 6, *inter, RFT_STATUS_IGNORE));
    CHECK(token == 77, "the freed send gave %d", token);
  }
  CHECK_OK(rft_comm_disconnect(inter));
  CHECK(*inter == RFT_COMM_NULL, "a disconnected handle stays");
}

static int Parent(const char* mode, int rank) {
  int errcodes[kChildren] = {-1, -1};
  if (strcmp(mode, "all") == 0) {
    BadArguments(rank);
    rft_comm_t inter = Spawn(mode, errcodes);
    CHECK(inter != RFT_COMM_NULL, "spawn failed");
    CHECK(errcodes[0] == RFT_SUCCESS && errcodes[1] == RFT_SUCCESS, "errcodes %d %d", errcodes[0],
          errcodes[1]);
    CheckShape(inter, 0);
    Exchange(inter, 0, rank);
    Disconnect(&inter, 0, rank);
    printf("parent ok\n");
  } else if (strcmp(mode, "child-dies") == 0) {
    CHECK(Spawn(mode, errcodes) == RFT_COMM_NULL, "the spawn of a dying child succeeded");
    /* Child 0 either sees its rft_init fail, or, held in its start-up by the dead sibling past
     * the parents' first-heartbeat timeout, is declared failed too. */
    CHECK((errcodes[0] == RFT_SUCCESS || errcodes[0] == RFT_ERR_PROC_FAILED) &&
              errcodes[1] == RFT_ERR_PROC_FAILED,
          "errcodes %s %s", rft_error_name(errcodes[0]), rft_error_name(errcodes[1]));
    /* The parents go on as before. */
    int one = 1, sum = 0;
    CHECK_OK(rft_allreduce(&one, &sum, 1, RFT_INT, RFT_SUM, RFT_COMM_WORLD));
    CHECK(sum == kParents, "allreduce %d", sum);
    printf("child-dies ok\n");
  } else if (strcmp(mode, "parent-dies") == 0) {
    /* A parent ends itself at a fault point (RFT_FAULT_INJECT, set by the test): the root once
     * the launcher started the children, or parent 2 in the confirming agreement. The others'
     * spawn fails with PROC_FAILED; the children all started (errcodes say so where known). */
    CHECK_CODE(rft_comm_spawn(RFT_COMM_WORLD, program, (const char* const[]){"child", mode, NULL},
                              kChildren, 0, &(rft_comm_t){RFT_COMM_NULL}, errcodes),
               RFT_ERR_PROC_FAILED);
    printf("parent-dies ok\n");
  } else if (strcmp(mode, "child-fault") == 0) {
    rft_comm_t inter = Spawn(mode, errcodes);
    CHECK(inter != RFT_COMM_NULL, "spawn failed");
    CHECK_OK(rft_comm_set_errhandler(inter, RFT_ERRORS_RETURN));
    int token = 1;
    CHECK_OK(rft_send(&token, 1, RFT_INT, 1, 9, inter));
    if (rank == 0) {
      CHECK_CODE(rft_recv(&token, 1, RFT_INT, 1, 10, inter, RFT_STATUS_IGNORE),
                 RFT_ERR_PROC_FAILED);
      CHECK_OK(rft_comm_revoke(inter));
    }
    rft_comm_t shrunk = RFT_COMM_NULL;
    CHECK_OK(rft_comm_shrink(inter, &shrunk));
    int remote = 0, mine = Contribution(0, rank), sum = 0;
    CHECK_OK(rft_comm_remote_size(shrunk, &remote));
    CHECK(remote == 1, "%d children after the shrink", remote);
    CHECK_OK(rft_allreduce(&mine, &sum, 1, RFT_INT, RFT_SUM, shrunk));
    CHECK(sum == Contribution(1, 0), "allreduce across the shrunk %d", sum);
    /* The revoked intercommunicator too: nobody acknowledged child 1's failure, so every
     * survivor of both sides learns it (the same outcome at each) and the handle goes. */
    CHECK_OK(rft_comm_disconnect(&shrunk));
    CHECK_CODE(rft_comm_disconnect(&inter), RFT_ERR_PROC_FAILED);
    CHECK(inter == RFT_COMM_NULL, "a disconnect that failed kept the handle");
    printf("child-fault ok\n");
  }
  return 0;
}

static int Child(const char* mode, int* argc, char*** argv) {
  int provided = 0;
  const int rc = rft_init(argc, argv, RFT_FT_NOTIFY, &provided);
  if (strcmp(mode, "child-dies") == 0 || strcmp(mode, "parent-dies") == 0) {
    CHECK(rc == RFT_ERR_PROC_FAILED, "rft_init of a child whose spawn failed returned %s",
          rft_error_name(rc));
    printf("child init failed: %s\n", rft_error_name(rc));
    return 0;
  }
  CHECK_OK(rc);
  const int grandchild = strcmp(mode, "grandchild") == 0;
  int rank = -1, size = 0;
  CHECK_OK(rft_comm_rank(RFT_COMM_WORLD, &rank));
  CHECK_OK(rft_comm_size(RFT_COMM_WORLD, &size));
  CHECK(size == (grandchild ? 1 : kChildren), "the children's world has %d", size);
  rft_comm_t parent = RFT_COMM_NULL;
  CHECK_OK(rft_comm_get_parent(&parent));
  CHECK(parent != RFT_COMM_NULL, "no parent");
  CHECK_OK(rft_comm_set_errhandler(parent, RFT_ERRORS_RETURN));
  if (grandchild) {
    Grandchild(parent);
  } else {
    CheckShape(parent, 1);
  }
  int parent_rank = -1;
  CHECK_OK(rft_comm_rank(parent, &parent_rank));
  CHECK(parent_rank == rank, "rank %d in the parent, %d in the world", parent_rank, rank);
  if (strcmp(mode, "all") == 0) {
    Exchange(parent, 1, rank);
    printf("child ok\n");
  } else if (strcmp(mode, "child-fault") == 0) {
    int token = 0;
    if (rank == 1) {
      /* Dies once every parent has said the intercommunicator works. */
      for (int p = 0; p < kParents; ++p) {
        CHECK_OK(rft_recv(&token, 1, RFT_INT, p, 9, parent, RFT_STATUS_IGNORE));
      }
      raise(SIGKILL);
    }
    rft_comm_t shrunk = RFT_COMM_NULL;
    int rc_shrink;
    /* Child 0 learns of the revocation (or the failure) by its next call, and shrinks. */
    while ((rc_shrink = rft_barrier(parent)) == RFT_SUCCESS) {
    }
    CHECK(rc_shrink == RFT_ERR_REVOKED || rc_shrink == RFT_ERR_PROC_FAILED, "barrier returned %s",
          rft_error_name(rc_shrink));
    CHECK_OK(rft_comm_shrink(parent, &shrunk));
    int remote = 0, mine = Contribution(1, rank), sum = 0;
    CHECK_OK(rft_comm_remote_size(shrunk, &remote));
    CHECK(remote == kParents, "%d parents after the shrink", remote);
    CHECK_OK(rft_allreduce(&mine, &sum, 1, RFT_INT, RFT_SUM, shrunk));
    CHECK(sum == kParentSum, "allreduce across the shrunk %d", sum);
    CHECK_OK(rft_comm_disconnect(&shrunk));
    CHECK_CODE(rft_comm_disconnect(&parent), RFT_ERR_PROC_FAILED);
    CHECK(parent == RFT_COMM_NULL, "a disconnect that failed kept the handle");
    printf("child-fault ok\n");
  }
  if (strcmp(mode, "all") == 0) {
    Disconnect(&parent, 1, rank);
  } else if (parent != RFT_COMM_NULL) {
    CHECK_OK(rft_comm_disconnect(&parent));
  }
  fflush(stdout);
  CHECK_OK(rft_finalize());
  return 0;
}

int main(int argc, char** argv) {
  program = argv[0];
  if (argc > 2 && strcmp(argv[1], "child") == 0) {
    const char* mode = argv[2];
    if (strcmp(mode, "child-dies") == 0 && getenv("RFT_JOIN") != NULL) {
      /* Child 1 dies at birth: its rank is in RFT_JOIN's block, known only after init; the
       * launcher's rank is in PMIX_RANK. */
      const char* pmix_rank = getenv("PMIX_RANK");
      if (pmix_rank != NULL && atoi(pmix_rank) == 1) raise(SIGKILL);
    }
    return Child(mode, &argc, &argv);
  }
  int provided = 0;
  CHECK_OK(rft_init(&argc, &argv, RFT_FT_NOTIFY, &provided));
  CHECK_OK(rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN));
  int rank = -1, n = 0;
  CHECK_OK(rft_comm_rank(RFT_COMM_WORLD, &rank));
  CHECK_OK(rft_comm_size(RFT_COMM_WORLD, &n));
  CHECK(n == kParents, "run with %d ranks, not %d", kParents, n);
  const char* mode = argc > 1 ? argv[1] : "all";
  Parent(mode, rank);
  fflush(stdout);
  CHECK_OK(rft_finalize());
  return 0;
}
