// The data plane's set-up, the send and receive calls, and failure completion. The receive
// side of the network is in active_message.cc, the completion calls in completion.cc.
#include "transport/dataplane/data_plane.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "base/check.h"
#include "base/config.h"
#include "base/log.h"
#include "transport/dataplane/data_plane_internal.h"
#include "transport/dataplane/verbs_path.h"

namespace rft::transport {

StatusOr<DataPlane::Options> DataPlane::OptionsFromConfig(const Bootstrap& job) {
  Options options;
  auto eager = config::GetSize("RFT_EAGER_LIMIT");
  if (!eager.ok()) return eager.status();
  options.eager_limit = *eager;
  auto progress = config::GetString("RFT_PROGRESS");
  if (!progress.ok()) return progress.status();
  if (*progress == "poll") {
    options.progress = ProgressMode::kPoll;
  } else if (*progress == "block") {
    options.progress = ProgressMode::kBlock;
  } else {
    options.progress = job.oversubscribed() ? ProgressMode::kBlock : ProgressMode::kPoll;
  }
  auto rendezvous = config::GetString("RFT_RENDEZVOUS");
  if (!rendezvous.ok()) return rendezvous.status();
  options.rendezvous = *rendezvous == "cma"   ? RendezvousProtocol::kCma
                       : *rendezvous == "ucx" ? RendezvousProtocol::kUcx
                                              : RendezvousProtocol::kAuto;
  auto rings = config::GetBool("RFT_SHM_RINGS");
  if (!rings.ok()) return rings.status();
  options.shm_rings = *rings;
  auto transport = config::GetString("RFT_TRANSPORT");
  if (!transport.ok()) return transport.status();
  options.transport = *transport == "ucx"     ? NetworkTransport::kUcx
                      : *transport == "verbs" ? NetworkTransport::kVerbs
                                              : NetworkTransport::kAuto;
  auto registration_cache = config::GetSize("RFT_REGISTRATION_CACHE");
  if (!registration_cache.ok()) return registration_cache.status();
  options.registration_cache = *registration_cache;
  auto read_size = config::GetSize("RFT_VERBS_READ_SIZE");
  if (!read_size.ok()) return read_size.status();
  options.verbs_read_size = *read_size;
  auto verbs_peers = config::GetInt("RFT_VERBS_PEERS");
  if (!verbs_peers.ok()) return verbs_peers.status();
  options.verbs_peers = static_cast<uint32_t>(*verbs_peers);
  auto close_idle = config::GetBool("RFT_VERBS_CLOSE_IDLE");
  if (!close_idle.ok()) return close_idle.status();
  options.verbs_close_idle = *close_idle;
  auto return_after = config::GetInt("RFT_VERBS_RETURN_AFTER");
  if (!return_after.ok()) return return_after.status();
  options.verbs_return_after = static_cast<uint32_t>(*return_after);
  auto place_wait = config::GetDuration("RFT_VERBS_PLACE_WAIT");
  if (!place_wait.ok()) return place_wait.status();
  options.verbs_place_wait = *place_wait;
  return options;
}

DataPlane::DataPlane(Bootstrap* job, const Options& options)
    : job_(job),
      options_(options),
      rank_(job->rank()),
      size_(job->size()),
      job_token_(job->job_token()),
      buffers_(std::max<size_t>(options.eager_limit, 64)) {}

StatusOr<std::unique_ptr<DataPlane>> DataPlane::Create(Bootstrap* job, const Options& options) {
  if (options.max_contexts == 0) {
    return ArgError("data plane: max_contexts 0: expected at least 1 context");
  }
  std::unique_ptr<DataPlane> plane(new DataPlane(job, options));
  RFT_RETURN_IF_ERROR(plane->Start());
  return plane;
}

Status DataPlane::Start() {
  RFT_RETURN_IF_ERROR(reports_.Open());
  peer_pending_ = std::make_unique<IntrusiveList<PeerLink>[]>(size_);
  direct_queue_ = std::make_unique<IntrusiveList<RingLink>[]>(size_);
  ring_out_.resize(size_);
  path_.assign(size_, Path::kUcx);
  failure_completed_.assign(size_, false);
  transport_failed_.assign(size_, false);

  auto context = ucx::UcxContext::Create();
  if (!context.ok()) return context.status();
  ucx_context_ = std::move(*context);
  auto worker = ucx::UcxWorker::Create(*ucx_context_);
  if (!worker.ok()) return worker.status();
  worker_ = std::move(*worker);
  RFT_RETURN_IF_ERROR(CreateTruncatingDatatype());
  RFT_RETURN_IF_ERROR(worker_->SetActiveMessageHandler(internal::kDataAmId, &OnActiveMessage, this,
                                                       UCP_AM_FLAG_WHOLE_MSG));
  RFT_RETURN_IF_ERROR(OpenVerbs());
  return ExchangeAndConnect();
}

DataPlane::~DataPlane() {
  if (endpoints_ != nullptr) {
    ProcessNotices();
    // Operations still running reference requests and user buffers: cancel them and let UCX
    // call back before the endpoints go.
    for (Rank r = 0; r < size_; ++r) {
      for (PeerLink* link = peer_pending_[r].front(); link != nullptr;
           link = peer_pending_[r].next(link)) {
        if (link->request->ucx_request != nullptr) {
          ucp_request_cancel(worker_->get(), link->request->ucx_request);
        }
      }
    }
    worker_->Progress();
    closing_endpoints_ = true;
    endpoints_.reset();  // progresses UCX until the closes finish (bounded)
  }
  // Unexpected messages never received: give UCX back its buffers, ours to the pools.
  for (auto& context : contexts_) {
    if (context == nullptr) continue;
    context->queue.Purge(
        [this](UnexpectedMessage* node) {
          ReleaseUnexpected(static_cast<Unexpected*>(node->owner));
        },
        [](PostedReceive*) {});
  }
  // The worker goes first: destroying it completes what UCX still held, and those callbacks
  // hand their requests back to the pools (abandoning them before made the pools' counts
  // underflow and their check abort).
  worker_.reset();
  CloseVerbs();
  // Done messages UCX never sent (their peer failed and the close cancelled nothing).
  if (control_sends_.in_use() > 0) control_sends_.AbandonInUse();
  if (requests_.in_use() > 0) {
    RFT_LOG_WARN("data plane closed with %zu requests never completed by the caller",
                 requests_.in_use());
    requests_.AbandonInUse();
  }
  if (has_truncating_datatype_) ucp_dt_destroy(truncating_datatype_);
  CloseRings();
  for (int pidfd : pidfds_) {
    if (pidfd >= 0) close(pidfd);
  }
  ucx_context_.reset();
}

Status DataPlane::ExchangeAndConnect() {
  // What each rank publishes: its RecordPrefix, then its UCX worker address.
  uint32_t flags = 0;
  if (options_.rendezvous != RendezvousProtocol::kUcx) {
    const StatusOr<bool> probe = ProbeCma();
    if (!probe.ok() && options_.rendezvous == RendezvousProtocol::kCma) {
      return ArgError("RFT_RENDEZVOUS=cma: " + probe.status().message() +
                      "; expected auto or ucx here");
    }
    if (!probe.ok()) {
      RFT_LOG_INFO("same-node rendezvous off: %s", probe.status().message().c_str());
    } else {
      flags = kCmaUsable | (*probe ? kCmaParentOnly : 0);
    }
  }
  if ((flags & kCmaUsable) != 0) RFT_RETURN_IF_ERROR(CreateRingSegment());
  if (options_.progress == ProgressMode::kBlock) flags |= kBlocks;
  if (verbs_ != nullptr) flags |= kVerbs;
  own_record_ = {.pid = static_cast<uint32_t>(getpid()),
                 .flags = flags,
                 .parent = static_cast<uint32_t>(getppid()),
                 .ring_fd = ring_fd_,
                 .ring_capacity = static_cast<uint32_t>(ring_capacity_),
                 .wake_fd = reports_.fd()};
  // The record: the prefix, the eager channel's configuration when it offers verbs, then the UCX
  // worker address.
  const std::span<const std::byte> address = worker_->address();
  const std::vector<std::byte> verbs_part = VerbsRecordPart();
  std::vector<std::byte> mine(kRecordPrefix + verbs_part.size() + address.size());
  EncodeRecordPrefix(own_record_, mine.data());
  if (!verbs_part.empty()) {
    std::memcpy(mine.data() + kRecordPrefix, verbs_part.data(), verbs_part.size());
  }
  std::memcpy(mine.data() + kRecordPrefix + verbs_part.size(), address.data(), address.size());
  auto published = job_->ExchangeLive("rft.dataplane", mine);
  if (!published.ok()) return published.status();

  std::vector<std::vector<std::byte>> addresses(size_);
  std::vector<RecordPrefix> records(size_);
  std::vector<std::span<const std::byte>> verbs_parts(size_);
  cma_peers_.assign(size_, 0);
  pids_.assign(size_, 0);
  pidfds_.assign(size_, -1);
  // A replacement reads its parents' records too, the dead ones' included: those it was told
  // of are failed like the ones that ended during start-up.
  for (Rank r : options_.failed_at_start) {
    if (r < size_ && r != rank_) published->missing.Insert(r);
  }
  const RankSet same_node = job_->node_peers();  // a replacement's parents among them
  for (Rank r = 0; r < size_; ++r) {
    if (published->missing.Contains(r)) continue;  // failed during start-up: reported below
    std::vector<std::byte>& theirs = published->values[r];
    if (theirs.size() <= kRecordPrefix) {
      return OtherError("rank " + std::to_string(r) + " published " +
                        std::to_string(theirs.size()) + " bytes of data-plane address: expected " +
                        "more than " + std::to_string(kRecordPrefix));
    }
    records[r] = DecodeRecordPrefix(theirs.data());
    pids_[r] = static_cast<pid_t>(records[r].pid);
    DecideCma(r, records[r], same_node.Contains(r));
    size_t part = 0;
    if ((records[r].flags & kVerbs) != 0) {
      StatusOr<size_t> bytes = VerbsPartOf(r, theirs);
      if (!bytes.ok()) return bytes.status();
      part = *bytes;
    }
    verbs_parts[r] = std::span<const std::byte>(theirs).subspan(kRecordPrefix, part);
    addresses[r].assign(theirs.begin() + static_cast<std::ptrdiff_t>(kRecordPrefix + part),
                        theirs.end());
  }
  ucx::EndpointTable::Options table_options;
  table_options.connect_all_max = options_.connect_all_max;
  table_options.failed = published->missing;
  table_options.owner = "data plane";
  // When verbs (or a same-node ring) reaches every live peer, UCX carries only what neither
  // takes: its endpoints are made on first use, not all at start-up, and are not flushed at the
  // end (a flush that took its whole 2 s bound in the soft-RoCE guest). Without verbs nothing
  // changes.
  bool all_without_ucx = verbs_ != nullptr;
  for (Rank r = 0; r < size_ && all_without_ucx; ++r) {
    if (r == rank_ || published->missing.Contains(r)) continue;
    all_without_ucx = cma_peers_[r] || (records[r].flags & kVerbs) != 0;
  }
  if (all_without_ucx) table_options.connect_all_max = 0;
  auto table =
      ucx::EndpointTable::Create(worker_.get(), rank_, std::move(addresses), this, table_options);
  if (!table.ok()) return table.status();
  endpoints_ = std::move(*table);
  // Rings go one way each: this process writes into a peer's ring when it can map it, whatever
  // the peer does the other way (order is kept per direction).
  for (Rank r = 0; r < size_; ++r) {
    if (r == rank_ || !cma_peers_[r] || published->missing.Contains(r)) continue;
    const RecordPrefix& offer = records[r];
    AttachRingTo(r, offer.ring_fd, offer.ring_capacity, offer.wake_fd,
                 (offer.flags & kBlocks) != 0);
  }
  // Verbs where both ends offer it, after the rings (a ring wins on one node).
  RFT_RETURN_IF_ERROR(ConnectVerbs(records, verbs_parts, published->missing));
  // Both: this plane must fail them whether or not the registry already knew (then it would
  // not dispatch them again, and this plane may not be listening yet).
  for (Rank r : published->missing) {
    ReportPeerFailed(r);
    if (options_.report_failure) options_.report_failure(r);
  }
  return Status::Ok();
}

void DataPlane::EncodeRecordPrefix(const RecordPrefix& prefix, std::byte* out) {
  const uint32_t words[] = {prefix.pid,           prefix.flags,
                            prefix.parent,        static_cast<uint32_t>(prefix.ring_fd),
                            prefix.ring_capacity, static_cast<uint32_t>(prefix.wake_fd)};
  static_assert(sizeof(words) == kRecordPrefix);
  std::memcpy(out, words, kRecordPrefix);
}

DataPlane::RecordPrefix DataPlane::DecodeRecordPrefix(const std::byte* in) {
  uint32_t words[kRecordPrefix / 4];
  std::memcpy(words, in, kRecordPrefix);
  return {.pid = words[0],
          .flags = words[1],
          .parent = words[2],
          .ring_fd = static_cast<int32_t>(words[3]),
          .ring_capacity = words[4],
          .wake_fd = static_cast<int32_t>(words[5])};
}

bool DataPlane::DecideCma(Rank peer, const RecordPrefix& record, bool same_node) {
  // Both ends must be able to use it and share a node (the launcher says which ranks do);
  // where Yama lets only a parent's descendants read, both must have the same parent.
  const uint32_t both = own_record_.flags & record.flags;
  const bool parent_only = ((own_record_.flags | record.flags) & kCmaParentOnly) != 0;
  cma_peers_[peer] = (both & kCmaUsable) != 0 && same_node &&
                     (!parent_only || record.parent == own_record_.parent);
  if (!cma_peers_[peer]) return false;
  pidfds_[peer] = static_cast<int>(syscall(SYS_pidfd_open, static_cast<pid_t>(record.pid), 0));
  if (pidfds_[peer] < 0) {
    RFT_LOG_INFO("no same-node rendezvous with rank %u: pidfd_open(%u): %s", peer, record.pid,
                 std::strerror(errno));
    cma_peers_[peer] = 0;
  }
  return cma_peers_[peer] != 0;
}

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
                        uint32_t context_id, Request** out) {
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
  // reads the data (cma_rendezvous.cc, verbs_path.cc).
  const Path path = path_[dest];
  const bool large = bytes > options_.eager_limit;
  const bool cma = large && cma_peers_[dest];
  const bool own_rendezvous = cma || (large && path == Path::kVerbs);
  EncodeDataHeader(*context, context_id, tag,
                   own_rendezvous ? MessageType::kRendezvousRequest : MessageType::kEager,
                   own_rendezvous ? kRendezvousDescriptorSize : bytes,
                   std::span<std::byte, kWireHeaderSize>(request->header.data(), kWireHeaderSize));
  if (path != Path::kUcx) {
    // A ring (same node) or verbs: everything to the peer goes there, in order (shm_path.cc).
    if (cma) {
      EncodeCmaRequest(request);
    } else if (own_rendezvous && !EncodeVerbsRequest(request)) {
      Complete(request, RFT_ERR_OTHER);  // the registration failed: logged, nothing was sent
      return Status::Ok();
    }
    DirectSend(request);
    return Status::Ok();
  }

  if (cma) EncodeCmaRequest(request);
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
  param.flags = bytes <= options_.eager_limit ? UCP_AM_SEND_FLAG_EAGER : UCP_AM_SEND_FLAG_RNDV;
  param.cb.send = &OnSendDone;
  param.user_data = request;
  void* ucx_request;
  if (cma) {
    param.flags = UCP_AM_SEND_FLAG_EAGER;
    ucx_request = ucp_am_send_nbx(ep, internal::kDataAmId, nullptr, 0, request->header.data(),
                                  kWireHeaderSize + kRendezvousDescriptorSize, &param);
  } else if (bytes <= kInlinePayloadMax && bytes <= options_.eager_limit) {
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
    request->awaiting_cma_done = false;
    Complete(request, internal::ErrorFromUcx(UCS_PTR_STATUS(ucx_request)));
    return false;
  }
  if (ucx_request != nullptr || request->awaiting_cma_done) {
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
  const bool direct = path_[dest] != Path::kUcx;
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
    if (!direct_queue_[dest].empty()) return false;
    if (bytes > 0) std::memcpy(message.data() + kWireHeaderSize, buffer, bytes);
    return DirectWrite(dest, std::span<const std::byte>(message.data(), kWireHeaderSize + bytes),
                       {});
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
  if (!rings_in_.empty()) events += ProgressRings();
  if (verbs_ != nullptr) events += ProgressVerbs();
  // After the paths took their completions (room in a ring, credits and slots of the verbs
  // channel): what waits for room goes out, in order.
  if (!direct_backlog_.empty()) [[unlikely]]
    FlushDirectQueues();
  if (reports_.HasItems()) ProcessNotices();
  return events;
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
  if (!rings_in_.empty()) {
    const int64_t spin_until = MonotonicNanos() + kIdleSpinNs;
    do {
      if (AnyRingHasData()) return Status::Ok();
    } while (MonotonicNanos() < spin_until);
  }
  // Writers are told to wake this process only once UCX is armed (arming fails when UCX has
  // events pending: then no sleep), so that they pay for the wake-up only while it sleeps.
  // The verbs completion channel and device events wake it too.
  const int wake_fds[] = {reports_.fd(), verbs_wake_fds_[0], verbs_wake_fds_[1]};
  if (verbs_ != nullptr) timeout_ms = VerbsSleepLimit(timeout_ms);
  const Status slept = worker_->WaitForEvents(
      timeout_ms, std::span<const int>(wake_fds, verbs_ != nullptr ? 3 : 1),
      [this] { return PrepareToSleep() && (verbs_ == nullptr || VerbsReadyToSleep()); });
  Awake();
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
    if (!rings_in_.empty()) events += ProgressRings();
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
        RevokeContext(notice.id, notice.epoch, notice.owner);
        continue;
      }
      const Rank rank = notice.id;
      if (rank >= size_) {
        // Completed when the plane grows (AddRanks).
        if (rank <= kMaxRank) failed_beyond_size_.Insert(rank);
        continue;
      }
      if (rank != rank_ && !failure_completed_[rank]) {
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
  failure_completed_[rank] = true;
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
  while (PeerLink* link = peer_pending_[rank].front()) {
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
      } else if (message->storage == Unexpected::Storage::kCma) {
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
