// rft::agreement::AgreementService: the early-returning agreement as a service of the control
// plane (docs/agreement.md).
//
// Each communicator that agrees has an EraNode on the control thread, keyed by the
// communicator's life across the job (CommKey). The caller's thread starts an agreement and
// waits for its Operation; the control thread runs the protocol, so a member that returned
// keeps answering late peers while its program computes. Failures reach the nodes from the
// registry (through the control plane), and failures learned from agreement messages and
// decisions go back to the registry (FailureSource::kAgreement), so after an agreement returns,
// its failed set is in the registry of every member that returned.
//
// Threading: Join, Leave and Start from any thread (the API's); everything else runs on the
// control thread. An Operation is written by the control thread and read by its owner after
// done() says so.
#ifndef RFT_AGREEMENT_AGREEMENT_SERVICE_H_
#define RFT_AGREEMENT_AGREEMENT_SERVICE_H_

#include <atomic>
#include <compare>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "agreement/deadline_guard.h"
#include "agreement/era_node.h"
#include "base/status.h"
#include "detector/control_plane.h"
#include "detector/failure_registry.h"

namespace rft::agreement {

// A communicator's life across the job: its first context, the epoch of that life, and its
// owner (lowest job rank): the same at every member, unique among live communicators.
struct CommKey {
  uint32_t context = 0;
  uint32_t epoch = 0;
  uint32_t owner = 0;
  friend auto operator<=>(const CommKey&, const CommKey&) = default;
};

// One agreement as its caller sees it.
class Operation {
 public:
  bool done() const { return done_.load(std::memory_order_acquire); }
  // Valid once done().
  const Decision& decision() const { return decision_; }

 private:
  friend class AgreementService;
  std::atomic<bool> done_{false};
  Decision decision_;
};

class AgreementService final : private detector::ControlServiceHandler {
 public:
  // Hosts the service on `control` (ControlService::kAgreement). `wake` is called on the control
  // thread after an operation completes (the runtime wakes the data plane's wait). `control`
  // and `registry` must outlive the service.
  static StatusOr<std::unique_ptr<AgreementService>> Create(detector::ControlPlane* control,
                                                            detector::FailureRegistry* registry,
                                                            std::function<void()> wake);
  ~AgreementService();
  AgreementService(const AgreementService&) = delete;
  AgreementService& operator=(const AgreementService&) = delete;

  // This process takes part in agreements on `key`, whose members are `members` (job ranks in
  // member order, this process among them). Once per key, before its first Start. RFT_ERR_ARG
  // for a key already joined or members without this process; RFT_ERR_OTHER once the control
  // plane has ended.
  Status Join(const CommKey& key, std::vector<Rank> members);
  // The communicator is gone here; its node still answers late peers for a while (the last
  // kKeptAfterLeave left communicators are kept).
  void Leave(const CommKey& key);
  static constexpr size_t kKeptAfterLeave = 64;
  // Agreements on a key are numbered 0, 1, 2... in the caller's program order, and each number
  // is either started here (Start) or noted decided (NoteDecided), exactly once, in any order:
  // the node takes them in number order (an agreement decided on the fast path while earlier
  // non-blocking ones still run is held until they are started), so every member's node numbers
  // them alike.
  //
  // Starts agreement `seq` on `key` with `contribution`; `operation` becomes done() with the
  // decision. RFT_ERR_OTHER once the control plane has ended.
  // A positive `deadline_ns` guards it (DeadlineGuard): the members it still waits for when the
  // deadline passes (counted from MonotonicNanos() at this call) are declared failed
  // (FailureSource::kDeadline), and fail-stop kills them.
  Status Start(const CommKey& key, uint64_t seq, AgreeValue contribution,
               std::shared_ptr<Operation> operation, int64_t deadline_ns = 0);

  // Agreement `seq` on `key` was decided on the fast path (docs/agreement.md): the node keeps
  // `decision` for late peers and for members that fell back. RFT_ERR_OTHER once the control
  // plane has ended.
  Status NoteDecided(const CommKey& key, uint64_t seq, Decision decision);

  // This process ends cleanly: every node hands its kept decisions to its live members
  // (EraNode::Depart). Returns once they are sent; call it before the control plane announces
  // the departure. Any thread but the control thread; nothing once the control plane has ended.
  void Depart();

  // Control messages dropped (malformed, for a node that never came), and messages kept for a
  // communicator not joined here yet. Any thread.
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }

 private:
  // The control message kind of an agreement message; its payload is the key (3 × u32) and the
  // encoded EraMessage.
  static constexpr uint8_t kEraMessageKind = 1;
  static constexpr size_t kKeyBytes = 12;
  // Messages kept for keys not joined here yet (a faster member already agreeing on a
  // communicator this one is still creating), at most this many bytes in all.
  static constexpr size_t kMaxEarlyBytes = size_t{4} << 20;

  struct Node {
    std::vector<Rank> members;       // member -> job rank
    std::map<Rank, Rank> member_of;  // job rank -> member (empty for the identity)
    bool identity = false;           // members[i] == i
    std::unique_ptr<EraNode> era;
    std::map<uint64_t, std::shared_ptr<Operation>> waiting;  // by agreement number
    std::map<uint64_t, DeadlineGuard> guards;                // by agreement number
    // Starts and fast decisions whose number is ahead of the node's (era->started()).
    struct Queued {
      bool fast = false;  // a fast decision to install, else a start
      Decision decision;
      AgreeValue contribution;
      std::shared_ptr<Operation> operation;
      int64_t deadline_ns = 0;
      int64_t start_ns = 0;
    };
    std::map<uint64_t, Queued> queued;
    Rank MemberOf(Rank job_rank) const;
  };

  AgreementService(detector::ControlPlane* control, detector::FailureRegistry* registry,
                   std::function<void()> wake)
      : control_(control), registry_(registry), wake_(std::move(wake)) {}
  void OnControlMessage(Rank from, uint8_t kind, std::span<const std::byte> payload) override;
  void OnPeerFailed(Rank rank) override;
  // On the control thread: delivers one message to a joined node.
  void Deliver(const CommKey& key, Node& node, Rank from, std::span<const std::byte> bytes);
  void Perform(const CommKey& key, Node& node, const std::vector<EraAction>& actions);
  // On the control thread, before anything else touches a node: the fast path's decisions
  // noted since (NoteDecided), in order.
  void InstallFastDecisions();
  // Queues agreement `seq`'s start or fast decision and gives the node whatever is next in
  // number.
  void Feed(const CommKey& key, Node& node, uint64_t seq, Node::Queued queued);
  // Asks agreement `seq`'s guard, cuts whom it names, and sets the timer of its next check.
  void RunGuard(const CommKey& key, uint64_t seq);
  Status PostOrFail(const char* what, std::function<void()> task);

  detector::ControlPlane* control_;
  detector::FailureRegistry* registry_;
  std::function<void()> wake_;
  detector::HostedService hosting_;
  // Cleared on the control thread before the service goes: its timers then do nothing.
  std::shared_ptr<bool> timers_live_ = std::make_shared<bool>(true);
  // The control thread's.
  std::map<CommKey, Node> nodes_;
  std::deque<CommKey> left_;  // left communicators still answering, oldest first
  // The last kGoneRemembered communicators whose nodes were dropped after leaving.
  static constexpr size_t kGoneRemembered = 1024;
  std::set<CommKey> gone_;
  std::deque<CommKey> gone_order_;
  struct Early {
    Rank from;
    std::vector<std::byte> bytes;
  };
  std::map<CommKey, std::vector<Early>> early_;
  size_t early_bytes_ = 0;
  std::atomic<uint64_t> dropped_{0};
  // The fast path's decisions, from the caller's thread to the control thread.
  struct FastDecision {
    CommKey key;
    uint64_t seq;
    Decision decision;
  };
  // The control thread is woken once per kFastBatch noted decisions, only to bound this list
  // (it installs them at every message, failure and post anyway). Each wake takes a core from a
  // member that spins for ~25 us: at 64 that was 1 agreement in 64, above the 99th percentile
  // (agree's p99 was ~25 us against a p50 of ~0.7 us); at 1024 it is below it, and the list
  // holds at most 1024 decisions (~200 KB with shrink's context words).
  static constexpr size_t kFastBatch = 1024;
  std::mutex fast_mutex_;
  std::vector<FastDecision> fast_decided_;  // guarded by fast_mutex_
};

}  // namespace rft::agreement

#endif  // RFT_AGREEMENT_AGREEMENT_SERVICE_H_
