/* Compiled as C: proves base/error.h and base/version.h are valid C headers. */
#include "tests/unit/base/error_c_compat.h"

#include <string.h>

#include "base/error.h"
#include "base/version.h"

int rft_test_error_header_from_c(void) {
  rft_error_t code = RFT_ERR_REVOKED;
  if (strcmp(rft_error_name(code), "RFT_ERR_REVOKED") != 0) return 0;
  if (strcmp(rft_error_name(RFT_ERR_LASTCODE), "RFT_ERR_UNKNOWN") != 0) return 0;
  if (rft_error_string(RFT_ERR_PROC_FAILED) == NULL) return 0;
  return strlen(RFT_VERSION_STRING) > 0;
}
