// The MPI layer's internals: handle tables, the objects behind MPI's integer handles, and how an
// error reaches a communicator's error handler. The layer sits on rft.h alone (docs/mpi.md,
// "How the layer is built"): every operation is one of rft's, with MPI's arguments translated.
#ifndef RFT_ULFM_API_MPI_MPI_INTERNAL_H_
#define RFT_ULFM_API_MPI_MPI_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "ulfm_api/mpi/mpi.h"
#include "ulfm_api/rft.h"

// MPI_X is a weak alias of PMPI_X, so a profiling library's MPI_X can wrap rft's PMPI_X. GCC
// makes an alias only of a function of the same translation unit: each file names its own.
#define RFT_MPI_ALIAS(name) \
  extern "C" __typeof__(PMPI_##name) MPI_##name __attribute__((weak, alias("PMPI_" #name)));
#define RFT_MPIX_ALIAS(name) \
  extern "C" __typeof__(PMPIX_##name) MPIX_##name __attribute__((weak, alias("PMPIX_" #name)));

namespace rft::mpi {

// ---- Handles ----
// The MPICH family's encoding: bits 30-31 the kind of handle (1: predefined, 3: a table entry of
// rft's), bits 26-29 the kind of object. A table entry's handle holds a 6-bit generation and a
// 20-bit index, so a freed handle (or one whose slot was reused) is recognised as stale.
inline constexpr uint32_t kObjectMask = 0x3c000000u;
inline constexpr uint32_t kCommKind = 0x04000000u;
inline constexpr uint32_t kGroupKind = 0x08000000u;
inline constexpr uint32_t kDatatypeKind = 0x0c000000u;
inline constexpr uint32_t kErrhandlerKind = 0x14000000u;
inline constexpr uint32_t kOpKind = 0x18000000u;
inline constexpr uint32_t kInfoKind = 0x1c000000u;
inline constexpr uint32_t kKeyvalKind = 0x24000000u;
inline constexpr uint32_t kRequestKind = 0x2c000000u;
inline constexpr uint32_t kTableBits = 0xc0000000u;

template <typename T, uint32_t kKind>
class HandleTable {
 public:
  static constexpr uint32_t kIndexBits = 20;
  static constexpr uint32_t kIndexMask = (1u << kIndexBits) - 1;
  static constexpr uint32_t kGenerationMask = 0x3fu;

  // A new entry holding `value`; its handle.
  int Add(T value) {
    T* slot;
    const int handle = Emplace(&slot);
    *slot = std::move(value);
    return handle;
  }

  // The entry of `handle`, or nullptr for a handle that is not one of this table's live ones.
  T* Find(int handle) {
    const uint32_t h = static_cast<uint32_t>(handle);
    if ((h & (kTableBits | kObjectMask)) != (kTableBits | kKind)) return nullptr;
    const uint32_t index = h & kIndexMask;
    if (index >= slots_.size()) return nullptr;
    Slot& slot = slots_[index];
    if (!slot.live || slot.generation != ((h >> kIndexBits) & kGenerationMask)) return nullptr;
    return &slot.value;
  }

  // A new entry made in place, its value as Remove left it (a new or a reset one): the fast path
  // fills it without a temporary. *value is valid until the table next grows.
  int Emplace(T** value) {
    uint32_t index;
    if (!free_.empty()) {
      index = free_.back();
      free_.pop_back();
    } else {
      index = static_cast<uint32_t>(slots_.size());
      slots_.emplace_back();
    }
    Slot& slot = slots_[index];
    slot.live = true;
    *value = &slot.value;
    return static_cast<int>(kTableBits | kKind | (slot.generation << kIndexBits) | index);
  }

  void Remove(int handle) {
    const uint32_t index = static_cast<uint32_t>(handle) & kIndexMask;
    Slot& slot = slots_[index];
    slot.live = false;
    // A type with Reset() keeps what it can reuse (a request's scratch capacity).
    if constexpr (requires(T & t) { t.Reset(); }) {
      slot.value.Reset();
    } else {
      slot.value = T{};
    }
    slot.generation = (slot.generation + 1) & kGenerationMask;
    free_.push_back(index);
  }

 private:
  struct Slot {
    T value{};
    bool live = false;
    uint32_t generation = 0;
  };
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
};

// ---- Objects ----
struct CartTopology {
  std::vector<int> dims;
  std::vector<int> periods;
};

struct Comm {
  rft_comm_t rft = RFT_COMM_NULL;
  int rank = 0;
  int size = 0;          // of the caller's group (an intercommunicator's local group)
  int remote_size = -1;  // an intercommunicator's remote group; -1 for an intracommunicator
  int peers = 0;         // the ranks point-to-point names: remote_size, or size
  MPI_Errhandler errhandler = MPI_ERRORS_ARE_FATAL;
  std::string name;
  std::map<int, void*> attributes;  // keyval -> value
  bool has_cart = false;
  CartTopology cart;
  MPI_Info info = MPI_INFO_NULL;
};

struct Group {
  rft_group_t rft = RFT_GROUP_NULL;
};

struct Errhandler {
  MPI_Comm_errhandler_function* function = nullptr;
};

struct Op {
  MPI_User_function* function = nullptr;
  bool commutative = true;
};

struct Info {
  std::vector<std::pair<std::string, std::string>> entries;  // in the order set
};

struct Keyval {
  MPI_Comm_copy_attr_function* copy = nullptr;
  MPI_Comm_delete_attr_function* del = nullptr;
  void* extra_state = nullptr;
};

// A datatype, flattened: the byte ranges one element covers (relative to the buffer's start),
// in the order the type lists them, plus MPI's bounds.
struct Block {
  MPI_Aint offset;
  MPI_Aint length;
};
struct Datatype {
  MPI_Count size = 0;  // bytes of data in one element
  MPI_Aint lb = 0;
  MPI_Aint extent = 0;
  MPI_Aint true_lb = 0;
  MPI_Aint true_extent = 0;
  std::vector<Block> blocks;
  bool contiguous = false;  // one block at offset 0 of `size` bytes, extent == size
  bool committed = false;
  bool predefined = false;
  MPI_Datatype element = MPI_DATATYPE_NULL;  // the predefined type all blocks hold, if one
  int combiner = MPI_COMBINER_NAMED;
  std::string name;
};

// ---- Requests ----
struct Request {
  rft_request_t rft = RFT_REQUEST_NULL;
  MPI_Comm comm = MPI_COMM_NULL;
  bool active = true;  // false: a persistent request not started, or completed
  bool persistent = false;
  // Persistent requests: posts the operation once more as a request of its own (*posted), which
  // MPI_Start then folds into this one.
  std::function<int(MPI_Request* posted)> start;
  // Runs when the rft request completes without error: unpacks, folds a reduction, frees
  // scratch. Returns an MPI error class.
  std::function<int(Request&, const rft_status_t&)> finish;
  std::vector<char> scratch;
  // Completed by rft already (a Test that found it done, while the MPI call could not complete
  // it yet, as Testall when others are pending): rft's outcome, kept.
  bool done = false;
  int done_error = RFT_SUCCESS;
  rft_status_t done_status{};
  bool is_message = false;  // an MPI_Message of Mprobe: `scratch` holds the matched message
  long bsend_charge = 0;    // a buffered send: the bytes it holds of the attached buffer
  // The one request every send that left at once shares (State::sent): complete, never removed.
  bool shared = false;

  // Back to a new request's state, keeping the scratch's capacity for the slot's next use.
  void Reset() {
    rft = RFT_REQUEST_NULL;
    comm = MPI_COMM_NULL;
    active = true;
    persistent = false;
    if (start) start = nullptr;
    if (finish) finish = nullptr;
    scratch.clear();
    done = false;
    done_error = RFT_SUCCESS;
    done_status = rft_status_t{};
    is_message = false;
    bsend_charge = 0;
  }
};

// ---- The layer's state ----
struct State {
  bool initialized = false;
  bool finalized = false;
  int thread_level = MPI_THREAD_SINGLE;
  int fault_tolerant = 1;
  Comm world;
  Comm self;
  HandleTable<Comm, kCommKind> comms;
  HandleTable<Group, kGroupKind> groups;
  HandleTable<Errhandler, kErrhandlerKind> errhandlers;
  HandleTable<Op, kOpKind> ops;
  HandleTable<Info, kInfoKind> infos;
  HandleTable<Keyval, kKeyvalKind> keyvals;
  HandleTable<Datatype, kDatatypeKind> datatypes;
  HandleTable<Request, kRequestKind> requests;
  // A send that left at once (rft_send_now) needs no request of its own: MPI_Isend hands out
  // this one, complete from the start, which completing or freeing leaves in place (MPICH
  // does the same with its built-in completed request). Made by MPI_Init.
  MPI_Request sent = MPI_REQUEST_NULL;
  Info env_info;
  // MPI_Comm_get_parent's handle, made by MPI_Init (MPI_COMM_NULL in a process nobody spawned,
  // and once the program freed it).
  MPI_Comm parent = MPI_COMM_NULL;
  // Requests the program freed before they completed (MPI_Request_free, buffered sends): they
  // complete in the background, checked at every call that waits or tests.
  std::vector<MPI_Request> detached;
  // MPI_Waitall's hand-over to rft_waitall, kept so that a call allocates nothing.
  std::vector<rft_request_t> wait_inner;
  std::vector<rft_request_t> wait_posted;
  std::vector<rft_status_t> wait_statuses;
  std::vector<int> wait_which;
  void* bsend_buffer = nullptr;
  int bsend_size = 0;
  long bsend_in_use = 0;
  int last_used_code = MPIX_ERR_REVOKED;
  std::map<int, std::string> error_strings;  // added classes and codes
  std::map<int, int> error_code_class;       // added codes -> their class
};
// Made before main (mpi_env.cc): the fast path reads it without a guard.
extern State* const g_state;
inline State& state() { return *g_state; }

// Copies `text` into a caller's buffer of `capacity` bytes, NUL-terminated, truncated to fit;
// *length (if not NULL) gets the characters copied.
void CopyString(const std::string& text, char* out, int capacity, int* length);

// ---- Errors ----
// Hands `error_class` with `message` to `comm`'s error handler (MPI_COMM_SELF's for a handle
// that names no communicator... as MPI-4 §9.3 says, COMM_WORLD's before init) and returns what
// the call returns.
int Raise(MPI_Comm comm, int error_class, const std::string& message);
// An rft error class as MPI's; the message is rft's own (rft_last_error_message()).
int FromRft(int rft_error);
// Raise() with rft's error and message, prefixed with the MPI function's name.
int RaiseRft(MPI_Comm comm, const char* function, int rft_error);
// "MPI_ERR_RANK" and so on.
const char* ErrorClassName(int error_class);

// The calls that need MPI_Init first refuse otherwise (MPI_ERR_OTHER, on COMM_WORLD's fatal
// handler: MPI has no handle to report on yet).
int NotInitialized(const char* function);
inline bool Ready() { return state().initialized && !state().finalized; }

// ---- Lookups ----
Comm* FindCommInTable(MPI_Comm handle);  // every communicator but COMM_WORLD's fast case
inline Comm* FindComm(MPI_Comm handle) {
  if (handle == MPI_COMM_WORLD) [[likely]]
    return state().initialized ? &state().world : nullptr;
  return FindCommInTable(handle);
}
Group* FindGroup(MPI_Group handle);
// The rft group behind `handle` (GROUP_EMPTY included); RFT_GROUP_NULL for a bad handle.
rft_group_t RftGroup(MPI_Group handle);
// A new MPI group handle owning `group`.
MPI_Group NewGroup(rft_group_t group);
// A new MPI communicator handle for `comm` (taking its rank, size, and `parent`'s handler).
MPI_Comm NewComm(rft_comm_t comm, const Comm* parent);

// Predefined types with a size in the handle and no gaps (MPICH's builtins 0x4c00SSNN): by
// their low byte NN, the size SS each must carry (0: not one). The fast path's whole type check
// is this table, made at compile time.
struct SimpleBuiltinSizes {
  uint8_t size[256];
};
constexpr SimpleBuiltinSizes MakeSimpleBuiltinSizes() {
  SimpleBuiltinSizes t{};
  for (int h : {MPI_CHAR,
                MPI_SIGNED_CHAR,
                MPI_UNSIGNED_CHAR,
                MPI_BYTE,
                MPI_WCHAR,
                MPI_SHORT,
                MPI_UNSIGNED_SHORT,
                MPI_INT,
                MPI_UNSIGNED,
                MPI_LONG,
                MPI_UNSIGNED_LONG,
                MPI_FLOAT,
                MPI_DOUBLE,
                MPI_LONG_DOUBLE,
                MPI_LONG_LONG_INT,
                MPI_UNSIGNED_LONG_LONG,
                MPI_PACKED,
                MPI_2INT,
                MPI_INT8_T,
                MPI_INT16_T,
                MPI_INT32_T,
                MPI_INT64_T,
                MPI_UINT8_T,
                MPI_UINT16_T,
                MPI_UINT32_T,
                MPI_UINT64_T,
                MPI_C_BOOL,
                MPI_C_FLOAT_COMPLEX,
                MPI_C_DOUBLE_COMPLEX,
                MPI_C_LONG_DOUBLE_COMPLEX,
                MPI_AINT,
                MPI_OFFSET,
                MPI_COUNT,
                MPI_CXX_BOOL,
                MPI_CXX_FLOAT_COMPLEX,
                MPI_CXX_DOUBLE_COMPLEX,
                MPI_CXX_LONG_DOUBLE_COMPLEX}) {
    t.size[h & 0xff] = static_cast<uint8_t>((static_cast<uint32_t>(h) >> 8) & 0xff);
  }
  return t;
}
inline constexpr SimpleBuiltinSizes kSimpleBuiltinSizes = MakeSimpleBuiltinSizes();
inline bool IsSimpleBuiltin(MPI_Datatype type) {
  const uint32_t h = static_cast<uint32_t>(type);
  const uint32_t size = (h >> 8) & 0xff;
  return (h & 0xffff0000u) == 0x4c000000u && size != 0 &&
         kSimpleBuiltinSizes.size[h & 0xff] == size;
}
inline size_t SimpleBuiltinSize(MPI_Datatype type) {
  return (static_cast<uint32_t>(type) >> 8) & 0xff;
}
// Any datatype (predefined, pair or derived); nullptr for a bad handle.
const Datatype* FindDatatype(MPI_Datatype handle);
// Validates a datatype argument for communication: known, committed. MPI_SUCCESS or the class
// to raise, with *message set.
int CheckDatatype(MPI_Datatype handle, const char* function, std::string* message);

// Copies `count` elements of `type` at `buffer` into `out` (contiguously), and back.
void Pack(const Datatype& type, const void* buffer, size_t count, char* out);
void Unpack(const Datatype& type, const char* in, size_t count, void* buffer);

// Reductions: applies `op` to `count` elements (inout[i] = in[i] op inout[i]). MPI_SUCCESS, or
// MPI_ERR_OP when the predefined op does not apply to the type.
int ApplyOp(MPI_Op op, MPI_Datatype type, const void* in, void* inout, int count);
// The predefined op and type as rft's, when rft's collectives reduce them natively.
bool RftReduction(MPI_Op op, MPI_Datatype type, rft_op_t* rft_op, rft_datatype_t* rft_type);
// Checks an op argument: a predefined op or a live user op. MPI_SUCCESS or MPI_ERR_OP.
int CheckOp(MPI_Op op, MPI_Datatype type, std::string* message);
bool OpIsCommutative(MPI_Op op);

// Statuses.
void FillStatus(MPI_Status* status, const rft_status_t& from, int source_override);
void EmptyStatus(MPI_Status* status);  // MPI's empty status (PROC_NULL, null request)
inline MPI_Count StatusBytes(const MPI_Status& s) {
  return static_cast<MPI_Count>(static_cast<uint32_t>(s.count_lo)) |
         (static_cast<MPI_Count>(s.count_hi_and_cancelled >> 1) << 32);
}
inline void SetStatusBytes(MPI_Status* s, MPI_Count bytes) {
  s->count_lo = static_cast<int>(bytes & 0xffffffff);
  s->count_hi_and_cancelled =
      (s->count_hi_and_cancelled & 1) | static_cast<int>((bytes >> 32) << 1);
}

// Requests.
MPI_Request NewRequest(Request request);
// A request complete at once, as one at MPI_PROC_NULL is: source PROC_NULL, tag ANY_TAG.
MPI_Request ProcNullRequest(MPI_Comm comm);
int BadRequest(const char* function);
// Drives `r` towards completion: true when rft has completed it (its outcome kept in `r`), or
// when it has none (inactive, or completed at posting). With `block`, waits.
bool Poll(Request& r, bool block);
// Waits until no buffered send or freed request on `comm` is pending (they end by completing
// or by a failure; MPI_Comm_disconnect).
void WaitDetached(MPI_Comm comm);
// Completes what the program freed (MPI_Request_free, buffered sends) where rft has finished.
void PollDetached();

// The validation shared by every call of a kind.
int CheckRankArg(const Comm& comm, int rank, bool wildcard, const char* function, MPI_Comm handle);
int CheckTagArg(int tag, bool wildcard, const char* function, MPI_Comm handle);
int CheckCountArg(int count, const char* function, MPI_Comm handle);
// A bad communicator (or a call before MPI_Init) and a bad group, raised with their class.
int BadComm(MPI_Comm comm, const char* function);
int BadGroup(MPI_Group group, const char* function);
inline int ToRftSource(int source) { return source == MPI_ANY_SOURCE ? RFT_ANY_SOURCE : source; }
inline int ToRftTag(int tag) { return tag == MPI_ANY_TAG ? RFT_ANY_TAG : tag; }

}  // namespace rft::mpi

#endif  // RFT_ULFM_API_MPI_MPI_INTERNAL_H_
