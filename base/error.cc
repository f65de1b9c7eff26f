#include "base/error.h"

namespace {

struct ErrorText {
  const char* name;
  const char* description;
};

// Indexed by code; the static_assert below keeps it in step with the enum.
constexpr ErrorText kErrors[] = {
    {"RFT_SUCCESS", "no error"},
    {"RFT_ERR_PROC_FAILED", "a process involved in the operation has failed"},
    {"RFT_ERR_PROC_FAILED_PENDING",
     "a wildcard receive cannot complete while a process failure is not acknowledged"},
    {"RFT_ERR_REVOKED", "the communicator has been revoked"},
    {"RFT_ERR_TRUNCATE", "the message was truncated: the receive buffer is too small"},
    {"RFT_ERR_ARG", "an argument or configuration value is invalid"},
    {"RFT_ERR_TIMEOUT", "the operation timed out"},
    {"RFT_ERR_IN_STATUS", "one or more requests failed: see the error in each status"},
    {"RFT_ERR_PENDING", "the request is still pending"},
    {"RFT_ERR_OTHER", "an internal or system error occurred"},
    {"RFT_ERR_PROC_ABORTED", "a process involved in the operation was aborted"},
};
static_assert(sizeof(kErrors) / sizeof(kErrors[0]) == RFT_ERR_LASTCODE,
              "kErrors must have one entry per rft_error_t code");

constexpr ErrorText kUnknown = {"RFT_ERR_UNKNOWN", "unknown error code"};

const ErrorText& Lookup(int code) {
  if (code < RFT_SUCCESS || code >= RFT_ERR_LASTCODE) return kUnknown;
  return kErrors[code];
}

}  // namespace

extern "C" const char* rft_error_name(int code) { return Lookup(code).name; }

extern "C" const char* rft_error_string(int code) { return Lookup(code).description; }
