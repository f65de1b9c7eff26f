#include "tools/rftrun/launcher.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>

#include "base/clock.h"
#include "base/log.h"
#include "tools/rftrun/process_util.h"
#include "transport/bootstrap/launcher_keys.h"

extern char** environ;

namespace rft::rftrun {
namespace {

const sigset_t& HandledSignals() {
  static const sigset_t set = [] {
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGCHLD);
    sigaddset(&s, SIGINT);
    sigaddset(&s, SIGTERM);
    sigaddset(&s, SIGHUP);
    return s;
  }();
  return set;
}

}  // namespace

Launcher::Launcher(Options options)
    : options_(std::move(options)), verdict_(options_.fault_tolerant, options_.deaths_ok) {
  std::stable_sort(options_.faults.begin(), options_.faults.end(),
                   [](const Fault& a, const Fault& b) { return a.at < b.at; });
}

Launcher::~Launcher() {
  // PMIx_server_finalize before its directory goes. libpmix has hung in it (seen twice in 40
  // loaded runs, after a kill during start-up ended a job without --ft); the job's outcome is
  // known by now, so a finalize that does not return in time must not hold rftrun's exit.
  std::mutex mutex;
  std::condition_variable finished;
  bool done = false;
  std::thread watchdog([&] {
    std::unique_lock<std::mutex> lock(mutex);
    if (finished.wait_for(lock, std::chrono::nanoseconds(kFinalizeBoundNs), [&] { return done; })) {
      return;
    }
    WriteAll(2, "rftrun: the PMIx server did not finalize within " +
                    std::to_string(kFinalizeBoundNs / 1000000000) + " s; exiting without it\n");
    RemoveJobFiles();
    if (!tmpdir_.empty()) {
      std::error_code ignored;
      std::filesystem::remove_all(tmpdir_, ignored);
    }
    _exit(exit_status_);
  });
  pmix_.reset();
  {
    std::lock_guard<std::mutex> lock(mutex);
    done = true;
  }
  finished.notify_one();
  watchdog.join();
  for (auto& process : processes_) {
    if (process->out_fd >= 0) close(process->out_fd);
    if (process->err_fd >= 0) close(process->err_fd);
  }
  if (signal_fd_ >= 0) close(signal_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
  if (!tmpdir_.empty()) {
    std::error_code ignored;
    std::filesystem::remove_all(tmpdir_, ignored);
  }
  RemoveJobFiles();
}

void Launcher::RemoveJobFiles() {
  // A process that crashed before its start-up fence left its shared-memory segments named;
  // every job of this launcher (the main one and spawned ones) is rftrun.<pid>[.sN].
  std::vector<std::string> prefixes;
  for (const auto& process : processes_) {
    char prefix[32];
    std::snprintf(prefix, sizeof(prefix), "rft-%08x-", transport::NspaceTag(process->nspace));
    if (std::find(prefixes.begin(), prefixes.end(), prefix) == prefixes.end()) {
      prefixes.push_back(prefix);
    }
  }
  const int removed = RemoveShmFiles(prefixes);
  if (removed > 0) Log("removed %d shared-memory file(s) the job left", removed);
}

void Launcher::Log(const char* format, ...) {
  if (!options_.verbose) return;
  char line[1024];
  const double t = static_cast<double>(MonotonicNanos() - start_ns_) / 1e9;
  int n = std::snprintf(line, sizeof(line), "rftrun [%9.6f] ", t);
  va_list args;
  va_start(args, format);
  n += std::vsnprintf(line + n, sizeof(line) - static_cast<size_t>(n) - 1, format, args);
  va_end(args);
  n = std::min<int>(n, static_cast<int>(sizeof(line)) - 2);
  line[n++] = '\n';
  WriteAll(2, std::string_view(line, static_cast<size_t>(n)));
}

Status Launcher::Setup() {
  start_ns_ = MonotonicNanos();
  if (options_.timeout.count() > 0) {
    timers_.Arm({TimerKind::kJobTimeout}, start_ns_ + options_.timeout.count());
  }
  if (!options_.faults.empty()) {
    timers_.Arm({TimerKind::kNextFault}, start_ns_ + options_.faults.front().at.count());
  }
  nspace_ = "rftrun." + std::to_string(getpid());
  hostname_ = Hostname();
  auto tmpdir = MakeTempDir("rftrun");
  if (!tmpdir.ok()) return tmpdir.status();
  tmpdir_ = *tmpdir;

  // Block before libpmix starts its threads, so they inherit the mask and every SIGCHLD
  // arrives through the signalfd.
  pthread_sigmask(SIG_BLOCK, &HandledSignals(), nullptr);
  signal(SIGPIPE, SIG_IGN);
  signal_fd_ = signalfd(-1, &HandledSignals(), SFD_CLOEXEC | SFD_NONBLOCK);
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (signal_fd_ < 0 || wake_fd_ < 0) {
    return OtherError(std::string("signalfd/eventfd: ") + std::strerror(errno));
  }
  auto host = PmixHost::Start(this, tmpdir_);
  if (!host.ok()) return host.status();
  pmix_ = std::move(*host);
  return Status::Ok();
}

int Launcher::Run() {
  Status status = Setup();
  SpawnApp app;
  if (status.ok()) {
    auto path = ResolveProgram(options_.argv[0]);
    if (!path.ok()) {
      std::fprintf(stderr, "rftrun: %s\n", path.status().message().c_str());
      exit_status_ = 2;
      return 2;
    }
    app.command = *path;
    app.argv = options_.argv;
    app.nprocs = options_.nprocs;
    if (options_.spans_nodes()) status = AssembleNodes();
  }
  if (status.ok()) {
    JobSpec job;
    job.nspace = nspace_;
    job.nprocs = options_.nprocs;
    job.hostname = hostname_;
    if (SpansNodes()) {
      job.nprocs = layout_.size();
      job.nodes = layout_.nodes;
      job.node = layout_.node;
      job.job_token = layout_.job_token;
    }
    job.oversubscribed = options_.nprocs > OnlineCpus();
    job.plain = options_.plain_pmix;
    status = LaunchJob(job, {app});
  }
  if (!status.ok()) {
    std::fprintf(stderr, "rftrun: cannot start the job: %s\n", status.ToString().c_str());
    EndJob(SIGKILL);
    while (!Finished()) {
      Reap();
      FireDueTimers(MonotonicNanos());
      if (!Finished()) usleep(1000);
    }
    return 1;
  }
  Log("launched %u processes of %s%s", options_.nprocs, app.command.c_str(),
      options_.fault_tolerant ? " (fault tolerant)" : "");
  Loop();
  const int exit_status = job_status_.value_or(verdict_.ExitStatus());
  exit_status_ = exit_status;
  if (!verdict_.summary().empty() || exit_status != 0) {
    std::string line = "rftrun: " + (!verdict_.summary().empty() ? verdict_.summary()
                                     : SpansNodes() ? std::string("the job failed on another node")
                                                    : std::string("job failed"));
    line += "; exit status " + std::to_string(exit_status) + "\n";
    WriteAll(2, line);
  }
  return exit_status;
}

Status Launcher::LaunchJob(const JobSpec& job, const std::vector<SpawnApp>& apps) {
  Status status = pmix_->RegisterJob(job);
  if (!status.ok()) return status;
  uint32_t rank = job.nodes.empty() ? 0 : job.nodes[job.node].first;
  for (const SpawnApp& app : apps) {
    for (uint32_t i = 0; i < app.nprocs; ++i, ++rank) {
      auto process = std::make_unique<Process>();
      process->index = static_cast<uint32_t>(processes_.size());
      process->nspace = job.nspace;
      process->rank = rank;
      process->label = job.spawned ? "s" + std::to_string(spawn_count_) + ":" + std::to_string(rank)
                                   : std::to_string(rank);
      auto env = pmix_->PrepareChild(job.nspace, rank);
      if (!env.ok()) return env.status();
      processes_.push_back(std::move(process));
      status = StartProcess(processes_.back().get(), app, *env);
      if (!status.ok()) return status;
    }
  }
  return Status::Ok();
}

Status Launcher::StartProcess(Process* process, const SpawnApp& app,
                              const std::vector<std::string>& pmix_env) {
  // Everything the child needs is built before fork: libpmix has threads, so the child may
  // only make async-signal-safe calls until exec.
  std::vector<std::string> env_strings;
  for (char** var = environ; *var != nullptr; ++var) {
    if (std::strncmp(*var, "PMIX_", 5) != 0) env_strings.emplace_back(*var);  // not inherited
  }
  env_strings.insert(env_strings.end(), pmix_env.begin(), pmix_env.end());
  env_strings.insert(env_strings.end(), app.env.begin(), app.env.end());
  ChildSpec spec;
  spec.path = app.command;
  spec.argv = app.argv;
  spec.env = std::move(env_strings);
  spec.cwd = app.cwd;
  spec.unblock = HandledSignals();
  auto child = ForkExec(spec);
  if (!child.ok()) return child.status();
  process->pid = child->pid;
  process->out_fd = child->out_fd;
  process->err_fd = child->err_fd;
  const std::string prefix = options_.tag_output ? "[" + process->label + "] " : "";
  process->out_relay = std::make_unique<OutputRelay>(1, prefix);
  process->err_relay = std::make_unique<OutputRelay>(2, prefix);
  by_pid_[process->pid] = process;
  return Status::Ok();
}

void Launcher::Loop() {
  std::vector<pollfd> fds;
  std::vector<Process*> owners;  // owner of fds[i] for the pipe entries
  for (;;) {
    const int64_t now = MonotonicNanos();
    FireDueTimers(now);
    ConcludeHeldExits();
    if (Finished() && (!SpansNodes() || NodesFinished())) break;
    const std::optional<int64_t> wake_at = timers_.NextAt();

    fds.clear();
    owners.clear();
    fds.push_back({signal_fd_, POLLIN, 0});
    fds.push_back({wake_fd_, POLLIN, 0});
    for (int fd : listen_fds_) fds.push_back({fd, POLLIN, 0});
    const size_t first_link = fds.size();
    for (const auto& link : links_) {
      // A closed link stays in the list as fd -1, which poll skips.
      fds.push_back(
          {link->fd(), static_cast<short>(POLLIN | (link->wants_write() ? POLLOUT : 0)), 0});
    }
    const size_t first_pipe = fds.size();
    for (auto& p : processes_) {
      if (p->out_fd >= 0) {
        fds.push_back({p->out_fd, POLLIN, 0});
        owners.push_back(p.get());
      }
      if (p->err_fd >= 0) {
        fds.push_back({p->err_fd, POLLIN, 0});
        owners.push_back(p.get());
      }
    }
    const int timeout_ms =
        wake_at ? Deadline::At(*wake_at).remaining_ms_for_poll(MonotonicNanos()) : -1;
    const int ready = poll(fds.data(), fds.size(), timeout_ms);
    if (ready < 0 && errno != EINTR) {
      std::fprintf(stderr, "rftrun: poll: %s\n", std::strerror(errno));
      EndJob(SIGKILL);
      verdict_.LauncherFailed();
      continue;
    }
    if (ready <= 0) continue;
    if (fds[0].revents != 0) HandleSignals();
    if (fds[1].revents != 0) HandleQueue();
    for (size_t i = 2; i < first_link; ++i) {
      if (fds[i].revents != 0) pmix_->AcceptOn(fds[i].fd);
    }
    HandleLinks(fds, first_link);
    for (size_t i = first_pipe; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Process* p = owners[i - first_pipe];
      const bool is_out = fds[i].fd == p->out_fd;
      OutputRelay* relay = is_out ? p->out_relay.get() : p->err_relay.get();
      if (!relay->Drain(fds[i].fd)) {
        close(fds[i].fd);
        (is_out ? p->out_fd : p->err_fd) = -1;
      }
    }
  }
}

void Launcher::FireDueTimers(int64_t now_ns) {
  while (const std::optional<TimerId> timer = timers_.TakeDue(now_ns)) {
    Process* p = timer->subject < processes_.size() ? processes_[timer->subject].get() : nullptr;
    switch (timer->kind) {
      case TimerKind::kJobTimeout:
        TimeOut();
        break;
      case TimerKind::kNextFault:
        InjectDueFaults(now_ns);
        break;
      case TimerKind::kSignalAnyway:
        if (p != nullptr && p->signal_when_connected != 0) {
          if (!p->exited && !ending_) InjectSignal(p, p->signal_when_connected);
          p->signal_when_connected = 0;
        }
        break;
      case TimerKind::kFinalizeGrace:
        if (p != nullptr) Conclude(p);  // no notice came: judged as it is
        break;
      case TimerKind::kKillAfterTerm:
        EndJob(SIGKILL);
        break;
      case TimerKind::kDrainOutput:
        drain_over_ = true;
        break;
      case TimerKind::kNodesGiveUp:
        if (!job_status_) {
          WriteAll(2, "rftrun: the other nodes did not end in time; exiting without them\n");
          job_status_ = verdict_.ExitStatus();
        }
        break;
    }
  }
}

void Launcher::TimeOut() {
  std::string alive;
  for (auto& p : processes_) {
    if (!p->exited) alive += (alive.empty() ? "" : ",") + p->label;
  }
  verdict_.TimedOut("timeout: the job ran longer than " +
                    std::to_string(static_cast<double>(options_.timeout.count()) / 1e9) +
                    " s; killed rank(s) " + alive);
  WriteAll(2, "rftrun: " + verdict_.summary() + "\n");
  if (options_.stack_traces) PrintStackTraces();
  EndJob(SIGKILL);
}

void Launcher::HandleSignals() {
  signalfd_siginfo info;
  bool child = false;
  while (read(signal_fd_, &info, sizeof(info)) == static_cast<ssize_t>(sizeof(info))) {
    if (info.ssi_signo == SIGCHLD) {
      child = true;
    } else if (!ending_) {
      verdict_.Interrupted(static_cast<int>(info.ssi_signo));
      EndJob(SIGTERM);
    }
  }
  if (child) Reap();
}

void Launcher::HandleQueue() {
  uint64_t counter;
  while (read(wake_fd_, &counter, sizeof(counter)) > 0) {
  }
  std::deque<Queued> work;
  {
    std::lock_guard<std::mutex> lock(queue_mutex_);
    work.swap(queue_);
  }
  for (Queued& item : work) {
    std::visit([this](auto&& work_item) { Handle(std::move(work_item)); }, std::move(item));
  }
}

void Launcher::Handle(ClientConnected connected) {
  Process* p = Find(connected.proc);
  if (p == nullptr) return;
  p->connected = true;
  if (p->signal_when_connected != 0 && !p->exited && !ending_) {
    InjectSignal(p, p->signal_when_connected);
  }
  p->signal_when_connected = 0;
  timers_.Disarm({TimerKind::kSignalAnyway, p->index});
}

void Launcher::Handle(ClientFinalized finalized) {
  Process* p = Find(finalized.proc);
  if (p == nullptr) return;
  p->finalized = true;
  if (finalize_grace_.NoticeCame(p->index)) Conclude(p);  // the notice came after the exit
}

void Launcher::HandleAbort(const AbortRequest& request) {
  Process* caller = Find(request.caller);
  const std::string who = caller != nullptr ? caller->label : std::to_string(request.caller.rank);
  bool whole_job = request.targets.empty();
  std::vector<Process*> targets;
  std::vector<uint32_t> remote;  // ranks of the job on other nodes
  for (const pmix_proc_t& target : request.targets) {
    if (target.rank == PMIX_RANK_WILDCARD) {
      whole_job = true;
      break;
    }
    if (Process* p = Find(target)) {
      targets.push_back(p);
    } else if (SpansNodes() && PMIX_CHECK_NSPACE(nspace_.c_str(), target.nspace) &&
               target.rank < layout_.size()) {
      remote.push_back(target.rank);
    }
  }
  const std::string why = request.message.empty() ? "" : ": " + request.message;
  if (whole_job) {
    Log("rank %s aborts the job with status %d", who.c_str(), request.status);
    verdict_.JobAborted(who, request.status, why);
    for (auto& p : processes_) p->aborted = !p->exited;
    EndJob(SIGKILL);
    return;
  }
  bool caller_killed = false;
  std::string killed;
  for (Process* p : targets) {
    if (!AbortProcess(p)) continue;
    caller_killed |= (p == caller);
    killed += (killed.empty() ? "" : ",") + p->label;
  }
  if (!remote.empty() && !whole_job) {
    // Their nodes kill them; the caller does not wait for that, as for local ones.
    KillRemote(remote);
    for (uint32_t rank : remote) killed += (killed.empty() ? "" : ",") + std::to_string(rank);
  }
  if (killed.empty()) {
    Log("rank %s asked to abort ranks that had already ended", who.c_str());
  } else {
    Log("rank %s aborted rank(s) %s with status %d", who.c_str(), killed.c_str(), request.status);
  }
  verdict_.RanksAborted(who, killed, request.status, why);
  if (!caller_killed) pmix_->CompleteAbort(request, PMIX_SUCCESS);
}

bool Launcher::AbortProcess(Process* p) {
  // A process already ending by itself (a victim that killed itself, reported failed by a peer
  // within a millisecond: its robust mutexes are released while it exits) keeps its own
  // verdict; marking it aborted would hide its crash from the job's status.
  if (p->exited || IsExiting(p->pid)) return false;
  p->aborted = true;
  kill(p->pid, SIGKILL);
  kill(p->pid, SIGCONT);
  return true;
}

void Launcher::HandleSpawn(const SpawnRequest& request) {
  if (SpansNodes()) {
    RFT_LOG_WARN("spawn: rftrun cannot start processes for a job across nodes (not supported)");
    pmix_->CompleteSpawn(request, PMIX_ERR_NOT_SUPPORTED, "");
    return;
  }
  ++spawn_count_;
  JobSpec job;
  job.nspace = nspace_ + ".s" + std::to_string(spawn_count_);
  job.hostname = hostname_;
  job.spawned = true;
  job.parent = request.parent;
  job.plain = options_.plain_pmix;
  std::vector<SpawnApp> apps = request.apps;
  for (SpawnApp& app : apps) {
    job.nprocs += app.nprocs;
    auto path = ResolveProgram(app.command.empty() ? app.argv[0] : app.command);
    if (!path.ok()) {
      RFT_LOG_WARN("spawn: %s", path.status().message().c_str());
      pmix_->CompleteSpawn(request, PMIX_ERR_NOT_FOUND, "");
      return;
    }
    app.command = *path;
  }
  uint32_t alive = 0;
  for (auto& p : processes_) alive += p->exited ? 0 : 1;
  job.oversubscribed = alive + job.nprocs > OnlineCpus();
  const Status status = LaunchJob(job, apps);
  if (!status.ok()) {
    RFT_LOG_WARN("spawn of %s failed: %s", job.nspace.c_str(), status.ToString().c_str());
    pmix_->CompleteSpawn(request, PMIX_ERROR, "");
    return;
  }
  Log("spawned %u process(es) as %s", job.nprocs, job.nspace.c_str());
  pmix_->CompleteSpawn(request, PMIX_SUCCESS, job.nspace);
}

void Launcher::InjectDueFaults(int64_t now_ns) {
  while (next_fault_ < options_.faults.size() &&
         start_ns_ + options_.faults[next_fault_].at.count() <= now_ns) {
    const Fault& fault = options_.faults[next_fault_++];
    Process* p = FindRank(fault.rank);
    if (p == nullptr) continue;  // on another node, whose rftrun injects it
    if (p->exited || ending_) {
      Log("--%s %u skipped: the rank is gone", fault.signal == SIGKILL ? "kill" : "stop",
          fault.rank);
      continue;
    }
    // libpmix 4.2.2 reads a client's connection handshake with blocking calls on its server
    // thread: a process stopped between its connect() and the end of that handshake would
    // freeze the PMIx server for every rank; and a fence with a process killed before it
    // connected never completes (docs/rftrun.md). A fault therefore waits for the handshake.
    if (!p->connected) {
      // One that does not come (a program that is no PMIx client): sent after
      // kFaultHandshakeWaitNs even so.
      p->signal_when_connected = fault.signal;
      timers_.Arm({TimerKind::kSignalAnyway, p->index}, now_ns + kFaultHandshakeWaitNs);
      Log("--%s %u waits for the rank's PMIx handshake to end",
          fault.signal == SIGKILL ? "kill" : "stop", fault.rank);
      continue;
    }
    InjectSignal(p, fault.signal);
  }
  if (next_fault_ < options_.faults.size()) {
    timers_.Arm({TimerKind::kNextFault}, start_ns_ + options_.faults[next_fault_].at.count());
  }
  KillStoppedIfOnlyTheyRemain();
}

void Launcher::InjectSignal(Process* p, int signal) {
  p->injected_signal = signal;
  p->fault_ns = static_cast<uint64_t>(MonotonicNanos());
  kill(p->pid, signal);
  if (signal == SIGSTOP) p->stopped = true;
  Log("sent SIG%s to rank %s (pid %d)", sigabbrev_np(signal), p->label.c_str(),
      static_cast<int>(p->pid));
}

void Launcher::EndJob(int signal) {
  if (!ending_) AnnounceEnd();  // across nodes, the others end too
  if (signal != SIGKILL) timers_.Arm({TimerKind::kKillAfterTerm}, MonotonicNanos() + kTermGraceNs);
  ending_ = true;
  for (auto& p : processes_) {
    if (p->exited || p->pid < 0) continue;
    kill(p->pid, signal);
    kill(p->pid, SIGCONT);
  }
}

Launcher::Process* Launcher::Find(const pmix_proc_t& proc) {
  for (auto& p : processes_) {
    if (p->rank == proc.rank && PMIX_CHECK_NSPACE(p->nspace.c_str(), proc.nspace)) {
      return p.get();
    }
  }
  return nullptr;
}

}  // namespace rft::rftrun
