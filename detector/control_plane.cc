#include "detector/control_plane.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <future>
#include <string>

#include "base/byte_order.h"
#include "base/config.h"
#include "base/log.h"
#include "detector/control_subtype.h"
#include "detector/peer_record.h"
#include "detector/thread_priority.h"
#include "detector/thread_state.h"
#include "transport/wire/wire_header.h"

namespace rft::detector {
namespace {

using transport::DecodeError;
using transport::kWireHeaderSize;
using transport::MessageType;
using transport::WireHeader;

// The control plane's active-message id on its own worker (the data plane's is 1).
constexpr unsigned kControlAmId = 2;
using internal::kBroadcast;
using internal::kDeparture;
using internal::kDepartureAck;
using internal::kObserveRequest;
// The heartbeat slot's offset in this process's registered region.
constexpr uint64_t kSlotOffset = 0;
constexpr size_t kRegionSize = 64;
// A heartbeat counter that says "I am ending cleanly": the observer stops expecting puts. A
// real counter reaches it only after 2^32 - 1 puts (197 days at 4 ms), and then only until
// its next put.
constexpr uint32_t kFarewellCounter = UINT32_MAX;
// The control thread's name, by which an observer on the same node finds it in /proc.
constexpr char kControlThreadName[] = "rft-control";
// A starved peer is excused for at most this many timeouts of silence.
constexpr int64_t kMaxStarvedTimeouts = 10;

// Watching every process of a big node would cost a blocked thread each; the nearest ones
// suffice, the broadcast tells the rest.
constexpr size_t kMaxWatched = DeathWatch::kWatcherSlots;

// A control message in flight: UCX 1.13 does not copy what it sends, so the bytes live here
// until UCX calls back. Control messages are rare (failures, ring repairs): a heap block each.
struct ControlSend {
  std::vector<std::byte> bytes;
};

void OnControlSent(void* request, ucs_status_t, void* user_data) {
  ucp_request_free(request);
  delete static_cast<ControlSend*>(user_data);
}

}  // namespace

StatusOr<ControlPlane::Options> ControlPlane::OptionsFromConfig() {
  Options options;
  auto period = config::GetDuration("RFT_HEARTBEAT_PERIOD");
  if (!period.ok()) return period.status();
  auto timeout = config::GetDuration("RFT_HEARTBEAT_TIMEOUT");
  if (!timeout.ok()) return timeout.status();
  auto thread = config::GetBool("RFT_PROGRESS_THREAD");
  if (!thread.ok()) return thread.status();
  options.heartbeat.period_ns = period->count();
  options.heartbeat.timeout_ns = timeout->count();
  options.progress_thread = *thread;
  if (options.heartbeat.timeout_ns <= 2 * options.heartbeat.period_ns) {
    return ArgError("RFT_HEARTBEAT_TIMEOUT of " + std::to_string(timeout->count() / 1000) +
                    " us: expected more than twice RFT_HEARTBEAT_PERIOD (" +
                    std::to_string(period->count() / 1000) + " us), or one late heartbeat " +
                    "would declare a live process dead");
  }
  return options;
}

ControlPlane::ControlPlane(transport::Bootstrap* job, FailureRegistry* registry,
                           const Options& options)
    : job_(job),
      registry_(registry),
      options_(options),
      self_(job->rank()),
      size_(job->size()),
      job_token_(job->job_token()),
      broadcast_(job->rank(), job->size()) {}

StatusOr<std::unique_ptr<ControlPlane>> ControlPlane::Create(transport::Bootstrap* job,
                                                             FailureRegistry* registry,
                                                             const Options& options) {
  if (registry->self() != job->rank() || registry->size() != job->size()) {
    return ArgError("control plane: the registry is for rank " + std::to_string(registry->self()) +
                    " of " + std::to_string(registry->size()) + ", the job says rank " +
                    std::to_string(job->rank()) + " of " + std::to_string(job->size()));
  }
  std::unique_ptr<ControlPlane> plane(new ControlPlane(job, registry, options));
  RFT_RETURN_IF_ERROR(plane->Start());
  return plane;
}

Status ControlPlane::Start() {
  RFT_RETURN_IF_ERROR(pending_.Open());
  auto context = transport::ucx::UcxContext::Create();
  if (!context.ok()) return context.status();
  context_ = std::move(*context);
  auto slots = transport::ucx::LocalRegion::Allocate(*context_, kRegionSize);
  if (!slots.ok()) return slots.status();
  slots_ = std::move(*slots);
  std::memset(slots_->data(), 0, kRegionSize);
  // Listen before any source can report (the death watch starts below): failures of the
  // start-up are queued for the thread and fed to the cores once they run.
  subscription_ = registry_->Subscribe([this](const FailureRecord& record) {
    const bool while_leaving = stop_.load(std::memory_order_acquire) ||
                               departure_requested_.load(std::memory_order_acquire);
    pending_.Push({record, while_leaving});
  });
  if (options_.watch_launcher_events) {
    launcher_subscribed_ = true;
    RFT_RETURN_IF_ERROR(job_->OnTermination([this](const transport::TerminationEvent& event) {
      if (event.nspace == job_->nspace()) registry_->Report(event.rank, FailureSource::kLauncher);
    }));
  }
  if (options_.watch_local_exits) {
    auto watch = DeathWatch::Create(job_->job_tag(), self_, [this](Rank rank) {
      registry_->Report(rank, FailureSource::kProcessExit);
    });
    if (watch.ok()) {
      death_watch_ = std::move(*watch);
    } else {
      RFT_LOG_INFO("no death watch (%s): local crashes are seen by the launcher or heartbeats",
                   watch.status().ToString().c_str());
    }
  }
  if (!options_.progress_thread) return SetUpWorker();
  // A UCX worker belongs to the thread that created it (UCX 1.18 asserts that only that thread
  // progresses it): the control thread creates, uses and destroys it.
  // The promise is a member: set_value may still be inside the shared state when the waiting
  // caller wakes, and the promise's reference keeps that state alive until the thread is joined.
  std::future<Status> outcome = set_up_.get_future();
  thread_ = std::thread([this] {
    pthread_setname_np(pthread_self(), kControlThreadName);  // found by Starved()
    internal::RaiseThreadPriority("control");
    const Status status = SetUpWorker();
    set_up_.set_value(status);
    if (status.ok()) Run();
    TearDownWorker();
  });
  return outcome.get();
}

Status ControlPlane::SetUpWorker() {
  auto worker = transport::ucx::UcxWorker::Create(*context_);
  if (!worker.ok()) return worker.status();
  worker_ = std::move(*worker);
  RFT_RETURN_IF_ERROR(worker_->SetActiveMessageHandler(kControlAmId, &OnActiveMessage, this,
                                                       UCP_AM_FLAG_WHOLE_MSG));
  RFT_RETURN_IF_ERROR(Exchange());
  const bool watching = death_watch_ != nullptr;
  if (watching) {
    // The local ranks after this one, around the node's ring.
    const RankSet& local = job_->local_peers();
    const size_t count = local.size();
    const size_t me = local.IndexOf(self_).value_or(0);
    for (size_t i = 1; i < count && i <= kMaxWatched; ++i) {
      const Rank peer = local.Nth((me + i) % count);
      // The peer's i-th watcher before it (around the ring) is this process: slot i - 1.
      // Only a segment the peer advertised: a peer without one (its Create failed) is alive
      // and watched by the other sources; a segment that cannot be opened says nothing of its
      // process either.
      if (death_watch_segments_[peer].empty()) continue;
      const Status watched = death_watch_->Watch(peer, death_watch_segments_[peer], i - 1);
      if (!watched.ok()) {
        RFT_LOG_INFO("not watching rank %u: %s", peer, watched.ToString().c_str());
      }
    }
  }
  // Every rank is connected (and every watcher has opened its segments): start the ring. All
  // ranks leave this fence within a few milliseconds of each other, well inside a timeout. It
  // spans the ranks that finished start-up; one dying now makes PMIx's answer undefined, and
  // the ring, which knows who failed, goes on either way.
  const Status fenced = job_->Fence(false, StartedRanks());
  if (!fenced.ok()) RFT_LOG_INFO("start-up fence: %s", fenced.ToString().c_str());
  if (watching) death_watch_->Unlink();
  ring_.emplace(self_, size_, options_.heartbeat, MonotonicNanos());
  return Status::Ok();
}

void ControlPlane::TearDownWorker() {
  tearing_down_ = true;
  remote_.clear();
  endpoints_.reset();
  worker_.reset();
}

Status ControlPlane::Exchange() {
  PeerRecord mine;
  mine.pid = static_cast<uint32_t>(getpid());  // Starved reads its /proc entries
  mine.region_descriptor = slots_->descriptor();
  if (death_watch_ != nullptr) mine.death_watch_segment = death_watch_->name();
  const std::span<const std::byte> address = worker_->address();
  mine.worker_address.assign(address.begin(), address.end());
  auto published = job_->ExchangeLive("rft.control", EncodePeerRecord(mine));
  if (!published.ok()) return published.status();
  missing_at_start_ = published->missing;
  // A rank that ended or hung during start-up is failed from the first call on; a hung one is
  // killed (fail-stop), so that nobody goes on with a rank the others left out.
  for (Rank r : published->missing) {
    const bool silent = published->silent.Contains(r);
    RFT_LOG_WARN("rank %u %s during start-up: it is failed", r,
                 silent ? "did not publish its address" : "ended");
    registry_->Report(r, silent ? FailureSource::kStartup : FailureSource::kLauncher);
    if (silent && options_.enforce_fail_stop) Kill(r);
  }

  std::vector<std::vector<std::byte>> addresses(size_);
  region_descriptors_.resize(size_);
  death_watch_segments_.assign(size_, std::string());
  pids_.assign(size_, 0);
  control_tids_.assign(size_, 0);
  remote_.resize(size_);
  for (Rank r = 0; r < size_; ++r) {
    if (published->missing.Contains(r)) continue;
    auto record = DecodePeerRecord(published->values[r], r);
    if (!record.ok()) return record.status();
    pids_[r] = static_cast<pid_t>(record->pid);
    region_descriptors_[r] = std::move(record->region_descriptor);
    death_watch_segments_[r] = std::move(record->death_watch_segment);
    addresses[r] = std::move(record->worker_address);
  }
  transport::ucx::EndpointTable::Options table_options;
  table_options.failed = published->missing;
  auto table = transport::ucx::EndpointTable::Create(worker_.get(), self_, std::move(addresses),
                                                     this, table_options);
  if (!table.ok()) return table.status();
  endpoints_ = std::move(*table);
  return Status::Ok();
}

ControlPlane::~ControlPlane() {
  subscription_.Reset();
  if (launcher_subscribed_) (void)job_->OnTermination(nullptr);
  stop_.store(true, std::memory_order_release);
  if (pending_.fd() >= 0) pending_.Wake();
  if (thread_.joinable()) {
    thread_.join();  // it says farewell and destroys its worker on its way out
  } else {
    if (endpoints_ != nullptr) {
      if (pending_.HasItems()) HandleFailures();
      Depart();
      SayFarewell();
    }
    TearDownWorker();
  }
  for (std::thread& killer : killers_) killer.join();
  death_watch_.reset();
  slots_.reset();
  context_.reset();
}

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
  if (pending_.HasItems()) HandleFailures();
  Depart();  // if nobody asked before: still before the endpoints close
  SayFarewell();
}

Status ControlPlane::Step(int64_t timeout_ns) {
  if (pending_.HasItems()) HandleFailures();
  if (worker_->Progress() > 0) armed_ = false;
  HandleTimer();

  // Sleep until the next tick, a message, a failure report or a local exit.
  const int64_t now = MonotonicNanos();
  const int64_t next = ring_.has_value() ? ring_->next_timer_ns() : HeartbeatRing::kNoTimer;
  int64_t wait_ns = next == HeartbeatRing::kNoTimer ? timeout_ns : next - now;
  if (wait_ns > timeout_ns) wait_ns = timeout_ns;
  if (wait_ns <= 0) return Status::Ok();
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
  pollfd fds[2] = {{worker_->event_fd(), POLLIN, 0}, {pending_.fd(), POLLIN, 0}};
  timespec ts;
  const bool forever = wait_ns == HeartbeatRing::kNoTimer;
  ts.tv_sec = static_cast<time_t>(wait_ns / 1000000000);
  ts.tv_nsec = static_cast<long>(wait_ns % 1000000000);
  const int ready = ppoll(fds, 2, forever ? nullptr : &ts, nullptr);
  if (ready < 0 && errno != EINTR) return OtherError(std::string("ppoll: ") + std::strerror(errno));
  if (ready > 0 && fds[0].revents != 0) armed_ = false;
  if (ready > 0 && fds[1].revents != 0) pending_.ClearWakeups();
  return Status::Ok();
}

void ControlPlane::HandleFailures() {
  std::vector<PendingFailure> records;
  pending_.Drain(&records);
  const int64_t now = MonotonicNanos();
  for (const auto& [record, while_leaving] : records) {
    // Fail-stop whatever the source: a rank this process declared failed on news that does not
    // prove it dead (a transport error, the caller's word, an agreement) may be alive; it is
    // told (so it ends itself even at n = 2, where nobody else would forward the news) and
    // killed through the launcher. Deaths the launcher or the kernel reported need neither;
    // heartbeat and start-up suspects were killed when declared.
    const bool maybe_alive = record.source == FailureSource::kTransport ||
                             record.source == FailureSource::kApplication ||
                             record.source == FailureSource::kAgreement;
    // A process on its way out sees its own endpoints close: what its sources say then is not
    // news, and acting on it would kill live peers. It only keeps its own view consistent.
    const bool leaving = while_leaving;
    if (maybe_alive && !leaving) {
      TellDeclaredFailed(record.rank);
      if (options_.enforce_fail_stop) Kill(record.rank);
    }
    endpoints_->MarkFailed(record.rank);
    heartbeat_actions_.clear();
    ring_->OnFailure(record.rank, now, &heartbeat_actions_);
    Execute(heartbeat_actions_);
    broadcast_actions_.clear();
    broadcast_.OnFailure(record.rank, &broadcast_actions_);
    if (record.source != FailureSource::kPropagated && !leaving) {
      // News from this process's own sources spreads; a message it forwards already does.
      broadcast_.Broadcast({.kind = BroadcastKind::kFailure,
                            .context = 0,
                            .epoch = 0,
                            .origin = self_,
                            .subject = record.rank},
                           &broadcast_actions_);
    }
    Execute(broadcast_actions_);
  }
  endpoints_->CloseFailed();
}

void ControlPlane::HandleTimer() {
  if (!ring_.has_value()) return;
  const int64_t now = MonotonicNanos();
  if (now < ring_->next_timer_ns()) return;
  // The slot is written by the observed process's puts: read it as an atomic word.
  uint64_t word =
      std::atomic_ref<uint64_t>(*reinterpret_cast<uint64_t*>(slots_->data() + kSlotOffset))
          .load(std::memory_order_acquire);
  const Rank observed = ring_->observed();
  if (word != last_slot_word_ || observed != last_observed_) {
    last_slot_word_ = word;
    last_observed_ = observed;
    last_slot_change_ns_ = now;
  }
  if (word == EncodeHeartbeatWord(observed, kFarewellCounter)) {
    // It ended cleanly: its silence from now on is no failure. Fed as progress, so the core
    // never suspects it (a later real put replaces the word and ends this).
    word = EncodeHeartbeatWord(observed, ++synthetic_counter_);
  } else if (observed != kInvalidRank &&
             now - last_slot_change_ns_ >= options_.heartbeat.timeout_ns / 2 &&
             now - last_slot_change_ns_ < kMaxStarvedTimeouts * options_.heartbeat.timeout_ns &&
             Starved(observed)) {
    // Silent, but its control thread is runnable and waiting for a core (the node is loaded
    // beyond its cores, or the hypervisor took the CPU): slow, not failed. A stopped or
    // blocked thread is not excused, nor one starved for many timeouts.
    word = EncodeHeartbeatWord(observed, ++synthetic_counter_);
    starved_ticks_.fetch_add(1, std::memory_order_relaxed);
  }
  const uint64_t late_before = ring_->late_ticks();
  heartbeat_actions_.clear();
  ring_->OnTimer(now, word, &heartbeat_actions_);
  if (ring_->late_ticks() != late_before) late_ticks_.fetch_add(1, std::memory_order_relaxed);
  Execute(heartbeat_actions_);
}

void ControlPlane::Execute(const std::vector<HeartbeatAction>& actions) {
  for (const HeartbeatAction& action : actions) {
    if (const auto* put = std::get_if<detector::PutHeartbeat>(&action)) {
      PutHeartbeat(put->observer, put->word);
    } else if (const auto* suspect = std::get_if<Suspect>(&action)) {
      suspicions_.fetch_add(1, std::memory_order_relaxed);
      RFT_LOG_WARN("rank %u sent no heartbeat for %lld ms: declared failed", suspect->rank,
                   static_cast<long long>(options_.heartbeat.timeout_ns / 1000000));
      registry_->Report(suspect->rank, FailureSource::kHeartbeat);
      if (options_.enforce_fail_stop) Kill(suspect->rank);
    } else if (const auto* request = std::get_if<SendObserveRequest>(&action)) {
      std::array<std::byte, 4> payload;
      StoreLittleEndian<uint32_t>(payload, 0, request->generation);
      SendControl(request->to, kObserveRequest, payload);
    }
  }
}

void ControlPlane::Execute(const std::vector<BroadcastAction>& actions) {
  for (const BroadcastAction& action : actions) {
    if (const auto* send = std::get_if<SendBroadcast>(&action)) {
      std::array<std::byte, kBroadcastMessageSize> payload;
      EncodeBroadcastMessage(send->message, payload);
      SendControl(send->to, kBroadcast, payload);
    } else if (const auto* deliver = std::get_if<DeliverBroadcast>(&action)) {
      const BroadcastMessage& message = deliver->message;
      if (message.kind != BroadcastKind::kFailure) continue;  // revoke: the API layer's, later
      if (message.subject == self_) {
        // A process already ending (its destructor runs) is leaving anyway: the others may
        // record its clean end as a failure (its endpoints closed), which must not turn its
        // end into an exit status 1.
        if (!stop_.load(std::memory_order_acquire) &&
            !departure_requested_.load(std::memory_order_acquire)) {
          DeclaredFailed(message.origin);
        }
        continue;
      }
      registry_->Report(static_cast<Rank>(message.subject), FailureSource::kPropagated);
    }
  }
}

bool ControlPlane::Starved(Rank rank) {
  if (!job_->local_peers().Contains(rank) || pids_[rank] <= 0) return false;  // no /proc view
  if (control_tids_[rank] == 0) {
    control_tids_[rank] = internal::FindThread(pids_[rank], kControlThreadName);
  }
  return control_tids_[rank] != 0 && internal::ThreadState(pids_[rank], control_tids_[rank]) == 'R';
}

bool ControlPlane::PutHeartbeat(Rank observer, uint64_t word) {
  if (observer >= size_ || registry_->IsFailed(observer)) return true;
  if (remote_[observer] == nullptr) {
    auto ep = endpoints_->Get(observer);
    if (!ep.ok()) return true;  // failed meanwhile: the ring repairs itself on the news
    auto region =
        transport::ucx::RemoteRegion::Attach(worker_.get(), *ep, region_descriptors_[observer]);
    if (!region.ok()) {
      RFT_LOG_ERROR("heartbeat region of rank %u: %s", observer,
                    region.status().ToString().c_str());
      return true;
    }
    remote_[observer] = std::move(*region);
  }
  auto posted = remote_[observer]->PostWord(kSlotOffset, word);
  if (!posted.ok()) return true;
  if (*posted) heartbeats_put_.fetch_add(1, std::memory_order_relaxed);
  return *posted;
}

void ControlPlane::SayFarewell() {
  if (!ring_.has_value()) return;
  const Rank observer = ring_->observer();
  if (observer == kInvalidRank) return;
  // Bounded: a stopped observer must not hold up this process's end.
  const Deadline deadline = Deadline::After(std::chrono::milliseconds(20));
  while (!PutHeartbeat(observer, EncodeHeartbeatWord(self_, kFarewellCounter)) &&
         !deadline.expired()) {
    worker_->Progress();
  }
  while (remote_[observer] != nullptr && remote_[observer]->word_in_flight() &&
         !deadline.expired()) {
    worker_->Progress();
  }
}

void ControlPlane::SendControl(Rank to, uint16_t subtype, std::span<const std::byte> payload) {
  auto ep = endpoints_->Get(to);
  if (!ep.ok()) return;  // failed: nothing to tell it
  auto* send = new ControlSend();
  send->bytes.resize(kWireHeaderSize + payload.size());
  WireHeader header;
  header.type = MessageType::kControl;
  header.flags = subtype;
  header.source = self_;
  header.length = payload.size();
  header.job_token = job_token_;
  transport::EncodeHeader(
      header, std::span<std::byte, kWireHeaderSize>(send->bytes.data(), kWireHeaderSize));
  if (!payload.empty()) {  // a departure has none (and memcpy from null is undefined)
    std::memcpy(send->bytes.data() + kWireHeaderSize, payload.data(), payload.size());
  }
  ucp_request_param_t param;
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_AM_SEND_FLAG_EAGER;
  param.cb.send = &OnControlSent;
  param.user_data = send;
  void* request = ucp_am_send_nbx(*ep, kControlAmId, nullptr, 0, send->bytes.data(),
                                  send->bytes.size(), &param);
  if (!UCS_PTR_IS_PTR(request) || request == nullptr) delete send;  // done, or failed at once
}

RankSet ControlPlane::StartedRanks() const {
  return RankSet::Range(0, size_).Difference(missing_at_start_);
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

void ControlPlane::TellDeclaredFailed(Rank rank) {
  std::array<std::byte, kBroadcastMessageSize> payload;
  EncodeBroadcastMessage(
      {.kind = BroadcastKind::kFailure, .context = 0, .epoch = 0, .origin = self_, .subject = rank},
      payload);
  SendControl(rank, kBroadcast, payload);
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
  auto* self = static_cast<ControlPlane*>(arg);
  // A peer's ring repair or broadcast reaching a process that is closing: nothing to act on
  // (seen in CI: an observe request during the close made PutHeartbeat use the endpoints).
  if (self->tearing_down_) return UCS_OK;
  const std::span<const std::byte> message(static_cast<const std::byte*>(data), length);
  WireHeader header;
  if (transport::DecodeMessage(message, self->job_token_, self->size_, &header) !=
          DecodeError::kNone ||
      header.type != MessageType::kControl) {
    self->dropped_.fetch_add(1, std::memory_order_relaxed);
    return UCS_OK;
  }
  const std::span<const std::byte> payload = message.subspan(kWireHeaderSize);
  if (header.flags == kObserveRequest && payload.size() == 4 && self->ring_.has_value()) {
    const uint32_t generation = LoadLittleEndian<uint32_t>(payload, 0);
    self->heartbeat_actions_.clear();
    self->ring_->OnObserveRequest(header.source, generation, MonotonicNanos(),
                                  &self->heartbeat_actions_);
    self->Execute(self->heartbeat_actions_);
  } else if (header.flags == kDeparture && payload.empty()) {
    self->OnDeparture(header.source);
  } else if (header.flags == kDepartureAck && payload.empty()) {
    self->departure_acks_.Insert(header.source);
  } else if (header.flags == kBroadcast) {
    auto decoded = DecodeBroadcastMessage(payload);
    if (!decoded.ok()) {
      self->dropped_.fetch_add(1, std::memory_order_relaxed);
      return UCS_OK;
    }
    self->broadcast_actions_.clear();
    self->broadcast_.OnMessage(header.source, *decoded, &self->broadcast_actions_);
    self->Execute(self->broadcast_actions_);
  } else {
    self->dropped_.fetch_add(1, std::memory_order_relaxed);
  }
  return UCS_OK;
}

}  // namespace rft::detector
