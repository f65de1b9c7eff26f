// Credit flow control of the verbs backend's eager SENDs with one peer, without any I/O.
//
// A receiver reserves C receive buffers for each peer (in its shared receive queue). A SEND that
// finds no posted buffer is an RNR NAK at best and a failed QP at worst, so a sender keeps at
// most C SENDs unaccounted for: each one takes a credit, and the receiver gives the credit back
// only after the buffer that held the message has been posted again. Credits travel back in the
// header of the receiver's own messages to the sender, or, when that side has nothing to say
// (one-way traffic) or cannot say it (its own window is exhausted too), in an explicit credit
// message once half the window is owed. Explicit credit messages bypass the window: they land in
// buffers reserved for them (kCreditMessagesInFlight per peer), and because each carries at
// least half a window, no more than that can be in flight at once.
//
// A send that finds no credit is queued: the window counts it and the caller keeps the message,
// in order, until TryDispatch says it may go. Nothing is dropped.
#ifndef RFT_TRANSPORT_VERBS_CREDIT_WINDOW_H_
#define RFT_TRANSPORT_VERBS_CREDIT_WINDOW_H_

#include <cstdint>

#include "base/status.h"

namespace rft::verbs {

class CreditWindow {
 public:
  // The header's credit field is 16 bits wide.
  static constexpr uint32_t kMaxWindow = 0xffff;
  // Buffers a receiver keeps for explicit credit messages from each peer, beyond the window:
  // every such message returns at least ceil(window / 2) credits, and the peer's credits plus
  // those in flight never exceed the window.
  static constexpr uint32_t kCreditMessagesInFlight = 2;

  // `window` is C, in [1, kMaxWindow]; RFT_ERR_ARG naming the value otherwise.
  static StatusOr<CreditWindow> Create(uint32_t window);

  uint32_t window() const { return window_; }
  // Owed credits at which an explicit credit message is due: half the window, rounded up.
  uint32_t threshold() const { return (window_ + 1) / 2; }

  // Sender side.
  uint32_t credits() const { return credits_; }  // SENDs that may go now
  uint32_t in_flight() const { return window_ - credits_; }
  uint32_t queued() const { return queued_; }
  // One more message waits behind the queued ones; the caller keeps it.
  void Enqueue() { ++queued_; }
  // The oldest queued message may go (one credit taken) when true.
  bool TryDispatch() {
    if (queued_ == 0 || credits_ == 0) return false;
    --queued_;
    --credits_;
    return true;
  }
  // `returned` credits from a header of the peer. More than the peer can owe (the credits would
  // exceed the window) is a protocol error: refused naming the value, nothing changes. Inline,
  // as the others here: each runs once per message.
  Status Return(uint32_t returned) {
    // Compared as a difference so that a huge value cannot wrap around the sum.
    if (returned > window_ - credits_) [[unlikely]]
      return ReturnError(returned);
    credits_ += returned;
    return Status::Ok();
  }

  // Receiver side.
  uint32_t owed() const { return owed_; }
  // A buffer that held one of the peer's messages is posted again: one credit owed. A peer that
  // sent beyond its window would make more owed than the window: refused, as above.
  Status Reposted() {
    if (owed_ == window_) [[unlikely]]
      return RepostedError();
    ++owed_;
    return Status::Ok();
  }
  // The owed credits, for a header going to the peer (on a message or an explicit credit
  // message); none are owed afterwards.
  uint32_t TakeOwed() {
    const uint32_t owed = owed_;
    owed_ = 0;
    return owed;
  }
  // Enough is owed that the peer may be starving, so credits must go without waiting for a
  // message to carry them.
  bool CreditMessageDue() const { return owed_ >= threshold(); }

 private:
  explicit CreditWindow(uint32_t window) : window_(window), credits_(window) {}
  [[gnu::cold, gnu::noinline]] Status ReturnError(uint32_t returned) const;
  [[gnu::cold, gnu::noinline]] Status RepostedError() const;

  uint32_t window_;
  uint32_t credits_;
  uint32_t queued_ = 0;
  uint32_t owed_ = 0;
};

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_CREDIT_WINDOW_H_
