#include "tests/sim/agreement_sim.h"

#include <algorithm>
#include <bit>
#include <map>
#include <memory>
#include <queue>
#include <random>
#include <variant>

#include "agreement/deadline_guard.h"

namespace rft::sim {

using agreement::AgreeValue;
using agreement::Decide;
using agreement::Decision;
using agreement::EraAction;
using agreement::EraMessage;
using agreement::EraNode;
using agreement::LearnFailed;
using agreement::SendEra;

namespace {

struct Event {
  enum class Kind : uint8_t { kDeliver, kDetect, kStart, kFast, kGuard };
  int64_t time = 0;
  uint64_t sequence = 0;
  Kind kind = Kind::kStart;
  Rank to = 0;
  Rank from = 0;       // kDeliver, kFast: the sender; kDetect: the crashed member
  size_t message = 0;  // kDeliver: index into the message store; kFast, kGuard: the agreement
};

struct LaterThan {
  bool operator()(const Event& a, const Event& b) const {
    return a.time != b.time ? a.time > b.time : a.sequence > b.sequence;
  }
};

// Bounds a run that would not end (a liveness bug): reported, not looped on.
constexpr uint64_t kEventLimitPerMember = 200000;

class Sim {
 public:
  explicit Sim(const AgreementSimOptions& options)
      : options_(options), random_(options.seed * 0x9e3779b97f4a7c15ULL + options.n) {
    const uint32_t n = options.n;
    result_.crashed.assign(n, false);
    result_.stuck.assign(n, false);
    result_.departed.assign(n, false);
    result_.decisions.assign(options.agreements, std::vector<std::optional<Decision>>(n));
    result_.contributions.assign(options.agreements, std::vector<AgreeValue>(n));
    result_.decided_ns.assign(options.agreements, 0);
    sent_.assign(n, 0);
    crash_after_.assign(n, -1);
    acked_.assign(n, RankSet());
    known_failed_.assign(n, RankSet());
    fast_.assign(n, FastState());
    decided_.assign(n, 0);
    outstanding_.assign(n, 1);
    for (Rank m = 0; m < n && options.outstanding > 1; ++m) {  // (older seeds replay as before)
      outstanding_[m] = static_cast<uint64_t>(Uniform(1, options.outstanding));
    }
    early_fast_.assign(n, {});
    for (Rank m = 0; m < n; ++m) nodes_.push_back(std::make_unique<EraNode>(m, n, RankSet()));
    // The victims, each with its crash point (-1 never; 0: before it starts).
    std::vector<Rank> members(n);
    for (Rank m = 0; m < n; ++m) members[m] = m;
    std::shuffle(members.begin(), members.end(), random_);
    const int crashes = std::min<int>(options.crashes, static_cast<int>(n) - 1);
    for (int i = 0; i < crashes; ++i) {
      crash_after_[members[i]] =
          static_cast<int64_t>(Uniform(0, std::max(options.crash_window_messages, 1)));
    }
    const int stuck = std::min<int>(options.stuck, static_cast<int>(n) - 1 - crashes);
    for (int i = 0; i < stuck; ++i) result_.stuck[members[crashes + i]] = true;
  }

  AgreementSimResult Run() {
    for (Rank m = 0; m < options_.n; ++m) {
      if (crash_after_[m] == 0) {
        Crash(m, 0);
      } else {
        const int64_t skew = options_.skew_ns > 0 ? Uniform(0, options_.skew_ns) : 0;
        Push(Event{.time = (options_.unit_delays ? 0 : Uniform(0, options_.max_delay_ns)) + skew,
                   .kind = Event::Kind::kStart,
                   .to = m});
      }
    }
    const uint64_t limit = kEventLimitPerMember * options_.n * options_.agreements;
    uint64_t events = 0;
    while (!queue_.empty()) {
      if (++events > limit) {
        result_.hit_event_limit = true;
        break;
      }
      const Event event = queue_.top();
      queue_.pop();
      now_ = event.time;
      if (result_.crashed[event.to] || result_.departed[event.to]) continue;
      std::vector<EraAction> actions;
      EraNode& node = *nodes_[event.to];
      switch (event.kind) {
        case Event::Kind::kStart:
          StartNext(event.to, &actions);
          break;
        case Event::Kind::kDeliver:
          node.OnMessage(event.from, store_[event.message], &actions);
          break;
        case Event::Kind::kDetect:
          node.OnFailure(event.from, &actions);
          known_failed_[event.to].Insert(event.from);
          // The API's fast path notices a failure when it next looks (its schedule may complete
          // first, with the failure already known here): at once, or at its next message.
          if (Uniform(0, 1) == 0) {
            FallBack(event.to, &actions);
          } else if (fast_[event.to].active) {
            fast_[event.to].give_up = true;
            // Its next look (from == to), unless a fast message comes first.
            Push(Event{.time = now_ + Delay(),
                       .kind = Event::Kind::kFast,
                       .to = event.to,
                       .from = event.to,
                       .message = static_cast<size_t>(fast_[event.to].seq)});
          }
          break;
        case Event::Kind::kFast:
          OnFast(event.to, event.from, event.message, &actions);
          break;
        case Event::Kind::kGuard:
          RunGuard(event.to, event.message, &actions);
          break;
      }
      if (auto guard = guards_.find(event.to); guard != guards_.end()) {
        guard->second.NoteView(node, now_);
      }
      Perform(event.to, actions);
    }
    result_.messages = messages_;
    return std::move(result_);
  }

 private:
  int64_t Uniform(int64_t low, int64_t high) {
    return std::uniform_int_distribution<int64_t>(low, high)(random_);
  }
  int64_t Delay() {
    return options_.unit_delays ? 1 : Uniform(options_.min_delay_ns, options_.max_delay_ns);
  }
  void Push(Event event) {
    event.sequence = sequence_++;
    queue_.push(event);
  }

  void StartNext(Rank member, std::vector<EraAction>* actions) {
    EraNode& node = *nodes_[member];
    if (options_.outstanding > 1) {
      StartSeveral(member, actions);
      return;
    }
    const uint64_t seq = node.started();
    if (seq >= static_cast<uint64_t>(options_.agreements) || fast_[member].active ||
        result_.stuck[member]) {
      return;
    }
    AgreeValue contribution;
    // Mostly all ones, so that the AND is not always zero and validity is tested.
    contribution.flag = Uniform(0, 3) == 0 ? static_cast<uint32_t>(random_()) : ~0u;
    contribution.acked = acked_[member];
    result_.contributions[seq][member] = contribution;
    if (options_.deadline_ns > 0) {  // guarded: always the EraNode (as the API does)
      node.Start(contribution, actions);
      guards_.insert_or_assign(member,
                               agreement::DeadlineGuard(node, seq, now_, options_.deadline_ns));
      RunGuard(member, seq, actions);
      return;
    }
    if (!options_.fast_path || !known_failed_[member].empty()) {
      node.Start(contribution, actions);
      return;
    }
    // The fast path: to every other member, and wait for all of theirs.
    FastState& fast = fast_[member];
    fast = FastState{
        .active = true, .give_up = false, .seq = seq, .received = RankSet{member}, .value = {}};
    fast.value = contribution;
    fast.value.acked.clear();  // nobody failed: nothing acknowledged on this path
    for (Rank to = 0; to < options_.n; ++to) {
      if (to == member) continue;
      if (!SendFast(member, to, seq)) return;  // crashed while sending
    }
    CompleteFast(member, actions);
  }

  // Non-blocking agreements: up to the member's limit outstanding, straight to the EraNode.
  void StartSeveral(Rank member, std::vector<EraAction>* actions) {
    EraNode& node = *nodes_[member];
    if (result_.stuck[member]) return;
    while (node.started() < static_cast<uint64_t>(options_.agreements) &&
           node.started() - decided_[member] < outstanding_[member]) {
      const uint64_t seq = node.started();
      AgreeValue contribution;
      contribution.flag = Uniform(0, 3) == 0 ? static_cast<uint32_t>(random_()) : ~0u;
      contribution.acked = acked_[member];
      result_.contributions[seq][member] = contribution;
      node.Start(contribution, actions);
    }
  }

  // Whether `member` is still alive after sending.
  bool SendFast(Rank member, Rank to, uint64_t seq) {
    return Transmit(member, Event{.kind = Event::Kind::kFast,
                                  .to = to,
                                  .from = member,
                                  .message = static_cast<size_t>(seq)});
  }

  // Sends `event` from `member` (its time is set here): counted; lost if its target crashed, and
  // half the time if it is the message at `member`'s crash point (lost with the process).
  // Returns whether `member` is still alive after it.
  bool Transmit(Rank member, Event event) {
    ++messages_;
    ++sent_[member];
    const bool crashes_now = crash_after_[member] > 0 && sent_[member] >= crash_after_[member];
    if (!result_.crashed[event.to] && !(crashes_now && Uniform(0, 1) == 0)) {
      event.time = now_ + Delay();
      Push(event);
    }
    if (crashes_now) Crash(member, now_);
    return !crashes_now;
  }

  // Adds `from`'s contribution to `member`'s fast path (nothing acknowledged on this path).
  void TakeFast(Rank member, Rank from) {
    FastState& fast = fast_[member];
    AgreeValue theirs = result_.contributions[fast.seq][from];
    theirs.acked.clear();
    fast.value.Merge(theirs);
    fast.received.Insert(from);
  }

  void OnFast(Rank member, Rank from, uint64_t seq, std::vector<EraAction>* actions) {
    FastState& fast = fast_[member];
    if (from == member) {  // a look after a failure became known
      if (fast.active && fast.seq == seq) CompleteFast(member, actions);
      return;
    }
    if (!fast.active || fast.seq != seq) {
      // Not started yet here: kept for it; or fell back (or decided): void.
      if (nodes_[member]->started() <= seq) early_fast_[member].push_back({from, seq});
      return;
    }
    TakeFast(member, from);
    CompleteFast(member, actions);
  }

  void CompleteFast(Rank member, std::vector<EraAction>* actions) {
    FastState& fast = fast_[member];
    // Fast messages that came before this member started.
    std::vector<std::pair<Rank, uint64_t>> early;
    early.swap(early_fast_[member]);
    for (const auto& [from, seq] : early) {
      if (seq == fast.seq && fast.active) {
        TakeFast(member, from);
      } else if (seq > fast.seq) {
        early_fast_[member].push_back({from, seq});
      }
    }
    if (!fast.active) return;
    if (fast.received.size() < options_.n) {
      if (fast.give_up) FallBack(member, actions);
      return;
    }
    fast.active = false;
    const Decision decision{.value = fast.value, .failed = {}};
    nodes_[member]->Install(decision, actions);
    actions->push_back(Decide{fast.seq, decision});
  }

  // `member` finalizes: its kept decisions go out first (flush_at_departure), then it ends.
  void Depart(Rank member) {
    if (options_.flush_at_departure) {
      std::vector<EraAction> flush;
      nodes_[member]->Depart(&flush);
      for (const EraAction& action : flush) {
        if (const auto* send = std::get_if<SendEra>(&action)) {
          store_.push_back(send->message);
          if (!Transmit(member, Event{.kind = Event::Kind::kDeliver,
                                      .to = send->to,
                                      .from = member,
                                      .message = store_.size() - 1})) {
            return;  // crashed while departing
          }
        }
      }
    }
    result_.departed[member] = true;
  }

  // Asks `member`'s guard of agreement `seq`; whom it cuts crashes now (fail-stop), and the
  // cutter knows at once, as the service reports it to its registry.
  void RunGuard(Rank member, uint64_t seq, std::vector<EraAction>* actions) {
    auto guard = guards_.find(member);
    if (guard == guards_.end() || guard->second.seq() != seq) return;
    const agreement::DeadlineGuard::Verdict verdict = guard->second.Check(*nodes_[member], now_);
    if (verdict.next_ns == agreement::DeadlineGuard::kNever) {
      guards_.erase(guard);
      return;
    }
    for (Rank victim : verdict.cut) {
      if (!result_.crashed[victim]) {
        result_.cut.Insert(victim);
        Crash(victim, now_);
      }
      nodes_[member]->OnFailure(victim, actions);
      known_failed_[member].Insert(victim);
    }
    Push(Event{.time = verdict.next_ns,
               .kind = Event::Kind::kGuard,
               .to = member,
               .message = static_cast<size_t>(seq)});
  }

  // A member on the fast path learned of a failure: it goes to the EraNode.
  void FallBack(Rank member, std::vector<EraAction>* actions) {
    FastState& fast = fast_[member];
    if (!fast.active) return;
    fast.active = false;
    nodes_[member]->Start(result_.contributions[fast.seq][member], actions);
  }

  void Perform(Rank member, const std::vector<EraAction>& actions) {
    bool learned_failure = false;
    bool departing = false;
    for (const EraAction& action : actions) {
      if (result_.crashed[member]) return;  // crashed mid-list: the rest never happened
      if (const auto* send = std::get_if<SendEra>(&action)) {
        store_.push_back(send->message);
        (void)Transmit(member, Event{.kind = Event::Kind::kDeliver,
                                     .to = send->to,
                                     .from = member,
                                     .message = store_.size() - 1});
      } else if (const auto* decide = std::get_if<Decide>(&action)) {
        auto& slot = result_.decisions[decide->seq][member];
        if (!slot.has_value()) ++decided_[member];
        slot = decide->decision;
        result_.decided_ns[decide->seq] = std::max(result_.decided_ns[decide->seq], now_);
        result_.end_ns = std::max(result_.end_ns, now_);
        // Like a program that acknowledges what it was told before it agrees again.
        acked_[member] |= decide->decision.failed;
        // Its last: the program finalizes once these actions are performed.
        departing |= options_.depart_after_last && decide->seq + 1 == uint64_t(options_.agreements);
        Push(Event{.time = now_ + (options_.unit_delays ? 0 : Uniform(0, options_.max_delay_ns)),
                   .kind = Event::Kind::kStart,
                   .to = member});
      } else if (const auto* learned = std::get_if<LearnFailed>(&action)) {
        if (!result_.crashed[learned->member]) result_.learned_wrongly.Insert(learned->member);
        known_failed_[member].Insert(learned->member);
        learned_failure = true;
      }
    }
    if (departing && !result_.crashed[member]) {
      Depart(member);
      return;
    }
    // A failure learned from an agreement message reaches the registry, and the fast path there
    // gives up (in the API: its schedule sees a failed member).
    if (learned_failure && !result_.crashed[member] && fast_[member].active) {
      std::vector<EraAction> more;
      FallBack(member, &more);
      Perform(member, more);
    }
  }

  void Crash(Rank member, int64_t at) {
    result_.crashed[member] = true;
    for (Rank m = 0; m < options_.n; ++m) {
      if (m == member) continue;
      Push(Event{.time = at + (options_.unit_delays
                                   ? 1
                                   : Uniform(options_.min_detect_ns, options_.max_detect_ns)),
                 .kind = Event::Kind::kDetect,
                 .to = m,
                 .from = member});
    }
  }

  AgreementSimOptions options_;
  std::mt19937_64 random_;
  AgreementSimResult result_;
  std::vector<std::unique_ptr<EraNode>> nodes_;
  std::priority_queue<Event, std::vector<Event>, LaterThan> queue_;
  std::vector<EraMessage> store_;
  std::vector<int64_t> sent_;
  std::vector<int64_t> crash_after_;
  std::vector<RankSet> acked_;
  std::vector<RankSet> known_failed_;  // [member]: what its registry would hold
  struct FastState {
    bool active = false;
    bool give_up = false;  // a failure is known: fall back at the next look unless complete
    uint64_t seq = 0;
    RankSet received;
    AgreeValue value;
  };
  std::vector<FastState> fast_;
  std::vector<uint64_t> decided_;      // [member]: agreements it decided
  std::vector<uint64_t> outstanding_;  // [member]: its limit of started, undecided ones
  std::vector<std::vector<std::pair<Rank, uint64_t>>> early_fast_;
  std::map<Rank, agreement::DeadlineGuard> guards_;  // [member]: its current agreement's
  uint64_t sequence_ = 0;
  uint64_t messages_ = 0;
  int64_t now_ = 0;
};

std::string Describe(const Decision& d) {
  return "{flag=" + std::to_string(d.value.flag) + " failed=" + d.failed.ToString() +
         " acked=" + d.value.acked.ToString() +
         (d.unacknowledged_failure() ? " PROC_FAILED" : " ok") + "}";
}

}  // namespace

AgreementSimResult RunAgreementSim(const AgreementSimOptions& options) {
  return Sim(options).Run();
}

std::string CheckAgreementProperties(const AgreementSimOptions& options,
                                     const AgreementSimResult& result) {
  if (result.hit_event_limit) return "no end: the event limit was reached (a livelock)";
  if (!result.learned_wrongly.empty()) {
    return "members learned failed that never crashed: " + result.learned_wrongly.ToString();
  }
  RankSet crashed;
  for (Rank m = 0; m < options.n; ++m) {
    if (result.crashed[m]) crashed.Insert(m);
  }
  for (int k = 0; k < options.agreements; ++k) {
    const std::string where = "agreement " + std::to_string(k) + ": ";
    const auto& decisions = result.decisions[k];
    const auto& contributions = result.contributions[k];
    std::optional<Decision> agreed;
    uint32_t and_survivors = ~0u;
    uint32_t and_all = ~0u;
    RankSet acked_survivors = RankSet::Range(0, options.n);
    RankSet acked_all = RankSet::Range(0, options.n);
    for (Rank m = 0; m < options.n; ++m) {
      if (!result.crashed[m]) {
        // Termination.
        if (!decisions[m].has_value()) {
          return where + "survivor " + std::to_string(m) + " never decided";
        }
        // Uniform agreement among the survivors.
        if (!agreed.has_value()) {
          agreed = decisions[m];
        } else if (!(*decisions[m] == *agreed)) {
          return where + "survivors disagree: " + Describe(*agreed) + " vs member " +
                 std::to_string(m) + "'s " + Describe(*decisions[m]);
        }
        and_survivors &= contributions[m].flag;
        acked_survivors &= contributions[m].acked;
      }
      // A crashed member's contribution may or may not be in (one that crashed before it
      // started counts as all ones and no acknowledgement: no constraint).
      and_all &= contributions[m].flag;
      acked_all &= contributions[m].acked;
    }
    if (!agreed.has_value()) continue;  // nobody survived (cannot happen: one always does)
    const Decision& d = *agreed;
    // Validity: the AND of a set holding every survivor (and maybe crashed members).
    if ((d.value.flag & and_survivors) != d.value.flag || (d.value.flag & and_all) != and_all) {
      return where + "flag " + std::to_string(d.value.flag) + " is not the AND of a set holding " +
             "every survivor (survivors' AND " + std::to_string(and_survivors) + ", everyone's " +
             std::to_string(and_all) + ")";
    }
    // The agreed failed set holds crashed members only.
    if (!d.failed.Difference(crashed).empty()) {
      return where + "agreed failed set " + d.failed.ToString() + " names live members";
    }
    // The acknowledged intersection lies between the survivors' and everyone's.
    if (!acked_all.Difference(d.value.acked).empty() ||
        !d.value.acked.Difference(acked_survivors).empty()) {
      return where + "acknowledged set " + d.value.acked.ToString() +
             " is not the intersection over a set holding every survivor";
    }
  }
  return "";
}

std::string CheckGuardProperties(const AgreementSimOptions& options,
                                 const AgreementSimResult& result, int64_t slack_ns) {
  for (Rank m = 0; m < options.n; ++m) {
    if (result.stuck[m] && !result.cut.Contains(m)) {
      return "stuck member " + std::to_string(m) + " was never cut off";
    }
    if (!result.stuck[m] && result.cut.Contains(m)) {
      return "member " + std::to_string(m) + " was cut off but it was not stuck";
    }
  }
  // The last parent check (the deepest member's), and after each view change on the way (a cut,
  // a crash) at most as long again: a stuck member that became a child or an ancestor is cut
  // only after it.
  const uint32_t height = static_cast<uint32_t>(std::bit_width(options.n - 1));
  const int64_t grace = agreement::DeadlineGuard::Grace(options.deadline_ns);
  const int64_t bound = options.max_delay_ns +
                        agreement::DeadlineGuard::ParentCheck(options.deadline_ns, height) +
                        (options.stuck + options.crashes) * 3 * height * grace + slack_ns;
  for (int k = 0; k < options.agreements; ++k) {
    // Agreements after the first start once the previous one is decided: bounded per agreement.
    const int64_t since = k == 0 ? 0 : result.decided_ns[k - 1];
    if (result.decided_ns[k] - since > bound) {
      return "agreement " + std::to_string(k) + " decided " +
             std::to_string(result.decided_ns[k] - since) + " ns after it began; the bound is " +
             std::to_string(bound);
    }
  }
  return "";
}

}  // namespace rft::sim
