// The C API (rft.h), first half: start and end, errors and their handlers, communicators, groups
// and the ULFM calls. Point-to-point and collectives are in rft_c_messages.cc.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/config.h"
#include "base/log.h"
#include "transport/bootstrap/bootstrap.h"
#include "ulfm_api/binding.h"

using rft::ArgError;
using rft::OtherError;
using rft::Rank;
using rft::Status;
using rft::api::Communicator;
using rft::api::Group;
using rft::api::Session;
using rft::api::binding::CheckComm;
using rft::api::binding::CheckGroup;
using rft::api::binding::NewComm;
using rft::api::binding::NewGroup;
using rft::api::binding::Raise;
using rft::api::binding::Success;

struct rft_comm_s rft_comm_world_object;
struct rft_group_s rft_group_empty_object;
struct rft_comm_s rft_comm_self_object;
struct rft_errhandler_s rft_errors_return_object {
  .kind = rft_errhandler_s::Kind::kReturn, .predefined = true
};
struct rft_errhandler_s rft_errors_are_fatal_object {
  .kind = rft_errhandler_s::Kind::kFatal, .predefined = true
};
struct rft_errhandler_s rft_errors_abort_object {
  .kind = rft_errhandler_s::Kind::kAbort, .predefined = true
};

namespace rft::api::binding {
namespace {

// A plain pointer, never destroyed at exit: a program that exits without rft_finalize (a failed
// check, exit() from anywhere) must not run the teardown while rft's threads still run and the
// libraries below may already be finalized.
}  // namespace
Session* g_session = nullptr;
namespace {
bool g_finalized = false;
// A replacement's COMM_PARENT (rft_comm_get_parent), until the program frees it.
rft_comm_t g_parent = RFT_COMM_NULL;
rft_failure_callback_t g_failure_callback = nullptr;
void* g_failure_user_data = nullptr;
thread_local std::string g_last_error;

// Freed handles are kept a while with their magic cleared, so a use after free is an argument
// error rather than a read of freed memory.
constexpr size_t kRetainedFreed = 1024;
// The handles the program holds, and the freed ones kept a while. Never destroyed (also not at
// exit): a handle is reachable from here until it is deleted, so a program that exits without
// freeing its handles leaks nothing a leak checker would report.
template <class Handle>
struct Handles {
  std::unordered_set<Handle*> live;
  std::deque<Handle*> retired;
};
Handles<rft_comm_s>& g_comms = *new Handles<rft_comm_s>;
Handles<rft_group_s>& g_groups = *new Handles<rft_group_s>;

template <class Handle>
void Retire(Handle* handle, Handles<Handle>* handles) {
  handle->magic = 0;
  handles->live.erase(handle);
  handles->retired.push_back(handle);
  if (handles->retired.size() > kRetainedFreed) {
    delete handles->retired.front();
    handles->retired.pop_front();
  }
}

void Release(rft_errhandler_s* handler) {
  if (handler == nullptr || handler->predefined) return;
  if (--handler->references == 0) {
    handler->magic = 0;
    delete handler;
  }
}

void Use(rft_errhandler_s* handler) {
  if (!handler->predefined) ++handler->references;
}

// A handle whose communicator is gone: its handler released, the handle retired.
void Forget(rft_comm_t handle) {
  handle->comm = nullptr;
  Release(handle->errhandler);
  handle->errhandler = nullptr;
  Retire(handle, &g_comms);
}

[[noreturn]] void AbortJob(int code, const std::string& message) {
  if (Session* s = session(); s != nullptr) (void)s->AbortJob(code, message);
  std::_Exit(code == 0 ? 1 : code & 0xff);
}

[[noreturn]] void AbortGroup(rft_comm_t comm, int code, const std::string& message) {
  Session* s = session();
  if (s != nullptr && comm != nullptr && comm->comm != nullptr) {
    // Back here: the launcher has not killed this process yet, or it refused (Abort said so
    // and killed this node's members itself).
    (void)s->Abort(*comm->comm, code, message);
  }
  std::_Exit(code == 0 ? 1 : code & 0xff);
}

}  // namespace

int RaiseError(rft_comm_t comm, const Status& given) {
  // MPI-4's PROC_ABORTED: a failure of processes another process aborted (an ERRORS_ABORT
  // handler, rft_abort of a group) is told as such, where every failed member of the
  // communicator the error is raised on was aborted (docs/api.md, "Aborts").
  const bool live = comm != nullptr && comm->magic == kLiveHandle && comm->comm != nullptr;
  const Status status =
      given.code() == RFT_ERR_PROC_FAILED && live && comm->comm->FailuresAreAborts()
          ? Status(RFT_ERR_PROC_ABORTED, given.message() + " (aborted by another process's abort)")
          : given;
  g_last_error = status.ToString();
  // A call that failed at once (a send to a dead peer, a dup with a failed member) did not
  // progress the data plane: pending revocations and failures are applied now, so that the
  // caller's next call sees them (a loop of failing calls ends once it is revoked).
  if (rft::api::Session* s = rft::api::binding::session(); s != nullptr) {
    s->plane().ApplyPendingNotices();
  }
  // An error with no communicator to report on goes to COMM_SELF's handler, once it exists;
  // fatal, it ends this process only (MPI_Abort(MPI_COMM_SELF)).
  const bool no_handle =
      comm == nullptr || (comm->magic != kLiveHandle && comm->magic != kFreeingHandle);
  if (no_handle) comm = rft_comm_self_object.magic == kLiveHandle ? &rft_comm_self_object : nullptr;
  const int code = status.code();
  if (comm == nullptr) return code;
  rft_errhandler_s* handler = comm->errhandler;
  switch (handler->kind) {
    case rft_errhandler_s::Kind::kReturn:
      return code;
    case rft_errhandler_s::Kind::kFatal: {
      const std::string name = comm->comm != nullptr ? comm->comm->name() : "a communicator";
      std::fprintf(stderr, "rft: fatal error on %s (its error handler is ERRORS_ARE_FATAL): %s\n",
                   name.c_str(), g_last_error.c_str());
      std::fflush(stderr);
      // MPI-4.1 §9.3: every connected process (MPI Forum issue 3 / ticket 324).
      if (no_handle) AbortGroup(comm, code, g_last_error);
      AbortJob(code, g_last_error);
    }
    case rft_errhandler_s::Kind::kAbort:
      // MPI-4.1 §9.3: as rft_abort on the communicator, its group.
      AbortGroup(comm, code, g_last_error);
    case rft_errhandler_s::Kind::kFunction: {
      // The handler usually calls rft (a ULFM handler revokes), which overwrites g_last_error
      // and may replace the communicator's handler: the call gets a message and a handler that
      // live through it.
      const std::string message = g_last_error;
      Use(handler);
      handler->function(comm, code, message.c_str(), handler->user_data);
      Release(handler);
      return code;
    }
  }
  return code;
}

Status CommError(rft_comm_t comm, const char* what) {
  if (g_session == nullptr) {
    return OtherError(std::string(what) + ": rft is not initialised (call rft_init first)");
  }
  if (comm == nullptr) return ArgError(std::string(what) + ": the communicator is RFT_COMM_NULL");
  if (comm->magic != kLiveHandle) {
    return ArgError(std::string(what) + ": the communicator handle is freed or not one of rft's");
  }
  return Status::Ok();
}

Status CheckGroup(rft_group_t group, const char* what) {
  if (group == nullptr) return ArgError(std::string(what) + ": the group is RFT_GROUP_NULL");
  if (group->magic != kLiveHandle) {
    return ArgError(std::string(what) + ": the group handle is freed or not one of rft's");
  }
  return Status::Ok();
}

rft_comm_t NewComm(std::unique_ptr<Communicator> comm, rft_errhandler_s* errhandler) {
  auto* handle = new rft_comm_s;
  handle->comm = comm.get();
  handle->owned = std::move(comm);
  handle->errhandler = errhandler;
  Use(errhandler);
  handle->magic = kLiveHandle;
  handle->comm->set_binding(handle);
  g_comms.live.insert(handle);
  return handle;
}

rft_group_t NewGroup(Group group) {
  auto* handle = new rft_group_s;
  handle->group = std::move(group);
  g_groups.live.insert(handle);
  return handle;
}

void RetireGroup(rft_group_t group) { Retire(group, &g_groups); }

}  // namespace rft::api::binding

using rft::api::binding::g_failure_callback;
using rft::api::binding::g_failure_user_data;
using rft::api::binding::g_finalized;
using rft::api::binding::g_parent;
using rft::api::binding::g_session;
using rft::api::binding::session;

// ---- Start and end ----

extern "C" int rft_set_failure_callback(rft_failure_callback_t callback, void* user_data) {
  if (g_session != nullptr) {
    return Raise(nullptr, ArgError("rft_set_failure_callback: call it before rft_init"));
  }
  g_failure_callback = callback;
  g_failure_user_data = user_data;
  return Success();
}

extern "C" int rft_init(int*, char***, int requested_ft_level, int* provided) {
  if (g_session != nullptr || g_finalized) {
    return Raise(nullptr, OtherError(g_finalized ? "rft_init: rft was finalised already"
                                                 : "rft_init: rft is initialised already"));
  }
  Session::Options options;
  switch (requested_ft_level) {
    case RFT_FT_NONE:
      options.level = rft::api::FaultLevel::kNone;
      break;
    case RFT_FT_NOTIFY:
      options.level = rft::api::FaultLevel::kNotify;
      break;
    case RFT_FT_ASYNC:
      options.level = rft::api::FaultLevel::kAsync;
      if (g_failure_callback == nullptr) {
        return Raise(nullptr, ArgError("rft_init: fault level RFT_FT_ASYNC needs a callback "
                                       "(rft_set_failure_callback before rft_init)"));
      }
      options.on_failure = [callback = g_failure_callback, data = g_failure_user_data](Rank rank) {
        callback(static_cast<int>(rank), data);
      };
      break;
    default:
      return Raise(nullptr, ArgError("rft_init: fault level " + std::to_string(requested_ft_level) +
                                     ": expected RFT_FT_NONE, RFT_FT_NOTIFY or RFT_FT_ASYNC"));
  }
  options.on_deferred_free = [](void* binding) {
    rft::api::binding::Forget(static_cast<rft_comm_t>(binding));
  };
  // No handle is left to report it on: COMM_SELF's handler (fatal: this process only).
  options.on_freed_error = [](const Status& error) {
    (void)rft::api::binding::RaiseError(nullptr, error);
  };
  // Read before the session exists: a bad value leaves nothing to undo, and rft_init may be
  // called again once it is fixed.
  auto initial_name = rft::config::GetString("RFT_INITIAL_ERRHANDLER");
  if (!initial_name.ok()) {
    return Raise(nullptr, ArgError("rft_init: " + initial_name.status().message()));
  }
  rft_errhandler_s* initial = &rft_errors_are_fatal_object;  // mpi_errors_are_fatal
  if (*initial_name == "mpi_errors_abort") initial = &rft_errors_abort_object;
  if (*initial_name == "mpi_errors_return") initial = &rft_errors_return_object;
  auto created = Session::Create(options);
  if (!created.ok()) return Raise(nullptr, created.status());
  g_session = created->release();
  for (auto [handle, comm] : {std::pair{&rft_comm_world_object, &g_session->world()},
                              std::pair{&rft_comm_self_object, &g_session->self()}}) {
    handle->comm = comm;
    handle->errhandler = initial;
    handle->magic = kLiveHandle;
    comm->set_binding(handle);
  }
  if (std::unique_ptr<Communicator> parent = g_session->TakeParent()) {
    g_parent = NewComm(std::move(parent), initial);
  }
  if (provided != nullptr) *provided = requested_ft_level;
  return Success();
}

extern "C" int rft_warning(const char* message) {
  if (g_session == nullptr)
    return Raise(nullptr, OtherError("rft_warning: rft is not initialised"));
  if (message == nullptr) return Raise(nullptr, ArgError("rft_warning: message is NULL"));
  g_session->RaiseWarning(message);
  return Success();
}

extern "C" int rft_finalize(void) {
  if (g_session == nullptr) {
    return Raise(nullptr, OtherError("rft_finalize: rft is not initialised"));
  }
  // While world still works: collective over its live members.
  g_session->ReportWarnings();
  for (rft_comm_s* handle : {&rft_comm_world_object, &rft_comm_self_object}) {
    handle->magic = 0;
    rft::api::binding::Release(handle->errhandler);
    handle->errhandler = nullptr;
    handle->comm = nullptr;
  }
  // Communicators the program did not free end with the session (their handles stay, freed).
  auto& comms = rft::api::binding::g_comms;
  while (!comms.live.empty()) {
    rft_comm_s* handle = *comms.live.begin();
    // What the transport may still write into stays until it is closed (Session::Discard).
    g_session->Discard(std::move(handle->owned));
    rft::api::binding::Forget(handle);
  }
  delete g_session;
  g_session = nullptr;
  g_parent = RFT_COMM_NULL;
  g_finalized = true;
  return Success();
}

extern "C" int rft_initialized(int* flag) {
  if (flag == nullptr) return Raise(nullptr, ArgError("rft_initialized: flag is NULL"));
  *flag = g_session != nullptr || g_finalized;
  return Success();
}

extern "C" int rft_query_ft_level(int* level) {
  if (g_session == nullptr) {
    return Raise(nullptr, OtherError("rft_query_ft_level: rft is not initialised"));
  }
  if (level == nullptr) return Raise(nullptr, ArgError("rft_query_ft_level: level is NULL"));
  switch (g_session->level()) {
    case rft::api::FaultLevel::kNone:
      *level = RFT_FT_NONE;
      break;
    case rft::api::FaultLevel::kNotify:
      *level = RFT_FT_NOTIFY;
      break;
    case rft::api::FaultLevel::kAsync:
      *level = RFT_FT_ASYNC;
      break;
  }
  return Success();
}

extern "C" int rft_comm_set_name(rft_comm_t comm, const char* name) {
  if (Status s = CheckComm(comm, "rft_comm_set_name"); !s.ok()) return Raise(comm, s);
  if (name == nullptr) return Raise(comm, ArgError("rft_comm_set_name: name is NULL"));
  const size_t length = std::strlen(name);
  if (length >= RFT_MAX_OBJECT_NAME) {
    return Raise(comm,
                 ArgError("rft_comm_set_name: a name of " + std::to_string(length) +
                          " bytes: expected at most " + std::to_string(RFT_MAX_OBJECT_NAME - 1)));
  }
  comm->comm->set_name(name);
  return Success();
}

extern "C" int rft_comm_get_name(rft_comm_t comm, char* name, int* length) {
  if (Status s = CheckComm(comm, "rft_comm_get_name"); !s.ok()) return Raise(comm, s);
  if (name == nullptr || length == nullptr) {
    return Raise(comm, ArgError(std::string("rft_comm_get_name: ") +
                                (name == nullptr ? "name" : "length") + " is NULL"));
  }
  // Internal names (a split's) may be longer than a set one may be: cut to the buffer.
  const std::string& own = comm->comm->name();
  const size_t n = std::min(own.size(), size_t{RFT_MAX_OBJECT_NAME - 1});
  std::memcpy(name, own.data(), n);
  name[n] = '\0';
  *length = static_cast<int>(n);
  return Success();
}

extern "C" int rft_finalized(int* flag) {
  if (flag == nullptr) return Raise(nullptr, ArgError("rft_finalized: flag is NULL"));
  *flag = g_finalized;
  return Success();
}

extern "C" int rft_abort(rft_comm_t comm, int error_code) {
  if (Status s = CheckComm(comm, "rft_abort"); !s.ok()) {
    // Nothing to name: this process ends alone.
    std::fprintf(stderr, "rft_abort: %s; ending this process only\n", s.ToString().c_str());
    std::_Exit(error_code == 0 ? 1 : error_code & 0xff);
  }
  // Never returns: the launcher's kill, else (refused) the group's processes on this node by
  // process id, and then this process's own exit.
  rft::api::binding::AbortGroup(
      comm, error_code,
      "rft_abort(" + comm->comm->name() + ", " + std::to_string(error_code) + ")");
}

extern "C" const char* rft_last_error_message(void) {
  return rft::api::binding::g_last_error.c_str();
}

// ---- Communicators ----

extern "C" int rft_comm_rank(rft_comm_t comm, int* rank) {
  if (Status s = CheckComm(comm, "rft_comm_rank"); !s.ok()) return Raise(comm, s);
  if (rank == nullptr) return Raise(comm, ArgError("rft_comm_rank: rank is NULL"));
  *rank = static_cast<int>(comm->comm->local_rank());
  return Success();
}

extern "C" int rft_comm_size(rft_comm_t comm, int* size) {
  if (Status s = CheckComm(comm, "rft_comm_size"); !s.ok()) return Raise(comm, s);
  if (size == nullptr) return Raise(comm, ArgError("rft_comm_size: size is NULL"));
  *size = static_cast<int>(comm->comm->local_size());
  return Success();
}

namespace {

// The outcome of a creating call: a handle (inheriting the parent's error handler), or
// RFT_COMM_NULL for a process left out.
int Created(rft_comm_t parent, rft::StatusOr<std::unique_ptr<Communicator>> created,
            rft_comm_t* newcomm) {
  if (!created.ok()) return Raise(parent, created.status());
  *newcomm = *created == nullptr ? RFT_COMM_NULL : NewComm(std::move(*created), parent->errhandler);
  return Success();
}

}  // namespace

extern "C" int rft_comm_dup(rft_comm_t comm, rft_comm_t* newcomm) {
  if (Status s = CheckComm(comm, "rft_comm_dup"); !s.ok()) return Raise(comm, s);
  if (newcomm == nullptr) return Raise(comm, ArgError("rft_comm_dup: newcomm is NULL"));
  return Created(comm, g_session->Dup(*comm->comm), newcomm);
}

extern "C" int rft_comm_split(rft_comm_t comm, int color, int key, rft_comm_t* newcomm) {
  if (Status s = CheckComm(comm, "rft_comm_split"); !s.ok()) return Raise(comm, s);
  if (newcomm == nullptr) return Raise(comm, ArgError("rft_comm_split: newcomm is NULL"));
  static_assert(RFT_UNDEFINED == Session::kUndefinedColor);
  return Created(comm, g_session->Split(*comm->comm, color, key), newcomm);
}

extern "C" int rft_comm_create(rft_comm_t comm, rft_group_t group, rft_comm_t* newcomm) {
  if (Status s = CheckComm(comm, "rft_comm_create"); !s.ok()) return Raise(comm, s);
  if (newcomm == nullptr) return Raise(comm, ArgError("rft_comm_create: newcomm is NULL"));
  // A bad group here would leave the others waiting: Create refuses it with them.
  static const Group kEmpty;
  Status bad_group = CheckGroup(group, "rft_comm_create");
  const Group& members = bad_group.ok() ? group->group : kEmpty;
  return Created(comm, g_session->Create(*comm->comm, members, std::move(bad_group)), newcomm);
}

extern "C" int rft_comm_create_group(rft_comm_t comm, rft_group_t group, int tag,
                                     rft_comm_t* newcomm) {
  if (Status s = CheckComm(comm, "rft_comm_create_group"); !s.ok()) return Raise(comm, s);
  if (newcomm == nullptr) return Raise(comm, ArgError("rft_comm_create_group: newcomm is NULL"));
  *newcomm = RFT_COMM_NULL;
  if (Status s = CheckGroup(group, "rft_comm_create_group"); !s.ok()) return Raise(comm, s);
  return Created(comm, g_session->CreateGroup(*comm->comm, group->group, tag), newcomm);
}

extern "C" int rft_comm_free(rft_comm_t* comm) {
  if (comm == nullptr) return Raise(nullptr, ArgError("rft_comm_free: comm is NULL"));
  rft_comm_t handle = *comm;
  if (Status s = CheckComm(handle, "rft_comm_free"); !s.ok()) return Raise(handle, s);
  if (handle->owned == nullptr) {
    return Raise(handle, ArgError("rft_comm_free: " + handle->comm->name() +
                                  " is predefined and never freed"));
  }
  bool deferred = false;
  const Status freed = g_session->Free(handle->owned, &deferred);
  if (!freed.ok()) return Raise(handle, freed);
  if (handle == g_parent) g_parent = RFT_COMM_NULL;
  *comm = RFT_COMM_NULL;
  if (deferred) {
    // Requests pending on it complete as usual; the session calls Forget after the last.
    handle->magic = kFreeingHandle;
    return Success();
  }
  rft::api::binding::Forget(handle);
  return Success();
}

extern "C" int rft_comm_disconnect(rft_comm_t* comm) {
  if (comm == nullptr) return Raise(nullptr, ArgError("rft_comm_disconnect: comm is NULL"));
  rft_comm_t handle = *comm;
  if (Status s = CheckComm(handle, "rft_comm_disconnect"); !s.ok()) return Raise(handle, s);
  if (handle->owned == nullptr) {
    return Raise(handle, ArgError("rft_comm_disconnect: " + handle->comm->name() +
                                  " is predefined and never disconnected"));
  }
  // The outcome goes to the error handler while the communicator still exists (a handler may
  // revoke it or abort its group); then it is freed whatever the outcome, unless the handler
  // freed it.
  const Status synced = g_session->Disconnect(*handle->comm);
  const int rc = Raise(handle, synced);
  if (!CheckComm(handle, "rft_comm_disconnect").ok()) {
    *comm = RFT_COMM_NULL;
    return rc;
  }
  const int freed = rft_comm_free(comm);
  return rc != RFT_SUCCESS ? rc : freed;
}

extern "C" int rft_comm_compare(rft_comm_t a, rft_comm_t b, int* result) {
  if (Status s = CheckComm(a, "rft_comm_compare"); !s.ok()) return Raise(a, s);
  if (Status s = CheckComm(b, "rft_comm_compare"); !s.ok()) return Raise(b, s);
  if (result == nullptr) return Raise(a, ArgError("rft_comm_compare: result is NULL"));
  if (a == b) {
    *result = RFT_IDENT;
  } else {
    *result = rft::api::binding::ToComparison(Group::Compare(a->comm->group(), b->comm->group()),
                                              RFT_CONGRUENT);
  }
  return Success();
}

extern "C" int rft_comm_group(rft_comm_t comm, rft_group_t* group) {
  if (Status s = CheckComm(comm, "rft_comm_group"); !s.ok()) return Raise(comm, s);
  if (group == nullptr) return Raise(comm, ArgError("rft_comm_group: group is NULL"));
  *group = NewGroup(comm->comm->local_group());
  return Success();
}

// ---- Intercommunicators ----

extern "C" int rft_intercomm_create(rft_comm_t local, int local_leader, rft_comm_t peer,
                                    int remote_leader, int tag, rft_comm_t* newcomm) {
  if (Status s = CheckComm(local, "rft_intercomm_create"); !s.ok()) return Raise(local, s);
  if (newcomm == nullptr) return Raise(local, ArgError("rft_intercomm_create: newcomm is NULL"));
  *newcomm = RFT_COMM_NULL;
  // `peer` is significant at the leader only: elsewhere any handle (even a bad one) passes.
  Communicator* peer_comm = local->comm;
  if (local->comm->local_rank() == static_cast<rft::Rank>(local_leader)) {
    if (Status s = CheckComm(peer, "rft_intercomm_create"); !s.ok()) return Raise(local, s);
    peer_comm = peer->comm;
  }
  return Created(
      local, g_session->IntercommCreate(*local->comm, local_leader, *peer_comm, remote_leader, tag),
      newcomm);
}

extern "C" int rft_intercomm_merge(rft_comm_t inter, int high, rft_comm_t* newcomm) {
  if (Status s = CheckComm(inter, "rft_intercomm_merge"); !s.ok()) return Raise(inter, s);
  if (newcomm == nullptr) return Raise(inter, ArgError("rft_intercomm_merge: newcomm is NULL"));
  *newcomm = RFT_COMM_NULL;
  return Created(inter, g_session->IntercommMerge(*inter->comm, high != 0), newcomm);
}

extern "C" int rft_comm_test_inter(rft_comm_t comm, int* flag) {
  if (Status s = CheckComm(comm, "rft_comm_test_inter"); !s.ok()) return Raise(comm, s);
  if (flag == nullptr) return Raise(comm, ArgError("rft_comm_test_inter: flag is NULL"));
  *flag = comm->comm->is_inter() ? 1 : 0;
  return Success();
}

namespace {

Status CheckInter(rft_comm_t comm, const char* what) {
  RFT_RETURN_IF_ERROR(CheckComm(comm, what));
  if (comm->comm->is_inter()) return Status::Ok();
  return ArgError(std::string(what) + ": " + comm->comm->name() +
                  " is an intracommunicator; expected an intercommunicator");
}

}  // namespace

extern "C" int rft_comm_remote_size(rft_comm_t comm, int* size) {
  if (Status s = CheckInter(comm, "rft_comm_remote_size"); !s.ok()) return Raise(comm, s);
  if (size == nullptr) return Raise(comm, ArgError("rft_comm_remote_size: size is NULL"));
  *size = static_cast<int>(comm->comm->remote_group().size());
  return Success();
}

extern "C" int rft_comm_remote_group(rft_comm_t comm, rft_group_t* group) {
  if (Status s = CheckInter(comm, "rft_comm_remote_group"); !s.ok()) return Raise(comm, s);
  if (group == nullptr) return Raise(comm, ArgError("rft_comm_remote_group: group is NULL"));
  *group = NewGroup(comm->comm->remote_group());
  return Success();
}

// ---- Fault tolerance ----

namespace {

rft::StatusOr<Group> FailedGroup(Communicator& comm, size_t count) {
  const std::vector<Rank>& failed = comm.FailedMembers();
  return Group::FromJobRanks(std::vector<Rank>(failed.begin(), failed.begin() + count));
}

}  // namespace

extern "C" int rft_comm_get_failed(rft_comm_t comm, rft_group_t* failed) {
  if (Status s = CheckComm(comm, "rft_comm_get_failed"); !s.ok()) return Raise(comm, s);
  if (failed == nullptr) return Raise(comm, ArgError("rft_comm_get_failed: failed is NULL"));
  auto group = FailedGroup(*comm->comm, comm->comm->FailedMembers().size());
  if (!group.ok()) return Raise(comm, group.status());
  *failed = NewGroup(std::move(*group));
  return Success();
}

extern "C" int rft_comm_ack_failed(rft_comm_t comm, int num_to_ack, int* num_acked) {
  if (Status s = CheckComm(comm, "rft_comm_ack_failed"); !s.ok()) return Raise(comm, s);
  if (num_to_ack < 0) {
    return Raise(comm, ArgError("rft_comm_ack_failed: num_to_ack " + std::to_string(num_to_ack) +
                                ": expected a count >= 0"));
  }
  const uint32_t acked = comm->comm->AckFailed(static_cast<uint32_t>(num_to_ack));
  if (num_acked != nullptr) *num_acked = static_cast<int>(acked);
  return Success();
}

extern "C" int rft_comm_failure_ack(rft_comm_t comm) {
  if (Status s = CheckComm(comm, "rft_comm_failure_ack"); !s.ok()) return Raise(comm, s);
  comm->comm->AckFailed(UINT32_MAX);
  return Success();
}

extern "C" int rft_comm_failure_get_acked(rft_comm_t comm, rft_group_t* failed) {
  if (Status s = CheckComm(comm, "rft_comm_failure_get_acked"); !s.ok()) return Raise(comm, s);
  if (failed == nullptr) {
    return Raise(comm, ArgError("rft_comm_failure_get_acked: failed is NULL"));
  }
  auto group = FailedGroup(*comm->comm, comm->comm->acknowledged());
  if (!group.ok()) return Raise(comm, group.status());
  *failed = NewGroup(std::move(*group));
  return Success();
}

extern "C" int rft_comm_revoke(rft_comm_t comm) {
  if (Status s = CheckComm(comm, "rft_comm_revoke"); !s.ok()) return Raise(comm, s);
  return Raise(comm, g_session->Revoke(*comm->comm));
}

extern "C" int rft_comm_is_revoked(rft_comm_t comm, int* flag) {
  if (Status s = CheckComm(comm, "rft_comm_is_revoked"); !s.ok()) return Raise(comm, s);
  if (flag == nullptr) return Raise(comm, ArgError("rft_comm_is_revoked: flag is NULL"));
  g_session->plane().Progress();  // a revocation that arrived is processed first
  *flag = comm->comm->IsRevoked();
  return Success();
}

extern "C" int rft_comm_agree(rft_comm_t comm, int* flag) {
  if (Status s = CheckComm(comm, "rft_comm_agree"); !s.ok()) return Raise(comm, s);
  if (flag == nullptr) return Raise(comm, ArgError("rft_comm_agree: flag is NULL"));
  uint32_t value = static_cast<uint32_t>(*flag);
  Status result = g_session->Agree(*comm->comm, &value);
  *flag = static_cast<int>(value);
  return Raise(comm, result);
}

extern "C" int rft_comm_iagree(rft_comm_t comm, int* flag, rft_request_t* request) {
  if (Status s = CheckComm(comm, "rft_comm_iagree"); !s.ok()) return Raise(comm, s);
  if (flag == nullptr || request == nullptr) {
    return Raise(comm, ArgError(std::string("rft_comm_iagree: ") +
                                (flag == nullptr ? "flag" : "request") + " is NULL"));
  }
  // int and unsigned int may alias: the agreement writes the caller's int in place.
  rft::api::Request* started = nullptr;
  const Status result = g_session->Iagree(*comm->comm, reinterpret_cast<uint32_t*>(flag), &started);
  *request = rft::api::binding::ToHandle(started);
  return Raise(comm, result);
}

extern "C" int rft_comm_shrink(rft_comm_t comm, rft_comm_t* newcomm) {
  if (Status s = CheckComm(comm, "rft_comm_shrink"); !s.ok()) return Raise(comm, s);
  if (newcomm == nullptr) return Raise(comm, ArgError("rft_comm_shrink: newcomm is NULL"));
  return Created(comm, g_session->Shrink(*comm->comm), newcomm);
}

extern "C" int rft_comm_replace(rft_comm_t comm, const char* const argv[], rft_comm_t* newcomm) {
  if (Status s = CheckComm(comm, "rft_comm_replace"); !s.ok()) return Raise(comm, s);
  if (newcomm == nullptr) return Raise(comm, ArgError("rft_comm_replace: newcomm is NULL"));
  *newcomm = RFT_COMM_NULL;
  // A member without a program still takes part: every member then fails with RFT_ERR_ARG.
  std::vector<std::string> args;
  for (size_t i = 0; argv != nullptr && argv[i] != nullptr; ++i) args.emplace_back(argv[i]);
  return Created(comm, g_session->Replace(*comm->comm, args), newcomm);
}

static_assert(rft::api::Session::kMaxSpawn == RFT_MAX_SPAWN);

namespace {

// Both spawns: the programs the root passed (a root without a command still takes part: every
// member then fails with RFT_ERR_ARG, which the session's agreement tells them).
int SpawnPrograms(rft_comm_t comm, const std::vector<rft::api::Session::SpawnProgram>& programs,
                  int root, rft_comm_t* intercomm, int errcodes[]) {
  std::vector<int> codes;
  auto spawned = g_session->Spawn(*comm->comm, programs, root, &codes);
  // Before an error reaches the handler, which may want to read them.
  if (errcodes != RFT_ERRCODES_IGNORE) std::copy(codes.begin(), codes.end(), errcodes);
  return Created(comm, std::move(spawned), intercomm);
}

// A working directory relative to this process's own, made absolute: the launcher that starts
// the processes has a working directory of its own.
std::string AbsoluteDir(const char* dir) {
  char cwd[4096];
  if (dir[0] == '/' || dir[0] == '\0' || getcwd(cwd, sizeof cwd) == nullptr) return dir;
  return std::string(cwd) + "/" + dir;
}

rft::api::Session::SpawnProgram Program(const char* command, const char* const argv[],
                                        int maxprocs) {
  rft::api::Session::SpawnProgram program{.argv = {}, .maxprocs = maxprocs, .wdir = {}};
  if (command != nullptr && command[0] != '\0') {
    program.argv.emplace_back(command);
    for (size_t i = 0; argv != nullptr && argv[i] != nullptr; ++i)
      program.argv.emplace_back(argv[i]);
  }
  return program;
}

}  // namespace

extern "C" int rft_comm_spawn(rft_comm_t comm, const char* command, const char* const argv[],
                              int maxprocs, int root, rft_comm_t* intercomm, int errcodes[]) {
  if (Status s = CheckComm(comm, "rft_comm_spawn"); !s.ok()) return Raise(comm, s);
  if (intercomm == nullptr) return Raise(comm, ArgError("rft_comm_spawn: intercomm is NULL"));
  *intercomm = RFT_COMM_NULL;
  return SpawnPrograms(comm, {Program(command, argv, maxprocs)}, root, intercomm, errcodes);
}

extern "C" int rft_comm_spawn_multiple(rft_comm_t comm, int count, const char* const commands[],
                                       const char* const* const argvs[], const int maxprocs[],
                                       int root, rft_comm_t* intercomm, int errcodes[]) {
  return rft_comm_spawn_multiple_in(comm, count, commands, argvs, maxprocs, nullptr, root,
                                    intercomm, errcodes);
}

extern "C" int rft_comm_spawn_multiple_in(rft_comm_t comm, int count, const char* const commands[],
                                          const char* const* const argvs[], const int maxprocs[],
                                          const char* const wdirs[], int root,
                                          rft_comm_t* intercomm, int errcodes[]) {
  if (Status s = CheckComm(comm, "rft_comm_spawn_multiple"); !s.ok()) return Raise(comm, s);
  if (intercomm == nullptr) {
    return Raise(comm, ArgError("rft_comm_spawn_multiple: intercomm is NULL"));
  }
  *intercomm = RFT_COMM_NULL;
  // Significant at the root only; elsewhere they may be anything, and are not read. A root
  // with a bad count or NULL arrays passes no program, which fails every member alike.
  int rank = -1;
  (void)rft_comm_rank(comm, &rank);
  std::vector<rft::api::Session::SpawnProgram> programs;
  if (rank == root && count > 0 && count <= RFT_MAX_SPAWN && commands != nullptr &&
      maxprocs != nullptr) {
    for (int i = 0; i < count; ++i) {
      programs.push_back(Program(commands[i], argvs != nullptr ? argvs[i] : nullptr, maxprocs[i]));
      if (wdirs != nullptr && wdirs[i] != nullptr) programs.back().wdir = AbsoluteDir(wdirs[i]);
    }
  }
  return SpawnPrograms(comm, programs, root, intercomm, errcodes);
}

extern "C" int rft_appnum(int* appnum) {
  if (appnum == nullptr) return Raise(nullptr, ArgError("rft_appnum: appnum is NULL"));
  *appnum = static_cast<int>(rft::transport::Bootstrap::appnum());
  return Success();
}

extern "C" int rft_comm_get_parent(rft_comm_t* parent) {
  if (g_session == nullptr) {
    return Raise(nullptr, ArgError("rft_comm_get_parent: call rft_init first"));
  }
  if (parent == nullptr) return Raise(nullptr, ArgError("rft_comm_get_parent: parent is NULL"));
  *parent = g_parent;
  return Success();
}

extern "C" int rft_comm_ishrink(rft_comm_t comm, rft_comm_t* newcomm, rft_request_t* request) {
  if (Status s = CheckComm(comm, "rft_comm_ishrink"); !s.ok()) return Raise(comm, s);
  if (newcomm == nullptr || request == nullptr) {
    return Raise(comm, ArgError(std::string("rft_comm_ishrink: ") +
                                (newcomm == nullptr ? "newcomm" : "request") + " is NULL"));
  }
  *newcomm = RFT_COMM_NULL;
  *request = RFT_REQUEST_NULL;
  // The parent outlives the request (rft_comm_free waits for it, deferred): its error handler is
  // read at completion.
  auto deliver = [comm, newcomm](std::unique_ptr<Communicator> built) {
    *newcomm = NewComm(std::move(built), comm->errhandler);
  };
  rft::api::Request* started = nullptr;
  const Status result = g_session->Ishrink(*comm->comm, std::move(deliver), &started);
  *request = rft::api::binding::ToHandle(started);
  return Raise(comm, result);
}

extern "C" int rft_comm_agree_deadline(rft_comm_t comm, int* flag, double seconds,
                                       rft_group_t* cut_off) {
  if (Status s = CheckComm(comm, "rft_comm_agree_deadline"); !s.ok()) return Raise(comm, s);
  if (flag == nullptr) return Raise(comm, ArgError("rft_comm_agree_deadline: flag is NULL"));
  if (cut_off != nullptr) *cut_off = RFT_GROUP_NULL;
  uint32_t value = static_cast<uint32_t>(*flag);
  std::vector<rft::Rank> cut;
  Status result = g_session->AgreeDeadline(*comm->comm, &value, seconds, &cut);
  *flag = static_cast<int>(value);
  if (cut_off != nullptr && (result.ok() || result.code() == RFT_ERR_PROC_FAILED)) {
    auto group = Group::FromJobRanks(std::move(cut));
    if (!group.ok()) return Raise(comm, group.status());
    *cut_off = NewGroup(std::move(*group));
  }
  return Raise(comm, result);
}

extern "C" double rft_agree_default_deadline(double remaining_seconds) {
  return remaining_seconds > 0 ? 0.2 * remaining_seconds : 0.0;
}

// ---- Error handlers ----

extern "C" int rft_comm_create_errhandler(rft_comm_errhandler_fn function, void* user_data,
                                          rft_errhandler_t* handler) {
  if (function == nullptr || handler == nullptr) {
    return Raise(nullptr, ArgError(std::string("rft_comm_create_errhandler: ") +
                                   (function == nullptr ? "function" : "handler") + " is NULL"));
  }
  *handler = new rft_errhandler_s{
      .kind = rft_errhandler_s::Kind::kFunction, .function = function, .user_data = user_data};
  return Success();
}

extern "C" int rft_errhandler_free(rft_errhandler_t* handler) {
  if (handler == nullptr || *handler == nullptr || (*handler)->magic != kLiveHandle) {
    return Raise(nullptr, ArgError("rft_errhandler_free: not a live error handler"));
  }
  rft::api::binding::Release(*handler);  // communicators using it keep it alive
  *handler = nullptr;
  return Success();
}

extern "C" int rft_comm_set_errhandler(rft_comm_t comm, rft_errhandler_t handler) {
  if (Status s = CheckComm(comm, "rft_comm_set_errhandler"); !s.ok()) return Raise(comm, s);
  if (handler == nullptr || handler->magic != kLiveHandle) {
    return Raise(comm, ArgError("rft_comm_set_errhandler: not a live error handler"));
  }
  rft::api::binding::Use(handler);
  rft::api::binding::Release(comm->errhandler);
  comm->errhandler = handler;
  return Success();
}

extern "C" int rft_comm_get_errhandler(rft_comm_t comm, rft_errhandler_t* handler) {
  if (Status s = CheckComm(comm, "rft_comm_get_errhandler"); !s.ok()) return Raise(comm, s);
  if (handler == nullptr) return Raise(comm, ArgError("rft_comm_get_errhandler: handler is NULL"));
  rft::api::binding::Use(comm->errhandler);  // the caller's reference (rft_errhandler_free)
  *handler = comm->errhandler;
  return Success();
}
