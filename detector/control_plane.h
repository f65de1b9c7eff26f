// rft::detector::ControlPlane: the driver that binds the detector's protocol cores to the real
// transport and runs them in a thread of their own (DESIGN.md §1, docs/detector.md).
//
// It owns a UCX context and worker separate from the data plane's, so heartbeats flow while the
// application computes, and the data plane's fast path shares nothing with it but the failure
// registry. What it does:
// - The protocol (DetectorNode, sans-I/O, the same object the simulator drives): the heartbeat
//   ring puts a counter word into its observer's registered slot every period (one-sided,
//   UCX-allocated memory, never waiting for completion) and checks the word in its own slot; a
//   suspect is reported (FailureSource::kHeartbeat) and killed through the launcher (fail-stop),
//   and the ring is repaired. Every failure this process learns from its own sources is
//   broadcast reliably; delivered failures go to the registry.
// - Local deaths: the processes on this node watch each other through robust mutexes
//   (DeathWatch), so a crash there is known as the kernel starts tearing the process down
//   (FailureSource::kProcessExit), before the launcher's event or a heartbeat timeout.
// - Launcher events: the bootstrap's termination callback reports to the registry.
// - Fail-stop: a process that is told it was declared failed exits at once.
// - Services: other protocols (revoke, agreement) are hosted beside the detector. Each gets the
//   control messages of its service id (transport::ControlService) and the reliable broadcasts
//   of its kind, and can send, broadcast, set timers and post work to the control thread, all
//   without the others knowing of it (docs/detector.md, "Services").
// - Clean end: the destructor puts a farewell word to the observer, which then no longer
//   expects heartbeats from it (processes end at different times; silence is not a failure).
// - Starved, not hung: a same-node peer silent for half a timeout with a thread runnable
//   (waiting for a core) or in an uninterruptible wait (a page fault) is excused, up to 10
//   timeouts; one whose threads are all stopped or asleep is not.
//
// Without the thread (Options::progress_thread false, RFT_PROGRESS_THREAD=n) nothing happens
// unless the program calls Poll(); a process that does not call it for longer than the
// heartbeat timeout is declared failed by its observer.
#ifndef RFT_DETECTOR_CONTROL_PLANE_H_
#define RFT_DETECTOR_CONTROL_PLANE_H_

#include <ucp/api/ucp.h>

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string_view>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "base/status.h"
#include "base/wake_queue.h"
#include "detector/death_watch.h"
#include "detector/detector_node.h"
#include "detector/failure_registry.h"
#include "detector/peer_record.h"
#include "detector/verbs_heartbeats.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/datagram/local_datagram.h"
#include "transport/ucx/endpoint_table.h"
#include "transport/ucx/memory_region.h"
#include "transport/ucx/ucx_worker.h"
#include "transport/verbs/eager_channel.h"
#include "transport/wire/wire_header.h"

namespace rft::detector {

// A protocol hosted by the control plane (ControlPlane::Host). Its callbacks run on the control
// thread (without the thread: in the caller of Poll), one at a time, and must not block.
class ControlServiceHandler {
 public:
  // A control message of this service's `kind` from `from`. `payload` lives for the call only;
  // whatever it holds came off the wire and must be checked before use. Messages that came
  // before the service was hosted (a faster peer already using it) are handed over when hosted.
  virtual void OnControlMessage(Rank from, uint8_t kind, std::span<const std::byte> payload) = 0;
  // A reliable broadcast of this service's kind (BroadcastKind::kRevoke for kRevoke) was
  // delivered here: once per key at every live process, its origin included. What was delivered
  // before the service was hosted is replayed to it when hosted.
  virtual void OnBroadcastDelivered(const BroadcastMessage& message) { (void)message; }
  // The registry recorded job rank `rank` as failed (whatever the source), after the detector
  // acted on it. Failures recorded before the service was hosted are not replayed: read them
  // from the registry when hosted (a failure may then arrive both ways).
  virtual void OnPeerFailed(Rank rank) { (void)rank; }

 protected:
  ~ControlServiceHandler() = default;
};

class ControlPlane;

// One hosted service: destroying it (or Reset) ends the hosting, and from then on the handler is
// not running and never runs again (from inside one of its own callbacks: it runs no more after
// that callback). Move-only; must not outlive its control plane.
class [[nodiscard]] HostedService {
 public:
  HostedService() = default;
  HostedService(HostedService&& other) noexcept { *this = std::move(other); }
  HostedService& operator=(HostedService&& other) noexcept;
  ~HostedService() { Reset(); }
  void Reset();
  bool active() const { return plane_ != nullptr; }

 private:
  friend class ControlPlane;
  HostedService(ControlPlane* plane, transport::ControlService service)
      : plane_(plane), service_(service) {}
  ControlPlane* plane_ = nullptr;
  transport::ControlService service_ = transport::ControlService::kDetector;
};

class ControlPlane : private transport::ucx::PeerFailureSink, private StarvationProbe {
 public:
  struct Options {
    HeartbeatConfig heartbeat;
    bool progress_thread = true;
    bool watch_launcher_events = true;  // take Bootstrap::OnTermination
    bool watch_local_exits = true;      // DeathWatch on the processes of this node
    bool enforce_fail_stop = true;      // kill suspects through the launcher
    // The ranks leave the start-up fence at different times: the first heartbeat of the rank
    // observed from the start is awaited this long, plus the timeout (DetectorNode::Options).
    int64_t first_word_timeout_ns = 1'000'000'000;
    // Heartbeats by RDMA WRITE, and control messages to the peers the same-node sockets do
    // not reach as verbs SENDs, where the host has a verbs port (verbs_heartbeats.h,
    // control_verbs.cc); false (RFT_TRANSPORT=ucx): through UCX only.
    bool verbs_heartbeats = true;
    // Same-node control messages through datagram sockets (control_local.cc); false
    // (RFT_CONTROL_SOCKETS=n): like those to other nodes, to test that path on one node.
    bool local_sockets = true;
  };
  // From RFT_HEARTBEAT_PERIOD, RFT_HEARTBEAT_TIMEOUT and RFT_PROGRESS_THREAD; RFT_ERR_ARG
  // naming the variable for a bad value or a timeout not above twice the period.
  static StatusOr<Options> OptionsFromConfig();

  // Exchanges addresses through `job` (a collective over the job), connects, and starts the
  // thread. `job` and `registry` must outlive the control plane.
  static StatusOr<std::unique_ptr<ControlPlane>> Create(transport::Bootstrap* job,
                                                        FailureRegistry* registry,
                                                        const Options& options);
  // Stops the thread and closes the endpoints.
  ~ControlPlane() override;
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  // One pass of the control loop, sleeping at most `timeout_ms` for something to do. Only
  // without the progress thread (RFT_ERR_ARG otherwise).
  Status Poll(int timeout_ms);

  // Replacements joined the job (docs/recovery.md): job ranks size()..new_size-1, which the
  // bootstrap (AddRanks) and the registry (Grow) already hold. Reads their records (waiting for
  // them up to RFT_PMIX_TIMEOUT: one that never published is failed and killed), connects to
  // them and grows the detector (DetectorNode::Grow). Messages the replacements sent to this
  // process's detector before are not lost: the detector takes them from ranks beyond its size.
  // From the thread that owns the control plane. RFT_ERR_ARG for a size not above size() or
  // beyond the bootstrap's or the registry's.
  Status AddRanks(uint32_t new_size);
  uint32_t size() const { return size_.load(std::memory_order_acquire); }

  // Tells every live peer that this process ends cleanly and waits (≤ 200 ms) until each has
  // recorded it (FailureRegistry::Depart): from then on, this process's closing endpoints and
  // silence are never taken for a failure. Call it before closing the data plane; the
  // destructor does it otherwise (later: after the data plane's endpoints may have closed).
  // Idempotent; from the thread that owns the control plane, not from a listener.
  void AnnounceDeparture();
  // Before this process has the launcher abort `ranks` (a group's abort): floods "aborted" for
  // each of them (BroadcastKind::kAborted), so the processes that outlive the abort record
  // those failures as aborts (FailureRegistry::IsAborted). Returns once the control thread has
  // sent the flood's first hops, or after 200 ms. Any thread.
  void AnnounceAborted(const RankSet& ranks);

  // Services (docs/detector.md, "Services").
  // Hosts `handler` for `service` until the returned handle ends; the deliveries it missed are
  // replayed to it first. RFT_ERR_ARG for kDetector (the plane's own) or a service already
  // hosted; RFT_ERR_OTHER once the control thread has ended. Any thread; from one that is not
  // the control thread it waits for the control thread to install the handler.
  StatusOr<HostedService> Host(transport::ControlService service, ControlServiceHandler* handler);
  // Runs `task` on the control thread at its next pass, in order with the failures handed to
  // it. Any thread. False, and `task` is dropped, once the control thread has ended.
  bool Post(std::function<void()> task);
  // Like Post, without waking the control thread when it sleeps until a timer: `task` runs at
  // its next wake: its timer when that is due within kPostSoonNs (the heartbeat's,
  // RFT_HEARTBEAT_PERIOD, 4 ms by default), else at once. For work that must happen but not now,
  // where waking the thread would preempt the caller on a busy core (the revocation's flood:
  // session.cc).
  bool PostSoon(std::function<void()> task);
  static constexpr int64_t kPostSoonNs = 20'000'000;  // PostSoon's longest wait
  // Whether the caller is the control thread (without the thread: always true, as the caller
  // of Poll owns the plane). The calls below are for the control thread only.
  bool OnControlThread() const;
  // Sends `service`'s message `kind` with `payload` to `to`: fire and forget; nothing if `to`
  // is failed or this process is tearing down.
  void Send(Rank to, transport::ControlService service, uint8_t kind,
            std::span<const std::byte> payload);
  // Starts a reliable broadcast of `message` from this process (origin set here). Not for
  // failures, which go through the registry. False if its key was delivered already, its epoch
  // is stale, or it is a failure.
  bool Broadcast(const BroadcastMessage& message);
  // Runs `task` on the control thread once MonotonicNanos() >= `at_ns`.
  void RunAt(int64_t at_ns, std::function<void()> task);

  // Kills (SIGKILL) this node's processes among `ranks`, this one excepted, by the process ids of
  // their start-up records: the last resort of an abort the launcher refused. Returns the ranks
  // it could not reach (on other nodes, or no record). Any thread, once growth is over.
  RankSet KillLocalProcesses(const RankSet& ranks) const;

  const Options& options() const { return options_; }
  // Counters, readable from any thread.
  uint64_t heartbeats_put() const { return heartbeats_put_.load(std::memory_order_relaxed); }
  // Of those, the ones written by RDMA WRITE on the message channel's QPs (verbs_heartbeats.h).
  uint64_t heartbeats_written() const {
    return heartbeats_written_.load(std::memory_order_relaxed);
  }
  // Control messages sent as UCX active messages, and sent and received as verbs SENDs
  // (control_verbs.cc), and the sleeps of the control thread a verbs completion ended.
  uint64_t messages_sent_by_ucx() const {
    return messages_sent_by_ucx_.load(std::memory_order_relaxed);
  }
  uint64_t messages_sent_by_verbs() const {
    return messages_sent_by_verbs_.load(std::memory_order_relaxed);
  }
  uint64_t messages_received_by_verbs() const {
    return messages_received_by_verbs_.load(std::memory_order_relaxed);
  }
  uint64_t verbs_wakeups() const { return verbs_wakeups_.load(std::memory_order_relaxed); }
  uint64_t suspicions() const { return suspicions_.load(std::memory_order_relaxed); }
  uint64_t late_ticks() const { return late_ticks_.load(std::memory_order_relaxed); }
  // Ticks at which a silent observed process was excused as starved, not hung.
  uint64_t starved_ticks() const { return starved_ticks_.load(std::memory_order_relaxed); }
  // Control messages dropped: malformed, or for a service nobody hosts.
  uint64_t dropped_messages() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  friend class HostedService;
  ControlPlane(transport::Bootstrap* job, FailureRegistry* registry, const Options& options);
  Status Start();
  // Everything that touches the UCX worker, on the thread that progresses it (the control
  // thread, or the caller of Poll without it): create, exchange, connect, watch, start the ring.
  Status SetUpWorker();
  void TearDownWorker();
  Status Exchange();
  // AddRanks's part on the control thread: the new ranks' records (nullopt: never published).
  // `here`: the job ranks on this node (Bootstrap::node_peers).
  Status Grow(uint32_t new_size, std::vector<std::optional<PeerRecord>> records,
              const RankSet& here);
  // The ranks the start-up fence spans: those of the start-up exchange that are still there;
  // for a replacement, only those of its own namespace (its parents are not starting).
  RankSet StartUpFenceRanks() const;
  // Attaches the heartbeat regions of this node's peers (start-up, while they are alive).
  void AttachLocalRegions();

  void Run();  // the thread
  // One iteration: failures learned, network, timers, then a sleep of at most `timeout_ns`.
  Status Step(int64_t timeout_ns);
  // Failures and posted tasks, in the order they were handed over.
  void HandleWork();
  void HandleTimer();
  // Runs the services' timers that are due; returns when the next one is (kNoTimer: none).
  int64_t RunDueTimers();
  // Runs `fn` on the control thread and waits for it; inline if the caller is that thread or
  // the thread has ended (nothing else runs there then).
  void RunOnControlThreadAndWait(const std::function<void()>& fn);
  // Refuses further posts and runs the tasks already posted (the control thread's last act).
  void ClosePosts();
  void Unhost(transport::ControlService service);
  // Tells every hosted service that `rank` failed (ControlServiceHandler::OnPeerFailed).
  void NotifyServices(Rank rank);
  // A message for a service not hosted yet: kept (at most kMaxKeptBytes in all) and handed to
  // it when hosted. Control thread.
  void KeepForService(transport::ControlService service, Rank from, uint8_t kind,
                      std::span<const std::byte> payload);
  ControlServiceHandler* HandlerOf(transport::ControlService service) const {
    return handlers_[static_cast<size_t>(service)].load(std::memory_order_acquire);
  }

  // Performs the node's actions from actions_[start] on (including those appended meanwhile),
  // then drops them: a nested call works on the tail and leaves the vector as it found it.
  void Execute(size_t start);
  // Tells the node this process is ending, once the destructor or a departure started.
  void NoteLeaving();
  // Whether the destructor or a departure started.
  bool Leaving() const {
    return stop_.load(std::memory_order_acquire) ||
           departure_requested_.load(std::memory_order_acquire);
  }
  // False while an earlier put to `observer` is still in flight (try again after progress);
  // true once posted, or when there is nothing to put to. `signaled`: an RDMA WRITE's
  // completion is asked for (the farewell waits for it).
  bool PutHeartbeat(Rank observer, uint64_t word, uint64_t slot_offset, bool signaled = false);
  // Verbs (control_verbs.cc). Opens the port, the heartbeat slots' registration and the
  // message channel (before the exchange publishes them), unless options or the host say no;
  // its part of the record; connects to the peers that published theirs.
  void OpenVerbs();
  std::vector<std::byte> VerbsRecordPart() const;
  // The peers whose message channel QPs this process makes at start-up and publishes: its
  // static neighbours (ReliableBroadcast::StaticNeighbors); every rank for a replacement.
  std::vector<Rank> RecordPeers() const;
  void ConnectVerbs(const std::vector<std::vector<std::byte>>& parts);
  // Learns where `peer`'s heartbeat slots are and connects the message channel's QP to it.
  Status ConnectVerbsPeer(Rank peer, std::span<const std::byte> slots,
                          const StatusOr<verbs::QpAddress>& address,
                          verbs::EagerChannel::Handshake handshake);
  // The same from `peer`'s record part (heartbeat slots, then the message channel's QP table
  // for a job of `size` ranks).
  Status ConnectRecordPart(Rank peer, std::span<const std::byte> part, uint32_t size,
                           verbs::EagerChannel::Handshake handshake);
  // Whether heartbeats to `observer` go by RDMA WRITE: the channel reaches it (ready).
  bool WritesHeartbeatsTo(Rank observer) const;
  // Replacements [old_size, size()) joined (Grow): each whose record offers verbs gets a
  // message channel QP here, connected to its record, and is sent its address and this
  // process's heartbeat slots (kVerbsAddress). Heartbeats and messages to it go through UCX
  // until its greeting comes on the channel (PromoteGreetedPeers).
  void GrowVerbs(uint32_t old_size, const std::vector<std::optional<PeerRecord>>& records,
                 const RankSet& unpublished);
  // The heartbeat slots' part and the message channel's QP address for `peer` (opened): the
  // payload of kVerbsAddress and kVerbsOffer.
  std::vector<std::byte> VerbsAddressPayload(Rank peer) const;
  // Connects `source`'s QP to the addresses in `payload` (kVerbsAddress's layout, its size
  // checked): false, the QP withdrawn and a warning logged, when that fails.
  bool ConnectAddressPayload(Rank source, std::span<const std::byte> payload,
                             verbs::EagerChannel::Handshake handshake);
  // At a replacement, a survivor's addresses (GrowVerbs); at a process that offered its QP
  // (OfferVerbs), the answer. Connects its QP and greets.
  void OnVerbsAddress(Rank source, std::span<const std::byte> payload);
  // A control message to `peer` goes through UCX: when `peer` is of this job's first ranks,
  // published a verbs part and was never offered a QP nor made one, its QP is made and offered
  // (kVerbsOffer, through UCX). docs/verbs.md, "Control messages by SEND".
  void OfferVerbs(Rank peer);
  // `source` offered its QP: this end connects it (awaiting the greeting) and answers with its
  // own address (kVerbsAddress), or declines (kVerbsDecline) when it cannot connect. Crossing
  // offers: the lower rank's is answered.
  void OnVerbsOffer(Rank source, std::span<const std::byte> payload);
  // `source` could not connect to this process's offer: the offered QP goes.
  void OnVerbsDecline(Rank source, std::span<const std::byte> payload);
  // The peers of late_verbs_peers_ that greeted: from now on reached by verbs.
  void PromoteGreetedPeers();
  // An error completion of `what` (a heartbeat write, a control message) to `peer`: reported
  // to the registry as a transport error.
  void ReportVerbsError(Rank peer, const char* what, std::string_view status);
  // Sends through the message channel when it reaches `to` and the message fits a slot; false
  // when UCX must carry it.
  bool SendVerbs(Rank to, std::span<const std::byte> header, std::span<const std::byte> payload);
  // Delivers the channel's messages and posts what waited for credits. Whether any message came.
  bool PumpVerbs();
  // Before a sleep: arms the channel's completion channel and adds its descriptors to
  // poll_fds_; false when a last look found something (do not sleep).
  bool ArmVerbs();
  // After the sleep: takes the events of the descriptors ArmVerbs added from `first_fd` on.
  void TakeVerbsEvents(size_t first_fd);
  // Tells the observer this process ends cleanly (a farewell word in its slot), so that its
  // silence is not taken for a failure while the others finish too.
  void SayFarewell();
  // Whether `rank` (same node) has its control thread runnable but not running: starved of
  // CPU, not hung. False when that cannot be seen (another node, no access).
  bool Starved(Rank rank) override;
  // Whether same-node `rank`'s process is gone or a zombie (/proc); false when that cannot be
  // seen (another node, no pid).
  bool LocalPeerEnded(Rank rank) const;
  void Kill(Rank rank);
  // The departure (control_departure.cc), on the thread that owns the worker.
  void Depart();
  void OnDeparture(Rank rank);
  // The ranks that published their records at start-up (all but missing_at_start_).
  [[noreturn]] void DeclaredFailed(Rank by);

  static ucs_status_t OnActiveMessage(void* arg, const void* header, size_t header_length,
                                      void* data, size_t length, const ucp_am_recv_param_t* param);
  // A control message (wire header and payload) from either path: decoded and dispatched.
  void HandleControlMessage(std::span<const std::byte> message);
  // Same-node control messages as kernel datagrams (control_local.cc). Opens this process's
  // socket (none, and UCX for every peer, when that fails).
  void OpenLocalChannel();
  // Connects to the same-node peers that published a socket.
  void ConnectLocalPeers(const std::vector<std::string>& sockets);
  // Attaches the heartbeat region of same-node `peer` now, while it lives.
  void AttachLocalRegion(Rank peer);
  // Sends through the local channel when it reaches `to`; false when UCX must carry it.
  bool SendLocal(Rank to, std::span<const std::byte> header, std::span<const std::byte> payload);
  // Receives what waits on the socket, sends what waited for room, and reports the peers found
  // ended. Whether any message came.
  bool PumpLocal();
  void OnPeerFailed(Rank rank, const Status& why) override;

  transport::Bootstrap* job_;
  FailureRegistry* registry_;
  Options options_;
  Rank self_;
  std::atomic<uint32_t> size_;  // written on the control thread (Grow)
  uint32_t job_token_;

  std::unique_ptr<transport::ucx::UcxContext> context_;
  std::unique_ptr<transport::ucx::UcxWorker> worker_;
  std::unique_ptr<transport::ucx::LocalRegion> slots_;  // this process's heartbeat slot
  // The verbs port and the slots' registration for heartbeats by RDMA WRITE; null without
  // verbs, or when the message channel could not be made. After slots_: its registration goes
  // first.
  std::unique_ptr<VerbsHeartbeats> verbs_heartbeats_;
  // Control messages as SENDs and heartbeats as RDMA WRITEs, on one QP per peer
  // (control_verbs.cc); null without verbs. After verbs_heartbeats_, whose context it uses:
  // it goes first.
  std::unique_ptr<verbs::EagerChannel> verbs_messages_;
  RankSet verbs_message_peers_;  // connected through it; the control thread's
  // Replacements connected through it, whose greeting has not come yet:
  // UCX reaches them until it does. The control thread's.
  RankSet late_verbs_peers_;
  // Ranks of the job's first ranks that published a verbs part (ConnectVerbs): those a QP may
  // be offered to on demand. The control thread's.
  RankSet verbs_capable_peers_;
  // Peers offered a QP on demand whose answer has not come; their QP holds a place until it
  // does or they fail. The control thread's.
  RankSet offered_verbs_peers_;
  // Peers a QP was made for on demand, or tried: never twice. The control thread's.
  RankSet on_demand_tried_;
  std::unique_ptr<transport::ucx::EndpointTable> endpoints_;
  std::vector<std::vector<std::byte>> region_descriptors_;  // [rank]
  std::vector<std::string> death_watch_segments_;           // [rank]; empty: none
  RankSet missing_at_start_;  // ended or silent during the start-up exchange: failed
  std::vector<std::unique_ptr<transport::ucx::RemoteRegion>> remote_;  // [rank], on first use
  std::unique_ptr<DeathWatch> death_watch_;
  std::unique_ptr<transport::LocalDatagramChannel> local_;  // null: every peer through UCX
  // Peers whose socket was found closed on a send: reported once what they sent before their
  // end has been read (a departure among it makes the report moot).
  RankSet local_gone_;
  std::vector<pollfd> poll_fds_;  // reused by Step

  // Its ring starts once every rank is connected (a ring started before a slow start-up's
  // exchange would suspect peers that have not begun to put).
  DetectorNode node_;
  std::vector<NodeAction> actions_;  // reused: no allocation per tick

  // Failures the registry dispatched, for the control thread to feed to the cores. Whether
  // this process was already leaving is judged when the news came, not when the thread gets
  // to it: an accusation made just before the end must still be acted on.
  struct PendingFailure {
    FailureRecord record;
    bool while_leaving = false;
  };
  using Work = std::variant<PendingFailure, std::function<void()>>;
  // Failures and posted tasks for the thread; its eventfd also wakes the thread for a departure
  // or shutdown.
  WakeQueue<Work> pending_;
  std::mutex post_mutex_;      // orders Post against ClosePosts
  bool posts_closed_ = false;  // guarded by post_mutex_
  // Whether the control thread's coming sleep ends within kPostSoonNs (PostSoon's task may wait
  // for it). Set before each sleep, read by PostSoon; seq_cst, as WakeQueue's item flag.
  std::atomic<bool> sleep_has_timeout_{false};

  // Hosted services, by id. Written on the control thread (or before it exists); atomic so that
  // a reader never sees a torn pointer.
  std::array<std::atomic<ControlServiceHandler*>, transport::kControlServiceCount> handlers_{};
  struct Timer {
    int64_t at_ns;
    uint64_t sequence;  // equal times run in the order they were set
    std::function<void()> task;
  };
  std::vector<Timer> timers_;  // a min-heap on (at_ns, sequence); the control thread's
  // Messages for services not hosted yet (KeepForService); the control thread's.
  struct KeptMessage {
    transport::ControlService service;
    Rank from;
    uint8_t kind;
    std::vector<std::byte> payload;
  };
  static constexpr size_t kMaxKeptBytes = size_t{4} << 20;
  std::vector<KeptMessage> kept_;
  size_t kept_bytes_ = 0;
  std::array<bool, transport::kControlServiceCount> hosted_once_{};
  uint64_t timer_sequence_ = 0;
  Subscription subscription_;  // reset first in the destructor
  bool launcher_subscribed_ = false;

  bool armed_ = false;  // the worker's event fd will signal the next event
  // Set by TearDownWorker on the worker's thread: closing the endpoints progresses the worker,
  // and a message that arrives then must not act on state already gone (endpoints_ is null
  // while the table's destructor runs).
  bool tearing_down_ = false;
  std::vector<pid_t> pids_;  // [rank], from the exchange
  // The ranks on this node, of every namespace (Bootstrap::node_peers), as far as this
  // process has connected to them: their /proc entries, sockets and regions are in reach.
  // Control thread.
  RankSet same_node_;
  std::atomic<bool> stop_{false};
  // AnnounceDeparture's hand-off to the control thread.
  std::atomic<bool> departure_requested_{false};
  std::mutex departure_mutex_;
  std::condition_variable departure_cv_;
  bool departed_ = false;        // guarded by departure_mutex_ (written by the worker's thread)
  RankSet departure_acks_;       // the worker's thread only
  std::promise<Status> set_up_;  // the control thread's start-up outcome
  std::thread thread_;
  std::atomic<std::thread::id> control_thread_{};  // set by the thread itself, first thing
  std::vector<std::thread> killers_;               // launcher aborts in flight (they block)

  std::atomic<uint64_t> heartbeats_put_{0};
  std::atomic<uint64_t> heartbeats_written_{0};
  std::atomic<uint64_t> messages_sent_by_ucx_{0};
  std::atomic<uint64_t> messages_sent_by_verbs_{0};
  std::atomic<uint64_t> verbs_wakeups_{0};
  std::atomic<uint64_t> messages_received_by_verbs_{0};
  std::atomic<uint64_t> suspicions_{0};
  std::atomic<uint64_t> late_ticks_{0};
  std::atomic<uint64_t> starved_ticks_{0};
  std::atomic<uint64_t> dropped_{0};
};

}  // namespace rft::detector

#endif  // RFT_DETECTOR_CONTROL_PLANE_H_
