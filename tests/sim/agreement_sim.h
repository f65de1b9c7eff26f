// rft::sim::AgreementSim: runs the agreement's EraNode (the object the control plane's service
// drives) on n simulated members with seeded random message delays, crashes and detection
// delays, for the properties test and the simulator benchmark.
//
// The model: a message between live members arrives after a random delay; one sent to a crashed
// member is lost, and one a member sent just before it crashed is lost with probability 1/2.
// Detection is perfect and eventually complete (fail-stop): each live member hears of a crash
// after a random delay. Each member runs `agreements` agreements in a row, starting the next
// after a random pause once it decided the previous one; its flag is random and it
// acknowledges the failures of the previous decision, as a program that acks would.
#ifndef RFT_TESTS_SIM_AGREEMENT_SIM_H_
#define RFT_TESTS_SIM_AGREEMENT_SIM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "agreement/era_node.h"
#include "base/rank_set.h"

namespace rft::sim {

struct AgreementSimOptions {
  uint32_t n = 4;
  uint64_t seed = 1;
  int agreements = 1;
  // Members that crash, each at a random point: before it starts, or after its k-th message sent
  // (k uniform in [0, crash_window_messages)).
  int crashes = 0;
  int crash_window_messages = 8;
  // Delays in simulated nanoseconds, uniform in [min, max].
  int64_t min_delay_ns = 1000;
  int64_t max_delay_ns = 5000;
  int64_t min_detect_ns = 20000;
  int64_t max_detect_ns = 200000;
  // Every delay exactly one unit, no pause between agreements: decision times are then counts of
  // message delays (failure-free runs).
  bool unit_delays = false;
  // The API's fast path before each agreement (docs/agreement.md, "Fast path"), modelled as an
  // exchange of every member's contribution with every other: a member that has all n decides
  // their combination with nobody failed and installs it (EraNode::Install); one that learns
  // of a failure first falls back to the EraNode (Start), and one that knows of a failure when
  // it begins goes there at once. n² messages per agreement: for small n.
  bool fast_path = false;
  // Finalize: a member that decided its last agreement ends cleanly at once. Its node then
  // answers nobody, and it is departed, not failed: no member hears of it. With
  // `flush_at_departure` it first hands its kept decisions to every live member
  // (EraNode::Depart), as the service does at finalize.
  bool depart_after_last = false;
  bool flush_at_departure = true;
  // The guarded agreement (agreement/deadline_guard.h): every member guards its agreements with
  // this deadline (0: unguarded), and `stuck` members (not among the crash victims) never start
  // one while their nodes keep answering, as a process whose program loops while its control
  // thread runs. A member a guard cuts is crashed at once (fail-stop), and its cutter knows it.
  int64_t deadline_ns = 0;
  int stuck = 0;
  // Non-blocking agreements: each member keeps up to its own limit (uniform in [1, outstanding])
  // started and not decided, starting the next as soon as one is decided (no fast path), and
  // begins after a skew of its own (uniform in [0, skew_ns]). 1: one at a time, as above.
  int outstanding = 1;
  int64_t skew_ns = 0;
};

struct AgreementSimResult {
  // [agreement][member]: what it decided (nullopt: it crashed first, or never decided).
  std::vector<std::vector<std::optional<agreement::Decision>>> decisions;
  // [agreement][member]: its contribution (flag, acked).
  std::vector<std::vector<agreement::AgreeValue>> contributions;
  std::vector<bool> crashed;   // [member]
  std::vector<bool> stuck;     // [member]
  std::vector<bool> departed;  // [member]: finalized (depart_after_last)
  RankSet cut;                 // members a guard declared failed
  RankSet learned_wrongly;     // members some node learned failed that never crashed
  uint64_t messages = 0;       // messages sent
  int64_t end_ns = 0;          // when the last member decided its last agreement
  // [agreement]: when the last surviving member decided it (unit delays: in message delays).
  std::vector<int64_t> decided_ns;
  bool hit_event_limit = false;
};

AgreementSimResult RunAgreementSim(const AgreementSimOptions& options);

// The properties of docs/agreement.md over a result: termination, uniform agreement among the
// survivors, validity of the flag, a failed set of crashed members only, the error rule. "" when
// they hold, else the first violation.
std::string CheckAgreementProperties(const AgreementSimOptions& options,
                                     const AgreementSimResult& result);

// The guard's properties, with delays far below the deadline: every stuck member is cut, no
// member that started is, and each agreement is decided by the deepest parent check plus its
// regrace for each view change (stuck + crashes) after the last start, plus `slack_ns`. "" when
// they hold.
std::string CheckGuardProperties(const AgreementSimOptions& options,
                                 const AgreementSimResult& result, int64_t slack_ns);

}  // namespace rft::sim

#endif  // RFT_TESTS_SIM_AGREEMENT_SIM_H_
