#include "base/status.h"

namespace rft {

std::string Status::ToString() const {
  std::string out = rft_error_name(code_);
  if (!message_.empty()) {
    out += ": ";
    out += message_;
  }
  return out;
}

Status ArgError(std::string message) { return Status(RFT_ERR_ARG, std::move(message)); }
Status TimeoutError(std::string message) { return Status(RFT_ERR_TIMEOUT, std::move(message)); }
Status OtherError(std::string message) { return Status(RFT_ERR_OTHER, std::move(message)); }
Status ProcFailedError(std::string message) {
  return Status(RFT_ERR_PROC_FAILED, std::move(message));
}
Status RevokedError(std::string message) { return Status(RFT_ERR_REVOKED, std::move(message)); }

}  // namespace rft
