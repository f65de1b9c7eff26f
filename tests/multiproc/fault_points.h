// What the fault matrix's victims and survivors share: dying at an agreed point, watching another
// process's buffer for the first bytes of a transfer, and payloads whose every page can be told
// apart, so a page lost, moved or left unwritten shows.
#ifndef RFT_TESTS_MULTIPROC_FAULT_POINTS_H_
#define RFT_TESTS_MULTIPROC_FAULT_POINTS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <thread>

#include "base/status.h"

namespace rft::testing {

// Ends this process with SIGKILL (`kill`) or hangs it with SIGSTOP.
[[noreturn]] void Die(bool kill);

// Where a receiver's destination buffer is: a victim other than the receiver watches it
// through process_vm_readv.
struct Target {
  uint64_t pid = 0;
  uint64_t address = 0;
};

// The first word of the target buffer; nullopt when it cannot be read (e.g. ptrace rules forbid
// it). Read by the kernel even from the receiver itself: the transport writes the buffer
// meanwhile, and a plain load would be a data race (a real one, that TSan reports).
std::optional<uint64_t> FirstWord(const Target& target);

// The victim's watcher: dies as soon as the first bytes of the payload land in the target buffer
// (zero until then), that is, while the transfer runs. Unable to look, it dies at once (the fault
// still happens, only earlier) and says so.
std::thread Watch(const Target& target, bool kill);

// Fresh zeroed pages (mmap), so "the first word is non-zero" means the payload arrived. With a
// seed, each page starts and ends with a stamp of (seed, page). A failed mmap ends the process
// with "FAILED: ..." and status 3, as a failed check does.
class Pages {
 public:
  explicit Pages(size_t bytes, std::optional<uint32_t> stamp_seed = std::nullopt);
  ~Pages();
  Pages(const Pages&) = delete;
  Pages& operator=(const Pages&) = delete;

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }

 private:
  std::byte* data_;
  size_t size_;
};

// Whether `bytes` at `data` carry the stamps Pages writes for `seed`. Touches two words per page.
bool Stamped(const std::byte* data, size_t bytes, uint32_t seed);

// The outcome of an operation that needed the victim: PROC_FAILED, or success with the right
// data when it had all moved before the fault. Anything else is a wrong result.
bool FailedOrWhole(const Status& status, bool data_ok);

}  // namespace rft::testing

#endif  // RFT_TESTS_MULTIPROC_FAULT_POINTS_H_
