// The data plane's table of peers: one entry per rank of the job, holding everything the data
// plane keeps per peer (how messages to it travel, what waits on it, whether its failure was
// completed here, what the same-node paths need of it). It grows when ranks join, never shrinks.
//
// One entry rather than a vector per property: a send to a peer reads its path and its direct
// queue from one place, and a growing job grows one table, not nine arrays in step.
#ifndef RFT_TRANSPORT_DATAPLANE_PEER_TABLE_H_
#define RFT_TRANSPORT_DATAPLANE_PEER_TABLE_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/rank_set.h"
#include "transport/dataplane/request.h"
#include "transport/matching/intrusive_list.h"

namespace rft::transport {

// How messages to a peer travel: UCX's active messages, a same-node ring (docs/shm.md), or the
// verbs backend (docs/verbs.md).
enum class Path : uint8_t { kUcx, kRing, kVerbs };

// What every path needs of a peer. One cache line: a send reads its path and its direct queue
// here, and finding an entry is a shift. State of one path alone (a ring's writer, a verbs
// pair's link) stays with that path. PeerTable::Grow copies each field by name (the lists cannot
// be copied): a field added here goes there too.
struct alignas(64) Peer {
  Path path = Path::kUcx;  // written through PeerTable::SetPath only
  // Its failure was completed here (the endpoint table may know of it earlier: UCX's error
  // callback marks it there before the data plane's report is processed).
  bool failure_completed = false;
  // This process reported it failed after a transport error on an operation (logged once).
  bool transport_failed = false;
  // Large messages to and from it use the same-node pull rendezvous: process_vm_readv.
  bool same_node_pull = false;
  pid_t pid = 0;  // its process id, for the same-node pull
  // A pidfd of its process (-1: none, and no same-node pull with it). A read by pid alone could
  // reach another process that reused the number after the peer died.
  int pidfd = -1;
  // Writes waiting for room on its direct path (ring or verbs), in order.
  IntrusiveList<RingLink> direct_queue;
  IntrusiveList<PeerLink> pending;  // operations that depend on it (failure completion)
};
static_assert(sizeof(Peer) == 64, "a peer's entry is one cache line");

class PeerTable {
 public:
  // `self`: this process's rank, which is never counted among the peers on UCX.
  explicit PeerTable(Rank self) : self_(self) {}
  PeerTable(const PeerTable&) = delete;
  PeerTable& operator=(const PeerTable&) = delete;

  uint32_t size() const { return size_; }
  bool Contains(Rank rank) const { return rank < size_; }
  Peer& operator[](Rank rank) { return peers_[rank]; }
  const Peer& operator[](Rank rank) const { return peers_[rank]; }
  Peer* begin() { return peers_.get(); }
  Peer* end() { return peers_.get() + size_; }

  // Entries for ranks [size(), new_size), on UCX; the existing ones keep their state and the
  // items of their lists, in order. Nothing happens for a size not above size().
  void Grow(uint32_t new_size);
  // Sets `peer`'s path; true when that changed how many other peers are on UCX.
  bool SetPath(Rank peer, Path path);
  // The other ranks whose path is kUcx.
  uint32_t ucx_peers() const { return ucx_peers_; }

 private:
  Rank self_;
  uint32_t size_ = 0;
  uint32_t ucx_peers_ = 0;
  // An array, not a vector: the lists link their items through sentinels inside the entries,
  // so entries never move (Grow moves the items).
  std::unique_ptr<Peer[]> peers_;
};

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_DATAPLANE_PEER_TABLE_H_
