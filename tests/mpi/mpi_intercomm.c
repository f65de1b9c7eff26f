/* Intercommunicators as MPI programs use them: the world split in two groups (A: the lower half,
 * B: the rest, so the sizes differ at odd sizes), joined by MPI_Intercomm_create; the shape
 * calls, point-to-point naming the remote group, the blocking collectives with MPI's
 * intercommunicator meanings (MPI_ROOT / MPI_PROC_NULL roots, a derived type in a bcast), the
 * "v" and "w" forms, blocks of another size in each group, user operators, the reduce_scatters
 * (each blocking and non-blocking),
 * Comm_create, dup, merge with `high`; then ULFM across the groups: a revoke by A's rank 0 ends B's
 * barriers, an agreement spans both, a shrink gives an intercommunicator again. Plain C over
 * <mpi.h> (and <mpi-ext.h> where it exists), so the same source builds with rft's mpicc and the
 * MPICH family's; run with 2..8 processes. Prints "mpi_intercomm: rank R: N checks, N failed". */
#include <mpi.h>
#if defined(OPEN_MPI) || defined(RFT_MPI)
#include <mpi-ext.h>
#endif
#include <stdio.h>

#include "mpi_checks.h"

static int rank, size;

/* Group A is world ranks 0 .. size/2 - 1. */
static int in_a(int r) { return r < size / 2; }
static int a_size(void) { return size / 2; }
static int b_size(void) { return size - size / 2; }
/* The world rank of rank r of the remote group. */
static int remote_world(int r) { return in_a(rank) ? a_size() + r : r; }

static void check_shape(MPI_Comm inter, int* local_rank, int* remote) {
  int flag = 0, n = 0;
  CHECK_OK(MPI_Comm_test_inter(inter, &flag));
  CHECK(flag);
  CHECK_OK(MPI_Comm_rank(inter, local_rank));
  CHECK_OK(MPI_Comm_size(inter, &n));
  CHECK_OK(MPI_Comm_remote_size(inter, remote));
  CHECK(*local_rank == (in_a(rank) ? rank : rank - a_size()));
  CHECK(n == (in_a(rank) ? a_size() : b_size()));
  CHECK(*remote == (in_a(rank) ? b_size() : a_size()));
  MPI_Group group, world_group;
  CHECK_OK(MPI_Comm_remote_group(inter, &group));
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  int first = 0, first_world = -1;
  CHECK_OK(MPI_Group_translate_ranks(group, 1, &first, world_group, &first_world));
  CHECK(first_world == remote_world(0));
  CHECK_OK(MPI_Group_free(&group));
  CHECK_OK(MPI_Group_free(&world_group));
  CHECK_OK(MPI_Comm_test_inter(MPI_COMM_WORLD, &flag));
  CHECK(!flag);
}

static void check_point_to_point(MPI_Comm inter, int local_rank, int remote) {
  /* Each member exchanges its world rank with the remote member of its own rank (mod). */
  const int peer = local_rank % remote;
  int got = -1;
  MPI_Status status;
  MPI_Request request;
  /* Every remote member whose rank maps to this one sends to it. */
  int senders = 0;
  const int remote_group_of_peer = in_a(rank) ? b_size() : a_size();
  const int local_n = in_a(rank) ? a_size() : b_size();
  for (int r = 0; r < remote_group_of_peer; ++r) senders += r % local_n == local_rank;
  CHECK_OK(MPI_Isend(&rank, 1, MPI_INT, peer, 3, inter, &request));
  for (int i = 0; i < senders; ++i) {
    CHECK_OK(MPI_Recv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 3, inter, &status));
    CHECK(got == remote_world(status.MPI_SOURCE));
    CHECK(status.MPI_SOURCE % local_n == local_rank);
  }
  CHECK_OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK(error_class_of(MPI_Send(&rank, 1, MPI_INT, remote, 3, inter)) == MPI_ERR_RANK);
}

static void check_collectives(MPI_Comm inter, int local_rank, int remote) {
  const int a = in_a(rank);
  CHECK_OK(MPI_Barrier(inter));
  /* bcast of a strided column (a derived type) from A's rank 0 to B. */
  MPI_Datatype column;
  CHECK_OK(MPI_Type_vector(3, 1, 2, MPI_INT, &column));
  CHECK_OK(MPI_Type_commit(&column));
  int matrix[6] = {-1, -1, -1, -1, -1, -1};
  if (a && local_rank == 0) matrix[0] = 10, matrix[2] = 20, matrix[4] = 30;
  CHECK_OK(
      MPI_Bcast(matrix, 1, column, a ? (local_rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter));
  if (!a) CHECK(matrix[0] == 10 && matrix[2] == 20 && matrix[4] == 30 && matrix[1] == -1);
  CHECK_OK(MPI_Type_free(&column));
  /* allreduce: the other group's sum of world ranks. */
  int sum = -1, expected = 0;
  for (int r = 0; r < remote; ++r) expected += remote_world(r);
  CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, inter));
  CHECK(sum == expected);
  /* reduce to B's last rank, of A's values. */
  int max = -1;
  const int b_root = b_size() - 1;
  CHECK_OK(MPI_Reduce(&rank, &max, 1, MPI_INT, MPI_MAX,
                      a ? b_root : (local_rank == b_root ? MPI_ROOT : MPI_PROC_NULL), inter));
  CHECK(max == (!a && local_rank == b_root ? a_size() - 1 : -1));
  /* allgather: the other group's world ranks. */
  int all[8];
  CHECK_OK(MPI_Allgather(&rank, 1, MPI_INT, all, 1, MPI_INT, inter));
  for (int r = 0; r < remote; ++r) CHECK(all[r] == remote_world(r));
  /* gather to A's rank 0 and scatter from it. */
  int gathered[8] = {0};
  CHECK_OK(MPI_Gather(&rank, 1, MPI_INT, gathered, 1, MPI_INT,
                      a ? (local_rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter));
  if (a && local_rank == 0) {
    for (int r = 0; r < remote; ++r) CHECK(gathered[r] == remote_world(r));
  }
  int blocks[8], mine = -1;
  for (int r = 0; r < 8; ++r) blocks[r] = 100 + r;
  CHECK_OK(MPI_Scatter(blocks, 1, MPI_INT, &mine, 1, MPI_INT,
                       a ? (local_rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0, inter));
  CHECK(mine == (a ? -1 : 100 + local_rank));
  /* alltoall: block j to remote rank j. */
  int out[8], in[8];
  for (int j = 0; j < remote; ++j) out[j] = 10 * rank + j;
  CHECK_OK(MPI_Alltoall(out, 1, MPI_INT, in, 1, MPI_INT, inter));
  for (int j = 0; j < remote; ++j) CHECK(in[j] == 10 * remote_world(j) + local_rank);

  /* The non-blocking forms, all in flight together. */
  int ibcast = a && local_rank == 0 ? 77 : -1, isum = -1, imax = -1, igathered[8] = {0};
  int iall[8], iin[8], iblock = -1;
  MPI_Request requests[7];
  const int a_root = a ? (local_rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  CHECK_OK(MPI_Ibcast(&ibcast, 1, MPI_INT, a_root, inter, &requests[0]));
  CHECK_OK(MPI_Iallreduce(&rank, &isum, 1, MPI_INT, MPI_SUM, inter, &requests[1]));
  CHECK_OK(MPI_Ireduce(&rank, &imax, 1, MPI_INT, MPI_MAX, a_root, inter, &requests[2]));
  CHECK_OK(MPI_Igather(&rank, 1, MPI_INT, igathered, 1, MPI_INT, a_root, inter, &requests[3]));
  CHECK_OK(MPI_Iallgather(&rank, 1, MPI_INT, iall, 1, MPI_INT, inter, &requests[4]));
  CHECK_OK(MPI_Ialltoall(out, 1, MPI_INT, iin, 1, MPI_INT, inter, &requests[5]));
  CHECK_OK(MPI_Iscatter(blocks, 1, MPI_INT, &iblock, 1, MPI_INT, a_root, inter, &requests[6]));
  CHECK_OK(MPI_Waitall(7, requests, MPI_STATUSES_IGNORE));
  CHECK(ibcast == (a && local_rank != 0 ? -1 : 77));
  CHECK(isum == expected);
  CHECK(imax == (a && local_rank == 0 ? size - 1 : -1));
  for (int r = 0; a && local_rank == 0 && r < remote; ++r) CHECK(igathered[r] == remote_world(r));
  for (int r = 0; r < remote; ++r) CHECK(iall[r] == remote_world(r));
  for (int j = 0; j < remote; ++j) CHECK(iin[j] == 10 * remote_world(j) + local_rank);
  CHECK(iblock == (a ? -1 : 100 + local_rank));
}

/* A user operator: commutative and associative, distinct from MPI_SUM (n values give their sum
 * plus n - 1). */
static void plus_one(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  for (int i = 0; i < *len; ++i) ((int*)inout)[i] += ((int*)in)[i] + 1;
}

/* Pieces of different sizes: the "v" and "w" forms, blocks of another size in each group,
 * reductions with a user operator and MINLOC, the reduce_scatters, and a truncation. */
/* The collective `blocking`, or with `nonblocking` its non-blocking form completed by MPI_Wait:
 * check_uneven_collectives runs once each way. */
static MPI_Request pending;
static int wait_pending(int rc) {
  return rc == MPI_SUCCESS ? MPI_Wait(&pending, MPI_STATUS_IGNORE) : rc;
}
#define COLL(blocking, starting, ...) \
  (nonblocking ? wait_pending(MPI_##starting(__VA_ARGS__, &pending)) : MPI_##blocking(__VA_ARGS__))

static void check_uneven_collectives(MPI_Comm inter, int local_rank, int remote, int nonblocking) {
  const int a = in_a(rank);
  const int local_n = a ? a_size() : b_size();
  const int a_root = a ? (local_rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  int counts[8], displs[8], buffer[128], mine[16];
  /* gatherv to A's rank 0: B's member j sends j + 1 values, placed 10 * j apart. */
  for (int i = 0; i < local_rank + 1; ++i) mine[i] = 1000 * rank + i;
  for (int j = 0; j < remote; ++j) counts[j] = j + 1, displs[j] = 10 * j;
  for (int i = 0; i < 128; ++i) buffer[i] = -1;
  CHECK_OK(COLL(Gatherv, Igatherv, mine, local_rank + 1, MPI_INT, buffer, counts, displs, MPI_INT,
                a_root, inter));
  for (int j = 0; a && local_rank == 0 && j < remote; ++j) {
    for (int i = 0; i < j + 1; ++i) CHECK(buffer[10 * j + i] == 1000 * remote_world(j) + i);
    CHECK(buffer[10 * j + j + 1] == -1);
  }
  /* allgatherv: every member sends local_rank + 1 values; the groups' blocks differ. */
  for (int i = 0; i < 128; ++i) buffer[i] = -1;
  for (int j = 0; j < remote; ++j) counts[j] = j + 1, displs[j] = 9 * j + 1;
  CHECK_OK(COLL(Allgatherv, Iallgatherv, mine, local_rank + 1, MPI_INT, buffer, counts, displs,
                MPI_INT, inter));
  for (int j = 0; j < remote; ++j) {
    for (int i = 0; i < j + 1; ++i) CHECK(buffer[9 * j + 1 + i] == 1000 * remote_world(j) + i);
  }
  /* scatterv from B's rank 0 to A: A's member j gets j + 2 values. */
  const int b_root = a ? 0 : (local_rank == 0 ? MPI_ROOT : MPI_PROC_NULL);
  for (int i = 0; i < 128; ++i) buffer[i] = 5000 + i;
  for (int j = 0; j < remote; ++j) counts[j] = j + 2, displs[j] = 10 * j;
  for (int i = 0; i < 16; ++i) mine[i] = -1;
  CHECK_OK(COLL(Scatterv, Iscatterv, buffer, counts, displs, MPI_INT, mine, a ? local_rank + 2 : 0,
                MPI_INT, b_root, inter));
  for (int i = 0; a && i < local_rank + 2; ++i) CHECK(mine[i] == 5000 + 10 * local_rank + i);
  CHECK(mine[a ? local_rank + 2 : 0] == -1);
  /* alltoallv (and alltoallw, in bytes): (local_rank + j) % 3 values to remote member j. */
  int sdispls[8], rcounts[8], rdispls[8], out[64], in[64];
  for (int j = 0, at = 0; j < remote; ++j) {
    counts[j] = (local_rank + j) % 3, sdispls[j] = at;
    for (int i = 0; i < counts[j]; ++i) out[at + i] = 100 * rank + 10 * j + i;
    at += counts[j];
    rcounts[j] = (j + local_rank) % 3, rdispls[j] = 4 * j;
  }
  for (int i = 0; i < 64; ++i) in[i] = -1;
  CHECK_OK(COLL(Alltoallv, Ialltoallv, out, counts, sdispls, MPI_INT, in, rcounts, rdispls, MPI_INT,
                inter));
  for (int j = 0; j < remote; ++j) {
    for (int i = 0; i < rcounts[j]; ++i) {
      CHECK(in[4 * j + i] == 100 * remote_world(j) + 10 * local_rank + i);
    }
  }
  MPI_Datatype types[8];
  int sbytes[8], rbytes[8];
  for (int j = 0; j < remote; ++j) {
    types[j] = MPI_INT, sbytes[j] = 4 * sdispls[j], rbytes[j] = 4 * (rdispls[j] + 32);
  }
  for (int i = 0; i < 64; ++i) in[i] = -1;
  CHECK_OK(
      COLL(Alltoallw, Ialltoallw, out, counts, sbytes, types, in, rcounts, rbytes, types, inter));
  for (int j = 0; j < remote; ++j) {
    for (int i = 0; i < rcounts[j]; ++i) {
      CHECK(in[32 + 4 * j + i] == 100 * remote_world(j) + 10 * local_rank + i);
    }
  }
  /* allgather and alltoall whose groups send blocks of different sizes: A 2 values, B 3. */
  const int send_n = a ? 2 : 3, recv_n = a ? 3 : 2;
  for (int i = 0; i < send_n; ++i) mine[i] = 10 * rank + i;
  CHECK_OK(COLL(Allgather, Iallgather, mine, send_n, MPI_INT, buffer, recv_n, MPI_INT, inter));
  for (int j = 0; j < remote; ++j) {
    for (int i = 0; i < recv_n; ++i) CHECK(buffer[recv_n * j + i] == 10 * remote_world(j) + i);
  }
  for (int j = 0; j < remote * send_n; ++j) out[j] = 1000 * rank + j;
  CHECK_OK(COLL(Alltoall, Ialltoall, out, send_n, MPI_INT, in, recv_n, MPI_INT, inter));
  for (int j = 0; j < remote; ++j) {
    for (int i = 0; i < recv_n; ++i) {
      CHECK(in[recv_n * j + i] == 1000 * remote_world(j) + recv_n * local_rank + i);
    }
  }
  /* A user operator and MINLOC: the other group's values. */
  MPI_Op op;
  CHECK_OK(MPI_Op_create(plus_one, 1, &op));
  int value = rank, result = -1, expected = remote - 1;
  for (int j = 0; j < remote; ++j) expected += remote_world(j);
  CHECK_OK(COLL(Allreduce, Iallreduce, &value, &result, 1, MPI_INT, op, inter));
  CHECK(result == expected);
  result = -1;
  CHECK_OK(COLL(Reduce, Ireduce, &value, &result, 1, MPI_INT, op, a_root, inter));
  CHECK(result == (a && local_rank == 0 ? expected : -1));
  CHECK_OK(MPI_Op_free(&op));
  struct {
    int value, index;
  } pair = {(rank * 7) % 5, rank}, least = {-1, -1};
  int least_value = 99, least_index = -1;
  for (int j = 0; j < remote; ++j) {
    const int w = remote_world(j);
    if ((w * 7) % 5 < least_value) least_value = (w * 7) % 5, least_index = w;
  }
  CHECK_OK(COLL(Allreduce, Iallreduce, &pair, &least, 1, MPI_2INT, MPI_MINLOC, inter));
  CHECK(least.value == least_value && least.index == least_index);
  /* reduce_scatter_block: each group gets the other's sum, a_size() * b_size() values in all. */
  const int total = a_size() * b_size(), block = total / local_n;
  for (int i = 0; i < total; ++i) out[i] = 100 * rank + i;
  int remote_sum = 0;
  for (int j = 0; j < remote; ++j) remote_sum += remote_world(j);
  CHECK_OK(
      COLL(Reduce_scatter_block, Ireduce_scatter_block, out, in, block, MPI_INT, MPI_SUM, inter));
  for (int i = 0; i < block; ++i) {
    CHECK(in[i] == 100 * remote_sum + remote * (block * local_rank + i));
  }
  /* reduce_scatter: A's member 0 takes the rest of the total, the others one value each. */
  int before = 0;
  for (int r = 0; r < local_n; ++r) {
    counts[r] = a ? (r == 0 ? total - (local_n - 1) : 1) : block;
    if (r < local_rank) before += counts[r];
  }
  for (int i = 0; i < 64; ++i) in[i] = -1;
  CHECK_OK(COLL(Reduce_scatter, Ireduce_scatter, out, in, counts, MPI_INT, MPI_SUM, inter));
  for (int i = 0; i < counts[local_rank]; ++i) {
    CHECK(in[i] == 100 * remote_sum + remote * (before + i));
  }
  CHECK(in[counts[local_rank]] == -1);
  /* A root that expects fewer values than were sent: MPI_ERR_TRUNCATE there only. */
  for (int j = 0; j < remote; ++j) counts[j] = 1, displs[j] = j;
  mine[0] = mine[1] = 1;
  const int rc =
      COLL(Gatherv, Igatherv, mine, 2, MPI_INT, buffer, counts, displs, MPI_INT, a_root, inter);
  if (a && local_rank == 0) {
    CHECK(error_class_of(rc) == MPI_ERR_TRUNCATE);
  } else {
    CHECK_OK(rc);
  }
  /* A group that passes MPI_IN_PLACE (no meaning on an intercommunicator) fails, and the other
   * group fails too, naming it: nobody is left waiting. The non-blocking form refuses it at the
   * call, so there both groups pass it. */
  for (int j = 0; j < remote; ++j) counts[j] = 1, displs[j] = j;
  const int in_place = COLL(Alltoallv, Ialltoallv, a || nonblocking ? MPI_IN_PLACE : out, counts,
                            displs, MPI_INT, in, counts, displs, MPI_INT, inter);
  CHECK(error_class_of(in_place) == MPI_ERR_ARG);
}

/* MPI_Comm_create of an intercommunicator: each group passes a subgroup of its own group. */
static void check_create(MPI_Comm inter, int local_rank) {
  const int local_n = in_a(rank) ? a_size() : b_size();
  const int remote_n = in_a(rank) ? b_size() : a_size();
  MPI_Group local, without_first;
  CHECK_OK(MPI_Comm_group(inter, &local));
  /* Every member but the group's rank 0 (all of a group of one). */
  const int first = 0;
  if (local_n > 1) {
    CHECK_OK(MPI_Group_excl(local, 1, &first, &without_first));
  } else {
    CHECK_OK(MPI_Group_excl(local, 0, &first, &without_first));
  }
  MPI_Comm made;
  CHECK_OK(MPI_Comm_create(inter, without_first, &made));
  const int left_out = local_n > 1 && local_rank == 0;
  CHECK((made == MPI_COMM_NULL) == left_out);
  if (made != MPI_COMM_NULL) {
    int flag = 0, n = 0, remote = 0, made_rank = -1, sum = -1;
    CHECK_OK(MPI_Comm_test_inter(made, &flag));
    CHECK_OK(MPI_Comm_size(made, &n));
    CHECK_OK(MPI_Comm_remote_size(made, &remote));
    CHECK_OK(MPI_Comm_rank(made, &made_rank));
    CHECK(flag && n == (local_n > 1 ? local_n - 1 : 1));
    CHECK(remote == (remote_n > 1 ? remote_n - 1 : 1));
    CHECK(made_rank == (local_n > 1 ? local_rank - 1 : 0));
    int expected = 0;
    for (int j = remote_n > 1 ? 1 : 0; j < remote_n; ++j) expected += remote_world(j);
    CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, made));
    CHECK(sum == expected);
    CHECK_OK(MPI_Comm_free(&made));
  }
  /* An empty subgroup on one side: no communicator anywhere. */
  CHECK_OK(MPI_Comm_create(inter, in_a(rank) ? MPI_GROUP_EMPTY : local, &made));
  CHECK(made == MPI_COMM_NULL);
  CHECK_OK(MPI_Group_free(&without_first));
  CHECK_OK(MPI_Group_free(&local));
}

static void check_dup_and_merge(MPI_Comm inter) {
  MPI_Comm dup, merged;
  int flag = 0, merged_rank = -1, merged_size = 0;
  CHECK_OK(MPI_Comm_dup(inter, &dup));
  CHECK_OK(MPI_Comm_test_inter(dup, &flag));
  CHECK(flag);
  CHECK_OK(MPI_Comm_free(&dup));
  /* A passes high: B first. */
  CHECK_OK(MPI_Intercomm_merge(inter, in_a(rank), &merged));
  CHECK_OK(MPI_Comm_rank(merged, &merged_rank));
  CHECK_OK(MPI_Comm_size(merged, &merged_size));
  CHECK(merged_size == size);
  CHECK(merged_rank == (in_a(rank) ? rank + b_size() : rank - a_size()));
  int sum = -1;
  CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, merged));
  CHECK(sum == size * (size - 1) / 2);
  CHECK_OK(MPI_Comm_free(&merged));
  /* Split: a colour only one group gives makes no communicator; one colour with the key
   * reversing the ranks makes an intercommunicator of the same groups, each in reverse order
   * (last: its allreduce shows every member past both splits before check_ulfm revokes). */
  MPI_Comm split;
  int split_rank = -1, local = 0, remote = 0;
  CHECK_OK(MPI_Comm_split(inter, in_a(rank) ? 1 : MPI_UNDEFINED, 0, &split));
  CHECK(split == MPI_COMM_NULL);
  CHECK_OK(MPI_Comm_split(inter, 0, -rank, &split));
  CHECK_OK(MPI_Comm_test_inter(split, &flag));
  CHECK_OK(MPI_Comm_rank(split, &split_rank));
  CHECK_OK(MPI_Comm_size(split, &local));
  CHECK_OK(MPI_Comm_remote_size(split, &remote));
  CHECK(flag && local == (in_a(rank) ? a_size() : b_size()));
  CHECK(remote == (in_a(rank) ? b_size() : a_size()));
  CHECK(split_rank == (in_a(rank) ? a_size() - 1 - rank : size - 1 - rank));
  CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, split));
  CHECK(sum == (in_a(rank) ? size * (size - 1) / 2 - a_size() * (a_size() - 1) / 2
                           : a_size() * (a_size() - 1) / 2));
  CHECK_OK(MPI_Comm_free(&split));
}

static void check_ulfm(MPI_Comm inter) {
  /* A's rank 0 revokes; every member's barriers end with REVOKED, in both groups. */
  if (rank == 0) CHECK_OK(MPIX_Comm_revoke(inter));
  int rc;
  do {
    rc = MPI_Barrier(inter);
  } while (rc == MPI_SUCCESS);
  CHECK(error_class_of(rc) == MPIX_ERR_REVOKED);
  int flag = rank % 2 == 0 ? 3 : 1; /* AND over both groups (rank 1 is in one): 1 */
  CHECK_OK(MPIX_Comm_agree(inter, &flag));
  CHECK(flag == 1);
  MPI_Comm shrunk;
  CHECK_OK(MPIX_Comm_shrink(inter, &shrunk));
  int is_inter = 0, remote = 0;
  CHECK_OK(MPI_Comm_test_inter(shrunk, &is_inter));
  CHECK_OK(MPI_Comm_remote_size(shrunk, &remote));
  CHECK(is_inter && remote == (in_a(rank) ? b_size() : a_size()));
  CHECK_OK(MPI_Comm_free(&shrunk));
}

int main(int argc, char** argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 2;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size < 2 || size > 8) {
    fprintf(stderr, "mpi_intercomm: run with 2..8 processes, not %d\n", size);
    MPI_Finalize();
    return 2;
  }
  MPI_Comm local, inter;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, in_a(rank), rank, &local));
  CHECK_OK(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, in_a(rank) ? a_size() : 0, 7, &inter));
  CHECK_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
  int local_rank = -1, remote = -1;
  check_shape(inter, &local_rank, &remote);
  check_point_to_point(inter, local_rank, remote);
  check_collectives(inter, local_rank, remote);
  check_uneven_collectives(inter, local_rank, remote, 0);
  check_uneven_collectives(inter, local_rank, remote, 1);
  check_create(inter, local_rank);
  check_dup_and_merge(inter);
  check_ulfm(inter);
  CHECK_OK(MPI_Comm_free(&inter));
  CHECK_OK(MPI_Comm_free(&local));
  const int status = report_checks("mpi_intercomm");
  MPI_Finalize();
  return status;
}
