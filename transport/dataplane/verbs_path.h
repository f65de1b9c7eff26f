// The data plane's verbs backend (docs/verbs.md): what DataPlane holds when it talks to some
// peers through libibverbs instead of UCX. Private to transport/dataplane; only verbs_path.cc
// and the plane's destructor see inside, so data_plane.h does not include libibverbs.
#ifndef RFT_TRANSPORT_DATAPLANE_VERBS_PATH_H_
#define RFT_TRANSPORT_DATAPLANE_VERBS_PATH_H_

#include <infiniband/verbs.h>

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "base/rank_set.h"
#include "transport/dataplane/request.h"
#include "transport/verbs/eager_channel.h"
#include "transport/verbs/qp_address.h"
#include "transport/verbs/registration_cache.h"
#include "transport/verbs/verbs_context.h"
#include "transport/wire/rendezvous.h"
#include "transport/wire/wire_header.h"

namespace rft::transport {

// The RDMA READs of a rendezvous into a matched receive, from the first post to the last
// completion: one READ per piece of at most the read size, several in flight.
struct VerbsRead {
  Request* request = nullptr;  // nullptr once abandoned (its receive completed without it)
  verbs::RegistrationCache::Lease lease;  // the receive buffer's registration
  Rank source = 0;
  int32_t tag = 0;
  RendezvousDescriptor descriptor;
  uint64_t length = 0;     // the bytes to read (the receive's capacity may be smaller)
  uint64_t posted = 0;     // of which READs were posted for
  uint32_t in_flight = 0;  // READs posted and not completed
  bool failed = false;     // a READ failed or could not be posted: the data is lost
  bool waiting = false;    // in the backlog (once at most)
  bool in_use = false;
};

// Where a pair's on-demand connection stands, at this end (DataPlane::StartVerbsLink).
enum class VerbsLink : uint8_t {
  kIdle,       // nothing asked or sent yet
  kAsked,      // the higher rank asked the lower one for its address
  kOffered,    // the lower rank sent its address, and waits for the higher one's
  kConnected,  // the QP is connected (ready once greeted: EagerChannel::ready)
  kRefused,    // one end had no place for the other: the pair talks through UCX
  // Giving a place back (docs/verbs.md, verbs_close.cc):
  kWaitingPlace,     // this end needs a place for the pair; its next step waits for one
  kCloseAsked,       // this end asked to close the QP (kVerbsClose); messages to it wait
  kCloseAnswered,    // this end agreed (kVerbsClosing) and waits for kVerbsClosed
  kClosingAsker,     // the QP is closing here (EagerChannel::Close); kVerbsClosed goes after
  kClosingAnswerer,  // the same at the end that agreed
  kClosed,           // closed by agreement: the pair talks through UCX
};

// What a pair waiting for a place does once one is free.
enum class PlaceWait : uint8_t {
  kAsk,      // ask the lower rank for its address (StartVerbsLink)
  kOffer,    // make a QP and offer its address (OfferVerbsAddress)
  kConnect,  // connect to the lower rank's address, kept meanwhile, and answer it
};

struct PlaceWaiter {
  Rank peer;
  PlaceWait then;
  verbs::QpAddress address;  // for kConnect
  int64_t since_ns = 0;      // MonotonicNanos() when it began to wait (RFT_VERBS_PLACE_WAIT)
};

struct VerbsPath {
  std::unique_ptr<verbs::VerbsContext> context;
  std::unique_ptr<verbs::EagerChannel> channel;
  // Both ends' rendezvous buffers, registered once (registration_cache.h); told of unmapped
  // memory by UCX's memory hooks while `unmap_hook` is set (verbs_path.cc).
  std::unique_ptr<verbs::RegistrationCache> registrations;
  bool unmap_hook = false;
  uint32_t channel_size = 0;     // the ranks the channel has room for (it grows with the job)
  std::vector<VerbsLink> links;  // [rank]
  uint64_t read_size = 0;        // one READ's largest length (setting and port)
  // The reads in flight, indexed by the token the channel hands back; `free_reads` the unused
  // indices. Grows when all are in use (a read is a large message: rare next to eager ones).
  std::vector<VerbsRead> reads;
  std::vector<uint32_t> free_reads;
  // Reads that found their peer's send queue full, posted again by Progress in order.
  std::vector<uint32_t> read_backlog;
  // Peers refused a QP (at either end), whose queued messages Progress moves to UCX.
  std::vector<Rank> moving;
  // Giving a place back (verbs_close.cc). A tick per message to or from each peer, for the
  // least recently used pair; the pairs waiting for a place, oldest first; the pairs whose
  // close is under way here, asked (one at a time) or agreed to; those that answered kVerbsStay
  // while the current waiters wait; the close messages that found no credit yet (posted again
  // by Progress); whether the waiters are to be looked at again (a close ended or was refused,
  // a peer failed).
  uint64_t tick = 0;
  std::vector<uint64_t> last_used;  // [rank]
  std::vector<PlaceWaiter> waiting;
  std::vector<bool> closing_here;  // [rank]
  uint32_t closes_under_way = 0;
  std::vector<Rank> stayed;
  std::vector<std::pair<Rank, MessageType>> unposted;
  bool review_waiters = false;
  uint64_t pairs_closed = 0;
  uint64_t closes_refused = 0;
  // Coming back (verbs_return.cc). [rank]: the pair's round, carried in the epoch of its link
  // messages over UCX, which tells a message of an attempt both ends moved past from one that
  // starts a new attempt; and the messages sent through UCX since the pair moved there. The
  // pairs whose count reached RFT_VERBS_RETURN_AFTER, which Progress brings back; the link
  // messages of a new attempt that came while this end was still closing or moving the pair,
  // replayed by Progress once it is done.
  std::vector<uint32_t> rounds;
  std::vector<uint32_t> ucx_sends;
  std::vector<Rank> returning;
  struct DeferredLinkMessage {
    WireHeader header;
    std::vector<std::byte> payload;
  };
  std::vector<DeferredLinkMessage> deferred;
  uint64_t returns_started = 0;
  uint64_t pairs_returned = 0;
  // Progress calls since the device's asynchronous events were last read (poll mode: nothing
  // wakes the process for them).
  uint32_t calls_since_async = 0;
  static constexpr uint32_t kAsyncEvery = 4096;
  // Whether Progress has chores: a list above that Progress works through is not empty
  // (moving, unposted, waiting, returning, deferred, read_backlog), or review_waiters. Set
  // where they are added to; ProgressVerbsChores works through them and sets it again from the
  // lists themselves. Every pass of a wait looks at this one flag rather than at every list. A
  // place that added work and forgot the flag would have it done within kAsyncEvery calls,
  // when the chores run for the device's events anyway.
  bool chores = false;
  bool HasChores() const {
    return !moving.empty() || !unposted.empty() || review_waiters || !waiting.empty() ||
           !returning.empty() || !deferred.empty() || !read_backlog.empty();
  }
};

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_DATAPLANE_VERBS_PATH_H_
