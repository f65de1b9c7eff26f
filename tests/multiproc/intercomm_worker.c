/* Intercommunicators through rft.h, under rftrun with 5 ranks: world ranks 0-1 form group A,
 * 2-4 group B (sizes differ on purpose), joined by rft_intercomm_create over COMM_WORLD.
 *
 *   all     ranks, sizes and groups; point-to-point between every pair of the two groups; every
 *           intercommunicator collective (MPI's meanings: data crosses between the groups),
 *           blocking and non-blocking; dup; merge with `high` ordering the groups; split by
 *           colour into intercommunicators. Prints "all ok".
 *   fault   world rank 4 (in B) dies once the intercommunicator works; a receive from it in A
 *           fails with PROC_FAILED, A's rank 0 revokes, and B's survivors, looping on barriers,
 *           see REVOKED (a revocation crosses to the other group); every survivor agrees (one
 *           flag over both groups), finds rank 4 in get_failed, shrinks to an intercommunicator
 *           of 2 + 2, and an allreduce over it gives the other group's sums. Prints "fault ok".
 *   create-fault  world rank 4 dies between the split and rft_intercomm_create (once every
 *           survivor has told it its split is done): every survivor's creation fails with
 *           PROC_FAILED (B's pooling fails, and its leader tells A's), none waits. Prints
 *           "create-fault ok".
 *   churn S allreduces over the intercommunicator for S seconds while the launcher kills members
 *           at instants the program does not know (rftrun --kill); each error is recovered by
 *           revoke + shrink, whichever group lost members. Every allreduce that succeeds gives
 *           the remote group's size; an agreement every 50 iterations decides, uniformly, when
 *           to stop. Prints "churn ok local L remote R" (L + R: the survivors).
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/multiproc/c_worker_checks.h"
#include "ulfm_api/rft.h"

static int world_rank;

static int InA(int rank) { return rank < 2; }

/* The intercommunicator between A and B, checked for its shape. */
static rft_comm_t MakeIntercomm(void) {
  rft_comm_t local = RFT_COMM_NULL;
  CHECK_OK(rft_comm_split(RFT_COMM_WORLD, InA(world_rank) ? 0 : 1, world_rank, &local));
  rft_comm_t inter = RFT_COMM_NULL;
  /* Leaders: A's rank 0 (world 0) and B's rank 0 (world 2). */
  CHECK_OK(rft_intercomm_create(local, 0, RFT_COMM_WORLD, InA(world_rank) ? 2 : 0, 17, &inter));
  CHECK_OK(rft_comm_free(&local));
  int flag = 0, rank = -1, size = -1, remote = -1;
  CHECK_OK(rft_comm_test_inter(inter, &flag));
  CHECK(flag == 1, "test_inter %d", flag);
  CHECK_OK(rft_comm_rank(inter, &rank));
  CHECK_OK(rft_comm_size(inter, &size));
  CHECK_OK(rft_comm_remote_size(inter, &remote));
  CHECK(rank == (InA(world_rank) ? world_rank : world_rank - 2), "rank %d", rank);
  CHECK(size == (InA(world_rank) ? 2 : 3) && remote == (InA(world_rank) ? 3 : 2),
        "size %d remote %d", size, remote);
  CHECK_OK(rft_comm_test_inter(RFT_COMM_WORLD, &flag));
  CHECK(flag == 0, "world test_inter %d", flag);
  CHECK_CODE(rft_comm_remote_size(RFT_COMM_WORLD, &remote), RFT_ERR_ARG);
  return inter;
}

/* World rank of the remote group's rank r. */
static int RemoteWorld(int r) { return InA(world_rank) ? r + 2 : r; }

static void PointToPoint(rft_comm_t inter, int remote) {
  int sent = world_rank, got[3] = {-1, -1, -1};
  rft_request_t requests[6];
  for (int r = 0; r < remote; ++r) {
    CHECK_OK(rft_irecv(&got[r], 1, RFT_INT, r, 5, inter, &requests[r]));
  }
  for (int r = 0; r < remote; ++r) {
    CHECK_OK(rft_isend(&sent, 1, RFT_INT, r, 5, inter, &requests[remote + r]));
  }
  CHECK_OK(rft_waitall(2 * remote, requests, RFT_STATUSES_IGNORE));
  for (int r = 0; r < remote; ++r) CHECK(got[r] == RemoteWorld(r), "got[%d] %d", r, got[r]);
  /* ANY_SOURCE names the sender's rank in the remote group. */
  if (!InA(world_rank) || world_rank == 0) {
    int value = -1;
    rft_status_t status;
    if (InA(world_rank)) {
      CHECK_OK(rft_recv(&value, 1, RFT_INT, RFT_ANY_SOURCE, 6, inter, &status));
      CHECK(value == 4 && status.source == 2, "value %d from %d", value, status.source);
    } else if (world_rank == 4) {
      CHECK_OK(rft_send(&sent, 1, RFT_INT, 0, 6, inter));
    }
  }
  /* A rank of the local group is not a peer. */
  CHECK_CODE(rft_send(&sent, 1, RFT_INT, remote, 5, inter), RFT_ERR_ARG);
}

static void Collectives(rft_comm_t inter, int rank, int remote) {
  const int a = InA(world_rank);
  CHECK_OK(rft_barrier(inter));
  /* bcast from A's rank 1 to B. */
  int value = a && rank == 1 ? 42 : -1;
  CHECK_OK(rft_bcast(&value, 1, RFT_INT, a ? (rank == 1 ? RFT_ROOT : RFT_PROC_NULL) : 1, inter));
  CHECK(value == (a ? (rank == 1 ? 42 : -1) : 42), "bcast %d", value);
  /* allreduce: each group gets the other's sum of world ranks (A: 2+3+4, B: 0+1). */
  int sum = -1;
  CHECK_OK(rft_allreduce(&world_rank, &sum, 1, RFT_INT, RFT_SUM, inter));
  CHECK(sum == (a ? 9 : 1), "allreduce %d", sum);
  /* reduce to B's rank 2 of A's values. */
  int max = -1;
  const int reduce_root = a ? 2 : (rank == 2 ? RFT_ROOT : RFT_PROC_NULL);
  CHECK_OK(rft_reduce(&world_rank, &max, 1, RFT_INT, RFT_MAX, reduce_root, inter));
  CHECK(max == (!a && rank == 2 ? 1 : -1), "reduce %d", max);
  /* allgather: the other group's world ranks in its order. */
  int all[3] = {-1, -1, -1};
  CHECK_OK(rft_allgather(&world_rank, 1, RFT_INT, all, inter));
  for (int r = 0; r < remote; ++r) CHECK(all[r] == RemoteWorld(r), "allgather[%d] %d", r, all[r]);
  /* gather to A's rank 0 from B. */
  int gathered[3] = {-1, -1, -1};
  const int gather_root = a ? (rank == 0 ? RFT_ROOT : RFT_PROC_NULL) : 0;
  CHECK_OK(rft_gather(&world_rank, 1, RFT_INT, gathered, gather_root, inter));
  if (a && rank == 0) {
    for (int r = 0; r < 3; ++r) CHECK(gathered[r] == r + 2, "gather[%d] %d", r, gathered[r]);
  }
  /* scatter from B's rank 1 to A: A's rank i gets 100 + i. */
  int blocks[2] = {100, 101}, mine = -1;
  const int scatter_root = a ? 1 : (rank == 1 ? RFT_ROOT : RFT_PROC_NULL);
  CHECK_OK(rft_scatter(blocks, &mine, 1, RFT_INT, scatter_root, inter));
  CHECK(mine == (a ? 100 + rank : -1), "scatter %d", mine);
  /* alltoall: block j goes to remote rank j, carrying 10 * world rank + j. */
  int out[3], in[3] = {-1, -1, -1};
  for (int j = 0; j < remote; ++j) out[j] = 10 * world_rank + j;
  CHECK_OK(rft_alltoall(out, 1, RFT_INT, in, inter));
  for (int j = 0; j < remote; ++j) {
    CHECK(in[j] == 10 * RemoteWorld(j) + rank, "alltoall[%d] %d", j, in[j]);
  }
  /* Non-blocking: an iallreduce and an ibcast in flight together. */
  int isum = -1, ivalue = !a && rank == 0 ? 7 : -1;
  rft_request_t requests[2];
  CHECK_OK(rft_iallreduce(&world_rank, &isum, 1, RFT_INT, RFT_SUM, inter, &requests[0]));
  CHECK_OK(rft_ibcast(&ivalue, 1, RFT_INT, a ? 0 : (rank == 0 ? RFT_ROOT : RFT_PROC_NULL), inter,
                      &requests[1]));
  CHECK_OK(rft_waitall(2, requests, RFT_STATUSES_IGNORE));
  CHECK(isum == (a ? 9 : 1) && ivalue == (a ? 7 : (rank == 0 ? 7 : -1)), "iallreduce %d ibcast %d",
        isum, ivalue);
  /* IN_PLACE has no meaning on an intercommunicator. */
  CHECK_CODE(rft_allreduce(RFT_IN_PLACE, &sum, 1, RFT_INT, RFT_SUM, inter), RFT_ERR_ARG);
}

/* The "v" forms, blocks of different sizes: a member of local rank s sends s + r + 1 values to
 * the other group's rank r (s + 1 in the rooted and all-gather forms), value 100 * its world
 * rank + i. */
static void VCollectives(rft_comm_t inter, int rank, int remote) {
  const int a = InA(world_rank);
  size_t counts[3], displs[3], send_counts[3], send_displs[3];
  int out[16], in[16];
  size_t at = 0;
  for (int j = 0; j < remote; ++j) counts[j] = (size_t)j + 1, displs[j] = at, at += counts[j];
  for (int i = 0; i < 16; ++i) out[i] = 100 * world_rank + i, in[i] = -1;
  /* gatherv to B's rank 0 from A. */
  const int gather_root = a ? 0 : (rank == 0 ? RFT_ROOT : RFT_PROC_NULL);
  CHECK_OK(rft_gatherv(out, (size_t)rank + 1, RFT_INT, in, counts, displs, gather_root, inter));
  for (int j = 0; !a && rank == 0 && j < remote; ++j) {
    for (size_t i = 0; i < counts[j]; ++i) {
      CHECK(in[displs[j] + i] == 100 * RemoteWorld(j) + (int)i, "gatherv[%d][%zu] %d", j, i,
            in[displs[j] + i]);
    }
  }
  /* scatterv from A's rank 1 to B: B's rank r gets r + 1 values from the root's displacement
   * for it, r (r + 1) / 2. */
  for (int i = 0; i < 16; ++i) in[i] = -1;
  const int scatter_root = a ? (rank == 1 ? RFT_ROOT : RFT_PROC_NULL) : 1;
  CHECK_OK(rft_scatterv(out, counts, displs, in, a ? 0 : (size_t)rank + 1, RFT_INT, scatter_root,
                        inter));
  for (int i = 0; !a && i <= rank; ++i) {
    CHECK(in[i] == 100 * RemoteWorld(1) + rank * (rank + 1) / 2 + i, "scatterv[%d] %d", i, in[i]);
  }
  /* allgatherv, non-blocking, beside an alltoallv of s + r + 1 values each way. */
  int gathered[16], all_in[16];
  for (int i = 0; i < 16; ++i) gathered[i] = all_in[i] = -1;
  at = 0;
  for (int j = 0; j < remote; ++j) {
    send_counts[j] = (size_t)(rank + j + 1), send_displs[j] = at, at += send_counts[j];
  }
  rft_request_t requests[2];
  CHECK_OK(rft_iallgatherv(out, (size_t)rank + 1, RFT_INT, gathered, counts, displs, inter,
                           &requests[0]));
  CHECK_OK(rft_ialltoallv(out, send_counts, send_displs, all_in, send_counts, send_displs, RFT_INT,
                          inter, &requests[1]));
  CHECK_OK(rft_waitall(2, requests, RFT_STATUSES_IGNORE));
  for (int j = 0; j < remote; ++j) {
    for (size_t i = 0; i < counts[j]; ++i) {
      CHECK(gathered[displs[j] + i] == 100 * RemoteWorld(j) + (int)i, "allgatherv[%d] %d", j,
            gathered[displs[j] + i]);
    }
    /* Remote rank j's block for this member started at its send_displs[rank]: the sum of
     * j + k + 1 over k < rank. */
    const int their_at = rank * (j + 1) + rank * (rank - 1) / 2;
    for (size_t i = 0; i < send_counts[j]; ++i) {
      CHECK(all_in[send_displs[j] + i] == 100 * RemoteWorld(j) + their_at + (int)i,
            "alltoallv[%d][%zu] %d", j, i, all_in[send_displs[j] + i]);
    }
  }
  /* A root expecting fewer values than a member sends: RFT_ERR_TRUNCATE there. */
  size_t ones[3] = {1, 1, 1}, steps[3] = {0, 1, 2};
  const int rc = rft_gatherv(out, 2, RFT_INT, in, ones, steps, gather_root, inter);
  if (!a && rank == 0) {
    CHECK(rc == RFT_ERR_TRUNCATE, "gatherv of too much: %d", rc);
  } else {
    CHECK_OK(rc);
  }
}

static void DupAndMerge(rft_comm_t inter) {
  const int a = InA(world_rank);
  rft_comm_t dup = RFT_COMM_NULL;
  CHECK_OK(rft_comm_dup(inter, &dup));
  int flag = 0, sum = -1;
  CHECK_OK(rft_comm_test_inter(dup, &flag));
  CHECK(flag == 1, "dup test_inter %d", flag);
  CHECK_OK(rft_allreduce(&world_rank, &sum, 1, RFT_INT, RFT_SUM, dup));
  CHECK(sum == (a ? 9 : 1), "allreduce on the dup %d", sum);
  rft_comm_t none = RFT_COMM_NULL;
  rft_group_t local = RFT_GROUP_NULL;
  CHECK_OK(rft_comm_group(dup, &local));
  /* Create from each group's whole group: the same two groups (rft.h). */
  rft_comm_t made = RFT_COMM_NULL;
  CHECK_OK(rft_comm_create(dup, local, &made));
  CHECK_OK(rft_comm_test_inter(made, &flag));
  CHECK_OK(rft_allreduce(&world_rank, &sum, 1, RFT_INT, RFT_SUM, made));
  CHECK(flag == 1 && sum == (a ? 9 : 1), "create of the groups: inter %d, sum %d", flag, sum);
  CHECK_OK(rft_comm_free(&made));
  /* World rank 0 names the other group's members: refused at every member (none waits). */
  rft_group_t remote = RFT_GROUP_NULL;
  CHECK_OK(rft_comm_remote_group(dup, &remote));
  CHECK_CODE(rft_comm_create(dup, world_rank == 0 ? remote : local, &none), RFT_ERR_ARG);
  CHECK(none == RFT_COMM_NULL, "a refused create made a communicator");
  CHECK_OK(rft_group_free(&remote));
  CHECK_OK(rft_group_free(&local));
  CHECK_OK(rft_comm_free(&dup));
  /* A passes high: B comes first (world 2, 3, 4, 0, 1). */
  rft_comm_t merged = RFT_COMM_NULL;
  CHECK_OK(rft_intercomm_merge(inter, a, &merged));
  int rank = -1, size = -1;
  CHECK_OK(rft_comm_rank(merged, &rank));
  CHECK_OK(rft_comm_size(merged, &size));
  CHECK_OK(rft_comm_test_inter(merged, &flag));
  CHECK(size == 5 && flag == 0 && rank == (a ? world_rank + 3 : world_rank - 2),
        "merged rank %d size %d inter %d", rank, size, flag);
  CHECK_OK(rft_allreduce(&world_rank, &sum, 1, RFT_INT, RFT_SUM, merged));
  CHECK(sum == 10, "allreduce on the merge %d", sum);
  CHECK_OK(rft_comm_free(&merged));
  /* Nobody passes high: the intercommunicator's order, A (the lower leader) first. */
  CHECK_OK(rft_intercomm_merge(inter, 0, &merged));
  CHECK_OK(rft_comm_rank(merged, &rank));
  CHECK(rank == world_rank, "merged (no high) rank %d", rank);
  CHECK_OK(rft_comm_free(&merged));
  CHECK_CODE(rft_intercomm_merge(RFT_COMM_WORLD, 0, &merged), RFT_ERR_ARG);
}

/* Split of the intercommunicator (MPI-4.1 §7.4.2): colour = world rank % 2 and key = -world
 * rank, so colour 0 pairs A's world rank 0 with B's 4 and 2 (in that order), colour 1 A's 1 with
 * B's 3; an allreduce over each gives the other side's sum of world ranks. Colours that only
 * one group gives yield no communicator. */
static void Split(rft_comm_t inter) {
  const int color = world_rank % 2;
  rft_comm_t split = RFT_COMM_NULL;
  CHECK_OK(rft_comm_split(inter, color, -world_rank, &split));
  CHECK(split != RFT_COMM_NULL, "no communicator for colour %d", color);
  int is_inter = 0, size = 0, remote = 0, rank = -1, sum = -1;
  CHECK_OK(rft_comm_test_inter(split, &is_inter));
  CHECK_OK(rft_comm_size(split, &size));
  CHECK_OK(rft_comm_remote_size(split, &remote));
  CHECK_OK(rft_comm_rank(split, &rank));
  const int b_members = color == 0 ? 2 : 1;
  const int expected_rank = world_rank == 2 ? 1 : 0; /* B's colour 0 is ordered 4, 2 */
  CHECK(is_inter && size == (InA(world_rank) ? 1 : b_members) &&
            remote == (InA(world_rank) ? b_members : 1) && rank == expected_rank,
        "split: inter %d size %d remote %d rank %d", is_inter, size, remote, rank);
  CHECK_OK(rft_allreduce(&world_rank, &sum, 1, RFT_INT, RFT_SUM, split));
  const int other_side = InA(world_rank) ? (color == 0 ? 2 + 4 : 3) : color;
  CHECK(sum == other_side, "allreduce over the split %d, expected %d", sum, other_side);
  CHECK_OK(rft_comm_free(&split));
  /* A's colours are not B's: nobody gets a communicator. */
  CHECK_OK(rft_comm_split(inter, InA(world_rank) ? 5 : 6, 0, &split));
  CHECK(split == RFT_COMM_NULL, "a colour of one group alone gave a communicator");
}

static void Fault(rft_comm_t inter, int rank) {
  const int a = InA(world_rank);
  CHECK_OK(rft_barrier(inter));
  /* The victim dies once every other member is past the barrier (each tells it so): no one's
   * barrier can then miss its messages. */
  int token = 0;
  if (world_rank == 4) {
    for (int r = 0; r < 4; ++r) {
      CHECK_OK(rft_recv(&token, 1, RFT_INT, r, 99, RFT_COMM_WORLD, RFT_STATUS_IGNORE));
    }
    raise(SIGKILL);
  }
  CHECK_OK(rft_send(&token, 1, RFT_INT, 4, 99, RFT_COMM_WORLD));
  if (a) {
    int value = 0;
    /* B's rank 2 is world 4. */
    const int got = rft_recv(&value, 1, RFT_INT, 2, 9, inter, RFT_STATUS_IGNORE);
    /* A's rank 1 may learn of rank 0's revocation first. */
    CHECK(got == RFT_ERR_PROC_FAILED || (rank == 1 && got == RFT_ERR_REVOKED),
          "receive from the dead rank returned %s", rft_error_name(got));
    if (rank == 0) CHECK_OK(rft_comm_revoke(inter));
    /* A's rank 1 also learns of the revocation through its own calls. */
    int rc;
    do {
      rc = rft_barrier(inter);
    } while (rc == RFT_ERR_PROC_FAILED);
    CHECK(rc == RFT_ERR_REVOKED, "A's barrier returned %s", rft_error_name(rc));
  } else {
    int rc;
    do {
      rc = rft_barrier(inter);
    } while (rc == RFT_ERR_PROC_FAILED || rc == RFT_SUCCESS);
    CHECK(rc == RFT_ERR_REVOKED, "B's barrier returned %s", rft_error_name(rc));
  }
  int flag = 1;
  int rc = rft_comm_agree(inter, &flag);
  CHECK(rc == RFT_SUCCESS || rc == RFT_ERR_PROC_FAILED, "agree %s", rft_error_name(rc));
  CHECK(flag == 1, "agree flag %d", flag);
  CHECK_OK(rft_comm_failure_ack(inter));
  rft_group_t failed = RFT_GROUP_NULL, world_group = RFT_GROUP_NULL;
  CHECK_OK(rft_comm_failure_get_acked(inter, &failed));
  CHECK_OK(rft_comm_group(RFT_COMM_WORLD, &world_group));
  int nfailed = -1, zero = 0, failed_world = -1;
  CHECK_OK(rft_group_size(failed, &nfailed));
  CHECK(nfailed == 1, "failed %d", nfailed);
  CHECK_OK(rft_group_translate_ranks(failed, 1, &zero, world_group, &failed_world));
  CHECK(failed_world == 4, "failed world rank %d", failed_world);
  CHECK_OK(rft_group_free(&failed));
  CHECK_OK(rft_group_free(&world_group));
  rft_comm_t shrunk = RFT_COMM_NULL;
  CHECK_OK(rft_comm_shrink(inter, &shrunk));
  int is_inter = 0, size = -1, remote = -1, sum = -1;
  CHECK_OK(rft_comm_test_inter(shrunk, &is_inter));
  CHECK_OK(rft_comm_size(shrunk, &size));
  CHECK_OK(rft_comm_remote_size(shrunk, &remote));
  CHECK(is_inter == 1 && size == 2 && remote == 2, "shrunk inter %d size %d remote %d", is_inter,
        size, remote);
  CHECK_OK(rft_allreduce(&world_rank, &sum, 1, RFT_INT, RFT_SUM, shrunk));
  CHECK(sum == (a ? 5 : 1), "allreduce on the shrunk %d", sum);
  CHECK_OK(rft_comm_free(&shrunk));
}

static void CreateFault(void) {
  rft_comm_t local = RFT_COMM_NULL;
  CHECK_OK(rft_comm_split(RFT_COMM_WORLD, InA(world_rank) ? 0 : 1, world_rank, &local));
  CHECK_OK(rft_comm_set_errhandler(local, RFT_ERRORS_RETURN));
  /* The victim dies only once every survivor has told it that its split is done: a split that
   * completed at rank 4 may still be in flight elsewhere, and must not meet the failure. */
  int done = 1;
  if (world_rank == 4) {
    for (int peer = 0; peer < 4; ++peer) {
      CHECK_OK(rft_recv(&done, 1, RFT_INT, peer, 23, RFT_COMM_WORLD, RFT_STATUS_IGNORE));
    }
    raise(SIGKILL);
  }
  CHECK_OK(rft_send(&done, 1, RFT_INT, 4, 23, RFT_COMM_WORLD));
  rft_comm_t inter = RFT_COMM_NULL;
  const int rc =
      rft_intercomm_create(local, 0, RFT_COMM_WORLD, InA(world_rank) ? 2 : 0, 17, &inter);
  CHECK(rc == RFT_ERR_PROC_FAILED && inter == RFT_COMM_NULL, "intercomm_create returned %s",
        rft_error_name(rc));
  CHECK_OK(rft_comm_free(&local));
}

static double Now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Revokes `*inter` and replaces it by its shrink (retried: a shrink may itself meet a failure). */
static void Recover(rft_comm_t* inter) {
  CHECK_OK(rft_comm_revoke(*inter));
  rft_comm_t shrunk = RFT_COMM_NULL;
  int rc;
  for (int attempt = 0; (rc = rft_comm_shrink(*inter, &shrunk)) != RFT_SUCCESS; ++attempt) {
    CHECK(rc == RFT_ERR_PROC_FAILED && attempt < 10, "shrink returned %s", rft_error_name(rc));
  }
  CHECK_OK(rft_comm_free(inter));
  CHECK_OK(rft_comm_set_errhandler(shrunk, RFT_ERRORS_RETURN));
  *inter = shrunk;
}

static void Churn(rft_comm_t* inter, double seconds) {
  const double start = Now();
  int recoveries = 0;
  for (;;) {
    int remote = 0, one = 1, sum = -1;
    CHECK_OK(rft_comm_remote_size(*inter, &remote));
    const int rc = rft_allreduce(&one, &sum, 1, RFT_INT, RFT_SUM, *inter);
    if (rc == RFT_SUCCESS) {
      CHECK(sum == remote, "allreduce %d with %d remote members", sum, remote);
    } else {
      CHECK(rc == RFT_ERR_PROC_FAILED || rc == RFT_ERR_REVOKED, "allreduce returned %s",
            rft_error_name(rc));
    }
    /* One agreement per step, ULFM's way: whether it succeeded everywhere (bit 0) and whether to
     * go on (bit 1), so every survivor takes the same branch and the calls stay matched. */
    int flag = (rc == RFT_SUCCESS ? 1 : 0) | (Now() - start < seconds ? 2 : 0);
    const int agreed = rft_comm_agree(*inter, &flag);
    CHECK(agreed == RFT_SUCCESS || agreed == RFT_ERR_PROC_FAILED, "agree returned %s",
          rft_error_name(agreed));
    if (agreed == RFT_ERR_PROC_FAILED) CHECK_OK(rft_comm_failure_ack(*inter));
    if (!(flag & 1)) {
      Recover(inter);
      ++recoveries;
    }
    if (!(flag & 2)) break;
  }
  int local = 0, remote = 0;
  CHECK_OK(rft_comm_size(*inter, &local));
  CHECK_OK(rft_comm_remote_size(*inter, &remote));
  printf("churn ok local %d remote %d (%d recoveries)\n", local, remote, recoveries);
  fflush(stdout);
}

int main(int argc, char** argv) {
  int provided = 0;
  CHECK_OK(rft_init(&argc, &argv, RFT_FT_NOTIFY, &provided));
  CHECK_OK(rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN));
  CHECK_OK(rft_comm_rank(RFT_COMM_WORLD, &world_rank));
  int n = 0;
  CHECK_OK(rft_comm_size(RFT_COMM_WORLD, &n));
  CHECK(n == 5, "run with 5 ranks, not %d", n);
  const char* mode = argc > 1 ? argv[1] : "all";
  if (strcmp(mode, "create-fault") == 0) {
    CreateFault();
    printf("create-fault ok\n");
    fflush(stdout);
    CHECK_OK(rft_finalize());
    return 0;
  }
  rft_comm_t inter = MakeIntercomm();
  CHECK_OK(rft_comm_set_errhandler(inter, RFT_ERRORS_RETURN));
  int rank = -1, remote = -1;
  CHECK_OK(rft_comm_rank(inter, &rank));
  CHECK_OK(rft_comm_remote_size(inter, &remote));
  if (strcmp(mode, "all") == 0) {
    PointToPoint(inter, remote);
    Collectives(inter, rank, remote);
    VCollectives(inter, rank, remote);
    DupAndMerge(inter);
    Split(inter);
  } else if (strcmp(mode, "fault") == 0) {
    Fault(inter, rank);
  } else if (strcmp(mode, "churn") == 0 && argc > 2) {
    Churn(&inter, atof(argv[2]));
  } else {
    CHECK(0, "unknown mode %s", mode);
  }
  CHECK_OK(rft_comm_free(&inter));
  if (strcmp(mode, "churn") != 0) printf("%s ok\n", mode);
  fflush(stdout);
  CHECK_OK(rft_finalize());
  return 0;
}
