#include "tests/sim/detector_checks.h"

#include <algorithm>
#include <bit>
#include <sstream>
#include <utility>

namespace rft::sim {

uint32_t CeilLog2(Rank n) { return n <= 1 ? 0 : static_cast<uint32_t>(std::bit_width(n - 1)); }

SimOptions Options(uint64_t seed, Rank n) {
  SimOptions o;
  o.size = n;
  o.seed = seed;
  o.network.timer_stall_probability = 0.002;
  o.network.timer_stall_max_ns = o.heartbeat.timeout_ns / 4;
  return o;
}

int64_t KnowledgeBound(const SimOptions& o, size_t faults) {
  const int64_t per_fault =
      o.heartbeat.timeout_ns + 2 * o.heartbeat.period_ns + o.network.timer_stall_max_ns + kMs;
  return static_cast<int64_t>(2 * faults - 1) * per_fault + 2 * kMs;
}

std::string Describe(const Simulator& sim) {
  std::ostringstream out;
  out << "\n  faults:";
  for (size_t i = 0; i < sim.failures().size() && i < 12; ++i) {
    const FailureRecord& f = sim.failures()[i];
    out << " " << f.rank << "@" << f.fault_ns / kUs << "us(declared@" << f.declared_ns / kUs
        << "us)";
  }
  out << "\n  suspicions:";
  for (size_t i = 0; i < sim.suspicions().size() && i < 12; ++i) {
    const SuspicionRecord& s = sim.suspicions()[i];
    out << " " << s.observer << "->" << s.suspect << "@" << s.at_ns / kUs << "us";
  }
  return out.str();
}

std::string CheckKnowledge(const Simulator& sim, int64_t bound) {
  std::ostringstream why;
  bool anyone = false;
  for (Rank r = 0; r < sim.size(); ++r) anyone = anyone || sim.running(r);
  if (!anyone) return "";  // nobody left to know anything
  for (const FailureRecord& f : sim.failures()) {
    if (f.declared_ns < 0) {
      why << "rank " << f.rank << " failed at " << f.fault_ns << " ns and was never declared";
      return why.str();
    }
    for (Rank r = 0; r < sim.size(); ++r) {
      if (!sim.running(r)) continue;
      const int64_t at = sim.LearnedAt(r, f.rank);
      if (at < 0) {
        why << "survivor " << r << " never learned that " << f.rank << " failed";
        return why.str();
      }
      const int64_t since = std::max(f.fault_ns, sim.BornAt(r));
      if (at - since > bound) {
        why << "survivor " << r << " learned that " << f.rank << " failed " << (at - since) / kUs
            << " us after the fault (bound " << bound / kUs << " us)" << Describe(sim);
        return why.str();
      }
    }
  }
  return "";
}

int64_t InjectCrashesAndHangs(Simulator& sim, std::mt19937_64& rng, size_t faults, int64_t from,
                              int64_t span, std::vector<Rank> candidates) {
  std::vector<Rank> ranks = std::move(candidates);
  if (ranks.empty()) {
    ranks.resize(sim.size());
    for (Rank r = 0; r < sim.size(); ++r) ranks[r] = r;
  }
  std::shuffle(ranks.begin(), ranks.end(), rng);
  int64_t last = 0;
  for (size_t i = 0; i < faults; ++i) {
    const int64_t at = from + static_cast<int64_t>(rng() % static_cast<uint64_t>(span));
    last = std::max(last, at);
    if (rng() % 2) {
      sim.Crash(ranks[i], at);
    } else {
      sim.Hang(ranks[i], at);
    }
  }
  return last;
}

std::string FirstFalseSuspicion(const Simulator& sim) {
  for (const SuspicionRecord& s : sim.suspicions()) {
    if (s.suspect_running) {
      std::ostringstream why;
      why << "false suspicion: " << s.observer << " suspected running " << s.suspect << " at "
          << s.at_ns << " ns after " << s.silence_ns / kUs << " us of silence" << Describe(sim);
      return why.str();
    }
  }
  return "";
}

}  // namespace rft::sim
