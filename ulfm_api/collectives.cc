#include "ulfm_api/collectives.h"

#include <array>
#include <bit>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "ulfm_api/session.h"

namespace rft::api {

namespace {

using transport::MessageStatus;

// One tag per algorithm in the collective context. Members run collectives in the same order and
// the data plane keeps each sender's messages in order, so consecutive calls never mix.
enum CollectiveTag : int32_t {
  kBarrierTag = 1,
  kBcastTag = 2,
  kAllreduceTag = 3,
  kReduceTag = 4,
  kAllgatherTag = 5,
};

Status CheckCanRun(Communicator& comm, const char* what) {
  if (comm.IsRevoked()) [[unlikely]]
    return RevokedError(std::string(what) + " on " + comm.name() + ": the communicator is revoked");
  if (comm.HasFailedMember()) [[unlikely]] {
    return ProcFailedError(std::string(what) + " on " + comm.name() + ": member (job rank) " +
                           std::to_string(comm.FailedMembers().front()) + " has failed");
  }
  return Status::Ok();
}

// Progress rounds a step gives the transport, once a member is known failed, before it gives up.
constexpr int kDrainRounds = 4;
// How long a step given up lets transfers already under way finish before it leaves them to the
// communicator (a large send to a member that left the operation would never finish).
constexpr auto kAbandonGrace = std::chrono::milliseconds(100);

// The internal operations of one step of a collective: at most a send and a receive.
class Step {
 public:
  Step(Session& session, Communicator& comm, const char* what)
      : session_(session), comm_(comm), what_(what) {}
  ~Step() { Abandon(); }

  Status Send(const void* buffer, size_t bytes, Rank member, int32_t tag) {
    return comm_.plane().Isend(buffer, bytes, comm_.JobRank(member), tag,
                               comm_.collective_context(), &requests_[count_++]);
  }
  Status Receive(void* buffer, size_t bytes, Rank member, int32_t tag) {
    return comm_.plane().Irecv(buffer, bytes, comm_.JobRank(member), tag,
                               comm_.collective_context(), &requests_[count_++]);
  }
  // Until both are done, or a member fails (then what is left is abandoned to the
  // communicator: RFT_ERR_PROC_FAILED).
  Status Wait() {
    transport::DataPlane& plane = comm_.plane();
    const std::span<transport::Request*> requests(requests_.data(), count_);
    const std::span<MessageStatus> statuses(statuses_.data(), count_);
    for (;;) {
      bool done = false;
      Status status = plane.Testall(requests, &done, statuses);
      if (!done && comm_.HasFailedMember()) {
        // What the failed member (or anyone) sent before may still be in the transport's
        // queues: taken first, so a step that can finish does.
        for (int i = 0; i < kDrainRounds && !done; ++i) {
          plane.Progress();
          status = plane.Testall(requests, &done, statuses);
        }
        if (!done) return CheckCanRun(comm_, what_);
      }
      if (done) {
        count_ = 0;
        if (status.ok()) return status;
        for (const MessageStatus& s : statuses) {
          if (s.error != RFT_SUCCESS) return Error(s);
        }
        return status;
      }
      session_.IdleIfBlocking();  // Testall progressed
    }
  }

 private:
  Status Error(const MessageStatus& s) const {
    const std::string where = std::string(what_) + " on " + comm_.name() + ": ";
    switch (s.error) {
      case RFT_ERR_PROC_FAILED:
        return ProcFailedError(where + "member " + std::to_string(comm_.MemberRank(s.source)) +
                               " has failed");
      case RFT_ERR_REVOKED:
        return RevokedError(where + "the communicator was revoked");
      default:
        return Status(s.error, where + "an internal message failed: " + rft_error_string(s.error));
    }
  }
  // A step given up: receives are cancelled, and transfers under way get a moment to finish;
  // whatever the transport still holds then stays with the communicator until it lets go.
  void Abandon() {
    if (count_ == 0) return;
    transport::DataPlane& plane = comm_.plane();
    for (size_t i = 0; i < count_; ++i) {
      if (requests_[i] != nullptr) (void)plane.Cancel(requests_[i]);
    }
    const Deadline deadline = Deadline::After(kAbandonGrace);
    for (;;) {
      bool pending = false;
      for (size_t i = 0; i < count_; ++i) {
        bool done = false;
        (void)plane.Test(&requests_[i], &done, nullptr);
        pending = pending || !done;
      }
      if (!pending || deadline.expired()) break;
    }
    for (size_t i = 0; i < count_; ++i) {
      if (requests_[i] != nullptr) comm_.Abandon(requests_[i]);
    }
    count_ = 0;
  }

  Session& session_;
  Communicator& comm_;
  const char* what_;
  std::array<transport::Request*, 2> requests_{};
  std::array<MessageStatus, 2> statuses_{};
  size_t count_ = 0;
};

// A collective's temporary buffer: on the stack up to kInline bytes (the latency-bound sizes
// allocate nothing), else on the heap.
class Scratch {
 public:
  Scratch(Communicator& comm, size_t bytes) : comm_(comm) {
    if (bytes > kInline) heap_.reset(new std::byte[bytes]);
  }
  // A heap buffer the transport may still use (the collective gave up with a transfer under
  // way) goes to the communicator. Small ones travel eagerly: never in flight after a step.
  ~Scratch() {
    if (heap_ != nullptr && comm_.HasAbandoned()) comm_.KeepAlive(std::move(heap_));
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  std::byte* data() { return heap_ != nullptr ? heap_.get() : inline_; }

 private:
  static constexpr size_t kInline = 1024;
  Communicator& comm_;
  alignas(16) std::byte inline_[kInline];
  std::unique_ptr<std::byte[]> heap_;
};

Rank Relative(Rank rank, Rank root, uint32_t size) { return (rank + size - root) % size; }
Rank Absolute(Rank relative, Rank root, uint32_t size) { return (relative + root) % size; }

}  // namespace

Status Barrier(Session& session, Communicator& comm) {
  RFT_RETURN_IF_ERROR(CheckCanRun(comm, "barrier"));
  const uint32_t n = comm.size();
  const Rank me = comm.rank();
  for (uint32_t distance = 1; distance < n; distance <<= 1) {
    Step step(session, comm, "barrier");
    RFT_RETURN_IF_ERROR(step.Receive(nullptr, 0, (me + n - distance) % n, kBarrierTag));
    RFT_RETURN_IF_ERROR(step.Send(nullptr, 0, (me + distance) % n, kBarrierTag));
    RFT_RETURN_IF_ERROR(step.Wait());
  }
  return Status::Ok();
}

Status Bcast(Session& session, Communicator& comm, void* buffer, size_t bytes, int root) {
  RFT_RETURN_IF_ERROR(comm.CheckPeer("bcast root", root));
  RFT_RETURN_IF_ERROR(CheckCanRun(comm, "bcast"));
  const uint32_t n = comm.size();
  const Rank relative = Relative(comm.rank(), static_cast<Rank>(root), n);
  uint32_t mask = 1;
  while (mask < n) {
    if (relative & mask) {
      Step step(session, comm, "bcast");
      RFT_RETURN_IF_ERROR(
          step.Receive(buffer, bytes, Absolute(relative - mask, root, n), kBcastTag));
      RFT_RETURN_IF_ERROR(step.Wait());
      break;
    }
    mask <<= 1;
  }
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (relative + mask < n) {
      Step step(session, comm, "bcast");
      RFT_RETURN_IF_ERROR(step.Send(buffer, bytes, Absolute(relative + mask, root, n), kBcastTag));
      RFT_RETURN_IF_ERROR(step.Wait());
    }
  }
  return Status::Ok();
}

Status Allreduce(Session& session, Communicator& comm, const void* send, void* receive,
                 size_t count, const ReduceOp& op) {
  RFT_RETURN_IF_ERROR(CheckCanRun(comm, "allreduce"));
  const size_t bytes = count * op.element_size;
  if (send != receive && bytes > 0) std::memcpy(receive, send, bytes);
  const uint32_t n = comm.size();
  if (n == 1) return Status::Ok();
  const Rank me = comm.rank();
  Scratch other(comm, bytes);
  // Fold the ranks beyond the largest power of two: of ranks 2i and 2i+1 (i < extra), the odd
  // one takes part for both, holding (2i) (op) (2i+1).
  const uint32_t power = std::bit_floor(n);
  const uint32_t extra = n - power;
  Rank virtual_rank;
  if (me < 2 * extra) {
    Step step(session, comm, "allreduce");
    if (me % 2 == 0) {
      RFT_RETURN_IF_ERROR(step.Send(receive, bytes, me + 1, kAllreduceTag));
      RFT_RETURN_IF_ERROR(step.Wait());
      RFT_RETURN_IF_ERROR(step.Receive(receive, bytes, me + 1, kAllreduceTag));
      return step.Wait();  // the result, from the partner
    }
    RFT_RETURN_IF_ERROR(step.Receive(other.data(), bytes, me - 1, kAllreduceTag));
    RFT_RETURN_IF_ERROR(step.Wait());
    op.combine(other.data(), receive, count);  // lower rank first
    virtual_rank = me / 2;
  } else {
    virtual_rank = me - extra;
  }
  auto real = [extra](Rank v) { return v < extra ? 2 * v + 1 : v + extra; };
  for (uint32_t mask = 1; mask < power; mask <<= 1) {
    const Rank partner = real(virtual_rank ^ mask);
    Step step(session, comm, "allreduce");
    RFT_RETURN_IF_ERROR(step.Receive(other.data(), bytes, partner, kAllreduceTag));
    RFT_RETURN_IF_ERROR(step.Send(receive, bytes, partner, kAllreduceTag));
    RFT_RETURN_IF_ERROR(step.Wait());
    if (partner < me) {
      op.combine(other.data(), receive, count);
    } else {
      op.combine(receive, other.data(), count);
      std::memcpy(receive, other.data(), bytes);
    }
  }
  if (me < 2 * extra) {  // an odd folding rank hands the result to its partner
    Step step(session, comm, "allreduce");
    RFT_RETURN_IF_ERROR(step.Send(receive, bytes, me - 1, kAllreduceTag));
    RFT_RETURN_IF_ERROR(step.Wait());
  }
  return Status::Ok();
}

Status Reduce(Session& session, Communicator& comm, const void* send, void* receive, size_t count,
              const ReduceOp& op, int root) {
  RFT_RETURN_IF_ERROR(comm.CheckPeer("reduce root", root));
  RFT_RETURN_IF_ERROR(CheckCanRun(comm, "reduce"));
  const size_t bytes = count * op.element_size;
  const uint32_t n = comm.size();
  const Rank relative = Relative(comm.rank(), static_cast<Rank>(root), n);
  Scratch first(comm, bytes);
  Scratch second(comm, bytes);
  std::byte* accumulated = first.data();
  std::byte* other = second.data();
  if (bytes > 0) std::memcpy(accumulated, send, bytes);
  for (uint32_t mask = 1; mask < n; mask <<= 1) {
    Step step(session, comm, "reduce");
    if (relative & mask) {
      RFT_RETURN_IF_ERROR(
          step.Send(accumulated, bytes, Absolute(relative - mask, root, n), kReduceTag));
      RFT_RETURN_IF_ERROR(step.Wait());
      return Status::Ok();
    }
    if (relative + mask < n) {
      RFT_RETURN_IF_ERROR(
          step.Receive(other, bytes, Absolute(relative + mask, root, n), kReduceTag));
      RFT_RETURN_IF_ERROR(step.Wait());
      op.combine(accumulated, other, count);  // lower relative ranks first
      std::swap(accumulated, other);
    }
  }
  if (bytes > 0) std::memcpy(receive, accumulated, bytes);
  return Status::Ok();
}

Status Allgather(Session& session, Communicator& comm, const void* send, size_t bytes,
                 void* receive) {
  RFT_RETURN_IF_ERROR(CheckCanRun(comm, "allgather"));
  const uint32_t n = comm.size();
  const Rank me = comm.rank();
  auto* blocks = static_cast<std::byte*>(receive);
  if (bytes > 0 && blocks + me * bytes != send) std::memcpy(blocks + me * bytes, send, bytes);
  // Step s: pass on the block of member (me - s), receive that of (me - s - 1).
  for (uint32_t s = 0; s + 1 < n; ++s) {
    const Rank out = (me + n - s) % n;
    const Rank in = (me + n - s - 1) % n;
    Step step(session, comm, "allgather");
    RFT_RETURN_IF_ERROR(step.Receive(blocks + in * bytes, bytes, (me + n - 1) % n, kAllgatherTag));
    RFT_RETURN_IF_ERROR(step.Send(blocks + out * bytes, bytes, (me + 1) % n, kAllgatherTag));
    RFT_RETURN_IF_ERROR(step.Wait());
  }
  return Status::Ok();
}

}  // namespace rft::api
