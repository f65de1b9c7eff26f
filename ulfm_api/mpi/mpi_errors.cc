// Errors: MPI's classes for rft's, the error handlers (MPI-4's scopes), error strings and the
// classes and codes a program adds.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "ulfm_api/mpi/mpi_internal.h"

namespace rft::mpi {
namespace {

thread_local std::string g_last_message;

}  // namespace

// Copies `text` into a caller's buffer of `capacity` bytes (with the terminating NUL).
void CopyString(const std::string& text, char* out, int capacity, int* length) {
  const size_t n = std::min(text.size(), static_cast<size_t>(capacity - 1));
  memcpy(out, text.data(), n);
  out[n] = '\0';
  if (length != nullptr) *length = static_cast<int>(n);
}

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
    case RFT_ERR_PROC_ABORTED:
      return MPI_ERR_PROC_ABORTED;
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
    // MPI's handlers get the communicator and the code, not the message: the handler may call
    // MPI itself (the usual ULFM handler revokes), and nothing here is used after it returns.
    int code = error_class;
    user->function(&reported, &code);
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
  CopyString(text, string, MPI_MAX_ERROR_STRING, resultlen);
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
  // MPI: a handler is freed once no communicator uses it. Communicators keep the handle, so
  // rft keeps the (small) table entry for good: a communicator's handler goes on working.
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

}  // extern "C"

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
