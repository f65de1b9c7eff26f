// The verbs backend's eager message channel: small messages between the ranks of a job as RC
// SENDs into pre-posted receive buffers, with credit flow control (credit_window.h).
//
// On one VerbsContext: one shared receive queue (SRQ) holding fixed-size registered receive
// slots, C (the credit window) reserved per peer plus CreditWindow::kCreditMessagesInFlight for
// explicit credit messages; one RC QP per peer, all drawing receives from the SRQ and completing
// on the channel's own CQ; and a pool of registered send slots. A message is a SEND with
// immediate data (eager_imm.h: kind and credits returned); the source is the QP it came on and
// the length the receive's byte_len, so a slot holds payload only. A SEND that fits the QP's
// max_inline_data is posted inline, and only some SENDs are signaled (SendQueueSignals).
//
// Single-threaded: Send and Progress are called from one thread (the message callback, called
// from Progress, may Send). Nothing is allocated per message: the slots and a QP are set up
// when a peer first takes a place in the receive queue (or by Create), the work requests on
// the stack.
#ifndef RFT_TRANSPORT_VERBS_EAGER_CHANNEL_H_
#define RFT_TRANSPORT_VERBS_EAGER_CHANNEL_H_

#include <endian.h>
#include <infiniband/verbs.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"
#include "transport/verbs/credit_window.h"
#include "transport/verbs/eager_imm.h"
#include "transport/verbs/qp_address.h"
#include "transport/verbs/rc_qp.h"
#include "transport/verbs/send_queue_signals.h"
#include "transport/verbs/verbs_context.h"

namespace rft::verbs {

struct EagerConfig {
  size_t slot_size = 8192;  // bytes per receive and send slot: the largest payload
  // C, per peer. Every rank of a job must use the same value: it is the window a sender assumes
  // and the reservation its receiver makes (checked at Connect, as is slot_size).
  uint32_t credits = 16;
  uint32_t max_inline_data = 256;  // requested per QP; the device's grant is used
  // Send queue entries per peer added for Write, beside those of SENDs and READs: a WRITE takes
  // no credit, so without room of its own it could hold entries the SENDs wait for.
  uint32_t writes_per_peer = 0;
  // A peer's QP is made when it is first opened (Open, Expect, Connect) instead of by Create,
  // so that a process holds QPs only for the peers it talks to (the data plane, which connects
  // pairs on demand: docs/verbs.md). Create still makes one QP, and destroys it, to learn the
  // device's inline grant and to fail at once where no QP can be made.
  bool qps_on_demand = false;
  // The most peers connected at once (a place each in the receive queue: C + 2 receives);
  // 0: one for every peer. The device's largest shared receive queue bounds it too (places()).
  // A peer beyond it is refused a place (Open and Connect: RFT_ERR_ARG) until one is free.
  uint32_t max_places = 0;
  RcTiming timing;
};

// What Send did with a message.
enum class SendResult {
  kPosted,  // on the wire (its bytes were copied; the caller's buffer is free)
  kQueued,  // copied, waiting for credits; it goes out in order from Progress
  kFull,    // nothing was kept (every send slot is taken, or SendNow could not post): offer it
            // again after Progress
};

class EagerChannel {
 public:
  // A message from `source`; `payload` is valid only during the call.
  using MessageCallback = std::function<void(Rank source, std::span<const std::byte> payload)>;
  // The same as a plain function and its `context`, for a caller on every message's path (the
  // data plane): one indirect call, where std::function costs two and a check.
  using MessageHandler = void (*)(void* context, Rank source, std::span<const std::byte> payload);
  // A work completion with an error on `peer`'s QP (retry exceeded, a flush): called once per
  // peer, with ibv_wc_status_str's text.
  using FailureCallback = std::function<void(Rank peer, std::string_view status)>;
  // An RDMA READ started by Read ended: `ok` when its data is in place; false when the QP
  // failed first (the peer is reported through the failure callback as well).
  using ReadCallback = std::function<void(uint32_t token, bool ok)>;
  // A Close ended: `peer`'s QP is gone and its place in the receive queue is free.
  using ClosedCallback = std::function<void(Rank peer)>;

  // QPs to every rank of 0..size-1 but `self` (none yet with qps_on_demand), not yet
  // connected, and the SRQ's slots posted.
  // `context` must outlive the channel. Errors name the call or the value that was wrong.
  static StatusOr<std::unique_ptr<EagerChannel>> Create(VerbsContext& context, Rank self,
                                                        uint32_t size, const EagerConfig& config,
                                                        MessageCallback on_message,
                                                        FailureCallback on_failure);
  // The same with messages going to `handler(handler_context, ...)`.
  static StatusOr<std::unique_ptr<EagerChannel>> Create(VerbsContext& context, Rank self,
                                                        uint32_t size, const EagerConfig& config,
                                                        MessageHandler handler,
                                                        void* handler_context,
                                                        FailureCallback on_failure);
  ~EagerChannel();
  EagerChannel(const EagerChannel&) = delete;
  EagerChannel& operator=(const EagerChannel&) = delete;

  // How the two ends of a QP know that the other is ready to receive. A SEND that reaches a QP
  // not yet ready is dropped and retried only a few times (RcTiming), then fails a live peer.
  enum class Handshake : uint8_t {
    // Both ends connect before either sends (the job's start-up, with a fence in between).
    kNone,
    // A peer that joins later (growth): the end that connects first waits for a greeting (a
    // SEND of EagerKind::kGreeting, the first on the QP) before it sends; the end that connects
    // second, after learning the first end's address (so its QP is ready), sends the greeting
    // at once and may send from then on.
    kAwaitGreeting,
    kGreet,
  };

  // This rank's record for `peer`'s QP (with this channel's credits and slot size), and
  // connecting to `peer`'s record for this rank: RFT_ERR_ARG naming both configurations when the
  // peer's credits or slot size differ from this channel's, when the QP is connected already,
  // and when every place in the receive queue is taken (see Grow).
  // address() needs the peer's QP (opened(peer)); Connect opens it when needed.
  QpAddress address(Rank peer) const;
  Status Connect(Rank peer, const QpAddress& remote, Handshake handshake = Handshake::kNone);
  // `peer` will connect, once its address comes: it takes its place now, and messages to it
  // wait (Send queues them, SendNow returns kFull) until Connect.
  Status Expect(Rank peer);
  // Whether a peer's eager configuration matches this channel's: RFT_ERR_ARG naming both, and
  // `peer_name` first, when not. Connect checks it; so does whoever learns a peer's
  // configuration before its address (the data plane's record, at start-up).
  Status CheckPeerConfig(uint32_t credits, uint32_t slot_size, const std::string& peer_name) const;
  // Makes `peer`'s QP (qps_on_demand) and takes its place in the receive queue, as Expect
  // does: RFT_ERR_PROC_FAILED once it failed, RFT_ERR_ARG when no place is left, the call's
  // error when the device makes no more QPs. Nothing to do when the QP exists.
  Status Open(Rank peer);
  bool opened(Rank peer) const { return peer < peers_.size() && peers_[peer].qp != nullptr; }
  // Whether Open(peer) would find a place in the receive queue: it holds one, or one is free.
  bool has_place_for(Rank peer) const {
    return peer < peers_.size() && (peers_[peer].holds_place || holders_ < places_);
  }
  uint32_t places() const { return places_; }
  // A QP made for `peer` that will not be used (the pair stays on another transport) goes, and
  // its place comes back: RFT_ERR_ARG once it is connected or holds messages. Nothing to do when
  // it has none.
  Status Withdraw(Rank peer);
  // QPs made so far, spares excluded (see Close).
  uint32_t qp_count() const { return static_cast<uint32_t>(by_qpn_.size()); }

  // The two ends of a pair agreed to stop using their QPs (the layer above's ordered close:
  // docs/verbs.md): `peer`'s QP goes and its place in the receive queue comes back, without the
  // peer being reported failed. It must be connected, not failed, with nothing queued; messages
  // the peer sent before its end closed are delivered if they arrived. The QP moves to the
  // error state at once, so that nothing more goes out or comes in, and a last request posted
  // behind what it had outstanding (a drain marker) completes once all of that has: its
  // completion, at a later Progress, ends the close and calls the closed callback. Errors
  // completing for a closing peer are the close's own, never a failure. Sends, reads and writes
  // to it are refused from now on, and Open may make it a QP again once closed. The QP itself
  // is kept in the RESET state for the next peer that needs one: destroying it would wait for
  // the device's asynchronous events on it to be read. RFT_ERR_ARG when it cannot be closed.
  Status Close(Rank peer);
  // The first half of a close, for the end that answers a request to close (docs/verbs.md):
  // nothing more is posted on `peer`'s QP (no message, no credit), and errors completing on it
  // are not failures (the other end may close first, and what this end posted last may then go
  // unacknowledged). Messages keep arriving. Close ends it. Same conditions as Close.
  Status Quiet(Rank peer);
  bool closing(Rank peer) const { return peer < peers_.size() && peers_[peer].closing; }
  void set_closed_callback(ClosedCallback on_closed) { on_closed_ = std::move(on_closed); }
  // Peers holding a place in the receive queue now.
  uint32_t place_holders() const { return holders_; }
  // Whether messages to `peer` go out now: connected, and greeted when the handshake asked.
  bool ready(Rank peer) const { return peer < peers_.size() && peers_[peer].ready; }

  // Ranks [size, new_size) join the job (replacements, docs/recovery.md): a QP for each, not yet
  // connected. The receive queue does not grow: it holds C + 2 receives for each place (see
  // max_places), and a connected peer that has not failed holds one such place.
  // A failed peer's QP receives nothing more, so its place goes to the next peer that connects:
  // a replacement takes a failed rank's place. The CQ grows for the new QPs (ibv_resize_cq).
  Status Grow(uint32_t new_size);
  uint32_t size() const { return static_cast<uint32_t>(peers_.size()); }

  size_t max_payload() const { return config_.slot_size; }
  // Payloads up to this size go inline; none does when the device grants no inline data
  // (inline_capable() false).
  size_t max_inline_payload() const { return max_inline_; }
  bool inline_capable() const { return max_inline_ > 0; }
  uint32_t credits() const { return config_.credits; }

  // Posts `payload` if `peer`'s window allows (inline from the caller's buffer when it fits, else
  // from a send slot it is copied into), else copies it into a send slot and queues it behind
  // the peer's earlier messages. RFT_ERR_PROC_FAILED naming the peer once its QP failed;
  // RFT_ERR_ARG for a bad peer or a payload over max_payload().
  StatusOr<SendResult> Send(Rank peer, std::span<const std::byte> payload) {
    return Send(peer, payload, {});
  }
  // The same for a message in two pieces (a header and its payload), gathered into one.
  StatusOr<SendResult> Send(Rank peer, std::span<const std::byte> first,
                            std::span<const std::byte> second) {
    return Send(peer, first, second, /*queue=*/true);
  }
  // Posts now or keeps nothing (kFull): for a caller with a queue of its own, whose sends count
  // as done only once on the wire. A message queued here goes out only from a later Progress,
  // which a process blocked outside the library never calls (docs/verbs.md).
  // Inline into the caller for the common case of a latency-bound exchange (one piece that
  // fits the work request, nothing queued ahead, a credit and room in the send queue): the
  // frames of Send and of its status, on every message's path, are skipped.
  [[gnu::always_inline]] StatusOr<SendResult> SendNow(Rank peer, std::span<const std::byte> first,
                                                      std::span<const std::byte> second) {
    if (second.empty() && peer < peers_.size() && peer != self_) {
      const Peer& p = peers_[peer];
      if (p.failed == nullptr && !p.quiet && CanPostInlineNow(p, first.size())) [[likely]] {
        RFT_RETURN_IF_ERROR(PostInlineNow(peer, first.data(), static_cast<uint32_t>(first.size())));
        return SendResult::kPosted;
      }
    }
    return Send(peer, first, second, /*queue=*/false);
  }

  // Zero-copy rendezvous: starts an RDMA READ of `length` bytes at `remote_address` in `peer`'s
  // memory (registered there under `rkey`) into `local` (registered here under `lkey`); the
  // read callback gets `token` when it ends. False (nothing posted) while the peer's send queue
  // is full: offer it again after Progress. RFT_ERR_PROC_FAILED once the peer's QP failed.
  StatusOr<bool> Read(Rank peer, void* local, uint32_t lkey, uint64_t remote_address, uint32_t rkey,
                      uint32_t length, uint32_t token);
  void set_read_callback(ReadCallback on_read) { on_read_ = std::move(on_read); }

  // One RDMA WRITE of the 8-byte `word` at `remote_address` in `peer`'s memory, registered there
  // under `rkey`, on the QP that carries the peer's messages (the control plane's heartbeats:
  // detector/verbs_heartbeats.h). Inline when the device allows, else from a send slot. It
  // takes no credit and consumes none of the peer's receives. `signaled`: its completion is
  // awaited (awaiting(peer) holds until it comes); an unsignaled one shows only if it fails.
  // False (nothing posted) while the peer is not ready, its send queue is full, or (without
  // inline data) every send slot is taken. RFT_ERR_PROC_FAILED once its QP failed.
  StatusOr<bool> Write(Rank peer, uint64_t word, uint64_t remote_address, uint32_t rkey,
                       bool signaled);
  // Whether a signaled SEND, READ or WRITE to `peer` awaits its completion (false once the peer
  // failed: nothing more completes for it; false for a rank beyond the channel's size).
  bool awaiting(Rank peer) const {
    return peer < peers_.size() && peers_[peer].failed == nullptr &&
           peers_[peer].signals.awaited() > 0;
  }
  // Reads a peer may have outstanding at once (each takes a send queue entry of its own).
  static constexpr uint32_t kReadsPerPeer = 4;

  // The layer above decided `peer` failed (the job's failure registry): its QP moves to the
  // error state, so that no RDMA for it touches this process's memory any more and what is
  // outstanding on it completes as flushed at the next Progress; the failure callback is called
  // as for an error completion, once.
  void Disconnect(Rank peer);

  // Polls the CQ: delivers messages, reposts their slots (a message's slot at the first pass
  // that finds nothing, or once a batch waits: RepostDeferred), takes returned credits,
  // reports failed peers, posts queued sends and due credit messages. The number of completions
  // handled; an error for a header that breaks the protocol (it names the peer and the value).
  StatusOr<int> Progress() {
    // Inline up to the poll: most calls of a wait find nothing, and return here without the
    // frame of the work below (a message that arrives mid-pass waits for the pass's end).
    const int n = Poll();
    if (NothingToDo(n)) [[likely]]
      return 0;
    const int handled = HandlePolled(n);
    if (handled < 0) [[unlikely]]
      return TakeError();
    return handled;
  }
  // Progress in its two halves, for a caller that keeps the pass that finds nothing in its own
  // frame (the data plane): Poll polls the CQ, and unless NothingToDo says so, HandlePolled
  // does the rest with what it found. It returns the number of completions handled, or -1 when
  // the poll failed or a peer broke the protocol, and TakeError then says how: an int, not a
  // StatusOr, so that a caller that calls it inline holds no status in its frame.
  int Poll() { return ibv_poll_cq(cq_, kPollBatch, polled_); }
  bool NothingToDo(int polled) const {
    return polled == 0 && active_.empty() && deferred_count_ == 0;
  }
  int HandlePolled(int n);
  Status TakeError() { return std::move(error_); }

  // No message queued, no signaled send awaiting its completion and no credit message due
  // towards any peer that has not failed. Unsignaled inline SENDs after the last signaled one
  // are not waited for: no completion will come for them unless they fail.
  bool Idle() const;
  bool failed(Rank peer) const { return peers_[peer].failed != nullptr; }

  // Sleeping instead of polling, for more processes than cores: call it when Progress has
  // nothing left to do. It arms the CQ's completion channel, polls once more (a completion that
  // came before the arm raises no event), and only then sleeps on the channel's fd and the
  // device's async fd until a completion or an asynchronous event comes (read here), or
  // `timeout_ms` passes (-1: no limit). Returns whether something came; Progress handles the
  // completions.
  StatusOr<bool> WaitForCompletion(int timeout_ms);
  // The same in two halves, for a caller that sleeps on more descriptors (the data plane's
  // poll beside UCX's): ArmForSleep arms the CQ and polls once more, false when that found
  // something (handled: do not sleep); then sleep on completion_fd() and the context's
  // async_fd(), and call TakeEvents after, which returns whether an event came.
  StatusOr<bool> ArmForSleep();
  bool TakeEvents(bool async_readable);
  int completion_fd() const { return completion_channel_->fd; }
  uint64_t wakeups() const { return wakeups_; }  // WaitForCompletion calls that were woken

  // Reads the device's asynchronous events (async_event.h). An event on a peer's QP (QP fatal,
  // a request or access error) fails that peer as an error completion would (not while it is
  // closing), and a fatal device fails every peer, each reported once through the
  // failure callback. Port events are counted and logged: the link may come back before the
  // QPs' retries run out, and a peer is failed only if they do. Call it when the context's
  // async_fd() is readable, or now and then (one non-blocking read when nothing is pending).
  // Returns how many events were read.
  int PollAsyncEvents();
  struct DeviceStats {
    uint64_t port_down = 0;
    uint64_t port_up = 0;
    uint64_t other = 0;  // events that change nothing here
  };
  const DeviceStats& device_stats() const { return device_stats_; }

  struct PeerStats {
    uint64_t sent = 0;             // data messages posted
    uint64_t sent_inline = 0;      // of which inline
    uint64_t received = 0;         // data messages delivered
    uint64_t queued = 0;           // sends that had to wait (SendResult::kQueued)
    uint64_t credit_messages = 0;  // explicit credit messages posted
    uint64_t greetings = 0;        // greetings received (Handshake::kAwaitGreeting)
    uint64_t writes = 0;           // RDMA WRITEs posted (Write)
    uint64_t closes = 0;           // closes ended (Close)
    uint64_t flushed = 0;          // requests a close found outstanding, completed as flushed
    uint32_t max_in_flight = 0;    // the most credits ever taken at once (never above C)
  };
  const PeerStats& stats(Rank peer) const { return peers_[peer].stats; }

 private:
  StatusOr<SendResult> Send(Rank peer, std::span<const std::byte> first,
                            std::span<const std::byte> second, bool queue);
  // RFT_ERR_ARG for a rank that is not a peer or one quiet or closing, RFT_ERR_PROC_FAILED naming
  // the status for one whose QP failed; `what` names the operation in the message. Inline for
  // every send; the error out of line (CheckPeerError).
  Status CheckPeer(Rank peer, const char* what) const {
    if (peer < peers_.size() && peer != self_ && peers_[peer].failed == nullptr &&
        !peers_[peer].quiet) [[likely]] {
      return Status::Ok();
    }
    return CheckPeerError(peer, what);
  }
  [[gnu::cold, gnu::noinline]] Status CheckPeerError(Rank peer, const char* what) const;

  struct Peer {
    Peer(const CreditWindow& w, const SendQueueSignals& s) : window(w), signals(s) {}
    std::unique_ptr<RcQp> qp;
    CreditWindow window;
    SendQueueSignals signals;
    // Queued messages, oldest first: a list through the send slots holding them (slots_).
    uint32_t head = kNoSlot;
    uint32_t tail = kNoSlot;
    uint32_t count = 0;
    bool connected = false;
    bool ready = false;            // connected, and greeted if the handshake asked for it
    bool holds_place = false;      // counted in holders_ (Expect or Connect, until it fails)
    bool active = false;           // in active_
    bool closing = false;          // Close called, its drain marker not yet completed
    bool quiet = false;            // Quiet or Close called: nothing is posted, errors are not
                                   // failures
    const char* failed = nullptr;  // the status text once the QP failed
    PeerStats stats;
  };

  EagerChannel(Rank self, const EagerConfig& config, uint32_t repost_batch);
  // Where messages go: `on_message` when a caller gave a std::function (Create's first form).
  void set_message_handler(MessageHandler handler, void* context) {
    message_handler_ = handler;
    message_context_ = context;
  }
  // Appends the entry of rank peers_.size(), and its QP unless qps_on_demand (none for `self`).
  Status AddPeer(const CreditWindow& window);
  // Makes `peer`'s QP, or takes a spare one; `sorted`: keeps by_qpn_ sorted (Create and Grow
  // sort once after).
  Status MakeQp(Rank peer, bool sorted);
  // Undoes MakeQp's bookkeeping for `peer`'s QP (its number, its send queue's CQ entries); the
  // caller decides what becomes of the QP.
  void ForgetQp(Rank peer);
  // `peer` takes a place in the receive queue (Expect, Connect); RFT_ERR_ARG when none is left.
  Status TakePlace(Rank peer);
  // Gives `peer`'s place back unless it held it before this call (`held_before`): a QP that
  // could not be made or connected, was withdrawn, closed or failed receives nothing.
  void ReleasePlaceUnlessHeld(Rank peer, bool held_before);
  std::byte* slot(uint32_t index) const { return slots_[index].address; }
  Status PostReceive(uint32_t index);
  // Fills a receive work request and its scatter/gather entry for slot `index`, its `next` null
  // (a caller posting several chains them).
  void FillReceive(uint32_t index, ibv_recv_wr& wr, ibv_sge& sge) const {
    sge.addr = reinterpret_cast<uintptr_t>(slot(index));
    sge.length = static_cast<uint32_t>(config_.slot_size);
    sge.lkey = slots_[index].lkey;
    wr.wr_id = kRecvId | index;
    wr.next = nullptr;
    wr.sg_list = &sge;
    wr.num_sge = 1;
  }
  // Posts `count` receives chained from `first`; the error names the slot refused.
  Status PostReceives(ibv_recv_wr* first, uint32_t count);
  // Whether a message of `length` bytes to `p` (not failed, not quiet) goes out inline at once:
  // it fits, nothing waits ahead of it, the peer is ready, and there is a credit and room in
  // the send queue. Send and SendNow's common case.
  bool CanPostInlineNow(const Peer& p, size_t length) const {
    return length <= max_inline_ && p.count == 0 && p.ready && p.signals.has_room() &&
           p.window.credits() > 0;
  }
  // Posts it (CanPostInlineNow held), taking its credit.
  [[gnu::always_inline]] Status PostInlineNow(Rank peer, const std::byte* data, uint32_t length) {
    CreditWindow& window = peers_[peer].window;
    window.Enqueue();
    window.TryDispatch();
    return Post(peer, data, length, kNoSlot, EagerKind::kData);
  }
  // `slot_index` is kNoSlot for bytes outside the slots (posted inline) or none. Inline (below
  // the class): SendNow's common case posts from its caller's frame.
  Status Post(Rank peer, const std::byte* data, uint32_t length, uint32_t slot_index,
              EagerKind kind);
  [[gnu::cold, gnu::noinline]] Status PostFailed(Rank peer, uint32_t length, bool inline_send,
                                                 int error) const;
  Status Flush(Rank peer);
  Status SendCreditIfDue(Rank peer);
  void MarkActive(Rank peer);
  // A completion that is not a delivered message from a peer (HandlePolled takes those).
  Status Handle(const ibv_wc& wc);
  // HandlePolled's error: kept for TakeError; returns -1.
  [[gnu::cold, gnu::noinline]] int Broke(Status error);
  // Why `peer`'s QP cannot be quieted or closed (`what`), if so: not connected, failed,
  // closing, or messages queued.
  Status CheckClosable(Rank peer, const char* what) const;
  // The drain marker of a closing peer completed: nothing of its QP is outstanding.
  void FinishClose(Rank peer);
  // What a peer's send queue accounting starts with (AddPeer, and again after a close).
  SendQueueSignals FreshSignals() const;
  Status Receive(Rank peer, uint32_t index, const ibv_wc& wc);
  // Posts the receives of the slots whose messages were delivered, in one call, and owes their
  // peers the credits (CreditWindow::Reposted).
  Status RepostDeferred();
  // `why`: a static text (ibv_wc_status_str's or the async event's name).
  void Fail(Rank peer, const char* why);
  // The rank whose QP has number `qpn`, or kInvalidRank. Inline: every receive asks, and the
  // cache answers nearly always.
  Rank PeerOfQp(uint32_t qpn) const {
    const std::pair<uint32_t, Rank>& cached = QpnCacheEntry(qpn);
    if (cached.first == qpn) [[likely]]
      return cached.second;
    return PeerOfQpSearch(qpn);
  }
  // The binary search behind the cache; fills the cache with what it found.
  Rank PeerOfQpSearch(uint32_t qpn) const;

  // A message copied into send slot `index` waits behind `peer`'s others; the oldest leaves
  // (its slot returned, its length in *length).
  void Enqueue(Peer& peer, uint32_t index, uint32_t length);
  uint32_t Dequeue(Peer& peer, uint32_t* length);

  // A work request id: its kind in the top two bits (an error completion carries only the id
  // and the QP, not the opcode), a send's or read's peer in bits 32..61 (so its completion needs
  // no QPN lookup), the slot or the read's token in the low 32.
  static constexpr uint64_t kReadId = 0;
  static constexpr uint64_t kRecvId = 1ull << 62;
  static constexpr uint64_t kSendSlotId = 2ull << 62;  // from a slot freed at its completion
  static constexpr uint64_t kSendFreeId = 3ull << 62;  // inline or empty: no slot to free
  static constexpr uint64_t kKindMask = 3ull << 62;
  static constexpr uint64_t kPeerMask = (1ull << 30) - 1;
  static constexpr uint32_t kNoSlot = UINT32_MAX;
  // The low 32 bits of a closing QP's drain marker (kSendFreeId: it has no slot); an inline SEND
  // has kNoSlot there, an inline WRITE 0.
  static constexpr uint32_t kDrainMarker = UINT32_MAX - 1;
  static constexpr uint32_t kMaxRanks = 1u << 30;
  static std::string PeerName(Rank peer) { return "rank " + std::to_string(peer); }
  // The largest message in two pieces posted inline: joined on the stack first.
  static constexpr uint32_t kMaxGatheredInline = 512;

  const Rank self_;
  const EagerConfig config_;
  MessageCallback on_message_;
  // What Receive calls: Create's handler, or on_message_ through a trampoline.
  MessageHandler message_handler_ = nullptr;
  void* message_context_ = nullptr;
  FailureCallback on_failure_;
  ReadCallback on_read_;
  ClosedCallback on_closed_;
  VerbsContext* context_ = nullptr;
  DeviceStats device_stats_;
  ibv_comp_channel* completion_channel_ = nullptr;
  bool armed_ = false;           // ibv_req_notify_cq called, no event taken since
  uint32_t unacked_events_ = 0;  // CQ events taken, not yet acknowledged
  uint64_t wakeups_ = 0;
  static constexpr uint32_t kAckBatch = 64;
  ibv_cq* cq_ = nullptr;
  // Progress's completions: a member, so that the frame of a pass that finds nothing holds no
  // array (nor the stack protector's check of one).
  static constexpr int kPollBatch = 32;
  ibv_wc polled_[kPollBatch];
  bool handling_polled_ = false;  // inside HandlePolled (checked in debug builds)
  Status error_;                  // what broke the last HandlePolled that returned -1
  // Slots of delivered messages whose receives are not posted again yet. Posting one costs
  // about as much as the rest of a message's delivery in the provider (rxe: its queue lock and
  // the entry's copy), and the reply a caller sends at once need not wait for it: it is left to
  // the next pass that finds nothing (the wait for the next message), or done once
  // repost_batch_ wait, in one call. The credits follow the repost, so no sender ever counts on
  // a slot that is not posted (credit_window.h). Only data messages' slots wait: the buffers of
  // credit messages and greetings are not covered by credits and go back at once.
  struct DeferredRepost {
    uint32_t index;
    Rank peer;
  };
  // The batch is at most half a window (the point where a receiver owes a credit message), so
  // that a stream that keeps every pass busy gets its credits back as soon as it did when each
  // slot was posted at once.
  static constexpr uint32_t kRepostBatch = 16;
  const uint32_t repost_batch_;  // the window's threshold, at most kRepostBatch
  DeferredRepost deferred_[kRepostBatch + kPollBatch];
  uint32_t deferred_count_ = 0;
  // Post's work request and its scatter/gather entry, made once: a message sets the fields a
  // SEND with immediate data reads, the others stay zero, and no send clears 128 bytes.
  ibv_send_wr send_wr_{};
  ibv_sge send_sge_{};
  ibv_srq* srq_ = nullptr;
  uint32_t receive_slots_ = 0;  // the receive queue's capacity: C + 2 for every place
  uint32_t send_slots_per_peer_ = 0;
  // Places in the receive queue (C + 2 receives each: the peers the channel was created for,
  // at most EagerConfig::max_places and what the device's receive queue holds) and the peers
  // holding one.
  uint32_t places_ = 0;
  uint32_t holders_ = 0;
  // The slots' memory comes a place at a time (AddSlotBlock): C + 2 receive slots, posted at
  // once, and as many send slots for the shared pool, registered together. A block is added
  // when a peer takes a place beyond those the blocks cover, so memory follows the peers that
  // connect, not the job's size; a failed peer's place, and its block, go to the next one.
  struct SlotBlock {
    std::byte* region;
    ibv_mr* mr;
  };
  std::vector<SlotBlock> blocks_;
  Status AddSlotBlock();
  // Every slot by index (the index travels in work request ids): where it is, its key, and for
  // a send slot that holds a queued message its length and the next queued slot of the same
  // peer (a list through the slots, not a ring per peer: one sized for every slot took 8 bytes
  // per slot per peer, quadratic in the ranks).
  struct Slot {
    std::byte* address;
    uint32_t lkey;
    uint32_t queued_length = 0;
    uint32_t queued_next = kNoSlot;
  };
  std::vector<Slot> slots_;
  // The CQ holds a completion for every receive and every send queue entry of every QP made
  // (sends_reserved_ of them): MakeQp grows it, up to the device's largest (max_cqe_).
  int cq_entries_ = 0;
  int max_cqe_ = 0;
  uint64_t sends_reserved_ = 0;
  Status ReserveCompletions(uint32_t send_entries);
  RcQpOptions qp_options_;  // what every QP is created with (Grow makes more)
  // QPs of closed pairs, in the RESET state, for the next peers that need one (Close).
  std::vector<std::unique_ptr<RcQp>> spare_qps_;
  uint32_t max_inline_ = 0;          // header included
  std::vector<uint32_t> free_send_;  // a stack of free send slot indices
  std::vector<Peer> peers_;          // indexed by rank; this rank's entry unused
  // Peers with a message queued or a credit message due (a peer stays until it has neither):
  // Progress visits only these instead of every peer.
  std::vector<Rank> active_;
  // (QPN, rank) sorted by QPN: a receive completion names only the QP (the SRQ's receives
  // belong to no peer), and a binary search over a flat array beats hashing for a few peers.
  std::vector<std::pair<uint32_t, Rank>> by_qpn_;
  // In front of by_qpn_, for every receive: the entries found last, direct-mapped by the QPN's
  // low bits (a process's QPNs are mostly consecutive, so up to 64 peers rarely collide). An
  // entry goes with its QP (ForgetQp): a QPN used again names whichever peer took it.
  static constexpr uint32_t kQpnCacheSize = 64;
  static constexpr uint32_t kNoQpn = ~uint32_t{0};  // QPNs have 24 bits
  mutable std::array<std::pair<uint32_t, Rank>, kQpnCacheSize> qpn_cache_;
  // The one entry of qpn_cache_ that may hold `qpn`.
  std::pair<uint32_t, Rank>& QpnCacheEntry(uint32_t qpn) const {
    return qpn_cache_[qpn % kQpnCacheSize];
  }
};

[[gnu::always_inline]] inline Status EagerChannel::Post(Rank peer, const std::byte* data,
                                                        uint32_t length, uint32_t slot_index,
                                                        EagerKind kind) {
  Peer& p = peers_[peer];
  const bool inline_send = length > 0 && length <= max_inline_;
  // A SEND from a slot must be signaled: its completion frees the slot.
  const bool from_slot = length > max_inline_;
  const bool signaled = p.signals.Take(from_slot);
  send_sge_.addr = reinterpret_cast<uintptr_t>(data);
  send_sge_.length = length;
  // Inline bytes need no key; bytes from outside the slots are always inline.
  send_sge_.lkey = slot_index == kNoSlot ? 0 : slots_[slot_index].lkey;
  send_wr_.wr_id =
      (from_slot ? kSendSlotId : kSendFreeId) | (static_cast<uint64_t>(peer) << 32) | slot_index;
  send_wr_.sg_list = length > 0 ? &send_sge_ : nullptr;
  send_wr_.num_sge = length > 0 ? 1 : 0;
  send_wr_.opcode = IBV_WR_SEND_WITH_IMM;
  send_wr_.imm_data = htobe32(EncodeEagerImm(kind, p.window.TakeOwed()));
  send_wr_.send_flags = (signaled ? IBV_SEND_SIGNALED : 0) | (inline_send ? IBV_SEND_INLINE : 0);
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(p.qp->qp(), &send_wr_, &bad); rc != 0) [[unlikely]] {
    return PostFailed(peer, length, inline_send, rc);
  }
  // An inline SEND's bytes were copied into the work request: its slot is free already.
  if (!from_slot && slot_index != kNoSlot) free_send_.push_back(slot_index);
  if (kind == EagerKind::kData) {
    ++p.stats.sent;
    if (inline_capable() && length <= max_inline_) ++p.stats.sent_inline;
    p.stats.max_in_flight = std::max(p.stats.max_in_flight, p.window.in_flight());
  } else if (kind == EagerKind::kCredit) {
    ++p.stats.credit_messages;
  }
  return Status::Ok();
}

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_EAGER_CHANNEL_H_
