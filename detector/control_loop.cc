// The control thread's loop: its steps (reports to act on, timers, the heartbeat puts it was
// asked for), the farewell at its end, and the control messages that arrive through UCX.
// Setting up and tearing down are in control_plane.cc.
#include <poll.h>

#include <cerrno>
#include <cstring>
#include <iterator>
#include <string>

#include "base/byte_order.h"
#include "base/log.h"
#include "base/timeline.h"
#include "detector/control_plane.h"
#include "detector/control_subtype.h"
#include "detector/thread_state.h"
#include "transport/wire/wire_header.h"

namespace rft::detector {

using transport::DecodeError;
using transport::kWireHeaderSize;
using transport::MessageType;
using transport::WireHeader;

using internal::kBroadcast;
using internal::kDeparture;
using internal::kDepartureAck;
using internal::kDetectorService;
using internal::kHandoverSlotOffset;
using internal::kObserveRequest;
using internal::kSlotOffset;
using internal::ServiceOfBroadcast;

Status ControlPlane::Poll(int timeout_ms) {
  if (options_.progress_thread) {
    return ArgError(
        "control plane Poll with the progress thread running: expected "
        "RFT_PROGRESS_THREAD=n");
  }
  return Step(static_cast<int64_t>(timeout_ms) * 1000000);
}

void ControlPlane::Run() {
  while (!stop_.load(std::memory_order_acquire)) {
    const Status status = Step(HeartbeatRing::kNoTimer);
    if (!status.ok()) {
      RFT_LOG_ERROR("control plane: %s; the detector stops", status.ToString().c_str());
      return;
    }
    if (departure_requested_.load(std::memory_order_acquire)) Depart();
  }
  // News reported before the end (the caller's last accusation) is still told and acted on.
  if (pending_.HasItems()) HandleWork();
  Depart();  // if nobody asked before: still before the endpoints close
  SayFarewell();
}

Status ControlPlane::Step(int64_t timeout_ns) {
  if (pending_.HasItems()) HandleWork();
  if (worker_->Progress() > 0) armed_ = false;
  // Both pumps, whatever the first found.
  const bool socket_news = PumpLocal();
  const bool local_news = PumpVerbs() || socket_news;
  HandleTimer();
  const int64_t next_service = RunDueTimers();

  // Sleep until the next tick or service timer, a message, a failure report, a posted task or a
  // local exit.
  const int64_t now = MonotonicNanos();
  const int64_t next = std::min(node_.next_timer_ns(), next_service);
  int64_t wait_ns = next == HeartbeatRing::kNoTimer ? timeout_ns : next - now;
  if (wait_ns > timeout_ns) wait_ns = timeout_ns;
  if (wait_ns <= 0 || local_news) return Status::Ok();
  const bool forever = wait_ns == HeartbeatRing::kNoTimer;
  // A task PostSoon left without a wake-up waits for a timer due soon; for no other.
  const bool soon = wait_ns <= kPostSoonNs;
  sleep_has_timeout_.store(soon, std::memory_order_seq_cst);
  if (!soon && pending_.HasItems()) return Status::Ok();
  // Arming costs four system calls here (UCX drains its signal descriptors), which was a third
  // of an idle tick: a worker stays armed until an event arrives, so after a quiet tick (no
  // event, only our own put) it is not armed again.
  if (!armed_) {
    const ucs_status_t armed = ucp_worker_arm(worker_->get());
    if (armed == UCS_ERR_BUSY) return Status::Ok();  // something arrived: progress it
    if (armed != UCS_OK) {
      return OtherError(std::string("ucp_worker_arm: ") + ucs_status_string(armed));
    }
    armed_ = true;
  }
  poll_fds_.clear();
  poll_fds_.push_back({worker_->event_fd(), POLLIN, 0});
  poll_fds_.push_back({pending_.fd(), POLLIN, 0});
  if (local_ != nullptr) local_->AddPollFds(&poll_fds_);  // read by the next PumpLocal
  const size_t verbs_fds = poll_fds_.size();
  if (!ArmVerbs()) return Status::Ok();  // a last look found messages: handle them first
  timespec ts;
  ts.tv_sec = static_cast<time_t>(wait_ns / 1000000000);
  ts.tv_nsec = static_cast<long>(wait_ns % 1000000000);
  const int ready = ppoll(poll_fds_.data(), poll_fds_.size(), forever ? nullptr : &ts, nullptr);
  if (ready < 0 && errno != EINTR) return OtherError(std::string("ppoll: ") + std::strerror(errno));
  if (ready > 0 && poll_fds_[0].revents != 0) armed_ = false;
  if (ready > 0 && poll_fds_[1].revents != 0) pending_.ClearWakeups();
  if (ready > 0) TakeVerbsEvents(verbs_fds);
  return Status::Ok();
}

void ControlPlane::HandleWork() {
  std::vector<Work> work;
  pending_.Drain(&work);
  NoteLeaving();
  const int64_t now = MonotonicNanos();
  for (Work& item : work) {
    if (auto* task = std::get_if<std::function<void()>>(&item)) {
      (*task)();
      continue;
    }
    const auto& [record, while_leaving] = std::get<PendingFailure>(item);
    if (endpoints_ == nullptr) continue;  // torn down: nothing left to act with
    endpoints_->MarkFailed(record.rank);
    if (local_ != nullptr) local_->Forget(record.rank);
    // Its QP to the error state: nothing more is sent to it, and it writes here no more.
    if (verbs_message_peers_.Contains(record.rank) || late_verbs_peers_.Contains(record.rank)) {
      verbs_messages_->Disconnect(record.rank);
    } else if (offered_verbs_peers_.Contains(record.rank)) {
      offered_verbs_peers_.Erase(record.rank);
      (void)verbs_messages_->Withdraw(record.rank);  // never connected: its place comes back
    }
    // A process on its way out sees its own endpoints close: what its sources say then is not
    // news, and acting on it would kill live peers. The node only keeps its view consistent.
    const size_t start = actions_.size();
    node_.OnFailure(record.rank, record.source, while_leaving, now, &actions_);
    Execute(start);
    NotifyServices(record.rank);
  }
  if (endpoints_ == nullptr) return;
  // Heartbeat regions go before the endpoints they were attached to close: those of the ranks
  // just recorded, and of those the endpoint table marked failed on its own (a transport error,
  // even from a peer that departed cleanly).
  for (Rank rank : endpoints_->failed_ranks()) {
    if (rank < remote_.size()) remote_[rank].reset();
  }
  endpoints_->CloseFailed();
}

void ControlPlane::HandleTimer() {
  const int64_t now = MonotonicNanos();
  if (!node_.started() || now < node_.next_timer_ns()) return;
  // The slots are written by peers' puts: read them as atomic words.
  auto read_slot = [&](uint64_t offset) {
    return std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(slots_->data() + offset))
        .load(std::memory_order_acquire);
  };
  const uint64_t word =
      node_.ChooseSlotWord(read_slot(kSlotOffset), read_slot(kHandoverSlotOffset));
  const size_t start = actions_.size();
  node_.OnTimer(now, word, *this, &actions_);
  Execute(start);
  late_ticks_.store(node_.late_ticks(), std::memory_order_relaxed);
  starved_ticks_.store(node_.starved_ticks(), std::memory_order_relaxed);
}

void ControlPlane::NoteLeaving() {
  if (Leaving()) node_.SetLeaving();
}

void ControlPlane::Execute(size_t start) {
  for (size_t i = start; i < actions_.size() && !tearing_down_; ++i) {
    const NodeAction action = actions_[i];  // a copy: the vector may grow meanwhile
    if (const auto* put = std::get_if<detector::PutHeartbeat>(&action)) {
      PutHeartbeat(put->observer, put->word, put->handover ? kHandoverSlotOffset : kSlotOffset);
    } else if (const auto* request = std::get_if<SendObserveRequest>(&action)) {
      std::array<std::byte, 8> payload;
      StoreLittleEndian<uint32_t>(payload, 0, request->generation);
      StoreLittleEndian<uint32_t>(payload, 4, request->size);
      Send(request->to, kDetectorService, kObserveRequest, payload);
    } else if (const auto* send = std::get_if<SendBroadcast>(&action)) {
      std::array<std::byte, kBroadcastMessageSize> payload;
      EncodeBroadcastMessage(send->message, payload);
      Send(send->to, kDetectorService, kBroadcast, payload);
    } else if (const auto* report = std::get_if<ReportFailure>(&action)) {
      if (report->source == FailureSource::kHeartbeat) {
        suspicions_.fetch_add(1, std::memory_order_relaxed);
        timeline::Record(timeline::Event::kSuspected, report->rank, "no heartbeat");
        if (report->never_heard) {
          // Not a process that stopped: one that never reached its ring (or never answered
          // the observe request of a repair), within the first-word window at the start.
          RFT_LOG_WARN(
              "rank %u never put a heartbeat here since it was first observed: "
              "declared failed",
              report->rank);
        } else {
          RFT_LOG_WARN("rank %u sent no heartbeat for %lld ms: declared failed", report->rank,
                       static_cast<long long>(options_.heartbeat.timeout_ns / 1000000));
        }
      }
      registry_->Report(report->rank, report->source);
    } else if (const auto* kill = std::get_if<KillRank>(&action)) {
      timeline::Record(timeline::Event::kKillAsked, kill->rank);
      Kill(kill->rank);
    } else if (const auto* end = std::get_if<EndSelf>(&action)) {
      timeline::Record(timeline::Event::kDeclaredSelf, end->by);
      DeclaredFailed(end->by);
    } else if (const auto* deliver = std::get_if<DeliverBroadcast>(&action)) {
      static constexpr const char* kKindNames[] = {"", "failure", "revoke", "aborted"};
      const auto kind = static_cast<size_t>(deliver->message.kind);
      timeline::Record(timeline::Event::kBroadcast,
                       deliver->message.kind == BroadcastKind::kRevoke
                           ? static_cast<int64_t>(deliver->message.context)
                           : static_cast<int64_t>(deliver->message.subject),
                       kind < std::size(kKindNames) ? kKindNames[kind] : "unknown");
      // An abort is marked before the node's next action reports the failure, so whoever
      // learns of that failure can tell it was an abort.
      if (deliver->message.kind == BroadcastKind::kAborted) {
        registry_->MarkAborted(static_cast<Rank>(deliver->message.subject));
      }
      // A failure is reported by the node's next action; other kinds belong to a service.
      ControlServiceHandler* handler = HandlerOf(ServiceOfBroadcast(deliver->message.kind));
      if (handler != nullptr) handler->OnBroadcastDelivered(deliver->message);
    }
  }
  actions_.resize(start);
}

bool ControlPlane::Starved(Rank rank) {
  if (!same_node_.Contains(rank) || pids_[rank] <= 0) return false;  // no /proc view
  return internal::AnyThreadRunnableOrInIo(pids_[rank]);
}

bool ControlPlane::PutHeartbeat(Rank observer, uint64_t word, uint64_t slot_offset, bool signaled) {
  if (observer >= size_ || endpoints_ == nullptr) return true;
  // The endpoint table may hold a peer failed that the registry does not: a departed peer's end
  // raised a transport error here, which the registry ignored. Its endpoint is closed (or about
  // to be), and a put through it crashed in UCX (seen in a soak). A departed observer whose
  // endpoint is fine still gets its puts: until its own end it still checks them, and silence
  // would make it suspect this process.
  if (registry_->IsFailed(observer) || endpoints_->failed_ranks().Contains(observer)) {
    remote_[observer].reset();
    return true;
  }
  if (WritesHeartbeatsTo(observer)) {
    const bool posted =
        verbs_heartbeats_->Put(*verbs_messages_, observer, slot_offset, word, signaled);
    if (posted) {
      heartbeats_put_.fetch_add(1, std::memory_order_relaxed);
      heartbeats_written_.fetch_add(1, std::memory_order_relaxed);
    }
    return posted;
  }
  if (remote_[observer] == nullptr) {
    auto ep = endpoints_->Get(observer);
    if (!ep.ok()) return true;  // failed meanwhile: the ring repairs itself on the news
    // Same-node regions were attached at start-up (AttachLocalRegions); one that could not be
    // is tried here only while its process lives: UCX 1.13's ucp_ep_rkey_unpack crashes in its
    // own error path when the peer's shared-memory segment is gone. A process gone or a zombie
    // gets no region; its death is news the registry will have soon.
    if (LocalPeerEnded(observer)) return true;
    auto region =
        transport::ucx::RemoteRegion::Attach(worker_.get(), *ep, region_descriptors_[observer]);
    if (!region.ok()) {
      RFT_LOG_ERROR("heartbeat region of rank %u: %s", observer,
                    region.status().ToString().c_str());
      return true;
    }
    remote_[observer] = std::move(*region);
  }
  auto posted = remote_[observer]->PostWord(slot_offset, word);
  if (!posted.ok()) return true;
  if (*posted) heartbeats_put_.fetch_add(1, std::memory_order_relaxed);
  return *posted;
}

void ControlPlane::SayFarewell() {
  const Rank observer = node_.observer();
  if (observer == kInvalidRank) return;
  // Bounded: a stopped observer must not hold up this process's end.
  const Deadline deadline = Deadline::After(std::chrono::milliseconds(20));
  while (!PutHeartbeat(observer, node_.FarewellWord(), kSlotOffset, /*signaled=*/true) &&
         !deadline.expired()) {
    worker_->Progress();
    if (verbs_messages_ != nullptr) PumpVerbs();  // the channel's send queue frees entries
  }
  while (remote_[observer] != nullptr && remote_[observer]->word_in_flight() &&
         !deadline.expired()) {
    worker_->Progress();
  }
  // A write is on the wire once posted; its completion says the observer's HCA took it.
  while (verbs_messages_ != nullptr && verbs_messages_->awaiting(observer) && !deadline.expired()) {
    PumpVerbs();
  }
}

void ControlPlane::Kill(Rank rank) {
  // Fail-stop: the launcher kills it (a hung process never ends itself). The call blocks
  // until the launcher acted, so it runs beside the control loop.
  killers_.emplace_back([this, rank] {
    const Status status = job_->Abort(0, "rft: declared failed (fail-stop)", RankSet{rank});
    if (!status.ok()) {
      RFT_LOG_ERROR("could not have rank %u killed: %s", rank, status.ToString().c_str());
    }
  });
}

void ControlPlane::DeclaredFailed(Rank by) {
  // Never undone: the others already completed everything that depended on this process.
  RFT_LOG_ERROR("this process was declared failed (news from rank %u): ending (fail-stop)", by);
  std::fflush(nullptr);
  // Through the launcher, like every fail-stop kill (it is then a death the launcher caused,
  // not a crash); exiting is the fallback if the launcher does not act.
  (void)job_->Abort(0, "rft: declared failed (fail-stop)", RankSet{self_});
  _exit(1);
}

void ControlPlane::OnPeerFailed(Rank rank, const Status& why) {
  RFT_LOG_DEBUG("control plane: %s", why.ToString().c_str());
  registry_->Report(rank, FailureSource::kTransport);
}

ucs_status_t ControlPlane::OnActiveMessage(void* arg, const void*, size_t, void* data,
                                           size_t length, const ucp_am_recv_param_t*) {
  static_cast<ControlPlane*>(arg)->HandleControlMessage(
      std::span<const std::byte>(static_cast<const std::byte*>(data), length));
  return UCS_OK;
}

void ControlPlane::HandleControlMessage(std::span<const std::byte> message) {
  WireHeader header;
  // Any job rank: a replacement may speak to the detector before this process grew.
  if (transport::DecodeMessage(message, job_token_, kMaxRank + 1, &header) != DecodeError::kNone ||
      header.type != MessageType::kControl) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const std::span<const std::byte> payload = message.subspan(kWireHeaderSize);
  const transport::ControlService service = transport::ControlFlagsService(header.flags);
  const uint8_t kind = transport::ControlFlagsKind(header.flags);
  if (tearing_down_) {
    // A peer's ring repair or broadcast reaching a process that is closing: nothing to act on
    // (seen in CI: an observe request during the close made PutHeartbeat use the endpoints).
    // A departure is still recorded, unanswered: the endpoint table's teardown then stops
    // waiting for that peer's flush (EndpointTable::WatchDepartures).
    if (service == kDetectorService && kind == kDeparture && payload.empty()) {
      registry_->Depart(header.source);
    }
    return;
  }
  if (service != kDetectorService && header.source >= size()) {
    dropped_.fetch_add(1, std::memory_order_relaxed);  // services know the ranks of the job
    return;
  }
  if (service != kDetectorService) {
    ControlServiceHandler* handler = HandlerOf(service);
    if (handler == nullptr) {
      KeepForService(service, header.source, kind, payload);
    } else {
      handler->OnControlMessage(header.source, kind, payload);
    }
    return;
  }
  const size_t start = actions_.size();
  if (kind == kObserveRequest && payload.size() == 8 &&
      LoadLittleEndian<uint32_t>(payload, 4) - 1 <= kMaxRank) {
    const uint32_t generation = LoadLittleEndian<uint32_t>(payload, 0);
    const Rank requester_size = LoadLittleEndian<uint32_t>(payload, 4);
    node_.OnObserveRequest(header.source, generation, requester_size, MonotonicNanos(), &actions_);
    Execute(start);
  } else if (kind == kDeparture && payload.empty()) {
    OnDeparture(header.source);
  } else if (kind == kDepartureAck && payload.empty()) {
    departure_acks_.Insert(header.source);
  } else if (kind == internal::kVerbsAddress) {
    OnVerbsAddress(header.source, payload);
  } else if (kind == internal::kVerbsOffer) {
    OnVerbsOffer(header.source, payload);
  } else if (kind == internal::kVerbsDecline) {
    OnVerbsDecline(header.source, payload);
  } else if (kind == kBroadcast) {
    auto decoded = DecodeBroadcastMessage(payload);
    if (!decoded.ok()) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    NoteLeaving();
    node_.OnBroadcastMessage(header.source, *decoded, &actions_);
    Execute(start);
  } else {
    dropped_.fetch_add(1, std::memory_order_relaxed);
  }
}

}  // namespace rft::detector
