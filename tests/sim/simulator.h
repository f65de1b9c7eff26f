// rft::sim::Simulator: a discrete-event network of simulated processes, each running the very
// same sans-I/O protocol object as the real control thread (detector::DetectorNode: the heartbeat
// ring, the reliable broadcast and the rules that join them), with seeded random latencies, timer
// lateness and injected faults.
//
// Model (docs/detector.md, "Simulator"):
// - Events run in (time, sequence) order; every random draw comes from one std::mt19937_64
//   seeded by SimOptions::seed, so a seed replays exactly.
// - A message or one-sided put takes latency + jitter (exponential with mean jitter_ns, or
//   uniform in [0, jitter_ns)). A put is a delayed write into the target's one slot; it lands
//   even in a hung process (the NIC still works) but not in a crashed one.
// - Each process's heartbeat timer fires at the core's next_timer_ns() plus a lateness drawn
//   from an exponential, plus with some probability a stall, to model OS scheduling.
// - Faults: crash (the process stops; a message or put it sent that is still in flight is lost
//   with probability crash_loss_probability), hang (it stops taking events but is not dead),
//   partition (between a side and the rest for an interval: puts across the cut are dropped,
//   messages are held until the partition heals, as a reliable connection would retransmit them),
//   and accusation (a process's transport reports a peer failed that may well be alive).
// - Fail-stop is enforced as the launcher does it: a node's KillRank kills that rank on the spot
//   if it is still running; the first one declares the failure.
// - Each process has a registry (the set of failures it knows). The node's ReportFailure records
//   there, and recording a rank for the first time feeds it back to the node (OnFailure), as the
//   real registry's listener does. Like the real one, it ignores ranks beyond its node's size.
//
// The simulator records ground truth for property checks: every suspicion with whether the
// suspect was still running and how long since its last put landed at the suspecter, per
// failure when every process learned it, and per broadcast every delivery with its hop count.
#ifndef RFT_TESTS_SIM_SIMULATOR_H_
#define RFT_TESTS_SIM_SIMULATOR_H_

#include <cstdint>
#include <map>
#include <random>
#include <tuple>
#include <utility>
#include <vector>

#include "base/rank_set.h"
#include "detector/detector_node.h"
#include "tests/sim/event_queue.h"

namespace rft::sim {

struct NetworkModel {
  enum class Jitter : uint8_t { kExponential, kUniform };
  int64_t latency_ns = 1'500;  // fixed part of every message and put
  Jitter jitter = Jitter::kExponential;
  int64_t jitter_ns = 500;  // exponential mean, or uniform exclusive bound
  int64_t timer_lateness_mean_ns = 20'000;
  double timer_stall_probability = 0;  // per firing
  int64_t timer_stall_max_ns = 0;      // a stall adds U(0, max) lateness
  double crash_loss_probability = 0.5;
};

struct SimOptions {
  Rank size = 2;
  uint64_t seed = 1;
  detector::HeartbeatConfig heartbeat;
  NetworkModel network;
  // Each process starts its ring at a time drawn uniformly from [0, start_skew_max_ns], as the
  // real ones leave the start-up fence at different times (0: all at once, at time 0).
  int64_t start_skew_max_ns = 0;
  int64_t first_word_timeout_ns = 0;  // DetectorNode::Options::first_word_timeout_ns
  // Growth, as when replacements are spawned and merged: ranks [size, grow_to) come to life at
  // grow_at_ns knowing the failures declared by then (the merge's agreed set) and start their
  // rings, and every old rank grows (DetectorNode::Grow), each at a time drawn uniformly from
  // [grow_at_ns, grow_at_ns + grow_skew_max_ns]. grow_to 0: no growth.
  Rank grow_to = 0;
  int64_t grow_at_ns = 0;
  int64_t grow_skew_max_ns = 0;
};

enum class ProcessState : uint8_t {
  kUnborn,  // a rank of a growth, before grow_at_ns
  kRunning,
  kCrashed,  // injected crash
  kHung,     // injected hang
  kKilled,   // declared failed while running, killed by the simulated launcher
};

struct SuspicionRecord {
  Rank observer;
  Rank suspect;
  int64_t at_ns;
  bool suspect_running;  // was it running when suspected (a live process)?
  int64_t silence_ns;    // since the suspect's last put landed at the observer (at_ns if never)
};

struct FailureRecord {
  Rank rank;
  int64_t fault_ns;          // crash/hang time, or the kill time of a declared live process
  int64_t declared_ns = -1;  // first suspicion
};

struct BroadcastRecord {
  detector::BroadcastMessage message;  // as first broadcast (origin included)
  int64_t start_ns = 0;
  std::vector<uint8_t> deliveries;  // per rank
  std::vector<uint16_t> hops;       // per rank, kNoHops until delivered
  static constexpr uint16_t kNoHops = UINT16_MAX;
};

class Simulator {
 public:
  explicit Simulator(const SimOptions& options);

  // Fault injection and workload; all times are absolute simulated nanoseconds.
  void Crash(Rank rank, int64_t at_ns);
  void Hang(Rank rank, int64_t at_ns);
  void Partition(RankSet side, int64_t from_ns, int64_t until_ns);
  // `origin` starts a reliable broadcast of `message` at `at_ns` (nothing if it is not running).
  void Broadcast(Rank origin, const detector::BroadcastMessage& message, int64_t at_ns);
  // At `at_ns`, `accuser`'s transport reports `accused` failed (FailureSource::kTransport),
  // whether or not it is alive: fail-stop must then end it and every survivor learn it.
  void Accuse(Rank accuser, Rank accused, int64_t at_ns);

  // Processes every event up to and including `end_ns`.
  void RunUntil(int64_t end_ns);
  // Runs until every injected fault has happened and been declared and every running process
  // knows every declared failure (checked every `check_every_ns`), or until `end_ns`. Returns
  // whether that state was reached.
  bool RunUntilAllKnow(int64_t end_ns, int64_t check_every_ns);
  bool AllKnow() const;

  int64_t now_ns() const { return now_ns_; }
  // When `rank` came to life: grow_at_ns for a rank of the growth, else 0.
  int64_t BornAt(Rank rank) const { return rank < options_.size ? 0 : options_.grow_at_ns; }
  Rank size() const { return static_cast<Rank>(processes_.size()); }
  const SimOptions& options() const { return options_; }
  ProcessState state(Rank rank) const { return processes_[rank].state; }
  bool running(Rank rank) const { return processes_[rank].state == ProcessState::kRunning; }
  const RankSet& known_failures(Rank rank) const { return processes_[rank].known; }
  // When `rank` learned that `failed` failed, or -1.
  int64_t LearnedAt(Rank rank, Rank failed) const;
  const detector::DetectorNode& node(Rank rank) const { return processes_[rank].node; }

  const std::vector<SuspicionRecord>& suspicions() const { return suspicions_; }
  // One per failed or declared rank, in order of fault.
  const std::vector<FailureRecord>& failures() const { return failures_; }
  // nullptr if no process delivered a message with this key.
  const BroadcastRecord* FindBroadcast(const detector::BroadcastMessage& key) const;
  uint64_t events_processed() const { return events_processed_; }

 private:
  enum class EventType : uint8_t {
    kTimer,
    kPut,
    kObserveRequest,
    kBroadcastMessage,
    kCrash,
    kHang,
    kStartBroadcast,
    kAccuse,
    kStartRing,
    kBirth,
    kGrow,
  };
  struct Event {
    int64_t time;
    uint32_t sequence;  // ties broken in push order; a run stays far below 2^32 events
    EventType type;
    uint16_t hops;  // kBroadcastMessage: path length so far; kPut: 1 for the hand-over slot
    Rank to;
    Rank from;
    // kPut: the word; kTimer: the token; kObserveRequest: the requester's size << 32 | the
    // generation.
    uint64_t value;
    // kBroadcastMessage, kStartBroadcast. Inline: a side table costs a cache miss per message.
    detector::BroadcastMessage message;
  };
  struct Process {
    Process(Rank self, Rank size, ProcessState state, const SimOptions& options)
        : state(state),
          node(self, size,
               {.heartbeat = options.heartbeat,
                .enforce_fail_stop = true,
                .first_word_timeout_ns = options.first_word_timeout_ns}) {}
    ProcessState state;
    detector::DetectorNode node;
    RankSet known;                                      // the registry
    std::vector<std::pair<Rank, int64_t>> learned;      // (failed rank, when), in order
    std::vector<std::pair<Rank, int64_t>> last_landed;  // (writer, when) of puts into the slot
    uint64_t slot = 0;
    uint64_t handover_slot = 0;
    int64_t stopped_ns = -1;        // crash, hang or kill time
    int64_t timer_desired_ns = -1;  // what the pending timer event was armed for
    uint32_t timer_token = 0;       // a timer event with another token is stale
  };
  struct Cut {
    RankSet side;
    int64_t from_ns;
    int64_t until_ns;
  };
  // The broadcast core's dedupe key.
  using Key = std::tuple<uint8_t, uint32_t, uint32_t, uint64_t>;
  static Key KeyOf(const detector::BroadcastMessage& message);

  void Push(Event event);
  void Dispatch(const Event& event);
  void Arm(Rank rank);
  int64_t Latency();
  int64_t TimerLateness();
  double Uniform();
  // The time a partition holds a message from a to b sent now until, or -1 if none does.
  int64_t HeldUntil(Rank a, Rank b) const;
  // Whether a message or put from a sender that crashed while it was in flight is lost.
  bool LostInFlight(Rank from);
  // A time drawn uniformly from [from_ns, from_ns + span_ns].
  int64_t UniformTime(int64_t from_ns, int64_t span_ns);

  // Performs the actions `rank`'s node appended from out_[start] on (including those appended
  // meanwhile), then drops them: nested calls work on the tail of the same vector and leave it
  // as they found it. `delivery_hops`: the path length of the message that led to them.
  void HandleActions(Rank rank, size_t start, uint16_t delivery_hops);
  // Sends a put, an observe request or (with `message`) a broadcast message.
  void Send(Rank from, Rank to, EventType type, uint64_t value,
            const detector::BroadcastMessage* message, uint16_t hops);
  // The registry of `rank` records `failed` from `source`.
  void Learn(Rank rank, Rank failed, detector::FailureSource source);
  // The simulated launcher: the first kill of a rank declares it, and kills it if running.
  void Declare(Rank rank);
  void Stop(Rank rank, ProcessState state);
  FailureRecord& FailureOf(Rank rank);
  BroadcastRecord& RecordOf(const detector::BroadcastMessage& message);

  SimOptions options_;
  std::mt19937_64 rng_;
  EventQueue<Event> queue_;
  uint32_t sequence_ = 0;
  int64_t now_ns_ = 0;
  uint64_t events_processed_ = 0;
  std::vector<Process> processes_;
  std::vector<Cut> cuts_;
  std::vector<FailureRecord> failures_;
  std::vector<int32_t> failure_index_;  // per rank, -1 if none
  size_t pending_faults_ = 0;           // injected, not yet happened
  std::vector<SuspicionRecord> suspicions_;
  std::vector<BroadcastRecord> broadcasts_;
  std::map<Key, size_t> broadcast_index_;
  // The record RecordOf found last: a flood asks for the same one millions of times.
  Key last_key_{};
  size_t last_record_ = SIZE_MAX;
  std::vector<detector::NodeAction> out_;
};

}  // namespace rft::sim

#endif  // RFT_TESTS_SIM_SIMULATOR_H_
