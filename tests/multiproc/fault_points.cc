#include "tests/multiproc/fault_points.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>

namespace rft::testing {
namespace {

constexpr size_t kPage = 4096;

uint64_t PageStamp(uint32_t seed, size_t page) { return (uint64_t{seed} << 32) | (page + 1); }

}  // namespace

void Die(bool kill) {
  raise(kill ? SIGKILL : SIGSTOP);
  for (;;) pause();
}

std::optional<uint64_t> FirstWord(const Target& target) {
  uint64_t word = 0;
  iovec local{&word, sizeof(word)};
  iovec remote{reinterpret_cast<void*>(target.address), sizeof(word)};
  if (process_vm_readv(static_cast<pid_t>(target.pid), &local, 1, &remote, 1, 0) != sizeof(word)) {
    return std::nullopt;
  }
  return word;
}

std::thread Watch(const Target& target, bool kill) {
  return std::thread([target, kill] {
    for (;;) {
      const std::optional<uint64_t> word = FirstWord(target);
      if (!word.has_value()) {
        std::printf("watcher: cannot read rank's buffer (%s); dying now\n", std::strerror(errno));
        break;
      }
      if (*word != 0) break;
      usleep(20);
    }
    Die(kill);
  });
}

Pages::Pages(size_t bytes, std::optional<uint32_t> stamp_seed) : size_(bytes) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    std::printf("FAILED: mmap of %zu bytes: %s\n", bytes, std::strerror(errno));
    std::fflush(stdout);
    _exit(3);
  }
  data_ = static_cast<std::byte*>(p);
  if (!stamp_seed.has_value()) return;
  for (size_t page = 0; page * kPage < bytes; ++page) {
    const uint64_t word = PageStamp(*stamp_seed, page);
    const size_t first = page * kPage;
    const size_t last = std::min(bytes, first + kPage) - sizeof(word);
    std::memcpy(data_ + first, &word, sizeof(word));
    std::memcpy(data_ + last, &word, sizeof(word));
  }
}

Pages::~Pages() { munmap(data_, size_); }

bool Stamped(const std::byte* data, size_t bytes, uint32_t seed) {
  for (size_t page = 0; page * kPage < bytes; ++page) {
    const uint64_t want = PageStamp(seed, page);
    const size_t first = page * kPage;
    const size_t last = std::min(bytes, first + kPage) - sizeof(want);
    uint64_t a, b;
    std::memcpy(&a, data + first, sizeof(a));
    std::memcpy(&b, data + last, sizeof(b));
    if (a != want || b != want) return false;
  }
  return true;
}

bool FailedOrWhole(const Status& status, bool data_ok) {
  return status.code() == RFT_ERR_PROC_FAILED || (status.ok() && data_ok);
}

}  // namespace rft::testing
