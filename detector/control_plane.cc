// The control plane's set-up (options, its UCX worker and registered region, the exchange of
// records, the death watch) and tear-down; its thread's loop is in control_loop.cc.
#include "detector/control_plane.h"

#include <unistd.h>

#include <cstring>
#include <future>
#include <memory>
#include <mutex>
#include <string>

#include "base/config.h"
#include "base/log.h"
#include "detector/control_subtype.h"
#include "detector/peer_record.h"
#include "detector/thread_priority.h"

namespace rft::detector {
namespace {

using internal::kControlAmId;
using internal::kRegionSize;

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

}  // namespace rft::detector
