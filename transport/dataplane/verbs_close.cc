// Giving a place back (docs/verbs.md, "Giving a place back"): with every place in the receive
// queue held (RFT_VERBS_PEERS), a pair that needs one waits while the least recently used idle
// pair closes its QPs, both ends agreeing, and then talks through UCX. Unlike the control
// plane's messages, a pair's data messages must stay in order, so neither end may start on UCX
// while verbs messages of the pair may still be unread at the other:
//   1. The asker A, idle towards B (no send B will read by RDMA READ, no READ of B's memory,
//      nothing queued), queues what it sends B from now on and posts kVerbsClose on the QP.
//   2. B reads it after everything A sent before it. Busy (the same test at B's end), B answers
//      kVerbsStay and A goes on by verbs. Else B queues its messages to A, posts kVerbsClosing
//      and then nothing more on the QP, credits included (EagerChannel::Quiet).
//   3. A reads kVerbsClosing after everything B sent before it and closes its QP
//      (EagerChannel::Close: what it still had outstanding, credit messages only, is flushed);
//      once closed, it sends kVerbsClosed and then what it queued, through UCX.
//   4. B, on kVerbsClosed (everything it sent by verbs was read before A sent that), closes
//      its QP and sends what it queued through UCX.
// Requests that cross: the lower rank answers the higher one's, whose own is then ignored. The
// place goes to the pair that waited for it, whose first messages wait in the direct queue.
#include <algorithm>
#include <array>
#include <cstring>
#include <string>

#include "base/clock.h"
#include "base/fault_injection.h"
#include "base/log.h"
#include "transport/dataplane/data_plane.h"
#include "transport/dataplane/verbs_path.h"

namespace rft::transport {

uint64_t DataPlane::verbs_pairs_closed() const {
  return verbs_ == nullptr ? 0 : verbs_->pairs_closed;
}

uint64_t DataPlane::verbs_closes_refused() const {
  return verbs_ == nullptr ? 0 : verbs_->closes_refused;
}

bool DataPlane::VerbsPairIdle(Rank peer, bool queue_too) const {
  if (queue_too && !peers_[peer].direct_queue.empty()) return false;
  for (const VerbsRead& read : verbs_->reads) {
    if (read.in_use && read.source == peer) return false;
  }
  // A send whose descriptor went on the QP stays registered until the peer's done message: the
  // peer may still read it. One still queued goes through UCX's rendezvous after a close.
  const IntrusiveList<PeerLink>& pending = peers_[peer].pending;
  for (PeerLink* link = pending.front(); link != nullptr; link = pending.next(link)) {
    const Request* request = link->request;
    if (request->verbs_mr != nullptr && !request->ring_link.linked()) return false;
  }
  return true;
}

bool DataPlane::AskIdlePairToClose() {
  VerbsPath& path = *verbs_;
  // A close under way here, asked or agreed to, gives its place to the first waiter.
  if (path.closes_under_way > 0) return true;
  Rank oldest = kInvalidRank;
  for (Rank r = 0; r < path.links.size(); ++r) {
    if (path.links[r] != VerbsLink::kConnected || !path.channel->ready(r)) continue;
    if (oldest != kInvalidRank && path.last_used[r] >= path.last_used[oldest]) continue;
    if (std::find(path.stayed.begin(), path.stayed.end(), r) != path.stayed.end()) continue;
    if (VerbsPairIdle(r, /*queue_too=*/true)) oldest = r;
  }
  if (oldest == kInvalidRank) return false;
  path.links[oldest] = VerbsLink::kCloseAsked;
  MarkCloseUnderWay(oldest);
  RFT_LOG_INFO(
      "verbs: asking rank %u to close the pair's QPs, the least recently used idle "
      "pair: another pair needs its place",
      oldest);
  PostVerbsCloseMessage(oldest, MessageType::kVerbsClose);
  return true;
}

bool DataPlane::WaitForPlace(Rank peer, PlaceWait then, const verbs::QpAddress* address) {
  if (!options_.verbs_close_idle || !AskIdlePairToClose()) return false;
  VerbsPath& path = *verbs_;
  PlaceWaiter waiter{.peer = peer, .then = then, .address = {}, .since_ns = MonotonicNanos()};
  if (address != nullptr) waiter.address = *address;
  auto found = std::find_if(path.waiting.begin(), path.waiting.end(),
                            [peer](const PlaceWaiter& w) { return w.peer == peer; });
  if (found != path.waiting.end()) {
    waiter.since_ns = found->since_ns;  // it waits no longer for it
    *found = waiter;                    // an address that came while it waited to ask for one
  } else {
    path.waiting.push_back(waiter);
    path.chores = true;
    RFT_LOG_INFO("verbs: rank %u waits for a place in the receive queue (all %u are held)", peer,
                 path.channel->places());
  }
  path.links[peer] = VerbsLink::kWaitingPlace;
  return true;
}

void DataPlane::PostVerbsCloseMessage(Rank peer, MessageType type) {
  VerbsPath& path = *verbs_;
  const bool behind = std::any_of(path.unposted.begin(), path.unposted.end(),
                                  [peer](const auto& u) { return u.first == peer; });
  if (behind || !TryPostVerbsCloseMessage(peer, type)) {
    path.unposted.emplace_back(peer, type);
    path.chores = true;
  }
}

bool DataPlane::TryPostVerbsCloseMessage(Rank peer, MessageType type) {
  VerbsPath& path = *verbs_;
  if (path.channel->failed(peer)) return true;  // its failure ends the close
  std::array<std::byte, kWireHeaderSize> bytes;
  WireHeader header;
  header.type = type;
  header.source = rank_;
  header.length = 0;
  header.job_token = job_token_;
  EncodeHeader(header, std::span<std::byte, kWireHeaderSize>(bytes));
  StatusOr<verbs::SendResult> sent = path.channel->SendNow(peer, bytes, {});
  if (!sent.ok()) {
    if (sent.status().code() != RFT_ERR_PROC_FAILED) FailVerbsLink(peer, sent.status());
    return true;
  }
  if (*sent != verbs::SendResult::kPosted) return false;  // no credit yet: Progress tries again
  if (type == MessageType::kVerbsClosing) {
    // The last thing this end posts on the QP: the asker closes it once it reads this.
    if (Status quiet = path.channel->Quiet(peer); !quiet.ok()) FailVerbsLink(peer, quiet);
  }
  return true;
}

void DataPlane::AgreeToClose(Rank peer) {
  verbs_->links[peer] = VerbsLink::kCloseAnswered;  // what it sends the peer waits from now on
  MarkCloseUnderWay(peer);                          // its place will come free here too
  RFT_LOG_INFO("verbs: rank %u asked to close the pair's QPs: agreed", peer);
  PostVerbsCloseMessage(peer, MessageType::kVerbsClosing);
}

void DataPlane::CloseRefused(Rank peer) {
  VerbsPath& path = *verbs_;
  path.links[peer] = VerbsLink::kConnected;  // what waited in the direct queue goes on by verbs
  EndCloseUnderWay(peer);
  path.stayed.push_back(peer);  // not asked again while the same pairs wait
  path.review_waiters = true;   // they ask the next pair
  path.chores = true;
}

void DataPlane::MarkCloseUnderWay(Rank peer) {
  VerbsPath& path = *verbs_;
  if (path.closing_here[peer]) return;
  path.closing_here[peer] = true;
  ++path.closes_under_way;
}

void DataPlane::EndCloseUnderWay(Rank peer) {
  VerbsPath& path = *verbs_;
  if (peer >= path.closing_here.size() || !path.closing_here[peer]) return;
  path.closing_here[peer] = false;
  --path.closes_under_way;
}

void DataPlane::HandleVerbsClose(const WireHeader& header, std::span<const std::byte> payload) {
  const Rank source = header.source;
  if (!payload.empty() || !TakesVerbsLinkMessage(source) || source >= verbs_->links.size()) {
    return DropVerbsLinkMessage(header, "a request to close with a payload, or off verbs");
  }
  if (fault::Armed("verbs.close.requested", rank_)) fault::Die("verbs.close.requested");
  const VerbsLink link = verbs_->links[source];
  if (link == VerbsLink::kConnected) {
    if (VerbsPairIdle(source, /*queue_too=*/true)) return AgreeToClose(source);
    RFT_LOG_INFO("verbs: rank %u asked to close the pair's QPs; busy here, the pair stays", source);
    return PostVerbsCloseMessage(source, MessageType::kVerbsStay);
  }
  if (link == VerbsLink::kCloseAsked) {
    // Both asked at once: the lower rank answers the higher one's request, and its own is then
    // ignored. What the lower rank queued since it asked goes through UCX after the close.
    if (source < rank_) return;
    RFT_LOG_INFO(
        "verbs: rank %u and this rank asked each other to close at once: this end "
        "answers",
        source);
    if (VerbsPairIdle(source, /*queue_too=*/false)) return AgreeToClose(source);
    CloseRefused(source);
    return PostVerbsCloseMessage(source, MessageType::kVerbsStay);
  }
  DropVerbsLinkMessage(header, "a request to close a pair neither connected nor asked to close");
}

bool DataPlane::TakesVerbsCloseAnswer(const WireHeader& header, std::span<const std::byte> payload,
                                      VerbsLink expected) {
  const Rank source = header.source;
  if (!payload.empty() || !TakesVerbsLinkMessage(source) || source >= verbs_->links.size() ||
      verbs_->links[source] != expected) {
    DropVerbsLinkMessage(header, "an answer in a close that is not under way here");
    return false;
  }
  return true;
}

void DataPlane::HandleVerbsStay(const WireHeader& header, std::span<const std::byte> payload) {
  const Rank source = header.source;
  if (!TakesVerbsCloseAnswer(header, payload, VerbsLink::kCloseAsked)) return;
  RFT_LOG_INFO("verbs: rank %u is busy: the pair keeps its QPs", source);
  ++verbs_->closes_refused;
  CloseRefused(source);
}

void DataPlane::HandleVerbsClosing(const WireHeader& header, std::span<const std::byte> payload) {
  const Rank source = header.source;
  if (!TakesVerbsCloseAnswer(header, payload, VerbsLink::kCloseAsked)) return;
  if (fault::Armed("verbs.close.closing", rank_)) fault::Die("verbs.close.closing");
  // Nothing more comes on the QP: everything the peer sent by verbs was read before this.
  verbs_->links[source] = VerbsLink::kClosingAsker;
  if (Status closing = verbs_->channel->Close(source); !closing.ok()) {
    FailVerbsLink(source, closing);
  }
}

void DataPlane::HandleVerbsClosed(const WireHeader& header, std::span<const std::byte> payload) {
  const Rank source = header.source;
  if (!TakesVerbsCloseAnswer(header, payload, VerbsLink::kCloseAnswered)) return;
  verbs_->links[source] = VerbsLink::kClosingAnswerer;
  if (Status closing = verbs_->channel->Close(source); !closing.ok()) {
    FailVerbsLink(source, closing);
  }
}

void DataPlane::OnVerbsPairClosed(Rank peer) {
  VerbsPath& path = *verbs_;
  const VerbsLink link = path.links[peer];
  if (link != VerbsLink::kClosingAsker && link != VerbsLink::kClosingAnswerer) return;
  path.links[peer] = VerbsLink::kClosed;
  ++path.pairs_closed;
  // Through UCX, ahead of what waited for the pair (MoveToUcx, at the end of this Progress).
  if (link == VerbsLink::kClosingAsker) SendVerbsLinkMessage(peer, MessageType::kVerbsClosed);
  EndCloseUnderWay(peer);
  path.moving.push_back(peer);
  path.review_waiters = true;
  path.chores = true;
  RFT_LOG_INFO("verbs: the pair with rank %u closed its QPs and talks through UCX (%u QPs left)",
               peer, path.channel->qp_count());
}

void DataPlane::ProgressVerbsCloses() {
  VerbsPath& path = *verbs_;
  if (!path.unposted.empty()) {
    std::vector<std::pair<Rank, MessageType>> unposted;
    unposted.swap(path.unposted);
    for (const auto& [peer, type] : unposted) PostVerbsCloseMessage(peer, type);
  }
  if (!path.review_waiters) return;
  path.review_waiters = false;
  // A waiter that failed meanwhile waits for nothing.
  std::erase_if(path.waiting, [this](const PlaceWaiter& w) { return VerbsPeerFailed(w.peer); });
  while (!path.waiting.empty() && path.channel->has_place_for(path.waiting.front().peer)) {
    const PlaceWaiter waiter = path.waiting.front();
    path.waiting.erase(path.waiting.begin());
    path.links[waiter.peer] = VerbsLink::kIdle;
    RFT_LOG_INFO("verbs: rank %u takes the place that came free", waiter.peer);
    switch (waiter.then) {
      case PlaceWait::kAsk:
        // The place is held from now on, for the address that answers.
        if (Status expected = path.channel->Expect(waiter.peer); !expected.ok()) {
          RefuseVerbsLink(waiter.peer, expected);
          break;
        }
        path.links[waiter.peer] = VerbsLink::kAsked;
        SendVerbsLinkMessage(waiter.peer, MessageType::kVerbsAsk);
        break;
      case PlaceWait::kOffer:
        OfferVerbsAddress(waiter.peer);
        break;
      case PlaceWait::kConnect:
        ConnectOfferedQp(waiter.peer, waiter.address);
        break;
    }
  }
  if (path.waiting.empty()) {
    path.stayed.clear();
    return;
  }
  if (AskIdlePairToClose()) return;
  // No pair left to close: the others are refused, as without RFT_VERBS_CLOSE_IDLE.
  std::vector<PlaceWaiter> refused;
  refused.swap(path.waiting);
  path.stayed.clear();
  for (const PlaceWaiter& waiter : refused) {
    RefusePlaceWaiter(waiter.peer,
                      ArgError("no place left in the receive queue and no idle pair to close"));
  }
}

void DataPlane::RefusePlaceWaiter(Rank peer, const Status& why) {
  verbs_->links[peer] = VerbsLink::kIdle;  // waits no longer: refused as if it never had
  RefuseVerbsLink(peer, why);
}

void DataPlane::ForgetVerbsWaiter(Rank peer) {
  std::erase_if(verbs_->waiting, [peer](const PlaceWaiter& w) { return w.peer == peer; });
}

void DataPlane::RefuseLongWaiters() {
  VerbsPath& path = *verbs_;
  const int64_t now = MonotonicNanos();
  const int64_t limit = options_.verbs_place_wait.count();
  // Oldest first: the others waited less.
  while (!path.waiting.empty() && now - path.waiting.front().since_ns >= limit) {
    const Rank peer = path.waiting.front().peer;
    path.waiting.erase(path.waiting.begin());
    // The close asked for goes on; its place stays free for the next pair that needs one.
    RefusePlaceWaiter(peer, ArgError("no place came free within RFT_VERBS_PLACE_WAIT (" +
                                     std::to_string(limit / 1000) +
                                     " us): the pair asked to close has not answered"));
  }
  if (path.waiting.empty()) path.stayed.clear();
}

int DataPlane::VerbsSleepLimit(int timeout_ms) const {
  const VerbsPath& path = *verbs_;
  if (path.waiting.empty()) return timeout_ms;
  const int64_t left_ns =
      path.waiting.front().since_ns + options_.verbs_place_wait.count() - MonotonicNanos();
  const int64_t left_ms = std::max<int64_t>(0, (left_ns + 999'999) / 1'000'000);
  return timeout_ms < 0 ? static_cast<int>(left_ms)
                        : static_cast<int>(std::min<int64_t>(timeout_ms, left_ms));
}

}  // namespace rft::transport
