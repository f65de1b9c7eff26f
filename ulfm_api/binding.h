// What the C API's translation units share (not installed): the handle objects behind rft.h's
// opaque types, the process's session, and how an error reaches an error handler.
#ifndef RFT_ULFM_API_BINDING_H_
#define RFT_ULFM_API_BINDING_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "base/status.h"
#include "ulfm_api/collectives.h"
#include "ulfm_api/communicator.h"
#include "ulfm_api/group.h"
#include "ulfm_api/rft.h"
#include "ulfm_api/session.h"

// Tells a live handle from a freed or foreign pointer (best effort: a freed handle is recognised
// until its memory is reused, after kRetainedFreed more frees).
inline constexpr uint32_t kLiveHandle = 0x72667468;  // "rfth"
// A communicator the program freed while requests on it were pending: no call takes it, but
// errors on those requests still go to its handler until the last one completes.
inline constexpr uint32_t kFreeingHandle = 0x72666674;  // "rfft"

struct rft_errhandler_s {
  enum class Kind : uint8_t { kReturn, kFatal, kAbort, kFunction };
  Kind kind = Kind::kReturn;
  rft_comm_errhandler_fn function = nullptr;
  void* user_data = nullptr;
  bool predefined = false;
  int references = 1;  // the creator's, plus one per communicator using it
  uint32_t magic = kLiveHandle;
};

struct rft_comm_s {
  rft::api::Communicator* comm = nullptr;
  std::unique_ptr<rft::api::Communicator> owned;  // null for COMM_WORLD and COMM_SELF
  rft_errhandler_s* errhandler = nullptr;
  uint32_t magic = 0;  // kLiveHandle while usable (the predefined ones: between init and finalize)
  // kFreeingHandle from then on
};

struct rft_group_s {
  rft::api::Group group;
  uint32_t magic = kLiveHandle;
};

namespace rft::api::binding {

// The session between rft_init and rft_finalize; nullptr otherwise.
extern Session* g_session;
inline Session* session() { return g_session; }

// The error's message becomes rft_last_error_message(); the error goes to `comm`'s handler (to
// COMM_SELF's when `comm` is null: an error with no communicator to report on), which may
// abort. Returns the code the caller returns: status.code().
int RaiseError(rft_comm_t comm, const Status& status);
// The same, RFT_SUCCESS for OK (the fast path: nothing else).
inline int Raise(rft_comm_t comm, const Status& status) {
  if (status.ok()) [[likely]]
    return RFT_SUCCESS;
  return RaiseError(comm, status);
}
inline int Success() { return RFT_SUCCESS; }

// A usable communicator handle, or RFT_ERR_ARG / RFT_ERR_OTHER (not initialised) naming `what`.
Status CommError(rft_comm_t comm, const char* what);  // the slow path: why it is not usable
inline bool CommUsable(rft_comm_t comm) {
  return g_session != nullptr && comm != nullptr && comm->magic == kLiveHandle;
}
inline Status CheckComm(rft_comm_t comm, const char* what) {
  if (CommUsable(comm)) [[likely]]
    return Status::Ok();
  return CommError(comm, what);
}
Status CheckGroup(rft_group_t group, const char* what);
// Bytes of `count` elements of `type`: RFT_ERR_ARG for an unknown type or an overflow.
Status Bytes(size_t count, rft_datatype_t type, size_t* bytes);
extern const size_t kTypeSizes[RFT_DATATYPE_COUNT];
// The same without the message: false when Bytes would fail.
inline bool BytesOk(size_t count, rft_datatype_t type, size_t* bytes) {
  return static_cast<unsigned>(type) < RFT_DATATYPE_COUNT &&
         !__builtin_mul_overflow(count, kTypeSizes[type], bytes);
}
// The predefined operator on the type; RFT_ERR_ARG for an unknown op or one the type lacks.
Status FindReduceOp(rft_op_t op, rft_datatype_t type, ReduceOp* out);
// The predefined operators' functions, [type][op]; nullptr where the operator does not apply.
using Combine = void (*)(const void* in, void* inout, size_t count);
extern const std::array<std::array<Combine, RFT_OP_COUNT>, RFT_DATATYPE_COUNT> kReduceCombines;
// The same without the message (every small reduction's path): false when it would fail.
inline bool ReduceOpOk(rft_op_t op, rft_datatype_t type, ReduceOp* out) {
  if (static_cast<unsigned>(type) >= RFT_DATATYPE_COUNT ||
      static_cast<unsigned>(op) >= RFT_OP_COUNT) [[unlikely]] {
    return false;
  }
  const Combine combine = kReduceCombines[type][op];
  if (combine == nullptr) [[unlikely]]
    return false;
  *out = ReduceOp{.combine = combine, .element_size = kTypeSizes[type]};
  return true;
}

void ToStatus(const transport::MessageStatus& in, rft_status_t* out);
// Request handles (rft_request_s is never defined: request_table.h says what a handle holds).
// The handle of a request (nullptr stays nullptr), and the live request a handle names: a stale
// handle (its request completed or freed) is RFT_ERR_ARG naming `what`.
inline rft_request_t ToHandle(Request* request) {
  return reinterpret_cast<rft_request_t>(RequestTable::Handle(request));
}
[[gnu::cold, gnu::noinline]] Status StaleHandle(const char* what, rft_request_t handle);
inline Status FromHandle(const char* what, rft_request_t handle, Request** request) {
  if (handle == nullptr) {
    *request = nullptr;
    return Status::Ok();
  }
  *request = RequestTable::Find(reinterpret_cast<uintptr_t>(handle));
  if (*request == nullptr) [[unlikely]]
    return StaleHandle(what, handle);
  return Status::Ok();
}
// RFT_IDENT / RFT_SIMILAR / RFT_UNEQUAL for a group comparison; `identical` for the first (two
// communicators with identical groups are RFT_CONGRUENT).
inline int ToComparison(Group::Comparison comparison, int identical = RFT_IDENT) {
  switch (comparison) {
    case Group::Comparison::kIdentical:
      return identical;
    case Group::Comparison::kSimilar:
      return RFT_SIMILAR;
    case Group::Comparison::kUnequal:
      break;
  }
  return RFT_UNEQUAL;
}

// rft_comm_t for a new communicator (owned by the handle).
rft_comm_t NewComm(std::unique_ptr<Communicator> comm, rft_errhandler_s* errhandler);
rft_group_t NewGroup(Group group);
// Frees a group handle (kept a while, marked freed, so a use after free is an argument error).
void RetireGroup(rft_group_t group);

}  // namespace rft::api::binding

#endif  // RFT_ULFM_API_BINDING_H_
