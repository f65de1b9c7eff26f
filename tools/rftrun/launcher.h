// The launcher: starts the job's processes as PMIx clients of this process, relays their
// output, injects faults, turns each abnormal termination into a PMIx event for the
// survivors, and decides the job's exit status.
//
// Threads: libpmix's progress thread calls the PmixHandler functions, which only queue work;
// everything else runs on the main thread's poll loop (signalfd for SIGCHLD and termination
// signals, an eventfd for queued work, the PMIx listening sockets, the children's pipes).
#ifndef RFT_TOOLS_RFTRUN_LAUNCHER_H_
#define RFT_TOOLS_RFTRUN_LAUNCHER_H_

#include <poll.h>
#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "tools/rftrun/finalize_grace.h"
#include "tools/rftrun/job_verdict.h"
#include "tools/rftrun/node_link.h"
#include "tools/rftrun/options.h"
#include "tools/rftrun/output_relay.h"
#include "tools/rftrun/pmix_host.h"
#include "tools/rftrun/timer_heap.h"

namespace rft::rftrun {

class Launcher : public PmixHandler {
 public:
  explicit Launcher(Options options);
  ~Launcher() override;

  // Runs the job to its end and returns rftrun's exit status.
  int Run();

  // PmixHandler: called on libpmix's thread; they queue and wake the main loop.
  void OnClientConnected(const pmix_proc_t& proc) override;
  void OnClientFinalized(const pmix_proc_t& proc) override;
  void OnAbort(AbortRequest request) override;
  void OnSpawn(SpawnRequest request) override;
  void OnListeningSocket(int fd) override;
  void OnFence(FenceRequest request) override;
  void OnDirectModex(ModexRequest request) override;
  void OnModexData(uint64_t id, pmix_status_t status, std::string data) override;

 private:
  // The launcher's time limits (launcher.cc and launcher_exits.cc).
  static constexpr int64_t kNanosPerMs = 1000000;
  // After SIGTERM, how long processes get before SIGKILL.
  static constexpr int64_t kTermGraceNs = 1000 * kNanosPerMs;
  // After every process exited, how long to wait for output still in flight (a grandchild
  // may hold a pipe open forever).
  static constexpr int64_t kDrainGraceNs = 1000 * kNanosPerMs;
  // A process that exited with status 0 before its PMIx_Finalize reached us: libpmix's client
  // waits only 2 s for the server's answer and then exits anyway, so on a loaded node its
  // notice can still be queued here. How long it gets to arrive before the exit counts as a
  // failure.
  static constexpr int64_t kFinalizeGraceNs = 5000 * kNanosPerMs;
  // How long the PMIx server's own finalize may take at rftrun's end.
  static constexpr int64_t kFinalizeBoundNs = 5000 * kNanosPerMs;
  // How long a --kill/--stop due before the rank's PMIx handshake waits for it (docs/rftrun.md).
  static constexpr int64_t kFaultHandshakeWaitNs = 10000 * kNanosPerMs;
  // Across nodes: how long node 0 waits for the others to join, and a joiner for node 0.
  static constexpr std::chrono::milliseconds kAssembleBound{120000};

  struct Process {
    uint32_t index = 0;  // in processes_: the subject of its timers
    std::string nspace;
    uint32_t rank = 0;
    std::string label;  // "2" for the launched job, "s1:0" for spawned ones
    pid_t pid = -1;
    int out_fd = -1;
    int err_fd = -1;
    std::unique_ptr<OutputRelay> out_relay;
    std::unique_ptr<OutputRelay> err_relay;
    bool connected = false;  // called PMIx_Init
    bool finalized = false;  // called PMIx_Finalize
    bool exited = false;
    int wait_status = 0;
    int injected_signal = 0;  // from --kill/--stop
    uint64_t fault_ns = 0;    // when it was injected
    bool stopped = false;     // by --stop, and not resumed
    // A --kill/--stop came due before the PMIx handshake ended; a kSignalAnyway timer sends it
    // even so (a program that never connects).
    int signal_when_connected = 0;
    bool aborted = false;  // killed because of a PMIx_Abort
  };

  // Work handed from libpmix's thread to the main loop: one kind per PmixHandler call.
  struct ClientConnected {
    pmix_proc_t proc;
  };
  struct ClientFinalized {
    pmix_proc_t proc;
  };
  struct ListeningSocket {
    int fd;
  };
  struct ModexData {
    uint64_t id;
    pmix_status_t status;
    std::string data;
  };
  using Queued = std::variant<ClientConnected, ClientFinalized, AbortRequest, SpawnRequest,
                              ListeningSocket, FenceRequest, ModexRequest, ModexData>;

  void Enqueue(Queued item);
  Status Setup();
  Status LaunchJob(const JobSpec& job, const std::vector<SpawnApp>& apps);
  Status StartProcess(Process* process, const SpawnApp& app, const std::vector<std::string>& env);
  void Loop();
  void HandleSignals();
  void HandleQueue();
  void Handle(ClientConnected connected);
  void Handle(ClientFinalized finalized);
  void Handle(AbortRequest request) { HandleAbort(request); }
  void Handle(SpawnRequest request) { HandleSpawn(request); }
  void Handle(ListeningSocket socket) { listen_fds_.push_back(socket.fd); }
  void Handle(FenceRequest request) { StartFence(std::move(request)); }
  void Handle(ModexRequest request) { StartModex(request); }
  void Handle(ModexData data) { AnswerModex(data.id, data.status, data.data); }
  void Reap();
  void OnExit(Process* process, int wait_status);
  // What an exit means (a failure event, the job's status), once it is known whether the
  // process finalized.
  void Conclude(Process* process);
  // Judges the exits held for a finalize notice once the job is ending.
  void ConcludeHeldExits();
  // Carries out every timer due at `now_ns` (timer_heap.h names them).
  void FireDueTimers(int64_t now_ns);
  void TimeOut();  // --timeout
  void HandleAbort(const AbortRequest& request);
  void HandleSpawn(const SpawnRequest& request);
  void InjectDueFaults(int64_t now_ns);
  void InjectSignal(Process* p, int signal);  // a --kill or --stop, now
  void KillStoppedIfOnlyTheyRemain();
  // --get-stack-traces: every live process's stacks on stderr, before a timeout kills them.
  void PrintStackTraces();
  // How long gdb gets per process (attaching to a process with many threads and libraries
  // takes ~1 s here; a loaded machine may need several).
  static constexpr std::chrono::milliseconds kStackTraceBound{20000};
  void EndJob(int signal);  // sends `signal` (after SIGCONT) to every live process

  // A job across nodes (launcher_nodes.cc).
  bool SpansNodes() const { return !links_.empty(); }
  // Joins the nodes into one job before anything is launched; fills layout_ and links_.
  Status AssembleNodes();
  Process* FindRank(uint32_t rank);  // a process of the launched job on this node
  // Sends `frame` toward node `node` (a joiner: always to node 0, which relays).
  void SendToNode(uint32_t node, const std::string& frame);
  void SendToOthers(const std::string& frame, uint32_t except);  // every node but this one
  void HandleLinks(const std::vector<pollfd>& fds, size_t first_link);
  void HandleFrame(uint32_t from, const Frame& frame);
  void LostNode(uint32_t node);
  // Tells this node's processes that `rank`, of another node, terminated (once per rank:
  // returns false if it was already told).
  bool NotifyRemoteTermination(uint32_t rank, pmix_status_t code, int exit_code);
  void StartFence(FenceRequest request);
  void GatherFence(uint32_t from, const std::vector<uint32_t>& ranks, std::string data);
  void FinishFence(const std::vector<uint32_t>& ranks, const std::string& data);
  void StartModex(ModexRequest request);
  void ServeModex(uint32_t requester, uint64_t id, uint32_t rank);
  void AnswerModex(uint64_t local_id, pmix_status_t status, const std::string& data);
  // Tells the other nodes a local process failed, or that the job ends.
  void AnnounceTermination(uint32_t rank, pmix_status_t code, int exit_code);
  void AnnounceEnd();
  void KillRemote(const std::vector<uint32_t>& ranks);  // ranks of other nodes
  void KillLocal(const std::vector<uint32_t>& ranks, std::string* killed);
  // Kills `p` for an abort request; false (and untouched) when it had ended or is ending.
  bool AbortProcess(Process* p);
  // Once this node's processes have all ended: tells node 0, and whether rftrun may exit.
  bool NodesFinished();
  void RecordNodeDone(uint32_t node, int status, const std::string& summary);
  bool Finished() const;
  static ProcessEnd EndOf(const Process& process);
  Process* Find(const pmix_proc_t& proc);
  void Log(const char* format, ...) __attribute__((format(printf, 2, 3)));
  // Removes the files the job's processes left in /dev/shm (DeathWatch segments).
  void RemoveJobFiles();

  Options options_;
  std::string nspace_;
  std::string tmpdir_;
  std::string hostname_;
  std::unique_ptr<PmixHost> pmix_;
  std::vector<std::unique_ptr<Process>> processes_;
  std::map<pid_t, Process*> by_pid_;
  std::vector<int> listen_fds_;
  int signal_fd_ = -1;
  int wake_fd_ = -1;
  int64_t start_ns_ = 0;
  size_t next_fault_ = 0;  // options_.faults is sorted by time
  int spawn_count_ = 0;
  // Every deadline of the job (timer_heap.h), and the exits whose verdict waits for a late
  // finalize notice.
  TimerHeap timers_;
  FinalizeGrace finalize_grace_{&timers_, kFinalizeGraceNs};

  // How the job ends.
  bool ending_ = false;      // every process has been told to die
  bool drain_over_ = false;  // the output's drain grace ended (kDrainOutput)
  JobVerdict verdict_;       // the job's exit status and why, from the events as they come
  int exit_status_ = 1;      // what Run returned, for an exit that cannot wait for libpmix

  // Across nodes (launcher_nodes.cc). Node 0 holds one link per other node (links_[i - 1] for
  // node i); the others one link, to node 0.
  JobLayout layout_;
  std::vector<std::unique_ptr<LinkConnection>> links_;
  std::map<std::vector<uint32_t>, std::deque<FenceRequest>> local_fences_;
  // Node 0: each fence's contributions not yet gathered, per node.
  std::map<std::vector<uint32_t>, std::vector<std::deque<std::string>>> gathering_;
  uint64_t next_modex_id_ = 1;
  std::map<uint64_t, ModexRequest> modex_waiting_;  // asked of another node
  struct ModexServed {
    uint32_t requester = 0;
    uint64_t id = 0;
  };
  std::map<uint64_t, ModexServed> modex_serving_;  // asked of this node's libpmix
  std::vector<bool> remote_failed_;                // by rank: reported to this node's processes
  bool end_from_link_ = false;                     // another node ended the job
  bool done_sent_ = false;
  std::vector<std::optional<int>> node_status_;  // node 0: each node's status once done
  std::optional<int> job_status_;                // the whole job's, once every node is done

  std::mutex queue_mutex_;
  std::deque<Queued> queue_;
};

}  // namespace rft::rftrun

#endif  // RFT_TOOLS_RFTRUN_LAUNCHER_H_
