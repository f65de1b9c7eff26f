#include "tools/rftrun/pmix_host.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>

#include "base/log.h"
#include "base/random.h"
#include "transport/bootstrap/launcher_keys.h"

namespace rft::rftrun {
namespace {

// libpmix's module has no user pointer, and only one server may exist per process.
PmixHandler* g_handler = nullptr;

struct Listener {
  pmix_connection_cbfunc_t cbfunc;
  void* cbdata;
};
std::mutex g_listeners_mutex;
std::map<int, Listener> g_listeners;

bool Succeeded(pmix_status_t rc) { return rc == PMIX_SUCCESS || rc == PMIX_OPERATION_SUCCEEDED; }

Status PmixError(const std::string& what, pmix_status_t rc) {
  return OtherError(what + " failed: " + PMIx_Error_string(rc) + " (" + std::to_string(rc) + ")");
}

pmix_status_t OnClientConnected(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t, void*) {
  g_handler->OnClientConnected(*proc);
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t OnClientFinalized(const pmix_proc_t* proc, void*, pmix_op_cbfunc_t, void*) {
  g_handler->OnClientFinalized(*proc);
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t OnAbort(const pmix_proc_t* proc, void*, int status, const char msg[],
                      pmix_proc_t procs[], size_t nprocs, pmix_op_cbfunc_t cbfunc, void* cbdata) {
  AbortRequest request;
  request.caller = *proc;
  request.status = status;
  request.message = msg == nullptr ? "" : msg;
  for (size_t i = 0; i < nprocs; ++i) request.targets.push_back(procs[i]);
  request.cbfunc = cbfunc;
  request.cbdata = cbdata;
  g_handler->OnAbort(std::move(request));
  return PMIX_SUCCESS;
}

void ReleaseFenceData(void* cbdata) { std::free(cbdata); }

// Set once a job spans nodes (PmixHost::SpanNodes): fences and direct modex go to the handler.
std::atomic<bool> g_spans_nodes{false};

// libpmix wants the result in a heap copy it releases through ReleaseFenceData.
void AnswerModex(pmix_modex_cbfunc_t cbfunc, void* cbdata, pmix_status_t status, const char* data,
                 size_t ndata) {
  char* copy = nullptr;
  if (ndata > 0) {
    copy = static_cast<char*>(std::malloc(ndata));
    if (copy == nullptr) {
      cbfunc(PMIX_ERR_NOMEM, nullptr, 0, cbdata, nullptr, nullptr);
      return;
    }
    std::memcpy(copy, data, ndata);
  }
  cbfunc(status, copy, ndata, cbdata, ReleaseFenceData, copy);
}

// On one node, the local contribution is the whole result. Across nodes, the launcher gathers
// every involved node's contribution over the node link; libpmix reads the concatenation.
pmix_status_t OnFence(const pmix_proc_t procs[], size_t nprocs, const pmix_info_t[], size_t,
                      char* data, size_t ndata, pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  if (!g_spans_nodes.load(std::memory_order_acquire)) {
    AnswerModex(cbfunc, cbdata, PMIX_SUCCESS, data, ndata);
    return PMIX_SUCCESS;
  }
  FenceRequest request;
  for (size_t i = 0; i < nprocs; ++i) {
    if (procs[i].rank == PMIX_RANK_WILDCARD) {
      request.ranks.clear();
      break;
    }
    request.ranks.push_back(procs[i].rank);
  }
  std::sort(request.ranks.begin(), request.ranks.end());
  request.ranks.erase(std::unique(request.ranks.begin(), request.ranks.end()), request.ranks.end());
  if (ndata > 0) request.data.assign(data, ndata);
  request.cbfunc = cbfunc;
  request.cbdata = cbdata;
  g_handler->OnFence(std::move(request));
  return PMIX_SUCCESS;
}

// Across nodes the launcher asks the node that runs the process. On one node all data is local,
// and libpmix asks the host only in a race: a process of a freshly spawned namespace asking for a
// key its parent has not committed yet (seen under TSan: a replacement's PMIx_Get of its
// spawner's merge key). The answer is NOT-FOUND, what libpmix itself says of a key another
// namespace has not committed, and what Bootstrap::Get waits out (until the key comes or its
// publisher ends); NOT-SUPPORTED failed the replacement's start-up instead.
pmix_status_t OnDirectModex(const pmix_proc_t* proc, const pmix_info_t[], size_t,
                            pmix_modex_cbfunc_t cbfunc, void* cbdata) {
  if (!g_spans_nodes.load(std::memory_order_acquire)) return PMIX_ERR_NOT_FOUND;
  ModexRequest request;
  request.rank = proc->rank;
  request.cbfunc = cbfunc;
  request.cbdata = cbdata;
  g_handler->OnDirectModex(std::move(request));
  return PMIX_SUCCESS;
}

void OnLocalModexData(pmix_status_t status, char* data, size_t size, void* cbdata) {
  auto* id = static_cast<uint64_t*>(cbdata);
  g_handler->OnModexData(*id, status, data == nullptr ? std::string() : std::string(data, size));
  delete id;
}

pmix_status_t OnSpawn(const pmix_proc_t* proc, const pmix_info_t[], size_t, const pmix_app_t apps[],
                      size_t napps, pmix_spawn_cbfunc_t cbfunc, void* cbdata) {
  SpawnRequest request;
  request.parent = *proc;
  request.cbfunc = cbfunc;
  request.cbdata = cbdata;
  for (size_t a = 0; a < napps; ++a) {
    SpawnApp app;
    app.command = apps[a].cmd == nullptr ? "" : apps[a].cmd;
    for (char** arg = apps[a].argv; arg != nullptr && *arg != nullptr; ++arg) {
      app.argv.push_back(*arg);
    }
    if (app.argv.empty()) app.argv.push_back(app.command);
    for (char** var = apps[a].env; var != nullptr && *var != nullptr; ++var) {
      app.env.push_back(*var);
    }
    app.cwd = apps[a].cwd == nullptr ? "" : apps[a].cwd;
    app.nprocs = apps[a].maxprocs > 0 ? static_cast<uint32_t>(apps[a].maxprocs) : 1;
    request.apps.push_back(std::move(app));
  }
  g_handler->OnSpawn(std::move(request));
  return PMIX_SUCCESS;
}

// rftrun generates the termination events itself and libpmix routes them to the clients that
// registered; the host has nothing to subscribe to.
pmix_status_t OnRegisterEvents(pmix_status_t*, size_t, const pmix_info_t[], size_t,
                               pmix_op_cbfunc_t, void*) {
  return PMIX_OPERATION_SUCCEEDED;
}

pmix_status_t OnDeregisterEvents(pmix_status_t*, size_t, pmix_op_cbfunc_t, void*) {
  return PMIX_OPERATION_SUCCEEDED;
}

// Used by libpmix versions that let the host accept client connections (4.2.2 does not; see
// EnableNoDelayOnListeners): the accepted socket gets TCP_NODELAY before libpmix sees it.
pmix_status_t OnListener(int listening_sd, pmix_connection_cbfunc_t cbfunc, void* cbdata) {
  {
    std::lock_guard<std::mutex> lock(g_listeners_mutex);
    g_listeners[listening_sd] = Listener{cbfunc, cbdata};
  }
  g_handler->OnListeningSocket(listening_sd);
  return PMIX_SUCCESS;
}

void ReleaseInfo(pmix_status_t, void* cbdata) {
  auto* info = static_cast<std::pair<pmix_info_t*, size_t>*>(cbdata);
  PMIX_INFO_FREE(info->first, info->second);
  delete info;
}

std::string RankList(uint32_t first, uint32_t count) {
  std::string list;
  for (uint32_t r = first; r < first + count; ++r) {
    if (r > first) list += ',';
    list += std::to_string(r);
  }
  return list;
}

// An event sent right after other traffic on a client's socket waited ~40 ms for the
// client's delayed ACK under Nagle. libpmix 4.2 accepts connections on its own thread (it
// never calls the module's listener upcall), so rftrun sets TCP_NODELAY on libpmix's listening
// TCP sockets instead: Linux copies the option to every connection accepted from them.
void EnableNoDelayOnListeners() {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    int fd = -1;
    try {
      fd = std::stoi(entry.path().filename().string());
    } catch (...) {
      continue;
    }
    int listening = 0;
    int domain = 0;
    socklen_t len = sizeof(listening);
    if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || !listening) continue;
    len = sizeof(domain);
    if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0) continue;
    if (domain != AF_INET && domain != AF_INET6) continue;
    const int one = 1;
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) != 0) {
      RFT_LOG_WARN("TCP_NODELAY on PMIx listening socket %d: %s", fd, std::strerror(errno));
    }
  }
}

}  // namespace

StatusOr<std::unique_ptr<PmixHost>> PmixHost::Start(PmixHandler* handler,
                                                    const std::string& tmpdir) {
  if (g_handler != nullptr) return OtherError("a PMIx server is already running in rftrun");
  g_handler = handler;
  static pmix_server_module_t module;
  std::memset(&module, 0, sizeof(module));
  module.client_connected = OnClientConnected;
  module.client_finalized = OnClientFinalized;
  module.abort = OnAbort;
  module.fence_nb = OnFence;
  module.direct_modex = OnDirectModex;
  module.spawn = OnSpawn;
  module.listener = OnListener;
  module.register_events = OnRegisterEvents;
  module.deregister_events = OnDeregisterEvents;

  // PMIx's shared-memory datastore (gds ds21) zeroes two 4 MiB segments for each namespace when
  // its first process connects: ~30 ms of every job's start and of every spawn here (PMIx_Init
  // took 40 ms, 8 ms without). Sent with each answer instead (gds hash), the job information of
  // one node's processes costs nothing measurable. The children inherit the choice, which must
  // match the server's; a user's own PMIX_MCA_gds stands.
  setenv("PMIX_MCA_gds", "hash", /*overwrite=*/0);
  pmix_info_t* info;
  const size_t ninfo = 4;
  PMIX_INFO_CREATE(info, ninfo);
  PMIX_INFO_LOAD(&info[0], PMIX_SERVER_TMPDIR, tmpdir.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&info[1], PMIX_SYSTEM_TMPDIR, tmpdir.c_str(), PMIX_STRING);
  bool no = false;
  PMIX_INFO_LOAD(&info[2], PMIX_SERVER_TOOL_SUPPORT, &no, PMIX_BOOL);
  PMIX_INFO_LOAD(&info[3], PMIX_SERVER_SYSTEM_SUPPORT, &no, PMIX_BOOL);
  const pmix_status_t rc = PMIx_server_init(&module, info, ninfo);
  PMIX_INFO_FREE(info, ninfo);
  if (rc != PMIX_SUCCESS) {
    g_handler = nullptr;
    return PmixError("PMIx_server_init", rc);
  }
  EnableNoDelayOnListeners();
  return std::unique_ptr<PmixHost>(new PmixHost());
}

void PmixHost::SpanNodes() { g_spans_nodes.store(true, std::memory_order_release); }

void PmixHost::CompleteFence(const FenceRequest& request, pmix_status_t status,
                             const std::string& data) {
  AnswerModex(request.cbfunc, request.cbdata, status, data.data(), data.size());
}

void PmixHost::CompleteModex(const ModexRequest& request, pmix_status_t status,
                             const std::string& data) {
  AnswerModex(request.cbfunc, request.cbdata, status, data.data(), data.size());
}

void PmixHost::RequestModex(const std::string& nspace, uint32_t rank, uint64_t id) {
  pmix_proc_t proc;
  PMIX_PROC_LOAD(&proc, nspace.c_str(), rank);
  auto* owned = new uint64_t(id);
  const pmix_status_t rc = PMIx_server_dmodex_request(&proc, OnLocalModexData, owned);
  if (rc != PMIX_SUCCESS) {
    delete owned;
    g_handler->OnModexData(id, rc, std::string());
  }
}

PmixHost::~PmixHost() {
  g_spans_nodes.store(false, std::memory_order_release);
  PMIx_server_finalize();
  g_handler = nullptr;
  std::lock_guard<std::mutex> lock(g_listeners_mutex);
  g_listeners.clear();
}

Status PmixHost::RegisterJob(const JobSpec& job) {
  std::vector<NodeRanks> nodes = job.nodes;
  if (nodes.empty()) nodes.push_back(NodeRanks{job.hostname, 0, job.nprocs});
  const NodeRanks& here = nodes[job.node];
  std::string node_names;
  std::string rank_lists;  // PMIx's ppn syntax: one list per node, separated by ';'
  for (size_t i = 0; i < nodes.size(); ++i) {
    node_names += (i > 0 ? "," : "") + nodes[i].name;
    rank_lists += (i > 0 ? ";" : "") + RankList(nodes[i].first, nodes[i].count);
  }
  char* node_regex = nullptr;
  char* proc_regex = nullptr;
  pmix_status_t rc = PMIx_generate_regex(node_names.c_str(), &node_regex);
  if (rc != PMIX_SUCCESS) return PmixError("PMIx_generate_regex", rc);
  rc = PMIx_generate_ppn(rank_lists.c_str(), &proc_regex);
  if (rc != PMIX_SUCCESS) {
    std::free(node_regex);
    return PmixError("PMIx_generate_ppn", rc);
  }

  // A fresh secret per job: its processes put it in every wire message (launcher_keys.h). A
  // job across nodes has the hub's, so that every node's processes share it.
  uint32_t job_token = job.job_token;
  if (job_token == 0) {
    auto drawn = SecureRandom64();
    if (!drawn.ok()) {
      std::free(node_regex);
      std::free(proc_regex);
      return drawn.status();
    }
    job_token = static_cast<uint32_t>(*drawn);
  }
  const size_t njob = 17;
  const size_t ninfo = njob + job.nprocs;
  pmix_info_t* info;
  PMIX_INFO_CREATE(info, ninfo);
  uint32_t nprocs = job.nprocs;
  uint32_t local_size = here.count;
  uint32_t num_nodes = static_cast<uint32_t>(nodes.size());
  uint32_t node_id = job.node;
  uint32_t zero32 = 0;
  pmix_rank_t leader = here.first;
  bool oversubscribed = job.oversubscribed;
  bool spawned = job.spawned;
  const std::string local_ranks = RankList(here.first, here.count);
  size_t n = 0;
  PMIX_INFO_LOAD(&info[n++], PMIX_UNIV_SIZE, &nprocs, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[n++], PMIX_JOB_SIZE, &nprocs, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[n++], PMIX_MAX_PROCS, &nprocs, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[n++], PMIX_LOCAL_SIZE, &local_size, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[n++], PMIX_NODE_SIZE, &local_size, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[n++], PMIX_NUM_NODES, &num_nodes, PMIX_UINT32);
  PMIX_INFO_LOAD(&info[n++], PMIX_JOBID, job.nspace.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&info[n++], PMIX_NODE_MAP, node_regex, PMIX_REGEX);
  PMIX_INFO_LOAD(&info[n++], PMIX_PROC_MAP, proc_regex, PMIX_REGEX);
  PMIX_INFO_LOAD(&info[n++], PMIX_LOCAL_PEERS, local_ranks.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&info[n++], PMIX_LOCALLDR, &leader, PMIX_PROC_RANK);
  PMIX_INFO_LOAD(&info[n++], PMIX_HOSTNAME, here.name.c_str(), PMIX_STRING);
  PMIX_INFO_LOAD(&info[n++], PMIX_NODEID, &node_id, PMIX_UINT32);
  if (!job.plain) {
    PMIX_INFO_LOAD(&info[n++], PMIX_NODE_OVERSUBSCRIBED, &oversubscribed, PMIX_BOOL);
    PMIX_INFO_LOAD(&info[n++], transport::kJobTokenKey, &job_token, PMIX_UINT32);
  }
  PMIX_INFO_LOAD(&info[n++], PMIX_SPAWNED, &spawned, PMIX_BOOL);
  if (job.spawned) {
    PMIX_INFO_LOAD(&info[n++], PMIX_PARENT_ID, &job.parent, PMIX_PROC);
  } else {
    PMIX_INFO_LOAD(&info[n++], PMIX_APPNUM, &zero32, PMIX_UINT32);
  }
  std::free(node_regex);
  std::free(proc_regex);

  // Per-process data, for every rank of the job wherever it runs: the array must start with
  // the rank.
  for (uint32_t id = 0; id < nodes.size(); ++id) {
    for (uint32_t r = nodes[id].first; r < nodes[id].first + nodes[id].count; ++r) {
      pmix_data_array_t* array;
      PMIX_DATA_ARRAY_CREATE(array, 7, PMIX_INFO);
      auto* proc_info = static_cast<pmix_info_t*>(array->array);
      pmix_rank_t rank = r;
      uint16_t local_rank = static_cast<uint16_t>(r - nodes[id].first);
      uint32_t proc_node = id;
      PMIX_INFO_LOAD(&proc_info[0], PMIX_RANK, &rank, PMIX_PROC_RANK);
      PMIX_INFO_LOAD(&proc_info[1], PMIX_LOCAL_RANK, &local_rank, PMIX_UINT16);
      PMIX_INFO_LOAD(&proc_info[2], PMIX_NODE_RANK, &local_rank, PMIX_UINT16);
      PMIX_INFO_LOAD(&proc_info[3], PMIX_APP_RANK, &rank, PMIX_PROC_RANK);
      PMIX_INFO_LOAD(&proc_info[4], PMIX_GLOBAL_RANK, &rank, PMIX_PROC_RANK);
      PMIX_INFO_LOAD(&proc_info[5], PMIX_HOSTNAME, nodes[id].name.c_str(), PMIX_STRING);
      PMIX_INFO_LOAD(&proc_info[6], PMIX_NODEID, &proc_node, PMIX_UINT32);
      PMIX_INFO_LOAD(&info[n++], PMIX_PROC_DATA, array, PMIX_DATA_ARRAY);
      PMIX_DATA_ARRAY_FREE(array);
    }
  }
  rc = PMIx_server_register_nspace(job.nspace.c_str(), static_cast<int>(here.count), info, n,
                                   nullptr, nullptr);
  PMIX_INFO_FREE(info, ninfo);
  if (!Succeeded(rc)) return PmixError("PMIx_server_register_nspace(" + job.nspace + ")", rc);
  return Status::Ok();
}

StatusOr<std::vector<std::string>> PmixHost::PrepareChild(const std::string& nspace,
                                                          uint32_t rank) {
  pmix_proc_t proc;
  PMIX_PROC_LOAD(&proc, nspace.c_str(), rank);
  pmix_status_t rc =
      PMIx_server_register_client(&proc, getuid(), getgid(), nullptr, nullptr, nullptr);
  if (!Succeeded(rc)) return PmixError("PMIx_server_register_client", rc);
  // setup_fork appends to a malloc'd, NULL-terminated array.
  char** env = static_cast<char**>(std::calloc(1, sizeof(char*)));
  rc = PMIx_server_setup_fork(&proc, &env);
  std::vector<std::string> result;
  for (char** var = env; var != nullptr && *var != nullptr; ++var) {
    result.emplace_back(*var);
    std::free(*var);
  }
  std::free(env);
  if (rc != PMIX_SUCCESS) return PmixError("PMIx_server_setup_fork", rc);
  return result;
}

void PmixHost::AcceptOn(int listening_fd) {
  Listener listener;
  {
    std::lock_guard<std::mutex> lock(g_listeners_mutex);
    auto it = g_listeners.find(listening_fd);
    if (it == g_listeners.end()) return;
    listener = it->second;
  }
  for (;;) {
    const int fd = accept4(listening_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        RFT_LOG_WARN("accept on PMIx listening socket %d: %s", listening_fd, std::strerror(errno));
      }
      return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));  // fails harmlessly on AF_UNIX
    listener.cbfunc(fd, listener.cbdata);
  }
}

Status PmixHost::NotifyTermination(const std::string& nspace, uint32_t rank, pmix_status_t code,
                                   int exit_code, uint64_t fault_ns, const std::string& host) {
  pmix_proc_t proc;
  PMIX_PROC_LOAD(&proc, nspace.c_str(), rank);
  const size_t ninfo = 2 + (fault_ns != 0 ? 1 : 0) + (host.empty() ? 0 : 1);
  pmix_info_t* info;
  PMIX_INFO_CREATE(info, ninfo);
  size_t n = 0;
  PMIX_INFO_LOAD(&info[n++], PMIX_EVENT_AFFECTED_PROC, &proc, PMIX_PROC);
  PMIX_INFO_LOAD(&info[n++], PMIX_EXIT_CODE, &exit_code, PMIX_INT);
  if (fault_ns != 0) PMIX_INFO_LOAD(&info[n++], kFaultTimeKey, &fault_ns, PMIX_UINT64);
  if (!host.empty()) PMIX_INFO_LOAD(&info[n++], PMIX_HOSTNAME, host.c_str(), PMIX_STRING);
  auto* owned = new std::pair<pmix_info_t*, size_t>(info, ninfo);
  const pmix_status_t rc =
      PMIx_Notify_event(code, &proc, PMIX_RANGE_SESSION, info, ninfo, ReleaseInfo, owned);
  if (!Succeeded(rc)) {
    ReleaseInfo(rc, owned);
    return PmixError("PMIx_Notify_event", rc);
  }
  if (rc == PMIX_OPERATION_SUCCEEDED) ReleaseInfo(rc, owned);
  return Status::Ok();
}

void PmixHost::CompleteAbort(const AbortRequest& request, pmix_status_t status) {
  if (request.cbfunc != nullptr) request.cbfunc(status, request.cbdata);
}

void PmixHost::CompleteSpawn(const SpawnRequest& request, pmix_status_t status,
                             const std::string& nspace) {
  pmix_nspace_t name;
  PMIX_LOAD_NSPACE(name, nspace.c_str());
  if (request.cbfunc != nullptr) request.cbfunc(status, name, request.cbdata);
}

}  // namespace rft::rftrun
