// Coming back to verbs (docs/verbs.md, "Coming back"): a pair that moved to UCX, refused a
// place or closed to give its place to another, connects its QPs again once one end has sent
// it RFT_VERBS_RETURN_AFTER messages through UCX, if a place is free there or an idle pair can
// give one back (verbs_close.cc).
//
// The pair's messages must keep their order across the move, as they do when it leaves verbs.
// The connection's own link messages (kVerbsAsk, kVerbsAddress) travel through UCX behind every
// message the pair sent there, and each end stops sending through UCX where it sends its link
// message:
//   - the end that starts (its round + 1) queues what it sends the peer from then on, and asks
//     for the peer's address (higher rank) or offers its own (lower rank);
//   - the peer reads that after everything the starter sent through UCX, takes the pair back,
//     queues what it sends from then on, and answers through UCX as on a first connection;
//   - each end sends through verbs only once its QP is connected, which needs the other's last
//     link message, read after the other's last UCX message; the higher rank waits for the
//     lower one's greeting on the QP besides.
// So each direction reads its UCX messages before its first verbs message. Refused again (no
// place at the other end), the pair moves back to UCX with what queued, as on a first refusal.
//
// Every link message carries the pair's round in the header's epoch: a request or an address
// that crossed a refusal of the round before is told from one that starts the next. A link
// message of the next round that comes while this end still closes or moves the pair waits
// until it is done.
#include <algorithm>

#include "base/fault_injection.h"
#include "base/log.h"
#include "transport/dataplane/data_plane.h"
#include "transport/dataplane/verbs_path.h"

namespace rft::transport {
namespace {

bool MovedToUcx(VerbsLink link) {
  return link == VerbsLink::kRefused || link == VerbsLink::kClosed;
}

}  // namespace

uint64_t DataPlane::verbs_returns_started() const {
  return verbs_ == nullptr ? 0 : verbs_->returns_started;
}

uint64_t DataPlane::verbs_pairs_returned() const {
  return verbs_ == nullptr ? 0 : verbs_->pairs_returned;
}

void DataPlane::CountMovedPairSend(Rank peer) {
  VerbsPath& path = *verbs_;
  const uint32_t after = options_.verbs_return_after;
  if (after == 0 || peer >= path.links.size() || !MovedToUcx(path.links[peer])) return;
  // Once: the count stays at the threshold until the attempt starts (ProgressVerbsReturns).
  if (path.ucx_sends[peer] < after && ++path.ucx_sends[peer] == after) {
    path.returning.push_back(peer);
    path.chores = true;
  }
}

void DataPlane::ProgressVerbsReturns() {
  VerbsPath& path = *verbs_;
  if (!path.returning.empty()) {
    std::vector<Rank> returning;
    returning.swap(path.returning);
    for (Rank peer : returning) StartVerbsReturn(peer);
  }
  if (!path.deferred.empty()) {
    std::vector<VerbsPath::DeferredLinkMessage> deferred;
    deferred.swap(path.deferred);
    for (const VerbsPath::DeferredLinkMessage& message : deferred) {
      // A peer that failed meanwhile needs no answer; one still settling is deferred again.
      if (VerbsPeerFailed(message.header.source)) continue;
      switch (message.header.type) {
        case MessageType::kVerbsAsk:
          HandleVerbsAsk(message.header, message.payload);
          break;
        case MessageType::kVerbsAddress:
          HandleVerbsAddress(message.header, message.payload);
          break;
        default:
          HandleVerbsRefuse(message.header, message.payload);
          break;
      }
    }
  }
}

void DataPlane::StartVerbsReturn(Rank peer) {
  VerbsPath& path = *verbs_;
  const VerbsLink moved = path.links[peer];
  // Taken back by the peer meanwhile, or failed: nothing to start.
  if (!MovedToUcx(moved) || peers_[peer].path != Path::kUcx || VerbsPeerFailed(peer)) return;
  path.ucx_sends[peer] = 0;  // counts again, whatever happens next
  const bool lower = rank_ < peer;
  // Without a place, WaitForPlace makes the pair wait for one (kWaitingPlace).
  if (!path.channel->has_place_for(peer) &&
      !WaitForPlace(peer, lower ? PlaceWait::kOffer : PlaceWait::kAsk, nullptr)) {
    // No place, and none can come free: the pair stays, and the peer never hears of the round.
    RFT_LOG_DEBUG("verbs: rank %u's pair stays on UCX: no place for it", peer);
    return;
  }
  // Everything sent so far went to UCX, ahead of the link message; what follows waits.
  SetPath(peer, Path::kVerbs);
  ++path.rounds[peer];
  path.last_used[peer] = ++path.tick;  // in use once connected: not the next pair to close
  ++path.returns_started;
  RFT_LOG_INFO(
      "verbs: %u messages to rank %u went through UCX since its pair %s: it tries verbs "
      "again (round %u)",
      options_.verbs_return_after, peer, moved == VerbsLink::kClosed ? "closed" : "was refused",
      path.rounds[peer]);
  if (path.links[peer] != VerbsLink::kWaitingPlace) {
    path.links[peer] = VerbsLink::kIdle;
    StartVerbsLink(peer);
  }
}

bool DataPlane::TakesVerbsLinkRound(const WireHeader& header, std::span<const std::byte> payload) {
  VerbsPath* path = verbs_.get();
  const Rank source = header.source;
  if (path == nullptr || source >= path->rounds.size() || source == rank_) return true;
  const uint32_t round = path->rounds[source];
  const VerbsLink link = path->links[source];
  // Behind one of its messages that waits here, a link message waits too: they are read in the
  // order the peer sent them. (Refused a place while this end still moves the pair, the peer
  // may send its refusal of one round and its request of the next in one breath.)
  if (std::any_of(path->deferred.begin(), path->deferred.end(),
                  [source](const auto& m) { return m.header.source == source; })) {
    return DeferVerbsLinkMessage(header, payload);
  }
  if (header.epoch == round) {
    // One that crossed this end's refusal (or both refused at once): the pair stays on UCX.
    return !MovedToUcx(link);
  }
  if (header.epoch < round) return false;  // of an attempt both ends moved past
  if (header.epoch > round + 1 || VerbsPeerFailed(source)) {
    DropVerbsLinkMessage(header, "a round more than one ahead");
    return false;
  }
  // The peer started the next round. It did so once its end had moved to UCX, and this end's
  // move comes first on the wire (kVerbsRefuse, kVerbsClosed): a pair still closing or moving
  // here takes the message once it is done.
  const bool moving =
      std::find(path->moving.begin(), path->moving.end(), source) != path->moving.end();
  const bool closing = link == VerbsLink::kClosingAnswerer || link == VerbsLink::kClosingAsker;
  if (closing || (MovedToUcx(link) && moving)) {
    RFT_LOG_INFO(
        "verbs: rank %u brings its pair back (round %u) while it still %s here: "
        "taken once that is done",
        source, header.epoch, closing ? "closes" : "moves to UCX");
    return DeferVerbsLinkMessage(header, payload);
  }
  if (!MovedToUcx(link)) {
    DropVerbsLinkMessage(header, "the next round of a pair that never left verbs here");
    return false;
  }
  if (header.type == MessageType::kVerbsRefuse) {
    // Its attempt found no place before it asked anything: the pair stays as it is.
    path->rounds[source] = header.epoch;
    path->ucx_sends[source] = 0;
    return false;
  }
  TakeBackVerbsPair(source, header.epoch);
  return true;
}

bool DataPlane::DeferVerbsLinkMessage(const WireHeader& header,
                                      std::span<const std::byte> payload) {
  verbs_->deferred.push_back({header, std::vector<std::byte>(payload.begin(), payload.end())});
  verbs_->chores = true;
  return false;
}

void DataPlane::TakeBackVerbsPair(Rank peer, uint32_t round) {
  VerbsPath& path = *verbs_;
  if (fault::Armed("verbs.return.taken", rank_)) fault::Die("verbs.return.taken");
  RFT_LOG_INFO("verbs: rank %u brings its pair back from UCX (round %u)", peer, round);
  // Its UCX messages came before this: what this end sends from now on waits for the QP.
  SetPath(peer, Path::kVerbs);
  path.links[peer] = VerbsLink::kIdle;
  path.rounds[peer] = round;
  path.ucx_sends[peer] = 0;
  path.last_used[peer] = ++path.tick;  // in use once connected: not the next pair to close
  std::erase(path.returning, peer);    // both ends at once: the peer's round is this one
}

}  // namespace rft::transport
