// The eager channel's credit flow control without a device: a sender never has more SENDs in
// flight than the receiver reserved buffers for, waiting sends are kept rather than dropped,
// credits come back so that neither one-way nor two-way traffic stalls, and a peer that returns
// credits it was never given is refused by value.
#include "transport/verbs/credit_window.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>

namespace rft::verbs {
namespace {

CreditWindow Window(uint32_t c) {
  StatusOr<CreditWindow> w = CreditWindow::Create(c);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return *w;
}

TEST(CreditWindowTest, RefusesAnEmptyOrTooWideWindow) {
  StatusOr<CreditWindow> zero = CreditWindow::Create(0);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), RFT_ERR_ARG);
  EXPECT_EQ(zero.status().message(), "credit window of 0: must be 1..65535");
  EXPECT_FALSE(CreditWindow::Create(70000).ok());
  EXPECT_TRUE(CreditWindow::Create(1).ok());
  EXPECT_TRUE(CreditWindow::Create(CreditWindow::kMaxWindow).ok());
}

TEST(CreditWindowTest, ExhaustionQueuesAndReturnedCreditsReleaseInOrder) {
  CreditWindow w = Window(4);
  EXPECT_EQ(w.credits(), 4u);
  for (int i = 0; i < 6; ++i) w.Enqueue();
  int sent = 0;
  while (w.TryDispatch()) ++sent;
  EXPECT_EQ(sent, 4);
  EXPECT_EQ(w.credits(), 0u);
  EXPECT_EQ(w.in_flight(), 4u);
  EXPECT_EQ(w.queued(), 2u);  // kept, not dropped
  EXPECT_FALSE(w.TryDispatch());

  ASSERT_TRUE(w.Return(1).ok());
  EXPECT_TRUE(w.TryDispatch());
  EXPECT_FALSE(w.TryDispatch());
  EXPECT_EQ(w.queued(), 1u);
  ASSERT_TRUE(w.Return(3).ok());
  EXPECT_TRUE(w.TryDispatch());
  EXPECT_EQ(w.queued(), 0u);
  EXPECT_EQ(w.credits(), 2u);
  EXPECT_FALSE(w.TryDispatch());  // credits left, nothing waiting
}

TEST(CreditWindowTest, ReturningNothingIsHarmless) {
  CreditWindow w = Window(2);
  EXPECT_TRUE(w.Return(0).ok());
  EXPECT_EQ(w.credits(), 2u);
}

TEST(CreditWindowTest, CreditsBeyondTheWindowAreRefusedByValue) {
  CreditWindow w = Window(8);
  w.Enqueue();
  w.Enqueue();
  w.Enqueue();
  while (w.TryDispatch()) {
  }
  Status s = w.Return(5);
  EXPECT_EQ(s.code(), RFT_ERR_ARG);
  EXPECT_EQ(s.message(), "credits returned: 5 with 3 in flight would exceed the window of 8");
  EXPECT_EQ(w.credits(), 5u);  // unchanged
  // A value that would wrap a 32-bit sum is refused too.
  Status huge = w.Return(UINT32_MAX);
  EXPECT_NE(huge.message().find("4294967295"), std::string::npos) << huge.message();
  EXPECT_EQ(w.credits(), 5u);
  EXPECT_TRUE(w.Return(3).ok());
  EXPECT_EQ(w.credits(), 8u);
  EXPECT_FALSE(w.Return(1).ok());
}

TEST(CreditWindowTest, ReceiverOwesOnlyWhatTheWindowAllows) {
  CreditWindow w = Window(3);
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(w.Reposted().ok());
  Status s = w.Reposted();
  EXPECT_EQ(s.code(), RFT_ERR_ARG);
  EXPECT_EQ(s.message(),
            "receive buffer reposted with 3 credits already owed: the peer sent beyond the "
            "window of 3");
  EXPECT_EQ(w.TakeOwed(), 3u);
  EXPECT_EQ(w.owed(), 0u);
}

TEST(CreditWindowTest, ExplicitCreditIsDueAtHalfTheWindow) {
  for (uint32_t c : {1u, 2u, 3u, 8u, 9u, 64u}) {
    CreditWindow w = Window(c);
    const uint32_t half = (c + 1) / 2;
    EXPECT_EQ(w.threshold(), half) << c;
    for (uint32_t i = 1; i < half; ++i) {
      ASSERT_TRUE(w.Reposted().ok());
      EXPECT_FALSE(w.CreditMessageDue()) << c << " owed " << i;
    }
    ASSERT_TRUE(w.Reposted().ok());
    EXPECT_TRUE(w.CreditMessageDue()) << c;
    EXPECT_EQ(w.TakeOwed(), half);
    EXPECT_FALSE(w.CreditMessageDue());
  }
}

TEST(CreditWindowTest, PiggybackedCreditsResetWhatIsOwed) {
  CreditWindow w = Window(8);
  ASSERT_TRUE(w.Reposted().ok());
  ASSERT_TRUE(w.Reposted().ok());
  EXPECT_EQ(w.TakeOwed(), 2u);  // carried on an outgoing message
  EXPECT_EQ(w.TakeOwed(), 0u);
}

// Two processes joined by in-order links, driven step by step. Each has a window for the other
// (its sending credits and what it owes as a receiver). A message carries its owed credits; an
// explicit credit message only them. The receiver reposts a buffer as soon as it takes a
// message, and sends an explicit credit message when one is due.
struct Message {
  bool credit_only;
  uint32_t credits;
};

struct Side {
  explicit Side(CreditWindow w) : window(w) {}
  CreditWindow window;
  std::deque<Message> inbox;  // the link towards this side
  uint64_t to_send = 0;       // messages the application still wants to send
  uint64_t received = 0;
  uint32_t buffers_in_use = 0;  // reserved receive buffers holding data, never above C
  uint32_t max_buffers_in_use = 0;
  uint32_t credit_buffers_in_use = 0;  // the extra buffers for explicit credit messages
  uint32_t max_credit_buffers_in_use = 0;
  uint64_t credit_messages = 0;
};

void Deliver(Side& to, const Message& m) {
  to.inbox.push_back(m);
  if (m.credit_only) {
    ++to.credit_buffers_in_use;
    to.max_credit_buffers_in_use = std::max(to.max_credit_buffers_in_use, to.credit_buffers_in_use);
  } else {
    ++to.buffers_in_use;
    to.max_buffers_in_use = std::max(to.max_buffers_in_use, to.buffers_in_use);
  }
}

// One step of `self`: queue what the application offers, send what the window allows, take one
// message from the link. False when nothing happened.
bool Step(Side& self, Side& peer) {
  bool moved = false;
  while (self.to_send > 0) {
    self.window.Enqueue();
    --self.to_send;
  }
  while (self.window.TryDispatch()) {
    Deliver(peer, Message{false, self.window.TakeOwed()});
    moved = true;
  }
  if (!self.inbox.empty()) {
    const Message m = self.inbox.front();
    self.inbox.pop_front();
    EXPECT_TRUE(self.window.Return(m.credits).ok());
    if (m.credit_only) {
      --self.credit_buffers_in_use;
    } else {
      ++self.received;
      --self.buffers_in_use;
      EXPECT_TRUE(self.window.Reposted().ok());
    }
    moved = true;
  }
  if (self.window.CreditMessageDue()) {
    ++self.credit_messages;
    Deliver(peer, Message{true, self.window.TakeOwed()});
    moved = true;
  }
  return moved;
}

// Runs until both sides are idle; false if a side still had work when they stopped (a
// deadlock) or the steps ran out.
bool Simulate(Side& a, Side& b, uint64_t a_sends, uint64_t b_sends) {
  for (int steps = 0; steps < 1000000; ++steps) {
    const bool moved_a = Step(a, b);
    const bool moved_b = Step(b, a);
    if (!moved_a && !moved_b) {
      return a.window.queued() == 0 && b.window.queued() == 0 && b.received == a_sends &&
             a.received == b_sends;
    }
  }
  return false;
}

TEST(CreditWindowTest, OneWayTrafficNeverDeadlocks) {
  for (uint32_t c : {1u, 2u, 3u, 16u}) {
    Side a(Window(c)), b(Window(c));
    a.to_send = 10 * c + 7;
    ASSERT_TRUE(Simulate(a, b, a.to_send, 0)) << "window " << c;
    EXPECT_EQ(b.received, 10 * c + 7);
    EXPECT_LE(b.max_buffers_in_use, c);
    EXPECT_LE(a.max_credit_buffers_in_use, CreditWindow::kCreditMessagesInFlight);
    EXPECT_GT(b.credit_messages, 0u);  // only explicit messages could bring credits back
    EXPECT_EQ(a.credit_messages, 0u);
  }
}

TEST(CreditWindowTest, TwoWayTrafficWithBothWindowsExhaustedNeverDeadlocks) {
  for (uint32_t c : {1u, 2u, 5u, 16u}) {
    Side a(Window(c)), b(Window(c));
    a.to_send = 20 * c;
    b.to_send = 13 * c + 1;
    ASSERT_TRUE(Simulate(a, b, 20 * c, 13 * c + 1)) << "window " << c;
    EXPECT_LE(a.max_buffers_in_use, c);
    EXPECT_LE(b.max_buffers_in_use, c);
    EXPECT_LE(a.max_credit_buffers_in_use, CreditWindow::kCreditMessagesInFlight);
    EXPECT_LE(b.max_credit_buffers_in_use, CreditWindow::kCreditMessagesInFlight);
  }
}

// Without explicit credit messages one-way traffic stops once the window is used up: the reason
// they exist.
TEST(CreditWindowTest, PiggybackAloneStallsOneWayTraffic) {
  CreditWindow sender = Window(4);
  CreditWindow receiver = Window(4);
  for (int i = 0; i < 10; ++i) sender.Enqueue();
  int delivered = 0;
  while (sender.TryDispatch()) {
    ++delivered;
    ASSERT_TRUE(receiver.Reposted().ok());
  }
  EXPECT_EQ(delivered, 4);
  EXPECT_EQ(sender.queued(), 6u);
  EXPECT_TRUE(receiver.CreditMessageDue());
  ASSERT_TRUE(sender.Return(receiver.TakeOwed()).ok());
  EXPECT_TRUE(sender.TryDispatch());
}

}  // namespace
}  // namespace rft::verbs
