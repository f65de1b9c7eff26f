#include "transport/dataplane/peer_table.h"

#include <utility>

namespace rft::transport {
namespace {

// Moves every item of `from` to the end of `to`, in order.
template <typename T>
void MoveItems(IntrusiveList<T>& from, IntrusiveList<T>& to) {
  while (T* item = from.front()) {
    from.erase(item);
    to.push_back(item);
  }
}

}  // namespace

void PeerTable::Grow(uint32_t new_size) {
  if (new_size <= size_) return;
  auto peers = std::make_unique<Peer[]>(new_size);
  for (Rank r = 0; r < size_; ++r) {
    Peer& from = peers_[r];
    Peer& to = peers[r];
    to.path = from.path;
    to.failure_completed = from.failure_completed;
    to.transport_failed = from.transport_failed;
    to.same_node_pull = from.same_node_pull;
    to.pid = from.pid;
    to.pidfd = from.pidfd;
    MoveItems(from.direct_queue, to.direct_queue);
    MoveItems(from.pending, to.pending);
  }
  for (Rank r = size_; r < new_size; ++r) {
    if (r != self_) ++ucx_peers_;
  }
  peers_ = std::move(peers);
  size_ = new_size;
}

bool PeerTable::SetPath(Rank peer, Path path) {
  Peer& entry = peers_[peer];
  const bool was_ucx = entry.path == Path::kUcx;
  entry.path = path;
  if (peer == self_ || was_ucx == (path == Path::kUcx)) return false;
  if (was_ucx) {
    --ucx_peers_;
  } else {
    ++ucx_peers_;
  }
  return true;
}

}  // namespace rft::transport
