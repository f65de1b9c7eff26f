// rft::api::Schedule: one collective operation as rounds of internal messages and local work,
// run to the end by a blocking collective or advanced piece by piece for a non-blocking one.
//
// A round is the transfers (sends and receives in the communicator's collective context, all
// posted at once) and then the local work that needs them done (combining with an operator,
// copying). An algorithm (collectives.cc) builds its schedule before it runs: adding a transfer
// after local work starts a new round.
//
// Every message of one collective call carries that call's tag (Communicator::NextCollectiveTag):
// members start collectives in the same order, so non-blocking collectives in flight together
// never take each other's messages, whatever order their rounds progress in.
//
// Failures (ULFM): a round that cannot finish because a member failed (the detector tells every
// survivor) ends the schedule with RFT_ERR_PROC_FAILED; a revoked communicator's transfers end it
// with RFT_ERR_REVOKED. What is still under way then is cancelled where it can be, given a short
// grace to finish, and otherwise left to the communicator (Communicator::Abandon) with the
// schedule's temporary buffers, so the transport never writes into freed memory.
//
// Memory: the operations and up to kInlineScratch bytes of temporary buffers live inside the
// object, so a blocking collective of a few rounds on small data allocates nothing.
#ifndef RFT_ULFM_API_SCHEDULE_H_
#define RFT_ULFM_API_SCHEDULE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "base/status.h"
#include "ulfm_api/communicator.h"

namespace rft::api {

class Session;

// inout[i] = in[i] (op) inout[i] for `count` elements (MPI's user-function convention: `in` is
// the lower ranks' contribution).
struct ReduceOp {
  void (*combine)(const void* in, void* inout, size_t count) = nullptr;
  size_t element_size = 1;
};

class Schedule {
 public:
  // `what` names the collective in errors (a string literal).
  Schedule(Communicator& comm, const char* what);
  // With a tag the caller took (Communicator::NextCollectiveTag): several schedules of one
  // operation whose messages match each other's.
  Schedule(Communicator& comm, const char* what, int32_t tag);
  // A schedule destroyed before its end (an error, or a session torn down) gives up what is
  // under way (see Failures above).
  ~Schedule();
  Schedule(const Schedule&) = delete;
  Schedule& operator=(const Schedule&) = delete;

  Communicator& comm() const { return comm_; }
  const char* what() const { return what_; }

  // The members an algorithm sees: all of the communicator's, or after Restrict the `count`
  // members first .. first + count - 1, renumbered from 0 (so an algorithm written for a whole
  // communicator runs over one group of an intercommunicator). size(), rank() and the
  // transfers' `member` are the view's; the caller must be in it.
  uint32_t size() const { return view_size_; }
  Rank rank() const { return comm_.rank() - view_first_; }
  void Restrict(Rank first, uint32_t count) {
    view_first_ = first;
    view_size_ = count;
  }
  void Unrestrict() { Restrict(0, comm_.size()); }
  // RFT_ERR_ARG naming `what` unless `root` is a rank of the view.
  Status CheckRoot(const char* what, int root) const;

  // ---- Building (before the first Advance) ----
  void Send(const void* buffer, size_t bytes, Rank member);
  void Receive(void* buffer, size_t bytes, Rank member);
  // inout = in (op) inout, `count` elements.
  void Combine(const ReduceOp& op, const void* in, void* inout, size_t count);
  void Copy(const void* from, void* to, size_t bytes);
  // Ends the current round: what follows waits for everything before it.
  void EndRound();
  // A temporary buffer owned by the schedule (16-byte aligned).
  std::byte* Scratch(size_t bytes);
  // Makes this a schedule that waits for work outside its own rounds (an agreement on the
  // control thread, or a schedule of its own) instead of running rounds: each Advance asks
  // `poll`, which returns the outcome once that work is over, and sets `*moved` when it advanced
  // it (see progress_events). Such a schedule has no rounds and is not refused on a communicator
  // with failed members or a revoked one (agreement works there).
  void AwaitExternal(std::function<std::optional<Status>(bool* moved)> poll) {
    external_ = std::move(poll);
  }

  // ---- Running ----
  // Whether the communicator can run a collective now: RFT_ERR_REVOKED or RFT_ERR_PROC_FAILED
  // (a member known failed) otherwise.
  static Status CheckCanRun(Communicator& comm, const char* what);
  // Posts and completes what it can without waiting; `*done` once the schedule has ended, and
  // then the Status is its outcome.
  Status Advance(bool* done);
  // Advances until the end, idling between attempts as the session's progress mode says.
  Status Run(Session& session);
  bool finished() const { return finished_; }
  // Grows whenever an Advance moved anything: the data plane's events its progress calls
  // processed (which may complete another schedule's transfers, not only this one's), or an
  // external poll's work. Several schedules advanced in turn must be advanced again while this
  // grows, or one whose transfers another's progress completed would wait for the next event.
  uint64_t progress_events() const { return progress_events_; }

 private:
  struct Op {
    enum class Kind : uint8_t { kSend, kReceive, kCombine, kCopy };
    Kind kind;
    bool ends_round;
    Rank member;                  // transfers: the communicator's rank
    const void* source;           // send: data; combine: `in`; copy: from
    void* target;                 // receive: buffer; combine: `inout`; copy: to
    size_t size;                  // transfers and copies: bytes; combine: elements
    ReduceOp op;                  // combine
    transport::Request* request;  // transfers, while under way
  };
  static constexpr size_t kInlineOps = 24;
  static constexpr size_t kInlineScratch = 1024;

  static bool IsTransfer(Op::Kind kind) {
    return kind == Op::Kind::kSend || kind == Op::Kind::kReceive;
  }
  Op& Append(Op::Kind kind);
  // Finds the current round's end and posts its transfers.
  Status PostRound();
  // Ends the schedule with `result`, giving up what is under way.
  Status Finish(Status result);
  Status TransferError(const transport::MessageStatus& status) const;
  void Abandon();

  Communicator& comm_;
  const char* what_;
  int32_t tag_;
  Op* ops_;
  size_t op_count_ = 0;
  size_t op_capacity_ = kInlineOps;
  std::unique_ptr<Op[]> heap_ops_;
  bool round_has_local_work_ = false;  // the last round has local work: a transfer starts a new one
  size_t round_begin_ = 0;             // the current round's first op
  size_t round_end_ = 0;               // one past its last (valid once posted)
  size_t round_transfers_ = 0;         // its leading transfers
  bool round_posted_ = false;
  bool finished_ = false;
  Status result_;
  std::function<std::optional<Status>(bool* moved)> external_;
  uint64_t progress_events_ = 0;
  Rank view_first_ = 0;
  uint32_t view_size_;
  size_t scratch_used_ = 0;
  std::vector<std::unique_ptr<std::byte[]>> heap_scratch_;
  Op inline_ops_[kInlineOps];
  alignas(16) std::byte inline_scratch_[kInlineScratch];
};

}  // namespace rft::api

#endif  // RFT_ULFM_API_SCHEDULE_H_
