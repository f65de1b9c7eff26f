#include "base/check.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace rft::internal {

void CheckFailed(const char* file, int line, const char* condition, const char* message) {
  char buf[1024];
  int n = std::snprintf(buf, sizeof(buf), "rft: check failed at %s:%d: %s: %s\n", file, line,
                        condition, message != nullptr ? message : "");
  if (n > 0) {
    size_t len = static_cast<size_t>(n) < sizeof(buf) ? static_cast<size_t>(n) : sizeof(buf) - 1;
    // One write so the line survives even if stdio is in a bad state.
    ssize_t ignored = ::write(STDERR_FILENO, buf, len);
    (void)ignored;
  }
  std::abort();
}

}  // namespace rft::internal
