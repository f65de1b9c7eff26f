#include "tests/sim/simulator.h"

#include <algorithm>
#include <cmath>

#include "base/check.h"

namespace rft::sim {

using detector::BroadcastMessage;
using detector::DeliverBroadcast;
using detector::EndSelf;
using detector::FailureSource;
using detector::HeartbeatRing;
using detector::KillRank;
using detector::NodeAction;
using detector::PutHeartbeat;
using detector::ReportFailure;
using detector::SendBroadcast;
using detector::SendObserveRequest;

namespace {
// The model has no CPU contention: a silent process is never excused as starved.
class NeverStarved final : public detector::StarvationProbe {
 public:
  bool Starved(Rank) override { return false; }
};
NeverStarved never_starved;
}  // namespace

Simulator::Key Simulator::KeyOf(const BroadcastMessage& m) {
  return {static_cast<uint8_t>(m.kind), m.context, m.epoch, m.subject};
}

Simulator::Simulator(const SimOptions& options)
    : options_(options),
      rng_(options.seed),
      // ~8 µs buckets below 1,024 ranks, 1 µs below 16,384, 128 ns above.
      queue_(options.size < 1024    ? 13
             : options.size < 16384 ? 10
                                    : 7),
      failure_index_(std::max(options.size, options.grow_to), -1) {
  RFT_CHECK(options.size >= 1, "Simulator: size must be at least 1");
  RFT_CHECK(options.grow_to == 0 || options.grow_to > options.size,
            "Simulator: grow_to must be 0 or above size");
  const Rank total = std::max(options.size, options.grow_to);
  processes_.reserve(total);
  for (Rank r = 0; r < options.size; ++r) {
    processes_.emplace_back(r, options.size, ProcessState::kRunning, options);
  }
  for (Rank r = options.size; r < total; ++r) {
    processes_.emplace_back(r, options.grow_to, ProcessState::kUnborn, options);
  }
  for (Rank r = 0; r < options.size; ++r) {
    if (options.start_skew_max_ns <= 0) {
      processes_[r].node.Start(0);
      Arm(r);
      continue;
    }
    Push(
        Event{UniformTime(0, options.start_skew_max_ns), 0, EventType::kStartRing, 0, r, r, 0, {}});
  }
  for (Rank r = 0; r < total; ++r) {
    const int64_t at = UniformTime(options.grow_at_ns, options.grow_skew_max_ns);
    if (r < options.size) {
      if (options.grow_to > 0) Push(Event{at, 0, EventType::kGrow, 0, r, r, 0, {}});
      continue;
    }
    Push(Event{options.grow_at_ns, 0, EventType::kBirth, 0, r, r, 0, {}});
    Push(Event{at, 0, EventType::kStartRing, 0, r, r, 0, {}});
  }
}

int64_t Simulator::UniformTime(int64_t from_ns, int64_t span_ns) {
  if (span_ns <= 0) return from_ns;
  return from_ns + static_cast<int64_t>(rng_() % static_cast<uint64_t>(span_ns + 1));
}

double Simulator::Uniform() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

int64_t Simulator::Latency() {
  const NetworkModel& net = options_.network;
  if (net.jitter_ns <= 0) return net.latency_ns;
  if (net.jitter == NetworkModel::Jitter::kUniform) {
    return net.latency_ns + static_cast<int64_t>(rng_() % static_cast<uint64_t>(net.jitter_ns));
  }
  return net.latency_ns +
         static_cast<int64_t>(-static_cast<double>(net.jitter_ns) * std::log1p(-Uniform()));
}

int64_t Simulator::TimerLateness() {
  const NetworkModel& net = options_.network;
  int64_t late = 0;
  if (net.timer_lateness_mean_ns > 0) {
    late = static_cast<int64_t>(-static_cast<double>(net.timer_lateness_mean_ns) *
                                std::log1p(-Uniform()));
  }
  if (net.timer_stall_probability > 0 && Uniform() < net.timer_stall_probability) {
    late += static_cast<int64_t>(Uniform() * static_cast<double>(net.timer_stall_max_ns));
  }
  return late;
}

void Simulator::Push(Event event) {
  RFT_CHECK(sequence_ != UINT32_MAX, "Simulator: too many events for one run");
  event.sequence = sequence_++;
  queue_.Push(event);
}

void Simulator::Crash(Rank rank, int64_t at_ns) {
  ++pending_faults_;
  Push(Event{at_ns, 0, EventType::kCrash, 0, rank, rank, 0, {}});
}

void Simulator::Hang(Rank rank, int64_t at_ns) {
  ++pending_faults_;
  Push(Event{at_ns, 0, EventType::kHang, 0, rank, rank, 0, {}});
}

void Simulator::Partition(RankSet side, int64_t from_ns, int64_t until_ns) {
  cuts_.push_back(Cut{std::move(side), from_ns, until_ns});
}

void Simulator::Broadcast(Rank origin, const BroadcastMessage& message, int64_t at_ns) {
  Push(Event{at_ns, 0, EventType::kStartBroadcast, 0, origin, origin, 0, message});
}

void Simulator::Accuse(Rank accuser, Rank accused, int64_t at_ns) {
  RFT_CHECK(accuser < size() && accused < size() && accuser != accused,
            "Simulator::Accuse: expected two distinct ranks below the size");
  Push(Event{at_ns, 0, EventType::kAccuse, 0, accuser, accused, 0, {}});
}

void Simulator::RunUntil(int64_t end_ns) {
  while (!queue_.empty() && queue_.Top().time <= end_ns) {
    const Event event = queue_.Top();
    queue_.Pop();
    now_ns_ = event.time;
    ++events_processed_;
    Dispatch(event);
  }
  now_ns_ = std::max(now_ns_, end_ns);
}

bool Simulator::AllKnow() const {
  if (pending_faults_ > 0) return false;
  if (std::none_of(processes_.begin(), processes_.end(),
                   [](const Process& p) { return p.state == ProcessState::kRunning; })) {
    return true;  // nobody left to know anything
  }
  for (const FailureRecord& f : failures_) {
    if (f.declared_ns < 0) return false;
  }
  for (const Process& p : processes_) {
    if (p.state == ProcessState::kRunning && p.known.size() != failures_.size()) return false;
  }
  return true;
}

bool Simulator::RunUntilAllKnow(int64_t end_ns, int64_t check_every_ns) {
  while (now_ns_ < end_ns) {
    RunUntil(std::min(end_ns, now_ns_ + check_every_ns));
    if (AllKnow()) return true;
  }
  return AllKnow();
}

int64_t Simulator::LearnedAt(Rank rank, Rank failed) const {
  for (const auto& [r, at] : processes_[rank].learned) {
    if (r == failed) return at;
  }
  return -1;
}

const BroadcastRecord* Simulator::FindBroadcast(const BroadcastMessage& key) const {
  auto it = broadcast_index_.find(KeyOf(key));
  return it == broadcast_index_.end() ? nullptr : &broadcasts_[it->second];
}

BroadcastRecord& Simulator::RecordOf(const BroadcastMessage& message) {
  const Key key = KeyOf(message);
  if (last_record_ != SIZE_MAX && key == last_key_) return broadcasts_[last_record_];
  auto [it, inserted] = broadcast_index_.try_emplace(key, broadcasts_.size());
  last_key_ = key;
  last_record_ = it->second;
  if (inserted) {
    BroadcastRecord record;
    record.message = message;
    record.start_ns = now_ns_;
    record.deliveries.assign(processes_.size(), 0);
    record.hops.assign(processes_.size(), BroadcastRecord::kNoHops);
    broadcasts_.push_back(std::move(record));
  }
  return broadcasts_[it->second];
}

FailureRecord& Simulator::FailureOf(Rank rank) {
  if (failure_index_[rank] < 0) {
    failure_index_[rank] = static_cast<int32_t>(failures_.size());
    failures_.push_back(FailureRecord{rank, now_ns_});
  }
  return failures_[failure_index_[rank]];
}

void Simulator::Stop(Rank rank, ProcessState state) {
  Process& p = processes_[rank];
  if (p.state != ProcessState::kRunning) return;
  p.state = state;
  p.stopped_ns = now_ns_;
  ++p.timer_token;  // cancels the pending timer
  FailureOf(rank);
}

void Simulator::Declare(Rank rank) {
  FailureRecord& record = FailureOf(rank);
  if (record.declared_ns < 0) record.declared_ns = now_ns_;
  Stop(rank, ProcessState::kKilled);
}

int64_t Simulator::HeldUntil(Rank a, Rank b) const {
  int64_t until = -1;
  for (const Cut& cut : cuts_) {
    if (cut.from_ns <= now_ns_ && now_ns_ < cut.until_ns &&
        cut.side.Contains(a) != cut.side.Contains(b)) {
      until = std::max(until, cut.until_ns);
    }
  }
  return until;
}

bool Simulator::LostInFlight(Rank from) {
  const Process& sender = processes_[from];
  if (sender.state != ProcessState::kCrashed && sender.state != ProcessState::kKilled) {
    return false;
  }
  return Uniform() < options_.network.crash_loss_probability;
}

void Simulator::Arm(Rank rank) {
  Process& p = processes_[rank];
  if (p.state != ProcessState::kRunning) return;
  const int64_t desired = p.node.next_timer_ns();
  if (desired == p.timer_desired_ns) return;  // the pending event still stands
  p.timer_desired_ns = desired;
  ++p.timer_token;
  if (desired == HeartbeatRing::kNoTimer) return;
  const int64_t at = std::max(desired, now_ns_) + TimerLateness();
  Push(Event{at, 0, EventType::kTimer, 0, rank, rank, p.timer_token, {}});
}

void Simulator::Send(Rank from, Rank to, EventType type, uint64_t value,
                     const BroadcastMessage* message, uint16_t hops) {
  int64_t at = now_ns_ + Latency();
  const int64_t held = HeldUntil(from, to);
  if (held >= 0) {
    if (type == EventType::kPut) return;  // a heartbeat that arrives late is worthless anyway
    at = std::max(at, held + Latency());
  }
  Push(Event{at, 0, type, hops, to, from, value,
             message != nullptr ? *message : BroadcastMessage{}});
}

void Simulator::Dispatch(const Event& e) {
  Process& p = processes_[e.to];
  switch (e.type) {
    case EventType::kTimer: {
      if (p.state != ProcessState::kRunning || e.value != p.timer_token) return;
      p.timer_desired_ns = -1;  // consumed: Arm schedules the next one
      const size_t start = out_.size();
      p.node.OnTimer(now_ns_, p.node.ChooseSlotWord(p.slot, p.handover_slot), never_starved, &out_);
      HandleActions(e.to, start, 0);
      break;
    }
    case EventType::kPut: {
      if (p.state == ProcessState::kCrashed || p.state == ProcessState::kKilled) return;
      if (LostInFlight(e.from)) return;
      (e.hops == 1 ? p.handover_slot : p.slot) = e.value;
      auto it = std::find_if(p.last_landed.begin(), p.last_landed.end(),
                             [&](const auto& entry) { return entry.first == e.from; });
      if (it == p.last_landed.end()) {
        p.last_landed.emplace_back(e.from, now_ns_);
      } else {
        it->second = now_ns_;
      }
      return;
    }
    case EventType::kObserveRequest: {
      if (p.state != ProcessState::kRunning || LostInFlight(e.from)) return;
      const size_t start = out_.size();
      p.node.OnObserveRequest(e.from, static_cast<uint32_t>(e.value),
                              static_cast<Rank>(e.value >> 32), now_ns_, &out_);
      HandleActions(e.to, start, 0);
      break;
    }
    case EventType::kBroadcastMessage: {
      const BroadcastMessage& message = e.message;
      if (p.state != ProcessState::kRunning || LostInFlight(e.from)) return;
      const size_t start = out_.size();
      p.node.OnBroadcastMessage(e.from, message, &out_);
      HandleActions(e.to, start, e.hops);
      break;
    }
    case EventType::kCrash:
    case EventType::kHang: {
      --pending_faults_;
      Stop(e.to, e.type == EventType::kCrash ? ProcessState::kCrashed : ProcessState::kHung);
      FailureOf(e.to);  // recorded even if it was already stopped
      return;
    }
    case EventType::kStartBroadcast: {
      const BroadcastMessage& message = e.message;
      if (p.state != ProcessState::kRunning) return;
      const size_t start = out_.size();
      p.node.Broadcast(message, &out_);
      HandleActions(e.to, start, 0);
      break;
    }
    case EventType::kStartRing: {
      if (p.state != ProcessState::kRunning) return;
      p.node.Start(now_ns_);
      break;
    }
    case EventType::kAccuse: {
      if (p.state != ProcessState::kRunning) return;
      Learn(e.to, e.from, FailureSource::kTransport);
      break;
    }
    case EventType::kBirth: {
      if (p.state != ProcessState::kUnborn) return;
      p.state = ProcessState::kRunning;
      // The merge hands the new process the failed set its parents agreed on.
      for (const FailureRecord& f : failures_) {
        if (f.declared_ns >= 0) Learn(e.to, f.rank, FailureSource::kAgreement);
      }
      break;
    }
    case EventType::kGrow: {
      if (p.state != ProcessState::kRunning) return;
      const size_t start = out_.size();
      p.node.Grow(options_.grow_to, now_ns_, &out_);
      HandleActions(e.to, start, 0);
      break;
    }
  }
  Arm(e.to);
}

void Simulator::HandleActions(Rank rank, size_t start, uint16_t delivery_hops) {
  for (size_t i = start; i < out_.size(); ++i) {
    const NodeAction action = out_[i];  // a copy: the vector may grow meanwhile
    if (const auto* put = std::get_if<PutHeartbeat>(&action)) {
      Send(rank, put->observer, EventType::kPut, put->word, nullptr, put->handover ? 1 : 0);
    } else if (const auto* request = std::get_if<SendObserveRequest>(&action)) {
      Send(rank, request->to, EventType::kObserveRequest,
           uint64_t{request->size} << 32 | request->generation, nullptr, 0);
    } else if (const auto* send = std::get_if<SendBroadcast>(&action)) {
      // Not delivered here yet only for the news sent straight to an accused rank.
      const uint16_t hops = RecordOf(send->message).hops[rank];
      Send(rank, send->to, EventType::kBroadcastMessage, 0, &send->message,
           static_cast<uint16_t>(hops == BroadcastRecord::kNoHops ? 1 : hops + 1));
    } else if (const auto* deliver = std::get_if<DeliverBroadcast>(&action)) {
      BroadcastRecord& record = RecordOf(deliver->message);
      ++record.deliveries[rank];
      if (record.hops[rank] == BroadcastRecord::kNoHops) record.hops[rank] = delivery_hops;
    } else if (const auto* report = std::get_if<ReportFailure>(&action)) {
      const Rank x = report->rank;
      if (report->source == FailureSource::kHeartbeat) {
        int64_t last = 0;
        for (const auto& [writer, at] : processes_[rank].last_landed) {
          if (writer == x) last = at;
        }
        suspicions_.push_back(SuspicionRecord{
            rank, x, now_ns_, processes_[x].state == ProcessState::kRunning, now_ns_ - last});
      }
      Learn(rank, x, report->source);
    } else if (const auto* kill = std::get_if<KillRank>(&action)) {
      Declare(kill->rank);
    } else if (std::holds_alternative<EndSelf>(action)) {
      // Told it was declared failed: a live process exits (killed already, in practice).
      Stop(rank, ProcessState::kKilled);
    }
  }
  out_.resize(start);
}

void Simulator::Learn(Rank rank, Rank failed, FailureSource source) {
  Process& p = processes_[rank];
  // Like the real registry, it records only ranks of the job it knows: a rank beyond its size
  // (a replacement it has not grown by yet) is ignored.
  if (failed >= p.node.size() || failed == rank || p.known.Contains(failed)) return;
  p.known.Insert(failed);
  p.learned.emplace_back(failed, now_ns_);
  const size_t start = out_.size();
  p.node.OnFailure(failed, source, /*while_leaving=*/false, now_ns_, &out_);
  HandleActions(rank, start, 0);
}

}  // namespace rft::sim
