#include "tools/rftrun/job_verdict.h"

#include <signal.h>
#include <sys/wait.h>

#include <cstring>

namespace rft::rftrun {

int ExitCodeOf(int abort_status) {
  return abort_status >= 1 && abort_status <= 255 ? abort_status : 255;
}

EndClass Classify(const ProcessEnd& end) {
  const int st = end.wait_status;
  if (WIFSIGNALED(st)) return {EndKind::kSignaled, 128 + WTERMSIG(st)};
  if (WEXITSTATUS(st) != 0) return {EndKind::kExitStatus, WEXITSTATUS(st)};
  if (end.connected && !end.finalized) return {EndKind::kNoFinalize, 0};
  return {EndKind::kNormal, 0};
}

std::string Describe(const ProcessEnd& end) {
  const int st = end.wait_status;
  std::string text;
  switch (Classify(end).kind) {
    case EndKind::kSignaled: {
      const char* name = sigabbrev_np(WTERMSIG(st));
      text = "was killed by signal " + std::to_string(WTERMSIG(st)) +
             (name != nullptr ? std::string(" (SIG") + name + ")" : "");
      break;
    }
    case EndKind::kExitStatus:
      text = "exited with status " + std::to_string(WEXITSTATUS(st));
      break;
    case EndKind::kNoFinalize:
      text = "exited without calling PMIx_Finalize";
      break;
    case EndKind::kNormal:
      text = "exited normally";
      break;
  }
  if (end.aborted) {
    text += ", aborted on request";
  } else if (end.injected_signal != 0) {
    text += std::string(", injected by --") + (end.injected_signal == SIGKILL ? "kill" : "stop");
  }
  return text;
}

bool JobVerdict::ProcessEnded(const std::string& label, const ProcessEnd& end, bool ending) {
  const EndClass how = Classify(end);
  if (!how.failed()) return false;
  const std::string what = "rank " + label + " " + Describe(end);
  // The application's own verdict is a non-zero exit status; a signal or a missing finalize is
  // a crash, which with --ft the survivors are there to outlive.
  const bool crashed = how.kind != EndKind::kExitStatus;
  if (!ending && !status_) {
    if (!fault_tolerant_) {
      status_ = how.exit_code != 0 ? how.exit_code : 1;
      summary_ = what + "; the job was ended (run with --ft to keep it going)";
      return true;
    }
    if (!crashed) {
      status_ = how.exit_code;
      summary_ = what;
    }
  }
  if (fault_tolerant_ && crashed) {
    Append(what);
    // A death rftrun caused (--kill, --stop, an abort asked for, the job's end) is the test or
    // the fail-stop working; a signal from anywhere else is a crash the caller must see.
    const bool caused_here = end.injected_signal != 0 || end.aborted || ending;
    if (how.kind == EndKind::kSignaled && !caused_here && !deaths_ok_ && !status_) {
      status_ = how.exit_code;
    }
  }
  return false;
}

void JobVerdict::JobAborted(const std::string& who, int status, const std::string& why) {
  if (status_) return;
  status_ = status != 0 ? ExitCodeOf(status) : 1;
  summary_ = "rank " + who + " aborted the job with status " + std::to_string(status) + why;
}

void JobVerdict::RanksAborted(const std::string& who, const std::string& killed, int status,
                              const std::string& why) {
  // Aborting with status 0 is a fail-stop the program asked for, not a verdict on the job.
  if (status_ || status == 0 || killed.empty()) return;
  status_ = ExitCodeOf(status);
  summary_ =
      "rank " + who + " aborted rank(s) " + killed + " with status " + std::to_string(status) + why;
}

void JobVerdict::TimedOut(const std::string& summary) {
  timed_out_ = true;
  summary_ = summary;
}

void JobVerdict::Interrupted(int signal) {
  interrupted_by_ = signal;
  summary_ = std::string("interrupted by ") + strsignal(signal);
}

void JobVerdict::NodeEndedJob(const std::string& node, int status, const std::string& why) {
  if (!status_) status_ = status != 0 ? status : 1;
  summary_ = "node " + node + " ended the job: " + why;
}

bool JobVerdict::LostNodes(const std::string& nodes, bool ending) {
  if (!status_) status_ = 1;
  if (!fault_tolerant_) {
    if (summary_.empty()) summary_ = "lost the link to node(s) " + nodes;
    return true;
  }
  if (!ending) Append("lost node(s) " + nodes);
  return false;
}

int JobVerdict::ExitStatus() const {
  if (timed_out_) return kTimeoutExitStatus;
  if (interrupted_by_ != 0) return 128 + interrupted_by_;
  return status_.value_or(0);
}

int JobVerdict::CombineNodes(const std::vector<int>& node_statuses) {
  for (int status : node_statuses) {
    if (status != 0) return status;
  }
  return 0;
}

}  // namespace rft::rftrun
