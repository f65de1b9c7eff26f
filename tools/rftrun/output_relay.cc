#include "tools/rftrun/output_relay.h"

#include <unistd.h>

#include <cerrno>

namespace rft::rftrun {

bool OutputRelay::Drain(int fd) {
  char buffer[65536];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n > 0) {
      Feed(std::string_view(buffer, static_cast<size_t>(n)));
      if (static_cast<size_t>(n) < sizeof(buffer)) return true;
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
    Flush();
    return false;
  }
}

void OutputRelay::Feed(std::string_view bytes) {
  if (prefix_.empty()) {  // untagged: pass bytes through as they come
    Write(bytes);
    return;
  }
  scratch_.clear();
  size_t start = 0;
  for (size_t newline = bytes.find('\n'); newline != std::string_view::npos;
       newline = bytes.find('\n', start)) {
    scratch_ += prefix_;
    scratch_ += partial_;
    partial_.clear();
    scratch_.append(bytes.substr(start, newline + 1 - start));
    start = newline + 1;
  }
  partial_.append(bytes.substr(start));
  if (!scratch_.empty()) Write(scratch_);
}

void OutputRelay::Flush() {
  if (partial_.empty()) return;
  scratch_ = prefix_ + partial_ + "\n";
  partial_.clear();
  Write(scratch_);
}

void OutputRelay::Write(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(out_fd_, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // our own output is gone (closed pipe): nothing sensible to do
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
}

}  // namespace rft::rftrun
