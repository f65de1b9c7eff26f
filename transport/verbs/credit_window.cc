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

Status CreditWindow::ReturnError(uint32_t returned) const {
  return ArgError("credits returned: " + std::to_string(returned) + " with " +
                  std::to_string(in_flight()) + " in flight would exceed the window of " +
                  std::to_string(window_));
}

Status CreditWindow::RepostedError() const {
  return ArgError("receive buffer reposted with " + std::to_string(owed_) +
                  " credits already owed: the peer sent beyond the window of " +
                  std::to_string(window_));
}

}  // namespace rft::verbs
