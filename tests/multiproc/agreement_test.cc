// Agreement and shrink through the public C API across real processes under rftrun
// (agreement_worker.c): every member alive, a member dead before an agreement, a member dead
// inside one. The survivors' outcomes are compared line by line: uniform agreement.
#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "tests/multiproc/scenario.h"

namespace rft::testing {
namespace {

const std::vector<std::string>& kTolerant = TolerantHeartbeats();

ScenarioResult RunWorker(int n, const std::vector<std::string>& worker_args) {
  std::vector<std::string> args = {"-n", std::to_string(n),   "--ft", "--timeout",
                                   "60", "--get-stack-traces"};
  args.push_back(Runfile("tests/multiproc/agreement_worker"));
  args.insert(args.end(), worker_args.begin(), worker_args.end());
  return RunCommand("tools/rftrun/rftrun", args, std::chrono::seconds(130), kTolerant);
}

// The distinct "decided rc=... flag=..." outcomes printed, and how many lines printed one.
std::set<std::string> Outcomes(const std::string& output, int* lines) {
  std::set<std::string> outcomes;
  std::istringstream in(output);
  std::string line;
  *lines = 0;
  while (std::getline(in, line)) {
    const size_t at = line.find("decided rc=");
    if (at == std::string::npos) continue;
    outcomes.insert(line.substr(at));
    ++*lines;
  }
  return outcomes;
}

TEST(AgreementTest, AgreesAndShrinksWithEveryMemberAlive) {
  for (int n : {1, 2, 3, 5}) {
    const auto r = RunWorker(n, {"basics"});
    ASSERT_EQ(r.exit_status, 0) << "n=" << n << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "basics ok"), n) << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
  }
}

TEST(AgreementTest, IshrinkGivesShrinksResultWhileOtherCommunicatorsAreCreated) {
  for (int n : {1, 2, 4}) {
    const auto r = RunWorker(n, {"ishrink"});
    ASSERT_EQ(r.exit_status, 0) << "n=" << n << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "ishrink ok"), n) << r.Report();
  }
  for (const auto& [n, victim] : {std::pair{2, 1}, std::pair{4, 0}, std::pair{5, 2}}) {
    const auto r = RunWorker(n, {"ishrink", std::to_string(victim)});
    ASSERT_EQ(r.exit_status, 128 + 9) << "n=" << n << " victim=" << victim << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "ishrink ok"), n - 1) << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
  }
}

// Odd ranks raise rank-many warnings: at finalize one process prints one line per odd survivor
// with its count and first message, and nothing else; no warnings: no line; off: no line.
TEST(AgreementTest, WarningsAreGatheredAtFinalizeAndPrintedOnce) {
  for (const auto& [n, victim] :
       {std::pair{1, -1}, std::pair{2, -1}, std::pair{5, -1}, std::pair{5, 3}, std::pair{4, 0}}) {
    const std::string label = "n=" + std::to_string(n) + " victim=" + std::to_string(victim);
    const auto r = RunWorker(n, {"warnings", std::to_string(victim)});
    ASSERT_EQ(r.exit_status, victim < 0 ? 0 : 128 + 9) << label << "\n" << r.Report();
    int lines = 0;
    for (int rank = 1; rank < n; rank += 2) {
      if (rank == victim) continue;
      ++lines;
      EXPECT_EQ(CountLines(r.output, "rft: rank " + std::to_string(rank) + " raised " +
                                         std::to_string(rank) +
                                         " warning(s); the first: residual too large on rank " +
                                         std::to_string(rank) + " (0)"),
                1)
          << label << "\n"
          << r.Report();
    }
    EXPECT_EQ(CountLines(r.output, "warning(s); the first:"), lines) << label << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "warnings ok"), victim < 0 ? n : n - 1) << r.Report();
  }
  std::vector<std::string> args = {"-n",        "3",  "--ft",
                                   "--timeout", "60", Runfile("tests/multiproc/agreement_worker"),
                                   "warnings"};
  std::vector<std::string> env = kTolerant;
  env.push_back("RFT_FINALIZE_WARNINGS=n");
  const auto off = RunCommand("tools/rftrun/rftrun", args, std::chrono::seconds(70), env);
  ASSERT_EQ(off.exit_status, 0) << off.Report();
  EXPECT_EQ(CountLines(off.output, "warning(s); the first:"), 0) << off.Report();
}

TEST(AgreementTest, GuardedAgreementsWithEveryMemberAliveCutNobody) {
  for (int n : {1, 2, 4}) {
    const auto r = RunWorker(n, {"guarded"});
    ASSERT_EQ(r.exit_status, 0) << "n=" << n << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "guarded ok"), n) << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
    EXPECT_EQ(CountLines(r.output, "did not contribute by the deadline"), 0) << r.Report();
  }
}

// The victim dies between two agreements: the next one excludes it at every survivor, with
// RFT_ERR_PROC_FAILED (nobody had acknowledged it) and the survivors' AND; then acknowledgement,
// a clean agreement, and a shrink to the survivors in order. Victims in every tree role: the
// root (0), a leaf, an inner member.
TEST(AgreementTest, AMemberDeadBeforeAnAgreementIsExcludedEverywhere) {
  for (const auto& [n, victim] :
       {std::pair{2, 1}, std::pair{3, 0}, std::pair{4, 2}, std::pair{5, 4}, std::pair{6, 0}}) {
    const auto r = RunWorker(n, {"after", std::to_string(victim)});
    ASSERT_EQ(r.exit_status, 128 + 9) << "n=" << n << " victim=" << victim << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "after ok"), n - 1) << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
    int lines = 0;
    EXPECT_EQ(Outcomes(r.output, &lines).size(), 1u) << r.Report();
    EXPECT_EQ(lines, n - 1) << r.Report();
  }
}

// The victim dies inside an agreement, after starting it: every survivor returns the same
// outcome (its contribution counted or not), and shrink excludes it.
TEST(AgreementTest, AMemberDyingInsideAnAgreementLeavesOneOutcome) {
  for (const auto& [n, victim] :
       {std::pair{3, 0}, std::pair{4, 1}, std::pair{5, 2}, std::pair{6, 5}, std::pair{6, 0}}) {
    const auto r = RunWorker(n, {"during", std::to_string(victim)});
    ASSERT_EQ(r.exit_status, 128 + 9) << "n=" << n << " victim=" << victim << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "during ok"), n - 1) << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
    int lines = 0;
    EXPECT_EQ(Outcomes(r.output, &lines).size(), 1u) << r.Report();
    EXPECT_EQ(lines, n - 1) << r.Report();
  }
}

// Non-blocking agreements on the fast path, 8 outstanding at a time, with a member dying among
// them (by its own hand inside a window, or by the launcher's kill at an instant the program does
// not know): every survivor got the same outcome for every agreement.
TEST(AgreementTest, OutstandingIagreesStayUniformWhenAMemberDies) {
  for (const auto& [n, victim] : {std::pair{3, 1}, std::pair{4, 0}, std::pair{5, 4}}) {
    const auto r = RunWorker(n, {"iagree-windows", std::to_string(victim)});
    ASSERT_EQ(r.exit_status, 128 + 9) << "n=" << n << " victim=" << victim << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "iagree-windows ok"), n - 1) << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
    int lines = 0;
    EXPECT_EQ(Outcomes(r.output, &lines).size(), 1u) << r.Report();
    EXPECT_EQ(lines, n - 1) << r.Report();
  }
  // The loop runs until the failure shows, so any instant after start-up lands in it; 2.5 s and
  // more is after start-up under the sanitizers too (a rank killed before it published its
  // address would be a start-up failure, another test's subject).
  for (const char* kill : {"2@2.5", "0@3.2"}) {
    const auto r = RunCommand("tools/rftrun/rftrun",
                              {"-n", "4", "--ft", "--timeout", "60", "--kill", kill,
                               Runfile("tests/multiproc/agreement_worker"), "iagree-windows", "-1"},
                              std::chrono::seconds(70), kTolerant);
    EXPECT_EQ(r.exit_status, 0) << kill << "\n" << r.Report();  // rftrun's own kill
    EXPECT_EQ(CountLines(r.output, "iagree-windows ok"), 3) << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
    int lines = 0;
    EXPECT_EQ(Outcomes(r.output, &lines).size(), 1u) << r.Report();
    EXPECT_EQ(lines, 3) << r.Report();
  }
}

// The victim dies inside a shrink after contributing: the survivors' new communicators have one
// size (the victim in it as a failed member, or not), and shrinking that one gives the survivors.
TEST(AgreementTest, AMemberDyingInsideAShrinkLeavesOneResult) {
  for (const auto& [n, victim] :
       {std::pair{2, 1}, std::pair{3, 0}, std::pair{4, 2}, std::pair{5, 4}}) {
    const auto r = RunWorker(n, {"shrink-during", std::to_string(victim)});
    ASSERT_EQ(r.exit_status, 128 + 9) << "n=" << n << " victim=" << victim << "\n" << r.Report();
    EXPECT_EQ(CountLines(r.output, "shrink-during ok"), n - 1) << r.Report();
    EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
    int lines = 0;
    EXPECT_EQ(Outcomes(r.output, &lines).size(), 1u) << r.Report();
    EXPECT_EQ(lines, n - 1) << r.Report();
  }
}

// A shrink-and-free loop at 8 ranks with every message by rendezvous (RFT_EAGER_LIMIT=0), rank 5
// dying inside a shrink: the fast path's packet buffers it leaves behind stay alive for the
// peers that read them (they lived on the stack), and every survivor saw the same sizes.
TEST(AgreementTest, AShrinkLoopSurvivesADeathWithEveryPacketByRendezvous) {
  std::vector<std::string> args = {"-n",
                                   "8",
                                   "--ft",
                                   "--timeout",
                                   "90",
                                   "--get-stack-traces",
                                   Runfile("tests/multiproc/agreement_worker"),
                                   "shrink-loop",
                                   "5"};
  std::vector<std::string> env = kTolerant;
  env.push_back("RFT_EAGER_LIMIT=0");
  const auto r = RunCommand("tools/rftrun/rftrun", args, std::chrono::seconds(150), env);
  ASSERT_EQ(r.exit_status, 128 + 9) << r.Report();
  EXPECT_EQ(CountLines(r.output, "shrink-loop ok"), 7) << r.Report();
  EXPECT_EQ(CountLines(r.output, "] FAILED: "), 0) << r.Report();
  int lines = 0;
  EXPECT_EQ(Outcomes(r.output, &lines).size(), 1u) << r.Report();
  EXPECT_EQ(lines, 7) << r.Report();
}

// examples/solver.c's survivors, each with the exact total: "total X (exact X)".
int ExactTotals(const std::string& output) {
  std::istringstream in(output);
  std::string line;
  int exact = 0;
  while (std::getline(in, line)) {
    const size_t total = line.find("total ");
    const size_t open = line.find(" (exact ");
    if (total == std::string::npos || open == std::string::npos) continue;
    const std::string mine = line.substr(total + 6, open - total - 6);
    const size_t close = line.find(')', open);
    if (close != std::string::npos && line.substr(open + 8, close - open - 8) == mine) ++exact;
  }
  return exact;
}

// examples/solver.c: process 2 of 4 dies at the start of iteration 300; the others' allreduce
// fails, they agree that it did, shrink, redo the iteration, and finish with the exact total.
TEST(AgreementTest, TheSolverShrinksAndStaysExact) {
  const auto r = RunCommand("tools/rftrun/rftrun",
                            {"-n", "4", "--ft", "--timeout", "60", Runfile("examples/solver"),
                             "--iterations", "1000", "--victim", "2", "--die-at", "300"},
                            std::chrono::seconds(70), kTolerant);
  EXPECT_EQ(r.exit_status, 128 + 9) << r.Report();  // the victim's own SIGKILL
  EXPECT_EQ(ExactTotals(r.output), 3) << r.Report();
  EXPECT_EQ(CountLines(r.output, "with 3 of 4 processes after 1 shrink(s)"), 3) << r.Report();
}

// The same with the launcher's kill at an instant the program does not know (inside an
// allreduce, an agreement or a shrink): whenever it lands, the survivors agree on which
// iterations counted, and every total is exact. At 3 s, as in ApiTest's kill.
TEST(AgreementTest, TheSolverIsExactWheneverTheLauncherKills) {
  const auto r = RunCommand("tools/rftrun/rftrun",
                            {"-n", "4", "--ft", "--timeout", "150", "--kill", "1@3",
                             Runfile("examples/solver"), "--iterations", "40000"},
                            std::chrono::seconds(160), kTolerant);
  EXPECT_EQ(r.exit_status, 0) << r.Report();  // a death rftrun caused leaves the status 0
  // The kill lands while the program runs (40,000 iterations take seconds), or after its end.
  const int survivors = CountLines(r.output, "injected by --kill") == 1 ? 3 : 4;
  EXPECT_EQ(ExactTotals(r.output), survivors) << r.Report();
}

// One event of a merged failure timeline (tools/timeline/rft_timeline --json).
struct TimelineEvent {
  int64_t ns = 0;
  int rank = -1;
  std::string event;
  int64_t subject = -1;
  std::string detail;
};

// The value of `key` in one line of rft_timeline --json (flat objects, keys in a known order):
// a number's digits, or a string's text without its quotes; nullopt if the key is missing.
// (A hand parse: GCC 12's -O1 sanitizer builds warn falsely inside <regex>.)
std::optional<std::string> TimelineField(const std::string& line, const std::string& key) {
  const std::string tag = "\"" + key + "\": ";
  const size_t at = line.find(tag);
  if (at == std::string::npos) return std::nullopt;
  const size_t begin = at + tag.size();
  if (begin < line.size() && line[begin] == '"') {
    // A string ends at the quote before the next field or the object's end.
    size_t end = line.find("\", \"", begin + 1);
    if (end == std::string::npos) end = line.rfind("\"}");
    if (end == std::string::npos || end <= begin) return std::nullopt;
    return line.substr(begin + 1, end - begin - 1);
  }
  const size_t end = line.find_first_of(",}", begin);
  if (end == std::string::npos) return std::nullopt;
  return line.substr(begin, end - begin);
}

// `text` as a whole integer, or nullopt.
std::optional<int64_t> WholeInteger(const std::optional<std::string>& text) {
  if (!text || text->empty()) return std::nullopt;
  int64_t value = 0;
  const char* end = text->data() + text->size();
  const auto [at, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || at != end) return std::nullopt;
  return value;
}

// The job's timeline merged by the tool; a line it cannot read fails the test.
std::vector<TimelineEvent> MergedTimeline(const std::string& dir) {
  const auto r =
      RunCommand("tools/timeline/rft_timeline", {"--json", dir}, std::chrono::seconds(30));
  EXPECT_EQ(r.exit_status, 0) << r.Report();
  std::vector<TimelineEvent> events;
  std::istringstream lines(r.output);
  for (std::string line; std::getline(lines, line);) {
    const auto ns = WholeInteger(TimelineField(line, "ns"));
    const auto rank = WholeInteger(TimelineField(line, "rank"));
    const auto event = TimelineField(line, "event");
    const auto subject = WholeInteger(TimelineField(line, "subject"));
    const auto detail = TimelineField(line, "detail");
    if (line.empty() || line.front() != '{' || line.back() != '}' || !ns || !rank || !event ||
        event->empty() || !subject || !detail) {
      ADD_FAILURE() << "not a timeline line: " << line;
      continue;
    }
    events.push_back({*ns, static_cast<int>(*rank), *event, *subject, *detail});
  }
  return events;
}

// The timeline of a demo run whose victims are `killed` and `stopped`: every survivor recorded
// both failures; nobody knew of the hang before a process suspected it, nor of the kill before
// a process knew it first-hand; the hung process was asked killed; every survivor's last shrink
// came after it knew both; and the merge is in time order.
void ExpectCausalTimeline(const std::string& dir, int killed, int stopped, int n) {
  const std::vector<TimelineEvent> events = MergedTimeline(dir);
  ASSERT_FALSE(events.empty()) << dir;
  std::map<std::pair<int, int64_t>, int64_t> failed;  // (rank, subject) -> when it knew
  int64_t first_suspicion = INT64_MAX, first_hand_kill = INT64_MAX;
  std::map<int, int64_t> last_shrink;
  bool kill_asked = false;
  for (size_t i = 0; i < events.size(); ++i) {
    const TimelineEvent& e = events[i];
    if (i > 0) {
      EXPECT_LE(events[i - 1].ns, e.ns) << "merged out of order at event " << i;
    }
    if (e.event == "failed") {
      failed.emplace(std::pair{e.rank, e.subject}, e.ns);
      if (e.subject == killed && e.detail != "propagated") {
        first_hand_kill = std::min(first_hand_kill, e.ns);
      }
    } else if (e.event == "suspected" && e.subject == stopped) {
      first_suspicion = std::min(first_suspicion, e.ns);
    } else if (e.event == "shrunk") {
      last_shrink[e.rank] = e.ns;
    } else if (e.event == "kill-asked" && e.subject == stopped) {
      kill_asked = true;
    }
  }
  EXPECT_NE(first_suspicion, INT64_MAX) << "nobody suspected the hung rank " << stopped;
  EXPECT_NE(first_hand_kill, INT64_MAX) << "nobody knew first-hand of the killed rank " << killed;
  EXPECT_TRUE(kill_asked) << "nobody asked the launcher to kill the hung rank " << stopped;
  for (int rank = 0; rank < n; ++rank) {
    if (rank == killed || rank == stopped) continue;
    const auto knew_kill = failed.find({rank, killed});
    const auto knew_hang = failed.find({rank, stopped});
    ASSERT_NE(knew_kill, failed.end()) << "rank " << rank << " never recorded " << killed;
    ASSERT_NE(knew_hang, failed.end()) << "rank " << rank << " never recorded " << stopped;
    EXPECT_GE(knew_hang->second, first_suspicion) << "rank " << rank << " knew of the hang early";
    EXPECT_GE(knew_kill->second, first_hand_kill) << "rank " << rank << " knew of the kill early";
    ASSERT_TRUE(last_shrink.count(rank)) << "rank " << rank << " recorded no shrink";
    EXPECT_GT(last_shrink[rank], std::max(knew_kill->second, knew_hang->second))
        << "rank " << rank << "'s last shrink came before it knew both failures";
  }
}

// examples/ulfm_demo.c, tools/demo.sh's program: one member SIGKILLs itself and another hangs
// (SIGSTOP) at instants in ms since the common start; whenever they fall (one at the very start,
// both together, one inside the other's recovery), the hang is declared from missing heartbeats
// and the launcher kills it, and the 4 survivors report both failures and end exact. Each run
// writes its failure timeline (RFT_TIMELINE), whose merge must be causal
// (ExpectCausalTimeline).
TEST(AgreementTest, TheDemoEndsExactAfterAKillAndAHangAtAnyInstants) {
  int round = 0;
  for (const auto& [kill, stop] :
       {std::pair{"2@0", "4@150"}, std::pair{"5@200", "1@200"}, std::pair{"3@300", "2@303"}}) {
    const char* tmp = std::getenv("TEST_TMPDIR");
    const std::string timeline =
        std::string(tmp != nullptr ? tmp : "/tmp") + "/timeline-" + std::to_string(round++);
    std::vector<std::string> env = kTolerant;
    env.push_back("RFT_TIMELINE=" + timeline);
    const auto r = RunCommand("tools/rftrun/rftrun",
                              {"-n", "6", "--ft", "--timeout", "90", Runfile("examples/ulfm_demo"),
                               "--iterations", "600", "--kill", kill, "--stop", stop},
                              std::chrono::seconds(100), env);
    const std::string faults = std::string("--kill ") + kill + " --stop " + stop + "\n";
    EXPECT_EQ(r.exit_status, 128 + 9) << faults << r.Report();  // the SIGKILL it raised
    EXPECT_EQ(CountLines(r.output, ": exact, with 4 of 6 processes"), 4) << faults << r.Report();
    EXPECT_EQ(CountLines(r.output, "WRONG"), 0) << faults << r.Report();
    // The reporter's table: one line per survivor, each with a callback for both victims, in
    // the order they were learned (the hang's may come first: the kill waits for its iteration,
    // which the hang stalls).
    const std::string for_a = std::string("for ") + kill[0] + " at";
    const std::string for_b = std::string("for ") + stop[0] + " at";
    int both = 0;
    std::istringstream lines(r.output);
    for (std::string line; std::getline(lines, line);) {
      both += line.find("callback for ") != std::string::npos &&
              line.find(for_a) != std::string::npos && line.find(for_b) != std::string::npos;
    }
    EXPECT_EQ(both, 4) << faults << r.Report();
    ExpectCausalTimeline(timeline, kill[0] - '0', stop[0] - '0', 6);
  }
}

}  // namespace
}  // namespace rft::testing
