/* The checks of the MPI test programs: each CHECK that fails prints what and where, and the
 * program ends with one line "NAME: N checks, N failed" and status 1 if any failed. Plain C, so
 * that the programs build with any MPI's mpicc. */
#ifndef RFT_TESTS_MPI_MPI_CHECKS_H_
#define RFT_TESTS_MPI_MPI_CHECKS_H_

#include <mpi.h>
#include <stdio.h>

static int checks_run = 0;
static int checks_failed = 0;

#define CHECK(cond)                                                                           \
  do {                                                                                        \
    ++checks_run;                                                                             \
    if (!(cond)) {                                                                            \
      ++checks_failed;                                                                        \
      int r_ = -1;                                                                            \
      MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                                     \
      fprintf(stderr, "rank %d: CHECK failed at %s:%d: %s\n", r_, __FILE__, __LINE__, #cond); \
    }                                                                                         \
  } while (0)

/* An MPI call that must succeed. */
#define CHECK_OK(call)                                                                         \
  do {                                                                                         \
    int rc_ = (call);                                                                          \
    ++checks_run;                                                                              \
    if (rc_ != MPI_SUCCESS) {                                                                  \
      ++checks_failed;                                                                         \
      char s_[MPI_MAX_ERROR_STRING];                                                           \
      int l_ = 0;                                                                              \
      MPI_Error_string(rc_, s_, &l_);                                                          \
      int r_ = -1;                                                                             \
      MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                                      \
      fprintf(stderr, "rank %d: %s failed at %s:%d: %d (%s)\n", r_, #call, __FILE__, __LINE__, \
              rc_, s_);                                                                        \
    }                                                                                          \
  } while (0)

/* The error class an MPI call returns. */
static int error_class_of(int rc) {
  int c = rc;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &c);
  return c;
}

static int report_checks(const char* name) {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  printf("%s: rank %d: %d checks, %d failed\n", name, rank, checks_run, checks_failed);
  fflush(stdout);
  return checks_failed == 0 ? 0 : 1;
}

#endif /* RFT_TESTS_MPI_MPI_CHECKS_H_ */
