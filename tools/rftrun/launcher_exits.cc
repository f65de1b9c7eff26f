// How rftrun judges each process's end (a failure to its peers or not, announced to them or
// not) and what the job's exit status becomes: the part of the launcher every fault-tolerance
// promise of rftrun rests on, kept apart from starting processes and serving requests.

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "base/clock.h"
#include "base/log.h"
#include "tools/rftrun/launcher.h"
#include "tools/rftrun/process_util.h"
#include "tools/rftrun/stack_traces.h"

namespace rft::rftrun {

void Launcher::Reap() {
  // A client's PMIx_Finalize returns only after our upcall queued the notice, so draining the
  // queue first means a process that finalized and exited is never mistaken for a failure.
  HandleQueue();
  for (;;) {
    int wait_status = 0;
    const pid_t pid = waitpid(-1, &wait_status, WNOHANG);
    if (pid <= 0) return;
    auto it = by_pid_.find(pid);
    if (it != by_pid_.end()) OnExit(it->second, wait_status);
  }
}

void Launcher::OnExit(Process* process, int wait_status) {
  process->exited = true;
  process->wait_status = wait_status;
  process->stopped = false;
  if (WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0 && process->connected &&
      !process->finalized && !ending_) {
    process->finalize_deadline_ns = MonotonicNanos() + kFinalizeGraceNs;  // ConcludeLateExits
    Log("rank %s (pid %d) exited with status 0; waiting for its PMIx_Finalize notice",
        process->label.c_str(), static_cast<int>(process->pid));
    return;
  }
  Conclude(process);
}

void Launcher::ConcludeLateExits(int64_t now_ns) {
  for (auto& p : processes_) {
    if (p->finalize_deadline_ns == 0) continue;
    if (!p->finalized && !ending_ && now_ns < p->finalize_deadline_ns) continue;
    p->finalize_deadline_ns = 0;
    Conclude(p.get());
  }
}

void Launcher::Conclude(Process* process) {
  const int wait_status = process->wait_status;
  pmix_status_t code = PMIX_SUCCESS;
  int exit_code = 0;
  if (WIFSIGNALED(wait_status)) {
    code = PMIX_ERR_PROC_ABORTED_BY_SIG;
    exit_code = 128 + WTERMSIG(wait_status);
  } else if (WEXITSTATUS(wait_status) != 0) {
    code = PMIX_ERR_EXIT_NONZERO_TERM;
    exit_code = WEXITSTATUS(wait_status);
  } else if (process->connected && !process->finalized) {
    code = PMIX_ERR_PROC_TERM_WO_SYNC;  // left without PMIx_Finalize: a failure to its peers
  }
  const bool failed = code != PMIX_SUCCESS;
  Log("rank %s (pid %d) %s", process->label.c_str(), static_cast<int>(process->pid),
      Describe(*process).c_str());
  if (failed && !ending_) {
    const Status status = pmix_->NotifyTermination(process->nspace, process->rank, code, exit_code,
                                                   process->fault_ns);
    if (!status.ok()) {
      RFT_LOG_WARN("event for rank %s not sent: %s", process->label.c_str(),
                   status.ToString().c_str());
    }
    Log("event %s sent for rank %s", PMIx_Error_string(code), process->label.c_str());
    if (process->nspace == nspace_) AnnounceTermination(process->rank, code, exit_code);
  }
  // Which failures end the job: without --ft, any; with it, only the application's own
  // verdict (a non-zero exit status), which decides the exit status but lets the rest finish.
  const bool crashed = failed && !(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) != 0);
  if (failed && !ending_ && !failure_status_) {
    if (!options_.fault_tolerant) {
      failure_status_ = exit_code != 0 ? exit_code : 1;
      failure_summary_ = "rank " + process->label + " " + Describe(*process) +
                         "; the job was ended (run with --ft to keep it going)";
      EndJob(SIGTERM);
    } else if (!crashed) {
      failure_status_ = exit_code;
      failure_summary_ = "rank " + process->label + " " + Describe(*process);
    }
  }
  if (failed && options_.fault_tolerant && crashed) {
    if (!failure_summary_.empty()) failure_summary_ += "; ";
    failure_summary_ += "rank " + process->label + " " + Describe(*process);
    // A death rftrun caused (--kill, --stop, an abort asked for, the job's end) is the test or
    // the fail-stop working; a signal from anywhere else is a crash the caller must see.
    const bool caused_here = process->injected_signal != 0 || process->aborted || ending_;
    if (WIFSIGNALED(wait_status) && !caused_here && !options_.deaths_ok && !failure_status_) {
      failure_status_ = exit_code;
    }
  }
  KillStoppedIfOnlyTheyRemain();
  if (Finished() ||
      std::all_of(processes_.begin(), processes_.end(), [](const auto& p) { return p->exited; })) {
    drain_deadline_ns_ = MonotonicNanos() + kDrainGraceNs;
  }
}

std::string Launcher::Describe(const Process& process) const {
  std::string text;
  const int st = process.wait_status;
  if (!process.exited) {
    text = "is still running";
  } else if (WIFSIGNALED(st)) {
    const char* name = sigabbrev_np(WTERMSIG(st));
    text = "was killed by signal " + std::to_string(WTERMSIG(st)) +
           (name != nullptr ? std::string(" (SIG") + name + ")" : "");
  } else if (WEXITSTATUS(st) != 0) {
    text = "exited with status " + std::to_string(WEXITSTATUS(st));
  } else if (process.connected && !process.finalized) {
    text = "exited without calling PMIx_Finalize";
  } else {
    text = "exited normally";
  }
  if (process.aborted) {
    text += ", aborted on request";
  } else if (process.injected_signal != 0) {
    text +=
        std::string(", injected by --") + (process.injected_signal == SIGKILL ? "kill" : "stop");
  }
  return text;
}

// A rank stopped by --stop never exits by itself; once it is all that is left, it is a
// hung process and is killed so the job can end.
void Launcher::PrintStackTraces() {
  for (auto& p : processes_) {
    if (p->exited || p->pid < 0) continue;
    auto traces = CollectStackTraces(p->pid, kStackTraceBound);
    if (!traces.ok()) {
      WriteAll(2, "rftrun: --get-stack-traces: " + traces.status().message() + "\n");
      return;
    }
    WriteAll(2, "rftrun: stack traces of rank " + p->label + " (pid " + std::to_string(p->pid) +
                    "):\n" + *traces);
  }
}

void Launcher::KillStoppedIfOnlyTheyRemain() {
  bool any_stopped = false;
  for (auto& p : processes_) {
    if (p->exited) continue;
    if (!p->stopped) return;
    any_stopped = true;
  }
  if (!any_stopped) return;
  for (auto& p : processes_) {
    if (p->exited || !p->stopped) continue;
    Log("killing stopped rank %s: every other process has exited", p->label.c_str());
    kill(p->pid, SIGKILL);
    kill(p->pid, SIGCONT);
    p->stopped = false;
  }
}

bool Launcher::Finished() const {
  bool pipes_open = false;
  for (const auto& p : processes_) {
    if (!p->exited && p->pid >= 0) return false;
    if (p->finalize_deadline_ns != 0) return false;  // its verdict is still open
    pipes_open |= p->out_fd >= 0 || p->err_fd >= 0;
  }
  return !pipes_open || (drain_deadline_ns_ != 0 && MonotonicNanos() >= drain_deadline_ns_);
}

int Launcher::ExitStatus() const {
  if (timed_out_) return kTimeoutExitStatus;
  if (interrupted_by_ != 0) return 128 + interrupted_by_;
  if (failure_status_) return *failure_status_;
  return 0;
}

}  // namespace rft::rftrun
