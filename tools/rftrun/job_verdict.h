// How rftrun judges each process's end and what the job's exit status becomes: pure decisions
// (no process, no PMIx, no clock), so that every rule a fault-tolerant job rests on is tested
// on its own (tests/unit/rftrun/job_verdict_test.cc) and the launcher only carries them out.
//
// The rules (docs/rftrun.md, "Exit status"):
// - a process that exited 0 after PMIx_Finalize, or without ever connecting, ended normally;
//   one killed by a signal, one with a non-zero status, and one that connected and left without
//   PMIx_Finalize failed, and its peers are told;
// - without --ft the first failure ends the job, with the failed process's status (128 + the
//   signal for a signal, 1 for a missing PMIx_Finalize);
// - with --ft only the application's own verdict (a non-zero exit status) decides the status,
//   and the rest of the job goes on; a signal rftrun did not cause (not --kill, --stop, an abort
//   asked for, nor the job's end) is a crash the caller sees, unless --deaths-ok;
// - --timeout gives 124 and a signal to rftrun 128 + its number, whatever came before;
// - otherwise the first decisive event (a failure, an abort with a status, a lost node, another
//   node's end) keeps its status; later ones only add to the summary where they say more.
#ifndef RFT_TOOLS_RFTRUN_JOB_VERDICT_H_
#define RFT_TOOLS_RFTRUN_JOB_VERDICT_H_

#include <optional>
#include <string>
#include <vector>

namespace rft::rftrun {

// Exit status when --timeout fires (as timeout(1)).
inline constexpr int kTimeoutExitStatus = 124;

// A PMIx_Abort status as an exit status: only 8 bits reach the caller, so 256 would read as
// success; 1..255 stay as given, anything else becomes 255.
int ExitCodeOf(int abort_status);

// What rftrun knows of one process's end.
struct ProcessEnd {
  int wait_status = 0;      // from waitpid
  bool connected = false;   // called PMIx_Init
  bool finalized = false;   // called PMIx_Finalize
  bool aborted = false;     // killed by rftrun for a PMIx_Abort
  int injected_signal = 0;  // SIGKILL for --kill, SIGSTOP for --stop, else 0
};

// How a process ended, as its peers hear it.
enum class EndKind {
  kNormal,      // exit 0 after PMIx_Finalize (or never connected)
  kSignaled,    // PMIX_ERR_PROC_ABORTED_BY_SIG
  kExitStatus,  // PMIX_ERR_EXIT_NONZERO_TERM
  kNoFinalize,  // PMIX_ERR_PROC_TERM_WO_SYNC: a failure to its peers
};

struct EndClass {
  EndKind kind = EndKind::kNormal;
  int exit_code = 0;  // 128 + signal, the exit status, or 0
  bool failed() const { return kind != EndKind::kNormal; }
};

EndClass Classify(const ProcessEnd& end);

// "was killed by signal 9 (SIGKILL), injected by --kill", "exited with status 3", ...
std::string Describe(const ProcessEnd& end);

class JobVerdict {
 public:
  JobVerdict(bool fault_tolerant, bool deaths_ok)
      : fault_tolerant_(fault_tolerant), deaths_ok_(deaths_ok) {}

  // Process `label` ended so. `ending`: rftrun is already ending the job (its deaths are its
  // own doing). Returns true when this end must end the job (a failure without --ft).
  bool ProcessEnded(const std::string& label, const ProcessEnd& end, bool ending);
  // `who` aborted the whole job, or only `killed` (a list of ranks, empty when they had ended).
  void JobAborted(const std::string& who, int status, const std::string& why);
  void RanksAborted(const std::string& who, const std::string& killed, int status,
                    const std::string& why);
  void TimedOut(const std::string& summary);
  void Interrupted(int signal);
  // Node `node` ended the whole job with `status` for `why` (another node's verdict).
  void NodeEndedJob(const std::string& node, int status, const std::string& why);
  // The links to `nodes` broke (`ending`: as for ProcessEnded). Returns true when that ends the
  // job (without --ft); with --ft their processes are failures like any other.
  bool LostNodes(const std::string& nodes, bool ending);
  // Something in rftrun itself failed (its poll loop): the job ends with status 1 at least.
  void LauncherFailed() {
    if (!status_) status_ = 1;
  }

  // The timeout or the interrupting signal decided, whatever came before.
  bool stopped_from_outside() const { return timed_out_ || interrupted_by_ != 0; }
  int ExitStatus() const;
  // Why the job ended as it did, for rftrun's last line (empty when nothing went wrong).
  const std::string& summary() const { return summary_; }

  // Across nodes: the job's status from each node's, node 0's first; the first that failed in
  // node order, or 0.
  static int CombineNodes(const std::vector<int>& node_statuses);

 private:
  void Append(const std::string& what) { summary_ += (summary_.empty() ? "" : "; ") + what; }

  bool fault_tolerant_;
  bool deaths_ok_;
  bool timed_out_ = false;
  int interrupted_by_ = 0;
  std::optional<int> status_;  // decided by a failure, an abort or another node
  std::string summary_;
};

}  // namespace rft::rftrun

#endif  // RFT_TOOLS_RFTRUN_JOB_VERDICT_H_
