/* ULFM through MPI, with processes that really die: run under mpiexec --with-ft ulfm.
 *
 *   mpi_ulfm failures VICTIM     VICTIM kills itself after a barrier; the survivors check
 *                                PROC_FAILED, PENDING and its acknowledgement, get_failed,
 *                                revoke, shrink, agree and iagree, and finalize
 *   mpi_ulfm revoke-seen VICTIM  after VICTIM dies, loops of calls that fail at once (barrier,
 *                                send to the dead, dup) end with REVOKED within 1 s everywhere
 *   mpi_ulfm revoke-loop ROUNDS  no failure: ROUNDS times a dup is revoked by one member while
 *                                the others wait in a receive, then shrunk and freed
 *   mpi_ulfm handler VICTIM      a user error handler that revokes, as ULFM programs write it
 *   mpi_ulfm iterate N SECONDS   an iterative loop (at least N iterations and SECONDS) that
 *                                recovers (agree, revoke, shrink) from whatever the launcher
 *                                kills (--kill), and ends exact
 *   mpi_ulfm initial             the initial error handler and MPIX_FT as mpiexec set them
 *
 * Plain C over <mpi.h> (and <mpi-ext.h> where it exists), so that the same source builds with
 * rft's mpicc and with the MPICH family's. Every survivor prints "mpi_ulfm: rank R: N checks, N
 * failed", and the modes print their result lines. */
#include <mpi.h>
#if defined(OPEN_MPI) || defined(RFT_MPI)
#include <mpi-ext.h> /* Open MPI declares its MPIX_ calls there */
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_checks.h"

/* MPICH's header and library (4.0) have only MPIX_Comm_revoke, _shrink, _agree, _failure_ack
 * and _failure_get_acked; the newer ULFM calls exist in rft's library. A program built with
 * MPICH's mpicc for rft declares them itself, weak so that it links against MPICH's library
 * and binds to rft's at run time, as here. */
#if !defined(RFT_MPI) && defined(MPICH)
#define RFT_WEAK_ULFM __attribute__((weak))
RFT_WEAK_ULFM int MPIX_Comm_is_revoked(MPI_Comm comm, int* flag);
RFT_WEAK_ULFM int MPIX_Comm_ishrink(MPI_Comm comm, MPI_Comm* newcomm, MPI_Request* request);
RFT_WEAK_ULFM int MPIX_Comm_iagree(MPI_Comm comm, int* flag, MPI_Request* request);
RFT_WEAK_ULFM int MPIX_Comm_get_failed(MPI_Comm comm, MPI_Group* failedgrp);
RFT_WEAK_ULFM int MPIX_Comm_ack_failed(MPI_Comm comm, int num_to_ack, int* num_acked);
#endif

static int rank, size;

/* A world without the victim, made before it dies: the survivors' own synchronisation. */
static MPI_Comm survivors_comm(int victim) {
  MPI_Comm survivors;
  CHECK_OK(MPI_Comm_split(MPI_COMM_WORLD, rank == victim ? MPI_UNDEFINED : 0, rank, &survivors));
  return survivors;
}

/* The victim dies right after the barrier; a survivor still in it may see the failure there
 * (ULFM does not make a collective's outcome uniform). */
static void die_at_barrier(int victim) {
  const int rc = error_class_of(MPI_Barrier(MPI_COMM_WORLD));
  CHECK(rc == MPI_SUCCESS || rc == MPIX_ERR_PROC_FAILED);
  if (rank == victim) raise(SIGKILL);
}

/* Repeats a barrier on `comm` until it returns REVOKED (the usual ULFM loop), at most 10 s. */
static int barrier_until_revoked(MPI_Comm comm) {
  const double until = MPI_Wtime() + 10;
  while (MPI_Wtime() < until) {
    if (error_class_of(MPI_Barrier(comm)) == MPIX_ERR_REVOKED) return 1;
  }
  return 0;
}

static void failures(int victim) {
  MPI_Comm survivors = survivors_comm(victim);
  die_at_barrier(victim);
  const int right = (rank + 1) % size == victim ? (rank + 2) % size : (rank + 1) % size;
  const int left =
      (rank + size - 1) % size == victim ? (rank + size - 2) % size : (rank + size - 1) % size;
  int x = 0;
  /* A named receive from the dead: PROC_FAILED. */
  CHECK(error_class_of(MPI_Recv(&x, 1, MPI_INT, victim, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE)) ==
        MPIX_ERR_PROC_FAILED);
  CHECK(error_class_of(MPI_Send(&x, 1, MPI_INT, victim, 1, MPI_COMM_WORLD)) ==
        MPIX_ERR_PROC_FAILED);
  /* A wildcard receive while the failure is not acknowledged: PENDING, the request kept. */
  MPI_Request any;
  int got = -1;
  CHECK_OK(MPI_Irecv(&got, 1, MPI_INT, MPI_ANY_SOURCE, 50, MPI_COMM_WORLD, &any));
  CHECK(error_class_of(MPI_Wait(&any, MPI_STATUS_IGNORE)) == MPIX_ERR_PROC_FAILED_PENDING);
  CHECK(any != MPI_REQUEST_NULL);
  CHECK_OK(MPI_Barrier(survivors));
  /* Acknowledged: the failed group names the victim, and the receive completes normally. */
  CHECK_OK(MPIX_Comm_failure_ack(MPI_COMM_WORLD));
  MPI_Group acked, world_group, failed;
  int n = -1, translated = -1, zero = 0, num_acked = -1;
  CHECK_OK(MPIX_Comm_failure_get_acked(MPI_COMM_WORLD, &acked));
  CHECK_OK(MPI_Group_size(acked, &n));
  CHECK(n == 1);
  CHECK_OK(MPI_Comm_group(MPI_COMM_WORLD, &world_group));
  CHECK_OK(MPI_Group_translate_ranks(acked, 1, &zero, world_group, &translated));
  CHECK(translated == victim);
  CHECK_OK(MPIX_Comm_get_failed(MPI_COMM_WORLD, &failed));
  CHECK_OK(MPI_Group_size(failed, &n));
  CHECK(n == 1);
  CHECK_OK(MPIX_Comm_ack_failed(MPI_COMM_WORLD, 10, &num_acked));
  CHECK(num_acked == 1);
  CHECK_OK(MPI_Send(&rank, 1, MPI_INT, right, 50, MPI_COMM_WORLD));
  MPI_Status status;
  CHECK_OK(MPI_Wait(&any, &status));
  CHECK(got == left && status.MPI_SOURCE == left);
  /* A collective over a communicator with a failed member: PROC_FAILED; then revoked by
   * rank 0, every survivor's barrier returns REVOKED. */
  CHECK(error_class_of(MPI_Barrier(MPI_COMM_WORLD)) == MPIX_ERR_PROC_FAILED);
  CHECK_OK(MPI_Barrier(survivors));
  if (rank == 0) CHECK_OK(MPIX_Comm_revoke(MPI_COMM_WORLD));
  CHECK(barrier_until_revoked(MPI_COMM_WORLD));
  int revoked = 0;
  CHECK_OK(MPIX_Comm_is_revoked(MPI_COMM_WORLD, &revoked));
  CHECK(revoked == 1);
  /* Shrink: the survivors, in world order, and the sum over them exact. */
  MPI_Comm shrunk;
  CHECK_OK(MPIX_Comm_shrink(MPI_COMM_WORLD, &shrunk));
  int shrunk_size = -1, shrunk_rank = -1, sum = -1;
  CHECK_OK(MPI_Comm_size(shrunk, &shrunk_size));
  CHECK_OK(MPI_Comm_rank(shrunk, &shrunk_rank));
  CHECK(shrunk_size == size - 1 && shrunk_rank == (rank < victim ? rank : rank - 1));
  CHECK_OK(MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, shrunk));
  CHECK(sum == size * (size - 1) / 2 - victim);
  /* Agreement: the AND of the flags, uniform. */
  int flag = rank == 1 ? 0x5 : ~0;
  CHECK_OK(MPIX_Comm_agree(shrunk, &flag));
  CHECK(flag == 0x5);
  int iflag = rank == 0 ? 0x3 : 0x7;
  MPI_Request agree_request;
  CHECK_OK(MPIX_Comm_iagree(shrunk, &iflag, &agree_request));
  CHECK_OK(MPI_Wait(&agree_request, MPI_STATUS_IGNORE));
  CHECK(iflag == 0x3);
  /* Agreement on the revoked world works; every survivor acknowledged the failure. */
  int world_flag = 1;
  CHECK_OK(MPIX_Comm_agree(MPI_COMM_WORLD, &world_flag));
  CHECK(world_flag == 1);
  /* Open MPI 5.0 has no MPIX_Comm_ishrink (its OMPI_HAVE_ macro says so). */
#if !defined(OPEN_MPI) || defined(OMPI_HAVE_MPIX_COMM_ISHRINK)
  MPI_Comm ishrunk = MPI_COMM_NULL;
  MPI_Request shrink_request;
  CHECK_OK(MPIX_Comm_ishrink(MPI_COMM_WORLD, &ishrunk, &shrink_request));
  CHECK_OK(MPI_Wait(&shrink_request, MPI_STATUS_IGNORE));
  int ishrunk_size = -1;
  CHECK_OK(MPI_Comm_size(ishrunk, &ishrunk_size));
  CHECK(ishrunk_size == size - 1);
  CHECK_OK(MPI_Comm_free(&ishrunk));
#endif
  printf("mpi_ulfm failures: rank %d: sum over the survivors %d\n", rank, sum);
  CHECK_OK(MPI_Comm_free(&shrunk));
  CHECK_OK(MPI_Comm_free(&survivors));
  MPI_Group_free(&acked), MPI_Group_free(&world_group), MPI_Group_free(&failed);
}

/* The ULFM loop "repeat until REVOKED, the first to fail revokes", with calls that fail at once:
 * a barrier on a communicator with a dead member, a send to the dead member, a dup. Rank 0
 * revokes after its first error; every survivor must leave each loop within 1 s. */
static int repeat_until_revoked(MPI_Comm comm, int victim, int what) {
  const double start = MPI_Wtime();
  int revoked_here = 0, x = 0;
  while (MPI_Wtime() < start + 1.0) {
    int rc;
    if (what == 0) {
      rc = MPI_Barrier(comm);
    } else if (what == 1) {
      rc = MPI_Send(&x, 1, MPI_INT, victim, 0, comm);
    } else {
      MPI_Comm dup = MPI_COMM_NULL;
      rc = MPI_Comm_dup(comm, &dup);
      if (rc == MPI_SUCCESS) MPI_Comm_free(&dup);
    }
    if (error_class_of(rc) == MPIX_ERR_REVOKED) return 1;
    if (rc != MPI_SUCCESS && rank == 0 && !revoked_here) {
      MPIX_Comm_revoke(comm);
      revoked_here = 1;
    }
  }
  return 0;
}

static void revoke_seen(int victim) {
  MPI_Comm comms[3];
  for (int i = 0; i < 3; ++i) {
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &comms[i]));
    MPI_Comm_set_errhandler(comms[i], MPI_ERRORS_RETURN);
  }
  die_at_barrier(victim);
  const char* names[3] = {"barrier", "send to the dead", "dup"};
  for (int i = 0; i < 3; ++i) {
    const int seen = repeat_until_revoked(comms[i], victim, i);
    CHECK(seen);
    printf("mpi_ulfm revoke-seen: rank %d: %s loop %s\n", rank, names[i],
           seen ? "ended by REVOKED" : "still running after 1 s");
  }
  for (int i = 0; i < 3; ++i) MPI_Comm_free(&comms[i]);
}

static void revoke_loop(int rounds) {
  for (int round = 0; round < rounds; ++round) {
    MPI_Comm dup, shrunk;
    CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    const int revoker = round % size;
    if (rank == revoker) {
      CHECK_OK(MPIX_Comm_revoke(dup));
    } else {
      int x;
      /* Nobody sends: only the revocation ends this receive. */
      CHECK(error_class_of(MPI_Recv(&x, 1, MPI_INT, MPI_ANY_SOURCE, 0, dup, MPI_STATUS_IGNORE)) ==
            MPIX_ERR_REVOKED);
    }
    CHECK_OK(MPIX_Comm_shrink(dup, &shrunk));
    int n = -1;
    CHECK_OK(MPI_Comm_size(shrunk, &n));
    CHECK(n == size);
    CHECK_OK(MPI_Barrier(shrunk));
    CHECK_OK(MPI_Comm_free(&shrunk));
    CHECK_OK(MPI_Comm_free(&dup));
  }
  printf("mpi_ulfm revoke-loop: rank %d: %d rounds\n", rank, rounds);
}

static int handler_class = -1;
static void revoke_on_error(MPI_Comm* comm, int* code, ...) {
  MPI_Error_class(*code, &handler_class);
  if (handler_class == MPIX_ERR_PROC_FAILED) MPIX_Comm_revoke(*comm);
}

static void handler(int victim) {
  MPI_Errhandler errhandler;
  MPI_Comm dup;
  CHECK_OK(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
  CHECK_OK(MPI_Comm_create_errhandler(revoke_on_error, &errhandler));
  CHECK_OK(MPI_Comm_set_errhandler(dup, errhandler));
  die_at_barrier(victim);
  /* The first survivor to see the failure revokes; everyone else's barrier then fails too. */
  const double until = MPI_Wtime() + 10;
  int rc = MPI_SUCCESS;
  while (MPI_Wtime() < until && (rc = MPI_Barrier(dup)) == MPI_SUCCESS) {
  }
  CHECK(error_class_of(rc) == MPIX_ERR_PROC_FAILED || error_class_of(rc) == MPIX_ERR_REVOKED);
  CHECK(handler_class == error_class_of(rc));
  CHECK(barrier_until_revoked(dup));
  MPI_Comm shrunk;
  int n = -1;
  CHECK_OK(MPIX_Comm_shrink(dup, &shrunk));
  CHECK_OK(MPI_Comm_size(shrunk, &n));
  CHECK(n == size - 1);
  printf("mpi_ulfm handler: rank %d: handler saw class %d, shrunk to %d\n", rank, handler_class, n);
  CHECK_OK(MPI_Comm_free(&shrunk));
  CHECK_OK(MPI_Comm_free(&dup));
  CHECK_OK(MPI_Errhandler_free(&errhandler));
}

/* Each iteration agrees on whether the allreduce succeeded everywhere and whether to go on; a
 * failed one is retried on the shrunken communicator. The loop runs at least ITERATIONS
 * iterations and SECONDS seconds (so that kills at instants the program does not know land in
 * it, however fast the build), and stops together: the agreed flag ANDs "go on" too. At the
 * end every survivor prints the same number of iterations, the members left, and the exact
 * sum of the survivors' world ranks. Works on COMM_WORLD until the first failure (a dup could
 * itself meet one). */
static void iterate(int iterations, double seconds) {
  MPI_Comm comm = MPI_COMM_WORLD;
  const double until = MPI_Wtime() + seconds;
  int done = 0;
  for (;;) {
    int one = 1, members = 0;
    const int rc = MPI_Allreduce(&one, &members, 1, MPI_INT, MPI_SUM, comm);
    const int go_on = done + 1 < iterations || MPI_Wtime() < until;
    int flag = (rc == MPI_SUCCESS ? 1 : 0) | (go_on ? 2 : 0);
    MPIX_Comm_agree(comm, &flag); /* uniform; its own PROC_FAILED shows in the next round */
    if (flag & 1) {
      ++done;
      if (!(flag & 2)) break;
      continue;
    }
    MPI_Comm shrunk;
    MPIX_Comm_revoke(comm);
    if (MPIX_Comm_shrink(comm, &shrunk) != MPI_SUCCESS) continue; /* failed again: retry */
    if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
    comm = shrunk;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
  int sum = -1;
  while (MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, comm) != MPI_SUCCESS) {
    MPI_Comm shrunk;
    MPIX_Comm_revoke(comm);
    if (MPIX_Comm_shrink(comm, &shrunk) != MPI_SUCCESS) continue;
    if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
    comm = shrunk;
  }
  int members = -1;
  MPI_Comm_size(comm, &members);
  printf("mpi_ulfm iterate: %d iterations, %d members, sum of ranks %d\n", done, members, sum);
  if (comm != MPI_COMM_WORLD) MPI_Comm_free(&comm);
}

static void initial(void) {
  MPI_Errhandler handler;
  CHECK_OK(MPI_Comm_get_errhandler(MPI_COMM_WORLD, &handler));
  CHECK(handler == MPI_ERRORS_RETURN);
  CHECK_OK(MPI_Comm_get_errhandler(MPI_COMM_SELF, &handler));
  CHECK(handler == MPI_ERRORS_RETURN);
#ifdef MPIX_FT
  int* ft = NULL;
  int flag = 0;
  CHECK_OK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPIX_FT, &ft, &flag));
  CHECK(flag && *ft == 1);
#endif
  char value[MPI_MAX_INFO_VAL];
  int flag2 = 0;
  CHECK_OK(
      MPI_Info_get(MPI_INFO_ENV, "mpi_initial_errhandler", MPI_MAX_INFO_VAL - 1, value, &flag2));
  CHECK(flag2 && strcmp(value, "mpi_errors_return") == 0);
  /* An error now comes back without any set_errhandler call. */
  int x = 0;
  CHECK(error_class_of(MPI_Send(&x, 1, MPI_INT, size, 0, MPI_COMM_WORLD)) == MPI_ERR_RANK);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char* mode = argc > 1 ? argv[1] : "";
  const int arg = argc > 2 ? atoi(argv[2]) : 0;
  if (strcmp(mode, "initial") != 0) MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (strcmp(mode, "failures") == 0 && size >= 3) {
    failures(arg);
  } else if (strcmp(mode, "revoke-seen") == 0 && size >= 3) {
    revoke_seen(arg);
  } else if (strcmp(mode, "revoke-loop") == 0) {
    revoke_loop(arg);
  } else if (strcmp(mode, "handler") == 0 && size >= 3) {
    handler(arg);
  } else if (strcmp(mode, "iterate") == 0) {
    iterate(arg, argc > 3 ? atof(argv[3]) : 0);
  } else if (strcmp(mode, "initial") == 0) {
    initial();
  } else {
    fprintf(stderr, "usage: mpi_ulfm failures|revoke-loop|handler|iterate|initial ARG (np >= 3)\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const int status = report_checks("mpi_ulfm");
  MPI_Finalize();
  return status;
}
