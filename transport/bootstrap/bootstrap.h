// The PMIx client of an rft process: who am I, how big is the job, who shares my node, the
// exchange of transport addresses, and the launcher's process-termination events.
//
// Works under any PMIx launcher: rftrun, Open MPI 5's mpirun, PRRTE's prterun, Slurm's
// `srun --mpi=pmix`. Every lookup and fence is bounded by RFT_PMIX_TIMEOUT, so a peer that
// died before publishing its address turns into an RFT_ERR_TIMEOUT instead of a hang.
#ifndef RFT_TRANSPORT_BOOTSTRAP_BOOTSTRAP_H_
#define RFT_TRANSPORT_BOOTSTRAP_BOOTSTRAP_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"
#include "transport/bootstrap/launcher_keys.h"
#include "transport/bootstrap/rank_space.h"

struct pmix_proc;  // libpmix's process name (pmix_proc_t), kept out of this header

namespace rft::transport {

// A process terminated abnormally, as the launcher reports it.
struct TerminationEvent {
  std::string nspace;            // the job of the process (ours, or e.g. a spawned one)
  Rank rank = 0;                 // the process that terminated: its rank in `nspace`
  Rank job_rank = kInvalidRank;  // its job rank (RankSpace); kInvalidRank: not of this job
  int pmix_code = 0;             // PMIx event code, e.g. -402 (PMIX_ERR_PROC_ABORTED_BY_SIG)
  int exit_code = -1;            // as the launcher saw it (128+signal when killed); -1: unknown
  uint64_t fault_ns = 0;    // rftrun only: CLOCK_MONOTONIC time the fault was injected; 0: unknown
  int64_t received_ns = 0;  // CLOCK_MONOTONIC time this process's handler ran
  std::string host;         // the process's node when the event names it (PMIX_HOSTNAME)
};

// "killed by signal 9 (SIGKILL)", "exited with status 3", "its node n1 went down", ...: for
// messages.
std::string DescribeTermination(const TerminationEvent& event);

// PMIx codes that mean "a process terminated abnormally or is unreachable". The handlers are
// registered for exactly these: the system codes among them (PMIx's "system" range: a node
// down) apart, as a launcher may refuse those.
const std::vector<int>& TerminationEventCodes();
bool IsSystemEventCode(int code);

// The ranks a node-down event that names no process is about: every rank of the job on `host`
// (from the launcher's node map) except `self`.
RankSet RanksOnDownNode(const std::map<std::string, RankSet>& ranks_by_host, std::string_view host,
                        Rank self);

// The environment variable through which a spawned replacement learns the job it joins:
// "<job token>/<spawner's job rank>/<RankSpace::Encode() of the parents' job>". It holds the
// job's secret token, so it goes only into the replacements' own environment (readable by their
// user alone).
inline constexpr char kJoinEnv[] = "RFT_JOIN";
// Set in each process of a spawn of several programs to the index of its program (MPI's
// MPI_APPNUM); absent, 0.
inline constexpr char kAppnumEnv[] = "RFT_APPNUM";

// One program of a spawn: `nprocs` copies of `argv` (the program, then its arguments), started
// in `wdir` (empty: the spawner's working directory).
struct SpawnApp {
  std::vector<std::string> argv;
  uint32_t nprocs = 0;
  std::string wdir;
};

class Bootstrap {
 public:
  // Connects to the launcher's PMIx server (PMIx_Init) and reads rank, size and local peers.
  static StatusOr<std::unique_ptr<Bootstrap>> Init();
  ~Bootstrap();  // PMIx_Finalize
  Bootstrap(const Bootstrap&) = delete;
  Bootstrap& operator=(const Bootstrap&) = delete;

  // This process's job rank, and the job's size (both in the RankSpace: a replacement's rank
  // follows its parents'; the size grows with AddRanks).
  Rank rank() const { return rank_; }
  uint32_t size() const { return size_.load(std::memory_order_acquire); }
  const std::string& nspace() const { return nspace_; }
  // A random 32-bit secret of this job that every wire message carries, so a message from
  // another job (a stale process, a spawned job's stray endpoint) or from anyone outside the
  // job who can reach an endpoint is recognised and dropped. rftrun hands it out with the
  // job's information (launcher_keys.h); under other launchers rank 0 draws it and the others
  // read it through PMIx at Init. Only the job's processes (and the launcher) know it.
  uint32_t job_token() const { return job_token_; }
  // A public 32-bit digest of the namespace: names this job's files (e.g. in /dev/shm) so the
  // launcher can remove what a crash left. Not a secret.
  uint32_t job_tag() const { return NspaceTag(nspace_); }
  // Job ranks; including this process. Only those of this process's own namespace, fixed at
  // Init: what is laid out for the node at start-up (rings, the death watch) is sized by it.
  const RankSet& local_peers() const { return local_peers_; }
  // The job ranks on this node across every namespace of the job: local_peers(), and the
  // processes of the other namespaces the launcher places here (PMIX_LOCAL_PEERS of each): a
  // replacement's parents, a survivor's replacements (docs/recovery.md). It grows with
  // AddRanks, which may run beside readers: a copy.
  RankSet node_peers() const;
  // The processes of this node cannot each have a core of their own (the launcher says so,
  // or their CPU masks do): progress loops must block, not spin.
  bool oversubscribed() const { return oversubscribed_; }

  // Publishes `value` under `key` for every process of the job (visible after Commit and a
  // Fence). Keys are namespaced by the caller ("rft.ucx.addr").
  Status Put(std::string_view key, std::span<const std::byte> value);
  Status Commit();
  // Waits for every process of the job; with `collect_data`, published values are gathered.
  Status Fence(bool collect_data);
  // Waits for the processes `ranks` only (this one among them), e.g. the survivors of a
  // failure: a fence over a dead process has no defined outcome in PMIx (success, partial
  // success or a timeout). RFT_ERR_ARG for an empty set, a rank beyond the job or a set
  // without this process.
  Status Fence(bool collect_data, const RankSet& ranks);
  // `rank`'s value under `key`, waited for: RFT_ERR_TIMEOUT after RFT_PMIX_TIMEOUT, and
  // RFT_ERR_PROC_FAILED as soon as the launcher reports the process ended without it.
  StatusOr<std::vector<std::byte>> Get(Rank rank, std::string_view key);

  // Every rank publishes `mine` under `key` and reads everyone's, without waiting for ranks
  // that cannot answer: one that the launcher reports ended, or that did not publish within
  // RFT_PMIX_TIMEOUT. Such ranks are `missing` (values[r] empty); `silent` are those of them
  // not known dead (hung or slow: a fault-tolerant caller declares them failed and has them
  // killed, so that nobody goes on with them). Errors only for this process's own calls.
  struct ExchangeResult {
    std::vector<std::vector<std::byte>> values;  // [rank]
    RankSet missing;
    RankSet silent;
  };
  StatusOr<ExchangeResult> ExchangeLive(std::string_view key, std::span<const std::byte> mine);
  // As ExchangeLive, but every rank must answer: RFT_ERR_PROC_FAILED naming the ranks that
  // ended first, RFT_ERR_TIMEOUT naming the silent ones. Element r is rank r's value.
  StatusOr<std::vector<std::vector<std::byte>>> Exchange(std::string_view key,
                                                         std::span<const std::byte> mine);

  // The ranks of this job the launcher reported ended so far (from Init on).
  RankSet DeadRanks() const;

  // `callback` runs on libpmix's thread for every termination event, once per event; it must
  // be quick and thread-safe (the detector hands the news to its own thread). Events since
  // Init are replayed to it at once (a failure during start-up is not lost). One subscriber:
  // RFT_ERR_ARG while another is set; a null callback removes it.
  using TerminationCallback = std::function<void(const TerminationEvent&)>;
  Status OnTermination(TerminationCallback callback);

  // Asks the launcher to kill `ranks` of this job (all of it when empty) and reports `status`
  // and `message`. Returns when the launcher has acted, unless this process was among them.
  Status Abort(int status, std::string_view message, const RankSet& ranks);

  // Starts `nprocs` copies of `argv` as a new job (PMIx_Spawn) and returns its namespace.
  // Returns once the launcher has started them. With `join`, they join this job as
  // replacements (kJoinEnv): they take job ranks size()..size()+nprocs-1 once every process of
  // the job has called AddRanks with the namespace.
  StatusOr<std::string> Spawn(const std::vector<std::string>& argv, uint32_t nprocs,
                              bool join = false) {
    return Spawn(std::vector<SpawnApp>{{argv, nprocs, ""}}, join);
  }
  // The same for several programs in one new job: app 0's processes take its first ranks, then
  // app 1's, and so on; each process finds its app's index in kAppnumEnv.
  StatusOr<std::string> Spawn(const std::vector<SpawnApp>& apps, bool join = false);
  // This process's app index in the spawn that started it (kAppnumEnv); 0 otherwise.
  static uint32_t appnum();
  // The `count` processes of `nspace` (spawned with join) take the next job ranks. Every
  // process of the job adds the same namespaces in the same order. Those of them the launcher
  // reported ended before are in DeadRanks() from then on. RFT_ERR_ARG as RankSpace::Add.
  Status AddRanks(std::string_view nspace, uint32_t count);
  // The job's rank blocks so far.
  RankSpace ranks() const;

  // True when this process was started by PMIx_Spawn.
  bool spawned() const { return spawned_; }
  // True when it was spawned to join an existing job as a replacement (kJoinEnv).
  bool joined() const { return joined_; }
  // For a replacement: the job rank of the process that spawned it; kInvalidRank otherwise.
  Rank spawner() const { return spawner_; }
  // This process's own namespace's block of job ranks, fixed at Init: the job's first block, or
  // for a replacement the processes spawned with it (its parents' blocks come before).
  const RankBlock& own_block() const { return own_block_; }

  std::chrono::nanoseconds timeout() const { return timeout_; }

 private:
  Bootstrap() = default;
  Status ReadJobInfo();
  // The job token and whether the node is oversubscribed, from the launcher when it says
  // (rftrun does), else agreed by one fence: rank 0 draws the token, every rank publishes its
  // CPU mask and the local ranks' masks decide (cpu_placement.h).
  Status ShareStartupFacts();
  Status RegisterEventHandler();
  // Adds `block`'s processes to the node map that expands node-down events (best effort).
  void ReadNodeMap(const RankBlock& block);
  // `block`'s processes on this node as job ranks: empty, and logged, when the launcher does not
  // say.
  RankSet LocalRanksOf(const RankBlock& block) const;
  // Adds `ranks` to node_peers() (under its lock: readers may be at it).
  void AddNodePeers(const RankSet& ranks);
  // PMIx_Fence over `procs` (nullptr: the whole job).
  Status FenceOver(bool collect_data, const ::pmix_proc* procs, size_t count);
  // With kJoinEnv set: the job's blocks, this process's job rank and the job's token.
  Status JoinParentJob(const char* join);
  // The PMIx name of job rank `rank` (< size()) into *out.
  void ProcOf(Rank rank, ::pmix_proc* out) const;

  Rank rank_ = 0;
  std::atomic<uint32_t> size_{0};
  bool joined_ = false;
  uint32_t join_token_ = 0;
  Rank spawner_ = kInvalidRank;
  RankBlock own_block_;
  uint32_t job_token_ = 0;
  std::string nspace_;
  RankSet local_peers_;
  mutable std::mutex node_peers_mutex_;
  RankSet node_peers_;  // guarded by node_peers_mutex_
  bool oversubscribed_ = false;
  bool oversubscribed_known_ = false;
  bool spawned_ = false;
  std::chrono::nanoseconds timeout_{};
  std::vector<size_t> handler_ids_;  // the termination handlers registered with PMIx
};

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_BOOTSTRAP_BOOTSTRAP_H_
