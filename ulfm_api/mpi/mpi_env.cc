// Start and end, and the environment.
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

// Never destroyed: the order of destructors at exit would be a hazard for a late MPI call.
State* const g_state = new State();

namespace {
// MPI-4's mpi_initial_errhandler. rft_init gave COMM_WORLD the handler RFT_INITIAL_ERRHANDLER
// names (and refused a bad name): the MPI layer takes the same one from there rather than parse
// the setting a second time.
struct InitialErrhandler {
  MPI_Errhandler handler;
  const char* name;  // as MPI_INFO_ENV gives it
};
InitialErrhandler InitialFromRft() {
  rft_errhandler_t reference = RFT_ERRORS_ARE_FATAL;
  rft_comm_get_errhandler(RFT_COMM_WORLD, &reference);
  const rft_errhandler_t rft_handler = reference;
  rft_errhandler_free(&reference);
  if (rft_handler == RFT_ERRORS_RETURN) return {MPI_ERRORS_RETURN, "mpi_errors_return"};
  if (rft_handler == RFT_ERRORS_ABORT) return {MPI_ERRORS_ABORT, "mpi_errors_abort"};
  return {MPI_ERRORS_ARE_FATAL, "mpi_errors_are_fatal"};
}

void SetUpEnvInfo(int argc, char** argv, const char* initial_errhandler) {
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
  info.entries.emplace_back("mpi_initial_errhandler", initial_errhandler);
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
  Request sent;
  sent.done = true;
  sent.shared = true;
  s.sent = NewRequest(std::move(sent));
  const InitialErrhandler initial = InitialFromRft();
  // The MPI layer calls the MPI error handlers itself: rft's come back.
  rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN);
  rft_comm_set_errhandler(RFT_COMM_SELF, RFT_ERRORS_RETURN);
  s.world.rft = RFT_COMM_WORLD;
  rft_comm_rank(RFT_COMM_WORLD, &s.world.rank);
  rft_comm_size(RFT_COMM_WORLD, &s.world.size);
  s.world.peers = s.world.size;
  s.world.errhandler = initial.handler;
  s.world.name = "MPI_COMM_WORLD";
  s.self.rft = RFT_COMM_SELF;
  s.self.rank = 0;
  s.self.size = 1;
  s.self.peers = 1;
  s.self.errhandler = initial.handler;
  s.self.name = "MPI_COMM_SELF";
  // A spawned process's parent intercommunicator is made here, as MPI-4.1 §11.8.2 says, with the
  // initial error handler and the default name MPI gives it ("Naming Objects"); it is what
  // MPI_Comm_get_parent hands out.
  rft_comm_t parent = RFT_COMM_NULL;
  rft_comm_get_parent(&parent);
  if (parent != RFT_COMM_NULL) {
    s.parent = NewComm(parent, &s.self);
    FindComm(s.parent)->name = "MPI_COMM_PARENT";
  }
  // rft is called from one thread (rft.h): FUNNELED is what it honestly provides.
  s.thread_level = required < MPI_THREAD_FUNNELED ? required : MPI_THREAD_FUNNELED;
  if (provided != nullptr) *provided = s.thread_level;
  SetUpEnvInfo(argc != nullptr ? *argc : 0, argv != nullptr ? *argv : nullptr, initial.name);
  return MPI_SUCCESS;
}

}  // namespace

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
  CopyString("rft MPI (MPI 4.0 with ULFM; the MPICH family's ABI)", version,
             MPI_MAX_LIBRARY_VERSION_STRING, resultlen);
  return MPI_SUCCESS;
}

int PMPI_Get_processor_name(char* name, int* resultlen) {
  char host[MPI_MAX_PROCESSOR_NAME] = {0};
  if (gethostname(host, sizeof(host) - 1) != 0) strcpy(host, "localhost");
  CopyString(host, name, MPI_MAX_PROCESSOR_NAME, resultlen);
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
