#include "transport/verbs/credit_window.h"

#include <string>

namespace rft::verbs {

StatusOr<CreditWindow> CreditWindow::Create(uint32_t window) {
  if (window == 0 || window > kMaxWindow) {
    return ArgError("credit window of " + std::to_string(window) + ": must be 1.." +
                    std::to_string(kMaxWindow));
  }
  return CreditWindow(window);
}

bool CreditWindow::TryDispatch() {
  if (queued_ == 0 || credits_ == 0) return false;
  --queued_;
  --credits_;
  return true;
}

Status CreditWindow::Return(uint32_t returned) {
  // Compared as a difference so that a huge value cannot wrap around the sum.
  if (returned > window_ - credits_) {
    return ArgError("credits returned: " + std::to_string(returned) + " with " +
                    std::to_string(in_flight()) + " in flight would exceed the window of " +
                    std::to_string(window_));
  }
  credits_ += returned;
  return Status::Ok();
}

Status CreditWindow::Reposted() {
  if (owed_ == window_) {
    return ArgError("receive buffer reposted with " + std::to_string(owed_) +
                    " credits already owed: the peer sent beyond the window of " +
                    std::to_string(window_));
  }
  ++owed_;
  return Status::Ok();
}

uint32_t CreditWindow::TakeOwed() {
  const uint32_t owed = owed_;
  owed_ = 0;
  return owed;
}

}  // namespace rft::verbs
