#include "detector/reliable_broadcast.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <deque>
#include <vector>

namespace rft::detector {
namespace {

using Actions = std::vector<BroadcastAction>;

BroadcastMessage Failure(Rank subject) {
  return BroadcastMessage{BroadcastKind::kFailure, 0, 0, 0, subject};
}
BroadcastMessage Revoke(uint32_t context, uint32_t epoch) {
  return BroadcastMessage{BroadcastKind::kRevoke, context, epoch, 0, 0};
}

std::vector<Rank> SendTargets(const Actions& actions) {
  std::vector<Rank> to;
  for (const BroadcastAction& a : actions) {
    if (const auto* send = std::get_if<SendBroadcast>(&a)) to.push_back(send->to);
  }
  return to;
}

int Deliveries(const Actions& actions) {
  int n = 0;
  for (const BroadcastAction& a : actions) n += std::holds_alternative<DeliverBroadcast>(a);
  return n;
}

TEST(ReliableBroadcastTest, BinomialNeighbours) {
  EXPECT_EQ(ReliableBroadcast(0, 1).Neighbors(), std::vector<Rank>{});
  EXPECT_EQ(ReliableBroadcast(0, 2).Neighbors(), std::vector<Rank>{1});
  EXPECT_EQ(ReliableBroadcast(0, 16).Neighbors(), (std::vector<Rank>{1, 2, 4, 8, 12, 14, 15}));
  EXPECT_EQ(ReliableBroadcast(3, 10).Neighbors(), (std::vector<Rank>{1, 2, 4, 5, 7, 9}));
}

// The control plane connects its message channel's QPs to these at start-up, each end from its
// own list: the relation must be symmetric, or one end would send into a QP the other never
// connected. They are the broadcast's neighbours while nobody failed.
TEST(ReliableBroadcastTest, StaticNeighboursAreSymmetricAndTheBroadcastsOwn) {
  EXPECT_EQ(ReliableBroadcast::StaticNeighbors(0, 1), std::vector<Rank>{});
  EXPECT_EQ(ReliableBroadcast::StaticNeighbors(1, 2), std::vector<Rank>{0});
  EXPECT_EQ(ReliableBroadcast::StaticNeighbors(0, 6), (std::vector<Rank>{1, 2, 4, 5}));
  for (Rank size : {1u, 2u, 3u, 5u, 6u, 7u, 8u, 10u, 16u, 33u, 100u}) {
    for (Rank a = 0; a < size; ++a) {
      const std::vector<Rank> of_a = ReliableBroadcast::StaticNeighbors(a, size);
      EXPECT_EQ(of_a, ReliableBroadcast(a, size).Neighbors()) << a << " of " << size;
      EXPECT_LE(of_a.size(), 2u * static_cast<size_t>(std::bit_width(size))) << a << " of " << size;
      for (Rank b : of_a) {
        const std::vector<Rank> of_b = ReliableBroadcast::StaticNeighbors(b, size);
        EXPECT_TRUE(std::binary_search(of_b.begin(), of_b.end(), a))
            << a << " lists " << b << " but not the other way, in " << size << " ranks";
      }
    }
  }
}

TEST(ReliableBroadcastTest, FailedNeighboursAreReplacedByTheLiveRing) {
  ReliableBroadcast b(0, 16);
  Actions out;
  b.OnFailure(1, &out);
  b.OnFailure(15, &out);
  EXPECT_EQ(b.Neighbors(), (std::vector<Rank>{2, 4, 8, 12, 14}));
  b.OnFailure(2, &out);
  b.OnFailure(3, &out);
  EXPECT_EQ(b.Neighbors(), (std::vector<Rank>{4, 8, 12, 14}));
  b.OnFailure(14, &out);
  EXPECT_EQ(b.Neighbors(), (std::vector<Rank>{4, 8, 12, 13}));
}

TEST(ReliableBroadcastTest, BroadcastDeliversLocallyThenSendsToEveryNeighbour) {
  ReliableBroadcast b(3, 8);
  Actions out;
  BroadcastMessage m = Failure(6);
  m.origin = 5;  // overwritten: the origin is self
  ASSERT_TRUE(b.Broadcast(m, &out));
  ASSERT_FALSE(out.empty());
  m.origin = 3;
  EXPECT_EQ(out[0], BroadcastAction(DeliverBroadcast{m}));
  EXPECT_EQ(SendTargets(out), b.Neighbors());
  out.clear();
  EXPECT_FALSE(b.Broadcast(m, &out));  // already delivered
  EXPECT_TRUE(out.empty());
}

TEST(ReliableBroadcastTest, ForwardsOnceAndNeverBackToTheSender) {
  ReliableBroadcast b(0, 8);
  Actions out;
  BroadcastMessage m = Revoke(4, 1);
  m.origin = 2;
  b.OnMessage(2, m, &out);
  EXPECT_EQ(Deliveries(out), 1);
  EXPECT_EQ(SendTargets(out), (std::vector<Rank>{1, 4, 6, 7}));
  out.clear();
  m.origin = 7;  // same key from another origin: a duplicate
  b.OnMessage(4, m, &out);
  b.OnMessage(1, m, &out);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(b.duplicates_dropped(), 2u);
  // A different subject is a different message.
  b.OnMessage(1, Failure(5), &out);
  EXPECT_EQ(Deliveries(out), 1);
}

TEST(ReliableBroadcastTest, StaleEpochIsDroppedAndCounted) {
  ReliableBroadcast b(0, 4);
  Actions out;
  b.OnMessage(1, Revoke(9, 2), &out);
  EXPECT_EQ(b.log_size(), 1u);
  out.clear();
  b.SetContextEpoch(9, 3);
  EXPECT_EQ(b.log_size(), 0u);  // pruned
  b.OnMessage(1, Revoke(9, 2), &out);
  EXPECT_FALSE(b.Broadcast(Revoke(9, 1), &out));
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(b.stale_dropped(), 2u);
  b.SetContextEpoch(9, 1);  // lowering is ignored
  EXPECT_EQ(b.ContextEpoch(9), 3u);
  b.OnMessage(1, Revoke(9, 3), &out);  // current epoch passes
  b.OnMessage(1, Revoke(8, 0), &out);  // other contexts are untouched
  EXPECT_EQ(Deliveries(out), 2);
}

TEST(ReliableBroadcastTest, NewRingNeighbourGetsTheLog) {
  // Rank 5 of 12: neighbours 1,3,4,6,7,9 (±1, ±2, ±4). If 6 and 7 fail, 8 becomes the ring
  // successor; it was no neighbour before, so it gets everything 5 delivered.
  ReliableBroadcast b(5, 12);
  Actions out;
  b.OnMessage(4, Failure(6), &out);
  b.OnMessage(4, Revoke(2, 0), &out);
  out.clear();
  b.OnFailure(6, &out);  // successor becomes 7: at distance 2, a neighbour all along
  EXPECT_TRUE(out.empty());
  b.OnFailure(7, &out);
  EXPECT_EQ(SendTargets(out), (std::vector<Rank>{8, 8}));
  // Known failed ranks receive nothing.
  out.clear();
  b.OnMessage(4, Failure(11), &out);
  for (Rank to : SendTargets(out)) {
    EXPECT_NE(to, 6u);
    EXPECT_NE(to, 7u);
  }
}

TEST(ReliableBroadcastTest, FloodReachesEveryoneWithinLogHops) {
  // A synchronous flood over 1000 processes: every one delivers once, within ⌈log2 n⌉ rounds.
  constexpr Rank kSize = 1000;
  std::vector<ReliableBroadcast> nodes;
  for (Rank r = 0; r < kSize; ++r) nodes.emplace_back(r, kSize);
  std::vector<int> hops(kSize, -1);
  std::deque<std::pair<Rank, SendBroadcast>> wire;  // (from, send)
  Actions out;
  ASSERT_TRUE(nodes[17].Broadcast(Failure(999), &out));
  hops[17] = 0;
  for (const BroadcastAction& a : out) {
    if (const auto* s = std::get_if<SendBroadcast>(&a)) wire.emplace_back(17, *s);
  }
  while (!wire.empty()) {
    auto [from, send] = wire.front();
    wire.pop_front();
    out.clear();
    nodes[send.to].OnMessage(from, send.message, &out);
    for (const BroadcastAction& a : out) {
      if (std::holds_alternative<DeliverBroadcast>(a)) {
        ASSERT_EQ(hops[send.to], -1);
        hops[send.to] = hops[from] + 1;
      } else {
        wire.emplace_back(send.to, std::get<SendBroadcast>(a));
      }
    }
  }
  for (Rank r = 0; r < kSize; ++r) {
    ASSERT_GE(hops[r], 0) << "rank " << r;
    EXPECT_LE(hops[r], 10) << "rank " << r;  // ⌈log2 1000⌉
  }
}

TEST(BroadcastCodecTest, RoundTrip) {
  const BroadcastMessage m{BroadcastKind::kRevoke, 0xa1b2c3d4, 77, 99'999, 0x0102030405060708};
  std::array<std::byte, kBroadcastMessageSize> bytes;
  EncodeBroadcastMessage(m, bytes);
  EXPECT_EQ(bytes[0], std::byte{2});
  EXPECT_EQ(bytes[4], std::byte{0xd4});  // little-endian
  EXPECT_EQ(bytes[16], std::byte{0x08});
  auto decoded = DecodeBroadcastMessage(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, m);
  const BroadcastMessage aborted{BroadcastKind::kAborted, 0, 0, 4, 9};
  EncodeBroadcastMessage(aborted, bytes);
  EXPECT_EQ(bytes[0], std::byte{3});
  decoded = DecodeBroadcastMessage(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, aborted);
}

TEST(BroadcastCodecTest, RejectsMalformedInputNamingTheField) {
  std::array<std::byte, kBroadcastMessageSize> good;
  EncodeBroadcastMessage(Failure(3), good);
  auto expect_error = [](std::span<const std::byte> bytes, const char* needle) {
    auto decoded = DecodeBroadcastMessage(bytes);
    ASSERT_FALSE(decoded.ok());
    EXPECT_EQ(decoded.status().code(), RFT_ERR_ARG);
    EXPECT_NE(decoded.status().message().find(needle), std::string::npos)
        << decoded.status().message();
  };
  expect_error(std::span<const std::byte>(good).first(23), "length 23");
  std::array<std::byte, kBroadcastMessageSize + 1> longer{};
  expect_error(longer, "length 25");
  expect_error({}, "length 0");
  auto bad = good;
  bad[0] = std::byte{0};
  expect_error(bad, "unknown kind 0");
  bad = good;
  bad[0] = std::byte{4};
  expect_error(bad, "unknown kind 4");
  bad = good;  // an abort's subject is a rank too
  bad[0] = std::byte{3};
  std::fill(bad.begin() + 16, bad.end(), std::byte{0xff});
  expect_error(bad, "abort subject");
  bad = good;
  bad[2] = std::byte{1};
  expect_error(bad, "reserved byte 2");
  bad = good;
  std::fill(bad.begin() + 12, bad.begin() + 16, std::byte{0xff});
  expect_error(bad, "origin 4294967295");
  bad = good;
  std::fill(bad.begin() + 16, bad.end(), std::byte{0xff});
  expect_error(bad, "failure subject");
}

// Growth from 4 to 8 ranks: 0's neighbours go from {1, 2, 3} to {1, 2, 4, 6, 7}; the new ones
// get the whole log, and messages from ranks beyond the size (grown before this process) are
// delivered and forwarded.
TEST(ReliableBroadcastTest, GrowthSendsTheLogToNewNeighbours) {
  ReliableBroadcast b(0, 4);
  Actions out;
  b.OnMessage(1, Failure(3), &out);
  out.clear();
  b.Grow(8, &out);
  EXPECT_EQ(b.size(), 8u);
  EXPECT_EQ(b.Neighbors(), (std::vector<Rank>{1, 2, 4, 6, 7}));
  EXPECT_EQ(SendTargets(out), (std::vector<Rank>{4, 6, 7}));

  ReliableBroadcast old(1, 4);
  out.clear();
  old.OnMessage(5, Failure(6), &out);
  EXPECT_EQ(Deliveries(out), 1);
  EXPECT_EQ(SendTargets(out), (std::vector<Rank>{0, 2, 3}));
}
}  // namespace
}  // namespace rft::detector
