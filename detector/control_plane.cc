#include "detector/control_plane.h"

#include <poll.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <future>
#include <memory>
#include <mutex>
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

using internal::kBroadcast;
using internal::kControlAmId;
using internal::kDeparture;
using internal::kDepartureAck;
using internal::kDetectorService;
using internal::kObserveRequest;
using internal::ServiceOfBroadcast;

// The heartbeat slots' offsets in this process's registered region: the main one, and the one
// hand-over puts go to while the job grows (HeartbeatRing, "Growth").
constexpr uint64_t kSlotOffset = 0;
constexpr uint64_t kHandoverSlotOffset = 8;
constexpr size_t kRegionSize = 64;
// The control thread's name, by which an observer on the same node finds it in /proc.
constexpr char kControlThreadName[] = "rft-control";

// Watching every process of a big node would cost a blocked thread each; the nearest ones
// suffice, the broadcast tells the rest.
constexpr size_t kMaxWatched = DeathWatch::kWatcherSlots;

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
  auto transport = config::GetString("RFT_TRANSPORT");
  if (!transport.ok()) return transport.status();
  options.verbs_heartbeats = *transport != "ucx";
  auto sockets = config::GetBool("RFT_CONTROL_SOCKETS");
  if (!sockets.ok()) return sockets.status();
  options.local_sockets = *sockets;
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
      node_(job->rank(), job->size(),
            {.heartbeat = options.heartbeat,
             .enforce_fail_stop = options.enforce_fail_stop,
             .first_word_timeout_ns = options.first_word_timeout_ns}) {}

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
    pending_.Push(PendingFailure{record, while_leaving});
  });
  // What the registry held before (a replacement is told its job's failures before it starts):
  // a record reported meanwhile may come both ways, and the cores take it once.
  for (const FailureRecord& record : registry_->Records()) {
    pending_.Push(PendingFailure{record, false});
  }
  if (options_.watch_launcher_events) {
    launcher_subscribed_ = true;
    RFT_RETURN_IF_ERROR(job_->OnTermination([this](const transport::TerminationEvent& event) {
      if (event.job_rank != kInvalidRank) {
        registry_->Report(event.job_rank, FailureSource::kLauncher);
      }
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
    control_thread_.store(std::this_thread::get_id(), std::memory_order_release);
    pthread_setname_np(pthread_self(), kControlThreadName);  // for ps, top and gdb
    internal::RaiseThreadPriority("control");
    const Status status = SetUpWorker();
    set_up_.set_value(status);
    if (status.ok()) Run();
    TearDownWorker();
    ClosePosts();
  });
  return outcome.get();
}

Status ControlPlane::SetUpWorker() {
  auto worker = transport::ucx::UcxWorker::Create(*context_);
  if (!worker.ok()) return worker.status();
  worker_ = std::move(*worker);
  RFT_RETURN_IF_ERROR(worker_->SetActiveMessageHandler(kControlAmId, &OnActiveMessage, this,
                                                       UCP_AM_FLAG_WHOLE_MSG));
  OpenLocalChannel();  // bound before the exchange publishes its name
  OpenVerbs();         // likewise its QPs
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
  AttachLocalRegions();
  // Every rank is connected (and every watcher has opened its segments): start the ring. The
  // ranks leave this fence at different times (milliseconds apart, much more on a loaded node):
  // the node excuses the silence of the first observed rank until its first heartbeat, up to
  // Options::first_word_timeout_ns. It spans the ranks that finished start-up; one dying now makes
  // PMIx's answer undefined, and the ring, which knows who failed, goes on either way.
  const Status fenced = job_->Fence(false, StartUpFenceRanks());
  if (!fenced.ok()) RFT_LOG_INFO("start-up fence: %s", fenced.ToString().c_str());
  if (watching) death_watch_->Unlink();
  node_.Start(MonotonicNanos());
  return Status::Ok();
}

namespace {

// UCX objects left to the process's end: never destroyed, still reachable (so leak checkers
// stay quiet). See TearDownWorker and ~ControlPlane for why.
void KeepUntilExit(void* object) {
  static std::mutex mutex;
  static auto* kept = new std::vector<void*>();
  const std::lock_guard<std::mutex> lock(mutex);
  kept->push_back(object);
}

}  // namespace

void ControlPlane::TearDownWorker() {
  tearing_down_ = true;
  remote_.clear();
  // UCX 1.13 aborts in ucp_worker_destroy (an assertion in ucp_request_send_state_ff, seen in
  // CI) when an endpoint to a peer that stopped answering still holds a wire-up reply. After a
  // failure, the worker and its endpoints are left to the process's end instead.
  const bool peer_failed =
      registry_->count() > 0 || (endpoints_ != nullptr && !endpoints_->failed_ranks().empty());
  if (peer_failed) {
    KeepUntilExit(endpoints_.release());
    KeepUntilExit(worker_.release());
    return;
  }
  // Peers that ended before this process, or end while it tears down: a flush to them is never
  // acknowledged (over RC it took the whole teardown bound), so it is not waited for.
  if (endpoints_ != nullptr) {
    endpoints_->WatchDepartures([this](Rank rank) { return registry_->IsDeparted(rank); });
  }
  endpoints_.reset();
  worker_.reset();
}

void ControlPlane::AttachLocalRegions() {
  // Same-node peers' heartbeat regions are attached now, while they are alive (they published
  // a moment ago). Attached later, when the ring makes one the observer, the peer may be dying
  // (3 of 4 ranks killing themselves at once): its shared-memory segment is gone and UCX 1.13's
  // ucp_ep_rkey_unpack crashes in its own error path. An attachment made now keeps the segment
  // whatever becomes of its owner. Other nodes' regions attach on first use (no shared memory).
  for (Rank peer : same_node_) AttachLocalRegion(peer);
}

void ControlPlane::AttachLocalRegion(Rank peer) {
  // One that ended since it published (killed during the start-up) has no segment left to
  // attach, and UCX's failed attach is the crash-prone path (TSan also flags it).
  if (peer == self_ || peer >= size() || missing_at_start_.Contains(peer) ||
      registry_->IsFailed(peer) || remote_[peer] != nullptr || region_descriptors_[peer].empty() ||
      LocalPeerEnded(peer)) {
    return;
  }
  // Heartbeats to it go by RDMA WRITE (PutHeartbeat): no UCX endpoint to open, and none to
  // flush at the end.
  if (WritesHeartbeatsTo(peer)) return;
  auto ep = endpoints_->Get(peer);
  if (!ep.ok()) return;
  auto region = transport::ucx::RemoteRegion::Attach(worker_.get(), *ep, region_descriptors_[peer]);
  if (region.ok()) {
    remote_[peer] = std::move(*region);
  } else {
    RFT_LOG_INFO("heartbeat region of rank %u not attached at once: %s", peer,
                 region.status().ToString().c_str());
  }
}

Status ControlPlane::Exchange() {
  PeerRecord mine;
  mine.pid = static_cast<uint32_t>(getpid());  // Starved reads its /proc entries
  mine.region_descriptor = slots_->descriptor();
  if (death_watch_ != nullptr) mine.death_watch_segment = death_watch_->name();
  if (local_ != nullptr) mine.control_socket = local_->name();
  mine.verbs_qps = VerbsRecordPart();
  const std::span<const std::byte> address = worker_->address();
  mine.worker_address.assign(address.begin(), address.end());
  auto published = job_->ExchangeLive("rft.control", EncodePeerRecord(mine));
  if (!published.ok()) return published.status();
  // A rank that ended or hung during start-up is failed from the first call on; a hung one is
  // killed (fail-stop), so that nobody goes on with a rank the others left out.
  for (Rank r : published->missing) {
    if (registry_->IsFailed(r)) continue;  // known before (a replacement is told its job's)
    const bool silent = published->silent.Contains(r);
    RFT_LOG_WARN("rank %u %s during start-up: it is failed", r,
                 silent ? "did not publish its address" : "ended");
    registry_->Report(r, silent ? FailureSource::kStartup : FailureSource::kLauncher);
    if (silent && options_.enforce_fail_stop) Kill(r);
  }
  // A replacement reads its parents' records too, the dead ones' included (they stay
  // published): the failures it was told of (in the registry already) are not connected to.
  for (Rank r = 0; r < size_; ++r) {
    if (r != self_ && registry_->IsFailed(r) && !published->missing.Contains(r)) {
      published->missing.Insert(r);
      published->values[r].clear();
    }
  }
  missing_at_start_ = published->missing;

  std::vector<std::vector<std::byte>> addresses(size_);
  std::vector<std::string> sockets(size_);
  std::vector<std::vector<std::byte>> verbs_qps(size_);
  region_descriptors_.resize(size_);
  death_watch_segments_.assign(size_, std::string());
  pids_.assign(size_, 0);
  remote_.resize(size_);
  for (Rank r = 0; r < size_; ++r) {
    if (published->missing.Contains(r)) continue;
    auto record = DecodePeerRecord(published->values[r], r);
    if (!record.ok()) return record.status();
    pids_[r] = static_cast<pid_t>(record->pid);
    region_descriptors_[r] = std::move(record->region_descriptor);
    death_watch_segments_[r] = std::move(record->death_watch_segment);
    addresses[r] = std::move(record->worker_address);
    sockets[r] = std::move(record->control_socket);
    verbs_qps[r] = std::move(record->verbs_qps);
  }
  ConnectLocalPeers(sockets);
  // Before the start-up fence that follows: no rank writes a heartbeat before every QP to it is
  // ready to take it.
  ConnectVerbs(verbs_qps);
  transport::ucx::EndpointTable::Options table_options;
  table_options.failed = published->missing;
  table_options.owner = "control plane";
  // When the verbs channel reaches every live peer it made QPs for (its static neighbours),
  // UCX only carries what does not fit a slot and, after failures, what goes to other peers: its
  // endpoints are made on first use, not all at once (nor flushed at the end).
  bool all_by_verbs = verbs_messages_ != nullptr;
  if (all_by_verbs) {
    for (Rank r : RecordPeers()) {
      if (!published->missing.Contains(r) && !verbs_message_peers_.Contains(r)) {
        all_by_verbs = false;
        break;
      }
    }
  }
  if (all_by_verbs) table_options.connect_all_max = 0;
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
      if (pending_.HasItems()) HandleWork();
      Depart();
      SayFarewell();
    }
    TearDownWorker();
    ClosePosts();
  }
  for (std::thread& killer : killers_) killer.join();
  death_watch_.reset();
  // The heartbeat slot stays mapped, with its context, until the process ends: UCX places it in
  // a shared-memory segment that a same-node peer attaches when this process becomes its
  // observer, and UCX 1.13 crashes in ucp_ep_rkey_unpack's error path when the segment is gone
  // (seen in CI: a peer re-attached while this process was ending normally). Mapped, the
  // segment lives as long as this process.
  KeepUntilExit(slots_.release());
  KeepUntilExit(context_.release());
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
  const bool forever = wait_ns == HeartbeatRing::kNoTimer;
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
        RFT_LOG_WARN("rank %u sent no heartbeat for %lld ms: declared failed", report->rank,
                     static_cast<long long>(options_.heartbeat.timeout_ns / 1000000));
      }
      registry_->Report(report->rank, report->source);
    } else if (const auto* kill = std::get_if<KillRank>(&action)) {
      Kill(kill->rank);
    } else if (const auto* end = std::get_if<EndSelf>(&action)) {
      DeclaredFailed(end->by);
    } else if (const auto* deliver = std::get_if<DeliverBroadcast>(&action)) {
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
