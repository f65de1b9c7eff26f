/* The checks of the C99 workers over rft.h (api_worker.c, collectives_worker.c,
 * agreement_worker.c): a violated one prints "FAILED: file:line: condition: details (last error:
 * ...)" and exits 3, which the tests count and report. */
#ifndef RFT_TESTS_MULTIPROC_C_WORKER_CHECKS_H_
#define RFT_TESTS_MULTIPROC_C_WORKER_CHECKS_H_

#include <stdio.h>
#include <stdlib.h>

#include "ulfm_api/rft.h"

#define CHECK(cond, ...)                                        \
  do {                                                          \
    if (!(cond)) {                                              \
      printf("FAILED: %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      printf(__VA_ARGS__);                                      \
      printf(" (last error: %s)\n", rft_last_error_message());  \
      fflush(stdout);                                           \
      exit(3);                                                  \
    }                                                           \
  } while (0)
#define CHECK_CODE(expr, code)                                                                  \
  do {                                                                                          \
    const int check_rc_ = (expr);                                                               \
    CHECK(check_rc_ == (code), "%s returned %s, expected %s", #expr, rft_error_name(check_rc_), \
          rft_error_name(code));                                                                \
  } while (0)
#define CHECK_OK(expr) CHECK_CODE(expr, RFT_SUCCESS)

#endif /* RFT_TESTS_MULTIPROC_C_WORKER_CHECKS_H_ */
