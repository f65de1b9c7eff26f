// ControlPlane's ends: an abort's announcement (AnnounceAborted), and the clean end: a departure
// message to every live peer, each acknowledged once the peer recorded it in its registry, before
// this process closes any endpoint. Processes finish at different times; without this, a peer that
// sees this process's endpoints close (a transport error) or its heartbeats stop would declare it
// failed.
#include <unistd.h>

#include <future>
#include <memory>

#include "base/clock.h"
#include "base/log.h"
#include "detector/control_plane.h"
#include "detector/control_subtype.h"

namespace rft::detector {
namespace {
using internal::kDeparture;
using internal::kDepartureAck;
// Long enough for a loaded node's control threads to answer; a peer that did not by then is
// failed or about to be, and a late transport error from it changes nothing for this process.
constexpr auto kDepartureWait = std::chrono::milliseconds(200);
// How long an abort waits for its announcement to be sent (a stalled control thread must not
// hold back the abort itself).
constexpr auto kAbortAnnounceWait = std::chrono::milliseconds(200);
constexpr int64_t kAbortFlushNs = 100'000'000;  // within kAbortAnnounceWait
// Jobs up to this size tell every peer the verbs channel reaches, as they would tell every
// peer UCX connected to at once (transport::ucx::EndpointTable::Options::connect_all_max).
constexpr uint32_t kTellEveryVerbsPeerMax =
    transport::ucx::EndpointTable::Options{}.connect_all_max;
}  // namespace

void ControlPlane::AnnounceDeparture() {
  departure_requested_.store(true, std::memory_order_release);
  if (!options_.progress_thread) {
    Depart();
    return;
  }
  pending_.Wake();
  std::unique_lock<std::mutex> lock(departure_mutex_);
  // The thread answers within kDepartureWait; the margin covers a descheduled thread, and a
  // thread that stopped (its error is logged) must not hold the caller forever.
  departure_cv_.wait_for(lock, kDepartureWait * 5, [this] { return departed_; });
}

void ControlPlane::AnnounceAborted(const RankSet& ranks) {
  auto sent = std::make_shared<std::promise<void>>();
  std::future<void> done = sent->get_future();
  auto announce = [this, ranks, sent] {
    for (const RankSet::Interval& run : ranks.intervals()) {
      for (Rank rank = run.first; rank < run.last; ++rank) {
        (void)Broadcast({.kind = BroadcastKind::kAborted,
                         .context = 0,
                         .epoch = 0,
                         .origin = self_,
                         .subject = rank});
      }
    }
    // UCX may still hold the sends to remote peers in its queues (same-node ones went by
    // datagram, already in the peers' sockets): flushed before the launcher ends this process.
    if (worker_ != nullptr) {
      ucp_request_param_t param{};
      void* flush = ucp_worker_flush_nbx(worker_->get(), &param);
      if (UCS_PTR_IS_PTR(flush)) {
        const int64_t until = MonotonicNanos() + kAbortFlushNs;
        while (ucp_request_check_status(flush) == UCS_INPROGRESS && MonotonicNanos() < until) {
          worker_->Progress();
        }
        ucp_request_free(flush);
      }
    }
    sent->set_value();
  };
  if (!options_.progress_thread) {
    announce();
    return;
  }
  if (!Post(std::move(announce))) return;
  (void)done.wait_for(kAbortAnnounceWait);
}

void ControlPlane::Depart() {
  {
    std::lock_guard<std::mutex> lock(departure_mutex_);
    if (departed_) return;
  }
  if (endpoints_ != nullptr) {
    RankSet waiting;
    for (Rank r = 0; r < size_; ++r) {
      if (r == self_ || registry_->IsFailed(r)) continue;
      // Only peers connected to this process can see its endpoints close; connecting to the
      // rest now would cost every finishing process an endpoint per rank.
      // Same-node peers reached by datagram see its socket close: they are told too.
      // So are the one whose heartbeats this process takes (the ring's first one was never
      // sent a message, and its next put fails) and those it exchanged messages with by verbs:
      // a put, an RDMA WRITE or a SEND to its closed endpoint or QP fails.
      // Within the size where UCX would have connected every peer, every verbs peer is told.
      const bool sees_the_end = r == node_.observed() || (verbs_message_peers_.Contains(r) &&
                                                          (size_ <= kTellEveryVerbsPeerMax ||
                                                           verbs_messages_->stats(r).sent > 0 ||
                                                           verbs_messages_->stats(r).received > 0));
      if (endpoints_->Connected(r) == nullptr && (local_ == nullptr || !local_->Reaches(r)) &&
          !sees_the_end) {
        continue;
      }
      Send(r, internal::kDetectorService, kDeparture, {});
      // A peer that departed before is told too, unanswered: it may still be closing its
      // endpoints, and a flush to this process is one it stops waiting for once it knows
      // (EndpointTable::WatchDepartures). It may also be gone: its answer is not waited for.
      if (!registry_->IsDeparted(r)) waiting.Insert(r);
    }
    const Deadline deadline = Deadline::After(kDepartureWait);
    for (;;) {
      bool all = true;
      for (Rank r : waiting) {
        // A peer that failed or departed meanwhile answers no more.
        if (!departure_acks_.Contains(r) && !registry_->IsFailed(r) && !registry_->IsDeparted(r)) {
          all = false;
          break;
        }
      }
      if (all || deadline.expired()) break;
      const bool socket_news = PumpLocal();
      const bool local_news = PumpVerbs() || socket_news;
      // Peers on this node need the core to answer.
      if (worker_->Progress() == 0 && !local_news) usleep(50);
    }
  }
  {
    std::lock_guard<std::mutex> lock(departure_mutex_);
    departed_ = true;
  }
  departure_cv_.notify_all();
}

void ControlPlane::OnDeparture(Rank rank) {
  if (registry_->Depart(rank)) {
    RFT_LOG_DEBUG("rank %u ends cleanly", rank);
  }
  Send(rank, internal::kDetectorService, kDepartureAck, {});
}

}  // namespace rft::detector
