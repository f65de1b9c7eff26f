// What rftrun does when a process ends: reaps it, waits for a late PMIx_Finalize notice, tells
// its peers of a failure, and hands the end to the job's verdict (job_verdict.h, where the rules
// are); the end of the job (stopped processes, the output's drain).

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
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
  if (finalize_grace_.HoldExit(process->index, EndOf(*process), ending_, MonotonicNanos())) {
    Log("rank %s (pid %d) exited with status 0; waiting for its PMIx_Finalize notice",
        process->label.c_str(), static_cast<int>(process->pid));
    KillStoppedIfOnlyTheyRemain();  // an exit all the same, whatever its verdict
    return;
  }
  Conclude(process);
}

void Launcher::ConcludeHeldExits() {
  if (!ending_) return;
  for (uint32_t index : finalize_grace_.ReleaseAll()) Conclude(processes_[index].get());
}

ProcessEnd Launcher::EndOf(const Process& process) {
  return ProcessEnd{.wait_status = process.wait_status,
                    .connected = process.connected,
                    .finalized = process.finalized,
                    .aborted = process.aborted,
                    .injected_signal = process.injected_signal};
}

void Launcher::Conclude(Process* process) {
  const ProcessEnd end = EndOf(*process);
  const EndClass how = Classify(end);
  Log("rank %s (pid %d) %s", process->label.c_str(), static_cast<int>(process->pid),
      Describe(end).c_str());
  if (how.failed() && !ending_) {
    const pmix_status_t code = how.kind == EndKind::kSignaled     ? PMIX_ERR_PROC_ABORTED_BY_SIG
                               : how.kind == EndKind::kExitStatus ? PMIX_ERR_EXIT_NONZERO_TERM
                                                                  : PMIX_ERR_PROC_TERM_WO_SYNC;
    const Status status = pmix_->NotifyTermination(process->nspace, process->rank, code,
                                                   how.exit_code, process->fault_ns);
    if (!status.ok()) {
      RFT_LOG_WARN("event for rank %s not sent: %s", process->label.c_str(),
                   status.ToString().c_str());
    }
    Log("event %s sent for rank %s", PMIx_Error_string(code), process->label.c_str());
    if (process->nspace == nspace_) AnnounceTermination(process->rank, code, how.exit_code);
  }
  if (verdict_.ProcessEnded(process->label, end, ending_)) EndJob(SIGTERM);
  KillStoppedIfOnlyTheyRemain();
  if (Finished() ||
      std::all_of(processes_.begin(), processes_.end(), [](const auto& p) { return p->exited; })) {
    timers_.Arm({TimerKind::kDrainOutput}, MonotonicNanos() + kDrainGraceNs);
    drain_over_ = false;
  }
}

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

// A rank stopped by --stop never exits by itself; once it is all that is left, it is a
// hung process and is killed so the job can end.
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
    if (finalize_grace_.held(p->index)) return false;  // its verdict is still open
    pipes_open |= p->out_fd >= 0 || p->err_fd >= 0;
  }
  return !pipes_open || drain_over_;
}

}  // namespace rft::rftrun
