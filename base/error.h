/* Error classes of rft, shared by the C API, the C++ API and every layer below.
 *
 * The numeric values are part of the ABI (the MPI shim maps them one to one onto
 * MPIX_ERR_* and MPI_ERR_*): never renumber, only append before RFT_ERR_LASTCODE.
 * This header is plain C so that rft.h can include it. */
#ifndef RFT_BASE_ERROR_H_
#define RFT_BASE_ERROR_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef enum rft_error {
  RFT_SUCCESS = 0,
  /* A process involved in the operation has failed (ULFM MPIX_ERR_PROC_FAILED). */
  RFT_ERR_PROC_FAILED = 1,
  /* A wildcard (ANY_SOURCE) receive cannot complete while an un-acknowledged
   * failure is known; the request stays active (MPIX_ERR_PROC_FAILED_PENDING). */
  RFT_ERR_PROC_FAILED_PENDING = 2,
  /* The communicator was revoked (MPIX_ERR_REVOKED). */
  RFT_ERR_REVOKED = 3,
  /* The received message was longer than the buffer. */
  RFT_ERR_TRUNCATE = 4,
  /* An argument (or a configuration value) is invalid. */
  RFT_ERR_ARG = 5,
  /* A caller-given deadline or a configured timeout expired. */
  RFT_ERR_TIMEOUT = 6,
  /* A multi-request completion failed; the per-request statuses hold the errors. */
  RFT_ERR_IN_STATUS = 7,
  /* The request has not completed (reported per request alongside RFT_ERR_IN_STATUS). */
  RFT_ERR_PENDING = 8,
  /* Any other error: resources, system calls, internal failures. */
  RFT_ERR_OTHER = 9,
  /* A process involved in the operation was aborted, by another process's abort of a group
   * it belongs to (an ERRORS_ABORT handler, rft_abort): MPI-4's MPI_ERR_PROC_ABORTED. */
  RFT_ERR_PROC_ABORTED = 10,
  /* One past the last valid code; not an error itself. */
  RFT_ERR_LASTCODE = 11
} rft_error_t;

/* The enumerator's name, e.g. "RFT_ERR_PROC_FAILED"; "RFT_ERR_UNKNOWN" for a code outside
 * [RFT_SUCCESS, RFT_ERR_LASTCODE). Never NULL; the string is static. */
const char* rft_error_name(int code);

/* A one-line human description without a trailing period, e.g. "a process involved in the
 * operation has failed". Never NULL; the string is static. */
const char* rft_error_string(int code);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* RFT_BASE_ERROR_H_ */
