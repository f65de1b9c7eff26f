/* dead_peer: what an MPI does when a peer dies, for bench/compare_mpich_ft.sh. The last rank
 * SIGKILLs itself half a second after a barrier; every other rank waits (up to 10 s) in a
 * receive from it, then revokes COMM_WORLD and shrinks it, printing what each call returned.
 * Exit 0 only when every survivor saw the failure as an error and the shrink left the
 * survivors. Uses only what MPICH's own mpi.h declares (MPIX_Comm_revoke, MPIX_Comm_shrink,
 * MPIX_ERR_PROC_FAILED), so one source builds with mpicc.mpich and runs on MPICH or on rft. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const int victim = size - 1;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == victim) {
    const struct timespec half = {0, 500000000};
    nanosleep(&half, NULL);
    raise(SIGKILL);
  }
  int value = 0, done = 0, rc = MPI_SUCCESS;
  MPI_Request request;
  const double start = MPI_Wtime();
  MPI_Irecv(&value, 1, MPI_INT, victim, 0, MPI_COMM_WORLD, &request);
  while (!done && MPI_Wtime() - start < 10) rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
  if (!done) {
    printf("dead_peer: rank %d: no answer from dead rank %d in 10 s\n", rank, victim);
    fflush(stdout);
    return 1;
  }
  int error_class = 0;
  MPI_Error_class(rc, &error_class);
  printf("dead_peer: rank %d: receive from dead rank %d returned %s after %.3f s\n", rank, victim,
         error_class == MPIX_ERR_PROC_FAILED ? "MPIX_ERR_PROC_FAILED" : "another class",
         MPI_Wtime() - start);
  fflush(stdout);
  if (error_class != MPIX_ERR_PROC_FAILED) return 1;
  rc = MPIX_Comm_revoke(MPI_COMM_WORLD);
  MPI_Comm survivors = MPI_COMM_NULL;
  const int shrunk = MPIX_Comm_shrink(MPI_COMM_WORLD, &survivors);
  int survivors_size = -1;
  if (shrunk == MPI_SUCCESS) MPI_Comm_size(survivors, &survivors_size);
  printf("dead_peer: rank %d: revoke returned %d, shrink %d: %d survivors\n", rank, rc, shrunk,
         survivors_size);
  fflush(stdout);
  if (shrunk == MPI_SUCCESS) MPI_Comm_free(&survivors);
  MPI_Finalize();
  return shrunk == MPI_SUCCESS && survivors_size == size - 1 ? 0 : 1;
}
