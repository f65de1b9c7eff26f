// Communicators and their attributes.
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "ulfm_api/mpi/mpi_internal.h"

namespace rft::mpi {

Comm* FindCommInTable(MPI_Comm handle) {
  State& s = state();
  if (handle == MPI_COMM_WORLD) return s.initialized ? &s.world : nullptr;
  if (handle == MPI_COMM_SELF) return s.initialized ? &s.self : nullptr;
  return s.comms.Find(handle);
}

Group* FindGroup(MPI_Group handle) { return state().groups.Find(handle); }

rft_group_t RftGroup(MPI_Group handle) {
  if (handle == MPI_GROUP_EMPTY) {
    static rft_group_t empty = RFT_GROUP_NULL;
    if (empty == RFT_GROUP_NULL) {
      rft_group_t world = RFT_GROUP_NULL;
      rft_comm_group(RFT_COMM_WORLD, &world);
      rft_group_incl(world, 0, nullptr, &empty);
      rft_group_free(&world);
    }
    return empty;
  }
  Group* g = FindGroup(handle);
  return g != nullptr ? g->rft : RFT_GROUP_NULL;
}

MPI_Group NewGroup(rft_group_t group) { return state().groups.Add(Group{group}); }

MPI_Comm NewComm(rft_comm_t comm, const Comm* parent) {
  Comm c;
  c.rft = comm;
  rft_comm_set_errhandler(comm, RFT_ERRORS_RETURN);
  rft_comm_rank(comm, &c.rank);
  rft_comm_size(comm, &c.size);
  int inter = 0;
  rft_comm_test_inter(comm, &inter);
  if (inter) rft_comm_remote_size(comm, &c.remote_size);
  c.peers = inter ? c.remote_size : c.size;
  if (parent != nullptr) c.errhandler = parent->errhandler;
  return state().comms.Add(std::move(c));
}

int CheckRankArg(const Comm& comm, int rank, bool wildcard, const char* function, MPI_Comm handle) {
  // Point-to-point on an intercommunicator names the remote group.
  const int peers = comm.peers;
  if ((rank >= 0 && rank < peers) || rank == MPI_PROC_NULL || (wildcard && rank == MPI_ANY_SOURCE))
      [[likely]] {
    return MPI_SUCCESS;
  }
  return Raise(handle, MPI_ERR_RANK,
               std::string(function) + ": rank " + std::to_string(rank) + ": expected 0.." +
                   std::to_string(peers - 1) + ", MPI_PROC_NULL" +
                   (wildcard ? " or MPI_ANY_SOURCE" : "") +
                   (comm.remote_size >= 0 ? " (a rank of the remote group)" : ""));
}

int CheckTagArg(int tag, bool wildcard, const char* function, MPI_Comm handle) {
  if (tag >= 0 || (wildcard && tag == MPI_ANY_TAG)) [[likely]]
    return MPI_SUCCESS;
  return Raise(handle, MPI_ERR_TAG,
               std::string(function) + ": tag " + std::to_string(tag) + ": expected 0..MPI_TAG_UB" +
                   (wildcard ? " or MPI_ANY_TAG" : ""));
}

int BadComm(MPI_Comm comm, const char* function) {
  if (!Ready()) return NotInitialized(function);
  return Raise(comm, MPI_ERR_COMM,
               std::string(function) + ": " +
                   (comm == MPI_COMM_NULL ? "MPI_COMM_NULL" : "invalid or freed communicator"));
}

int BadGroup(MPI_Group group, const char* function) {
  return Raise(MPI_COMM_WORLD, MPI_ERR_GROUP,
               std::string(function) + ": " +
                   (group == MPI_GROUP_NULL ? "MPI_GROUP_NULL" : "invalid or freed group"));
}

int CheckCountArg(int count, const char* function, MPI_Comm handle) {
  if (count >= 0) [[likely]]
    return MPI_SUCCESS;
  return Raise(handle, MPI_ERR_COUNT,
               std::string(function) + ": count " + std::to_string(count) + ": expected >= 0");
}

}  // namespace rft::mpi

using namespace rft::mpi;

namespace {

// Copies `from`'s attributes into `to` with their keyvals' copy functions (MPI: dup does).
int CopyAttributes(MPI_Comm from_handle, const Comm& from, Comm& to) {
  for (const auto& [key, value] : from.attributes) {
    Keyval* keyval = state().keyvals.Find(key);
    if (keyval == nullptr || keyval->copy == nullptr) continue;
    void* copied = nullptr;
    int flag = 0;
    const int rc = keyval->copy(from_handle, key, keyval->extra_state, value, &copied, &flag);
    if (rc != MPI_SUCCESS) return rc;
    if (flag) to.attributes[key] = copied;
  }
  return MPI_SUCCESS;
}

int DeleteAttribute(MPI_Comm handle, Comm& comm, int key) {
  auto it = comm.attributes.find(key);
  if (it == comm.attributes.end()) return MPI_SUCCESS;
  void* value = it->second;
  comm.attributes.erase(it);
  Keyval* keyval = state().keyvals.Find(key);
  if (keyval != nullptr && keyval->del != nullptr) {
    return keyval->del(handle, key, value, keyval->extra_state);
  }
  return MPI_SUCCESS;
}

// A communicator made by rft (`rc`, `made`) as an MPI handle at *newcomm.
int Adopt(MPI_Comm parent_handle, const Comm& parent, const char* function, int rc, rft_comm_t made,
          MPI_Comm* newcomm) {
  if (rc != RFT_SUCCESS) {
    *newcomm = MPI_COMM_NULL;
    return RaiseRft(parent_handle, function, rc);
  }
  *newcomm = made == RFT_COMM_NULL ? MPI_COMM_NULL : NewComm(made, &parent);
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPIR_Dup_fn(MPI_Comm comm, int keyval, void* extra, void* in, void* out, int* flag) {
  (void)comm, (void)keyval, (void)extra;
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}

int PMPI_Comm_rank(MPI_Comm comm, int* rank) {
  Comm* c = FindComm(comm);
  if (c == nullptr) [[unlikely]]
    return BadComm(comm, "MPI_Comm_rank");
  *rank = c->rank;
  return MPI_SUCCESS;
}

int PMPI_Comm_size(MPI_Comm comm, int* size) {
  Comm* c = FindComm(comm);
  if (c == nullptr) [[unlikely]]
    return BadComm(comm, "MPI_Comm_size");
  *size = c->size;
  return MPI_SUCCESS;
}

int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Comm_dup");
  rft_comm_t made = RFT_COMM_NULL;
  const int rc = rft_comm_dup(c->rft, &made);
  const int adopted = Adopt(comm, *c, "MPI_Comm_dup", rc, made, newcomm);
  if (adopted != MPI_SUCCESS) return adopted;
  Comm* n = FindComm(*newcomm);
  c = FindComm(comm);  // the table may have grown
  n->has_cart = c->has_cart;
  n->cart = c->cart;
  const int copied = CopyAttributes(comm, *c, *n);
  return copied == MPI_SUCCESS ? MPI_SUCCESS
                               : Raise(comm, copied, "MPI_Comm_dup: an attribute copy failed");
}

int PMPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info, MPI_Comm* newcomm) {
  return PMPI_Comm_dup(comm, newcomm);
}

int PMPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Comm_split");
  rft_comm_t made = RFT_COMM_NULL;
  const int rc = rft_comm_split(c->rft, color == MPI_UNDEFINED ? RFT_UNDEFINED : color, key, &made);
  return Adopt(comm, *c, "MPI_Comm_split", rc, made, newcomm);
}

int PMPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info, MPI_Comm* newcomm) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Comm_split_type");
  int color = MPI_UNDEFINED;
  if (split_type != MPI_UNDEFINED) {
    if (split_type != MPI_COMM_TYPE_SHARED && split_type != MPI_COMM_TYPE_HW_GUIDED &&
        split_type != MPI_COMM_TYPE_HW_UNGUIDED) {
      return Raise(comm, MPI_ERR_ARG,
                   "MPI_Comm_split_type: split_type " + std::to_string(split_type) +
                       ": expected MPI_COMM_TYPE_SHARED, _HW_GUIDED, _HW_UNGUIDED or "
                       "MPI_UNDEFINED");
    }
  }
  // Members of one node share memory: the colour is the lowest rank with this host name.
  char host[MPI_MAX_PROCESSOR_NAME] = {0};
  gethostname(host, sizeof(host) - 1);
  std::vector<char> hosts(static_cast<size_t>(c->size) * MPI_MAX_PROCESSOR_NAME);
  int rc = rft_allgather(host, MPI_MAX_PROCESSOR_NAME, RFT_BYTE, hosts.data(), c->rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, "MPI_Comm_split_type", rc);
  if (split_type != MPI_UNDEFINED) {
    for (int r = 0; r < c->size; ++r) {
      if (strncmp(&hosts[static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME], host,
                  MPI_MAX_PROCESSOR_NAME) == 0) {
        color = r;
        break;
      }
    }
  }
  return PMPI_Comm_split(comm, color, key, newcomm);
}

int PMPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Comm_create");
  rft_group_t g = RftGroup(group);
  if (g == RFT_GROUP_NULL) return BadGroup(group, "MPI_Comm_create");
  rft_comm_t made = RFT_COMM_NULL;
  const int rc = rft_comm_create(c->rft, g, &made);
  return Adopt(comm, *c, "MPI_Comm_create", rc, made, newcomm);
}

int PMPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm* newcomm) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Comm_create_group");
  rft_group_t g = RftGroup(group);
  if (g == RFT_GROUP_NULL) return BadGroup(group, "MPI_Comm_create_group");
  rft_comm_t made = RFT_COMM_NULL;
  const int rc = rft_comm_create_group(c->rft, g, tag, &made);
  return Adopt(comm, *c, "MPI_Comm_create_group", rc, made, newcomm);
}

int PMPI_Comm_free(MPI_Comm* comm) {
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) {
    return Raise(*comm, MPI_ERR_COMM, "MPI_Comm_free: MPI_COMM_WORLD and MPI_COMM_SELF stay");
  }
  Comm* c = FindComm(*comm);
  if (c == nullptr) return BadComm(*comm, "MPI_Comm_free");
  std::vector<int> keys;
  for (const auto& entry : c->attributes) keys.push_back(entry.first);
  for (int key : keys) {
    const int rc = DeleteAttribute(*comm, *FindComm(*comm), key);
    if (rc != MPI_SUCCESS) return Raise(*comm, rc, "MPI_Comm_free: an attribute delete failed");
  }
  c = FindComm(*comm);
  rft_comm_t inner = c->rft;
  const int rc = rft_comm_free(&inner);
  if (rc != RFT_SUCCESS) return RaiseRft(*comm, "MPI_Comm_free", rc);
  state().comms.Remove(*comm);
  if (*comm == state().parent) state().parent = MPI_COMM_NULL;
  *comm = MPI_COMM_NULL;
  return MPI_SUCCESS;
}

int PMPI_Comm_compare(MPI_Comm comm1, MPI_Comm comm2, int* result) {
  Comm* a = FindComm(comm1);
  Comm* b = FindComm(comm2);
  if (a == nullptr) return BadComm(comm1, "MPI_Comm_compare");
  if (b == nullptr) return BadComm(comm2, "MPI_Comm_compare");
  if (comm1 == comm2) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  const int rc = rft_comm_compare(a->rft, b->rft, result);
  return rc == RFT_SUCCESS ? MPI_SUCCESS : RaiseRft(comm1, "MPI_Comm_compare", rc);
}

int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Comm_group");
  rft_group_t g = RFT_GROUP_NULL;
  const int rc = rft_comm_group(c->rft, &g);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, "MPI_Comm_group", rc);
  *group = NewGroup(g);
  return MPI_SUCCESS;
}

int PMPI_Comm_set_name(MPI_Comm comm, const char* name) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Comm_set_name");
  if (name == nullptr) return Raise(comm, MPI_ERR_ARG, "MPI_Comm_set_name: NULL name");
  c->name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

int PMPI_Comm_get_name(MPI_Comm comm, char* name, int* resultlen) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Comm_get_name");
  memcpy(name, c->name.c_str(), c->name.size() + 1);
  *resultlen = static_cast<int>(c->name.size());
  return MPI_SUCCESS;
}

int PMPI_Comm_test_inter(MPI_Comm comm, int* flag) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Comm_test_inter");
  *flag = c->remote_size >= 0;
  return MPI_SUCCESS;
}

int PMPI_Comm_remote_size(MPI_Comm comm, int* size) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Comm_remote_size");
  if (c->remote_size < 0) {
    return Raise(comm, MPI_ERR_COMM, "MPI_Comm_remote_size: not an intercommunicator");
  }
  *size = c->remote_size;
  return MPI_SUCCESS;
}

int PMPI_Comm_remote_group(MPI_Comm comm, MPI_Group* group) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Comm_remote_group");
  if (c->remote_size < 0) {
    return Raise(comm, MPI_ERR_COMM, "MPI_Comm_remote_group: not an intercommunicator");
  }
  rft_group_t remote = RFT_GROUP_NULL;
  if (int rc = rft_comm_remote_group(c->rft, &remote); rc != RFT_SUCCESS) {
    return RaiseRft(comm, "MPI_Comm_remote_group", rc);
  }
  *group = NewGroup(remote);
  return MPI_SUCCESS;
}

int PMPI_Intercomm_create(MPI_Comm local_comm, int local_leader, MPI_Comm peer_comm,
                          int remote_leader, int tag, MPI_Comm* newintercomm) {
  Comm* local = FindComm(local_comm);
  if (local == nullptr) return BadComm(local_comm, "MPI_Intercomm_create");
  // `peer_comm` is significant at the local leader only.
  Comm* peer = local;
  if (local->rank == local_leader) {
    peer = FindComm(peer_comm);
    if (peer == nullptr) return BadComm(peer_comm, "MPI_Intercomm_create");
  }
  rft_comm_t made = RFT_COMM_NULL;
  const int rc =
      rft_intercomm_create(local->rft, local_leader, peer->rft, remote_leader, tag, &made);
  return Adopt(local_comm, *local, "MPI_Intercomm_create", rc, made, newintercomm);
}

int PMPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm* newintracomm) {
  Comm* c = FindComm(intercomm);
  if (c == nullptr) return BadComm(intercomm, "MPI_Intercomm_merge");
  rft_comm_t made = RFT_COMM_NULL;
  const int rc = rft_intercomm_merge(c->rft, high, &made);
  return Adopt(intercomm, *c, "MPI_Intercomm_merge", rc, made, newintracomm);
}

// MPI-4.1 §11.8.2. The parents' new communicator inherits `comm`'s error handler. Of the info
// keys MPI reserves for spawn (§11.8.4), the root reads "wdir" (where the processes start) and
// "path" (directories to find a command without a slash in); the rest place processes, which
// rft's launcher does: each such key is named once on stderr, never silently dropped.
namespace {

// A spawned program's command and working directory after the root's `info`.
struct SpawnPlace {
  std::string command;
  std::string wdir;  // empty: the root's own
};

SpawnPlace PlaceProgram(const char* command, MPI_Info info, const char* function) {
  SpawnPlace place{command == nullptr ? "" : command, ""};
  const Info* entries = info == MPI_INFO_NULL ? nullptr : state().infos.Find(info);
  if (entries == nullptr) return place;
  static std::set<std::string> told;  // the keys already named on stderr
  for (const auto& [key, value] : entries->entries) {
    if (key == "wdir") {
      place.wdir = value;
    } else if (key == "path") {
      if (place.command.empty() || place.command.find('/') != std::string::npos) continue;
      for (size_t start = 0; start <= value.size();) {
        const size_t colon = std::min(value.find(':', start), value.size());
        const std::string dir = value.substr(start, colon - start);
        start = colon + 1;
        if (dir.empty()) continue;
        const std::string candidate = dir + "/" + place.command;
        if (access(candidate.c_str(), X_OK) == 0) {
          place.command = candidate;
          break;
        }
      }
    } else if (told.insert(key).second) {
      std::fprintf(stderr,
                   "rft: %s: info key \"%s\" is not used (rft's launcher places the processes); "
                   "\"wdir\" and \"path\" are\n",
                   function, key.c_str());
    }
  }
  return place;
}

// Both spawns over rft: `spawn` runs the rft call with an errcodes array. rft writes one code
// per process started (the root's count, which the others learn during the call) and nothing
// when it stopped before: read back up to the first untouched.
int SpawnThrough(MPI_Comm comm, const char* function, int array_of_errcodes[], MPI_Comm* intercomm,
                 const std::function<int(rft_comm_t, rft_comm_t*, int*)>& spawn) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, function);
  constexpr int kUntouched = INT_MIN;
  std::vector<int> codes(array_of_errcodes != MPI_ERRCODES_IGNORE ? RFT_MAX_SPAWN : 0, kUntouched);
  rft_comm_t made = RFT_COMM_NULL;
  const int rc = spawn(c->rft, &made, codes.empty() ? RFT_ERRCODES_IGNORE : codes.data());
  for (size_t i = 0; i < codes.size() && codes[i] != kUntouched; ++i) {
    array_of_errcodes[i] = FromRft(codes[i]);
  }
  return Adopt(comm, *c, function, rc, made, intercomm);
}

}  // namespace

int PMPI_Comm_spawn(const char* command, char* argv[], int maxprocs, MPI_Info info, int root,
                    MPI_Comm comm, MPI_Comm* intercomm, int array_of_errcodes[]) {
  return SpawnThrough(comm, "MPI_Comm_spawn", array_of_errcodes, intercomm,
                      [&](rft_comm_t inner, rft_comm_t* made, int* codes) {
                        // Read at the root only (the others' arguments are not significant).
                        int rank = -1;
                        (void)rft_comm_rank(inner, &rank);
                        const SpawnPlace place = rank == root
                                                     ? PlaceProgram(command, info, "MPI_Comm_spawn")
                                                     : SpawnPlace{};
                        const char* commands[] = {place.command.c_str()};
                        const char* const* argvs[] = {const_cast<const char* const*>(argv)};
                        const char* wdirs[] = {place.wdir.empty() ? nullptr : place.wdir.c_str()};
                        return rft_comm_spawn_multiple_in(inner, 1, commands, argvs, &maxprocs,
                                                          wdirs, root, made, codes);
                      });
}

// MPI-4.1 §11.8.3: the programs' processes in one new MPI_COMM_WORLD, program 0's first; each
// reads its program's index in the MPI_APPNUM attribute. MPI_ARGVS_NULL (NULL) for no arguments.
int PMPI_Comm_spawn_multiple(int count, char* array_of_commands[], char** array_of_argv[],
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm* intercomm,
                             int array_of_errcodes[]) {
  return SpawnThrough(
      comm, "MPI_Comm_spawn_multiple", array_of_errcodes, intercomm,
      [&](rft_comm_t inner, rft_comm_t* made, int* codes) {
        int rank = -1;
        (void)rft_comm_rank(inner, &rank);
        if (rank != root || count < 1 || count > RFT_MAX_SPAWN || array_of_commands == nullptr) {
          return rft_comm_spawn_multiple(inner, count,
                                         const_cast<const char* const*>(array_of_commands),
                                         const_cast<const char* const* const*>(array_of_argv),
                                         array_of_maxprocs, root, made, codes);
        }
        std::vector<SpawnPlace> places;
        for (int i = 0; i < count; ++i) {
          places.push_back(PlaceProgram(array_of_commands[i],
                                        array_of_info != nullptr ? array_of_info[i] : MPI_INFO_NULL,
                                        "MPI_Comm_spawn_multiple"));
        }
        std::vector<const char*> commands, wdirs;
        for (const SpawnPlace& place : places) {
          commands.push_back(place.command.c_str());
          wdirs.push_back(place.wdir.empty() ? nullptr : place.wdir.c_str());
        }
        return rft_comm_spawn_multiple_in(inner, count, commands.data(),
                                          const_cast<const char* const* const*>(array_of_argv),
                                          array_of_maxprocs, wdirs.data(), root, made, codes);
      });
}

// The handle MPI_Init made, the same at every call until the program frees it (then
// MPI_COMM_NULL, as MPI-4.1 §11.8.2 says).
int PMPI_Comm_get_parent(MPI_Comm* parent) {
  if (!state().initialized) return NotInitialized("MPI_Comm_get_parent");
  *parent = state().parent;
  return MPI_SUCCESS;
}

int PMPI_Comm_set_info(MPI_Comm comm, MPI_Info) {
  if (FindComm(comm) == nullptr) return BadComm(comm, "MPI_Comm_set_info");
  return MPI_SUCCESS;  // no hint changes what rft does
}

int PMPI_Comm_get_info(MPI_Comm comm, MPI_Info* info) {
  if (FindComm(comm) == nullptr) return BadComm(comm, "MPI_Comm_get_info");
  return PMPI_Info_create(info);
}

// ---- Attributes ----
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function* copy, MPI_Comm_delete_attr_function* del,
                            int* keyval, void* extra_state) {
  *keyval = state().keyvals.Add(Keyval{copy, del, extra_state});
  return MPI_SUCCESS;
}

// MPI-4.1 §11.10.4: as Comm_free, after the pending communication on it has ended and every
// member is past its own. The buffered sends and freed requests on it are waited for; the
// members then agree (rft_comm_agree), which ends with the same outcome at each of them also
// when some failed or the communicator was revoked (docs/mpi.md, "Processes"). The outcome goes
// to the handler while the communicator still exists; then it is freed whatever the outcome.
int PMPI_Comm_disconnect(MPI_Comm* comm) {
  if (comm == nullptr) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_disconnect: comm is NULL");
  }
  if (*comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) {
    return Raise(*comm, MPI_ERR_COMM,
                 "MPI_Comm_disconnect: MPI_COMM_WORLD and MPI_COMM_SELF are never disconnected");
  }
  const MPI_Comm handle = *comm;
  Comm* c = FindComm(handle);
  if (c == nullptr) return BadComm(handle, "MPI_Comm_disconnect");
  WaitDetached(handle);
  int flag = 1;
  const int agreed = rft_comm_agree(FindComm(handle)->rft, &flag);
  int rc = agreed == RFT_SUCCESS ? MPI_SUCCESS : RaiseRft(handle, "MPI_Comm_disconnect", agreed);
  if (FindComm(handle) == nullptr) {  // the handler freed it
    *comm = MPI_COMM_NULL;
    return rc;
  }
  const int freed = PMPI_Comm_free(comm);
  return rc != MPI_SUCCESS ? rc : freed;
}

int PMPI_Comm_free_keyval(int* keyval) {
  if (state().keyvals.Find(*keyval) == nullptr) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_KEYVAL, "MPI_Comm_free_keyval: invalid keyval");
  }
  // Attributes set with it keep their delete call through the table entry until then: MPI
  // frees a keyval only once no attribute uses it. rft keeps the entry (it is small).
  *keyval = MPI_KEYVAL_INVALID;
  return MPI_SUCCESS;
}

int PMPI_Comm_set_attr(MPI_Comm comm, int key, void* value) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Comm_set_attr");
  if (state().keyvals.Find(key) == nullptr) {
    return Raise(comm, MPI_ERR_KEYVAL,
                 "MPI_Comm_set_attr: keyval " + std::to_string(key) +
                     " is not one of MPI_Comm_create_keyval's (predefined ones are read-only)");
  }
  const int rc = DeleteAttribute(comm, *c, key);
  if (rc != MPI_SUCCESS) return Raise(comm, rc, "MPI_Comm_set_attr: the old value's delete failed");
  FindComm(comm)->attributes[key] = value;
  return MPI_SUCCESS;
}

int PMPI_Comm_get_attr(MPI_Comm comm, int key, void* value, int* flag) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Comm_get_attr");
  static int tag_ub = INT_MAX, host = MPI_PROC_NULL, io = MPI_ANY_SOURCE, wtime_global = 0,
             appnum = 0, universe = 0, last_code = 0, ft = 0;
  int* predefined = nullptr;
  switch (key) {
    case MPI_TAG_UB:
      predefined = &tag_ub;
      break;
    case MPI_HOST:
      predefined = &host;
      break;
    case MPI_IO:
      predefined = &io;
      break;
    case MPI_WTIME_IS_GLOBAL:
      predefined = &wtime_global;
      break;
    case MPI_APPNUM:
      (void)rft_appnum(&appnum);
      predefined = &appnum;
      break;
    case MPI_UNIVERSE_SIZE:
      universe = state().world.size;
      predefined = &universe;
      break;
    case MPI_LASTUSEDCODE:
      last_code = state().last_used_code;
      predefined = &last_code;
      break;
    case MPIX_FT:
      ft = state().fault_tolerant;
      predefined = &ft;
      break;
    default:
      break;
  }
  if (predefined != nullptr) {
    *static_cast<int**>(value) = predefined;
    *flag = 1;
    return MPI_SUCCESS;
  }
  if (state().keyvals.Find(key) == nullptr) {
    return Raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_get_attr: invalid keyval " + std::to_string(key));
  }
  auto it = c->attributes.find(key);
  *flag = it != c->attributes.end();
  if (*flag) *static_cast<void**>(value) = it->second;
  return MPI_SUCCESS;
}

int PMPI_Comm_delete_attr(MPI_Comm comm, int key) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Comm_delete_attr");
  if (state().keyvals.Find(key) == nullptr) {
    return Raise(comm, MPI_ERR_KEYVAL, "MPI_Comm_delete_attr: invalid keyval");
  }
  const int rc = DeleteAttribute(comm, *c, key);
  return rc == MPI_SUCCESS ? MPI_SUCCESS
                           : Raise(comm, rc, "MPI_Comm_delete_attr: the delete function failed");
}

int PMPI_Attr_get(MPI_Comm comm, int key, void* value, int* flag) {
  return PMPI_Comm_get_attr(comm, key, value, flag);
}
int PMPI_Attr_put(MPI_Comm comm, int key, void* value) {
  return PMPI_Comm_set_attr(comm, key, value);
}
int PMPI_Attr_delete(MPI_Comm comm, int key) { return PMPI_Comm_delete_attr(comm, key); }
int PMPI_Keyval_create(MPI_Copy_function* copy, MPI_Delete_function* del, int* keyval,
                       void* extra_state) {
  return PMPI_Comm_create_keyval(copy, del, keyval, extra_state);
}
int PMPI_Keyval_free(int* keyval) { return PMPI_Comm_free_keyval(keyval); }

}  // extern "C"

RFT_MPI_ALIAS(Comm_rank)
RFT_MPI_ALIAS(Comm_size)
RFT_MPI_ALIAS(Comm_dup)
RFT_MPI_ALIAS(Comm_dup_with_info)
RFT_MPI_ALIAS(Comm_split)
RFT_MPI_ALIAS(Comm_split_type)
RFT_MPI_ALIAS(Comm_create)
RFT_MPI_ALIAS(Comm_create_group)
RFT_MPI_ALIAS(Comm_free)
RFT_MPI_ALIAS(Comm_disconnect)
RFT_MPI_ALIAS(Comm_compare)
RFT_MPI_ALIAS(Comm_group)
RFT_MPI_ALIAS(Comm_set_name)
RFT_MPI_ALIAS(Comm_get_name)
RFT_MPI_ALIAS(Comm_test_inter)
RFT_MPI_ALIAS(Intercomm_create)
RFT_MPI_ALIAS(Intercomm_merge)
RFT_MPI_ALIAS(Comm_spawn)
RFT_MPI_ALIAS(Comm_spawn_multiple)
RFT_MPI_ALIAS(Comm_get_parent)
RFT_MPI_ALIAS(Comm_remote_size)
RFT_MPI_ALIAS(Comm_remote_group)
RFT_MPI_ALIAS(Comm_set_info)
RFT_MPI_ALIAS(Comm_get_info)
RFT_MPI_ALIAS(Comm_create_keyval)
RFT_MPI_ALIAS(Comm_free_keyval)
RFT_MPI_ALIAS(Comm_set_attr)
RFT_MPI_ALIAS(Comm_get_attr)
RFT_MPI_ALIAS(Comm_delete_attr)
RFT_MPI_ALIAS(Attr_get)
RFT_MPI_ALIAS(Attr_put)
RFT_MPI_ALIAS(Attr_delete)
RFT_MPI_ALIAS(Keyval_create)
RFT_MPI_ALIAS(Keyval_free)
