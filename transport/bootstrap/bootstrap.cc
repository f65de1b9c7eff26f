#include "transport/bootstrap/bootstrap.h"

#include <pmix.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include "base/check.h"
#include "base/clock.h"
#include "base/config.h"
#include "base/log.h"
#include "base/random.h"
#include "transport/bootstrap/cpu_placement.h"
#include "transport/bootstrap/pmix_util.h"

namespace rft::transport {

using internal::PmixError;
using internal::TimeoutInfo;

namespace {

// libpmix's event handler has no user pointer that survives re-registration; one client per
// process, so the callback lives here.
std::mutex g_callback_mutex;
Bootstrap::TerminationCallback g_callback;       // guarded by g_callback_mutex
std::vector<TerminationEvent> g_events;          // every event so far, for late subscribers
RankSet g_dead;                                  // job ranks the launcher said ended
std::map<std::string, RankSet> g_ranks_by_host;  // the job ranks per node, read at Init
// The job's ranks across namespaces, and this process's job rank. A lock of their own, never
// held while calling out: the subscriber runs under g_callback_mutex and may call back in.
// Order: g_callback_mutex, then g_space_mutex.
std::mutex g_space_mutex;
RankSpace g_space;  // guarded by g_space_mutex
Rank g_self = 0;    // guarded by g_space_mutex
pmix_proc_t g_myproc;

void OnEvent(size_t, pmix_status_t status, const pmix_proc_t* source, pmix_info_t info[],
             size_t ninfo, pmix_info_t*, size_t, pmix_event_notification_cbfunc_fn_t cbfunc,
             void* cbdata) {
  TerminationEvent event;
  event.received_ns = MonotonicNanos();
  event.pmix_code = status;
  const pmix_proc_t* affected = source;
  bool named = false;
  std::string host;
  for (size_t i = 0; i < ninfo; ++i) {
    if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC &&
        info[i].value.data.proc != nullptr) {
      affected = info[i].value.data.proc;
      named = true;
    } else if (PMIX_CHECK_KEY(&info[i], PMIX_HOSTNAME) && info[i].value.type == PMIX_STRING &&
               info[i].value.data.string != nullptr) {
      host = info[i].value.data.string;
      event.host = host;
    } else if (PMIX_CHECK_KEY(&info[i], PMIX_EXIT_CODE) && info[i].value.type == PMIX_INT) {
      event.exit_code = info[i].value.data.integer;
    } else if (PMIX_CHECK_KEY(&info[i], "rft.fault.ns") && info[i].value.type == PMIX_UINT64) {
      event.fault_ns = info[i].value.data.uint64;
    }
  }
  if (status == PMIX_ERR_NODE_DOWN && !named) {
    // A whole node is gone and no process is named: every rank of this job on it failed.
    std::lock_guard<std::mutex> lock(g_callback_mutex);
    std::unique_lock<std::mutex> space_lock(g_space_mutex);
    const RankSet ranks = RanksOnDownNode(g_ranks_by_host, host, g_self);
    std::vector<TerminationEvent> events;
    if (ranks.empty()) {
      RFT_LOG_WARN("node-down event for \"%s\" names no process of this job and no node of it",
                   host.c_str());
    }
    for (Rank rank : ranks) {
      const RankBlock* block = g_space.BlockOf(rank);
      event.nspace = block != nullptr ? block->nspace : std::string(g_myproc.nspace);
      event.rank = block != nullptr ? rank - block->first : rank;
      event.job_rank = rank;
      events.push_back(event);
    }
    space_lock.unlock();
    for (const TerminationEvent& each : events) {
      g_events.push_back(each);
      g_dead.Insert(each.job_rank);
      if (g_callback) g_callback(each);
    }
    if (cbfunc != nullptr) {
      cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
    }
    return;
  }
  if (affected != nullptr) {
    event.nspace = affected->nspace;
    event.rank = affected->rank;
  }
  // An event about ourselves (or without a process) is not a peer's termination.
  const bool about_a_peer =
      affected != nullptr && affected->rank != PMIX_RANK_WILDCARD &&
      !(PMIX_CHECK_NSPACE(affected->nspace, g_myproc.nspace) && affected->rank == g_myproc.rank);
  if (about_a_peer) {
    {
      // A replacement's parents and siblings are in other namespaces of the same job.
      std::lock_guard<std::mutex> lock(g_space_mutex);
      event.job_rank = g_space.JobRankOf(event.nspace, event.rank);
    }
    std::lock_guard<std::mutex> lock(g_callback_mutex);
    g_events.push_back(event);
    if (event.job_rank != kInvalidRank) g_dead.Insert(event.job_rank);
    if (g_callback) g_callback(event);
  }
  if (cbfunc != nullptr) cbfunc(PMIX_EVENT_ACTION_COMPLETE, nullptr, 0, nullptr, nullptr, cbdata);
}

}  // namespace

std::string DescribeTermination(const TerminationEvent& event) {
  if (event.pmix_code == PMIX_ERR_PROC_ABORTED_BY_SIG && event.exit_code > 128) {
    const int signal = event.exit_code - 128;
    const char* name = sigabbrev_np(signal);
    return "killed by signal " + std::to_string(signal) +
           (name ? std::string(" (SIG") + name + ")" : "");
  }
  if (event.pmix_code == PMIX_ERR_EXIT_NONZERO_TERM && event.exit_code >= 0) {
    return "exited with status " + std::to_string(event.exit_code);
  }
  if (event.pmix_code == PMIX_ERR_PROC_TERM_WO_SYNC) return "exited without finalizing";
  if (event.pmix_code == PMIX_ERR_NODE_DOWN) {
    return event.host.empty() ? "its node went down" : "its node " + event.host + " went down";
  }
  return std::string(PMIx_Error_string(event.pmix_code));
}

const std::vector<int>& TerminationEventCodes() {
  static const std::vector<int> codes = {
      PMIX_ERR_PROC_ABORTED_BY_SIG,   // -402: killed by a signal (PRRTE, Open MPI 5, rftrun)
      PMIX_ERR_PROC_TERM_WO_SYNC,     // -200: exited without PMIx_Finalize
      PMIX_ERR_PROC_ABORTED,          // -7
      PMIX_ERR_EXIT_NONZERO_TERM,     // -404: exited with a non-zero status
      PMIX_ERR_PROC_REQUESTED_ABORT,  // -8
      PMIX_ERR_PROC_KILLED_BY_CMD,    // -400
      PMIX_ERR_LOST_CONNECTION,       // -61
      PMIX_ERR_LOST_PEER_CONNECTION,  // -102
      PMIX_ERR_UNREACH,               // -25
      PMIX_ERR_NODE_DOWN,             // -231: every process of that node
  };
  return codes;
}

bool IsSystemEventCode(int code) { return PMIX_SYSTEM_EVENT(code); }

StatusOr<std::unique_ptr<Bootstrap>> Bootstrap::Init() {
  auto timeout = config::GetDuration("RFT_PMIX_TIMEOUT");
  if (!timeout.ok()) return timeout.status();
  std::unique_ptr<Bootstrap> bootstrap(new Bootstrap());
  bootstrap->timeout_ = *timeout;
  if (std::getenv("PMIX_NAMESPACE") == nullptr && std::getenv("PMIX_SERVER_URI4") == nullptr &&
      std::getenv("PMIX_SERVER_URI41") == nullptr && std::getenv("PMIX_SERVER_URI3") == nullptr &&
      std::getenv("PMIX_SERVER_URI2") == nullptr) {
    return OtherError(
        "no PMIx launcher: start this program with rftrun (or another PMIx launcher such as "
        "mpirun, prterun or srun --mpi=pmix)");
  }
  pmix_proc_t myproc;
  const pmix_status_t rc = PMIx_Init(&myproc, nullptr, 0);
  if (rc != PMIX_SUCCESS) return PmixError("PMIx_Init", rc);
  g_myproc = myproc;
  bootstrap->rank_ = myproc.rank;
  bootstrap->nspace_ = myproc.nspace;
  Status status = bootstrap->ReadJobInfo();
  const char* join = std::getenv(kJoinEnv);
  if (status.ok() && join != nullptr) {
    status = bootstrap->JoinParentJob(join);
  } else if (status.ok()) {
    std::lock_guard<std::mutex> lock(g_space_mutex);
    g_space = RankSpace();
    status = g_space.Add(bootstrap->nspace_, bootstrap->size());
    g_self = bootstrap->rank_;
    bootstrap->own_block_ = {.nspace = bootstrap->nspace_, .first = 0, .count = bootstrap->size()};
  }
  if (status.ok()) bootstrap->AddNodePeers(bootstrap->local_peers_);
  // Listen from the start: a peer that dies during start-up must be known to the exchanges
  // (they stop waiting for it) and to subscribers that come later (they get it replayed).
  if (status.ok()) status = bootstrap->RegisterEventHandler();
  if (status.ok()) status = bootstrap->ShareStartupFacts();
  if (!status.ok()) return status;  // the destructor finalizes
  log::SetRank(static_cast<int>(bootstrap->rank_));
  return bootstrap;
}

Bootstrap::~Bootstrap() {
  for (size_t id : handler_ids_) PMIx_Deregister_event_handler(id, nullptr, nullptr);
  {
    std::lock_guard<std::mutex> lock(g_callback_mutex);
    g_callback = nullptr;
    g_events.clear();
    g_dead = RankSet();
    g_ranks_by_host.clear();
  }
  {
    std::lock_guard<std::mutex> lock(g_space_mutex);
    g_space = RankSpace();
  }
  PMIx_Finalize(nullptr, 0);
  internal::ReleaseAbandonedLookups();
}

Status Bootstrap::ReadJobInfo() {
  pmix_proc_t job;
  PMIX_PROC_LOAD(&job, nspace_.c_str(), PMIX_RANK_WILDCARD);
  TimeoutInfo timeout(timeout_);
  // Job-level values; nullptr when the launcher does not provide the key.
  auto get = [&](const char* key, pmix_status_t* rc) {
    pmix_value_t* value = nullptr;
    *rc = PMIx_Get(&job, key, timeout.get(), 1, &value);
    return std::unique_ptr<pmix_value_t, void (*)(pmix_value_t*)>(
        *rc == PMIX_SUCCESS ? value : nullptr, [](pmix_value_t* v) { PMIX_VALUE_RELEASE(v); });
  };
  pmix_status_t rc;
  auto job_size = get(PMIX_JOB_SIZE, &rc);
  if (job_size == nullptr) return PmixError("PMIx_Get(PMIX_JOB_SIZE)", rc);
  size_.store(job_size->data.uint32, std::memory_order_release);

  auto peers = get(PMIX_LOCAL_PEERS, &rc);
  if (peers != nullptr && peers->type == PMIX_STRING && peers->data.string != nullptr) {
    auto parsed = RankSet::Parse("{" + std::string(peers->data.string) + "}");
    if (parsed.ok()) local_peers_ = *parsed;
  }
  if (local_peers_.empty()) local_peers_.Insert(rank_);

  // rftrun registers this with the job; other launchers may keep it per node or not at all
  // (then ShareStartupFacts judges it from every local rank's CPU mask).
  auto oversubscribed = get(PMIX_NODE_OVERSUBSCRIBED, &rc);
  if (oversubscribed != nullptr && oversubscribed->type == PMIX_BOOL) {
    oversubscribed_ = oversubscribed->data.flag;
    oversubscribed_known_ = true;
  }
  auto spawned = get(PMIX_SPAWNED, &rc);
  spawned_ = spawned != nullptr && spawned->type == PMIX_BOOL && spawned->data.flag;

  if (size() == 0 || rank_ >= size()) {
    return OtherError("PMIx reported rank " + std::to_string(rank_) + " in a job of size " +
                      std::to_string(size()));
  }
  return Status::Ok();
}

Status Bootstrap::JoinParentJob(const char* join) {
  std::string_view text(join);
  auto number = [&text](uint32_t* out) {
    const size_t slash = text.find('/');
    const char* end = text.data() + std::min(slash, text.size());
    const auto [ptr, ec] = std::from_chars(text.data(), end, *out);
    if (slash == std::string_view::npos || ec != std::errc() || ptr != end) return false;
    text.remove_prefix(slash + 1);
    return true;
  };
  uint32_t token = 0;
  uint32_t spawner = 0;
  if (!number(&token) || !number(&spawner)) {
    return ArgError(std::string(kJoinEnv) + "=\"" + join +
                    "\": expected <job token>/<spawner's rank>/<count:namespace;...>");
  }
  auto space = RankSpace::Decode(text);
  if (!space.ok()) return ArgError(std::string(kJoinEnv) + ": " + space.status().message());
  if (spawner >= space->size()) {
    return ArgError(std::string(kJoinEnv) + ": spawner rank " + std::to_string(spawner) +
                    " is beyond the parents' " + std::to_string(space->size()) + " ranks");
  }
  spawner_ = spawner;
  // The parents on this node (read before this namespace joins the space: none of them is).
  for (const RankBlock& block : space->blocks()) AddNodePeers(LocalRanksOf(block));
  const Rank first = space->size();
  RFT_RETURN_IF_ERROR(space->Add(nspace_, size()));
  own_block_ = {.nspace = nspace_, .first = first, .count = size()};
  const Rank pmix_rank = rank_;
  rank_ = first + pmix_rank;
  size_.store(space->size(), std::memory_order_release);
  RankSet local;
  for (Rank peer : local_peers_) local.Insert(first + peer);
  local_peers_ = std::move(local);
  joined_ = true;
  join_token_ = token;
  std::lock_guard<std::mutex> lock(g_space_mutex);
  g_space = std::move(*space);
  g_self = rank_;
  return Status::Ok();
}

void Bootstrap::ProcOf(Rank rank, pmix_proc_t* out) const {
  std::lock_guard<std::mutex> lock(g_space_mutex);
  const RankBlock* block = g_space.BlockOf(rank);
  RFT_CHECK(block != nullptr, "Bootstrap::ProcOf: a rank beyond the job");
  PMIX_PROC_LOAD(out, block->nspace.c_str(), rank - block->first);
}

Status Bootstrap::AddRanks(std::string_view nspace, uint32_t count) {
  Rank first;
  {
    std::lock_guard<std::mutex> lock(g_space_mutex);
    first = g_space.size();
    RFT_RETURN_IF_ERROR(g_space.Add(nspace, count));
    size_.store(g_space.size(), std::memory_order_release);
  }
  {
    // Terminations of these processes reported before they were of the job: theirs now
    // (DeadRanks; the subscriber was told of them without a job rank).
    std::lock_guard<std::mutex> lock(g_callback_mutex);
    for (TerminationEvent& event : g_events) {
      if (event.job_rank == kInvalidRank && event.nspace == nspace && event.rank < count) {
        event.job_rank = first + event.rank;
        g_dead.Insert(event.job_rank);
      }
    }
  }
  // Where they run, asked outside every lock (PMIx may wait for the launcher).
  const RankBlock block{.nspace = std::string(nspace), .first = first, .count = count};
  ReadNodeMap(block);
  AddNodePeers(LocalRanksOf(block));
  return Status::Ok();
}

RankSet Bootstrap::node_peers() const {
  std::lock_guard<std::mutex> lock(node_peers_mutex_);
  return node_peers_;
}

void Bootstrap::AddNodePeers(const RankSet& ranks) {
  std::lock_guard<std::mutex> lock(node_peers_mutex_);
  node_peers_ = node_peers_.Union(ranks);
}

RankSet Bootstrap::LocalRanksOf(const RankBlock& block) const {
  pmix_proc_t job;
  PMIX_PROC_LOAD(&job, block.nspace.c_str(), PMIX_RANK_WILDCARD);
  TimeoutInfo timeout(timeout_);
  pmix_value_t* value = nullptr;
  const pmix_status_t rc = PMIx_Get(&job, PMIX_LOCAL_PEERS, timeout.get(), 1, &value);
  RankSet ranks;
  if (rc == PMIX_SUCCESS && value != nullptr && value->type == PMIX_STRING &&
      value->data.string != nullptr) {
    auto parsed = RankSet::Parse("{" + std::string(value->data.string) + "}");
    if (parsed.ok()) {
      for (Rank r : *parsed) {
        if (r < block.count) ranks.Insert(block.first + r);
      }
    }
  }
  if (value != nullptr) PMIX_VALUE_RELEASE(value);
  if (rc != PMIX_SUCCESS) {
    RFT_LOG_INFO(
        "the launcher does not say which processes of %s run on this node (%s): they "
        "are treated as remote",
        block.nspace.c_str(), PMIx_Error_string(rc));
  }
  return ranks;
}

RankSpace Bootstrap::ranks() const {
  std::lock_guard<std::mutex> lock(g_space_mutex);
  return g_space;
}

Status Bootstrap::ShareStartupFacts() {
  pmix_proc_t job;
  PMIX_PROC_LOAD(&job, nspace_.c_str(), PMIX_RANK_WILDCARD);
  // Job information arrives with PMIx_Init: look only there (a launcher without the key would
  // otherwise be asked and may hold the call until its timeout).
  pmix_info_t optional;
  bool yes = true;
  PMIX_INFO_LOAD(&optional, PMIX_OPTIONAL, &yes, PMIX_BOOL);
  pmix_value_t* value = nullptr;
  const pmix_status_t rc = PMIx_Get(&job, kJobTokenKey, &optional, 1, &value);
  PMIX_INFO_DESTRUCT(&optional);
  bool token_known = false;
  if (rc == PMIX_SUCCESS && value != nullptr) {
    token_known = value->type == PMIX_UINT32;
    if (token_known) job_token_ = value->data.uint32;
    PMIX_VALUE_RELEASE(value);
    if (!token_known) {
      RFT_LOG_WARN("the launcher's %s is not a PMIX_UINT32: the job draws its own token",
                   kJobTokenKey);
    }
  }
  if (joined_) {
    // A replacement speaks with its parents' token: the launcher gave its namespace another.
    job_token_ = join_token_;
    token_known = true;
  }
  if (token_known && oversubscribed_known_) return Status::Ok();  // rftrun: no fence needed

  // One fence for what the launcher did not say: rank 0 draws the token, every rank shows the
  // CPUs it may run on.
  constexpr char kDrawnTokenKey[] = "rft.token";
  constexpr char kCpusKey[] = "rft.cpus";
  if (!token_known && rank_ == 0) {
    auto drawn = SecureRandom64();
    if (!drawn.ok()) return drawn.status();
    const uint32_t token = static_cast<uint32_t>(*drawn);
    std::byte bytes[4];
    std::memcpy(bytes, &token, 4);
    RFT_RETURN_IF_ERROR(Put(kDrawnTokenKey, bytes));
  }
  const CpuList own_cpus = OwnCpus();
  if (!oversubscribed_known_) RFT_RETURN_IF_ERROR(Put(kCpusKey, EncodeCpuList(own_cpus)));
  RFT_RETURN_IF_ERROR(Commit());
  RFT_RETURN_IF_ERROR(Fence(/*collect_data=*/true));
  if (!token_known) {
    auto shared = Get(0, kDrawnTokenKey);
    if (!shared.ok()) return shared.status();
    if (shared->size() != 4) {
      return OtherError("rank 0 published a job token of " + std::to_string(shared->size()) +
                        " bytes: expected 4");
    }
    std::memcpy(&job_token_, shared->data(), 4);
  }
  if (!oversubscribed_known_) {
    std::vector<CpuList> masks;
    for (Rank peer : local_peers_) {
      if (peer == rank_) {
        masks.push_back(own_cpus);
        continue;
      }
      auto bytes = Get(peer, kCpusKey);
      if (!bytes.ok()) return bytes.status();
      auto cpus = DecodeCpuList(*bytes, peer);
      if (!cpus.ok()) return cpus.status();
      masks.push_back(std::move(*cpus));
    }
    oversubscribed_ = MustShareCores(masks);
    oversubscribed_known_ = true;
  }
  return Status::Ok();
}

Status Bootstrap::Put(std::string_view key, std::span<const std::byte> value) {
  if (key.empty() || key.size() >= PMIX_MAX_KEYLEN) {
    return ArgError("PMIx key \"" + std::string(key) + "\": expected 1 to " +
                    std::to_string(PMIX_MAX_KEYLEN - 1) + " characters");
  }
  pmix_value_t v;
  PMIX_VALUE_CONSTRUCT(&v);
  v.type = PMIX_BYTE_OBJECT;
  v.data.bo.bytes = const_cast<char*>(reinterpret_cast<const char*>(value.data()));
  v.data.bo.size = value.size();
  const std::string k(key);
  const pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, k.c_str(), &v);  // PMIx copies the bytes
  if (rc != PMIX_SUCCESS) return PmixError("PMIx_Put(" + k + ")", rc);
  return Status::Ok();
}

Status Bootstrap::Commit() {
  const pmix_status_t rc = PMIx_Commit();
  if (rc != PMIX_SUCCESS) return PmixError("PMIx_Commit", rc);
  return Status::Ok();
}

Status Bootstrap::Fence(bool collect_data) { return FenceOver(collect_data, nullptr, 0); }

Status Bootstrap::Fence(bool collect_data, const RankSet& ranks) {
  if (ranks.empty() || !ranks.Contains(rank_)) {
    return ArgError("fence over " + ranks.ToString() + ": expected a set of ranks with rank " +
                    std::to_string(rank_) + " in it");
  }
  std::vector<pmix_proc_t> procs;
  for (Rank r : ranks) {
    if (r >= size()) {
      return ArgError("fence over rank " + std::to_string(r) +
                      ": expected ranks below the job size " + std::to_string(size()));
    }
    procs.emplace_back();
    ProcOf(r, &procs.back());
  }
  return FenceOver(collect_data, procs.data(), procs.size());
}

Status Bootstrap::FenceOver(bool collect_data, const pmix_proc_t* procs, size_t count) {
  pmix_info_t info[2];
  PMIX_INFO_LOAD(&info[0], PMIX_COLLECT_DATA, &collect_data, PMIX_BOOL);
  int seconds = TimeoutInfo::Seconds(timeout_);
  PMIX_INFO_LOAD(&info[1], PMIX_TIMEOUT, &seconds, PMIX_INT);
  const pmix_status_t rc = PMIx_Fence(procs, count, info, 2);
  PMIX_INFO_DESTRUCT(&info[0]);
  PMIX_INFO_DESTRUCT(&info[1]);
  if (rc != PMIX_SUCCESS) return PmixError("PMIx_Fence", rc);
  return Status::Ok();
}

StatusOr<std::vector<std::byte>> Bootstrap::Get(Rank rank, std::string_view key) {
  if (rank >= size()) {
    return ArgError("rank " + std::to_string(rank) + ": expected a rank below the job size " +
                    std::to_string(size()));
  }
  pmix_proc_t proc;
  ProcOf(rank, &proc);
  const Deadline deadline = Deadline::After(timeout_);
  pmix_value_t* value = nullptr;
  const std::string k(key);
  pmix_status_t rc;
  // A value another namespace (a replacement, its parents) has not committed yet is answered
  // NOT-FOUND at once, where one of this namespace is waited for: ask again until then. Either
  // way a process that ended will never publish: the wait goes in slices of at most a second,
  // and stops when the launcher says it ended.
  auto pause = std::chrono::microseconds(100);
  for (;;) {
    TimeoutInfo timeout(
        std::min<std::chrono::nanoseconds>(deadline.remaining(), std::chrono::seconds(1)));
    rc = PMIx_Get(&proc, k.c_str(), timeout.get(), 1, &value);
    const bool unanswered = rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_TIMEOUT;
    if (!unanswered || deadline.expired()) break;
    if (DeadRanks().Contains(rank)) {
      return ProcFailedError("PMIx_Get(rank " + std::to_string(rank) + ", " + k +
                             "): the process ended without publishing it");
    }
    if (rc == PMIX_ERR_NOT_FOUND) {
      std::this_thread::sleep_for(pause);
      pause = std::min(pause * 2, std::chrono::microseconds(10'000));
    }
  }
  if (rc == PMIX_ERR_NOT_FOUND || rc == PMIX_ERR_TIMEOUT) {
    return TimeoutError("PMIx_Get(rank " + std::to_string(rank) + ", " + k +
                        "): not published within RFT_PMIX_TIMEOUT");
  }
  if (rc != PMIX_SUCCESS) {
    return PmixError("PMIx_Get(rank " + std::to_string(rank) + ", " + k + ")", rc);
  }
  std::vector<std::byte> bytes;
  if (value->type == PMIX_BYTE_OBJECT) {
    const auto* begin = reinterpret_cast<const std::byte*>(value->data.bo.bytes);
    bytes.assign(begin, begin + value->data.bo.size);
  } else {
    const int type = value->type;
    PMIX_VALUE_RELEASE(value);
    return OtherError("PMIx_Get(rank " + std::to_string(rank) + ", " + k +
                      "): expected a byte object, found PMIx type " + std::to_string(type));
  }
  PMIX_VALUE_RELEASE(value);
  return bytes;
}

Status Bootstrap::OnTermination(TerminationCallback callback) {
  std::lock_guard<std::mutex> lock(g_callback_mutex);
  if (g_callback && callback) {
    // Replacing it would silently cut the first subscriber off the launcher's news.
    return ArgError(
        "Bootstrap::OnTermination: the launcher's events already have a subscriber (one per "
        "process: the runtime's control plane); remove it first with a null callback");
  }
  g_callback = std::move(callback);
  // What happened before: a subscriber that starts late must not miss a start-up failure.
  if (g_callback) {
    for (const TerminationEvent& event : g_events) g_callback(event);
  }
  return Status::Ok();
}

RankSet RanksOnDownNode(const std::map<std::string, RankSet>& ranks_by_host, std::string_view host,
                        Rank self) {
  RankSet ranks;
  const auto it = ranks_by_host.find(std::string(host));
  if (it == ranks_by_host.end()) return ranks;
  for (Rank rank : it->second) {
    if (rank != self) ranks.Insert(rank);
  }
  return ranks;
}

void Bootstrap::ReadNodeMap(const RankBlock& block) {
  // Best effort: without it a node-down event that names no process is logged, not expanded.
  char* nodes = nullptr;
  if (PMIx_Resolve_nodes(block.nspace.c_str(), &nodes) != PMIX_SUCCESS || nodes == nullptr) return;
  std::map<std::string, RankSet> ranks_by_host;
  std::string list(nodes);
  std::free(nodes);
  size_t start = 0;
  while (start <= list.size()) {
    const size_t comma = std::min(list.find(',', start), list.size());
    const std::string node = list.substr(start, comma - start);
    start = comma + 1;
    if (node.empty()) continue;
    pmix_proc_t* procs = nullptr;
    size_t count = 0;
    if (PMIx_Resolve_peers(node.c_str(), block.nspace.c_str(), &procs, &count) != PMIX_SUCCESS) {
      continue;
    }
    for (size_t i = 0; i < count; ++i) {
      if (procs[i].rank < block.count) ranks_by_host[node].Insert(block.first + procs[i].rank);
    }
    PMIX_PROC_FREE(procs, count);
  }
  std::lock_guard<std::mutex> lock(g_callback_mutex);
  for (auto& [node, ranks] : ranks_by_host) {
    g_ranks_by_host[node] = g_ranks_by_host[node].Union(ranks);
  }
}

Status Bootstrap::RegisterEventHandler() {
  // Every block so far: a replacement's parents are of the job too.
  const RankSpace space = ranks();  // kept: a range-for over a temporary's member dangles
  for (const RankBlock& block : space.blocks()) ReadNodeMap(block);
  // Two registrations: a PMIx server passes "system" events (node down) only when its host
  // implements register_events, and refuses the whole registration otherwise (Slurm 22.05's
  // PMIx plugin does: PMIX_ERR_SERVER_FAILED_REQUEST). The process codes are what every
  // launcher gives; the node codes are a best-effort extra.
  std::vector<pmix_status_t> process_codes;
  std::vector<pmix_status_t> system_codes;
  for (int code : TerminationEventCodes()) {
    (IsSystemEventCode(code) ? system_codes : process_codes).push_back(code);
  }
  const auto register_codes = [this](std::vector<pmix_status_t>& codes, const char* name) {
    pmix_info_t info;
    PMIX_INFO_LOAD(&info, PMIX_EVENT_HDLR_NAME, name, PMIX_STRING);
    // Without a registration callback the call blocks and returns the handler's id.
    const pmix_status_t rc = PMIx_Register_event_handler(codes.data(), codes.size(), &info, 1,
                                                         OnEvent, nullptr, nullptr);
    PMIX_INFO_DESTRUCT(&info);
    if (rc >= 0) handler_ids_.push_back(static_cast<size_t>(rc));
    return rc;
  };
  const pmix_status_t rc = register_codes(process_codes, "rft.termination");
  if (rc < 0) return PmixError("PMIx_Register_event_handler", rc);
  const pmix_status_t system_rc = register_codes(system_codes, "rft.node-termination");
  if (system_rc < 0) {
    RFT_LOG_INFO(
        "the launcher's PMIx server refuses node events (%s): a lost node is found by rft's "
        "failure detector alone",
        PMIx_Error_string(system_rc));
  }
  return Status::Ok();
}

RankSet Bootstrap::DeadRanks() const {
  std::lock_guard<std::mutex> lock(g_callback_mutex);
  return g_dead;
}

Status Bootstrap::Abort(int status, std::string_view message, const RankSet& ranks) {
  std::vector<pmix_proc_t> procs;
  for (Rank r : ranks) {
    if (r >= size()) {
      return ArgError("abort of rank " + std::to_string(r) +
                      ": expected ranks below the job size " + std::to_string(size()));
    }
    procs.emplace_back();
    ProcOf(r, &procs.back());
  }
  const std::string text(message);
  const pmix_status_t rc =
      PMIx_Abort(status, text.c_str(), procs.empty() ? nullptr : procs.data(), procs.size());
  if (rc != PMIX_SUCCESS) return PmixError("PMIx_Abort", rc);
  return Status::Ok();
}

StatusOr<std::string> Bootstrap::Spawn(const std::vector<SpawnApp>& apps, bool join) {
  if (apps.empty()) return ArgError("spawn: expected at least one program to start");
  for (const SpawnApp& app : apps) {
    if (app.argv.empty() || app.argv[0].empty())
      return ArgError("spawn: expected a program to start");
    if (app.nprocs == 0) {
      return ArgError("spawn of \"" + app.argv[0] + "\": expected at least 1 process");
    }
  }
  char cwd[4096];
  const bool have_cwd = getcwd(cwd, sizeof(cwd)) != nullptr;
  const std::string joining = std::string(kJoinEnv) + "=" + std::to_string(job_token_) + "/" +
                              std::to_string(rank_) + "/" + ranks().Encode();
  std::vector<pmix_app_t> pmix_apps(apps.size());
  for (size_t a = 0; a < apps.size(); ++a) {
    const SpawnApp& app = apps[a];
    pmix_app_t& out = pmix_apps[a];
    PMIX_APP_CONSTRUCT(&out);
    out.cmd = strdup(app.argv[0].c_str());
    out.argv = static_cast<char**>(calloc(app.argv.size() + 1, sizeof(char*)));
    for (size_t i = 0; i < app.argv.size(); ++i) out.argv[i] = strdup(app.argv[i].c_str());
    out.maxprocs = static_cast<int>(app.nprocs);
    if (!app.wdir.empty()) {
      out.cwd = strdup(app.wdir.c_str());
    } else if (have_cwd) {
      out.cwd = strdup(cwd);
    }
    const std::string appnum = std::string(kAppnumEnv) + "=" + std::to_string(a);
    out.env = static_cast<char**>(calloc(3, sizeof(char*)));
    size_t n = 0;
    if (join) out.env[n++] = strdup(joining.c_str());
    if (apps.size() > 1) out.env[n++] = strdup(appnum.c_str());
  }
  pmix_nspace_t child_nspace;
  const pmix_status_t rc = PMIx_Spawn(nullptr, 0, pmix_apps.data(), pmix_apps.size(), child_nspace);
  for (pmix_app_t& app : pmix_apps) PMIX_APP_DESTRUCT(&app);
  if (rc != PMIX_SUCCESS) return PmixError("PMIx_Spawn(" + apps[0].argv[0] + ")", rc);
  return std::string(child_nspace);
}

uint32_t Bootstrap::appnum() {
  const char* value = getenv(kAppnumEnv);
  if (value == nullptr) return 0;
  uint32_t appnum = 0;
  const auto [end, error] = std::from_chars(value, value + strlen(value), appnum);
  return error == std::errc() && *end == '\0' ? appnum : 0;
}

}  // namespace rft::transport
