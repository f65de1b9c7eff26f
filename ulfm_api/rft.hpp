// rft.hpp: a thin C++17 layer over rft.h: RAII handles, element types from C++ types, and
// errors as exceptions (rft::Error, with the error class and rft's message).
//
//   rft::Environment env(RFT_FT_NOTIFY);         // rft_init .. rft_finalize
//   rft::Comm world = rft::Comm::World();
//   std::vector<double> v(8, world.Rank());
//   world.Allreduce(v.data(), v.size(), RFT_SUM);  // throws rft::Error(RFT_ERR_PROC_FAILED...)
//
// Environment sets RFT_ERRORS_RETURN on COMM_WORLD and COMM_SELF (new communicators inherit it),
// so every error reaches the C++ caller as an exception instead of aborting.
#ifndef RFT_HPP_
#define RFT_HPP_

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "ulfm_api/rft.h"

namespace rft {

class Error : public std::runtime_error {
 public:
  Error(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const noexcept { return code_; }

 private:
  int code_;
};

// Throws rft::Error for anything but RFT_SUCCESS.
inline void Check(int rc) {
  if (rc != RFT_SUCCESS) {
    const std::string message = rft_last_error_message();
    throw Error(rc, message.empty() ? std::string(rft_error_name(rc)) : message);
  }
}

// The element type of T (arithmetic types and std::byte).
template <class T>
struct TypeOf;
#define RFT_HPP_TYPE(T, V)                     \
  template <>                                  \
  struct TypeOf<T> {                           \
    static constexpr rft_datatype_t value = V; \
  }
RFT_HPP_TYPE(std::byte, RFT_BYTE);
RFT_HPP_TYPE(char, RFT_CHAR);
RFT_HPP_TYPE(signed char, RFT_INT8);
RFT_HPP_TYPE(unsigned char, RFT_UINT8);
RFT_HPP_TYPE(short, RFT_INT16);
RFT_HPP_TYPE(unsigned short, RFT_UINT16);
RFT_HPP_TYPE(int, RFT_INT);
RFT_HPP_TYPE(unsigned, RFT_UINT32);
RFT_HPP_TYPE(long, RFT_LONG);
RFT_HPP_TYPE(unsigned long, sizeof(unsigned long) == 8 ? RFT_UINT64 : RFT_UINT32);
RFT_HPP_TYPE(long long, RFT_INT64);
RFT_HPP_TYPE(unsigned long long, RFT_UINT64);
RFT_HPP_TYPE(float, RFT_FLOAT);
RFT_HPP_TYPE(double, RFT_DOUBLE);
#undef RFT_HPP_TYPE

class Environment {
 public:
  explicit Environment(int ft_level = RFT_FT_NOTIFY) {
    Check(rft_init(nullptr, nullptr, ft_level, &provided_));
    Check(rft_comm_set_errhandler(RFT_COMM_WORLD, RFT_ERRORS_RETURN));
    Check(rft_comm_set_errhandler(RFT_COMM_SELF, RFT_ERRORS_RETURN));
  }
  ~Environment() { rft_finalize(); }
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
  int provided() const { return provided_; }

 private:
  int provided_ = 0;
};

class Group {
 public:
  Group() = default;
  explicit Group(rft_group_t handle) : handle_(handle) {}
  ~Group() {
    if (handle_ != RFT_GROUP_NULL) rft_group_free(&handle_);
  }
  Group(Group&& other) noexcept : handle_(std::exchange(other.handle_, RFT_GROUP_NULL)) {}
  Group& operator=(Group&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  int Size() const {
    int size = 0;
    Check(rft_group_size(handle_, &size));
    return size;
  }
  // The ranks in `other` of this group's members (RFT_UNDEFINED for those not in it).
  std::vector<int> TranslateAll(const Group& other) const {
    std::vector<int> from(static_cast<size_t>(Size())), to(from.size());
    for (size_t i = 0; i < from.size(); ++i) from[i] = static_cast<int>(i);
    Check(rft_group_translate_ranks(handle_, static_cast<int>(from.size()), from.data(),
                                    other.handle_, to.data()));
    return to;
  }
  rft_group_t get() const { return handle_; }

 private:
  rft_group_t handle_ = RFT_GROUP_NULL;
};

// Move-only: a request is completed once, so two objects must never hold one handle (a wait on
// the second would name a finished operation: rft refuses it as stale, RFT_ERR_ARG).
class Request {
 public:
  Request() = default;
  explicit Request(rft_request_t handle) : handle_(handle) {}
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  Request(Request&& other) noexcept : handle_(std::exchange(other.handle_, RFT_REQUEST_NULL)) {}
  Request& operator=(Request&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  // Throws on error (RFT_ERR_PROC_FAILED_PENDING leaves the request active: wait again).
  rft_status_t Wait() {
    rft_status_t status{};
    Check(rft_wait(&handle_, &status));
    return status;
  }
  bool Test(rft_status_t* status = nullptr) {
    int flag = 0;
    Check(rft_test(&handle_, &flag, status));
    return flag != 0;
  }
  void Cancel() { Check(rft_cancel(&handle_)); }
  // rft_request_free: the operation goes on; this object becomes done().
  void Free() { Check(rft_request_free(&handle_)); }
  bool done() const { return handle_ == RFT_REQUEST_NULL; }
  rft_request_t* get() { return &handle_; }

 private:
  rft_request_t handle_ = RFT_REQUEST_NULL;
};

class Comm {
 public:
  static Comm World() { return Comm(RFT_COMM_WORLD, false); }
  static Comm Self() { return Comm(RFT_COMM_SELF, false); }

  Comm() = default;
  ~Comm() { Reset(); }
  Comm(Comm&& other) noexcept
      : handle_(std::exchange(other.handle_, RFT_COMM_NULL)), owned_(other.owned_) {}
  Comm& operator=(Comm&& other) noexcept {
    std::swap(handle_, other.handle_);
    std::swap(owned_, other.owned_);
    return *this;
  }
  // Frees an owned communicator now (errors ignored: the destructor's path).
  void Reset() {
    if (owned_ && handle_ != RFT_COMM_NULL) rft_comm_free(&handle_);
    handle_ = RFT_COMM_NULL;
  }

  // MPI's Comm_disconnect (rft_comm_disconnect): collective; the communicator is gone afterwards
  // whatever the outcome, which is thrown when it is an error (the same at every member).
  void Disconnect() {
    const int rc = rft_comm_disconnect(&handle_);
    handle_ = RFT_COMM_NULL;
    Check(rc);
  }

  bool null() const { return handle_ == RFT_COMM_NULL; }
  int Rank() const {
    int rank = -1;
    Check(rft_comm_rank(handle_, &rank));
    return rank;
  }
  int Size() const {
    int size = 0;
    Check(rft_comm_size(handle_, &size));
    return size;
  }
  Comm Dup() const {
    rft_comm_t out = RFT_COMM_NULL;
    Check(rft_comm_dup(handle_, &out));
    return Comm(out, true);
  }
  // A null Comm for RFT_UNDEFINED.
  Comm Split(int color, int key) const {
    rft_comm_t out = RFT_COMM_NULL;
    Check(rft_comm_split(handle_, color, key, &out));
    return Comm(out, true);
  }
  // Collective over `comm`; a null Comm at the processes outside `group`.
  Comm Create(const Group& group) const {
    rft_comm_t out = RFT_COMM_NULL;
    Check(rft_comm_create(handle_, group.get(), &out));
    return Comm(out, true);
  }
  // Collective over `group`'s members only (rft_comm_create_group).
  Comm CreateGroup(const Group& group, int tag) const {
    rft_comm_t out = RFT_COMM_NULL;
    Check(rft_comm_create_group(handle_, group.get(), tag, &out));
    return Comm(out, true);
  }
  Group GetGroup() const {
    rft_group_t group = RFT_GROUP_NULL;
    Check(rft_comm_group(handle_, &group));
    return Group(group);
  }

  // Intercommunicators (rft.h): collective over this (the local group's) communicator.
  Comm IntercommCreate(int local_leader, const Comm& peer, int remote_leader, int tag) const {
    rft_comm_t out = RFT_COMM_NULL;
    Check(rft_intercomm_create(handle_, local_leader, peer.handle_, remote_leader, tag, &out));
    return Comm(out, true);
  }
  Comm IntercommMerge(bool high) const {
    rft_comm_t out = RFT_COMM_NULL;
    Check(rft_intercomm_merge(handle_, high ? 1 : 0, &out));
    return Comm(out, true);
  }
  bool IsInter() const {
    int flag = 0;
    Check(rft_comm_test_inter(handle_, &flag));
    return flag != 0;
  }
  int RemoteSize() const {
    int size = 0;
    Check(rft_comm_remote_size(handle_, &size));
    return size;
  }
  Group RemoteGroup() const {
    rft_group_t group = RFT_GROUP_NULL;
    Check(rft_comm_remote_group(handle_, &group));
    return Group(group);
  }

  template <class T>
  void Send(const T* data, size_t count, int dest, int tag) const {
    Check(rft_send(data, count, TypeOf<T>::value, dest, tag, handle_));
  }
  template <class T>
  rft_status_t Recv(T* data, size_t count, int source, int tag) const {
    rft_status_t status{};
    Check(rft_recv(data, count, TypeOf<T>::value, source, tag, handle_, &status));
    return status;
  }
  template <class T>
  Request Isend(const T* data, size_t count, int dest, int tag) const {
    rft_request_t request = RFT_REQUEST_NULL;
    Check(rft_isend(data, count, TypeOf<T>::value, dest, tag, handle_, &request));
    return Request(request);
  }
  // Synchronous: complete once the receiver matched the message (rft_ssend, rft_issend).
  template <class T>
  void Ssend(const T* data, size_t count, int dest, int tag) const {
    Check(rft_ssend(data, count, TypeOf<T>::value, dest, tag, handle_));
  }
  template <class T>
  Request Issend(const T* data, size_t count, int dest, int tag) const {
    rft_request_t request = RFT_REQUEST_NULL;
    Check(rft_issend(data, count, TypeOf<T>::value, dest, tag, handle_, &request));
    return Request(request);
  }
  template <class T>
  Request Irecv(T* data, size_t count, int source, int tag) const {
    rft_request_t request = RFT_REQUEST_NULL;
    Check(rft_irecv(data, count, TypeOf<T>::value, source, tag, handle_, &request));
    return Request(request);
  }

  void Barrier() const { Check(rft_barrier(handle_)); }
  template <class T>
  void Bcast(T* data, size_t count, int root) const {
    Check(rft_bcast(data, count, TypeOf<T>::value, root, handle_));
  }
  // In place: `data` holds this member's values before, the result after.
  template <class T>
  void Allreduce(T* data, size_t count, rft_op_t op) const {
    Check(rft_allreduce(RFT_IN_PLACE, data, count, TypeOf<T>::value, op, handle_));
  }
  // `result` is used at `root` only.
  template <class T>
  void Reduce(const T* data, T* result, size_t count, rft_op_t op, int root) const {
    Check(rft_reduce(data, result, count, TypeOf<T>::value, op, root, handle_));
  }
  // `all` holds Size() blocks of `count`.
  template <class T>
  void Allgather(const T* mine, size_t count, T* all) const {
    Check(rft_allgather(mine, count, TypeOf<T>::value, all, handle_));
  }
  // `all` (at the root) holds Size() blocks of `count`.
  template <class T>
  void Gather(const T* mine, size_t count, T* all, int root) const {
    Check(rft_gather(mine, count, TypeOf<T>::value, all, root, handle_));
  }
  template <class T>
  void Scatter(const T* all, T* mine, size_t count, int root) const {
    Check(rft_scatter(all, mine, count, TypeOf<T>::value, root, handle_));
  }
  template <class T>
  void Alltoall(const T* send, size_t count, T* receive) const {
    Check(rft_alltoall(send, count, TypeOf<T>::value, receive, handle_));
  }
  // Non-blocking forms: the request completes with the collective's outcome (Wait throws it).
  Request Ibarrier() const {
    rft_request_t request = RFT_REQUEST_NULL;
    Check(rft_ibarrier(handle_, &request));
    return Request(request);
  }
  template <class T>
  Request Ibcast(T* data, size_t count, int root) const {
    rft_request_t request = RFT_REQUEST_NULL;
    Check(rft_ibcast(data, count, TypeOf<T>::value, root, handle_, &request));
    return Request(request);
  }
  template <class T>
  Request Iallreduce(T* data, size_t count, rft_op_t op) const {
    rft_request_t request = RFT_REQUEST_NULL;
    Check(rft_iallreduce(RFT_IN_PLACE, data, count, TypeOf<T>::value, op, handle_, &request));
    return Request(request);
  }

  // ULFM.
  void Revoke() const { Check(rft_comm_revoke(handle_)); }
  bool IsRevoked() const {
    int flag = 0;
    Check(rft_comm_is_revoked(handle_, &flag));
    return flag != 0;
  }
  Group GetFailed() const {
    rft_group_t group = RFT_GROUP_NULL;
    Check(rft_comm_get_failed(handle_, &group));
    return Group(group);
  }
  int AckFailed(int count) const {
    int acked = 0;
    Check(rft_comm_ack_failed(handle_, count, &acked));
    return acked;
  }
  // `flag` becomes the agreed AND; on RFT_ERR_PROC_FAILED it is set before the throw.
  void Agree(int& flag) const { Check(rft_comm_agree(handle_, &flag)); }
  Request Iagree(int& flag) const {
    rft_request_t request = RFT_REQUEST_NULL;
    Check(rft_comm_iagree(handle_, &flag, &request));
    return Request(request);
  }
  // `out` becomes the new communicator when the request completes (keep it alive until then).
  Request Ishrink(Comm& out) const {
    out.Reset();
    rft_request_t request = RFT_REQUEST_NULL;
    Check(rft_comm_ishrink(handle_, &out.handle_, &request));
    out.owned_ = true;
    return Request(request);
  }
  // The guarded agreement (rft_comm_agree_deadline): `cut_off` gets the members cut off or
  // found dead, also when it throws RFT_ERR_PROC_FAILED.
  void AgreeDeadline(int& flag, double seconds, Group& cut_off) const {
    rft_group_t group = RFT_GROUP_NULL;
    const int rc = rft_comm_agree_deadline(handle_, &flag, seconds, &group);
    cut_off = Group(group);
    Check(rc);
  }
  Comm Shrink() const {
    rft_comm_t out = RFT_COMM_NULL;
    Check(rft_comm_shrink(handle_, &out));
    return Comm(out, true);
  }
  // Recovery by replacement (rft_comm_replace): `argv` is the program and its arguments.
  Comm Replace(const std::vector<std::string>& argv) const {
    std::vector<const char*> args;
    args.reserve(argv.size() + 1);
    for (const std::string& arg : argv) args.push_back(arg.c_str());
    args.push_back(nullptr);
    rft_comm_t out = RFT_COMM_NULL;
    Check(rft_comm_replace(handle_, args.data(), &out));
    return Comm(out, true);
  }
  // MPI's Comm_spawn (rft_comm_spawn): the root starts `maxprocs` processes of `command` with
  // `args`; the result is the intercommunicator to them. At the root, `errcodes` (if given) gets
  // one code per process started, filled before a failure is thrown.
  Comm Spawn(const std::string& command, const std::vector<std::string>& args, int maxprocs,
             int root, std::vector<int>* errcodes = nullptr) const {
    std::vector<const char*> argv;
    argv.reserve(args.size() + 1);
    for (const std::string& arg : args) argv.push_back(arg.c_str());
    argv.push_back(nullptr);
    // Elsewhere maxprocs means nothing, so nothing is sized by it.
    std::vector<int> codes(Rank() == root && maxprocs > 0 ? static_cast<size_t>(maxprocs) : 0);
    rft_comm_t out = RFT_COMM_NULL;
    const int rc = rft_comm_spawn(handle_, command.c_str(), argv.data(), maxprocs, root, &out,
                                  codes.empty() ? RFT_ERRCODES_IGNORE : codes.data());
    if (errcodes != nullptr) *errcodes = std::move(codes);
    Check(rc);
    return Comm(out, true);
  }
  // In a replacement: the communicator it took its place in; in a spawned process: the
  // intercommunicator to its parents (a null Comm elsewhere). The object
  // owns it and frees it when destroyed: take it once (a later call, after that free, gives a
  // null Comm).
  static Comm GetParent() {
    rft_comm_t parent = RFT_COMM_NULL;
    Check(rft_comm_get_parent(&parent));
    return Comm(parent, parent != RFT_COMM_NULL);
  }

  rft_comm_t get() const { return handle_; }

 private:
  Comm(rft_comm_t handle, bool owned) : handle_(handle), owned_(owned) {}
  rft_comm_t handle_ = RFT_COMM_NULL;
  bool owned_ = false;
};

}  // namespace rft

#endif  // RFT_HPP_
