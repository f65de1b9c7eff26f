#include "transport/dataplane/ring/ring_path.h"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "base/log.h"
#include "transport/dataplane/cma/peer_process.h"

namespace rft::transport {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kMinRingCapacity = 64 * 1024;

// The control page's first line: written by its owner only.
struct SegmentControl {
  alignas(64) std::atomic<uint32_t> sleeping;
};

size_t RoundUpToPage(size_t n) { return (n + kPage - 1) / kPage * kPage; }

// Whether rings of `capacity` bytes take records of `largest_record` bytes: a quarter of a ring
// must, so that a full ring drains in a few records.
bool TakesRecords(size_t capacity, size_t largest_record) { return capacity / 4 >= largest_record; }

}  // namespace

void RingPath::Open(const RankSet& node, Rank self, size_t largest_record) {
  if (node.size() < 2) return;
  size_t capacity = kMinRingCapacity;
  while (!TakesRecords(capacity, largest_record)) capacity *= 2;
  if (!shm::CheckRingCapacity(capacity).ok()) {
    RFT_LOG_INFO("no same-node rings: records of %zu bytes need rings of %zu bytes", largest_record,
                 capacity);
    return;
  }
  const size_t stride = RoundUpToPage(shm::RingBytes(capacity));
  const size_t bytes = kPage + node.size() * stride;
  const int fd = static_cast<int>(syscall(SYS_memfd_create, "rft-rings", MFD_CLOEXEC));
  if (fd < 0) {
    RFT_LOG_INFO("no same-node rings: memfd_create: %s", std::strerror(errno));
    return;
  }
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    RFT_LOG_INFO("no same-node rings: ftruncate(%zu): %s", bytes, std::strerror(errno));
    close(fd);
    return;
  }
  void* segment = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (segment == MAP_FAILED) {
    RFT_LOG_INFO("no same-node rings: mmap of %zu bytes: %s", bytes, std::strerror(errno));
    close(fd);
    return;
  }
  node_ = node;
  self_ = self;
  largest_record_ = largest_record;
  fd_ = fd;
  segment_ = segment;
  segment_bytes_ = bytes;
  capacity_ = capacity;
  new (segment) SegmentControl{};
  // The kernel zeroed the file: every ring starts empty. A writer's ring is at its index among
  // the node's ranks.
  for (Rank peer : node) {
    if (peer == self) continue;
    const size_t index = node.IndexOf(peer).value();
    in_.emplace_back(static_cast<std::byte*>(segment) + kPage + index * stride, capacity);
    in_writers_.push_back(peer);
  }
}

bool RingPath::Attach(Rank peer, int pidfd, Offer offer, int wake_fd, bool blocks) {
  if (segment_ == nullptr || offer.fd < 0 || pidfd < 0 || peer >= out_.size() ||
      !shm::CheckRingCapacity(offer.capacity).ok() ||
      !TakesRecords(offer.capacity, largest_record_)) {
    return false;
  }
  // The peer keeps this process's ring at this process's index among the node's ranks.
  const std::optional<size_t> index = node_.IndexOf(self_);
  if (!index.has_value() || !node_.Contains(peer)) return false;
  const int mine = cma::CopyDescriptor(pidfd, offer.fd);
  if (mine < 0) {
    RFT_LOG_INFO("no same-node ring to rank %u: pidfd_getfd: %s", peer, std::strerror(errno));
    return false;
  }
  const size_t stride = RoundUpToPage(shm::RingBytes(offer.capacity));
  void* ring = mmap(nullptr, stride, PROT_READ | PROT_WRITE, MAP_SHARED, mine,
                    static_cast<off_t>(kPage + *index * stride));
  void* control =
      ring == MAP_FAILED ? MAP_FAILED : mmap(nullptr, kPage, PROT_READ, MAP_SHARED, mine, 0);
  close(mine);  // the mappings keep the file
  if (ring == MAP_FAILED || control == MAP_FAILED) {
    RFT_LOG_INFO("no same-node ring to rank %u: mmap: %s", peer, std::strerror(errno));
    if (ring != MAP_FAILED) munmap(ring, stride);
    return false;
  }
  auto out = std::make_unique<Outgoing>();
  out->writer = std::make_unique<shm::RingWriter>(ring, offer.capacity);
  out->mapping = ring;
  out->mapping_bytes = stride;
  out->control_mapping = control;
  if (blocks) {
    out->wake_fd = cma::CopyDescriptor(pidfd, wake_fd);
    if (out->wake_fd < 0) {
      RFT_LOG_INFO("no same-node ring to rank %u: its wake-up fd: %s", peer, std::strerror(errno));
      munmap(ring, stride);
      munmap(control, kPage);
      return false;
    }
    out->sleeping = &static_cast<SegmentControl*>(control)->sleeping;
  }
  out_[peer] = std::move(out);
  return true;
}

bool RingPath::Write(Rank peer, std::span<const std::byte> first,
                     std::span<const std::byte> second) {
  Outgoing& out = *out_[peer];
  if (!out.writer->TryWrite(first, second)) return false;
  if (out.sleeping != nullptr) {
    // Against the peer's PrepareToSleep: it sets its flag and then looks at its rings; this
    // published and then looks at the flag. The fences make one of the two see the other.
    shm::StoreLoadFence();
    if (out.sleeping->load(std::memory_order_relaxed) != 0) {
      const uint64_t one = 1;
      [[maybe_unused]] const ssize_t n = write(out.wake_fd, &one, sizeof(one));
    }
  }
  return true;
}

void RingPath::DropIncoming(size_t index) {
  in_.erase(in_.begin() + static_cast<std::ptrdiff_t>(index));
  in_writers_.erase(in_writers_.begin() + static_cast<std::ptrdiff_t>(index));
}

bool RingPath::AnyHasData() const {
  for (const shm::RingReader& ring : in_) {
    if (ring.HasData()) return true;
  }
  return false;
}

bool RingPath::PrepareToSleep() {
  if (segment_ == nullptr) return true;
  auto* control = static_cast<SegmentControl*>(segment_);
  control->sleeping.store(1, std::memory_order_relaxed);
  shm::StoreLoadFence();  // against Write's
  if (AnyHasData()) {
    control->sleeping.store(0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

void RingPath::Awake() {
  if (segment_ != nullptr) {
    static_cast<SegmentControl*>(segment_)->sleeping.store(0, std::memory_order_relaxed);
  }
}

void RingPath::Close() {
  for (auto& out : out_) {
    if (out == nullptr) continue;
    out->writer.reset();
    munmap(out->mapping, out->mapping_bytes);
    munmap(out->control_mapping, kPage);
    if (out->wake_fd >= 0) close(out->wake_fd);
    out.reset();
  }
  in_.clear();
  in_writers_.clear();
  if (segment_ != nullptr) munmap(segment_, segment_bytes_);
  segment_ = nullptr;
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

}  // namespace rft::transport
