// Small PMIx helpers shared by the bootstrap's files (not part of the interface).
#ifndef RFT_TRANSPORT_BOOTSTRAP_PMIX_UTIL_H_
#define RFT_TRANSPORT_BOOTSTRAP_PMIX_UTIL_H_

#include <pmix.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "base/status.h"

namespace rft::transport::internal {

inline Status PmixError(const std::string& what, int rc) {
  const rft_error_t code = rc == PMIX_ERR_TIMEOUT ? RFT_ERR_TIMEOUT : RFT_ERR_OTHER;
  return Status(code, what + " failed: " + PMIx_Error_string(rc) + " (" + std::to_string(rc) + ")");
}

// A PMIX_TIMEOUT directive for `timeout`. PMIx takes whole seconds; rounding up keeps a small
// setting a bound rather than turning it into 0 (which PMIx reads as "wait forever").
class TimeoutInfo {
 public:
  static int Seconds(std::chrono::nanoseconds timeout) {
    return static_cast<int>(std::max<int64_t>(1, (timeout.count() + 999999999) / 1000000000));
  }
  explicit TimeoutInfo(std::chrono::nanoseconds timeout) {
    int seconds = Seconds(timeout);
    PMIX_INFO_LOAD(&info_, PMIX_TIMEOUT, &seconds, PMIX_INT);
  }
  ~TimeoutInfo() { PMIX_INFO_DESTRUCT(&info_); }
  TimeoutInfo(const TimeoutInfo&) = delete;
  TimeoutInfo& operator=(const TimeoutInfo&) = delete;
  pmix_info_t* get() { return &info_; }

 private:
  pmix_info_t info_;
};

// Frees the exchange's lookups libpmix never answered (a rank that died). Only after
// PMIx_Finalize: no callback can run any more.
void ReleaseAbandonedLookups();

}  // namespace rft::transport::internal

#endif  // RFT_TRANSPORT_BOOTSTRAP_PMIX_UTIL_H_
