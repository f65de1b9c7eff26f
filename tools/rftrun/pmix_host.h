// rftrun's side of the PMIx server: the module of upcalls that libpmix's server calls, job
// registration, the environment of each child, and termination events.
//
// libpmix runs the upcalls on its own progress thread, and several of its blocking calls
// deadlock when made from there (NOTES.md). So every upcall that needs launcher action (abort,
// spawn, accepting a connection) is handed to a Handler, which queues it for the launcher's
// main thread; the main thread alone touches processes and calls back into libpmix.
#ifndef RFT_TOOLS_RFTRUN_PMIX_HOST_H_
#define RFT_TOOLS_RFTRUN_PMIX_HOST_H_

#include <pmix.h>
#include <pmix_server.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"

namespace rft::rftrun {

// PMIx_Abort from a client: kill `targets` (all of the caller's namespace when empty), then
// complete the caller's request with `Complete` unless the caller itself was killed.
struct AbortRequest {
  pmix_proc_t caller{};
  int status = 0;
  std::string message;
  std::vector<pmix_proc_t> targets;
  pmix_op_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

// PMIx_Spawn from a client: start the apps as a new namespace and answer with its name.
struct SpawnApp {
  std::string command;
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // "NAME=value" additions
  std::string cwd;
  uint32_t nprocs = 1;
};
struct SpawnRequest {
  pmix_proc_t parent{};
  std::vector<SpawnApp> apps;
  pmix_spawn_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

// A fence whose processes span nodes (only in a multi-node job): the node's contribution goes
// to the other nodes, and `Complete` gets every involved node's contribution.
struct FenceRequest {
  std::vector<uint32_t> ranks;  // sorted; empty: every process of the job
  std::string data;             // this node's contribution (opaque, libpmix's own encoding)
  pmix_modex_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

// A client asked for data of a process on another node that no fence brought here.
struct ModexRequest {
  uint32_t rank = 0;
  pmix_modex_cbfunc_t cbfunc = nullptr;
  void* cbdata = nullptr;
};

// Receives what libpmix's progress thread reports. Implementations must be thread-safe and
// must not call libpmix from these functions.
class PmixHandler {
 public:
  virtual ~PmixHandler() = default;
  virtual void OnClientConnected(const pmix_proc_t& proc) = 0;
  virtual void OnClientFinalized(const pmix_proc_t& proc) = 0;
  virtual void OnAbort(AbortRequest request) = 0;
  virtual void OnSpawn(SpawnRequest request) = 0;
  // A client connection on one of the server's listening sockets is ready to be accepted.
  virtual void OnListeningSocket(int fd) = 0;
  // Only in a multi-node job (PmixHost::SpanNodes):
  virtual void OnFence(FenceRequest request) = 0;
  virtual void OnDirectModex(ModexRequest request) = 0;
  // The answer to PmixHost::RequestModex(`id`, ...).
  virtual void OnModexData(uint64_t id, pmix_status_t status, std::string data) = 0;
};

// One node of a job and the ranks it runs, [first, first + count).
struct NodeRanks {
  std::string name;
  uint32_t first = 0;
  uint32_t count = 0;
};

// What a job's namespace tells its processes.
struct JobSpec {
  std::string nspace;
  uint32_t nprocs = 0;
  std::string hostname;
  // A job across nodes: every node's ranks (nprocs is their sum) and which node is this one.
  // Empty: all nprocs ranks run here, on `hostname`.
  std::vector<NodeRanks> nodes;
  uint32_t node = 0;
  uint32_t job_token = 0;  // 0: draw a fresh one
  bool oversubscribed = false;
  bool spawned = false;
  pmix_proc_t parent{};  // when spawned
  bool plain = false;    // only standard keys: no job token, no PMIX_NODE_OVERSUBSCRIBED
};

// The one PMIx server of this process (libpmix allows one).
class PmixHost {
 public:
  // Initialises libpmix's server with its rendezvous files under `tmpdir`.
  static StatusOr<std::unique_ptr<PmixHost>> Start(PmixHandler* handler, const std::string& tmpdir);
  ~PmixHost();
  PmixHost(const PmixHost&) = delete;
  PmixHost& operator=(const PmixHost&) = delete;

  Status RegisterJob(const JobSpec& job);
  // Registers rank `rank` of `nspace` as a local client and returns the environment
  // additions ("NAME=value") the child needs to connect back.
  StatusOr<std::vector<std::string>> PrepareChild(const std::string& nspace, uint32_t rank);

  // Hands an accepted connection on a listening socket to libpmix (with TCP_NODELAY set,
  // so a termination event right after other traffic is not held back by Nagle).
  void AcceptOn(int listening_fd);

  // Tells every process of the session that `rank` of `nspace` terminated abnormally.
  // `fault_ns` is the CLOCK_MONOTONIC time at which rftrun injected the fault (0: not
  // injected); benchmarks use it to time detection. `host`, when not empty, names the process's
  // node (PMIX_HOSTNAME), as a node-down event does.
  Status NotifyTermination(const std::string& nspace, uint32_t rank, pmix_status_t code,
                           int exit_code, uint64_t fault_ns, const std::string& host = "");

  // From now on, fences and requests for other processes' data go to the handler, as the job
  // spans nodes.
  void SpanNodes();
  void CompleteFence(const FenceRequest& request, pmix_status_t status, const std::string& data);
  void CompleteModex(const ModexRequest& request, pmix_status_t status, const std::string& data);
  // Asks libpmix for everything local `rank` of `nspace` committed (once it has); the answer
  // comes to PmixHandler::OnModexData with `id`.
  void RequestModex(const std::string& nspace, uint32_t rank, uint64_t id);

  void CompleteAbort(const AbortRequest& request, pmix_status_t status);
  void CompleteSpawn(const SpawnRequest& request, pmix_status_t status, const std::string& nspace);

 private:
  PmixHost() = default;
};

// Key of the injected fault's time in termination events (uint64, CLOCK_MONOTONIC ns).
inline constexpr char kFaultTimeKey[] = "rft.fault.ns";

}  // namespace rft::rftrun

#endif  // RFT_TOOLS_RFTRUN_PMIX_HOST_H_
