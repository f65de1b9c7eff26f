// The C API (rft.h), second half: point-to-point, completion, and the element types and
// operators the messages and collectives use.
#include <array>
#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "ulfm_api/binding.h"

using rft::ArgError;
using rft::Status;
using rft::api::ReduceOp;
using rft::api::Session;
using rft::api::binding::Bytes;
using rft::api::binding::BytesOk;
using rft::api::binding::CheckComm;
using rft::api::binding::CommUsable;
using rft::api::binding::FromHandle;
using rft::api::binding::Raise;
using rft::api::binding::session;
using rft::api::binding::Success;
using rft::api::binding::ToHandle;
using rft::api::binding::ToStatus;
using rft::transport::MessageStatus;

namespace rft::api::binding {
namespace {

template <class T>
struct Sum {
  T operator()(T a, T b) const { return a + b; }
};
template <class T>
struct Prod {
  T operator()(T a, T b) const { return a * b; }
};
template <class T>
struct Min {
  T operator()(T a, T b) const { return b < a ? b : a; }
};
template <class T>
struct Max {
  T operator()(T a, T b) const { return a < b ? b : a; }
};
template <class T>
struct LogicalAnd {
  T operator()(T a, T b) const { return static_cast<T>(a && b); }
};
template <class T>
struct LogicalOr {
  T operator()(T a, T b) const { return static_cast<T>(a || b); }
};
template <class T>
struct BitAnd {
  T operator()(T a, T b) const { return static_cast<T>(a & b); }
};
template <class T>
struct BitOr {
  T operator()(T a, T b) const { return static_cast<T>(a | b); }
};
template <class T>
struct BitXor {
  T operator()(T a, T b) const { return static_cast<T>(a ^ b); }
};

template <class T, template <class> class F>
void Apply(const void* in, void* inout, size_t count) {
  const T* a = static_cast<const T*>(in);
  T* b = static_cast<T*>(inout);
  const F<T> f;
  for (size_t i = 0; i < count; ++i) b[i] = f(a[i], b[i]);
}

template <class T>
constexpr std::array<Combine, RFT_OP_COUNT> OpsFor() {
  if constexpr (std::is_floating_point_v<T>) {
    return {Apply<T, Sum>, Apply<T, Prod>, Apply<T, Min>, Apply<T, Max>, nullptr,
            nullptr,       nullptr,        nullptr,       nullptr};
  } else {
    return {Apply<T, Sum>,    Apply<T, Prod>,       Apply<T, Min>,
            Apply<T, Max>,    Apply<T, LogicalAnd>, Apply<T, LogicalOr>,
            Apply<T, BitAnd>, Apply<T, BitOr>,      Apply<T, BitXor>};
  }
}

constexpr const char* kOpNames[RFT_OP_COUNT] = {"RFT_SUM",  "RFT_PROD", "RFT_MIN",
                                                "RFT_MAX",  "RFT_LAND", "RFT_LOR",
                                                "RFT_BAND", "RFT_BOR",  "RFT_BXOR"};

}  // namespace

const std::array<std::array<Combine, RFT_OP_COUNT>, RFT_DATATYPE_COUNT> kReduceCombines = {
    OpsFor<uint8_t>(), OpsFor<char>(),     OpsFor<int8_t>(),  OpsFor<uint8_t>(),
    OpsFor<int16_t>(), OpsFor<uint16_t>(), OpsFor<int32_t>(), OpsFor<uint32_t>(),
    OpsFor<int64_t>(), OpsFor<uint64_t>(), OpsFor<int>(),     OpsFor<long>(),
    OpsFor<float>(),   OpsFor<double>()};

// clang-format off
const size_t kTypeSizes[RFT_DATATYPE_COUNT] = {
    1, sizeof(char), 1, 1, 2, 2, 4, 4, 8, 8, sizeof(int), sizeof(long), sizeof(float),
    sizeof(double)};
// clang-format on

Status Bytes(size_t count, rft_datatype_t type, size_t* bytes) {
  if (static_cast<unsigned>(type) >= RFT_DATATYPE_COUNT) [[unlikely]] {
    return ArgError("datatype " + std::to_string(static_cast<int>(type)) +
                    ": expected one of rft_datatype_t (RFT_BYTE .. RFT_DOUBLE)");
  }
  const size_t size = kTypeSizes[type];
  if (__builtin_mul_overflow(count, size, bytes)) [[unlikely]] {
    return ArgError("count " + std::to_string(count) + " of " + std::to_string(size) +
                    "-byte elements overflows a size_t");
  }
  return Status::Ok();
}

Status FindReduceOp(rft_op_t op, rft_datatype_t type, ReduceOp* out) {
  if (ReduceOpOk(op, type, out)) [[likely]]
    return Status::Ok();
  size_t ignored = 0;
  RFT_RETURN_IF_ERROR(Bytes(0, type, &ignored));
  if (static_cast<unsigned>(op) >= RFT_OP_COUNT) {
    return ArgError("op " + std::to_string(static_cast<int>(op)) +
                    ": expected one of rft_op_t (RFT_SUM .. RFT_BXOR)");
  }
  const Combine combine = kReduceCombines[type][op];
  if (combine == nullptr) {
    return ArgError(std::string("op ") + kOpNames[op] + " does not apply to floating-point types");
  }
  *out = ReduceOp{.combine = combine, .element_size = kTypeSizes[type]};
  return Status::Ok();
}

Status StaleHandle(const char* what, rft_request_t handle) {
  char value[32];
  snprintf(value, sizeof value, "%p", static_cast<void*>(handle));
  return ArgError(std::string(what) + ": request " + value +
                  " is stale: its operation was already completed or freed (a copy of a handle "
                  "that a wait or test cleared?)");
}

void ToStatus(const MessageStatus& in, rft_status_t* out) {
  if (out == nullptr) return;
  out->source = in.source == Group::kUndefined ? RFT_ANY_SOURCE : static_cast<int>(in.source);
  out->tag = in.tag;
  out->error = in.error;
  out->cancelled = in.cancelled ? 1 : 0;
  out->count = in.count;
}

}  // namespace rft::api::binding

namespace {

rft_comm_t CommOf(const rft::api::Request* request) {
  return request == nullptr ? nullptr : static_cast<rft_comm_t>(request->comm->binding());
}

// Why a call's communicator or count is unusable (the fast path found that one is).
[[gnu::noinline]] int ArgumentError(rft_comm_t comm, const char* what, size_t count,
                                    rft_datatype_t type) {
  if (Status s = CheckComm(comm, what); !s.ok()) return Raise(comm, s);
  size_t bytes = 0;
  return Raise(comm, Bytes(count, type, &bytes));
}

Status CheckSession(const char* what) {
  if (session() != nullptr) return Status::Ok();
  return rft::OtherError(std::string(what) + ": rft is not initialised (call rft_init first)");
}

// Per-thread scratch for the multi-request calls (grown, never shrunk: no allocation once warm).
struct Scratch {
  std::vector<rft::api::Request*> requests;
  std::vector<MessageStatus> statuses;
  std::vector<size_t> indices;  // Waitsome/Testsome
};
thread_local Scratch g_scratch;

// The thread's scratch, by reference: reached once per call, since each use of g_scratch in a
// shared library is a __tls_get_addr call, and the compiler repeats it in every loop pass that
// calls out (two per request of a 64-request wait: ~4% of a message's instructions).
[[gnu::noinline]] Scratch& ThreadScratch() { return g_scratch; }

}  // namespace

namespace {

// rft_isend's and rft_issend's body (inline: rft_isend is every non-blocking message's path).
[[gnu::always_inline]] inline int StartSend(const void* buffer, size_t count, rft_datatype_t type,
                                            int dest, int tag, rft_comm_t comm,
                                            rft_request_t* request, rft::transport::SendMode mode,
                                            const char* what) {
  size_t bytes = 0;
  if (!CommUsable(comm) || !BytesOk(count, type, &bytes)) [[unlikely]]
    return ArgumentError(comm, what, count, type);
  if (request == nullptr) [[unlikely]]
    return Raise(comm, ArgError(std::string(what) + ": request is NULL"));
  rft::api::Request* started = nullptr;
  const Status result = session()->Isend(*comm->comm, buffer, bytes, dest, tag, &started, mode);
  *request = ToHandle(started);
  return Raise(comm, result);
}

}  // namespace

extern "C" int rft_isend(const void* buffer, size_t count, rft_datatype_t type, int dest, int tag,
                         rft_comm_t comm, rft_request_t* request) {
  return StartSend(buffer, count, type, dest, tag, comm, request,
                   rft::transport::SendMode::kStandard, "rft_isend");
}

extern "C" int rft_irecv(void* buffer, size_t count, rft_datatype_t type, int source, int tag,
                         rft_comm_t comm, rft_request_t* request) {
  size_t bytes = 0;
  if (!CommUsable(comm) || !BytesOk(count, type, &bytes)) [[unlikely]]
    return ArgumentError(comm, "rft_irecv", count, type);
  if (request == nullptr) [[unlikely]]
    return Raise(comm, ArgError("rft_irecv: request is NULL"));
  rft::api::Request* started = nullptr;
  const Status result = session()->Irecv(*comm->comm, buffer, bytes, source, tag, &started);
  *request = ToHandle(started);
  return Raise(comm, result);
}

extern "C" int rft_send(const void* buffer, size_t count, rft_datatype_t type, int dest, int tag,
                        rft_comm_t comm) {
  size_t bytes = 0;
  if (!CommUsable(comm) || !BytesOk(count, type, &bytes)) [[unlikely]]
    return ArgumentError(comm, "rft_send", count, type);
  return Raise(comm, session()->Send(*comm->comm, buffer, bytes, dest, tag));
}

extern "C" int rft_send_now(const void* buffer, size_t count, rft_datatype_t type, int dest,
                            int tag, rft_comm_t comm, int* sent) {
  size_t bytes = 0;
  if (!CommUsable(comm) || !BytesOk(count, type, &bytes)) [[unlikely]] {
    if (sent != nullptr) *sent = 0;
    return ArgumentError(comm, "rft_send_now", count, type);
  }
  if (sent == nullptr) [[unlikely]]
    return Raise(comm, ArgError("rft_send_now: sent is NULL"));
  *sent = session()->TrySend(*comm->comm, buffer, bytes, dest, tag) ? 1 : 0;
  return RFT_SUCCESS;
}

extern "C" int rft_issend(const void* buffer, size_t count, rft_datatype_t type, int dest, int tag,
                          rft_comm_t comm, rft_request_t* request) {
  return StartSend(buffer, count, type, dest, tag, comm, request,
                   rft::transport::SendMode::kSynchronous, "rft_issend");
}

extern "C" int rft_ssend(const void* buffer, size_t count, rft_datatype_t type, int dest, int tag,
                         rft_comm_t comm) {
  size_t bytes = 0;
  if (!CommUsable(comm) || !BytesOk(count, type, &bytes)) [[unlikely]]
    return ArgumentError(comm, "rft_ssend", count, type);
  return Raise(comm, session()->Ssend(*comm->comm, buffer, bytes, dest, tag));
}

extern "C" int rft_recv(void* buffer, size_t count, rft_datatype_t type, int source, int tag,
                        rft_comm_t comm, rft_status_t* status) {
  size_t bytes = 0;
  if (!CommUsable(comm) || !BytesOk(count, type, &bytes)) [[unlikely]]
    return ArgumentError(comm, "rft_recv", count, type);
  MessageStatus out;
  const Status result = session()->Recv(*comm->comm, buffer, bytes, source, tag, &out);
  ToStatus(out, status);
  return Raise(comm, result);
}

extern "C" int rft_sendrecv(const void* send, size_t send_count, rft_datatype_t send_type, int dest,
                            int send_tag, void* receive, size_t receive_count,
                            rft_datatype_t receive_type, int source, int receive_tag,
                            rft_comm_t comm, rft_status_t* status) {
  if (Status s = CheckComm(comm, "rft_sendrecv"); !s.ok()) return Raise(comm, s);
  size_t send_bytes = 0;
  size_t receive_bytes = 0;
  if (Status s = Bytes(send_count, send_type, &send_bytes); !s.ok()) return Raise(comm, s);
  if (Status s = Bytes(receive_count, receive_type, &receive_bytes); !s.ok()) {
    return Raise(comm, s);
  }
  MessageStatus out;
  const Status result = session()->Sendrecv(*comm->comm, send, send_bytes, dest, send_tag, receive,
                                            receive_bytes, source, receive_tag, &out);
  ToStatus(out, status);
  return Raise(comm, result);
}

extern "C" int rft_iprobe(int source, int tag, rft_comm_t comm, int* flag, rft_status_t* status) {
  if (Status s = CheckComm(comm, "rft_iprobe"); !s.ok()) return Raise(comm, s);
  if (flag == nullptr) return Raise(comm, ArgError("rft_iprobe: flag is NULL"));
  bool found = false;
  MessageStatus out;
  const Status result = session()->Iprobe(*comm->comm, source, tag, &found, &out);
  *flag = found ? 1 : 0;
  if (found) ToStatus(out, status);
  return Raise(comm, result);
}

extern "C" int rft_probe(int source, int tag, rft_comm_t comm, rft_status_t* status) {
  if (Status s = CheckComm(comm, "rft_probe"); !s.ok()) return Raise(comm, s);
  MessageStatus out;
  const Status result = session()->Probe(*comm->comm, source, tag, &out);
  ToStatus(out, status);
  return Raise(comm, result);
}

// ---- Completion ----

extern "C" int rft_wait(rft_request_t* request, rft_status_t* status) {
  if (Status s = CheckSession("rft_wait"); !s.ok()) [[unlikely]]
    return Raise(nullptr, s);
  if (request == nullptr) [[unlikely]]
    return Raise(nullptr, ArgError("rft_wait: request is NULL"));
  rft::api::Request* pending = nullptr;
  if (Status s = FromHandle("rft_wait", *request, &pending); !s.ok()) [[unlikely]]
    return Raise(nullptr, s);
  const rft_comm_t comm = CommOf(pending);
  MessageStatus out;
  const Status result = session()->Wait(&pending, &out);
  *request = ToHandle(pending);
  ToStatus(out, status);
  return Raise(comm, result);
}

extern "C" int rft_test(rft_request_t* request, int* flag, rft_status_t* status) {
  if (Status s = CheckSession("rft_test"); !s.ok()) return Raise(nullptr, s);
  if (request == nullptr || flag == nullptr) {
    return Raise(nullptr, ArgError(std::string("rft_test: ") +
                                   (request == nullptr ? "request" : "flag") + " is NULL"));
  }
  rft::api::Request* pending = nullptr;
  if (Status s = FromHandle("rft_test", *request, &pending); !s.ok()) return Raise(nullptr, s);
  const rft_comm_t comm = CommOf(pending);
  bool done = false;
  MessageStatus out;
  const Status result = session()->Test(&pending, &done, &out);
  *request = ToHandle(pending);
  *flag = done ? 1 : 0;
  if (done || !result.ok()) ToStatus(out, status);
  return Raise(comm, result);
}

namespace {

// Copies the caller's handles into the scratch (and back with Return).
Status Borrow(const char* what, int count, rft_request_t* requests, rft_comm_t* comm) {
  RFT_RETURN_IF_ERROR(CheckSession(what));
  if (count < 0) {
    return ArgError(std::string(what) + ": count " + std::to_string(count) + ": expected >= 0");
  }
  if (count > 0 && requests == nullptr) {
    return ArgError(std::string(what) + ": the request array is NULL");
  }
  Scratch& scratch = ThreadScratch();
  scratch.requests.resize(static_cast<size_t>(count));
  scratch.statuses.resize(static_cast<size_t>(count));
  *comm = nullptr;
  for (int i = 0; i < count; ++i) {
    rft::api::Request*& request = scratch.requests[static_cast<size_t>(i)];
    if (Status s = FromHandle(what, requests[i], &request); !s.ok()) [[unlikely]]
      return Status(s.code(), s.message() + " (at index " + std::to_string(i) + ")");
    if (*comm == nullptr) *comm = CommOf(request);
  }
  return Status::Ok();
}

void Return(int count, rft_request_t* requests, rft_status_t* statuses) {
  const Scratch& scratch = ThreadScratch();
  for (int i = 0; i < count; ++i) {
    requests[i] = ToHandle(scratch.requests[static_cast<size_t>(i)]);
    if (statuses != nullptr) ToStatus(scratch.statuses[i], &statuses[i]);
  }
}

}  // namespace

extern "C" int rft_waitall(int count, rft_request_t* requests, rft_status_t* statuses) {
  rft_comm_t comm = nullptr;
  if (Status s = Borrow("rft_waitall", count, requests, &comm); !s.ok()) return Raise(nullptr, s);
  const Status result = session()->Waitall(g_scratch.requests, g_scratch.statuses);
  Return(count, requests, statuses);
  return Raise(comm, result);
}

extern "C" int rft_testall(int count, rft_request_t* requests, int* flag, rft_status_t* statuses) {
  rft_comm_t comm = nullptr;
  if (Status s = Borrow("rft_testall", count, requests, &comm); !s.ok()) return Raise(nullptr, s);
  if (flag == nullptr) return Raise(comm, ArgError("rft_testall: flag is NULL"));
  bool done = false;
  const Status result = session()->Testall(g_scratch.requests, &done, g_scratch.statuses);
  *flag = done ? 1 : 0;
  Return(count, requests, statuses);
  return Raise(comm, result);
}

extern "C" int rft_waitany(int count, rft_request_t* requests, int* index, rft_status_t* status) {
  rft_comm_t comm = nullptr;
  if (Status s = Borrow("rft_waitany", count, requests, &comm); !s.ok()) return Raise(nullptr, s);
  if (index == nullptr) return Raise(comm, ArgError("rft_waitany: index is NULL"));
  size_t found = Session::kNoIndex;
  MessageStatus out;
  const Status result = session()->Waitany(g_scratch.requests, &found, &out);
  *index = found == Session::kNoIndex ? RFT_UNDEFINED : static_cast<int>(found);
  Return(count, requests, nullptr);
  ToStatus(out, status);
  return Raise(comm, result);
}

extern "C" int rft_testany(int count, rft_request_t* requests, int* index, int* flag,
                           rft_status_t* status) {
  rft_comm_t comm = nullptr;
  if (Status s = Borrow("rft_testany", count, requests, &comm); !s.ok()) return Raise(nullptr, s);
  if (index == nullptr || flag == nullptr) {
    return Raise(comm, ArgError(std::string("rft_testany: ") +
                                (index == nullptr ? "index" : "flag") + " is NULL"));
  }
  size_t found = Session::kNoIndex;
  bool done = false;
  MessageStatus out;
  const Status result = session()->Testany(g_scratch.requests, &found, &done, &out);
  *index = found == Session::kNoIndex ? RFT_UNDEFINED : static_cast<int>(found);
  *flag = done ? 1 : 0;
  Return(count, requests, nullptr);
  if (done || !result.ok()) ToStatus(out, status);
  return Raise(comm, result);
}

namespace {

int Some(const char* what, bool block, int count, rft_request_t* requests, int* outcount,
         int* indices, rft_status_t* statuses) {
  rft_comm_t comm = nullptr;
  if (Status s = Borrow(what, count, requests, &comm); !s.ok()) return Raise(nullptr, s);
  if (outcount == nullptr || (count > 0 && indices == nullptr)) {
    return Raise(comm,
                 ArgError(std::string(what) + ": " +
                          (outcount == nullptr ? "outcount" : "the index array") + " is NULL"));
  }
  const Status result =
      session()->Some(g_scratch.requests, block, &g_scratch.indices, &g_scratch.statuses);
  bool active = false;
  for (rft::api::Request* request : g_scratch.requests) active = active || request != nullptr;
  const size_t completed = g_scratch.indices.size();
  *outcount =
      completed == 0 && !active && result.ok() ? RFT_UNDEFINED : static_cast<int>(completed);
  for (size_t i = 0; i < completed; ++i) {
    indices[i] = static_cast<int>(g_scratch.indices[i]);
    if (statuses != nullptr) ToStatus(g_scratch.statuses[i], &statuses[i]);
  }
  Return(count, requests, nullptr);
  return Raise(comm, result);
}

}  // namespace

extern "C" int rft_waitsome(int count, rft_request_t* requests, int* outcount, int* indices,
                            rft_status_t* statuses) {
  return Some("rft_waitsome", true, count, requests, outcount, indices, statuses);
}

extern "C" int rft_testsome(int count, rft_request_t* requests, int* outcount, int* indices,
                            rft_status_t* statuses) {
  return Some("rft_testsome", false, count, requests, outcount, indices, statuses);
}

extern "C" int rft_get_count(const rft_status_t* status, rft_datatype_t type, int* count) {
  if (status == nullptr || count == nullptr) {
    return Raise(nullptr, ArgError(std::string("rft_get_count: ") +
                                   (status == nullptr ? "status" : "count") + " is NULL"));
  }
  size_t element = 0;
  if (Status s = Bytes(1, type, &element); !s.ok()) return Raise(nullptr, s);
  const size_t bytes = static_cast<size_t>(status->count);
  // MPI: RFT_UNDEFINED when the bytes are not whole elements (or do not fit an int).
  *count = element == 0 || bytes % element != 0 || bytes / element > INT32_MAX
               ? RFT_UNDEFINED
               : static_cast<int>(bytes / element);
  return Success();
}

extern "C" int rft_request_free(rft_request_t* request) {
  if (Status s = CheckSession("rft_request_free"); !s.ok()) return Raise(nullptr, s);
  if (request == nullptr || *request == nullptr) {
    return Raise(nullptr, ArgError(std::string("rft_request_free: ") +
                                   (request == nullptr ? "request is NULL"
                                                       : "the request is RFT_REQUEST_NULL")));
  }
  rft::api::Request* pending = nullptr;
  if (Status s = FromHandle("rft_request_free", *request, &pending); !s.ok()) {
    return Raise(nullptr, s);
  }
  session()->FreeRequest(pending);
  *request = RFT_REQUEST_NULL;
  return Success();
}

extern "C" int rft_cancel(rft_request_t* request) {
  if (Status s = CheckSession("rft_cancel"); !s.ok()) return Raise(nullptr, s);
  if (request == nullptr || *request == nullptr) {
    return Raise(nullptr, ArgError("rft_cancel: the request is NULL"));
  }
  rft::api::Request* pending = nullptr;
  if (Status s = FromHandle("rft_cancel", *request, &pending); !s.ok()) return Raise(nullptr, s);
  return Raise(CommOf(pending), session()->Cancel(pending));
}
