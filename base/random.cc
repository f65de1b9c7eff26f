#include "base/random.h"

#include <sys/random.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace rft {

StatusOr<uint64_t> SecureRandom64() {
  uint64_t value = 0;
  auto* bytes = reinterpret_cast<unsigned char*>(&value);
  size_t filled = 0;
  while (filled < sizeof(value)) {
    const ssize_t n = getrandom(bytes + filled, sizeof(value) - filled, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return OtherError(std::string("getrandom: ") + std::strerror(errno));
    }
    filled += static_cast<size_t>(n);
  }
  return value;
}

}  // namespace rft
