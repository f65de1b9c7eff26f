// rft::transport::LocalDatagramChannel: messages between the processes of one node as kernel
// datagrams (AF_UNIX, SOCK_DGRAM, Linux's abstract namespace), for the control plane.
//
// Why not UCX's shared memory: its transports give each process one receive FIFO that every
// peer writes into, a slot at a time (claim, copy, mark written). A writer killed between the
// claim and the mark leaves a slot the reader waits on for ever, and from then on the reader
// receives nothing from anybody over shared memory (docs/reliability.md). Failures happen at any
// instruction, so a fault-tolerance protocol cannot ride on that. The kernel copies a datagram
// whole or not at all into a queue it owns: a sender that dies at any point cannot cut the
// receiver off, and a send to a process that has ended fails at once (ECONNREFUSED), which is
// itself news of its end. Control messages are rare and small; a datagram costs two system
// calls, which they can afford.
//
// Each process binds one receiving socket, named from the job and its rank (nothing on disk;
// the name disappears with the process), and sends through one socket per peer connected to the
// peer's name: a peer whose queue is full (its kernel queue holds net.unix.max_dgram_qlen
// datagrams, 10 by default) makes that socket unwritable, so messages wait here, in order, and
// poll says when they can go.
//
// Threading: one thread (the control thread). Nothing here blocks.
#ifndef RFT_TRANSPORT_DATAGRAM_LOCAL_DATAGRAM_H_
#define RFT_TRANSPORT_DATAGRAM_LOCAL_DATAGRAM_H_

#include <poll.h>
#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"

namespace rft::transport {

class LocalDatagramChannel {
 public:
  // The largest message (a control message is a few hundred bytes; a shrink's carries a few
  // KiB of context words).
  static constexpr size_t kMaxMessage = 64 * 1024;
  // Messages kept for one peer whose queue is full: a peer stopped for that long is declared
  // failed by its observer long before (heartbeats), and then its queue is dropped.
  static constexpr size_t kMaxQueued = 4096;

  // Binds this process's receiving socket for rank `self` of a job of `size` ranks, named from
  // `job_tag` and `job_token` (together unique among the node's live jobs: a name taken by
  // another job is a bind error, never a shared socket). An error names the call that failed.
  static StatusOr<std::unique_ptr<LocalDatagramChannel>> Open(uint32_t job_tag, uint32_t job_token,
                                                              Rank self, uint32_t size);
  ~LocalDatagramChannel();
  LocalDatagramChannel(const LocalDatagramChannel&) = delete;
  LocalDatagramChannel& operator=(const LocalDatagramChannel&) = delete;

  // The name peers connect to (published in the start-up exchange).
  const std::string& name() const { return name_; }

  // Connects to `peer`'s published `name`. false when it cannot be reached that way (another
  // network namespace, a name that is not a socket of this job): the caller keeps using
  // another path for it.
  bool Connect(Rank peer, const std::string& name);
  bool Reaches(Rank peer) const { return peer < peers_.size() && peers_[peer].fd >= 0; }
  // The job grew to `size` ranks (replacements): they can be connected to.
  void Grow(uint32_t size) {
    if (size > peers_.size()) peers_.resize(size);
  }

  enum class Outcome {
    kSent,    // in the peer's kernel queue
    kQueued,  // kept here until its queue has room (Flush)
    kGone,    // the peer's socket is closed: its process ended (or it closed the channel)
  };
  // Sends `header` followed by `payload` as one datagram to a reached peer. RFT_ERR_ARG for a
  // peer not reached or a message over kMaxMessage; RFT_ERR_OTHER when the queue is over
  // kMaxQueued (the message is dropped and counted) or the system refuses it.
  StatusOr<Outcome> Send(Rank peer, std::span<const std::byte> header,
                         std::span<const std::byte> payload);
  // Sends what waits for peers whose queues have room, in order. `gone` is called for each peer
  // found ended.
  void Flush(const std::function<void(Rank)>& gone);
  // Forgets `peer` (failed): its socket closes and what waited for it is dropped.
  void Forget(Rank peer);
  // Whether messages wait for some peer.
  bool HasQueued() const { return queued_peers_ > 0; }

  // Appends what poll should watch: the receiving socket for input, and the sockets of peers
  // with waiting messages for output.
  void AddPollFds(std::vector<pollfd>* fds) const;
  // Hands up to `max` waiting datagrams to `deliver` (valid during the call); how many were
  // taken off the socket. Datagrams from another user (the kernel's credentials say) are
  // dropped and counted: a socket in the abstract namespace has no permissions of its own.
  size_t Receive(const std::function<void(std::span<const std::byte>)>& deliver, size_t max);

  uint64_t dropped() const { return dropped_; }
  // Takes datagrams from `uid`'s processes instead of this process's user: for tests, which
  // cannot switch users inside a sandbox.
  void AcceptOnlyUserForTesting(uid_t uid) { accepted_uid_ = uid; }

 private:
  struct Peer {
    int fd = -1;
    std::deque<std::vector<std::byte>> queued;
  };
  LocalDatagramChannel(std::string name, int fd, uint32_t size)
      : name_(std::move(name)),
        fd_(fd),
        peers_(size),
        buffer_(kMaxMessage),
        accepted_uid_(geteuid()) {}
  // One send() of `parts`; kQueued means "would block" here.
  StatusOr<Outcome> SendNow(Rank peer, std::span<const std::span<const std::byte>> parts);
  void Keep(Rank peer, std::span<const std::byte> header, std::span<const std::byte> payload);

  std::string name_;
  int fd_ = -1;
  std::vector<Peer> peers_;
  size_t queued_peers_ = 0;  // peers with a non-empty queue
  std::vector<std::byte> buffer_;
  uint64_t dropped_ = 0;
  uid_t accepted_uid_;
};

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_DATAGRAM_LOCAL_DATAGRAM_H_
