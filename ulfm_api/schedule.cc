#include "ulfm_api/schedule.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <utility>

#include "base/clock.h"
#include "ulfm_api/session.h"

namespace rft::api {

namespace {

using transport::MessageStatus;

// Progress rounds a schedule gives the transport, once a member is known failed, before it
// gives up: what the failed member (or anyone) sent before may still be in the transport's
// queues, and a round that can finish does.
constexpr int kDrainRounds = 4;
// How long a schedule given up lets transfers already under way finish before it leaves them to
// the communicator (a large send to a member that left the operation would never finish).
constexpr auto kAbandonGrace = std::chrono::milliseconds(100);

}  // namespace

Schedule::Schedule(Communicator& comm, const char* what)
    : Schedule(comm, what, comm.NextCollectiveTag()) {}

Schedule::Schedule(Communicator& comm, const char* what, int32_t tag)
    : comm_(comm), what_(what), tag_(tag), ops_(inline_ops_), view_size_(comm.size()) {}

Status Schedule::CheckRoot(const char* what, int root) const {
  if (root >= 0 && static_cast<uint32_t>(root) < view_size_) [[likely]]
    return Status::Ok();
  return ArgError(std::string(what) + " " + std::to_string(root) + " on " + comm_.name() +
                  ": expected 0.." + std::to_string(static_cast<int64_t>(view_size_) - 1));
}

Schedule::~Schedule() {
  if (!finished_) Abandon();
}

Schedule::Op& Schedule::Append(Op::Kind kind) {
  const bool transfer = IsTransfer(kind);
  if (transfer && round_has_local_work_) EndRound();
  round_has_local_work_ = round_has_local_work_ || !transfer;
  if (op_count_ == op_capacity_) {
    std::unique_ptr<Op[]> grown(new Op[2 * op_capacity_]);
    std::copy(ops_, ops_ + op_count_, grown.get());
    heap_ops_ = std::move(grown);
    ops_ = heap_ops_.get();
    op_capacity_ *= 2;
  }
  Op& op = ops_[op_count_++];
  op = Op{.kind = kind,
          .ends_round = false,
          .member = 0,
          .source = nullptr,
          .target = nullptr,
          .size = 0,
          .op = ReduceOp(),
          .request = nullptr};
  return op;
}

void Schedule::Send(const void* buffer, size_t bytes, Rank member) {
  Op& op = Append(Op::Kind::kSend);
  op.member = view_first_ + member;
  op.source = buffer;
  op.size = bytes;
}

void Schedule::Receive(void* buffer, size_t bytes, Rank member) {
  Op& op = Append(Op::Kind::kReceive);
  op.member = view_first_ + member;
  op.target = buffer;
  op.size = bytes;
}

void Schedule::Combine(const ReduceOp& reduce, const void* in, void* inout, size_t count) {
  if (count == 0) return;
  Op& op = Append(Op::Kind::kCombine);
  op.source = in;
  op.target = inout;
  op.size = count;
  op.op = reduce;
}

void Schedule::Copy(const void* from, void* to, size_t bytes) {
  if (bytes == 0 || from == to) return;
  Op& op = Append(Op::Kind::kCopy);
  op.source = from;
  op.target = to;
  op.size = bytes;
}

void Schedule::EndRound() {
  if (op_count_ > 0) ops_[op_count_ - 1].ends_round = true;
  round_has_local_work_ = false;
}

std::byte* Schedule::Scratch(size_t bytes) {
  const size_t aligned = (bytes + 15) & ~size_t{15};
  // Inline only what travels eagerly (a send copied out when matched, a receive written when
  // matched): a schedule given up on keeps only heap buffers alive (Abandon), and it may live on
  // its caller's stack, as the fast agreement's does, where a rendezvous would read or write a
  // dead frame.
  if (aligned <= kInlineScratch - scratch_used_ && bytes <= comm_.plane().options().eager_limit) {
    std::byte* at = inline_scratch_ + scratch_used_;
    scratch_used_ += aligned;
    return at;
  }
  heap_scratch_.emplace_back(new std::byte[std::max<size_t>(bytes, 1)]);
  return heap_scratch_.back().get();
}

Status Schedule::CheckCanRun(Communicator& comm, const char* what) {
  // A revocation another thread handed over counts before a failure: the usual ULFM loop
  // repeats a collective until it returns REVOKED, and never drives the data plane otherwise.
  comm.plane().ApplyPendingNotices();
  if (comm.IsRevoked()) [[unlikely]]
    return RevokedError(std::string(what) + " on " + comm.name() + ": the communicator is revoked");
  if (comm.HasFailedMember()) [[unlikely]] {
    return ProcFailedError(std::string(what) + " on " + comm.name() + ": member (job rank) " +
                           std::to_string(comm.FailedMembers().front()) + " has failed");
  }
  return Status::Ok();
}

Status Schedule::PostRound() {
  round_end_ = round_begin_;
  while (round_end_ < op_count_ && !ops_[round_end_++].ends_round) {
  }
  round_transfers_ = 0;
  while (round_begin_ + round_transfers_ < round_end_ &&
         IsTransfer(ops_[round_begin_ + round_transfers_].kind)) {
    ++round_transfers_;
  }
  round_posted_ = true;
  transport::DataPlane& plane = comm_.plane();
  const uint32_t context = comm_.collective_context();
  for (size_t i = round_begin_; i < round_begin_ + round_transfers_; ++i) {
    Op& op = ops_[i];
    const Rank peer = comm_.JobRank(op.member);
    RFT_RETURN_IF_ERROR(op.kind == Op::Kind::kSend
                            ? plane.Isend(op.source, op.size, peer, tag_, context, &op.request)
                            : plane.Irecv(op.target, op.size, peer, tag_, context, &op.request));
  }
  return Status::Ok();
}

Status Schedule::Advance(bool* done) {
  *done = finished_;
  if (finished_) return result_;
  if (external_) [[unlikely]] {
    bool moved = false;
    std::optional<Status> outcome = external_(&moved);
    if (moved) ++progress_events_;
    if (!outcome.has_value()) return Status::Ok();
    *done = true;
    return Finish(std::move(*outcome));
  }
  transport::DataPlane& plane = comm_.plane();
  bool progressed = false;
  const auto pending = [this] {
    for (size_t i = round_begin_; i < round_begin_ + round_transfers_; ++i) {
      if (ops_[i].request != nullptr && !ops_[i].request->complete) return true;
    }
    return false;
  };
  for (;;) {
    if (!round_posted_) {
      if (round_begin_ == op_count_) {
        *done = true;
        return Finish(Status::Ok());
      }
      if (Status posted = PostRound(); !posted.ok()) [[unlikely]] {
        *done = true;
        return Finish(std::move(posted));
      }
    }
    if (pending()) {
      if (!progressed) {
        progress_events_ += plane.Progress();
        progressed = true;
      }
      if (pending()) {
        if (!comm_.HasFailedMember()) [[likely]]
          return Status::Ok();
        for (int i = 0; i < kDrainRounds && pending(); ++i) progress_events_ += plane.Progress();
        if (pending()) {
          *done = true;
          return Finish(CheckCanRun(comm_, what_));
        }
      }
    }
    // Every transfer of the round is complete: release them, then the round's local work.
    Status failure;
    for (size_t i = round_begin_; i < round_begin_ + round_transfers_; ++i) {
      MessageStatus status;
      bool complete = false;
      (void)plane.Test(&ops_[i].request, &complete, &status);
      if (status.error != RFT_SUCCESS && failure.ok()) failure = TransferError(status);
    }
    if (!failure.ok()) [[unlikely]] {
      *done = true;
      return Finish(std::move(failure));
    }
    for (size_t i = round_begin_ + round_transfers_; i < round_end_; ++i) {
      const Op& op = ops_[i];
      if (op.kind == Op::Kind::kCombine) {
        op.op.combine(op.source, op.target, op.size);
      } else {
        std::memcpy(op.target, op.source, op.size);
      }
    }
    round_begin_ = round_end_;
    round_transfers_ = 0;
    round_posted_ = false;
  }
}

Status Schedule::Run(Session& session) {
  for (;;) {
    bool done = false;
    Status status = Advance(&done);
    if (done) return status;
    session.IdleIfBlocking();  // Advance progressed
  }
}

Status Schedule::Finish(Status result) {
  Abandon();
  finished_ = true;
  result_ = std::move(result);
  return result_;
}

Status Schedule::TransferError(const MessageStatus& s) const {
  const std::string where = std::string(what_) + " on " + comm_.name() + ": ";
  switch (s.error) {
    case RFT_ERR_PROC_FAILED:
      return ProcFailedError(where + "member " + std::to_string(comm_.MemberRank(s.source)) +
                             " has failed");
    case RFT_ERR_REVOKED:
      return RevokedError(where + "the communicator was revoked");
    case RFT_ERR_TRUNCATE:
      return Status(RFT_ERR_TRUNCATE, where + "member " +
                                          std::to_string(comm_.MemberRank(s.source)) + " sent " +
                                          std::to_string(s.message_length) + " bytes where " +
                                          std::to_string(s.count) +
                                          " were expected: the members' counts or types differ");
    default:
      return Status(s.error, where + "an internal message failed: " + rft_error_string(s.error));
  }
}

// Receives are cancelled, and transfers under way get a moment to finish; whatever the transport
// still holds then stays with the communicator, and so do the temporary buffers it may use.
void Schedule::Abandon() {
  if (!round_posted_ || round_transfers_ == 0) return;
  transport::DataPlane& plane = comm_.plane();
  const size_t begin = round_begin_;
  const size_t end = round_begin_ + round_transfers_;
  for (size_t i = begin; i < end; ++i) {
    if (ops_[i].request != nullptr) (void)plane.Cancel(ops_[i].request);
  }
  const Deadline deadline = Deadline::After(kAbandonGrace);
  for (;;) {
    bool under_way = false;
    for (size_t i = begin; i < end; ++i) {
      bool complete = false;
      (void)plane.Test(&ops_[i].request, &complete, nullptr);
      under_way = under_way || !complete;
    }
    if (!under_way || deadline.expired()) break;
  }
  bool left = false;
  for (size_t i = begin; i < end; ++i) {
    if (ops_[i].request == nullptr) continue;
    comm_.Abandon(ops_[i].request);
    ops_[i].request = nullptr;
    left = true;
  }
  // Inline buffers travel eagerly (matched means copied, Scratch): never in flight now.
  if (left) {
    for (auto& buffer : heap_scratch_) comm_.KeepAlive(std::move(buffer));
    heap_scratch_.clear();
  }
  round_transfers_ = 0;
}

}  // namespace rft::api
