// The data plane's verbs backend (docs/verbs.md): messages to peers of other nodes through
// libibverbs instead of UCX.
//
// Every process that finds a usable port (RFT_NET_DEVICE, else the nearest) opens an eager
// channel (transport/verbs/eager_channel.h: RC QPs, a shared receive queue, credits) and offers
// it in its data-plane record. Two processes that both offer verbs send each other every
// message through it, their QPs made and connected when one of them first sends (the addresses
// go over UCX: StartVerbsLink), as the same-node rings do: the direct queue keeps their order when
// the channel is full, and a message arrives through the plane's one receive path
// (OnActiveMessage). A message above the eager limit travels as a rendezvous request that the
// receiver answers with RDMA READs (verbs_read.cc).
//
// Failures: an error completion or a fatal asynchronous event fails the peer through the
// registry (Discovered), as UCX's error callback does. When the plane fails a peer, its QP is
// moved to the error state first, so that no RDMA touches this process's memory for it any
// more; a read still running ends as flushed, and only then is its receive completed.
#include "transport/dataplane/verbs_path.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <string>

#include "base/byte_order.h"
#include "base/check.h"
#include "base/log.h"
#include "transport/dataplane/data_plane.h"
#include "transport/dataplane/data_plane_internal.h"
#include "transport/verbs/device.h"
#include "transport/verbs/qp_address.h"

namespace rft::transport {
Status DataPlane::OpenVerbs() {
  if (options_.transport == NetworkTransport::kUcx) return Status::Ok();
  const bool required = options_.transport == NetworkTransport::kVerbs;
  // Not offered: said at info level for auto, an error when verbs was asked for.
  auto unavailable = [&](const std::string& why) {
    if (required) return ArgError("RFT_TRANSPORT=verbs: " + why + "; expected auto or ucx here");
    RFT_LOG_INFO("verbs backend off: %s", why.c_str());
    return Status::Ok();
  };
  if (size_ < 2) return Status::Ok();
  std::string why_not;
  StatusOr<std::optional<verbs::Endpoint>> selected = verbs::SelectConfiguredPort(&why_not);
  if (!selected.ok()) return selected.status();
  if (!selected->has_value()) return unavailable(why_not);
  const verbs::Endpoint& endpoint = **selected;
  StatusOr<std::unique_ptr<verbs::VerbsContext>> context =
      verbs::VerbsContext::Open(endpoint, 4096);
  if (!context.ok()) return unavailable(context.status().message());

  auto path = std::make_unique<VerbsPath>();
  path->context = std::move(*context);
  verbs::EagerConfig config;
  // A slot holds a header and up to the eager limit: every rank has the same limit
  // (RFT_EAGER_LIMIT), so every rank has the same slots, which Connect checks.
  config.slot_size = (options_.eager_limit + kWireHeaderSize + 63) / 64 * 64;
  config.qps_on_demand = true;  // only for the peers this process talks to (StartVerbsLink)
  config.max_places = options_.verbs_peers;  // beyond them, pairs stay on UCX (RefuseVerbsLink)
  auto on_failure = [this](Rank peer, std::string_view status) {
    RFT_LOG_INFO("verbs: rank %u: %.*s", peer, static_cast<int>(status.size()), status.data());
    Discovered(peer);
  };
  StatusOr<std::unique_ptr<verbs::EagerChannel>> channel =
      verbs::EagerChannel::Create(*path->context, rank_, size_, config, &DataPlane::OnVerbsMessage,
                                  this, std::move(on_failure));
  if (!channel.ok()) return unavailable(channel.status().message());
  path->channel = std::move(*channel);
  path->channel->set_read_callback([this](uint32_t token, bool ok) { OnVerbsRead(token, ok); });
  path->channel->set_closed_callback([this](Rank peer) { OnVerbsPairClosed(peer); });
  path->channel_size = size_;
  path->read_size =
      std::min<uint64_t>(options_.verbs_read_size, path->context->port_attr().max_msg_sz);
  OpenRegistrationCache(*path);
  verbs_wake_fds_[0] = path->channel->completion_fd();
  verbs_wake_fds_[1] = path->context->async_fd();
  RFT_LOG_INFO("verbs backend: %s port %d (%s), places for %u peers at once (RFT_VERBS_PEERS)",
               endpoint.device.c_str(), endpoint.port, endpoint.link_layer.c_str(),
               path->channel->places());
  verbs_ = std::move(path);
  return Status::Ok();
}

uint32_t DataPlane::verbs_qp_count() const {
  return verbs_ == nullptr ? 0 : verbs_->channel->qp_count();
}

std::optional<VerbsRecordPart> DataPlane::OwnVerbsPart() const {
  if (verbs_ == nullptr) return std::nullopt;
  return VerbsRecordPart{.credits = verbs_->channel->credits(),
                         .max_payload = static_cast<uint32_t>(verbs_->channel->max_payload())};
}

Status DataPlane::CheckVerbsPart(Rank rank, const VerbsRecordPart& part) const {
  Status matches = verbs_->channel->CheckPeerConfig(part.credits, part.max_payload,
                                                    "rank " + std::to_string(rank));
  if (matches.ok()) return matches;
  return ArgError(matches.message() + " (RFT_EAGER_LIMIT sets the slot size)");
}

Status DataPlane::ConnectVerbs(const std::vector<DataPlaneRecord>& records,
                               const RankSet& missing) {
  if (size_ < 2) return Status::Ok();
  RankSet offering;  // the ranks that send through verbs, this one included
  for (Rank r = 0; r < size_; ++r) {
    if (missing.Contains(r)) continue;
    const bool offers = r == rank_ ? verbs_ != nullptr : records[r].verbs.has_value();
    if (offers) {
      offering.Insert(r);
    } else if (options_.transport == NetworkTransport::kVerbs) {
      return ArgError("RFT_TRANSPORT=verbs: rank " + std::to_string(r) +
                      " has no usable verbs port (its log says why); expected one on every rank, "
                      "or RFT_TRANSPORT=auto");
    }
  }
  if (verbs_ == nullptr) return Status::Ok();
  verbs_->links.assign(size_, VerbsLink::kIdle);
  verbs_->last_used.assign(size_, 0);
  verbs_->closing_here.assign(size_, false);
  verbs_->rounds.assign(size_, 0);
  verbs_->ucx_sends.assign(size_, 0);
  // A pair connects when one of its ranks first sends (StartVerbsLink), and the greeting keeps
  // either end from sending on its QP before the other is ready. A replacement's parents are
  // connected the same way; they took it in before the merge let anyone send (JoinVerbs).
  const Rank first_sibling = job_->own_block().first;
  RankSet fence;
  for (Rank r : offering) {
    if (r == rank_) continue;
    RFT_RETURN_IF_ERROR(CheckVerbsPart(r, *records[r].verbs));
    if (peers_[r].path == Path::kUcx) SetPath(r, Path::kVerbs);  // a ring wins on one node
    if (r >= first_sibling) fence.Insert(r);
  }
  UpdateUcxRest();  // the verbs path is up, even where no path changed (rings only)
  if (fence.empty()) return Status::Ok();
  fence.Insert(rank_);
  // An address or a request for one that came before this plane knew the sender offers verbs
  // would be dropped, and the sender would wait for ever: no rank sends before every one of
  // them got here.
  return job_->Fence(false, fence);
}

void DataPlane::JoinVerbs(uint32_t old_size, const std::vector<DataPlaneRecord>& records,
                          const RankSet& unreachable) {
  // Without verbs here, this record offered none: the replacements talk to this rank by UCX.
  if (verbs_ == nullptr) return;
  verbs_->links.resize(size_, VerbsLink::kIdle);
  verbs_->last_used.resize(size_, 0);
  verbs_->closing_here.resize(size_, false);
  verbs_->rounds.resize(size_, 0);
  verbs_->ucx_sends.resize(size_, 0);
  RankSet joining;
  for (Rank r = old_size; r < size_; ++r) {
    if (!unreachable.Contains(r) && records[r - old_size].verbs) joining.Insert(r);
  }
  if (joining.empty()) return;
  if (Status grown = verbs_->channel->Grow(size_); !grown.ok()) {
    // They will send through verbs: fail-stop, as for a broken path.
    RFT_LOG_ERROR("verbs: no room for ranks %s that joined: %s; they are reported failed",
                  joining.ToString().c_str(), grown.ToString().c_str());
    for (Rank r : joining) Discovered(r);
    return;
  }
  verbs_->channel_size = size_;
  for (Rank r : joining) {
    if (Status matches = CheckVerbsPart(r, *records[r - old_size].verbs); !matches.ok()) {
      RFT_LOG_ERROR("verbs: rank %u, which joined: %s; it is reported failed", r,
                    matches.ToString().c_str());
      Discovered(r);
      continue;
    }
    SetPath(r, Path::kVerbs);
  }
  RFT_LOG_INFO("verbs: ranks %s joined; their QPs are made when a message first needs them",
               joining.ToString().c_str());
}

void DataPlane::FailVerbsLink(Rank peer, const Status& why) {
  RFT_LOG_ERROR("verbs: rank %u: %s; it is reported failed", peer, why.ToString().c_str());
  Discovered(peer);
}

void DataPlane::StartVerbsLink(Rank peer) {
  if (rank_ < peer) return OfferVerbsAddress(peer);
  if (!verbs_->channel->has_place_for(peer)) {
    if (WaitForPlace(peer, PlaceWait::kAsk, nullptr)) return;
    return RefuseVerbsLink(
        peer, ArgError("no place left in the receive queue: all " +
                       std::to_string(verbs_->channel->places()) + " are held by live peers"));
  }
  verbs_->links[peer] = VerbsLink::kAsked;
  SendVerbsLinkMessage(peer, MessageType::kVerbsAsk);
}

void DataPlane::OfferVerbsAddress(Rank peer) {
  if (!verbs_->channel->has_place_for(peer) && WaitForPlace(peer, PlaceWait::kOffer, nullptr)) {
    return;
  }
  verbs_->links[peer] = VerbsLink::kOffered;
  if (Status opened = verbs_->channel->Open(peer); !opened.ok()) {
    if (opened.code() != RFT_ERR_PROC_FAILED) RefuseVerbsLink(peer, opened);
    return;
  }
  SendVerbsLinkMessage(peer, MessageType::kVerbsAddress);
}

void DataPlane::RefuseVerbsLink(Rank peer, const Status& why) {
  RFT_LOG_INFO("verbs: no QP for rank %u (%s): the pair talks through UCX", peer,
               why.message().c_str());
  if (StayOnUcx(peer)) SendVerbsLinkMessage(peer, MessageType::kVerbsRefuse);
}

bool DataPlane::StayOnUcx(Rank peer) {
  // Never connected: nothing was posted on it, and the peer will not connect to it.
  if (Status withdrawn = verbs_->channel->Withdraw(peer); !withdrawn.ok()) {
    FailVerbsLink(peer, withdrawn);
    return false;
  }
  verbs_->links[peer] = VerbsLink::kRefused;
  ForgetVerbsWaiter(peer);
  // Not now: this may run inside a send to `peer`, which queues its message after returning.
  verbs_->moving.push_back(peer);
  verbs_->chores = true;
  return true;
}

void DataPlane::HandleVerbsRefuse(const WireHeader& header, std::span<const std::byte> payload) {
  const Rank source = header.source;
  if (!payload.empty() || verbs_ == nullptr || source >= verbs_->links.size()) {
    return DropVerbsLinkMessage(header, "a refusal with a payload, or from no verbs peer");
  }
  // Both ends refused at once, or the peer's new attempt found no place: nothing changes.
  if (!TakesVerbsLinkRound(header, payload)) return;
  // A refusal comes instead of an address (or of the answer to one): never once connected.
  if (!TakesVerbsLinkMessage(source) || verbs_->links[source] == VerbsLink::kConnected) {
    return DropVerbsLinkMessage(header, "a refusal of a pair not being connected here");
  }
  RFT_LOG_INFO("verbs: rank %u has no QP for this rank: the pair talks through UCX", source);
  StayOnUcx(source);
}

void DataPlane::MoveToUcx(Rank peer) {
  SetPath(peer, Path::kUcx);
  verbs_->ucx_sends[peer] = 0;  // what moves is not counted towards coming back
  std::erase(direct_backlog_, peer);
  StatusOr<ucp_ep_h> ep = endpoints_->Get(peer);
  IntrusiveList<RingLink>& queue = peers_[peer].direct_queue;
  while (RingLink* link = queue.front()) {
    queue.erase(link);
    if (link->control != nullptr) {
      auto* send = static_cast<ControlSend*>(link->control);
      if (ep.ok()) {
        SendControlByUcx(*ep, send, send->length);
      } else {
        FinishControlSend(send);  // the peer failed: its failure ends what waits for it
      }
      continue;
    }
    Request* request = link->request;
    UnlinkFromPeer(request);  // SendRequestByUcx links it again while UCX holds it
    // An empty synchronous send's descriptor (nothing to read, no registration) goes as it is.
    const bool empty_descriptor = request->awaiting_pull_done && request->verbs_mr == nullptr;
    if (request->awaiting_pull_done && !empty_descriptor) {
      // Queued as a descriptor for a verbs READ: the bytes go through UCX's rendezvous instead.
      ReleaseVerbsRegistration(request);
      request->awaiting_pull_done = false;
      WireHeader header;
      const std::span<std::byte, kWireHeaderSize> encoded(request->header.data(), kWireHeaderSize);
      const DecodeError decoded =
          DecodeHeader(encoded, kRendezvousDescriptorSize, job_token_, size_, &header);
      RFT_CHECK(decoded == DecodeError::kNone, "a queued request's own header decodes");
      header.type = MessageType::kEager;
      header.length = request->capacity;
      EncodeHeader(header, encoded);
    }
    if (!ep.ok()) {
      Complete(request, ep.status().code());
    } else if (SendRequestByUcx(request, *ep, /*cma=*/empty_descriptor)) {
      Complete(request, RFT_SUCCESS);
    }
  }
}

namespace {

// A message of the on-demand connection on its way through UCX (once or twice per pair), kept
// until sent.
struct VerbsLinkSend {
  std::array<std::byte, kWireHeaderSize + verbs::kSingleQpAddressSize> bytes;
};

void OnVerbsLinkSent(void* ucx_request, ucs_status_t, void* user_data) {
  delete static_cast<VerbsLinkSend*>(user_data);
  ucp_request_free(ucx_request);
}

}  // namespace

void DataPlane::SendVerbsLinkMessage(Rank peer, MessageType type) {
  StatusOr<ucp_ep_h> ep = endpoints_->Get(peer);
  if (!ep.ok()) return;  // failed: nothing waits for it
  std::vector<std::byte> table;
  if (type == MessageType::kVerbsAddress) {
    table = verbs::EncodeSingleQpAddress(verbs_->channel->address(peer));
    RFT_CHECK(table.size() == verbs::kSingleQpAddressSize,
              "a QP address table of one entry has a fixed size");
  }
  auto* send = new VerbsLinkSend;
  WireHeader header;
  header.type = type;
  header.source = rank_;
  header.epoch = verbs_->rounds[peer];  // the pair's round (verbs_return.cc)
  header.length = table.size();
  header.job_token = job_token_;
  EncodeHeader(header, std::span<std::byte, kWireHeaderSize>(send->bytes.data(), kWireHeaderSize));
  if (!table.empty()) std::memcpy(send->bytes.data() + kWireHeaderSize, table.data(), table.size());
  void* request = SendOwnMessage(*ep, send->bytes.data(), kWireHeaderSize + table.size(),
                                 &OnVerbsLinkSent, send);
  // Sent at once, or the endpoint failed (then the peer's failure ends what waits for it).
  if (!UCS_PTR_IS_PTR(request) || request == nullptr) delete send;
}

// Whether a link message from `source` can be taken: this process sends to it through verbs,
// and it has not failed.
bool DataPlane::TakesVerbsLinkMessage(Rank source) const {
  return verbs_ != nullptr && source < verbs_->channel_size && source != rank_ &&
         peers_[source].path == Path::kVerbs && !VerbsPeerFailed(source);
}

namespace {

const char* VerbsLinkName(VerbsLink link) {
  switch (link) {
    case VerbsLink::kIdle:
      return "idle";
    case VerbsLink::kAsked:
      return "asked";
    case VerbsLink::kOffered:
      return "offered";
    case VerbsLink::kConnected:
      return "connected";
    case VerbsLink::kRefused:
      return "refused";
    case VerbsLink::kWaitingPlace:
      return "waiting for a place";
    case VerbsLink::kCloseAsked:
      return "close asked";
    case VerbsLink::kCloseAnswered:
      return "close answered";
    case VerbsLink::kClosingAsker:
      return "closing (asker)";
    case VerbsLink::kClosingAnswerer:
      return "closing (answerer)";
    case VerbsLink::kClosed:
      return "closed";
  }
  return "unknown";
}

}  // namespace

void DataPlane::DropVerbsLinkMessage(const WireHeader& header, const char* why) {
  drops_.Record(DecodeError::kBadPayload);
  const Rank source = header.source;
  if (verbs_ == nullptr || source >= verbs_->links.size()) {
    RFT_LOG_WARN("verbs: dropped a link message (type %u) from rank %u: %s",
                 static_cast<unsigned>(header.type), source, why);
    return;
  }
  if (VerbsPeerFailed(source)) {
    // What a dead peer sent before it died may still arrive: expected, and no news.
    RFT_LOG_DEBUG("verbs: dropped a link message (type %u) from rank %u, which failed",
                  static_cast<unsigned>(header.type), source);
    return;
  }
  static constexpr const char* kPathNames[] = {"ucx", "ring", "verbs"};
  RFT_LOG_WARN(
      "verbs: dropped a link message (type %u, round %u) from rank %u: %s (here: round %u, "
      "pair %s, path %s)",
      static_cast<unsigned>(header.type), header.epoch, source, why, verbs_->rounds[source],
      VerbsLinkName(verbs_->links[source]), kPathNames[static_cast<size_t>(peers_[source].path)]);
}

bool DataPlane::VerbsPeerFailed(Rank peer) const {
  return verbs_->channel->failed(peer) || (endpoints_ != nullptr && endpoints_->failed(peer));
}

bool DataPlane::VerbsLinkIdle(Rank peer) const {
  return peers_[peer].path == Path::kVerbs && (verbs_->links[peer] == VerbsLink::kIdle ||
                                               verbs_->links[peer] == VerbsLink::kWaitingPlace);
}

void DataPlane::HandleVerbsAsk(const WireHeader& header, std::span<const std::byte> payload) {
  const Rank source = header.source;
  if (!payload.empty()) return DropVerbsLinkMessage(header, "a request with a payload");
  // One that crossed this rank's refusal is ignored; one that brings a moved pair back takes it.
  if (!TakesVerbsLinkRound(header, payload)) return;
  // Only a higher rank asks, once, and only before this rank offered its address itself (then
  // the offer answers it).
  if (!TakesVerbsLinkMessage(source) || source < rank_) {
    return DropVerbsLinkMessage(header, "a request from a lower rank, or for a pair not on verbs");
  }
  if (verbs_->links[source] == VerbsLink::kIdle) OfferVerbsAddress(source);
}

void DataPlane::HandleVerbsAddress(const WireHeader& header, std::span<const std::byte> payload) {
  const Rank source = header.source;
  // An offer that crossed this rank's refusal is ignored; one that brings a moved pair back
  // takes it.
  if (!TakesVerbsLinkRound(header, payload)) return;
  if (!TakesVerbsLinkMessage(source) || verbs_->channel->opened(source) != (source > rank_)) {
    // A lower rank's offer comes before this rank made its QP; a higher rank's answer after.
    return DropVerbsLinkMessage(header, "an address out of turn");
  }
  StatusOr<verbs::QpAddress> address = verbs::DecodeSingleQpAddress(payload);
  if (!address.ok()) return DropVerbsLinkMessage(header, "an address that does not decode");
  if (source > rank_) {
    // The answer to this rank's offer: its QP is connected to this one's and ready.
    if (verbs_->links[source] != VerbsLink::kOffered) {
      return DropVerbsLinkMessage(header, "an answer to no offer");
    }
    verbs_->links[source] = VerbsLink::kConnected;
    Status connected =
        verbs_->channel->Connect(source, *address, verbs::EagerChannel::Handshake::kGreet);
    if (!connected.ok()) return FailVerbsLink(source, connected);
    if (verbs_->rounds[source] > 0) ++verbs_->pairs_returned;
    RFT_LOG_INFO("verbs: connected to rank %u, greeted (%u QPs)", source,
                 verbs_->channel->qp_count());
    return;
  }
  // A lower rank's offer (asked for or not). Without a place here, it waits for one while an
  // idle pair closes (verbs_close.cc), if one can.
  if (!verbs_->channel->has_place_for(source) &&
      WaitForPlace(source, PlaceWait::kConnect, &*address)) {
    return;
  }
  ForgetVerbsWaiter(source);  // it waited to ask for this address
  ConnectOfferedQp(source, *address);
}

void DataPlane::ConnectOfferedQp(Rank source, const verbs::QpAddress& address) {
  // Connected now, this rank's address back, and the first message waits for its greeting.
  // Without a place (or a QP) here, the lower rank is refused, and withdraws its QP: nothing
  // has gone on either.
  Status connected =
      verbs_->channel->Connect(source, address, verbs::EagerChannel::Handshake::kAwaitGreeting);
  if (!connected.ok()) {
    if (connected.code() != RFT_ERR_PROC_FAILED) RefuseVerbsLink(source, connected);
    return;
  }
  verbs_->links[source] = VerbsLink::kConnected;
  if (verbs_->rounds[source] > 0) ++verbs_->pairs_returned;
  SendVerbsLinkMessage(source, MessageType::kVerbsAddress);
  RFT_LOG_INFO("verbs: connected to rank %u, awaiting its greeting (%u QPs)", source,
               verbs_->channel->qp_count());
}

void DataPlane::VerbsSendBroke(Rank peer, const Status& why) {
  if (why.code() == RFT_ERR_PROC_FAILED) return;  // the failure completes what waits
  // The path to it broke in a way no retry mends: fail-stop, as for a broken connection.
  RFT_LOG_ERROR("verbs send to rank %u: %s; it is reported failed", peer, why.ToString().c_str());
  Discovered(peer);
}

void DataPlane::LogBrokenVerbsChannel() {
  // Only a peer that broke the channel's protocol gets here; the channel named it.
  RFT_LOG_ERROR("verbs: %s", verbs_->channel->TakeError().ToString().c_str());
}

void DataPlane::ProgressVerbsChores() {
  VerbsPath& path = *verbs_;
  // After the channel's completions: a pair that closed in them moves at once (its
  // kVerbsClosed went first).
  if (!path.moving.empty()) {
    std::vector<Rank> moving;
    moving.swap(path.moving);
    for (Rank peer : moving) {
      // A peer that failed meanwhile had its queue dropped: nothing is left to move.
      if (!VerbsPeerFailed(peer)) MoveToUcx(peer);
    }
  }
  if (!path.unposted.empty() || path.review_waiters) ProgressVerbsCloses();
  if (!path.waiting.empty()) RefuseLongWaiters();
  // After the moves: a pair moved in this Progress takes the link messages that waited for it.
  if (!path.returning.empty() || !path.deferred.empty()) ProgressVerbsReturns();
  if (!path.read_backlog.empty()) {
    std::vector<uint32_t> waiting;
    waiting.swap(path.read_backlog);
    for (uint32_t token : waiting) {
      path.reads[token].waiting = false;
      ContinueVerbsRead(token);
    }
  }
  // Counted by ProgressVerbs, which comes here when it reaches kAsyncEvery.
  if (path.calls_since_async >= VerbsPath::kAsyncEvery) {
    path.calls_since_async = 0;
    path.channel->PollAsyncEvents();
  }
  path.chores = path.HasChores();  // what is left, or was added meanwhile
}

void DataPlane::UpdateUcxRest() {
  ucx_may_rest_ = options_.progress == ProgressMode::kPoll && peers_.ucx_peers() == 0;
  if (!ucx_may_rest_) UcxBusy();  // a worker resting now would keep resting
}

void DataPlane::DisconnectVerbs(Rank peer) {
  if (peer >= verbs_->channel_size) return;
  verbs_->channel->Disconnect(peer);
  // Its place is free (Disconnect), and a close it was asked for will not end.
  EndCloseUnderWay(peer);
  ForgetVerbsWaiter(peer);
  verbs_->review_waiters = true;
  verbs_->chores = true;
  // Reads waiting for room stop here; what they have in flight ends as flushed, and the last
  // completion ends them (at once when none is in flight).
  std::vector<uint32_t> stopped;
  std::erase_if(verbs_->read_backlog, [&](uint32_t token) {
    if (verbs_->reads[token].source != peer) return false;
    stopped.push_back(token);
    return true;
  });
  for (uint32_t token : stopped) {
    verbs_->reads[token].waiting = false;
    verbs_->reads[token].failed = true;
    ContinueVerbsRead(token);
  }
}

bool DataPlane::VerbsReadyToSleep() {
  // Queued messages to move to UCX, waiters to look at, or pairs to bring back (Progress).
  // Close messages waiting for a credit need no poll: the credit comes with a completion, which
  // wakes the process; nor do link messages deferred until a close ends.
  if (!verbs_->moving.empty() || verbs_->review_waiters || !verbs_->returning.empty()) {
    return false;
  }
  StatusOr<bool> idle = verbs_->channel->ArmForSleep();
  if (!idle.ok()) {
    RFT_LOG_ERROR("verbs: %s", idle.status().ToString().c_str());
    return false;  // no sleep: polling goes on
  }
  return *idle;  // false: a completion came meanwhile, and Progress has work
}

void DataPlane::VerbsAwake() {
  // The CQ's events disarm it and keep its fd readable until taken; device events are read.
  verbs_->channel->TakeEvents(/*async_readable=*/true);
}

void DataPlane::CloseVerbs() {
  if (verbs_ == nullptr) return;
  verbs_->channel.reset();  // the QPs first: no RDMA after this
  // Sends the caller never completed still hold their registrations (the PD cannot go with
  // them).
  for (Rank r = 0; r < size_; ++r) {
    const IntrusiveList<PeerLink>& pending = peers_[r].pending;
    for (PeerLink* link = pending.front(); link != nullptr; link = pending.next(link)) {
      if (link->request->verbs_mr != nullptr) ReleaseVerbsRegistration(link->request);
    }
  }
  for (VerbsRead& read : verbs_->reads) {
    if (read.in_use) verbs_->registrations->Release(read.lease);
  }
  CloseRegistrationCache(*verbs_);
  verbs_.reset();
  UpdateUcxRest();
}

}  // namespace rft::transport
