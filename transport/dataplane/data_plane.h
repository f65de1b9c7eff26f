// The data plane: tagged point-to-point messages between the processes of a job, with rft's own
// MPI tag matching and failure completion.
//
// Each peer is reached by one path, chosen at start-up (its PeerTable entry): UCX's active
// messages, a same-node ring (ring/ring_path.h, docs/shm.md), or the verbs backend (verbs_path.cc,
// docs/verbs.md; RFT_TRANSPORT). The ring and verbs paths carry the same records as UCX (header
// first) and the same rendezvous (the receiver reads the data: process_vm_readv or RDMA READ).
//
// Over UCX every message is one active message: rft's 32-byte header (transport/wire) as the AM
// header, the user's bytes as the AM data. Up to the eager limit (RFT_EAGER_LIMIT) UCX sends
// the data inline. Above it, between processes of one node, rft's own rendezvous sends a
// request-to-send naming the data's address, and the receiver copies it with one
// process_vm_readv straight into the matched buffer (pull_rendezvous.cc); elsewhere UCX's
// rendezvous hands the receiver a descriptor, and the data is fetched straight into the
// matched receive buffer (zero copy). Unmatched eager data is kept in UCX's own buffer when
// UCX allows it, else copied into a pooled buffer; an unmatched rendezvous keeps its
// descriptor until a receive matches it.
//
// Failure completion: when a peer is reported failed (by UCX's error callback, or through
// ReportPeerFailed by the failure registry, which hears the launcher and the detector), every send
// to it and every receive naming it completes with RFT_ERR_PROC_FAILED; messages it sent that
// already arrived stay receivable; ANY_SOURCE receives stay posted, and failure_epoch() moves so
// the API layer can apply the PROC_FAILED_PENDING rule.
//
// Revocation (ULFM): a revoked context completes what was pending in it with RFT_ERR_REVOKED,
// discards what arrived for it, and refuses what comes (ReportContextRevoked).
//
// Threading: one thread (the data-plane thread) calls everything except ReportPeerFailed and
// ReportContextRevoked, which any thread may call. The fast path takes no lock and allocates
// nothing: requests, unexpected-message records and copy buffers come from pools.
#ifndef RFT_TRANSPORT_DATAPLANE_DATA_PLANE_H_
#define RFT_TRANSPORT_DATAPLANE_DATA_PLANE_H_

#include <sys/types.h>
#include <ucp/api/ucp.h>

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "base/clock.h"
#include "base/rank_set.h"
#include "base/status.h"
#include "base/wake_queue.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/dataplane/peer_table.h"
#include "transport/dataplane/record.h"
#include "transport/dataplane/request.h"
#include "transport/dataplane/ring/ring_path.h"
#include "transport/matching/matching_queue.h"
#include "transport/pool/buffer_pool.h"
#include "transport/pool/object_pool.h"
#include "transport/ucx/endpoint_table.h"
#include "transport/ucx/ucx_worker.h"
#include "transport/wire/rendezvous.h"
#include "transport/wire/wire_header.h"

namespace rft::verbs {
struct QpAddress;
}  // namespace rft::verbs

namespace rft::testing {
class DataPlaneTestAccess;  // tests/multiproc/dataplane_test_access.h
}  // namespace rft::testing

namespace rft::transport {

enum class ProgressMode : uint8_t {
  kPoll,   // spin on the network: lowest latency, needs a core per process
  kBlock,  // sleep on UCX's event fd when idle: for more processes than cores
};

// How messages above the eager limit travel (RFT_RENDEZVOUS).
enum class RendezvousProtocol : uint8_t {
  kAuto,  // kCma with the peers of this node where the system allows it, else kUcx
  kCma,   // the same, and start-up fails when the system forbids process_vm_readv
  kUcx,   // UCX's rendezvous everywhere
};

// Which network path carries messages between nodes (RFT_TRANSPORT; docs/verbs.md).
enum class NetworkTransport : uint8_t {
  kAuto,   // verbs with every peer that found a verbs port too, UCX with the others
  kUcx,    // UCX's active messages and rendezvous
  kVerbs,  // verbs with every peer; start-up fails naming a rank that has no usable port
};

struct VerbsPath;  // verbs_path.h: the data plane's verbs backend
enum class PlaceWait : uint8_t;
enum class VerbsLink : uint8_t;

class DataPlane : private ucx::PeerFailureSink {
 public:
  struct Options {
    size_t eager_limit = 8192;
    ProgressMode progress = ProgressMode::kPoll;
    RendezvousProtocol rendezvous = RendezvousProtocol::kAuto;
    // Same-node peers that use the same-node rendezvous get every message through a ring per
    // ordered pair in shared memory instead of UCX (RFT_SHM_RINGS; ring/ring_path.h, docs/shm.md).
    bool shm_rings = true;
    NetworkTransport transport = NetworkTransport::kAuto;
    // Bytes the verbs rendezvous keeps registered between transfers (RFT_REGISTRATION_CACHE).
    size_t registration_cache = size_t{1} << 30;
    // The largest RDMA READ of the verbs rendezvous; longer messages go in pieces
    // (RFT_VERBS_READ_SIZE).
    size_t verbs_read_size = size_t{1} << 30;
    // The most peers connected through verbs at once, 0 for every peer (RFT_VERBS_PEERS): a
    // pair beyond it talks through UCX.
    uint32_t verbs_peers = 0;
    // With every place held, a pair that needs one closes the least recently used idle pair
    // and takes its place (RFT_VERBS_CLOSE_IDLE; docs/verbs.md, "Giving a place back").
    bool verbs_close_idle = true;
    // A pair that moved to UCX (refused a place, or closed) tries verbs again after this end
    // sent it this many messages through UCX; 0: never (RFT_VERBS_RETURN_AFTER; docs/verbs.md,
    // "Coming back").
    uint32_t verbs_return_after = 1024;
    // How long a pair waits for a place an idle pair was asked to give back before it talks
    // through UCX instead (RFT_VERBS_PLACE_WAIT; docs/verbs.md, "Giving a place back").
    std::chrono::nanoseconds verbs_place_wait = std::chrono::milliseconds(5);
    // Context ids are below this (the API layer allocates them densely); messages for a
    // larger id are dropped and counted.
    uint32_t max_contexts = 65536;
    uint32_t connect_all_max = 256;  // see ucx::EndpointTable::Options
    // Where failures the data plane itself discovers go (UCX's error callback, a same-node
    // rendezvous finding its sender gone): the failure registry, which calls ReportPeerFailed
    // back (api::Runtime wires this). Unset: straight to ReportPeerFailed. Called from UCX
    // callbacks: must not block. Failures found elsewhere (the launcher, the detector) come
    // only through ReportPeerFailed.
    std::function<void(Rank)> report_failure;
    // Ranks known failed before the start (a replacement is told its job's failures): their
    // published records are not connected to, and they are failed at once.
    RankSet failed_at_start;
  };
  // Options from RFT_EAGER_LIMIT, RFT_PROGRESS (auto: block when `job` oversubscribes its
  // node), RFT_RENDEZVOUS, RFT_SHM_RINGS and RFT_TRANSPORT; RFT_ERR_ARG naming the variable for
  // a bad value.
  static StatusOr<Options> OptionsFromConfig(const Bootstrap& job);

  // Creates the UCX worker, exchanges addresses through `job` (a collective over the job) and
  // connects. `job` must outlive the data plane.
  static StatusOr<std::unique_ptr<DataPlane>> Create(Bootstrap* job, const Options& options);
  // Closes every endpoint (bounded in time) after cancelling the UCX operations still running.
  // Requests the caller never completed are a bug: they are reported in the log and leaked.
  ~DataPlane() override;
  DataPlane(const DataPlane&) = delete;
  DataPlane& operator=(const DataPlane&) = delete;

  Rank rank() const { return rank_; }
  uint32_t size() const { return size_; }
  const Options& options() const { return options_; }

  // Which ranks ended cleanly (the control plane's departures, in the failure registry): at
  // teardown their UCX endpoints are closed without a flush, which a peer that is gone would
  // never acknowledge, including peers that depart while the teardown waits
  // (EndpointTable::WatchDepartures). From the owning thread, before the data plane is
  // destroyed; `departed` must stay callable until then.
  // Called with each revocation notice a peer sent (SendRevocation) as it is applied here, on
  // the data-plane thread: a notice is fast but not reliable (its sender may die before it
  // reached every member), so the API relays it by the control plane's flood. Empty: none.
  // From the owning thread; `heard` must stay callable until it is replaced.
  void OnRevocationHeard(
      std::function<void(uint32_t context_id, uint32_t epoch, uint32_t owner)> heard) {
    revocation_heard_ = std::move(heard);
  }
  void WatchDepartures(std::function<bool(Rank)> departed) {
    if (endpoints_ != nullptr) endpoints_->WatchDepartures(std::move(departed));
  }
  // Replacements joined the job (docs/recovery.md): job ranks size()..new_size-1, which the
  // bootstrap already holds (AddRanks). Reads their records (waiting for them up to
  // RFT_PMIX_TIMEOUT: one that never published is reported failed) and connects through UCX,
  // and through verbs where both ends offer it (JoinVerbs).
  // Nothing arrives from them before: the merge grows every survivor's data plane before any
  // member of the merged communicator sends. Failures of the new ranks reported earlier are
  // completed now. Those in `known_failed` are not waited for. From the data-plane thread.
  // RFT_ERR_ARG for a size not above size() or beyond the bootstrap's.
  Status AddRanks(uint32_t new_size, const RankSet& known_failed = RankSet());

  // Whether large messages to and from `peer` use the same-node (CMA) rendezvous.
  bool UsesCmaWith(Rank peer) const { return peer < size_ && peers_[peer].same_node_pull; }
  // Whether messages to `peer` go through a same-node ring (docs/shm.md).
  bool UsesRingTo(Rank peer) const { return rings_.attached(peer); }
  // Whether messages to `peer` go through the verbs backend (docs/verbs.md).
  bool UsesVerbsTo(Rank peer) const { return peer < size_ && peers_[peer].path == Path::kVerbs; }
  // The verbs rendezvous's registration cache (docs/verbs.md): buffers found registered,
  // buffers registered, and cached ranges dropped because their memory was unmapped. Zeros
  // without verbs.
  struct RegistrationCounts {
    uint64_t hits = 0;
    uint64_t misses = 0;
    uint64_t invalidations = 0;
  };
  RegistrationCounts registration_counts() const;
  // The verbs QPs this process holds (0 without verbs): one per peer it talks to through
  // verbs, less those whose pair closed to give its place to another (docs/verbs.md).
  uint32_t verbs_qp_count() const;
  // Pairs whose QPs closed by agreement at this end (a place given back), and requests to
  // close that the other end refused because it was busy (kVerbsStay).
  uint64_t verbs_pairs_closed() const;
  uint64_t verbs_closes_refused() const;
  // Attempts this end started to bring a pair back from UCX to verbs, and pairs connected again
  // after they had moved to UCX (at either end's attempt).
  uint64_t verbs_returns_started() const;
  uint64_t verbs_pairs_returned() const;
  // Passes of Progress that left UCX's worker alone because it was quiet while rings or verbs
  // carried the messages (0 in block mode, and while a peer is reached through UCX).
  uint64_t ucx_passes_skipped() const { return ucx_pass_ - ucx_pass_ / kUcxQuietEvery; }
  // Whether this process offered the verbs backend (docs/verbs.md): its port and eager channel
  // are open, whether or not any peer is reached through them.
  bool has_verbs() const { return verbs_ != nullptr; }

  // Starts sending `bytes` bytes at `buffer` to `dest` with `tag` (>= 0) in `context_id`. The
  // buffer must stay untouched until the request completes. A failed `dest` gives a request
  // that completes with RFT_ERR_PROC_FAILED; bad arguments give RFT_ERR_ARG and no request.
  // A synchronous send (`mode`) completes only once the receiver matched it: it goes as a
  // rendezvous at any size (the same-node or verbs one, or UCX's), whose end the receiver
  // reaches only after the match.
  Status Isend(const void* buffer, size_t bytes, Rank dest, int32_t tag, uint32_t context_id,
               Request** request, SendMode mode = SendMode::kStandard);
  // Starts receiving up to `capacity` bytes from `source` (or kAnySource) with `tag` (or
  // kAnyTag). A longer message fills the buffer and completes with RFT_ERR_TRUNCATE.
  Status Irecv(void* buffer, size_t capacity, Rank source, int32_t tag, uint32_t context_id,
               Request** request);

  // Completion. Each completed request is returned to the pool and its handle set to nullptr;
  // a nullptr handle counts as complete with an empty status (MPI's null request). `status`
  // may be nullptr. The returned Status is the request's error (OK, PROC_FAILED, TRUNCATE...);
  // Wait* also return RFT_ERR_TIMEOUT when `deadline` passes (the requests stay pending).
  Status Test(Request** request, bool* done, MessageStatus* status);
  Status Wait(Request** request, MessageStatus* status, Deadline deadline = Deadline::Never());
  // RFT_ERR_IN_STATUS when some request failed; then every status says its own error.
  Status Waitall(std::span<Request*> requests, std::span<MessageStatus> statuses,
                 Deadline deadline = Deadline::Never());
  Status Testall(std::span<Request*> requests, bool* done, std::span<MessageStatus> statuses);
  // `*index` is the completed request's position; kNoIndex when every handle is nullptr.
  static constexpr size_t kNoIndex = SIZE_MAX;
  Status Waitany(std::span<Request*> requests, size_t* index, MessageStatus* status,
                 Deadline deadline = Deadline::Never());
  Status Testany(std::span<Request*> requests, size_t* index, bool* done, MessageStatus* status);

  // Cancels a receive that has not matched: it completes with status.cancelled = true. A
  // receive already matched, and any send, completes normally (status.cancelled = false).
  Status Cancel(Request* request);

  // Whether a message matching (source, tag) has arrived and is not yet received; its source,
  // tag and length in `status`.
  Status Iprobe(Rank source, int32_t tag, uint32_t context_id, bool* found, MessageStatus* status);
  // Waits for such a message; RFT_ERR_PROC_FAILED when `source` failed with no such message.
  Status Probe(Rank source, int32_t tag, uint32_t context_id, MessageStatus* status,
               Deadline deadline = Deadline::Never());

  // Blocking forms.
  Status Send(const void* buffer, size_t bytes, Rank dest, int32_t tag, uint32_t context_id);
  // Send's fast path: a small message to a connected peer sent at once from the caller's memory,
  // with no request (true); false when that cannot be done now and nothing was sent (Isend
  // then, which also reports any error).
  bool SendNow(const void* buffer, size_t bytes, Rank dest, int32_t tag, uint32_t context_id);
  Status Recv(void* buffer, size_t capacity, Rank source, int32_t tag, uint32_t context_id,
              MessageStatus* status);

  // Drives UCX and the direct paths and handles failure news; returns the number of events
  // handled. With the verbs path up in poll mode, a UCX worker that has been quiet for a while
  // is polled only every few calls (PollUcxNow).
  unsigned Progress();
  // Applies the failure and revocation notices other threads handed over (what Progress does at
  // its end) without progressing the transport: a call that fails at once calls it first, so
  // that a caller whose every call fails still sees a revocation. One atomic load when there
  // are none. Data-plane thread.
  void ApplyPendingNotices() {
    if (reports_.HasItems()) [[unlikely]]
      ProcessNotices();
  }
  // Same-node sharing for the layers above (the API's node collectives, docs/shm.md): whether
  // `peer` is a process of this node that this process can reach through a pidfd (the same-node
  // rendezvous opens one per such peer), and a copy of `peer`'s descriptor `fd` taken through
  // it with pidfd_getfd: -1 with errno set when there is no pidfd or the kernel refused.
  bool HasPeerProcess(Rank peer) const;
  int CopyPeerDescriptor(Rank peer, int fd) const;
  // Sleeps until the network or a failure report has something for Progress(), at most
  // `timeout_ms`. In poll mode returns at once.
  Status Idle(int timeout_ms);

  // `rank` failed: records it and completes what depended on it (on the data-plane thread, at
  // the next Progress()). Any thread; idempotent; wakes a blocked wait.
  void ReportPeerFailed(Rank rank);
  // Failures processed so far: moves every time a new failure completed its operations.
  uint64_t failure_epoch() const { return failure_epoch_; }
  const RankSet& failed_ranks() const { return endpoints_->failed_ranks(); }

  // A context's life: its epoch and its owner. Contexts are reused (the API layer gives a
  // communicator's pair of contexts back when it is freed, and disjoint communicators may use
  // the same pair at once); the epoch tells the lives of one context at a process apart, and the
  // owner (the API's lowest job rank of the communicator) tells apart the lives of disjoint
  // communicators that share a context and an epoch, for revocations, which reach every process.
  //
  // Messages of `context_id` with an older epoch are dropped from now on, also those that
  // arrived already and were not received; outgoing messages carry `epoch`. A higher epoch
  // starts a new life of the context, not revoked unless its revocation came first; messages of
  // that life that arrived before this call stay receivable.
  Status SetContextEpoch(uint32_t context_id, uint32_t epoch, uint32_t owner = 0);
  // The life (`context_id`, `epoch`, `owner`) is revoked (the API layer's revoke service heard
  // it from the reliable broadcast, or a revoke notice came). At the next Progress(), on the
  // data-plane thread, when it is the context's current life: every receive posted in it
  // completes with RFT_ERR_REVOKED; the messages that arrived for it and were not received are
  // discarded (a same-node sender is told, a UCX rendezvous released); sends still pending in it
  // complete with RFT_ERR_REVOKED once the transport let go of their buffers; from then on new
  // operations in it complete with RFT_ERR_REVOKED, probes return it, and arrivals are dropped
  // (counted as `revoked`). A revocation of a newer life is kept and applies when
  // SetContextEpoch starts that life; one of an older life, or of another owner's, is ignored.
  // Any thread; idempotent; wakes a blocked wait.
  void ReportContextRevoked(uint32_t context_id, uint32_t epoch, uint32_t owner = 0);
  // ReportContextRevoked from the data-plane thread itself (the process revokes a communicator of
  // its own): applied at once, after the notices other threads handed over, with no wake-up
  // (ReportContextRevoked's is a write to an eventfd, a system call: half of a revoke's time).
  void RevokeHere(uint32_t context_id, uint32_t epoch, uint32_t owner = 0);
  // Wakes a wait blocked in Idle without handing anything over: news for the layer above (an
  // agreement decided on the control thread) that its caller will look for. Any thread.
  void Wake() const { reports_.Wake(); }
  // Tells `peer` at once that the life (`context_id`, `epoch`, `owner`) is revoked (a revoke
  // notice, handled there as ReportContextRevoked): the fast path beside the control plane's
  // reliable flood, which alone guarantees delivery. Nothing is sent to a failed peer or after
  // Close. Data-plane thread.
  void SendRevocation(Rank peer, uint32_t context_id, uint32_t epoch, uint32_t owner);
  // Whether a revocation of `context_id`'s current epoch has been processed. Data-plane thread.
  bool IsRevoked(uint32_t context_id) const {
    const Context* context = FindContext(context_id);
    return context != nullptr && context->revoked;
  }
  // Whether an ANY_SOURCE receive is posted in `context_id` (the PROC_FAILED_PENDING check).
  bool HasAnySourceReceive(uint32_t context_id) const;

  const DropCounters& drops() const { return drops_; }
  size_t requests_in_use() const { return requests_.in_use(); }
  size_t unexpected_count() const { return unexpected_.in_use(); }

 private:
  // The data-plane worker's checks reach inside (malformed messages, reused pids): the library
  // itself carries no test hooks.
  friend class ::rft::testing::DataPlaneTestAccess;

  // An arrived message no receive has matched yet.
  struct Unexpected {
    enum class Storage : uint8_t {
      kUcxData,       // UCX's persistent buffer: ucp_am_data_release when done
      kPooled,        // copied into buffers_
      kHeap,          // copied into new[] (larger than the pool's classes; rare)
      kRendezvous,    // a UCX rendezvous descriptor: the data is still at the sender
      kPull,          // a pull rendezvous request (CMA or RDMA READ): the data is at the sender
      kSenderFailed,  // a rendezvous whose sender failed before it was fetched
    };
    UnexpectedMessage node;  // owner = this
    Storage storage = Storage::kPooled;
    void* data = nullptr;      // the payload
    void* ucx_data = nullptr;  // kUcxData, kRendezvous: what UCX handed us (to release)
    size_t length = 0;
    uint32_t epoch = 0;         // the sender's epoch of the context (SetContextEpoch purges)
    RendezvousDescriptor pull;  // kPull: where the data is
  };
  // A message the data plane sends on its own behalf (a rendezvous done, a revoke notice), kept
  // until UCX has
  // sent it (UCX 1.13 does not copy what it is given).
  struct ControlSend {
    DataPlane* plane = nullptr;
    RingLink ring_link;  // on a peer's ring queue, waiting for room (control = this)
    size_t length = 0;   // the bytes of `bytes` a ring queue writes
    // A same-node receive that completes when this done message has left (its outcome is in
    // its status): a receiver that stops progressing after its receive (a launcher fence, a
    // computation) would otherwise hold the sender's send for as long.
    Request* receive = nullptr;
    std::array<std::byte, kWireHeaderSize + kRendezvousDoneSize> bytes;
  };
  struct Context {
    MatchingQueue queue;
    uint32_t epoch = 0;
    uint32_t owner = 0;
    bool revoked = false;  // this life of the context is revoked
  };
  // A revocation of a life this process has not started (SetContextEpoch applies it).
  struct FutureRevocation {
    uint32_t context_id = 0;
    uint32_t epoch = 0;
    uint32_t owner = 0;
    friend bool operator==(const FutureRevocation&, const FutureRevocation&) = default;
  };
  // What other threads hand the data-plane thread, in order.
  struct Notice {
    enum class Kind : uint8_t { kPeerFailed, kContextRevoked };
    Kind kind = Kind::kPeerFailed;
    uint32_t id = 0;     // the failed rank, or the revoked context
    uint32_t epoch = 0;  // kContextRevoked: the life revoked
    uint32_t owner = 0;
    bool heard = false;  // kContextRevoked: a peer's notice (SendRevocation), not this process's
  };
  DataPlane(Bootstrap* job, const Options& options);
  Status Start();
  // Exchanges worker addresses and what the same-node rendezvous needs (pid, whether it can
  // be used) with every rank; connects.
  Status ExchangeAndConnect();
  // Whether large messages to `peer` take the same-node rendezvous, from its published
  // `record` (record.h) and where it runs (`same_node`); opens its pidfd when they do.
  bool DecideCma(Rank peer, const DataPlaneRecord& record, bool same_node);

  Context* FindContext(uint32_t context_id) const {
    return context_id < contexts_.size() ? contexts_[context_id].get() : nullptr;
  }
  // Finds or creates the context (created once, on first use).
  StatusOr<Context*> GetContext(uint32_t context_id);
  // The same with the fast path inline: a hit costs one bounds check and a load.
  [[gnu::always_inline]] Status UseContext(uint32_t context_id, Context** context) {
    *context = FindContext(context_id);
    if (*context != nullptr) [[likely]]
      return Status::Ok();
    return CreateContext(context_id, context);
  }
  Status CreateContext(uint32_t context_id, Context** context);
  Request* NewRequest(RequestKind kind, Rank peer, int32_t tag, uint32_t context_id, void* buffer,
                      size_t capacity);
  // Inline with LinkToPeer and UnlinkFromPeer: every message's request passes through them.
  void Complete(Request* request, rft_error_t error) {
    UnlinkFromPeer(request);
    if (request->verbs_mr != nullptr) [[unlikely]]
      ReleaseVerbsRegistration(request);
    request->status.error = request->revoked && error == RFT_SUCCESS ? RFT_ERR_REVOKED : error;
    request->complete = true;
  }
  // Completes a receive that matched (or named) `source` and `tag` with `error`.
  void CompleteReceive(Request* request, Rank source, int32_t tag, rft_error_t error) {
    request->status.source = source;
    request->status.tag = tag;
    Complete(request, error);
  }
  // RFT_ERR_ARG naming a source or tag a receive or probe cannot use ("receive", "probe").
  [[gnu::always_inline]] Status CheckSourceAndTag(const char* operation, Rank source,
                                                  int32_t tag) const {
    if ((source < size_ || source == kAnySource) && (tag >= 0 || tag == kAnyTag)) [[likely]] {
      return Status::Ok();
    }
    return SourceOrTagError(operation, source, tag);
  }
  // The error paths' messages, built out of line: a std::string in a hot function's frame costs
  // every call register saves and a stack-protector check, error or not.
  [[gnu::cold, gnu::noinline]] Status SourceOrTagError(const char* operation, Rank source,
                                                       int32_t tag) const;
  [[gnu::cold, gnu::noinline]] Status SendArgumentError(Rank dest, int32_t tag, size_t bytes) const;
  // The header of a message from this process in `context_id`, encoded into `out`.
  void EncodeDataHeader(const Context& context, uint32_t context_id, int32_t tag, MessageType type,
                        uint64_t length, std::span<std::byte, kWireHeaderSize> out) const;
  // The earliest arrived message of `context_id` matching (source, tag), without progress.
  const UnexpectedMessage* FindArrived(Rank source, int32_t tag, uint32_t context_id) const;
  // A completed request handed back to the caller: its Status (built only on error), its
  // status copied out, and the request returned to the pool.
  Status Finish(Request** handle, MessageStatus* status);
  void ReleaseRequest(Request** handle, MessageStatus* status);
  void LinkToPeer(Request* request, Rank peer) {
    peers_[peer].pending.push_back(&request->peer_link);
  }
  void UnlinkFromPeer(Request* request) {
    if (request->peer_link.linked()) peers_[request->peer].pending.erase(&request->peer_link);
  }

  // Receive side (active_message.cc).
  static ucs_status_t OnActiveMessage(void* arg, const void* header, size_t header_length,
                                      void* data, size_t length, const ucp_am_recv_param_t* param);
  // A message of the verbs channel (the handler EagerChannel::Create was given), the header
  // leading the data.
  static void OnVerbsMessage(void* plane, Rank source, std::span<const std::byte> message);
  // Both's body: validates the header, and delivers, fetches or keeps the message. `header`
  // null (header_length 0) and not `rendezvous`: the header leads `data`. `persistent`: UCX
  // lets the data plane keep `data` (UCP_AM_RECV_ATTR_FLAG_DATA).
  ucs_status_t Arrive(const void* header, size_t header_length, void* data, size_t length,
                      bool rendezvous, bool persistent);
  // `data`: the payload; `ucx_data`: the buffer UCX handed over (differs for inline messages).
  // A message of `context` (ContextForArrival's) that matched the posted receive `match`
  // (MatchArrival's; null: none, it is kept as unexpected). A matched message here is a
  // rendezvous request: OnActiveMessage delivers matched eager ones itself. `cma`: a same-node
  // rendezvous request (then `data` and `length` are unused).
  ucs_status_t HandleMessage(Context* context, PostedReceive* match, const WireHeader& header,
                             void* data, size_t length, void* ucx_data, bool rendezvous,
                             bool persistent, const RendezvousDescriptor* cma = nullptr);
  // The context of an arriving message, or nullptr (counted) when it must be dropped. The usual
  // case (a known, current, unrevoked context) inline; the rest in ContextForArrivalSlow.
  Context* ContextForArrival(const WireHeader& header) {
    Context* context = FindContext(header.context_id);
    if (context != nullptr && header.epoch >= context->epoch && !context->revoked) [[likely]]
      return context;
    return ContextForArrivalSlow(header);
  }
  [[gnu::noinline]] Context* ContextForArrivalSlow(const WireHeader& header);
  void DeliverEager(Request* request, Rank source, int32_t tag, const void* data, size_t length);
  void StartFetch(Request* request, Rank source, int32_t tag, void* descriptor, size_t length);
  void DeliverUnexpected(Request* request, Unexpected* message);
  void ReleaseUnexpected(Unexpected* message);
  // The pull rendezvous (pull_rendezvous.cc): the request and done shared by the same-node
  // read (process_vm_readv, cma/peer_process.h) and the verbs path's RDMA READ.
  // Writes a request-to-send's descriptor after the send's header.
  // `rkey`: the verbs rendezvous's registration of the data (EncodeVerbsRequest); 0 on one node.
  void EncodePullRequest(Request* request, uint32_t rkey = 0);
  void HandlePullRequest(const WireHeader& header, std::span<const std::byte> payload);
  void HandlePullDone(const WireHeader& header, std::span<const std::byte> payload);
  // Copies the message `descriptor` names from `source` into the receive and completes it: by
  // process_vm_readv with a same-node peer, else by RDMA READ (ReadVerbs).
  void PullMessage(Request* request, Rank source, int32_t tag,
                   const RendezvousDescriptor& descriptor);
  // Whether `rank`'s process (as its pidfd names it) has ended.
  bool PeerProcessEnded(Rank rank) const;
  // Tells `source` its send of `descriptor` is over (`flags`: RendezvousDoneFlags). `receive`
  // (may be nullptr) completes with the outcome in its status once the message has left: at
  // once when UCX sent it inline.
  void SendPullDone(Rank source, const RendezvousDescriptor& descriptor, uint16_t flags,
                    Request* receive = nullptr);
  static void OnControlSendDone(void* ucx_request, ucs_status_t status, void* user_data);

  static void OnSendDone(void* ucx_request, ucs_status_t status, void* user_data);
  static void OnFetchDone(void* ucx_request, ucs_status_t status, size_t length, void* user_data);
  // A UCX datatype that receives a rendezvous into a buffer smaller than the message.
  Status CreateTruncatingDatatype();
  void FinishUcxOperation(Request* request, void* ucx_request, ucs_status_t status);

  // Failure completion.
  // A failure this process found itself: to Options::report_failure, or ReportPeerFailed.
  void Discovered(Rank rank) {
    if (rank == rank_) return;  // never its own failed peer (the registry agrees)
    if (options_.report_failure) {
      options_.report_failure(rank);
    } else {
      ReportPeerFailed(rank);
    }
  }
  void OnPeerFailed(Rank rank, const Status& why) override;
  // Failures and revocations handed over by other threads (and UCX callbacks), in order.
  void ProcessNotices();
  // Progresses UCX until it has nothing more (at most kDrainPasses passes): before failing what
  // depends on a dead peer, what it sent that is still in flight is received. Never from inside
  // a UCX callback.
  void DrainTransport();
  static constexpr int kDrainPasses = 16;
  void FailPeer(Rank rank);
  // Revocation (revocation.cc).
  void RevokeContext(uint32_t context_id, uint32_t epoch, uint32_t owner);
  // Ends the current life of `context` (the purge above).
  void RevokeLife(uint32_t context_id, Context* context);

  // The direct paths, a ring or verbs (a path other than kUcx), share the queue of messages that
  // wait for room in order. Writes `first` + `second` on `peer`'s path now; false when there is
  // no room (or the peer failed: its failure completes what waits).
  bool DirectWrite(Rank peer, std::span<const std::byte> first, std::span<const std::byte> second) {
    if (peers_[peer].path == Path::kRing) return rings_.Write(peer, first, second);
    return VerbsWrite(peer, first, second);
  }
  // A send to a peer with a direct path: written now or queued behind what waits already.
  void DirectSend(Request* request);
  // Writes `request`'s record (a rendezvous request, or an eager header and payload) now.
  bool DirectWriteSend(const Request& request);
  // The same for a control message; false if `peer` has no direct path (UCX then).
  bool DirectSendControl(Rank peer, ControlSend* send, size_t bytes, Request* receive);
  // The UCX endpoint for a message to `peer`: made now (on first use) when the peer's path is
  // UCX; nullptr for a ring or verbs peer, whose messages never touch UCX. Fails as
  // EndpointTable::Get does: a rank outside the job, or a failed one.
  StatusOr<ucp_ep_h> EndpointFor(Rank peer);
  // What a control message does once it left (written, sent by UCX) or its peer failed: the
  // receive it holds completes, and it goes back to the pool.
  void FinishControlSend(ControlSend* send);
  // A control message from the pool with `header` encoded at its start (this process's rank and
  // job token stamped here); the caller writes any payload after it.
  ControlSend* NewControlSend(WireHeader header);
  // Hands the first `length` bytes of `send` to UCX on `ep`. True: UCX holds it, and
  // OnControlSendDone finishes it; false: sent at once, or refused by a failed endpoint (whose
  // peer's failure ends whatever waits for it), and finished now.
  bool SendControlByUcx(ucp_ep_h ep, ControlSend* send, size_t length);
  // Delivers what the incoming rings hold, as UCX's active messages; the number delivered.
  unsigned ProgressRings();
  // Writes what the direct queues (rings and verbs) hold while there is room.
  void FlushDirectQueues();
  // Drops `peer`'s direct queue (it failed): control messages finish, sends stay linked to the
  // peer for FailPeer.
  void DropDirectQueue(Rank peer);

  // Irecv's and SendNow's bodies, inline into them and into Recv and Send (data_plane.cc).
  Status StartReceive(void* buffer, size_t capacity, Rank source, int32_t tag, uint32_t context_id,
                      Request** out);
  bool StartSendNow(const void* buffer, size_t bytes, Rank dest, int32_t tag, uint32_t context_id);
  // The verbs backend (verbs_path.cc, docs/verbs.md). Opens the port and the eager channel when
  // options_.transport allows and one is found, and offers it in own_record_.
  Status OpenVerbs();
  // The rendezvous's registration cache, listening to UCX's memory hooks for unmapped memory
  // (nothing is cached when the hooks cannot be set); closing unhooks it and deregisters all.
  void OpenRegistrationCache(VerbsPath& path);
  void CloseRegistrationCache(VerbsPath& path);
  // This process's verbs part of its record when it offers verbs (record.h).
  std::optional<VerbsRecordPart> OwnVerbsPart() const;
  // Sends through verbs to each published peer whose record offers it too (`records[r]`),
  // unless a ring is there. Ranks in `missing` published nothing. RFT_ERR_ARG for
  // RFT_TRANSPORT=verbs when a peer offers none, and for a peer whose eager configuration
  // differs.
  Status ConnectVerbs(const std::vector<DataPlaneRecord>& records, const RankSet& missing);
  // Replacements [old_size, size_) joined (AddRanks): those whose `records` (indexed from
  // old_size) offer verbs with a matching configuration are sent to through verbs, connected
  // on demand as the job's first ranks are. One whose part does not match, or for which the
  // channel cannot grow, is reported failed: it sends through verbs too.
  void JoinVerbs(uint32_t old_size, const std::vector<DataPlaneRecord>& records,
                 const RankSet& unreachable);
  // A pair's QPs on demand (docs/verbs.md, "Connecting on demand"). The lower rank of a pair
  // always sends its QP address first: when it wants the QP (OfferVerbsAddress), or when the
  // higher one asks for it (kVerbsAsk). The higher one connects to it, waits for a greeting
  // and sends its own address back; the lower one connects and greets. So two addresses never
  // cross, and nothing is sent on a QP before its other end is ready.
  void StartVerbsLink(Rank peer);
  void OfferVerbsAddress(Rank peer);
  // Sends a kVerbsAddress (this QP's address), a kVerbsAsk or a kVerbsRefuse (no payload)
  // through UCX.
  void SendVerbsLinkMessage(Rank peer, MessageType type);
  bool TakesVerbsLinkMessage(Rank source) const;
  // Drops a link or close message that does not fit this end's state of the pair, counted as a
  // bad payload and logged with both ends' view (a peer's bug or a race in the protocol), at
  // debug level only when the peer failed (what it sent before it died may still arrive).
  void DropVerbsLinkMessage(const WireHeader& header, const char* why);
  // Whether `peer` failed, as its QP or UCX found (the registry's news reaches both).
  bool VerbsPeerFailed(Rank peer) const;
  // Whether `peer` is reached through verbs and its QP is not even being connected yet (or
  // waits for a place to be).
  bool VerbsLinkIdle(Rank peer) const;
  void HandleVerbsAsk(const WireHeader& header, std::span<const std::byte> payload);
  void HandleVerbsAddress(const WireHeader& header, std::span<const std::byte> payload);
  void HandleVerbsRefuse(const WireHeader& header, std::span<const std::byte> payload);
  // This end cannot hold a QP for `peer` (no place left: RFT_VERBS_PEERS, or the device made
  // none) before anything went on one: `peer` is told (kVerbsRefuse), and the pair talks
  // through UCX (MoveToUcx).
  void RefuseVerbsLink(Rank peer, const Status& why);
  // Withdraws `peer`'s never-connected QP and queues the pair's move to UCX (kRefused): false
  // when the withdrawal failed and `peer` was reported failed instead (FailVerbsLink).
  bool StayOnUcx(Rank peer);
  // `peer` is sent to through UCX from now on: what waits for it in the direct queue goes
  // there, in order (nothing has gone on its QP). A large send queued for a verbs read is sent
  // through UCX's rendezvous instead.
  void MoveToUcx(Rank peer);
  // Hands `request` (its header encoded; its bytes, or a same-node rendezvous descriptor when
  // `cma`) to UCX: true when UCX took it whole at once (the caller completes it), else it is
  // linked to its peer until UCX is done, or completed with UCX's error.
  bool SendRequestByUcx(Request* request, ucp_ep_h ep, bool cma);
  // The channel could not connect `peer`'s QP after the other end had: messages to it wait for
  // that QP, so it is reported failed (fail-stop, as for a broken path).
  void FailVerbsLink(Rank peer, const Status& why);
  // RFT_ERR_ARG naming `rank` when its part's configuration is not this channel's.
  Status CheckVerbsPart(Rank rank, const VerbsRecordPart& part) const;
  // DirectWrite's verbs half (data_plane.cc: inline into the small send's path as VerbsWriteNow).
  bool VerbsWrite(Rank peer, std::span<const std::byte> first, std::span<const std::byte> second);
  bool VerbsWriteNow(Rank peer, std::span<const std::byte> first,
                     std::span<const std::byte> second);
  // A verbs send failed with `why`: the peer is reported failed unless it failed already. Out
  // of line, so that no status text is built in the send's frame.
  [[gnu::cold, gnu::noinline]] void VerbsSendBroke(Rank peer, const Status& why);
  // Registers a large send's buffer (or finds it registered) and writes its request-to-send's
  // descriptor (with the rkey) after its header; false (nothing registered) when registration
  // fails.
  bool EncodeVerbsRequest(Request* request);
  // Starts the RDMA READ of the message `descriptor` names from `source` into the receive
  // (from PullMessage, which set its counts and checked the sender).
  void ReadVerbs(Request* request, Rank source, int32_t tag,
                 const RendezvousDescriptor& descriptor);
  // Posts the pieces of the read `token` names that are not posted yet, as the peer's send
  // queue has room (the rest waits in the backlog), and ends the read once nothing is in flight
  // and it is whole, failed (a post failed: the peer is reported) or abandoned.
  void ContinueVerbsRead(uint32_t token);
  void OnVerbsRead(uint32_t token, bool ok);
  // Ends the read `token` names: the registration is released, and the receive completes (a done
  // message is sent unless the sender failed).
  void FinishVerbsRead(uint32_t token, bool ok);
  // One pass of the verbs channel (inline in data_plane.cc), and the log of an error that
  // broke it (out of line: the status stays out of the pass's frame).
  unsigned ProgressVerbs();
  [[gnu::cold, gnu::noinline]] void LogBrokenVerbsChannel();
  // ProgressVerbs's part that is seldom needed: pairs to move, closes and returns under way,
  // reads waiting for room, the device's events (every VerbsPath::kAsyncEvery calls).
  [[gnu::noinline]] void ProgressVerbsChores();
  // `peer` failed: its QP stops (no RDMA touches this process for it any more) and what it
  // had outstanding completes as flushed.
  void DisconnectVerbs(Rank peer);
  // A send's registration, once its request completes.
  void ReleaseVerbsRegistration(Request* request);
  // A receive whose read never ended gives it up: its completion, if it comes, is ignored.
  void AbandonVerbsRead(Request* request);
  // Block mode: arms the CQ; false when a completion came meanwhile (no sleep).
  bool VerbsReadyToSleep();
  void VerbsAwake();
  // Before the requests are abandoned: the QPs, then every registration still held.
  void CloseVerbs();

  // Giving a place back (verbs_close.cc; docs/verbs.md, "Giving a place back"). `peer` needs a
  // place and none is free: it waits for one (`then` says what to do when it comes; `address`
  // is kept for kConnect) while the least recently used idle pair closes, if there is one.
  // False when none can close: the caller refuses the pair instead.
  bool WaitForPlace(Rank peer, PlaceWait then, const verbs::QpAddress* address);
  // Asks the least recently used connected pair that is idle at this end to close (kVerbsClose)
  // unless a close is under way here already: false when there is none to ask.
  bool AskIdlePairToClose();
  // Nothing of `peer`'s pair is in flight at this end: no send of this end that the peer
  // will read by RDMA READ, no READ of the peer's memory, and (`queue_too`) nothing waiting in
  // the direct queue.
  bool VerbsPairIdle(Rank peer, bool queue_too) const;
  // Posts a close message (kVerbsClose, kVerbsStay, kVerbsClosing) on `peer`'s QP, or keeps it
  // for Progress when no credit is free; kVerbsClosing quiets the QP once posted.
  void PostVerbsCloseMessage(Rank peer, MessageType type);
  bool TryPostVerbsCloseMessage(Rank peer, MessageType type);
  void HandleVerbsClose(const WireHeader& header, std::span<const std::byte> payload);
  // Whether an answer in a close (kVerbsStay, kVerbsClosing, kVerbsClosed) fits its source:
  // no payload, a verbs peer that has not failed, its pair `expected` here. Else it is dropped
  // (DropVerbsLinkMessage).
  bool TakesVerbsCloseAnswer(const WireHeader& header, std::span<const std::byte> payload,
                             VerbsLink expected);
  void HandleVerbsStay(const WireHeader& header, std::span<const std::byte> payload);
  void HandleVerbsClosing(const WireHeader& header, std::span<const std::byte> payload);
  void HandleVerbsClosed(const WireHeader& header, std::span<const std::byte> payload);
  // Answers kVerbsClosing: the QP is quiet once it is posted.
  void AgreeToClose(Rank peer);
  // `peer`'s kVerbsClose was not answered the way this end asked: the pair goes on.
  void CloseRefused(Rank peer);
  // The channel ended the close of `peer`'s QP: the asker sends kVerbsClosed, and both ends
  // move the pair to UCX; a waiting pair takes the place.
  void OnVerbsPairClosed(Rank peer);
  // A close of `peer`'s pair is under way at this end (asked or agreed to): its place will
  // come free, so a pair that needs one waits for it. Ended by the close, a refusal, or the
  // peer's failure.
  void MarkCloseUnderWay(Rank peer);
  void EndCloseUnderWay(Rank peer);
  // Connects to the lower rank's offered `address` (kAwaitGreeting) and answers with this
  // rank's; refuses the pair when the channel cannot.
  void ConnectOfferedQp(Rank source, const verbs::QpAddress& address);
  // `peer` no longer waits for a place (it failed, or the pair was refused).
  void ForgetVerbsWaiter(Rank peer);
  // A waiter already taken off the list gets no place: the pair is refused (RefuseVerbsLink).
  void RefusePlaceWaiter(Rank peer, const Status& why);
  // Pairs that waited for a place longer than RFT_VERBS_PLACE_WAIT are refused: the process
  // asked to close may not call into rft for a long time, and a third pair's messages must not
  // wait for it.
  void RefuseLongWaiters();
  // The longest Idle may sleep, at most `timeout_ms`: until the oldest waiter's time is up.
  int VerbsSleepLimit(int timeout_ms) const;
  // Progress's part: close messages that waited for a credit, and pairs waiting for a place
  // that is free now (or, when none is left to close, refused).
  void ProgressVerbsCloses();

  // Coming back to verbs (verbs_return.cc; docs/verbs.md, "Coming back"). A message to `peer`
  // went through UCX: counted when its pair moved there from verbs.
  void CountUcxSend(Rank peer) {
    if (verbs_ != nullptr) [[unlikely]]
      CountMovedPairSend(peer);
  }
  // Whether this pass polls UCX's worker (see ucx_may_rest_).
  bool PollUcxNow() {
    return ucx_quiet_passes_ < kUcxQuietPasses || (++ucx_pass_ & (kUcxQuietEvery - 1)) == 0;
  }
  // Something went out through UCX, or waits for it: its worker is polled at every pass again.
  void UcxBusy() { ucx_quiet_passes_ = 0; }
  // Sets ucx_may_rest_ (verbs_path.cc): UCX may rest only in poll mode, and while no peer's
  // messages go through UCX (every peer on a ring or verbs). SetPath calls it when that count
  // changes; the verbs path calls it when it comes up or goes.
  void UpdateUcxRest();
  // Sets `peer`'s path, and ucx_may_rest_ in step with the count of peers sent to through UCX.
  void SetPath(Rank peer, Path path) {
    if (peers_.SetPath(peer, path)) UpdateUcxRest();
  }
  // The table for `new_size` ranks; the new ones go through UCX until a ring or verbs takes them.
  void GrowPeers(uint32_t new_size) {
    peers_.Grow(new_size);
    rings_.Grow(new_size);
    UpdateUcxRest();
  }
  // internal::SendOwnMessage, with UCX polled at every pass from now on.
  void* SendOwnMessage(ucp_ep_h ep, const std::byte* bytes, size_t length,
                       ucp_send_nbx_callback_t done, void* user_data);
  void CountMovedPairSend(Rank peer);
  // Progress's part: starts the attempts that counts asked for, and replays deferred link
  // messages.
  void ProgressVerbsReturns();
  // This end brings `peer`'s pair back: what it sends the peer waits from now on, and the link
  // messages of a new round go out (or the pair waits for a place). Nothing happens when no
  // place is free and none can be.
  void StartVerbsReturn(Rank peer);
  // Sorts a link message (kVerbsAsk, kVerbsAddress, kVerbsRefuse) by its round: true when the
  // handler goes on with it, the pair taken back to verbs first when the peer started a new
  // round; false when it was ignored (an attempt both ends moved past), deferred, or dropped.
  bool TakesVerbsLinkRound(const WireHeader& header, std::span<const std::byte> payload);
  // Keeps a link message for ProgressVerbsReturns, in its order among the peer's; false.
  bool DeferVerbsLinkMessage(const WireHeader& header, std::span<const std::byte> payload);
  // The peer started a new round of `peer`'s pair: this end's sends to it wait from now on.
  void TakeBackVerbsPair(Rank peer, uint32_t round);

  // Waits until `ready()` or the deadline; progresses (and sleeps in block mode) meanwhile.
  template <class Ready>
  Status WaitUntil(Ready&& ready, Deadline deadline, const char* what);

  Bootstrap* job_;
  Options options_;
  Rank rank_ = 0;
  DataPlaneRecord own_record_;  // this process's, as published (without its UCX address)
  uint32_t size_ = 0;
  uint32_t job_token_ = 0;
  std::unique_ptr<ucx::UcxContext> ucx_context_;
  std::unique_ptr<ucx::UcxWorker> worker_;
  ucp_datatype_t truncating_datatype_ = 0;
  bool has_truncating_datatype_ = false;
  std::unique_ptr<ucx::EndpointTable> endpoints_;
  std::vector<std::unique_ptr<Context>> contexts_;
  PeerTable peers_;  // one entry per rank, this process's own included
  // Failures reported for ranks beyond the size (a replacement this plane has not added yet).
  RankSet failed_beyond_size_;
  std::function<void(uint32_t, uint32_t, uint32_t)> revocation_heard_;  // OnRevocationHeard
  uint64_t pull_sequence_ = 0;
  RingPath rings_;                    // to and from the peers of this node (ring/ring_path.h)
  std::vector<Rank> direct_backlog_;  // ranks whose direct queue is not empty
  std::unique_ptr<VerbsPath> verbs_;  // nullptr unless this process offered verbs
  int verbs_wake_fds_[2] = {-1, -1};  // its completion channel and device event fds
  // UCX as a low-priority poll (docs/performance.md, "UCX's worker while verbs carries the
  // messages"). Over verbs, UCX carries the link messages and the pairs without a place; on one
  // node with rings, next to nothing (the rings carry the data, the rendezvous' done messages
  // and the revocation notices). An empty pass of its worker costs more than a ring's or the
  // verbs channel's, and a message that arrives mid-pass waits for the rest of it. So once the
  // worker found nothing kUcxQuietPasses passes in a row, it is polled every kUcxQuietEvery-th
  // pass only, until it has work again: it returned events, or this process sent through it (an
  // answer will come that way). Only in poll mode, with every peer reached by a ring or verbs
  // (ucx_may_rest_): a pair on UCX keeps UCX polled at every pass, so that its messages wait no
  // longer than before. Block mode sleeps on UCX's event fd instead. (Resting with rings alone,
  // 2026-12-06: the MPI layer's 8-byte ping-pong 0.47 against 0.49-0.50 us, and 0.148 against
  // 0.155-0.165 in the fast regime, pairs run back to back.)
  static constexpr uint32_t kUcxQuietPasses = 256;
  static constexpr uint32_t kUcxQuietEvery = 16;  // a power of two
  bool ucx_may_rest_ = false;
  uint32_t ucx_quiet_passes_ = 0;  // consecutive polls that found nothing, up to kUcxQuietPasses
  // The passes while quiet: every kUcxQuietEvery-th polled UCX, the others skipped it.
  uint64_t ucx_pass_ = 0;
  // How long Idle looks at the rings before it sleeps (block mode).
  static constexpr int64_t kIdleSpinNs = 3'000;
  ObjectPool<Request> requests_;
  ObjectPool<Unexpected> unexpected_;
  ObjectPool<ControlSend> control_sends_;
  BufferPool buffers_;
  DropCounters drops_;
  uint64_t failure_epoch_ = 0;

  // Failure reports and revocations from any thread (the registry's listeners, the revoke
  // service) and from UCX callbacks; the data-plane thread drains them in Progress(). Only its
  // flag is read on the fast path; its eventfd wakes Idle().
  WakeQueue<Notice> reports_;
  bool failing_peer_ = false;  // inside FailPeer (re-entrancy from UCX callbacks)
  // In the destructor, from the endpoints' close on: arriving messages are let go
  // (OnActiveMessage). A late link message of the verbs backend would otherwise answer through
  // the endpoint table being destroyed.
  bool closing_endpoints_ = false;
  std::vector<FutureRevocation> future_revocations_;  // few: revocations ahead of this process
  // How long FailPeer holds back an operation UCX still runs, waiting for UCX's callback.
  static constexpr std::chrono::milliseconds kUcxReleaseBound{500};
};

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_DATAPLANE_DATA_PLANE_H_
