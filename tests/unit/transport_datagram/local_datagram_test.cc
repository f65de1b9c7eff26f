// The same-node datagram channel: delivery and order, a full peer queue (messages wait here and
// go when it has room), a closed peer seen at once, bad names and sizes refused by value, and a
// sender killed in the middle of sending that leaves the receiver receiving from others.
#include "transport/datagram/local_datagram.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace rft::transport {
namespace {

using Outcome = LocalDatagramChannel::Outcome;
constexpr uint32_t kToken = 0x5eed;

// A tag no other test run on this node uses at the same time.
uint32_t FreshTag() {
  static std::mt19937 random(static_cast<uint32_t>(getpid()) ^
                             static_cast<uint32_t>(std::random_device{}()));
  return random();
}

std::vector<std::byte> Bytes(const std::string& text) {
  std::vector<std::byte> bytes(text.size());
  // An empty vector's data() may be null, which memcpy must not get even for 0 bytes (UBSan).
  if (!text.empty()) std::memcpy(bytes.data(), text.data(), text.size());
  return bytes;
}

std::vector<std::string> ReceiveAll(LocalDatagramChannel& channel) {
  std::vector<std::string> got;
  channel.Receive(
      [&](std::span<const std::byte> m) {
        got.emplace_back(reinterpret_cast<const char*>(m.data()), m.size());
      },
      1 << 20);
  return got;
}

struct Pair {
  std::unique_ptr<LocalDatagramChannel> a, b;  // ranks 0 and 1
};

Pair Connected(uint32_t tag) {
  Pair pair;
  auto a = LocalDatagramChannel::Open(tag, kToken, 0, 3);
  auto b = LocalDatagramChannel::Open(tag, kToken, 1, 3);
  EXPECT_TRUE(a.ok() && b.ok());
  pair.a = std::move(*a);
  pair.b = std::move(*b);
  EXPECT_TRUE(pair.a->Connect(1, pair.b->name()));
  EXPECT_TRUE(pair.b->Connect(0, pair.a->name()));
  return pair;
}

TEST(LocalDatagramTest, HeaderAndPayloadArriveAsOneMessageInOrder) {
  Pair pair = Connected(FreshTag());
  for (int i = 0; i < 5; ++i) {
    const auto header = Bytes("h" + std::to_string(i) + ":");
    const auto payload = Bytes(std::string(i * 100, 'x'));
    auto sent = pair.a->Send(1, header, payload);
    ASSERT_TRUE(sent.ok()) << sent.status().ToString();
    EXPECT_EQ(*sent, Outcome::kSent);
  }
  const auto got = ReceiveAll(*pair.b);
  ASSERT_EQ(got.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(got[i], "h" + std::to_string(i) + ":" + std::string(i * 100, 'x'));
  }
  EXPECT_TRUE(ReceiveAll(*pair.a).empty());
}

TEST(LocalDatagramTest, AFullPeerQueueKeepsMessagesHereInOrderUntilItHasRoom) {
  Pair pair = Connected(FreshTag());
  const int count = 200;  // far above the kernel's queue of a few datagrams
  int queued = 0;
  for (int i = 0; i < count; ++i) {
    auto sent = pair.a->Send(1, Bytes(std::to_string(i)), {});
    ASSERT_TRUE(sent.ok()) << sent.status().ToString();
    queued += *sent == Outcome::kQueued;
  }
  EXPECT_GT(queued, 0) << "the kernel took " << count << " datagrams without a reader";
  EXPECT_TRUE(pair.a->HasQueued());
  // Output interest for the full peer, input for the own socket.
  std::vector<pollfd> fds;
  pair.a->AddPollFds(&fds);
  ASSERT_EQ(fds.size(), 2u);
  EXPECT_EQ(fds[1].events, POLLOUT);
  std::vector<std::string> got;
  for (int round = 0; round < 1000 && static_cast<int>(got.size()) < count; ++round) {
    for (std::string& m : ReceiveAll(*pair.b)) got.push_back(std::move(m));
    pair.a->Flush([](Rank peer) { ADD_FAILURE() << "rank " << peer << " gone"; });
  }
  ASSERT_EQ(static_cast<int>(got.size()), count);
  for (int i = 0; i < count; ++i) EXPECT_EQ(got[i], std::to_string(i));
  EXPECT_FALSE(pair.a->HasQueued());
  EXPECT_EQ(pair.a->dropped(), 0u);
}

TEST(LocalDatagramTest, ASendToAClosedPeerSaysItIsGone) {
  Pair pair = Connected(FreshTag());
  pair.b.reset();  // its socket closes, as at its process's end
  auto sent = pair.a->Send(1, Bytes("anyone?"), {});
  ASSERT_TRUE(sent.ok()) << sent.status().ToString();
  EXPECT_EQ(*sent, Outcome::kGone);
  pair.a->Forget(1);
  EXPECT_FALSE(pair.a->Reaches(1));
  EXPECT_EQ(pair.a->Send(1, Bytes("again"), {}).status().code(), RFT_ERR_ARG);
}

TEST(LocalDatagramTest, MessagesWaitingForAPeerThatEndsAreReportedOnce) {
  Pair pair = Connected(FreshTag());
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(pair.a->Send(1, Bytes("m"), {}).ok());
  ASSERT_TRUE(pair.a->HasQueued());
  pair.b.reset();
  std::vector<Rank> gone;
  pair.a->Flush([&](Rank peer) { gone.push_back(peer); });
  pair.a->Flush([&](Rank peer) { gone.push_back(peer); });
  EXPECT_EQ(gone, std::vector<Rank>{1});
  EXPECT_FALSE(pair.a->HasQueued());
}

TEST(LocalDatagramTest, BadNamesSizesAndRanksAreRefused) {
  const uint32_t tag = FreshTag();
  Pair pair = Connected(tag);
  auto other_job = LocalDatagramChannel::Open(tag + 1, kToken, 2, 3);
  ASSERT_TRUE(other_job.ok());
  EXPECT_FALSE(pair.a->Connect(2, (*other_job)->name())) << "another job's socket";
  EXPECT_FALSE(pair.a->Connect(2, pair.b->name())) << "rank 1's name for rank 2";
  EXPECT_FALSE(pair.a->Connect(7, pair.b->name())) << "no rank 7 in a job of 3";
  EXPECT_FALSE(pair.a->Reaches(2));
  // Nobody bound rank 2's name of this job.
  std::string unbound = pair.a->name();
  unbound.back() = '2';
  EXPECT_FALSE(pair.a->Connect(2, unbound));

  const std::vector<std::byte> big(LocalDatagramChannel::kMaxMessage + 1);
  auto too_big = pair.a->Send(1, {}, big);
  EXPECT_EQ(too_big.status().code(), RFT_ERR_ARG);
  EXPECT_NE(too_big.status().message().find(std::to_string(big.size()) + " bytes, at most"),
            std::string::npos)
      << too_big.status().ToString();
  auto self_open = LocalDatagramChannel::Open(tag, kToken, 3, 3);
  EXPECT_EQ(self_open.status().code(), RFT_ERR_ARG);
  auto twice = LocalDatagramChannel::Open(tag, kToken, 1, 3);  // rank 1's name is taken
  EXPECT_EQ(twice.status().code(), RFT_ERR_OTHER);
  EXPECT_NE(twice.status().message().find("bind"), std::string::npos) << twice.status().ToString();
}

// Anyone on the node can connect to an abstract name; only one user's datagrams are taken
// (the kernel's credentials say whose). Seen from a receiver that takes another user's only,
// since a sandboxed test cannot switch users.
TEST(LocalDatagramTest, AnotherUsersDatagramsAreDropped) {
  Pair pair = Connected(FreshTag());
  pair.b->AcceptOnlyUserForTesting(geteuid() + 1);
  ASSERT_TRUE(pair.a->Send(1, Bytes("from another user"), {}).ok());
  EXPECT_TRUE(ReceiveAll(*pair.b).empty());
  EXPECT_EQ(pair.b->dropped(), 1u);
  pair.b->AcceptOnlyUserForTesting(geteuid());
  ASSERT_TRUE(pair.a->Send(1, Bytes("mine"), {}).ok());
  EXPECT_EQ(ReceiveAll(*pair.b), std::vector<std::string>{"mine"});
  EXPECT_EQ(pair.b->dropped(), 1u);
}

// What UCX's shared-memory FIFO cannot promise: a sender killed at an arbitrary instant of its
// sending leaves the receiver receiving from everybody else.
TEST(LocalDatagramTest, ASenderKilledWhileSendingCannotBlockTheReceiver) {
  const uint32_t tag = FreshTag();
  auto receiver = LocalDatagramChannel::Open(tag, kToken, 0, 3);
  ASSERT_TRUE(receiver.ok());
  for (int trial = 0; trial < 5; ++trial) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto sender = LocalDatagramChannel::Open(tag, kToken, 1, 3);
      if (!sender.ok() || !(*sender)->Connect(0, (*receiver)->name())) _exit(3);
      const std::vector<std::byte> payload(4000, std::byte{7});
      for (;;) {
        (void)(*sender)->Send(0, Bytes("flood"), payload);
        (*sender)->Flush([](Rank) { _exit(4); });
      }
    }
    // Let it flood, then kill it wherever it is (bounded: a loaded machine may start the child
    // late, never not at all).
    int flooded = 0;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (flooded < 50 + trial * 37 && std::chrono::steady_clock::now() < give_up) {
      flooded += static_cast<int>(ReceiveAll(**receiver).size());
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the flooding child ended by itself: " << status;
    EXPECT_GT(flooded, 0);
    (void)ReceiveAll(**receiver);  // what it sent before it died, whole
    auto other = LocalDatagramChannel::Open(tag, kToken, 2, 3);
    ASSERT_TRUE(other.ok());
    ASSERT_TRUE((*other)->Connect(0, (*receiver)->name()));
    auto sent = (*other)->Send(0, Bytes("still here"), {});
    ASSERT_TRUE(sent.ok());
    ASSERT_EQ(*sent, Outcome::kSent);
    const auto got = ReceiveAll(**receiver);
    ASSERT_EQ(got.size(), 1u) << "trial " << trial;
    EXPECT_EQ(got[0], "still here");
  }
}

}  // namespace
}  // namespace rft::transport
