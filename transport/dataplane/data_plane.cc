// The data plane's send and receive calls, contexts, progress and failure completion. Its
// set-up is in setup.cc, the receive side of the network in active_message.cc, the completion
// calls in completion.cc.
#include "transport/dataplane/data_plane.h"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "base/check.h"
#include "base/log.h"
#include "transport/dataplane/data_plane_internal.h"
#include "transport/dataplane/verbs_path.h"

namespace rft::transport {

Status DataPlane::CreateContext(uint32_t context_id, Context** context) {
  auto created = GetContext(context_id);
  if (!created.ok()) return created.status();
  *context = *created;
  return Status::Ok();
}

StatusOr<DataPlane::Context*> DataPlane::GetContext(uint32_t context_id) {
  if (Context* context = FindContext(context_id)) return context;
  if (context_id >= options_.max_contexts) {
    return ArgError("context id " + std::to_string(context_id) +
                    ": expected an id below the data plane's limit of " +
                    std::to_string(options_.max_contexts));
  }
  if (context_id >= contexts_.size()) contexts_.resize(context_id + 1);
  contexts_[context_id] = std::make_unique<Context>();
  return contexts_[context_id].get();
}

Status DataPlane::SetContextEpoch(uint32_t context_id, uint32_t epoch, uint32_t owner) {
  auto context = GetContext(context_id);
  if (!context.ok()) return context.status();
  Context* found = *context;
  if (epoch > found->epoch) {
    found->revoked = false;  // a new life
    // What the old life left unreceived must not match the new life's receives.
    found->queue.RemoveUnexpectedIf(
        [epoch](const UnexpectedMessage* node) {
          return static_cast<const Unexpected*>(node->owner)->epoch < epoch;
        },
        [this](UnexpectedMessage* node) {
          drops_.Record(DecodeError::kStaleEpoch);
          ReleaseUnexpected(static_cast<Unexpected*>(node->owner));
        });
  }
  found->epoch = epoch;
  found->owner = owner;
  // A revocation of this life that came before it started applies now; older ones never will.
  bool revoked_early = false;
  std::erase_if(future_revocations_, [&](const FutureRevocation& r) {
    if (r.context_id != context_id || r.epoch > epoch) return false;
    revoked_early = revoked_early || (r.epoch == epoch && r.owner == owner);
    return true;
  });
  if (revoked_early && !found->revoked) RevokeLife(context_id, found);
  return Status::Ok();
}

bool DataPlane::HasAnySourceReceive(uint32_t context_id) const {
  const Context* context = FindContext(context_id);
  return context != nullptr && context->queue.HasAnySourceReceive();
}

// Inline into Isend and the receive's start: every request begins here.
[[gnu::always_inline]] inline Request* DataPlane::NewRequest(RequestKind kind, Rank peer,
                                                             int32_t tag, uint32_t context_id,
                                                             void* buffer, size_t capacity) {
  Request* request = requests_.Acquire();
  request->plane = this;
  request->kind = kind;
  request->peer = peer;
  request->tag = tag;
  request->context_id = context_id;
  request->buffer = buffer;
  request->capacity = capacity;
  request->posted.owner = request;
  request->peer_link.request = request;
  return request;
}

// Inline into Isend and SendNow: one call less per message.
[[gnu::always_inline]] inline void DataPlane::EncodeDataHeader(
    const Context& context, uint32_t context_id, int32_t tag, MessageType type, uint64_t length,
    std::span<std::byte, kWireHeaderSize> out) const {
  WireHeader header;
  header.type = type;
  header.source = rank_;
  header.context_id = context_id;
  header.epoch = context.epoch;
  header.tag = tag;
  header.length = length;
  header.job_token = job_token_;
  EncodeHeader(header, out);
}

Status DataPlane::Isend(const void* buffer, size_t bytes, Rank dest, int32_t tag,
                        uint32_t context_id, Request** out, SendMode mode) {
  if (dest >= size_ || tag < 0 || (buffer == nullptr && bytes > 0)) [[unlikely]]
    return SendArgumentError(dest, tag, bytes);
  Context* context = nullptr;
  RFT_RETURN_IF_ERROR(UseContext(context_id, &context));
  Request* request =
      NewRequest(RequestKind::kSend, dest, tag, context_id, const_cast<void*>(buffer), bytes);
  *out = request;
  request->status.source = dest;
  request->status.tag = tag;
  request->status.count = bytes;
  request->status.message_length = bytes;
  if (context->revoked) [[unlikely]] {
    Complete(request, RFT_ERR_REVOKED);
    return Status::Ok();  // the request carries the error, as for a failed peer
  }

  auto ep = EndpointFor(dest);  // none for a ring or verbs peer
  if (!ep.ok()) {
    Complete(request, ep.status().code());
    return Status::Ok();  // the request carries the error, like any other send to a failed peer
  }
  // Large, to a peer of this node (CMA) or over verbs: only a descriptor travels; the receiver
  // reads the data (pull_rendezvous.cc, verbs_path.cc). A synchronous send goes so at any size:
  // its end (the receiver's done message, or UCX's rendezvous) comes only after the match. An
  // empty one is a same-node descriptor on every path (nothing to read; the receiver answers
  // once matched): UCX 1.13 keeps the descriptor of an empty rendezvous it fetched, one buffer
  // of its pool per message.
  const bool synchronous = mode == SendMode::kSynchronous;
  if (synchronous) [[unlikely]]
    request->synchronous = true;
  const Path path = peers_[dest].path;
  const bool large = bytes > options_.eager_limit || synchronous;
  const bool cma = large && (peers_[dest].same_node_pull || (synchronous && bytes == 0));
  const bool own_rendezvous = cma || (large && path == Path::kVerbs);
  EncodeDataHeader(*context, context_id, tag,
                   own_rendezvous ? MessageType::kRendezvousRequest : MessageType::kEager,
                   own_rendezvous ? kRendezvousDescriptorSize : bytes,
                   std::span<std::byte, kWireHeaderSize>(request->header.data(), kWireHeaderSize));
  if (path != Path::kUcx) {
    // A ring (same node) or verbs: everything to the peer goes there, in order (direct_queue.cc).
    if (cma) {
      EncodePullRequest(request);
    } else if (own_rendezvous && !EncodeVerbsRequest(request)) {
      Complete(request, RFT_ERR_OTHER);  // the registration failed: logged, nothing was sent
      return Status::Ok();
    }
    DirectSend(request);
    return Status::Ok();
  }

  if (cma) EncodePullRequest(request);
  if (SendRequestByUcx(request, *ep, cma)) {
    request->complete = true;  // sent (copied out) at once: the common small-message case
  }
  CountUcxSend(dest);
  return Status::Ok();
}

void* DataPlane::SendOwnMessage(ucp_ep_h ep, const std::byte* bytes, size_t length,
                                ucp_send_nbx_callback_t done, void* user_data) {
  UcxBusy();
  return internal::SendOwnMessage(ep, bytes, length, done, user_data);
}

bool DataPlane::SendRequestByUcx(Request* request, ucp_ep_h ep, bool cma) {
  UcxBusy();
  const size_t bytes = request->capacity;
  const void* buffer = request->buffer;
  ucp_request_param_t param;
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  // UCX's rendezvous: the receiver fetches the data once matched (StartFetch), and only then
  // does the send complete; what a synchronous send needs at any size.
  const bool rendezvous = bytes > options_.eager_limit || request->synchronous;
  param.flags = rendezvous ? UCP_AM_SEND_FLAG_RNDV : UCP_AM_SEND_FLAG_EAGER;
  param.cb.send = &OnSendDone;
  param.user_data = request;
  void* ucx_request;
  if (cma) {
    param.flags = UCP_AM_SEND_FLAG_EAGER;
    ucx_request = ucp_am_send_nbx(ep, internal::kDataAmId, nullptr, 0, request->header.data(),
                                  kWireHeaderSize + kRendezvousDescriptorSize, &param);
  } else if (bytes <= kInlinePayloadMax && !rendezvous) {
    // Small: header and payload in one AM data buffer with no AM header. UCX sends that
    // through its plain short path, cheaper than the gather of a separate header (measured in
    // the 8-byte ping-pong).
    if (bytes > 0) std::memcpy(request->header.data() + kWireHeaderSize, buffer, bytes);
    ucx_request = ucp_am_send_nbx(ep, internal::kDataAmId, nullptr, 0, request->header.data(),
                                  kWireHeaderSize + bytes, &param);
  } else {
    ucx_request = ucp_am_send_nbx(ep, internal::kDataAmId, request->header.data(), kWireHeaderSize,
                                  buffer, bytes, &param);
  }
  if (UCS_PTR_IS_ERR(ucx_request)) {
    request->awaiting_pull_done = false;
    Complete(request, internal::ErrorFromUcx(UCS_PTR_STATUS(ucx_request)));
    return false;
  }
  if (ucx_request != nullptr || request->awaiting_pull_done) {
    request->ucx_request = ucx_request;
    LinkToPeer(request, request->peer);
    return false;
  }
  return true;
}

// Inline into Irecv and Recv, as StartSendNow into SendNow and Send: the blocking calls are the
// 8-byte ping-pong's path, and a call's frame there cost as much as a check of the arguments
// (callgrind, docs/performance.md).
[[gnu::always_inline]] inline Status DataPlane::StartReceive(void* buffer, size_t capacity,
                                                             Rank source, int32_t tag,
                                                             uint32_t context_id, Request** out) {
  RFT_RETURN_IF_ERROR(CheckSourceAndTag("receive", source, tag));
  if (buffer == nullptr && capacity > 0) [[unlikely]] {
    return ColdError(RFT_ERR_ARG, [capacity] {
      return "receive of up to " + std::to_string(capacity) + " bytes into a null buffer";
    });
  }
  Context* context = nullptr;
  RFT_RETURN_IF_ERROR(UseContext(context_id, &context));
  Request* request = NewRequest(RequestKind::kReceive, source, tag, context_id, buffer, capacity);
  *out = request;
  request->posted.source = source;
  request->posted.tag = tag;
  if (context->revoked) [[unlikely]] {
    CompleteReceive(request, source, tag, RFT_ERR_REVOKED);
    return Status::Ok();
  }
  if (UnexpectedMessage* node = context->queue.MatchPosted(source, tag)) {
    DeliverUnexpected(request, static_cast<Unexpected*>(node->owner));
    return Status::Ok();
  }
  if (source != kAnySource && endpoints_->failed(source)) [[unlikely]] {
    // A message the peer sent before it died may still wait in the transport.
    DrainTransport();
    if (UnexpectedMessage* node = context->queue.MatchPosted(source, tag)) {
      DeliverUnexpected(request, static_cast<Unexpected*>(node->owner));
      return Status::Ok();
    }
    CompleteReceive(request, source, tag, RFT_ERR_PROC_FAILED);  // nothing came, none will
    return Status::Ok();
  }
  context->queue.AddPosted(&request->posted);
  if (source != kAnySource) LinkToPeer(request, source);
  return Status::Ok();
}

Status DataPlane::Irecv(void* buffer, size_t capacity, Rank source, int32_t tag,
                        uint32_t context_id, Request** out) {
  return StartReceive(buffer, capacity, source, tag, context_id, out);
}

Status DataPlane::Cancel(Request* request) {
  if (request == nullptr) return ArgError("cancel of a null request");
  if (request->complete || request->kind != RequestKind::kReceive) return Status::Ok();
  Context* context = FindContext(request->context_id);
  if (context != nullptr && context->queue.Cancel(&request->posted)) {
    request->status.cancelled = true;
    CompleteReceive(request, request->peer, request->tag, RFT_SUCCESS);
  }
  return Status::Ok();
}

Status DataPlane::SendArgumentError(Rank dest, int32_t tag, size_t bytes) const {
  if (dest >= size_) {
    return ArgError("send to rank " + std::to_string(dest) + ": expected a rank below " +
                    std::to_string(size_));
  }
  if (tag < 0) return ArgError("send with tag " + std::to_string(tag) + ": expected a tag >= 0");
  return ArgError("send of " + std::to_string(bytes) + " bytes from a null buffer");
}

Status DataPlane::SourceOrTagError(const char* operation, Rank source, int32_t tag) const {
  if (source >= size_ && source != kAnySource) {
    return ArgError(std::string(operation) + " from rank " + std::to_string(source) +
                    ": expected a rank below " + std::to_string(size_) + " or ANY_SOURCE");
  }
  if (tag < 0 && tag != kAnyTag) {
    return ArgError(std::string(operation) + " with tag " + std::to_string(tag) +
                    ": expected a tag >= 0 or ANY_TAG");
  }
  return Status::Ok();
}

const UnexpectedMessage* DataPlane::FindArrived(Rank source, int32_t tag,
                                                uint32_t context_id) const {
  const Context* context = FindContext(context_id);
  return context == nullptr ? nullptr : context->queue.Probe(source, tag);
}

Status DataPlane::Iprobe(Rank source, int32_t tag, uint32_t context_id, bool* found,
                         MessageStatus* status) {
  RFT_RETURN_IF_ERROR(CheckSourceAndTag("probe", source, tag));
  Progress();
  if (IsRevoked(context_id)) [[unlikely]] {
    return RevokedError("probe in context " + std::to_string(context_id) + ": it is revoked");
  }
  const UnexpectedMessage* node = FindArrived(source, tag, context_id);
  *found = node != nullptr;
  if (node != nullptr && status != nullptr) {
    *status = MessageStatus();
    status->source = node->source;
    status->tag = node->tag;
    status->count = status->message_length = static_cast<const Unexpected*>(node->owner)->length;
  }
  return Status::Ok();
}

// Inline into StartSendNow, the 8-byte send's path (VerbsWrite is the same out of line).
[[gnu::always_inline]] inline bool DataPlane::VerbsWriteNow(Rank peer,
                                                            std::span<const std::byte> first,
                                                            std::span<const std::byte> second) {
  // Only a message on the wire counts as written: one the channel queued would go out only from
  // a later Progress, and the done message of a receive that completed meanwhile would wait for
  // a receiver that may have blocked outside rft (a fence), holding the sender's send.
  if (verbs_->links[peer] != VerbsLink::kConnected || !verbs_->channel->ready(peer)) [[unlikely]] {
    // Not connected yet: the message waits in the direct queue until the greeting. The same
    // while the pair closes (verbs_close.cc): it then goes through UCX.
    if (verbs_->links[peer] == VerbsLink::kIdle) StartVerbsLink(peer);
    return false;
  }
  StatusOr<verbs::SendResult> sent = verbs_->channel->SendNow(peer, first, second);
  if (sent.ok()) {
    if (*sent != verbs::SendResult::kPosted) return false;
    verbs_->last_used[peer] = ++verbs_->tick;
    return true;
  }
  VerbsSendBroke(peer, sent.status());
  return false;  // waits in the direct queue until the failure completes it
}

bool DataPlane::VerbsWrite(Rank peer, std::span<const std::byte> first,
                           std::span<const std::byte> second) {
  return VerbsWriteNow(peer, first, second);
}

[[gnu::always_inline]] inline bool DataPlane::StartSendNow(const void* buffer, size_t bytes,
                                                           Rank dest, int32_t tag,
                                                           uint32_t context_id) {
  // A small message to a connected peer goes out from the stack with no request, if UCX can
  // send it at once (FORCE_IMM_CMPL: else nothing is sent, and the caller's general path queues
  // it, in order). This is the 8-byte ping-pong's path.
  const Context* context = FindContext(context_id);
  if (dest >= size_) [[unlikely]]
    return false;
  // A ring or verbs peer needs no UCX endpoint (it may have none: EndpointFor), only to be alive.
  const bool direct = peers_[dest].path != Path::kUcx;
  const ucp_ep_h ep = direct ? nullptr : endpoints_->Connected(dest);
  if (bytes > kInlinePayloadMax || bytes > options_.eager_limit || tag < 0 || context == nullptr ||
      context->revoked || (direct ? endpoints_->failed(dest) : ep == nullptr) ||
      (buffer == nullptr && bytes > 0)) [[unlikely]] {
    return false;
  }
  alignas(8) std::array<std::byte, kWireHeaderSize + kInlinePayloadMax> message;
  EncodeDataHeader(*context, context_id, tag, MessageType::kEager, bytes,
                   std::span<std::byte, kWireHeaderSize>(message.data(), kWireHeaderSize));
  if (direct) {
    // Behind anything queued for it, or not at all (Isend then queues it, in order). Header and
    // payload joined here: the verbs channel would join them again for its inline SEND (one
    // scatter/gather entry), and a ring takes one span as well as two.
    if (!peers_[dest].direct_queue.empty()) return false;
    if (bytes > 0) std::memcpy(message.data() + kWireHeaderSize, buffer, bytes);
    const std::span<const std::byte> whole(message.data(), kWireHeaderSize + bytes);
    // DirectWrite, with the verbs write inline.
    return peers_[dest].path == Path::kRing ? rings_.Write(dest, whole, {})
                                            : VerbsWriteNow(dest, whole, {});
  }
  if (bytes > 0) std::memcpy(message.data() + kWireHeaderSize, buffer, bytes);
  ucp_request_param_t param;
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS | UCP_OP_ATTR_FLAG_FORCE_IMM_CMPL;
  param.flags = UCP_AM_SEND_FLAG_EAGER;
  const ucs_status_ptr_t sent = ucp_am_send_nbx(ep, internal::kDataAmId, nullptr, 0, message.data(),
                                                kWireHeaderSize + bytes, &param);
  if (sent == nullptr) [[likely]] {
    UcxBusy();
    CountUcxSend(dest);
    return true;
  }
  // FORCE_IMM_CMPL: done now or not at all; a request would reference this stack frame.
  RFT_CHECK(UCS_PTR_IS_ERR(sent), "ucp_am_send_nbx returned a request despite FORCE_IMM_CMPL");
  return false;
}

bool DataPlane::SendNow(const void* buffer, size_t bytes, Rank dest, int32_t tag,
                        uint32_t context_id) {
  return StartSendNow(buffer, bytes, dest, tag, context_id);
}

Status DataPlane::Send(const void* buffer, size_t bytes, Rank dest, int32_t tag,
                       uint32_t context_id) {
  if (StartSendNow(buffer, bytes, dest, tag, context_id)) [[likely]]
    return Status::Ok();
  Request* request = nullptr;
  RFT_RETURN_IF_ERROR(Isend(buffer, bytes, dest, tag, context_id, &request));
  if (request->complete && request->status.error == RFT_SUCCESS) {
    requests_.Release(request);  // sent at once, the usual small message: skip the wait
    return Status::Ok();
  }
  return Wait(&request, nullptr);
}

Status DataPlane::Recv(void* buffer, size_t capacity, Rank source, int32_t tag, uint32_t context_id,
                       MessageStatus* status) {
  Request* request = nullptr;
  RFT_RETURN_IF_ERROR(StartReceive(buffer, capacity, source, tag, context_id, &request));
  return Wait(&request, status);
}

// Inline into Progress, every pass of a wait: a pass that finds nothing builds no status and
// needs no frame of its own; the completions are handled in the channel's frame, the only one
// between this pass and a message's delivery.
[[gnu::always_inline]] inline unsigned DataPlane::ProgressVerbs() {
  VerbsPath& path = *verbs_;
  const int polled = path.channel->Poll();
  int handled = 0;
  if (!path.channel->NothingToDo(polled)) [[unlikely]] {
    handled = path.channel->HandlePolled(polled);
    if (handled < 0) [[unlikely]] {
      LogBrokenVerbsChannel();
      handled = 0;
    }
  }
  // The chores are out of line too, so that this frame saves no registers for them (a pass
  // that finds nothing is what a message arriving mid-pass waits for).
  if (path.chores || ++path.calls_since_async >= VerbsPath::kAsyncEvery) [[unlikely]] {
    ProgressVerbsChores();
  }
  return static_cast<unsigned>(handled);
}

unsigned DataPlane::Progress() {
  // One pass, not UcxWorker::Progress()'s drain: a wait checks its request after every pass,
  // and the drain's extra empty pass was measurable in the 8-byte latency.
  unsigned events = 0;
  if (PollUcxNow()) [[likely]] {
    events = ucp_worker_progress(worker_->get());
    if (events != 0) {
      ucx_quiet_passes_ = 0;
    } else if (ucx_may_rest_ && ucx_quiet_passes_ < kUcxQuietPasses) {
      ++ucx_quiet_passes_;
    }
  }
  if (rings_.has_incoming()) events += ProgressRings();
  if (verbs_ != nullptr) events += ProgressVerbs();
  // After the paths took their completions (room in a ring, credits and slots of the verbs
  // channel): what waits for room goes out, in order.
  if (!direct_backlog_.empty()) [[unlikely]]
    FlushDirectQueues();
  if (reports_.HasItems()) ProcessNotices();
  return events;
}

unsigned DataPlane::ProgressRings() {
  return rings_.Progress(
      [this](std::span<const std::byte> record) {
        // The record is what a UCX active message with the header first carries: the same
        // receive path (unexpected data is copied out, since the ring's space goes back).
        ucp_am_recv_param_t param{};
        param.recv_attr = 0;
        OnActiveMessage(this, nullptr, 0, const_cast<std::byte*>(record.data()), record.size(),
                        &param);
      },
      [this](Rank writer, const Status& why) {
        // Only a writer that broke the format gets here: it is failed (fail-stop), as a peer
        // whose connection broke.
        RFT_LOG_ERROR("same-node ring from rank %u: %s; rank %u is reported failed", writer,
                      why.ToString().c_str(), writer);
        Discovered(writer);
      });
}

Status DataPlane::Idle(int timeout_ms) {
  if (options_.progress == ProgressMode::kPoll) return Status::Ok();
  if (!direct_backlog_.empty()) {
    // Sends wait for room in a peer's ring, and nothing wakes this process when the peer makes
    // room: yield the core instead of sleeping.
    sched_yield();
    return Status::Ok();
  }
  // A reply often comes within microseconds: look at the rings for a moment before paying for
  // a sleep and the writer's wake-up.
  if (rings_.has_incoming()) {
    const int64_t spin_until = MonotonicNanos() + kIdleSpinNs;
    do {
      if (rings_.AnyHasData()) return Status::Ok();
    } while (MonotonicNanos() < spin_until);
  }
  // Writers are told to wake this process only once UCX is armed (arming fails when UCX has
  // events pending: then no sleep), so that they pay for the wake-up only while it sleeps.
  // The verbs completion channel and device events wake it too.
  const int wake_fds[] = {reports_.fd(), verbs_wake_fds_[0], verbs_wake_fds_[1]};
  if (verbs_ != nullptr) timeout_ms = VerbsSleepLimit(timeout_ms);
  const Status slept = worker_->WaitForEvents(
      timeout_ms, std::span<const int>(wake_fds, verbs_ != nullptr ? 3 : 1),
      [this] { return rings_.PrepareToSleep() && (verbs_ == nullptr || VerbsReadyToSleep()); });
  rings_.Awake();
  if (verbs_ != nullptr) VerbsAwake();
  reports_.ClearWakeups();
  return slept;
}

// ---- Failure completion ----

void DataPlane::ReportPeerFailed(Rank rank) {
  reports_.Push({.kind = Notice::Kind::kPeerFailed, .id = rank, .epoch = 0});
}

void DataPlane::OnPeerFailed(Rank rank, const Status& why) {
  // Inside UCX progress: record only; Progress() completes the operations afterwards.
  RFT_LOG_DEBUG("%s", why.ToString().c_str());
  Discovered(rank);
}

void DataPlane::DrainTransport() {
  for (int pass = 0; pass < kDrainPasses; ++pass) {
    unsigned events = ucp_worker_progress(worker_->get());
    if (rings_.has_incoming()) events += ProgressRings();
    if (verbs_ != nullptr) events += ProgressVerbs();
    if (!direct_backlog_.empty()) FlushDirectQueues();
    if (events == 0) break;
  }
}

void DataPlane::ProcessNotices() {
  if (failing_peer_) return;  // FailPeer progresses UCX; the outer call drains the rest
  std::vector<Notice> notices;
  while (reports_.HasItems()) {
    reports_.Drain(&notices);
    for (const Notice& notice : notices) {
      if (notice.kind == Notice::Kind::kContextRevoked) {
        if (notice.heard && revocation_heard_) {
          revocation_heard_(notice.id, notice.epoch, notice.owner);
        }
        RevokeContext(notice.id, notice.epoch, notice.owner);
        continue;
      }
      const Rank rank = notice.id;
      if (rank >= size_) {
        // Completed when the plane grows (AddRanks).
        if (rank <= kMaxRank) failed_beyond_size_.Insert(rank);
        continue;
      }
      if (rank != rank_ && !peers_[rank].failure_completed) {
        // What the peer sent before it died may still wait in the transport: received first,
        // so it is delivered rather than failed.
        DrainTransport();
        FailPeer(rank);
      }
    }
  }
}

void DataPlane::FailPeer(Rank rank) {
  failing_peer_ = true;
  peers_[rank].failure_completed = true;
  endpoints_->MarkFailed(rank);
  DropDirectQueue(rank);  // what waited for room on its direct path: completed below
  // No RDMA of it touches this process's memory from here on; its reads end as flushed.
  if (verbs_ != nullptr) DisconnectVerbs(rank);
  // Everything that depended on `rank` completes with PROC_FAILED. An operation UCX still runs
  // (a rendezvous fetch into the receive buffer, a rendezvous send reading the send buffer)
  // goes back to the caller only once UCX called back: fragments the dead peer sent before
  // dying are still in the queues, and UCX would copy them into a buffer the caller already
  // freed. Closing the endpoint below makes UCX call back.
  std::vector<Request*> in_ucx;
  while (PeerLink* link = peers_[rank].pending.front()) {
    Request* request = link->request;
    if (request->kind == RequestKind::kReceive && request->posted.linked()) {
      FindContext(request->context_id)->queue.Cancel(&request->posted);
      CompleteReceive(request, rank, request->tag, RFT_ERR_PROC_FAILED);
    } else if (request->ucx_request != nullptr || request->verbs_reading) {
      UnlinkFromPeer(request);
      in_ucx.push_back(request);
    } else {
      Complete(request, RFT_ERR_PROC_FAILED);
    }
  }
  // Rendezvous messages it announced but nobody fetched: the data stays at the dead sender.
  // They keep their place in the queues (a later message from it must not overtake them) and
  // fail the receive that matches them; UCX's descriptors go back now, before the endpoint.
  for (auto& context : contexts_) {
    if (context == nullptr) continue;
    context->queue.ForEachUnexpectedFrom(rank, [this](UnexpectedMessage* node) {
      auto* message = static_cast<Unexpected*>(node->owner);
      if (message->storage == Unexpected::Storage::kRendezvous) {
        ucp_am_data_release(worker_->get(), message->ucx_data);
        message->storage = Unexpected::Storage::kSenderFailed;
        message->data = nullptr;
      } else if (message->storage == Unexpected::Storage::kPull) {
        message->storage = Unexpected::Storage::kSenderFailed;
      }
    });
  }
  endpoints_->CloseFailed();
  // Bounded: a UCX that never calls back must not hang the caller. Past the bound the request
  // completes anyway (UCX may then still touch its buffer) and the log says so.
  const Deadline released_by = Deadline::After(kUcxReleaseBound);
  auto released = [&in_ucx] {
    for (const Request* request : in_ucx) {
      if (request->ucx_request != nullptr || request->verbs_reading) return false;
    }
    return true;
  };
  while (!released() && !released_by.expired()) {
    worker_->Progress();
    if (verbs_ != nullptr) ProgressVerbs();
  }
  for (Request* request : in_ucx) {
    if (request->verbs_reading) {
      RFT_LOG_WARN(
          "rank %u failed: its QP did not flush an RDMA read of %zu bytes in %lld ms; "
          "completing the receive anyway",
          rank, request->status.message_length, static_cast<long long>(kUcxReleaseBound.count()));
      AbandonVerbsRead(request);
    }
    if (request->ucx_request != nullptr) {
      RFT_LOG_WARN("rank %u failed: UCX kept a %s of %zu bytes past %lld ms; completing it anyway",
                   rank, request->kind == RequestKind::kSend ? "send" : "receive",
                   request->status.message_length,
                   static_cast<long long>(kUcxReleaseBound.count()));
    }
    // UCX's own outcome stands when it called back (a fetch that had all its data succeeds).
    if (!request->complete) Complete(request, RFT_ERR_PROC_FAILED);
  }
  ++failure_epoch_;
  failing_peer_ = false;
  RFT_LOG_INFO("rank %u failed: its pending operations completed with RFT_ERR_PROC_FAILED", rank);
}

}  // namespace rft::transport
