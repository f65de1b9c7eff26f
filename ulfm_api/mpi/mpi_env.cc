// Start and end, the environment, errors and error handlers, info objects.
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <string>

#include "ulfm_api/mpi/mpi_internal.h"

namespace rft::mpi {

State& state() {
  static State* the_state = new State();  // never destroyed: atexit order would be a hazard
  return *the_state;
}

namespace {

thread_local std::string g_last_message;

// Copies `text` into a caller's buffer of `capacity` bytes (with the terminating NUL).
void CopyOut(const std::string& text, char* out, int capacity, int* length) {
  const size_t n = std::min(text.size(), static_cast<size_t>(capacity - 1));
  memcpy(out, text.data(), n);
  out[n] = '\0';
  if (length != nullptr) *length = static_cast<int>(n);
}

int ErrhandlerFromName(const char* name) {
  if (name == nullptr || *name == '\0') return MPI_ERRORS_ARE_FATAL;
  if (strcmp(name, "mpi_errors_are_fatal") == 0) return MPI_ERRORS_ARE_FATAL;
  if (strcmp(name, "mpi_errors_abort") == 0) return MPI_ERRORS_ABORT;
  if (strcmp(name, "mpi_errors_return") == 0) return MPI_ERRORS_RETURN;
  fprintf(stderr,
          "rft MPI: RFT_MPI_INITIAL_ERRHANDLER=%s: expected mpi_errors_are_fatal, "
          "mpi_errors_abort or mpi_errors_return; using mpi_errors_are_fatal\n",
          name);
  return MPI_ERRORS_ARE_FATAL;
}

void SetUpEnvInfo(int argc, char** argv) {
  Info& info = state().env_info;
  info.entries.clear();
  if (argc > 0 && argv != nullptr) {
    info.entries.emplace_back("command", argv[0]);
    std::string args;
    for (int i = 1; i < argc; ++i) args += (i > 1 ? " " : "") + std::string(argv[i]);
    info.entries.emplace_back("argv", args);
  }
  info.entries.emplace_back("maxprocs", std::to_string(state().world.size));
  info.entries.emplace_back("thread_level", "MPI_THREAD_SINGLE");
  const char* handler = getenv("RFT_MPI_INITIAL_ERRHANDLER");
  info.entries.emplace_back("mpi_initial_errhandler",
                            handler != nullptr && *handler ? handler : "mpi_errors_are_fatal");
  char host[MPI_MAX_PROCESSOR_NAME];
  if (gethostname(host, sizeof(host)) == 0) {
    host[sizeof(host) - 1] = '\0';
    info.entries.emplace_back("host", host);
  }
}

int InitCommon(int* argc, char*** argv, int required, int* provided) {
  State& s = state();
  if (s.initialized) return Raise(MPI_COMM_WORLD, MPI_ERR_OTHER, "MPI_Init: called twice");
  const char* ft = getenv("RFT_MPI_FT");
  s.fault_tolerant = !(ft != nullptr && strcmp(ft, "no") == 0);
  int level = 0;
  const int rc = rft_init(argc, argv, s.fault_tolerant ? RFT_FT_NOTIFY : RFT_FT_NONE, &level);
  if (rc != RFT_SUCCESS) {
    fprintf(stderr, "rft MPI: MPI_Init: %s\n", rft_last_error_message());
    return FromRft(rc);
  }
  s.initialized = true;
  // The MPI layer calls the MPI error handlers itself: rft's come back.
  rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN);
  rft_comm_set_errhandler(RFT_COMM_SELF, RFT_ERRORS_RETURN);
  const MPI_Errhandler initial = ErrhandlerFromName(getenv("RFT_MPI_INITIAL_ERRHANDLER"));
  s.world.rft = RFT_COMM_WORLD;
  rft_comm_rank(RFT_COMM_WORLD, &s.world.rank);
  rft_comm_size(RFT_COMM_WORLD, &s.world.size);
  s.world.errhandler = initial;
  s.world.name = "MPI_COMM_WORLD";
  s.self.rft = RFT_COMM_SELF;
  s.self.rank = 0;
  s.self.size = 1;
  s.self.errhandler = initial;
  s.self.name = "MPI_COMM_SELF";
  // rft is called from one thread (rft.h): FUNNELED is what it honestly provides.
  s.thread_level = required < MPI_THREAD_FUNNELED ? required : MPI_THREAD_FUNNELED;
  if (provided != nullptr) *provided = s.thread_level;
  SetUpEnvInfo(argc != nullptr ? *argc : 0, argv != nullptr ? *argv : nullptr);
  return MPI_SUCCESS;
}

}  // namespace

const char* ErrorClassName(int error_class) {
  switch (error_class) {
    case MPI_SUCCESS:
      return "MPI_SUCCESS";
    case MPI_ERR_BUFFER:
      return "MPI_ERR_BUFFER";
    case MPI_ERR_COUNT:
      return "MPI_ERR_COUNT";
    case MPI_ERR_TYPE:
      return "MPI_ERR_TYPE";
    case MPI_ERR_TAG:
      return "MPI_ERR_TAG";
    case MPI_ERR_COMM:
      return "MPI_ERR_COMM";
    case MPI_ERR_RANK:
      return "MPI_ERR_RANK";
    case MPI_ERR_ROOT:
      return "MPI_ERR_ROOT";
    case MPI_ERR_GROUP:
      return "MPI_ERR_GROUP";
    case MPI_ERR_OP:
      return "MPI_ERR_OP";
    case MPI_ERR_TOPOLOGY:
      return "MPI_ERR_TOPOLOGY";
    case MPI_ERR_DIMS:
      return "MPI_ERR_DIMS";
    case MPI_ERR_ARG:
      return "MPI_ERR_ARG";
    case MPI_ERR_UNKNOWN:
      return "MPI_ERR_UNKNOWN";
    case MPI_ERR_TRUNCATE:
      return "MPI_ERR_TRUNCATE";
    case MPI_ERR_OTHER:
      return "MPI_ERR_OTHER";
    case MPI_ERR_INTERN:
      return "MPI_ERR_INTERN";
    case MPI_ERR_IN_STATUS:
      return "MPI_ERR_IN_STATUS";
    case MPI_ERR_PENDING:
      return "MPI_ERR_PENDING";
    case MPI_ERR_REQUEST:
      return "MPI_ERR_REQUEST";
    case MPI_ERR_INFO:
      return "MPI_ERR_INFO";
    case MPI_ERR_INFO_KEY:
      return "MPI_ERR_INFO_KEY";
    case MPI_ERR_INFO_VALUE:
      return "MPI_ERR_INFO_VALUE";
    case MPI_ERR_INFO_NOKEY:
      return "MPI_ERR_INFO_NOKEY";
    case MPI_ERR_NO_MEM:
      return "MPI_ERR_NO_MEM";
    case MPI_ERR_SPAWN:
      return "MPI_ERR_SPAWN";
    case MPI_ERR_UNSUPPORTED_OPERATION:
      return "MPI_ERR_UNSUPPORTED_OPERATION";
    case MPI_ERR_KEYVAL:
      return "MPI_ERR_KEYVAL";
    case MPI_ERR_PROC_ABORTED:
      return "MPI_ERR_PROC_ABORTED";
    case MPIX_ERR_PROC_FAILED:
      return "MPIX_ERR_PROC_FAILED";
    case MPIX_ERR_PROC_FAILED_PENDING:
      return "MPIX_ERR_PROC_FAILED_PENDING";
    case MPIX_ERR_REVOKED:
      return "MPIX_ERR_REVOKED";
    default:
      return nullptr;
  }
}

int FromRft(int rft_error) {
  switch (rft_error) {
    case RFT_SUCCESS:
      return MPI_SUCCESS;
    case RFT_ERR_PROC_FAILED:
      return MPIX_ERR_PROC_FAILED;
    case RFT_ERR_PROC_FAILED_PENDING:
      return MPIX_ERR_PROC_FAILED_PENDING;
    case RFT_ERR_REVOKED:
      return MPIX_ERR_REVOKED;
    case RFT_ERR_TRUNCATE:
      return MPI_ERR_TRUNCATE;
    case RFT_ERR_ARG:
      return MPI_ERR_ARG;
    case RFT_ERR_IN_STATUS:
      return MPI_ERR_IN_STATUS;
    case RFT_ERR_PENDING:
      return MPI_ERR_PENDING;
    default:
      return MPI_ERR_OTHER;
  }
}

int Raise(MPI_Comm handle, int error_class, const std::string& message) {
  g_last_message = message;
  State& s = state();
  Comm* comm = FindComm(handle);
  if (comm == nullptr) comm = s.initialized ? &s.self : &s.world;
  MPI_Errhandler handler = comm->errhandler;
  if (!s.initialized || s.finalized) handler = MPI_ERRORS_ARE_FATAL;
  if (handler == MPI_ERRORS_RETURN) return error_class;
  if (handler == MPI_ERRORS_ARE_FATAL || handler == MPI_ERRORS_ABORT) {
    const char* name = ErrorClassName(error_class);
    fprintf(stderr, "rft MPI: %s: %s\n", name != nullptr ? name : "error", message.c_str());
    fflush(stderr);
    if (!s.initialized || s.finalized) _exit(error_class == 0 ? 1 : error_class);
    // MPI-4.1 §9.3: ERRORS_ARE_FATAL aborts all connected processes, ERRORS_ABORT those of
    // the communicator's group. rft_abort never returns when the launcher does its part.
    rft_abort(handler == MPI_ERRORS_ABORT ? comm->rft : RFT_COMM_WORLD, error_class);
    _exit(error_class);
  }
  Errhandler* user = s.errhandlers.Find(handler);
  if (user != nullptr && user->function != nullptr) {
    MPI_Comm reported = comm == &s.world  ? MPI_COMM_WORLD
                        : comm == &s.self ? MPI_COMM_SELF
                                          : handle;
    int code = error_class;
    // The message must outlive the handler, which may call MPI itself (the usual ULFM handler
    // revokes): a copy lives on this frame.
    const std::string kept = message;
    user->function(&reported, &code);
    (void)kept;
  }
  return error_class;
}

int RaiseRft(MPI_Comm comm, const char* function, int rft_error) {
  return Raise(comm, FromRft(rft_error), std::string(function) + ": " + rft_last_error_message());
}

int NotInitialized(const char* function) {
  return Raise(MPI_COMM_WORLD, MPI_ERR_OTHER,
               std::string(function) + (state().finalized ? ": called after MPI_Finalize"
                                                          : ": called before MPI_Init"));
}

}  // namespace rft::mpi

using namespace rft::mpi;

extern "C" {

int PMPI_Init(int* argc, char*** argv) {
  return InitCommon(argc, argv, MPI_THREAD_SINGLE, nullptr);
}

int PMPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
  return InitCommon(argc, argv, required, provided);
}

int PMPI_Initialized(int* flag) {
  *flag = state().initialized ? 1 : 0;
  return MPI_SUCCESS;
}

int PMPI_Finalized(int* flag) {
  *flag = state().finalized ? 1 : 0;
  return MPI_SUCCESS;
}

int PMPI_Finalize(void) {
  State& s = state();
  if (!Ready()) return NotInitialized("MPI_Finalize");
  // MPI: attributes of COMM_SELF are deleted first (libraries hook their finalization there).
  for (auto it = s.self.attributes.begin(); it != s.self.attributes.end();) {
    const int key = it->first;
    void* value = it->second;
    it = s.self.attributes.erase(it);
    if (Keyval* keyval = s.keyvals.Find(key); keyval != nullptr && keyval->del != nullptr) {
      keyval->del(MPI_COMM_SELF, key, value, keyval->extra_state);
    }
  }
  const int rc = rft_finalize();
  s.finalized = true;
  return rc == RFT_SUCCESS ? MPI_SUCCESS : FromRft(rc);
}

int PMPI_Abort(MPI_Comm comm, int errorcode) {
  Comm* c = FindComm(comm);
  fflush(stdout);
  fflush(stderr);
  if (Ready()) rft_abort(c != nullptr ? c->rft : RFT_COMM_WORLD, errorcode);
  _exit(errorcode == 0 ? 1 : errorcode);  // never returns (MPI: Abort does not)
}

int PMPI_Query_thread(int* provided) {
  *provided = state().thread_level;
  return MPI_SUCCESS;
}

int PMPI_Is_thread_main(int* flag) {
  *flag = 1;  // FUNNELED at most: only the main thread may call
  return MPI_SUCCESS;
}

int PMPI_Get_version(int* version, int* subversion) {
  *version = MPI_VERSION;
  *subversion = MPI_SUBVERSION;
  return MPI_SUCCESS;
}

int PMPI_Get_library_version(char* version, int* resultlen) {
  CopyOut("rft MPI (MPI 4.0 with ULFM; the MPICH family's ABI)", version,
          MPI_MAX_LIBRARY_VERSION_STRING, resultlen);
  return MPI_SUCCESS;
}

int PMPI_Get_processor_name(char* name, int* resultlen) {
  char host[MPI_MAX_PROCESSOR_NAME] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) strcpy(host, "localhost");
  CopyOut(host, name, MPI_MAX_PROCESSOR_NAME, resultlen);
  return MPI_SUCCESS;
}

double PMPI_Wtime(void) {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

double PMPI_Wtick(void) {
  timespec t;
  clock_getres(CLOCK_MONOTONIC, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

int PMPI_Alloc_mem(MPI_Aint size, MPI_Info, void* baseptr) {
  if (size < 0) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_ARG,
                 "MPI_Alloc_mem: size " + std::to_string(size) + ": expected >= 0");
  }
  void* p = malloc(size == 0 ? 1 : static_cast<size_t>(size));
  if (p == nullptr) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_NO_MEM,
                 "MPI_Alloc_mem: could not allocate " + std::to_string(size) + " bytes");
  }
  *static_cast<void**>(baseptr) = p;
  return MPI_SUCCESS;
}

int PMPI_Free_mem(void* base) {
  free(base);
  return MPI_SUCCESS;
}

int PMPI_Pcontrol(const int, ...) { return MPI_SUCCESS; }

// ---- Errors ----
int PMPI_Error_class(int errorcode, int* errorclass) {
  State& s = state();
  if (auto it = s.error_code_class.find(errorcode); it != s.error_code_class.end()) {
    *errorclass = it->second;
    return MPI_SUCCESS;
  }
  if (errorcode < 0 || (errorcode > s.last_used_code && ErrorClassName(errorcode) == nullptr)) {
    return Raise(
        MPI_COMM_WORLD, MPI_ERR_ARG,
        "MPI_Error_class: error code " + std::to_string(errorcode) + " is not one of MPI's");
  }
  *errorclass = errorcode;
  return MPI_SUCCESS;
}

int PMPI_Error_string(int errorcode, char* string, int* resultlen) {
  State& s = state();
  std::string text;
  if (auto it = s.error_strings.find(errorcode); it != s.error_strings.end()) {
    text = it->second;
  } else if (const char* name = ErrorClassName(errorcode); name != nullptr) {
    text = name;
    // The most recent error's own message says which argument or process; give it with the
    // class it was raised with.
    if (errorcode != MPI_SUCCESS && !g_last_message.empty()) text += ": " + g_last_message;
  } else {
    text = "unknown error code " + std::to_string(errorcode);
  }
  CopyOut(text, string, MPI_MAX_ERROR_STRING, resultlen);
  return MPI_SUCCESS;
}

int PMPI_Add_error_class(int* errorclass) {
  State& s = state();
  *errorclass = ++s.last_used_code;
  s.error_code_class[*errorclass] = *errorclass;
  return MPI_SUCCESS;
}

int PMPI_Add_error_code(int errorclass, int* errorcode) {
  State& s = state();
  if (ErrorClassName(errorclass) == nullptr && s.error_code_class.count(errorclass) == 0) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_ARG,
                 "MPI_Add_error_code: class " + std::to_string(errorclass) + " is not a class");
  }
  *errorcode = ++s.last_used_code;
  s.error_code_class[*errorcode] = errorclass;
  return MPI_SUCCESS;
}

int PMPI_Add_error_string(int errorcode, const char* string) {
  if (string == nullptr) return Raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Add_error_string: NULL");
  state().error_strings[errorcode] = string;
  return MPI_SUCCESS;
}

int PMPI_Comm_create_errhandler(MPI_Comm_errhandler_function* function,
                                MPI_Errhandler* errhandler) {
  if (function == nullptr) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Comm_create_errhandler: NULL function");
  }
  *errhandler = state().errhandlers.Add(Errhandler{function});
  return MPI_SUCCESS;
}

static bool KnownErrhandler(MPI_Errhandler h) {
  return h == MPI_ERRORS_ARE_FATAL || h == MPI_ERRORS_RETURN || h == MPI_ERRORS_ABORT ||
         state().errhandlers.Find(h) != nullptr;
}

int PMPI_Comm_set_errhandler(MPI_Comm comm, MPI_Errhandler errhandler) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return Raise(comm, MPI_ERR_COMM, "MPI_Comm_set_errhandler: invalid comm");
  if (!KnownErrhandler(errhandler)) {
    return Raise(comm, MPI_ERR_ARG, "MPI_Comm_set_errhandler: invalid error handler");
  }
  c->errhandler = errhandler;
  return MPI_SUCCESS;
}

int PMPI_Comm_get_errhandler(MPI_Comm comm, MPI_Errhandler* errhandler) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return Raise(comm, MPI_ERR_COMM, "MPI_Comm_get_errhandler: invalid comm");
  *errhandler = c->errhandler;
  return MPI_SUCCESS;
}

int PMPI_Comm_call_errhandler(MPI_Comm comm, int errorcode) {
  if (FindComm(comm) == nullptr) {
    return Raise(comm, MPI_ERR_COMM, "MPI_Comm_call_errhandler: invalid comm");
  }
  Raise(comm, errorcode, "MPI_Comm_call_errhandler");
  return MPI_SUCCESS;
}

int PMPI_Errhandler_free(MPI_Errhandler* errhandler) {
  // Predefined handlers stay; a user one goes when no communicator uses it... communicators
  // keep the handle value and calls through a freed one fall back to ERRORS_ARE_FATAL.
  if (state().errhandlers.Find(*errhandler) == nullptr && !KnownErrhandler(*errhandler)) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Errhandler_free: invalid error handler");
  }
  *errhandler = MPI_ERRHANDLER_NULL;
  return MPI_SUCCESS;
}

int PMPI_Errhandler_set(MPI_Comm comm, MPI_Errhandler h) {
  return PMPI_Comm_set_errhandler(comm, h);
}
int PMPI_Errhandler_get(MPI_Comm comm, MPI_Errhandler* h) {
  return PMPI_Comm_get_errhandler(comm, h);
}

// ---- Info ----
static Info* FindInfo(MPI_Info handle) {
  if (handle == MPI_INFO_ENV) return &state().env_info;
  return state().infos.Find(handle);
}

static int BadInfo(const char* function) {
  return Raise(MPI_COMM_WORLD, MPI_ERR_INFO, std::string(function) + ": invalid info handle");
}

int PMPI_Info_create(MPI_Info* info) {
  *info = state().infos.Add(Info{});
  return MPI_SUCCESS;
}

int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  Info* i = state().infos.Find(info);
  if (i == nullptr) return BadInfo("MPI_Info_set");
  if (key == nullptr || *key == '\0' || strlen(key) > MPI_MAX_INFO_KEY) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, "MPI_Info_set: empty or too long key");
  }
  if (value == nullptr || strlen(value) > MPI_MAX_INFO_VAL) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, "MPI_Info_set: NULL or too long value");
  }
  for (auto& [k, v] : i->entries) {
    if (k == key) {
      v = value;
      return MPI_SUCCESS;
    }
  }
  i->entries.emplace_back(key, value);
  return MPI_SUCCESS;
}

static const std::string* InfoValue(Info* i, const char* key) {
  for (auto& [k, v] : i->entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  Info* i = FindInfo(info);
  if (i == nullptr) return BadInfo("MPI_Info_get");
  const std::string* v = InfoValue(i, key);
  *flag = v != nullptr;
  if (v != nullptr) CopyOut(*v, value, valuelen + 1, nullptr);
  return MPI_SUCCESS;
}

int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  Info* i = FindInfo(info);
  if (i == nullptr) return BadInfo("MPI_Info_get_valuelen");
  const std::string* v = InfoValue(i, key);
  *flag = v != nullptr;
  if (v != nullptr) *valuelen = static_cast<int>(v->size());
  return MPI_SUCCESS;
}

int PMPI_Info_get_string(MPI_Info info, const char* key, int* buflen, char* value, int* flag) {
  Info* i = FindInfo(info);
  if (i == nullptr) return BadInfo("MPI_Info_get_string");
  const std::string* v = InfoValue(i, key);
  *flag = v != nullptr;
  if (v == nullptr) return MPI_SUCCESS;
  const int capacity = *buflen;
  *buflen = static_cast<int>(v->size()) + 1;
  if (capacity > 0) CopyOut(*v, value, capacity, nullptr);
  return MPI_SUCCESS;
}

int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  Info* i = FindInfo(info);
  if (i == nullptr) return BadInfo("MPI_Info_get_nkeys");
  *nkeys = static_cast<int>(i->entries.size());
  return MPI_SUCCESS;
}

int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  Info* i = FindInfo(info);
  if (i == nullptr) return BadInfo("MPI_Info_get_nthkey");
  if (n < 0 || n >= static_cast<int>(i->entries.size())) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_ARG,
                 "MPI_Info_get_nthkey: n " + std::to_string(n) + ": expected 0.." +
                     std::to_string(static_cast<int>(i->entries.size()) - 1));
  }
  CopyOut(i->entries[n].first, key, MPI_MAX_INFO_KEY + 1, nullptr);
  return MPI_SUCCESS;
}

int PMPI_Info_delete(MPI_Info info, const char* key) {
  Info* i = state().infos.Find(info);
  if (i == nullptr) return BadInfo("MPI_Info_delete");
  for (auto it = i->entries.begin(); it != i->entries.end(); ++it) {
    if (it->first == key) {
      i->entries.erase(it);
      return MPI_SUCCESS;
    }
  }
  return Raise(MPI_COMM_WORLD, MPI_ERR_INFO_NOKEY,
               std::string("MPI_Info_delete: no key \"") + key + "\"");
}

int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  Info* i = FindInfo(info);
  if (i == nullptr) return BadInfo("MPI_Info_dup");
  *newinfo = state().infos.Add(*i);
  return MPI_SUCCESS;
}

int PMPI_Info_free(MPI_Info* info) {
  if (state().infos.Find(*info) == nullptr) return BadInfo("MPI_Info_free");
  state().infos.Remove(*info);
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"

RFT_MPI_ALIAS(Init)
RFT_MPI_ALIAS(Init_thread)
RFT_MPI_ALIAS(Initialized)
RFT_MPI_ALIAS(Finalized)
RFT_MPI_ALIAS(Finalize)
RFT_MPI_ALIAS(Abort)
RFT_MPI_ALIAS(Query_thread)
RFT_MPI_ALIAS(Is_thread_main)
RFT_MPI_ALIAS(Get_version)
RFT_MPI_ALIAS(Get_library_version)
RFT_MPI_ALIAS(Get_processor_name)
RFT_MPI_ALIAS(Wtime)
RFT_MPI_ALIAS(Wtick)
RFT_MPI_ALIAS(Alloc_mem)
RFT_MPI_ALIAS(Free_mem)
RFT_MPI_ALIAS(Pcontrol)
RFT_MPI_ALIAS(Error_class)
RFT_MPI_ALIAS(Error_string)
RFT_MPI_ALIAS(Add_error_class)
RFT_MPI_ALIAS(Add_error_code)
RFT_MPI_ALIAS(Add_error_string)
RFT_MPI_ALIAS(Comm_create_errhandler)
RFT_MPI_ALIAS(Comm_set_errhandler)
RFT_MPI_ALIAS(Comm_get_errhandler)
RFT_MPI_ALIAS(Comm_call_errhandler)
RFT_MPI_ALIAS(Errhandler_free)
RFT_MPI_ALIAS(Errhandler_set)
RFT_MPI_ALIAS(Errhandler_get)
RFT_MPI_ALIAS(Info_create)
RFT_MPI_ALIAS(Info_set)
RFT_MPI_ALIAS(Info_get)
RFT_MPI_ALIAS(Info_get_valuelen)
RFT_MPI_ALIAS(Info_get_string)
RFT_MPI_ALIAS(Info_get_nkeys)
RFT_MPI_ALIAS(Info_get_nthkey)
RFT_MPI_ALIAS(Info_delete)
RFT_MPI_ALIAS(Info_dup)
RFT_MPI_ALIAS(Info_free)
