// The data plane's same-node ring path (docs/shm.md): to a peer of this node that uses the
// same-node rendezvous, every data-plane record (eager data, rendezvous request and done, revoke
// notice) goes into a ring that this process alone writes and that peer alone reads, instead of
// UCX's shared FIFO, which a writer killed mid-copy blocks for every peer.
//
// Each process's segment is a memfd: a control page (whether the process sleeps in Idle), then
// one incoming ring per rank of the node. A peer maps it through pidfd_getfd on the descriptor
// number published in the start-up record (the permission of the same-node rendezvous's
// process_vm_readv, and nothing in the file system to leak when a process is killed). A writer
// wakes a reader that sleeps through the reader's eventfd, also taken with pidfd_getfd.
//
// The path knows records as bytes only: what they mean, the queue of those that wait for room
// and the failure of a writer are the data plane's (transport/dataplane/direct_queue.cc).
#ifndef RFT_TRANSPORT_DATAPLANE_RING_RING_PATH_H_
#define RFT_TRANSPORT_DATAPLANE_RING_RING_PATH_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"
#include "transport/shm/spsc_ring.h"

namespace rft::transport {

class RingPath {
 public:
  // What a peer needs to map this process's segment: the memfd's number in this process and
  // the capacity of each ring (both 0/-1 when the path is off).
  struct Offer {
    int fd = -1;
    uint32_t capacity = 0;
  };

  RingPath() = default;
  RingPath(const RingPath&) = delete;
  RingPath& operator=(const RingPath&) = delete;
  ~RingPath() { Close(); }

  // Creates this process's segment: one incoming ring for each other rank of `node` (the local
  // peers of this process's namespace, `self` among them), each large enough that a quarter of
  // it takes `largest_record` bytes. When that cannot be done the path stays off (logged; every
  // peer keeps UCX): not an error.
  void Open(const RankSet& node, Rank self, size_t largest_record);
  bool open() const { return segment_ != nullptr; }
  Offer offer() const { return {fd_, static_cast<uint32_t>(capacity_)}; }

  // Writes into the ring `peer` keeps for this process from now on: maps `offer` (the peer's
  // segment) through pidfd_getfd on `pidfd`, and, when the peer `blocks`, takes its wake-up
  // eventfd `wake_fd` the same way. False, with nothing kept, when that cannot be done: the peer
  // keeps UCX. Only a peer of `node` has a ring for this process (a replacement and its parents
  // take the rendezvous, not the rings).
  bool Attach(Rank peer, int pidfd, Offer offer, int wake_fd, bool blocks);
  bool attached(Rank peer) const { return peer < out_.size() && out_[peer] != nullptr; }
  // Room for ranks up to `size` (growth): the new ones have no ring.
  void Grow(uint32_t size) { out_.resize(size); }

  // Writes `first` + `second` as one record into `peer`'s ring now (attached(peer)), waking the
  // peer if it sleeps; false when the ring has no room.
  bool Write(Rank peer, std::span<const std::byte> first, std::span<const std::byte> second);

  bool has_incoming() const { return !in_.empty(); }
  // Hands every record the incoming rings hold (up to 64 a ring) to `deliver(record)`; the
  // record's bytes go back to its writer when `deliver` returns. A ring whose writer broke the
  // format is read no more, and its writer goes to `broken(rank, status)`. Records delivered.
  template <class Deliver, class Broken>
  unsigned Progress(Deliver&& deliver, Broken&& broken);
  bool AnyHasData() const;

  // Block mode: tells writers to wake this process from now on; false (and nothing to undo)
  // when a ring holds a record already. Awake() after the sleep.
  bool PrepareToSleep();
  void Awake();

  // Unmaps everything and closes the descriptors; the path is off after.
  void Close();

 private:
  // A ring this process writes, in a peer's segment.
  struct Outgoing {
    std::unique_ptr<shm::RingWriter> writer;
    void* mapping = nullptr;  // the ring
    size_t mapping_bytes = 0;
    void* control_mapping = nullptr;            // the peer's control page
    std::atomic<uint32_t>* sleeping = nullptr;  // in it, when the peer blocks
    int wake_fd = -1;                           // the peer's eventfd (pidfd_getfd)
  };
  void DropIncoming(size_t index);

  RankSet node_;
  Rank self_ = 0;
  size_t largest_record_ = 0;
  int fd_ = -1;
  void* segment_ = nullptr;
  size_t segment_bytes_ = 0;
  size_t capacity_ = 0;
  std::vector<std::unique_ptr<Outgoing>> out_;  // [rank]: nullptr unless it takes a ring
  std::vector<shm::RingReader> in_;             // from each other rank of the node
  std::vector<Rank> in_writers_;                // the writer of each of in_
};

template <class Deliver, class Broken>
unsigned RingPath::Progress(Deliver&& deliver, Broken&& broken) {
  unsigned delivered = 0;
  for (size_t i = 0; i < in_.size(); ++i) {
    shm::RingReader& ring = in_[i];
    if (!ring.HasData()) [[likely]]
      continue;
    StatusOr<int> got = ring.Drain(64, deliver);
    if (!got.ok()) [[unlikely]] {
      const Rank writer = in_writers_[i];
      DropIncoming(i);
      --i;
      broken(writer, got.status());
      continue;
    }
    delivered += static_cast<unsigned>(*got);
  }
  return delivered;
}

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_DATAPLANE_RING_RING_PATH_H_
