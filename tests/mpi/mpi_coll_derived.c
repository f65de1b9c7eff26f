/* Collectives with derived datatypes: each non-blocking gather, scatter and all-to-all with a
 * strided vector and a resized struct gives, byte for byte, what its blocking twin gives with the
 * same arguments (one at a time and all in flight at once), the bytes the types skip untouched;
 * MPI_Alltoallw and MPI_Ialltoallw with a different type per member against an expectation
 * computed with MPI_Alltoallv, in place too; their argument errors. Plain MPI-3/4 C, so the same
 * source builds with rft's mpicc and with the MPICH family's; run with 2..8 processes. Prints
 * "mpi_coll_derived: rank R: N checks, N failed" at every rank. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_checks.h"

enum { kMaxRanks = 8, kMargin = 40, kSentinel = 0xee };

static int rank, size;
/* A vector of 2 ints at stride 2 (8 bytes of data, extent 12), and {int at 0, double at 8}
 * resized to an extent of 24 (12 bytes of data). */
static MPI_Datatype vec, rs;

static unsigned char* fresh(size_t bytes) {
  unsigned char* p = malloc(bytes);
  memset(p, kSentinel, bytes);
  return p;
}

/* Data no byte of which is the sentinel: ints below 0x0900, doubles k + 0.5 with k < 128. The
 * struct's gaps hold 0x77, so that a gap carried by mistake shows. */
static void fill(unsigned char* buf, size_t bytes, MPI_Datatype type) {
  if (type == rs) {
    memset(buf, 0x77, bytes);
    for (size_t e = 0; (e + 1) * 24 <= bytes; ++e) {
      const int i = (rank + 1) * 256 + (int)(e % 200) + 1;
      const double d = (double)((rank * 16 + (int)e) % 128) + 0.5;
      memcpy(buf + e * 24, &i, sizeof i);
      memcpy(buf + e * 24 + 8, &d, sizeof d);
    }
    return;
  }
  memset(buf, 0x77, bytes);
  for (size_t i = 0; (i + 1) * sizeof(int) <= bytes; ++i) {
    const int v = (rank + 1) * 256 + (int)(i % 200) + 1;
    memcpy(buf + i * sizeof(int), &v, sizeof v);
  }
}

static size_t written(const unsigned char* buf, size_t bytes) {
  size_t n = 0;
  for (size_t i = 0; i < bytes; ++i) n += buf[i] != kSentinel;
  return n;
}

static MPI_Aint extent_of(MPI_Datatype type) {
  MPI_Aint lb, extent;
  MPI_Type_get_extent(type, &lb, &extent);
  return extent;
}

static int size_of(MPI_Datatype type) {
  int s;
  MPI_Type_size(type, &s);
  return s;
}

/* ---- The eight non-blocking forms against their blocking twins ---- */

enum { GATHER, SCATTER, ALLGATHER, ALLTOALL, GATHERV, SCATTERV, ALLGATHERV, ALLTOALLV, OPS };
static const char* const op_names[OPS] = {"gather",  "scatter",  "allgather",  "alltoall",
                                          "gatherv", "scatterv", "allgatherv", "alltoallv"};

typedef struct {
  int op, in_place;
  MPI_Datatype type;
  unsigned char* send;
  unsigned char* blocking; /* the blocking form's receive buffer */
  unsigned char* started;  /* the non-blocking form's */
  size_t send_bytes, recv_bytes;
  size_t data_bytes; /* what a correct call writes into an untouched receive buffer */
  int root, sends, recvs;
  int scounts[kMaxRanks], sdispls[kMaxRanks], rcounts[kMaxRanks], rdispls[kMaxRanks];
} Case;

static void set_up(Case* c, int op, MPI_Datatype type, int in_place) {
  memset(c, 0, sizeof *c);
  c->op = op;
  c->type = type;
  c->in_place = in_place;
  const size_t e = (size_t)extent_of(type), s = (size_t)size_of(type), n = (size_t)size;
  size_t send_elements = 0, recv_elements = 0, received = 0;
  c->root = op == GATHER || op == GATHERV ? size - 1 : 0;
  switch (op) {
    case GATHER:
    case ALLGATHER:
      c->sends = c->recvs = 2;
      send_elements = 2;
      recv_elements = 2 * n;
      received = op == ALLGATHER || rank == c->root ? 2 * n : 0;
      break;
    case SCATTER:
      c->sends = c->recvs = 2;
      send_elements = 2 * n;
      recv_elements = 2;
      received = 2;
      break;
    case ALLTOALL:
      c->sends = c->recvs = 2;
      send_elements = recv_elements = received = 2 * n;
      break;
    case GATHERV:
    case ALLGATHERV:
    case SCATTERV: {
      /* Member r's block: r + 1 elements, with gaps between the blocks. */
      size_t total = 0;
      for (int r = 0; r < size; ++r) {
        c->rcounts[r] = c->scounts[r] = r + 1;
        c->rdispls[r] = c->sdispls[r] = r * (size + 2);
        total += (size_t)r + 1;
      }
      const size_t span = (n - 1) * (n + 2) + n;
      c->sends = c->recvs = rank + 1;
      send_elements = op == SCATTERV ? span : (size_t)rank + 1;
      recv_elements = op == SCATTERV ? (size_t)rank + 1 : span;
      received =
          op == SCATTERV ? (size_t)rank + 1 : (op == ALLGATHERV || rank == c->root ? total : 0);
      break;
    }
    case ALLTOALLV:
      /* 0, 1 or 2 elements to each member, agreed by both ends; received in reverse order. */
      for (int j = 0; j < size; ++j) {
        c->scounts[j] = c->rcounts[j] = (rank + j) % 3;
        c->sdispls[j] = 3 * j;
        c->rdispls[j] = 3 * (size - 1 - j);
        received += (size_t)c->rcounts[j];
      }
      send_elements = recv_elements = 3 * n;
      break;
  }
  c->send_bytes = send_elements * e;
  c->recv_bytes = recv_elements * e + kMargin;
  c->data_bytes = received * s;
  c->send = fresh(c->send_bytes);
  fill(c->send, c->send_bytes, type);
  c->blocking = fresh(c->recv_bytes);
  c->started = fresh(c->recv_bytes);
  if (in_place) { /* this member's data is in the receive buffer already */
    fill(c->blocking, c->recv_bytes, type);
    fill(c->started, c->recv_bytes, type);
  }
}

static void tear_down(Case* c) {
  free(c->send);
  free(c->blocking);
  free(c->started);
}

/* The call, blocking when `request` is NULL. In place where MPI allows it: at the root of a
 * gather (its send side) and of a scatter (its receive side), at every member of the others. */
static int call(Case* c, unsigned char* recv, MPI_Request* request) {
  const MPI_Comm w = MPI_COMM_WORLD;
  const MPI_Datatype t = c->type;
  const int root_here = rank == c->root;
  const void* send = c->send;
  void* into = recv;
  if (c->in_place) {
    if (c->op == SCATTER || c->op == SCATTERV) {
      if (root_here) into = MPI_IN_PLACE;
    } else if ((c->op != GATHER && c->op != GATHERV) || root_here) {
      send = MPI_IN_PLACE;
    }
  }
  switch (c->op) {
    case GATHER:
      return request ? MPI_Igather(send, c->sends, t, into, c->recvs, t, c->root, w, request)
                     : MPI_Gather(send, c->sends, t, into, c->recvs, t, c->root, w);
    case SCATTER:
      return request ? MPI_Iscatter(send, c->sends, t, into, c->recvs, t, c->root, w, request)
                     : MPI_Scatter(send, c->sends, t, into, c->recvs, t, c->root, w);
    case ALLGATHER:
      return request ? MPI_Iallgather(send, c->sends, t, into, c->recvs, t, w, request)
                     : MPI_Allgather(send, c->sends, t, into, c->recvs, t, w);
    case ALLTOALL:
      return request ? MPI_Ialltoall(send, c->sends, t, into, c->recvs, t, w, request)
                     : MPI_Alltoall(send, c->sends, t, into, c->recvs, t, w);
    case GATHERV:
      return request ? MPI_Igatherv(send, c->sends, t, into, c->rcounts, c->rdispls, t, c->root, w,
                                    request)
                     : MPI_Gatherv(send, c->sends, t, into, c->rcounts, c->rdispls, t, c->root, w);
    case SCATTERV:
      return request ? MPI_Iscatterv(send, c->scounts, c->sdispls, t, into, c->recvs, t, c->root, w,
                                     request)
                     : MPI_Scatterv(send, c->scounts, c->sdispls, t, into, c->recvs, t, c->root, w);
    case ALLGATHERV:
      return request
                 ? MPI_Iallgatherv(send, c->sends, t, into, c->rcounts, c->rdispls, t, w, request)
                 : MPI_Allgatherv(send, c->sends, t, into, c->rcounts, c->rdispls, t, w);
    default:
      return request ? MPI_Ialltoallv(send, c->scounts, c->sdispls, t, into, c->rcounts, c->rdispls,
                                      t, w, request)
                     : MPI_Alltoallv(send, c->scounts, c->sdispls, t, into, c->rcounts, c->rdispls,
                                     t, w);
  }
}

static void expect_same(const Case* c) {
  const int same = memcmp(c->blocking, c->started, c->recv_bytes) == 0;
  CHECK(same);
  if (!same) {
    fprintf(stderr, "rank %d: %s (%s%s) differs from its blocking form\n", rank, op_names[c->op],
            c->type == vec ? "vector" : "resized struct", c->in_place ? ", in place" : "");
  }
  /* Out of place, exactly the data bytes are written: nothing in the gaps or past the end. */
  if (!c->in_place) CHECK(written(c->blocking, c->recv_bytes) == c->data_bytes);
}

static void check_one_at_a_time(void) {
  const MPI_Datatype types[2] = {vec, rs};
  for (int op = 0; op < OPS; ++op) {
    for (int k = 0; k < 2; ++k) {
      for (int in_place = 0; in_place < 2; ++in_place) {
        Case c;
        set_up(&c, op, types[k], in_place);
        CHECK_OK(call(&c, c.blocking, NULL));
        MPI_Request request = MPI_REQUEST_NULL;
        CHECK_OK(call(&c, c.started, &request));
        CHECK_OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
        CHECK(request == MPI_REQUEST_NULL);
        expect_same(&c);
        tear_down(&c);
      }
    }
  }
}

/* All eight in flight at once, the two types alternating, then one MPI_Waitall. */
static void check_in_flight_together(void) {
  Case cases[OPS];
  MPI_Request requests[OPS];
  for (int op = 0; op < OPS; ++op) {
    set_up(&cases[op], op, op % 2 ? rs : vec, 0);
    CHECK_OK(call(&cases[op], cases[op].blocking, NULL));
  }
  for (int op = 0; op < OPS; ++op) CHECK_OK(call(&cases[op], cases[op].started, &requests[op]));
  CHECK_OK(MPI_Waitall(OPS, requests, MPI_STATUSES_IGNORE));
  for (int op = 0; op < OPS; ++op) {
    expect_same(&cases[op]);
    tear_down(&cases[op]);
  }
}

/* A vector sent, contiguous ints received, and the reverse: one type signature, two layouts. */
static void check_mixed_layouts(void) {
  const size_t n = (size_t)size;
  unsigned char* send = fresh(n * 12);
  fill(send, n * 12, vec);
  unsigned char *a = fresh(n * 12 + kMargin), *b = fresh(n * 12 + kMargin);
  MPI_Request request;
  CHECK_OK(MPI_Allgather(send, 1, vec, a, 2, MPI_INT, MPI_COMM_WORLD));
  CHECK_OK(MPI_Iallgather(send, 1, vec, b, 2, MPI_INT, MPI_COMM_WORLD, &request));
  CHECK_OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK(memcmp(a, b, n * 12 + kMargin) == 0);
  CHECK(written(a, n * 12 + kMargin) == n * 8);
  memset(a, kSentinel, n * 12 + kMargin);
  memset(b, kSentinel, n * 12 + kMargin);
  CHECK_OK(MPI_Alltoall(send, 2, MPI_INT, a, 1, vec, MPI_COMM_WORLD));
  CHECK_OK(MPI_Ialltoall(send, 2, MPI_INT, b, 1, vec, MPI_COMM_WORLD, &request));
  CHECK_OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK(memcmp(a, b, n * 12 + kMargin) == 0);
  CHECK(written(a, n * 12 + kMargin) == n * 8);
  /* Member r's block, as this member received it: r's ints 2*rank and 2*rank + 1. */
  for (int r = 0; r < size; ++r) {
    int first, second;
    memcpy(&first, a + r * 12, sizeof first);
    memcpy(&second, a + r * 12 + 8, sizeof second);
    CHECK(first == (r + 1) * 256 + 2 * rank + 1 && second == (r + 1) * 256 + 2 * rank + 2);
  }
  free(send);
  free(a);
  free(b);
}

/* ---- Alltoallw ---- */

enum { kSlot = 64 }; /* bytes of each member's block in the send and receive buffers */

/* What this member exchanges with member j, the same at both ends: 3 ints each way; 2 vectors
 * sent and 4 contiguous ints received; nothing (the send type MPI_DATATYPE_NULL); one resized
 * struct each way. */
static void w_args(int j, int* scount, MPI_Datatype* stype, int* rcount, MPI_Datatype* rtype) {
  switch ((rank + j) % 4) {
    case 0:
      *scount = *rcount = 3, *stype = *rtype = MPI_INT;
      break;
    case 1:
      *scount = 2, *stype = vec, *rcount = 4, *rtype = MPI_INT;
      break;
    case 2:
      *scount = *rcount = 0, *stype = MPI_DATATYPE_NULL, *rtype = MPI_INT;
      break;
    default:
      *scount = *rcount = 1, *stype = *rtype = rs;
  }
}

typedef struct {
  int scounts[kMaxRanks], sdispls[kMaxRanks], rcounts[kMaxRanks], rdispls[kMaxRanks];
  MPI_Datatype stypes[kMaxRanks], rtypes[kMaxRanks];
} WArgs;

static void make_w_args(WArgs* a) {
  for (int j = 0; j < size; ++j) {
    w_args(j, &a->scounts[j], &a->stypes[j], &a->rcounts[j], &a->rtypes[j]);
    a->sdispls[j] = j * kSlot;
    a->rdispls[j] = (size - 1 - j) * kSlot; /* received in reverse order */
  }
}

/* The expectation, over MPI_Alltoallv: each block packed with its send type (in place: the
 * receive layout), the packed bytes exchanged, each received block unpacked with its receive
 * type. */
static void expected_w(const WArgs* a, const unsigned char* send, int in_place,
                       unsigned char* out) {
  const int* scounts = in_place ? a->rcounts : a->scounts;
  const int* sdispls = in_place ? a->rdispls : a->sdispls;
  const MPI_Datatype* stypes = in_place ? a->rtypes : a->stypes;
  int pcounts[kMaxRanks], pdispls[kMaxRanks], qcounts[kMaxRanks], qdispls[kMaxRanks];
  unsigned char packed[kMaxRanks * kSlot], got[kMaxRanks * kSlot];
  int position = 0;
  for (int j = 0; j < size; ++j) {
    pdispls[j] = position;
    if (scounts[j] > 0) {
      CHECK_OK(MPI_Pack(send + sdispls[j], scounts[j], stypes[j], packed, (int)sizeof packed,
                        &position, MPI_COMM_WORLD));
    }
    pcounts[j] = position - pdispls[j];
    qcounts[j] = a->rcounts[j] * (a->rcounts[j] > 0 ? size_of(a->rtypes[j]) : 0);
    qdispls[j] = j == 0 ? 0 : qdispls[j - 1] + qcounts[j - 1];
  }
  CHECK_OK(MPI_Alltoallv(packed, pcounts, pdispls, MPI_BYTE, got, qcounts, qdispls, MPI_BYTE,
                         MPI_COMM_WORLD));
  for (int j = 0; j < size; ++j) {
    if (a->rcounts[j] == 0) continue;
    position = qdispls[j];
    CHECK_OK(MPI_Unpack(got, (int)sizeof got, &position, out + a->rdispls[j], a->rcounts[j],
                        a->rtypes[j], MPI_COMM_WORLD));
  }
}

static void check_alltoallw(void) {
  WArgs a;
  make_w_args(&a);
  const size_t bytes = (size_t)size * kSlot;
  unsigned char* send = fresh(bytes);
  fill(send, bytes, MPI_INT); /* every int slot holds data; the struct's int and double too */
  for (int j = 0; j < size; ++j) {
    if (a.stypes[j] == rs) fill(send + a.sdispls[j], 24, rs);
  }
  unsigned char *expected = fresh(bytes), *got = fresh(bytes), *igot = fresh(bytes);
  expected_w(&a, send, 0, expected);
  CHECK_OK(MPI_Alltoallw(send, a.scounts, a.sdispls, a.stypes, got, a.rcounts, a.rdispls, a.rtypes,
                         MPI_COMM_WORLD));
  CHECK(memcmp(got, expected, bytes) == 0);
  MPI_Request request;
  CHECK_OK(MPI_Ialltoallw(send, a.scounts, a.sdispls, a.stypes, igot, a.rcounts, a.rdispls,
                          a.rtypes, MPI_COMM_WORLD, &request));
  CHECK_OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK(memcmp(igot, expected, bytes) == 0);

  /* In place: the data sent is the receive buffer's, with the receive layout. */
  unsigned char* before = fresh(bytes);
  fill(before, bytes, MPI_INT);
  for (int j = 0; j < size; ++j) {
    if (a.rtypes[j] == rs) fill(before + a.rdispls[j], 24, rs);
  }
  memcpy(expected, before, bytes);
  expected_w(&a, before, 1, expected);
  memcpy(got, before, bytes);
  CHECK_OK(MPI_Alltoallw(MPI_IN_PLACE, NULL, NULL, NULL, got, a.rcounts, a.rdispls, a.rtypes,
                         MPI_COMM_WORLD));
  CHECK(memcmp(got, expected, bytes) == 0);
  memcpy(igot, before, bytes);
  CHECK_OK(MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, igot, a.rcounts, a.rdispls, a.rtypes,
                          MPI_COMM_WORLD, &request));
  CHECK_OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
  CHECK(memcmp(igot, expected, bytes) == 0);
  free(before);

  /* Every type contiguous: the same exchange as Alltoallv's of ints. */
  int ones[kMaxRanks], idispls[kMaxRanks], bdispls[kMaxRanks], ints_out[kMaxRanks],
      ints_in[kMaxRanks], ints_v[kMaxRanks];
  MPI_Datatype ints[kMaxRanks];
  for (int j = 0; j < size; ++j) {
    ones[j] = 1, idispls[j] = j, bdispls[j] = j * (int)sizeof(int), ints[j] = MPI_INT;
    ints_out[j] = 100 * rank + j;
  }
  CHECK_OK(
      MPI_Alltoallw(ints_out, ones, bdispls, ints, ints_in, ones, bdispls, ints, MPI_COMM_WORLD));
  CHECK_OK(MPI_Alltoallv(ints_out, ones, idispls, MPI_INT, ints_v, ones, idispls, MPI_INT,
                         MPI_COMM_WORLD));
  for (int j = 0; j < size; ++j) CHECK(ints_in[j] == ints_v[j] && ints_in[j] == 100 * j + rank);
  free(send);
  free(expected);
  free(got);
  free(igot);
}

static int message_has(int rc, const char* text) {
  char s[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, s, &len);
  return strstr(s, text) != NULL;
}

static void check_errors(void) {
  MPI_Comm comm;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
  CHECK_OK(MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN));
  WArgs a;
  make_w_args(&a);
  int send[kMaxRanks * kSlot / sizeof(int)] = {0}, recv[kMaxRanks * kSlot / sizeof(int)] = {0};
  a.scounts[0] = -1;
  int rc = MPI_Alltoallw(send, a.scounts, a.sdispls, a.stypes, recv, a.rcounts, a.rdispls, a.rtypes,
                         comm);
  CHECK(error_class_of(rc) == MPI_ERR_COUNT);
  CHECK(message_has(rc, "member 0's send count -1"));
  make_w_args(&a);
  a.rcounts[size - 1] = -2;
  MPI_Request request = MPI_REQUEST_NULL;
  rc = MPI_Ialltoallw(send, a.scounts, a.sdispls, a.stypes, recv, a.rcounts, a.rdispls, a.rtypes,
                      comm, &request);
  CHECK(error_class_of(rc) == MPI_ERR_COUNT);
  CHECK(request == MPI_REQUEST_NULL);
  /* An uncommitted type is refused as every collective refuses it. */
  MPI_Datatype uncommitted;
  CHECK_OK(MPI_Type_contiguous(3, MPI_INT, &uncommitted));
  make_w_args(&a);
  a.scounts[0] = 1, a.stypes[0] = uncommitted;
  rc = MPI_Alltoallw(send, a.scounts, a.sdispls, a.stypes, recv, a.rcounts, a.rdispls, a.rtypes,
                     comm);
  CHECK(error_class_of(rc) == MPI_ERR_TYPE);
  CHECK_OK(MPI_Type_free(&uncommitted));
  /* The non-blocking "v" form's counts are checked too. */
  int counts[kMaxRanks], displs[kMaxRanks];
  for (int j = 0; j < size; ++j) counts[j] = 1, displs[j] = 3 * j;
  counts[0] = -1;
  rc = MPI_Iallgatherv(send, 1, vec, recv, counts, displs, vec, comm, &request);
  CHECK(error_class_of(rc) == MPI_ERR_COUNT);

  /* Intercommunicators: a derived type's non-blocking gather gives what the blocking one gives
   * (the remote group's vectors), and MPI_IN_PLACE, which has no meaning there, is refused at the
   * call (every member passes it here, so none waits). */
  MPI_Comm half, inter;
  const int low = rank < size / 2;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, low, rank, &half));
  if (size >= 2) {
    CHECK_OK(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? size / 2 : 0, 7, &inter));
    CHECK_OK(MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN));
    const int remote = low ? size - size / 2 : size / 2;
    int mine[3] = {10 * rank, -5, 10 * rank + 1}, packed[2 * kMaxRanks], spread[3 * kMaxRanks];
    for (int i = 0; i < 3 * kMaxRanks; ++i) spread[i] = -1;
    CHECK_OK(MPI_Allgather(mine, 1, vec, packed, 2, MPI_INT, inter));
    CHECK_OK(MPI_Iallgather(mine, 1, vec, spread, 1, vec, inter, &request));
    CHECK_OK(MPI_Wait(&request, MPI_STATUS_IGNORE));
    for (int j = 0; j < remote; ++j) {
      const int w = low ? size / 2 + j : j;
      CHECK(packed[2 * j] == 10 * w && packed[2 * j + 1] == 10 * w + 1);
      CHECK(spread[3 * j] == 10 * w && spread[3 * j + 1] == -1 && spread[3 * j + 2] == 10 * w + 1);
    }
    make_w_args(&a);
    rc = MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, recv, a.rcounts, a.rdispls, a.rtypes, inter,
                        &request);
    CHECK(error_class_of(rc) == MPI_ERR_ARG);
    CHECK_OK(MPI_Comm_free(&inter));
  }
  CHECK_OK(MPI_Comm_free(&half));
  CHECK_OK(MPI_Comm_free(&comm));
}

int main(int argc, char** argv) {
  if (MPI_Init(&argc, &argv) != MPI_SUCCESS) return 2;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > kMaxRanks) {
    fprintf(stderr, "mpi_coll_derived: run with at most %d processes\n", kMaxRanks);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  CHECK_OK(MPI_Type_vector(2, 1, 2, MPI_INT, &vec));
  CHECK_OK(MPI_Type_commit(&vec));
  const int lengths[2] = {1, 1};
  const MPI_Aint offsets[2] = {0, 8};
  const MPI_Datatype members[2] = {MPI_INT, MPI_DOUBLE};
  MPI_Datatype pair;
  CHECK_OK(MPI_Type_create_struct(2, lengths, offsets, members, &pair));
  CHECK_OK(MPI_Type_create_resized(pair, 0, 24, &rs));
  CHECK_OK(MPI_Type_commit(&rs));
  CHECK_OK(MPI_Type_free(&pair));
  CHECK(size_of(vec) == 8 && extent_of(vec) == 12 && size_of(rs) == 12 && extent_of(rs) == 24);

  check_one_at_a_time();
  check_in_flight_together();
  check_mixed_layouts();
  check_alltoallw();
  check_errors();

  CHECK_OK(MPI_Type_free(&vec));
  CHECK_OK(MPI_Type_free(&rs));
  const int status = report_checks("mpi_coll_derived");
  MPI_Finalize();
  return status;
}
