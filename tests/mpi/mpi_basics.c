/* Every group of MPI functions rft's MPI layer carries, checked against values computed here:
 * the environment, communicators and attributes, groups, point-to-point and requests,
 * collectives (blocking and non-blocking, in place, v forms, user operators applied in rank
 * order), derived datatypes on the wire, topologies, and errors with MPI's classes. Plain
 * MPI-3/4 C, so the same source builds with rft's mpicc and with the MPICH family's; run with
 * 2..8 processes. Prints "mpi_basics: rank R: N checks, N failed" at every rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_checks.h"

static int rank, size;

static void check_environment(void) {
  int flag = 0, provided = -1, version = 0, subversion = -1, len = 0;
  CHECK_OK(MPI_Initialized(&flag));
  CHECK(flag == 1);
  CHECK_OK(MPI_Finalized(&flag));
  CHECK(flag == 0);
  CHECK_OK(MPI_Query_thread(&provided));
  CHECK(provided >= MPI_THREAD_SINGLE && provided <= MPI_THREAD_MULTIPLE);
  CHECK_OK(MPI_Is_thread_main(&flag));
  CHECK(flag == 1);
  CHECK_OK(MPI_Get_version(&version, &subversion));
  CHECK(version >= 3);
  char name[MPI_MAX_PROCESSOR_NAME];
  CHECK_OK(MPI_Get_processor_name(name, &len));
  CHECK(len > 0 && (int)strlen(name) == len);
  char library[MPI_MAX_LIBRARY_VERSION_STRING];
  CHECK_OK(MPI_Get_library_version(library, &len));
  CHECK(len > 0);
  const double t0 = MPI_Wtime();
  CHECK(MPI_Wtick() > 0 && MPI_Wtick() < 1);
  CHECK(MPI_Wtime() >= t0);
  void* memory = NULL;
  CHECK_OK(MPI_Alloc_mem(1024, MPI_INFO_NULL, &memory));
  CHECK(memory != NULL);
  if (memory != NULL) memset(memory, 1, 1024);
  CHECK_OK(MPI_Free_mem(memory));
}

static int copies = 0, deletes = 0;
static int copy_attr(MPI_Comm comm, int key, void* extra, void* in, void* out, int* flag) {
  (void)comm, (void)key, (void)extra;
  ++copies;
  *(void**)out = in;
  *flag = 1;
  return MPI_SUCCESS;
}
static int delete_attr(MPI_Comm comm, int key, void* value, void* extra) {
  (void)comm, (void)key, (void)value, (void)extra;
  ++deletes;
  return MPI_SUCCESS;
}

static void check_communicators(void) {
  MPI_Comm dup, half, shared, created;
  int r, s, result, flag;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK_OK(MPI_Comm_rank(dup, &r));
  CHECK_OK(MPI_Comm_size(dup, &s));
  CHECK(r == rank && s == size);
  CHECK_OK(MPI_Comm_compare(MPI_COMM_WORLD, dup, &result));
  CHECK(result == MPI_CONGRUENT);
  CHECK_OK(MPI_Comm_compare(dup, dup, &result));
  CHECK(result == MPI_IDENT);
  CHECK_OK(MPI_Comm_set_name(dup, "the dup"));
  char name[MPI_MAX_OBJECT_NAME];
  int len;
  CHECK_OK(MPI_Comm_get_name(dup, name, &len));
  CHECK(strcmp(name, "the dup") == 0 && len == 7);
  CHECK_OK(MPI_Comm_get_name(MPI_COMM_WORLD, name, &len));
  CHECK(strcmp(name, "MPI_COMM_WORLD") == 0);
  CHECK_OK(MPI_Comm_test_inter(dup, &flag));
  CHECK(flag == 0);

  /* Split in halves, keys reversing the order. */
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half));
  CHECK_OK(MPI_Comm_size(half, &s));
  CHECK_OK(MPI_Comm_rank(half, &r));
  const int members = (size + 1 - rank % 2) / 2;
  CHECK(s == members);
  CHECK(r == members - 1 - rank / 2);
  MPI_Comm none;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == 0 ? MPI_UNDEFINED : 1, 0, &none));
  CHECK((rank == 0) == (none == MPI_COMM_NULL));
  if (none != MPI_COMM_NULL) CHECK_OK(MPI_Comm_free(&none));

  /* One node here: the shared-memory split is the whole world. */
  CHECK_OK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &shared));
  CHECK_OK(MPI_Comm_size(shared, &s));
  CHECK(s == size);
  CHECK_OK(MPI_Comm_free(&shared));

  /* Create from the group of even ranks. */
  MPI_Group world_group, evens;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  int range[1][3] = {{0, size - 1, 2}};
  CHECK_OK(MPI_Group_range_incl(world_group, 1, range, &evens));
  CHECK_OK(MPI_Comm_create(MPI_COMM_WORLD, evens, &created));
  CHECK((rank % 2 == 0) == (created != MPI_COMM_NULL));
  if (created != MPI_COMM_NULL) {
    CHECK_OK(MPI_Comm_rank(created, &r));
    CHECK(r == rank / 2);
    CHECK_OK(MPI_Comm_free(&created));
  }
  /* The same group by MPI_Comm_create_group: only its members call. */
  if (rank % 2 == 0) {
    CHECK_OK(MPI_Comm_create_group(MPI_COMM_WORLD, evens, 12, &created));
    CHECK_OK(MPI_Comm_rank(created, &r));
    CHECK(r == rank / 2);
    CHECK_OK(MPI_Barrier(created));
    CHECK_OK(MPI_Comm_free(&created));
  }
  CHECK_OK(MPI_Group_free(&evens));
  CHECK_OK(MPI_Group_free(&world_group));

  /* Attributes: predefined ones, and a keyval copied by dup and deleted at free. */
  int* value = NULL;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &value, &flag));
  CHECK(flag && *value >= 32767);
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &value, &flag));
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &value, &flag));
  CHECK(!flag || *value >= size);
  int key;
  static int payload = 99;
  CHECK_OK(MPI_Comm_create_keyval(copy_attr, delete_attr, &key, NULL));
  CHECK_OK(MPI_Comm_set_attr(dup, key, &payload));
  MPI_Comm dup2;
  CHECK_OK(MPI_Comm_dup(dup, &dup2));
  CHECK(copies == 1);
  int* got = NULL;
  CHECK_OK(MPI_Comm_get_attr(dup2, key, &got, &flag));
  CHECK(flag && got == &payload);
  CHECK_OK(MPI_Comm_free(&dup2));
  CHECK(deletes == 1);
  CHECK(dup2 == MPI_COMM_NULL);
  CHECK_OK(MPI_Comm_delete_attr(dup, key));
  CHECK(deletes == 2);
  CHECK_OK(MPI_Comm_get_attr(dup, key, &got, &flag));
  CHECK(!flag);
  CHECK_OK(MPI_Comm_free_keyval(&key));
  CHECK(key == MPI_KEYVAL_INVALID);

  /* Info. */
  MPI_Info info, copy;
  char text[64];
  int nkeys;
  CHECK_OK(MPI_Info_create(&info));
  CHECK_OK(MPI_Info_set(info, "alpha", "1"));
  CHECK_OK(MPI_Info_set(info, "beta", "two"));
  CHECK_OK(MPI_Info_set(info, "alpha", "one"));
  CHECK_OK(MPI_Info_get_nkeys(info, &nkeys));
  CHECK(nkeys == 2);
  CHECK_OK(MPI_Info_dup(info, &copy));
  CHECK_OK(MPI_Info_get(copy, "alpha", sizeof(text) - 1, text, &flag));
  CHECK(flag && strcmp(text, "one") == 0);
  CHECK_OK(MPI_Info_get_nthkey(copy, 1, text));
  CHECK(strcmp(text, "beta") == 0);
  CHECK_OK(MPI_Info_delete(copy, "beta"));
  CHECK_OK(MPI_Info_get(copy, "beta", sizeof(text) - 1, text, &flag));
  CHECK(!flag);
  CHECK_OK(MPI_Info_free(&info));
  CHECK_OK(MPI_Info_free(&copy));
  CHECK(info == MPI_INFO_NULL);

  CHECK_OK(MPI_Comm_free(&half));
  CHECK_OK(MPI_Comm_free(&dup));
}

static void check_groups(void) {
  MPI_Group world, first, rest, both, common, none;
  int n, r, result;
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world));
  CHECK_OK(MPI_Group_size(world, &n));
  CHECK(n == size);
  int zero = 0;
  CHECK_OK(MPI_Group_incl(world, 1, &zero, &first));
  CHECK_OK(MPI_Group_excl(world, 1, &zero, &rest));
  CHECK_OK(MPI_Group_rank(rest, &r));
  CHECK(r == (rank == 0 ? MPI_UNDEFINED : rank - 1));
  CHECK_OK(MPI_Group_union(rest, first, &both));
  CHECK_OK(MPI_Group_compare(both, world, &result));
  CHECK(result == MPI_SIMILAR);
  CHECK_OK(MPI_Group_intersection(rest, first, &common));
  CHECK_OK(MPI_Group_size(common, &n));
  CHECK(n == 0);
  CHECK_OK(MPI_Group_difference(world, rest, &none));
  CHECK_OK(MPI_Group_size(none, &n));
  CHECK(n == 1);
  int from[2] = {0, MPI_PROC_NULL}, to[2];
  CHECK_OK(MPI_Group_translate_ranks(world, 2, from, rest, to));
  CHECK(to[0] == MPI_UNDEFINED && to[1] == MPI_PROC_NULL);
  CHECK_OK(MPI_Group_size(MPI_GROUP_EMPTY, &n));
  CHECK(n == 0);
  int ranges[1][3] = {{size - 1, 0, -1}};
  MPI_Group reversed;
  CHECK_OK(MPI_Group_range_incl(world, 1, ranges, &reversed));
  CHECK_OK(MPI_Group_rank(reversed, &r));
  CHECK(r == size - 1 - rank);
  MPI_Group* all[] = {&world, &first, &rest, &both, &common, &none, &reversed};
  for (int i = 0; i < 7; ++i) CHECK_OK(MPI_Group_free(all[i]));
  CHECK(world == MPI_GROUP_NULL);
}

static void check_point_to_point(void) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int out[4] = {rank, rank * 10, rank * 100, -rank}, in[4] = {0};
  MPI_Status status;
  int count;

  CHECK_OK(
      MPI_Sendrecv(out, 4, MPI_INT, right, 5, in, 4, MPI_INT, left, 5, MPI_COMM_WORLD, &status));
  CHECK(in[0] == left && in[2] == left * 100 && status.MPI_SOURCE == left && status.MPI_TAG == 5);
  CHECK_OK(MPI_Get_count(&status, MPI_INT, &count));
  CHECK(count == 4);

  int token = rank;
  CHECK_OK(MPI_Sendrecv_replace(&token, 1, MPI_INT, right, 6, left, 6, MPI_COMM_WORLD, &status));
  CHECK(token == left);

  /* Non-blocking ring, in both directions, completed by Waitall. */
  MPI_Request requests[4];
  long a = 0, b = 0, mine = rank + 1000;
  CHECK_OK(MPI_Irecv(&a, 1, MPI_LONG, left, 7, MPI_COMM_WORLD, &requests[0]));
  CHECK_OK(MPI_Irecv(&b, 1, MPI_LONG, right, 8, MPI_COMM_WORLD, &requests[1]));
  CHECK_OK(MPI_Isend(&mine, 1, MPI_LONG, right, 7, MPI_COMM_WORLD, &requests[2]));
  CHECK_OK(MPI_Isend(&mine, 1, MPI_LONG, left, 8, MPI_COMM_WORLD, &requests[3]));
  MPI_Status statuses[4];
  CHECK_OK(MPI_Waitall(4, requests, statuses));
  CHECK(a == left + 1000 && b == right + 1000);
  CHECK(requests[0] == MPI_REQUEST_NULL && requests[3] == MPI_REQUEST_NULL);
  CHECK(statuses[1].MPI_SOURCE == right);

  /* ANY_SOURCE and ANY_TAG with Probe, Iprobe, Waitany and Testsome. */
  if (rank == 0) {
    int seen = 0;
    for (int i = 1; i < size; ++i) {
      CHECK_OK(MPI_Probe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &status));
      CHECK(status.MPI_TAG == 100 + status.MPI_SOURCE);
      CHECK_OK(MPI_Get_count(&status, MPI_CHAR, &count));
      CHECK(count == status.MPI_SOURCE);
      char text[16];
      CHECK_OK(MPI_Recv(text, sizeof(text), MPI_CHAR, status.MPI_SOURCE, status.MPI_TAG,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      seen |= 1 << status.MPI_SOURCE;
    }
    CHECK(seen == ((1 << size) - 2));
  } else {
    char text[16] = "abcdefghijklmno";
    CHECK_OK(MPI_Send(text, rank, MPI_CHAR, 0, 100 + rank, MPI_COMM_WORLD));
  }
  /* Nothing else may reach rank 0's wildcard probe: the next messages wait for this. */
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));

  /* MPI_PROC_NULL everywhere. */
  CHECK_OK(MPI_Send(out, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD));
  CHECK_OK(MPI_Recv(in, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &status));
  CHECK(status.MPI_SOURCE == MPI_PROC_NULL && status.MPI_TAG == MPI_ANY_TAG);
  CHECK_OK(MPI_Get_count(&status, MPI_INT, &count));
  CHECK(count == 0);
  MPI_Request null_request;
  CHECK_OK(MPI_Irecv(in, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, &null_request));
  int index = -5, flag = 0;
  CHECK_OK(MPI_Testany(1, &null_request, &index, &flag, &status));
  CHECK(flag == 1 && index == 0 && null_request == MPI_REQUEST_NULL);
  CHECK_OK(MPI_Waitany(1, &null_request, &index, &status));
  CHECK(index == MPI_UNDEFINED);

  /* Waitsome over receives from both neighbours. */
  int x = -1, y = -1;
  CHECK_OK(MPI_Irecv(&x, 1, MPI_INT, left, 9, MPI_COMM_WORLD, &requests[0]));
  CHECK_OK(MPI_Irecv(&y, 1, MPI_INT, right, 10, MPI_COMM_WORLD, &requests[1]));
  CHECK_OK(MPI_Send(&rank, 1, MPI_INT, right, 9, MPI_COMM_WORLD));
  CHECK_OK(MPI_Send(&rank, 1, MPI_INT, left, 10, MPI_COMM_WORLD));
  int done = 0, outcount = 0, indices[2];
  while (done < 2) {
    CHECK_OK(MPI_Waitsome(2, requests, &outcount, indices, statuses));
    if (outcount == MPI_UNDEFINED) break;
    done += outcount;
  }
  CHECK(done == 2 && x == left && y == right);

  /* Persistent requests, started three times. */
  MPI_Request persistent[2];
  int sent = 0, received = -1;
  CHECK_OK(MPI_Recv_init(&received, 1, MPI_INT, left, 11, MPI_COMM_WORLD, &persistent[0]));
  CHECK_OK(MPI_Send_init(&sent, 1, MPI_INT, right, 11, MPI_COMM_WORLD, &persistent[1]));
  for (int round = 0; round < 3; ++round) {
    sent = rank * 10 + round;
    CHECK_OK(MPI_Startall(2, persistent));
    CHECK_OK(MPI_Waitall(2, persistent, MPI_STATUSES_IGNORE));
    CHECK(received == left * 10 + round);
    CHECK(persistent[0] != MPI_REQUEST_NULL);
  }
  CHECK_OK(MPI_Request_free(&persistent[0]));
  CHECK_OK(MPI_Request_free(&persistent[1]));

  /* A window of small sends, which mostly leave at once (rft then hands out one shared, complete
   * request): every way of completing or freeing a request works on them, each handle once. */
  MPI_Request sends[8], receives[8];
  int values[8], window_got[8];
  for (int i = 0; i < 8; ++i) {
    values[i] = 1000 * rank + i, window_got[i] = -1;
    CHECK_OK(MPI_Irecv(&window_got[i], 1, MPI_INT, left, 12, MPI_COMM_WORLD, &receives[i]));
  }
  for (int i = 0; i < 8; ++i) {
    CHECK_OK(MPI_Isend(&values[i], 1, MPI_INT, right, 12, MPI_COMM_WORLD, &sends[i]));
  }
  CHECK_OK(MPI_Wait(&sends[0], MPI_STATUS_IGNORE));
  CHECK(sends[0] == MPI_REQUEST_NULL);
  do {
    CHECK_OK(MPI_Test(&sends[1], &flag, MPI_STATUS_IGNORE));
  } while (!flag);
  CHECK(sends[1] == MPI_REQUEST_NULL);
  do {
    CHECK_OK(MPI_Request_get_status(sends[2], &flag, MPI_STATUS_IGNORE));
  } while (!flag);
  CHECK(sends[2] != MPI_REQUEST_NULL);
  CHECK_OK(MPI_Request_free(&sends[2]));
  CHECK(sends[2] == MPI_REQUEST_NULL);
  CHECK_OK(MPI_Cancel(&sends[3]));
  CHECK_OK(MPI_Wait(&sends[3], &status));
  CHECK_OK(MPI_Test_cancelled(&status, &flag));
  CHECK(flag == 0 && sends[3] == MPI_REQUEST_NULL);
  CHECK_OK(MPI_Waitall(4, &sends[4], MPI_STATUSES_IGNORE));
  for (int i = 4; i < 8; ++i) CHECK(sends[i] == MPI_REQUEST_NULL);
  CHECK_OK(MPI_Waitall(8, receives, MPI_STATUSES_IGNORE));
  for (int i = 0; i < 8; ++i) CHECK(window_got[i] == 1000 * left + i);

  /* Matched probe. */
  CHECK_OK(MPI_Send(&rank, 1, MPI_INT, right, 12, MPI_COMM_WORLD));
  MPI_Message message;
  CHECK_OK(MPI_Mprobe(left, 12, MPI_COMM_WORLD, &message, &status));
  int matched = -1;
  CHECK_OK(MPI_Mrecv(&matched, 1, MPI_INT, &message, &status));
  CHECK(matched == left && message == MPI_MESSAGE_NULL);

  /* Buffered send. */
  static char bsend_buffer[1024 + MPI_BSEND_OVERHEAD * 4];
  CHECK_OK(MPI_Buffer_attach(bsend_buffer, sizeof(bsend_buffer)));
  double value = rank + 0.5, got = 0;
  CHECK_OK(MPI_Bsend(&value, 1, MPI_DOUBLE, right, 13, MPI_COMM_WORLD));
  CHECK_OK(MPI_Recv(&got, 1, MPI_DOUBLE, left, 13, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(got == left + 0.5);
  void* detached;
  int detached_size;
  CHECK_OK(MPI_Buffer_detach(&detached, &detached_size));
  CHECK(detached == bsend_buffer && detached_size == (int)sizeof(bsend_buffer));

  /* Cancel a receive nobody sends to. */
  MPI_Request lonely;
  CHECK_OK(MPI_Irecv(in, 1, MPI_INT, left, 999, MPI_COMM_WORLD, &lonely));
  CHECK_OK(MPI_Cancel(&lonely));
  CHECK_OK(MPI_Wait(&lonely, &status));
  CHECK_OK(MPI_Test_cancelled(&status, &flag));
  CHECK(flag == 1);

  /* Truncation. */
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_OK(MPI_Send(out, 4, MPI_INT, right, 14, MPI_COMM_WORLD));
  const int rc = MPI_Recv(in, 2, MPI_INT, left, 14, MPI_COMM_WORLD, &status);
  CHECK(error_class_of(rc) == MPI_ERR_TRUNCATE);
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* Synchronous sends complete only once a receive has matched them, at every size (a standard
 * send of a small message completes as soon as it is copied out). Each rank's receive from its
 * left neighbour is posted only after that neighbour said so by a second message, sent after
 * it tested its own synchronous send many times: a send that completed in those tests was not
 * synchronous. Blocking Ssend and a persistent one too, in an order that cannot deadlock. */
static void check_synchronous_sends(void) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  const int sizes[] = {0, 8, 4096, 65536};
  for (int s = 0; s < (int)(sizeof(sizes) / sizeof(sizes[0])); ++s) {
    const int bytes = sizes[s];
    char* out = malloc((size_t)bytes + 1);
    char* in = malloc((size_t)bytes + 1);
    for (int i = 0; i < bytes; ++i) out[i] = (char)(rank * 7 + i), in[i] = 0;
    MPI_Request send;
    CHECK_OK(MPI_Issend(bytes > 0 ? out : NULL, bytes, MPI_CHAR, right, 20, MPI_COMM_WORLD, &send));
    int flag = 0;
    for (int i = 0; i < 2000 && !flag; ++i) CHECK_OK(MPI_Test(&send, &flag, MPI_STATUS_IGNORE));
    if (flag) fprintf(stderr, "[%d] MPI_Issend of %d bytes completed unmatched\n", rank, bytes);
    CHECK(flag == 0);
    int go = bytes;
    CHECK_OK(MPI_Send(&go, 1, MPI_INT, right, 21, MPI_COMM_WORLD));
    CHECK_OK(MPI_Recv(&go, 1, MPI_INT, left, 21, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    MPI_Status status;
    CHECK_OK(MPI_Recv(in, bytes, MPI_CHAR, left, 20, MPI_COMM_WORLD, &status));
    int count = -1;
    CHECK_OK(MPI_Get_count(&status, MPI_CHAR, &count));
    CHECK(count == bytes && go == bytes);
    int same = 1;
    for (int i = 0; i < bytes; ++i) same &= in[i] == (char)(left * 7 + i);
    CHECK(same);
    if (!flag) CHECK_OK(MPI_Wait(&send, MPI_STATUS_IGNORE));
    CHECK(send == MPI_REQUEST_NULL);

    /* Blocking: even ranks send first, odd ones receive first (some rank is odd: size >= 2). */
    for (int turn = 0; turn < 2; ++turn) {
      if ((rank % 2 == 0) == (turn == 0)) {
        CHECK_OK(MPI_Ssend(out, bytes, MPI_CHAR, right, 22, MPI_COMM_WORLD));
      } else {
        CHECK_OK(MPI_Recv(in, bytes, MPI_CHAR, left, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
      }
    }
    same = 1;
    for (int i = 0; i < bytes; ++i) same &= in[i] == (char)(left * 7 + i);
    CHECK(same);
    free(out);
    free(in);
  }
  /* A persistent synchronous send, started twice. */
  MPI_Request persistent;
  int value = 0, got = -1;
  CHECK_OK(MPI_Ssend_init(&value, 1, MPI_INT, right, 23, MPI_COMM_WORLD, &persistent));
  for (int round = 0; round < 2; ++round) {
    value = rank * 100 + round;
    CHECK_OK(MPI_Start(&persistent));
    int flag = 0;
    for (int i = 0; i < 500 && !flag; ++i)
      CHECK_OK(MPI_Test(&persistent, &flag, MPI_STATUS_IGNORE));
    CHECK(flag == 0);
    CHECK_OK(MPI_Send(&round, 1, MPI_INT, right, 24, MPI_COMM_WORLD));
    int go = -1;
    CHECK_OK(MPI_Recv(&go, 1, MPI_INT, left, 24, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK_OK(MPI_Recv(&got, 1, MPI_INT, left, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
    CHECK(got == left * 100 + round && go == round);
    CHECK_OK(MPI_Wait(&persistent, MPI_STATUS_IGNORE));
  }
  CHECK_OK(MPI_Request_free(&persistent));
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
}

/* 2x2 integer matrix product: not commutative, so the order of application shows. */
static void matrix_product(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  int* a = (int*)in;
  int* b = (int*)inout;
  for (int k = 0; k < *len; ++k, a += 4, b += 4) {
    const int c[4] = {a[0] * b[0] + a[1] * b[2], a[0] * b[1] + a[1] * b[3],
                      a[2] * b[0] + a[3] * b[2], a[2] * b[1] + a[3] * b[3]};
    memcpy(b, c, sizeof(c));
  }
}

static void matrix_of(int r, int m[4]) { m[0] = 1, m[1] = r + 1, m[2] = r % 3, m[3] = 1; }

static void check_collectives(void) {
  int r;
  /* Allocation sizes: a positive member count (the compiler cannot know size > 0). */
  const size_t n = size > 0 ? (size_t)size : 1;
  CHECK_OK(MPI_Barrier(MPI_COMM_WORLD));
  double pi = rank == 1 % size ? 3.25 : 0;
  CHECK_OK(MPI_Bcast(&pi, 1, MPI_DOUBLE, 1 % size, MPI_COMM_WORLD));
  CHECK(pi == 3.25);

  long sum = 0, mine = rank + 1;
  CHECK_OK(MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD));
  CHECK(sum == (long)size * (size + 1) / 2);
  long in_place = rank + 1;
  CHECK_OK(MPI_Allreduce(MPI_IN_PLACE, &in_place, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD));
  CHECK(in_place == size);
  int reduced = -1, one = 1;
  CHECK_OK(MPI_Reduce(&one, &reduced, 1, MPI_INT, MPI_SUM, size - 1, MPI_COMM_WORLD));
  if (rank == size - 1) CHECK(reduced == size);
  unsigned short bits = (unsigned short)(1u << rank), all_bits = 0;
  CHECK_OK(MPI_Allreduce(&bits, &all_bits, 1, MPI_UNSIGNED_SHORT, MPI_BOR, MPI_COMM_WORLD));
  CHECK(all_bits == (1u << size) - 1);
  int odd = rank % 2, any_odd = 0;
  CHECK_OK(MPI_Allreduce(&odd, &any_odd, 1, MPI_INT, MPI_LXOR, MPI_COMM_WORLD));
  CHECK(any_odd == (size / 2) % 2);
  long double ld = rank, ld_sum = 0;
  CHECK_OK(MPI_Allreduce(&ld, &ld_sum, 1, MPI_LONG_DOUBLE, MPI_SUM, MPI_COMM_WORLD));
  CHECK(ld_sum == (long double)size * (size - 1) / 2);
  struct {
    float v;
    int i;
  } loc = {(float)(rank % 2), rank}, min_loc;
  CHECK_OK(MPI_Allreduce(&loc, &min_loc, 1, MPI_FLOAT_INT, MPI_MINLOC, MPI_COMM_WORLD));
  CHECK(min_loc.v == 0 && min_loc.i == 0);
  struct {
    short v;
    int i;
  } sloc = {(short)(rank % 2), rank}, max_loc;
  CHECK_OK(MPI_Allreduce(&sloc, &max_loc, 1, MPI_SHORT_INT, MPI_MAXLOC, MPI_COMM_WORLD));
  CHECK(max_loc.v == (size > 1) && max_loc.i == (size > 1 ? 1 : 0));

  /* A user operator that does not commute: applied as m0 * m1 * ... * m(n-1). */
  MPI_Op product;
  MPI_Datatype matrix;
  CHECK_OK(MPI_Op_create(matrix_product, 0, &product));
  CHECK_OK(MPI_Type_contiguous(4, MPI_INT, &matrix));
  CHECK_OK(MPI_Type_commit(&matrix));
  int m[4], expect[4], result[4];
  matrix_of(rank, m);
  matrix_of(0, expect);
  for (int k = 1; k < size; ++k) {
    int next[4];
    matrix_of(k, next);
    int len = 1;
    matrix_product(expect, next, &len, &matrix); /* next = expect * next */
    memcpy(expect, next, sizeof(next));
  }
  CHECK_OK(MPI_Allreduce(m, result, 1, matrix, product, MPI_COMM_WORLD));
  CHECK(memcmp(result, expect, sizeof(expect)) == 0);
  memset(result, 0, sizeof(result));
  CHECK_OK(MPI_Reduce(m, result, 1, matrix, product, 0, MPI_COMM_WORLD));
  if (rank == 0) CHECK(memcmp(result, expect, sizeof(expect)) == 0);
  int commute = 1;
  CHECK_OK(MPI_Op_commutative(product, &commute));
  CHECK(commute == 0);

  /* Scan and Exscan. */
  int scan = 0, exscan = -7;
  CHECK_OK(MPI_Scan(&one, &scan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(scan == rank + 1);
  CHECK_OK(MPI_Exscan(&one, &exscan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  if (rank > 0) CHECK(exscan == rank);
  int prefix[4];
  CHECK_OK(MPI_Scan(m, prefix, 1, matrix, product, MPI_COMM_WORLD));
  int want[4];
  matrix_of(0, want);
  for (int k = 1; k <= rank; ++k) {
    int next[4];
    matrix_of(k, next);
    int len = 1;
    matrix_product(want, next, &len, &matrix);
    memcpy(want, next, sizeof(next));
  }
  CHECK(memcmp(prefix, want, sizeof(want)) == 0);

  /* Gathers, scatters, all-to-all. */
  int* everyone = calloc(n * 2, sizeof(int));
  int pair[2] = {rank, rank * rank};
  CHECK_OK(MPI_Allgather(pair, 2, MPI_INT, everyone, 2, MPI_INT, MPI_COMM_WORLD));
  for (r = 0; r < size; ++r) CHECK(everyone[2 * r] == r && everyone[2 * r + 1] == r * r);
  memset(everyone, 0, n * 2 * sizeof(int));
  CHECK_OK(MPI_Gather(pair, 2, MPI_INT, everyone, 2, MPI_INT, 0, MPI_COMM_WORLD));
  if (rank == 0)
    for (r = 0; r < size; ++r) CHECK(everyone[2 * r + 1] == r * r);
  int part[2] = {-1, -1};
  if (rank == 0)
    for (r = 0; r < 2 * size; ++r) everyone[r] = r * 3;
  CHECK_OK(MPI_Scatter(everyone, 2, MPI_INT, part, 2, MPI_INT, 0, MPI_COMM_WORLD));
  CHECK(part[0] == rank * 6 && part[1] == rank * 6 + 3);
  /* In place at the root. */
  if (rank == 0) {
    for (r = 0; r < 2 * size; ++r) everyone[r] = -1;
    everyone[0] = 0, everyone[1] = 0;
    CHECK_OK(MPI_Gather(MPI_IN_PLACE, 2, MPI_INT, everyone, 2, MPI_INT, 0, MPI_COMM_WORLD));
    for (r = 0; r < size; ++r) CHECK(everyone[2 * r] == r);
  } else {
    CHECK_OK(MPI_Gather(pair, 2, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD));
  }
  /* v forms: member r sends r + 1 ints. */
  int* counts = calloc(n, sizeof(int));
  int* displs = calloc(n, sizeof(int));
  int total = 0;
  for (r = 0; r < size; ++r) {
    counts[r] = r + 1;
    displs[r] = total;
    total += r + 1;
  }
  int* v = calloc(total > 0 ? (size_t)total : 1, sizeof(int));
  int* mine_v = calloc(n, sizeof(int));
  for (r = 0; r <= rank; ++r) mine_v[r] = rank;
  CHECK_OK(MPI_Allgatherv(mine_v, rank + 1, MPI_INT, v, counts, displs, MPI_INT, MPI_COMM_WORLD));
  for (r = 0; r < size; ++r) CHECK(v[displs[r]] == r && v[displs[r] + r] == r);
  memset(mine_v, 0, n * sizeof(int));
  CHECK_OK(MPI_Scatterv(v, counts, displs, MPI_INT, mine_v, rank + 1, MPI_INT, 0, MPI_COMM_WORLD));
  CHECK(mine_v[0] == rank && mine_v[rank] == rank);
  memset(v, 0, (size_t)total * sizeof(int));
  CHECK_OK(
      MPI_Gatherv(mine_v, rank + 1, MPI_INT, v, counts, displs, MPI_INT, size - 1, MPI_COMM_WORLD));
  if (rank == size - 1)
    for (r = 0; r < size; ++r) CHECK(v[displs[r] + r] == r);
  int* to_each = calloc(n, sizeof(int));
  int* from_each = calloc(n, sizeof(int));
  for (r = 0; r < size; ++r) to_each[r] = rank * 100 + r;
  CHECK_OK(MPI_Alltoall(to_each, 1, MPI_INT, from_each, 1, MPI_INT, MPI_COMM_WORLD));
  for (r = 0; r < size; ++r) CHECK(from_each[r] == r * 100 + rank);
  int* ones = calloc(n, sizeof(int));
  int* zeros = calloc(n, sizeof(int));
  for (r = 0; r < size; ++r) ones[r] = 1, zeros[r] = r;
  memset(from_each, 0, n * sizeof(int));
  CHECK_OK(MPI_Alltoallv(to_each, ones, zeros, MPI_INT, from_each, ones, zeros, MPI_INT,
                         MPI_COMM_WORLD));
  for (r = 0; r < size; ++r) CHECK(from_each[r] == r * 100 + rank);
  /* Reduce_scatter(_block): element r of the sum goes to member r. */
  int block = -1;
  CHECK_OK(MPI_Reduce_scatter_block(to_each, &block, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(block == 100 * size * (size - 1) / 2 + size * rank);
  block = -1;
  CHECK_OK(MPI_Reduce_scatter(to_each, &block, ones, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
  CHECK(block == 100 * size * (size - 1) / 2 + size * rank);
  int local_in[2] = {3, 4}, local_io[2] = {5, 6};
  CHECK_OK(MPI_Reduce_local(local_in, local_io, 2, MPI_INT, MPI_PROD));
  CHECK(local_io[0] == 15 && local_io[1] == 24);

  /* Non-blocking forms. */
  MPI_Request requests[5];
  long isum = 0;
  int ibcast = rank == 0 ? 77 : 0;
  int* igathered = calloc(n, sizeof(int));
  long fold_in = rank, fold_out = -1;
  CHECK_OK(MPI_Ibarrier(MPI_COMM_WORLD, &requests[0]));
  CHECK_OK(MPI_Iallreduce(&mine, &isum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &requests[1]));
  CHECK_OK(MPI_Ibcast(&ibcast, 1, MPI_INT, 0, MPI_COMM_WORLD, &requests[2]));
  CHECK_OK(MPI_Iallgather(&rank, 1, MPI_INT, igathered, 1, MPI_INT, MPI_COMM_WORLD, &requests[3]));
  /* A reduction rft folds itself (LXOR), non-blocking. */
  fold_in = 1;
  CHECK_OK(
      MPI_Iallreduce(&fold_in, &fold_out, 1, MPI_LONG, MPI_LXOR, MPI_COMM_WORLD, &requests[4]));
  CHECK_OK(MPI_Waitall(5, requests, MPI_STATUSES_IGNORE));
  CHECK(isum == sum && ibcast == 77 && fold_out == size % 2);
  for (r = 0; r < size; ++r) CHECK(igathered[r] == r);
  int* ialltoall_out = calloc(n, sizeof(int));
  MPI_Request single;
  CHECK_OK(MPI_Ialltoall(to_each, 1, MPI_INT, ialltoall_out, 1, MPI_INT, MPI_COMM_WORLD, &single));
  int flag = 0;
  while (!flag) CHECK_OK(MPI_Test(&single, &flag, MPI_STATUS_IGNORE));
  for (r = 0; r < size; ++r) CHECK(ialltoall_out[r] == r * 100 + rank);
  /* Non-blocking v forms, scans and the block reduce-scatter, all in flight at once. */
  MPI_Request more[8];
  int* iv = calloc(total > 0 ? (size_t)total : 1, sizeof(int));
  int* iv_root = calloc(total > 0 ? (size_t)total : 1, sizeof(int));
  int* iscattered = calloc(n, sizeof(int));
  int* iall = calloc(n, sizeof(int));
  int iscan = 0, iexscan = -7, iblock = -1;
  for (r = 0; r <= rank; ++r) mine_v[r] = rank;
  CHECK_OK(MPI_Iallgatherv(mine_v, rank + 1, MPI_INT, iv, counts, displs, MPI_INT, MPI_COMM_WORLD,
                           &more[0]));
  CHECK_OK(MPI_Igatherv(mine_v, rank + 1, MPI_INT, iv_root, counts, displs, MPI_INT, 0,
                        MPI_COMM_WORLD, &more[1]));
  CHECK_OK(MPI_Iscatterv(v, counts, displs, MPI_INT, iscattered, rank + 1, MPI_INT, size - 1,
                         MPI_COMM_WORLD, &more[2]));
  CHECK_OK(MPI_Ialltoallv(to_each, ones, zeros, MPI_INT, iall, ones, zeros, MPI_INT, MPI_COMM_WORLD,
                          &more[3]));
  CHECK_OK(MPI_Iscan(&one, &iscan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &more[4]));
  CHECK_OK(MPI_Iexscan(&one, &iexscan, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &more[5]));
  CHECK_OK(
      MPI_Ireduce_scatter_block(to_each, &iblock, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &more[6]));
  /* Ireduce_scatter with blocks of different sizes: member r keeps elements displs[r] to
   * displs[r] + r of the sum. */
  int* contribution = calloc(total > 0 ? (size_t)total : 1, sizeof(int));
  int* ireduced = calloc(n, sizeof(int));
  for (r = 0; r < total; ++r) contribution[r] = rank * 1000 + r;
  CHECK_OK(MPI_Ireduce_scatter(contribution, ireduced, counts, MPI_INT, MPI_SUM, MPI_COMM_WORLD,
                               &more[7]));
  CHECK_OK(MPI_Waitall(8, more, MPI_STATUSES_IGNORE));
  for (r = 0; r <= rank; ++r) {
    CHECK(ireduced[r] == 1000 * size * (size - 1) / 2 + size * (displs[rank] + r));
  }
  free(contribution), free(ireduced);
  for (r = 0; r < size; ++r) CHECK(iv[displs[r]] == r && iv[displs[r] + r] == r);
  if (rank == 0)
    for (r = 0; r < size; ++r) CHECK(iv_root[displs[r] + r] == r);
  CHECK(iscattered[0] == rank && iscattered[rank] == rank);
  for (r = 0; r < size; ++r) CHECK(iall[r] == r * 100 + rank);
  CHECK(iscan == rank + 1);
  if (rank > 0) CHECK(iexscan == rank);
  CHECK(iblock == 100 * size * (size - 1) / 2 + size * rank);
  free(iv), free(iv_root), free(iscattered), free(iall);

  CHECK_OK(MPI_Op_free(&product));
  CHECK(product == MPI_OP_NULL);
  CHECK_OK(MPI_Type_free(&matrix));
  free(everyone), free(counts), free(displs), free(v), free(mine_v), free(to_each);
  free(from_each), free(ones), free(zeros), free(igathered), free(ialltoall_out);
}

/* Adds columns of a 4x4 double matrix: one element is four doubles at a stride of four. */
static void add_column(void* in, void* inout, int* len, MPI_Datatype* type) {
  (void)type;
  const double* a = (const double*)in;
  double* b = (double*)inout;
  for (int k = 0; k < *len; ++k) {
    for (int i = 0; i < 4; ++i) b[k + i * 4] += a[k + i * 4];
  }
}

static void check_datatypes(void) {
  const int right = (rank + 1) % size, left = (rank + size - 1) % size;
  int size_of, count;
  MPI_Aint lb, extent;
  CHECK_OK(MPI_Type_size(MPI_DOUBLE, &size_of));
  CHECK(size_of == 8);
  CHECK_OK(MPI_Type_size(MPI_DOUBLE_INT, &size_of));
  CHECK(size_of == 12);
  CHECK_OK(MPI_Type_get_extent(MPI_DOUBLE_INT, &lb, &extent));
  CHECK(lb == 0 && extent == 16);

  /* A column of a 4x4 matrix: a vector, sent and received into another column. */
  double matrix[4][4], target[4][4];
  for (int i = 0; i < 16; ++i) matrix[i / 4][i % 4] = rank * 100 + i;
  memset(target, 0, sizeof(target));
  MPI_Datatype column, column_resized;
  CHECK_OK(MPI_Type_vector(4, 1, 4, MPI_DOUBLE, &column));
  CHECK_OK(MPI_Type_commit(&column));
  CHECK_OK(MPI_Type_size(column, &size_of));
  CHECK(size_of == 32);
  CHECK_OK(MPI_Type_get_extent(column, &lb, &extent));
  CHECK(extent == (3 * 4 + 1) * 8);
  MPI_Status status;
  CHECK_OK(MPI_Sendrecv(&matrix[0][1], 1, column, right, 20, &target[0][2], 1, column, left, 20,
                        MPI_COMM_WORLD, &status));
  for (int i = 0; i < 4; ++i) CHECK(target[i][2] == left * 100 + i * 4 + 1);
  CHECK(target[0][0] == 0 && target[3][3] == 0);
  CHECK_OK(MPI_Get_count(&status, column, &count));
  CHECK(count == 1);
  CHECK_OK(MPI_Get_elements(&status, column, &count));
  CHECK(count == 4);
  /* A non-contiguous type in collectives: the whole matrix's columns, one per member. */
  CHECK_OK(MPI_Type_create_resized(column, 0, sizeof(double), &column_resized));
  CHECK_OK(MPI_Type_commit(&column_resized));
  double bcast_matrix[4][4];
  for (int i = 0; i < 16; ++i) bcast_matrix[i / 4][i % 4] = rank == 0 ? i : -1;
  CHECK_OK(MPI_Bcast(bcast_matrix, 4, column_resized, 0, MPI_COMM_WORLD));
  for (int i = 0; i < 16; ++i) CHECK(bcast_matrix[i / 4][i % 4] == i);

  /* A user reduction over that column type, resized smaller than its data (one element's data
   * spans 13 doubles, its extent is one): the fold's buffers must hold the data, not count *
   * extent. */
  MPI_Op column_sum;
  CHECK_OK(MPI_Op_create(add_column, 1, &column_sum));
  double col_in[4][4], col_out[4][4];
  for (int i = 0; i < 16; ++i) col_in[i / 4][i % 4] = rank + i, col_out[i / 4][i % 4] = -1;
  CHECK_OK(MPI_Allreduce(col_in, col_out, 1, column_resized, column_sum, MPI_COMM_WORLD));
  for (int i = 0; i < 4; ++i) {
    CHECK(col_out[i][0] == size * (size - 1) / 2.0 + size * (i * 4));
  }
  CHECK(col_out[0][1] == -1);
  CHECK_OK(MPI_Op_free(&column_sum));

  /* A struct with a hole, sent to the right. */
  struct particle {
    int id;
    double x;
    char tag;
  } p = {rank, rank * 0.25, (char)('a' + rank)}, q = {-1, -1, 0};
  int lengths[3] = {1, 1, 1};
  MPI_Aint displacements[3], base;
  MPI_Get_address(&p, &base);
  MPI_Get_address(&p.id, &displacements[0]);
  MPI_Get_address(&p.x, &displacements[1]);
  MPI_Get_address(&p.tag, &displacements[2]);
  for (int i = 0; i < 3; ++i) displacements[i] = MPI_Aint_diff(displacements[i], base);
  MPI_Datatype types[3] = {MPI_INT, MPI_DOUBLE, MPI_CHAR}, particle_type;
  CHECK_OK(MPI_Type_create_struct(3, lengths, displacements, types, &particle_type));
  CHECK_OK(MPI_Type_commit(&particle_type));
  CHECK_OK(MPI_Type_size(particle_type, &size_of));
  CHECK(size_of == 13);
  CHECK_OK(MPI_Sendrecv(&p, 1, particle_type, right, 21, &q, 1, particle_type, left, 21,
                        MPI_COMM_WORLD, MPI_STATUS_IGNORE));
  CHECK(q.id == left && q.x == left * 0.25 && q.tag == 'a' + left);

  /* Indexed: elements 0, 3..4, 7 of an int array. */
  int lens[3] = {1, 2, 1}, offsets[3] = {0, 3, 7}, data[8], got[8] = {0};
  for (int i = 0; i < 8; ++i) data[i] = rank * 10 + i;
  MPI_Datatype picked;
  CHECK_OK(MPI_Type_indexed(3, lens, offsets, MPI_INT, &picked));
  CHECK_OK(MPI_Type_commit(&picked));
  CHECK_OK(MPI_Sendrecv(data, 1, picked, right, 22, got, 4, MPI_INT, left, 22, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE));
  CHECK(got[0] == left * 10 && got[1] == left * 10 + 3 && got[2] == left * 10 + 4 &&
        got[3] == left * 10 + 7);

  /* A 2x2 subarray of a 4x4 array at (1, 2). */
  int sizes[2] = {4, 4}, subsizes[2] = {2, 2}, starts[2] = {1, 2}, grid[16], packed[4];
  for (int i = 0; i < 16; ++i) grid[i] = i;
  MPI_Datatype sub;
  CHECK_OK(MPI_Type_create_subarray(2, sizes, subsizes, starts, MPI_ORDER_C, MPI_INT, &sub));
  CHECK_OK(MPI_Type_commit(&sub));
  int position = 0;
  CHECK_OK(MPI_Pack(grid, 1, sub, packed, sizeof(packed), &position, MPI_COMM_WORLD));
  CHECK(position == 16 && packed[0] == 6 && packed[1] == 7 && packed[2] == 10 && packed[3] == 11);
  int unpacked[16] = {0};
  position = 0;
  CHECK_OK(MPI_Unpack(packed, sizeof(packed), &position, unpacked, 1, sub, MPI_COMM_WORLD));
  CHECK(unpacked[6] == 6 && unpacked[11] == 11 && unpacked[5] == 0);
  int pack_size = 0;
  CHECK_OK(MPI_Pack_size(2, sub, MPI_COMM_WORLD, &pack_size));
  CHECK(pack_size >= 32);

  MPI_Datatype* all[] = {&column, &column_resized, &particle_type, &picked, &sub};
  for (int i = 0; i < 5; ++i) CHECK_OK(MPI_Type_free(all[i]));
  CHECK(column == MPI_DATATYPE_NULL);
}

static void check_topology(void) {
  int dims[2] = {0, 0};
  CHECK_OK(MPI_Dims_create(size, 2, dims));
  CHECK(dims[0] * dims[1] == size && dims[0] >= dims[1]);
  int d3[3] = {0, 0, 0};
  CHECK_OK(MPI_Dims_create(12, 3, d3));
  CHECK(d3[0] == 3 && d3[1] == 2 && d3[2] == 2);
  int periods[2] = {1, 0};
  MPI_Comm cart;
  CHECK_OK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
  int coords[2], back, source, dest, status;
  CHECK_OK(MPI_Cart_coords(cart, rank, 2, coords));
  CHECK_OK(MPI_Cart_rank(cart, coords, &back));
  CHECK(back == rank);
  CHECK(coords[0] == rank / dims[1] && coords[1] == rank % dims[1]);
  CHECK_OK(MPI_Cart_shift(cart, 0, 1, &source, &dest));
  CHECK(dest == ((coords[0] + 1) % dims[0]) * dims[1] + coords[1]);
  CHECK_OK(MPI_Cart_shift(cart, 1, 1, &source, &dest));
  CHECK(dest == (coords[1] + 1 < dims[1] ? rank + 1 : MPI_PROC_NULL));
  CHECK_OK(MPI_Topo_test(cart, &status));
  CHECK(status == MPI_CART);
  int keep[2] = {0, 1};
  MPI_Comm row;
  int row_size;
  CHECK_OK(MPI_Cart_sub(cart, keep, &row));
  CHECK_OK(MPI_Comm_size(row, &row_size));
  CHECK(row_size == dims[1]);
  CHECK_OK(MPI_Comm_free(&row));
  CHECK_OK(MPI_Comm_free(&cart));
  CHECK_OK(MPI_Topo_test(MPI_COMM_WORLD, &status));
  CHECK(status == MPI_UNDEFINED);
}

static int handler_calls = 0, handler_class = -1;
static void count_errors(MPI_Comm* comm, int* code, ...) {
  (void)comm;
  ++handler_calls;
  MPI_Error_class(*code, &handler_class);
}

static void check_errors(void) {
  /* MPI-4: an error with no usable handle (a freed communicator, a bad request) goes to
   * MPI_COMM_SELF's handler. */
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
  int x = 0;
  CHECK(error_class_of(MPI_Send(&x, 1, MPI_INT, size + 5, 0, MPI_COMM_WORLD)) == MPI_ERR_RANK);
  CHECK(error_class_of(MPI_Send(&x, 1, MPI_INT, 0, -3, MPI_COMM_WORLD)) == MPI_ERR_TAG);
  CHECK(error_class_of(MPI_Send(&x, -1, MPI_INT, 0, 0, MPI_COMM_WORLD)) == MPI_ERR_COUNT);
  CHECK(error_class_of(MPI_Send(&x, 1, MPI_DATATYPE_NULL, 0, 0, MPI_COMM_WORLD)) == MPI_ERR_TYPE);
  CHECK(error_class_of(MPI_Send(&x, 1, (MPI_Datatype)0x12345678, 0, 0, MPI_COMM_WORLD)) ==
        MPI_ERR_TYPE);
  CHECK(error_class_of(MPI_Bcast(&x, 1, MPI_INT, size, MPI_COMM_WORLD)) == MPI_ERR_ROOT);
  double d = 1.0, e;
  CHECK(error_class_of(MPI_Allreduce(&d, &e, 1, MPI_DOUBLE, MPI_BAND, MPI_COMM_WORLD)) ==
        MPI_ERR_OP);
  MPI_Datatype uncommitted;
  CHECK_OK(MPI_Type_contiguous(2, MPI_INT, &uncommitted));
  CHECK(error_class_of(MPI_Send(&x, 1, uncommitted, 0, 0, MPI_COMM_WORLD)) == MPI_ERR_TYPE);
  CHECK_OK(MPI_Type_free(&uncommitted));
  MPI_Comm freed;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &freed));
  MPI_Comm stale = freed;
  CHECK_OK(MPI_Comm_free(&freed));
  CHECK(error_class_of(MPI_Barrier(stale)) == MPI_ERR_COMM);
  CHECK(error_class_of(MPI_Barrier(MPI_COMM_NULL)) == MPI_ERR_COMM);
  MPI_Request bogus = (MPI_Request)0x7a000001;
  CHECK(error_class_of(MPI_Wait(&bogus, MPI_STATUS_IGNORE)) == MPI_ERR_REQUEST);

  /* A user handler gets the class. */
  MPI_Errhandler handler, current;
  CHECK_OK(MPI_Comm_create_errhandler(count_errors, &handler));
  MPI_Comm dup;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK_OK(MPI_Comm_set_errhandler(dup, handler));
  CHECK_OK(MPI_Comm_get_errhandler(dup, &current));
  CHECK(current == handler);
  const int rc = MPI_Send(&x, 1, MPI_INT, -7, 0, dup);
  CHECK(error_class_of(rc) == MPI_ERR_RANK && handler_calls == 1 && handler_class == MPI_ERR_RANK);
  CHECK_OK(MPI_Comm_call_errhandler(dup, MPI_ERR_OTHER));
  CHECK(handler_calls == 2 && handler_class == MPI_ERR_OTHER);
  CHECK_OK(MPI_Errhandler_free(&handler));
  CHECK_OK(MPI_Comm_free(&dup));

  /* Classes, codes and strings. */
  char text[MPI_MAX_ERROR_STRING];
  int len, klass, code;
  CHECK_OK(MPI_Error_string(MPI_ERR_TRUNCATE, text, &len));
  CHECK(len > 0);
  CHECK_OK(MPI_Add_error_class(&klass));
  CHECK_OK(MPI_Add_error_code(klass, &code));
  CHECK_OK(MPI_Add_error_string(code, "a code of the test's own"));
  CHECK_OK(MPI_Error_string(code, text, &len));
  CHECK(strcmp(text, "a code of the test's own") == 0);
  int got_class;
  CHECK_OK(MPI_Error_class(code, &got_class));
  CHECK(got_class == klass);
  int* last;
  int flag;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &last, &flag));
  CHECK(flag && *last >= code);

  CHECK_OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL));
}

int main(int argc, char** argv) {
  int provided = -1;
  if (MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) return 2;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  check_environment();
  check_communicators();
  check_groups();
  check_point_to_point();
  check_synchronous_sends();
  check_collectives();
  check_datatypes();
  check_topology();
  check_errors();
  const int status = report_checks("mpi_basics");
  MPI_Finalize();
  return status;
}
