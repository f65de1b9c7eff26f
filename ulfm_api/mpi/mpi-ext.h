/* mpi-ext.h: rft's MPI extensions, for programs written for Open MPI's ULFM, which include this
 * header for the MPIX_ calls. rft's mpi.h already declares them (as the MPICH family's mpi.h
 * declares its MPIX_ calls); this header adds the feature macros such programs test. */
#ifndef RFT_MPI_EXT_H_
#define RFT_MPI_EXT_H_

#include "mpi.h"

/* Open MPI 5 names these features with OMPI_HAVE_ macros; rft defines the ones it provides, so
 * a program's #if picks the same code on both. */
#define OMPI_HAVE_MPI_EXT_FTMPI 1
#define OMPI_HAVE_MPIX_COMM_AGREE 1
#define OMPI_HAVE_MPIX_COMM_IAGREE 1
#define OMPI_HAVE_MPIX_COMM_SHRINK 1
#define OMPI_HAVE_MPIX_COMM_ISHRINK 1
#define OMPI_HAVE_MPIX_COMM_REVOKE 1
#define OMPI_HAVE_MPIX_COMM_IS_REVOKED 1
#define OMPI_HAVE_MPIX_COMM_GET_FAILED 1
#define OMPI_HAVE_MPIX_COMM_ACK_FAILED 1
#define OMPI_HAVE_MPIX_COMM_FAILURE_ACK 1
#define OMPI_HAVE_MPIX_COMM_FAILURE_GET_ACKED 1

#endif /* RFT_MPI_EXT_H_ */
