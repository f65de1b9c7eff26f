#include "transport/dataplane/peer_table.h"

#include <gtest/gtest.h>

#include <array>
#include <random>
#include <vector>

namespace rft::transport {
namespace {

TEST(PeerTableTest, NewEntriesAreOnUcxWithoutAProcess) {
  PeerTable peers(/*self=*/1);
  EXPECT_EQ(peers.size(), 0u);
  peers.Grow(4);
  ASSERT_EQ(peers.size(), 4u);
  EXPECT_EQ(peers.ucx_peers(), 3u);  // every rank but this one
  for (const Peer& peer : peers) {
    EXPECT_EQ(peer.path, Path::kUcx);
    EXPECT_FALSE(peer.failure_completed);
    EXPECT_FALSE(peer.same_node_pull);
    EXPECT_EQ(peer.pidfd, -1);
    EXPECT_TRUE(peer.pending.empty());
    EXPECT_TRUE(peer.direct_queue.empty());
  }
  EXPECT_TRUE(peers.Contains(3));
  EXPECT_FALSE(peers.Contains(4));
}

TEST(PeerTableTest, SetPathSaysWhenTheCountOnUcxChanged) {
  PeerTable peers(/*self=*/0);
  peers.Grow(3);
  EXPECT_TRUE(peers.SetPath(1, Path::kRing));
  EXPECT_EQ(peers.ucx_peers(), 1u);
  EXPECT_FALSE(peers.SetPath(1, Path::kVerbs));  // from one direct path to another
  EXPECT_EQ(peers[1].path, Path::kVerbs);
  EXPECT_FALSE(peers.SetPath(0, Path::kRing));  // this process is never counted
  EXPECT_EQ(peers.ucx_peers(), 1u);
  EXPECT_TRUE(peers.SetPath(1, Path::kUcx));
  EXPECT_EQ(peers.ucx_peers(), 2u);
  EXPECT_FALSE(peers.SetPath(2, Path::kUcx));
}

TEST(PeerTableTest, GrowingKeepsEveryEntryAndTheOrderOfItsLists) {
  PeerTable peers(/*self=*/2);
  peers.Grow(3);
  std::array<Request, 6> requests{};
  for (size_t i = 0; i < requests.size(); ++i) {
    requests[i].peer_link.request = &requests[i];
    requests[i].ring_link.request = &requests[i];
    peers[i % 2].pending.push_back(&requests[i].peer_link);
    peers[i % 2].direct_queue.push_back(&requests[i].ring_link);
  }
  peers[0].failure_completed = true;
  peers[1].transport_failed = true;
  peers[1].same_node_pull = true;
  peers[1].pid = 4242;
  peers[1].pidfd = 17;
  EXPECT_TRUE(peers.SetPath(1, Path::kRing));

  peers.Grow(6);
  ASSERT_EQ(peers.size(), 6u);
  EXPECT_EQ(peers.ucx_peers(), 4u);  // 0, 3, 4, 5
  EXPECT_TRUE(peers[0].failure_completed);
  EXPECT_TRUE(peers[1].transport_failed);
  EXPECT_TRUE(peers[1].same_node_pull);
  EXPECT_EQ(peers[1].pid, 4242);
  EXPECT_EQ(peers[1].pidfd, 17);
  EXPECT_EQ(peers[1].path, Path::kRing);
  for (Rank r = 0; r < 2; ++r) {
    std::vector<Request*> pending, queued;
    for (PeerLink* link = peers[r].pending.front(); link != nullptr;
         link = peers[r].pending.next(link)) {
      pending.push_back(link->request);
    }
    for (RingLink* link = peers[r].direct_queue.front(); link != nullptr;
         link = peers[r].direct_queue.next(link)) {
      queued.push_back(link->request);
    }
    const std::vector<Request*> expected = {&requests[r], &requests[r + 2], &requests[r + 4]};
    EXPECT_EQ(pending, expected) << "rank " << r;
    EXPECT_EQ(queued, expected) << "rank " << r;
  }
  for (Rank r = 3; r < 6; ++r) {
    EXPECT_EQ(peers[r].path, Path::kUcx);
    EXPECT_EQ(peers[r].pidfd, -1);
    EXPECT_TRUE(peers[r].pending.empty());
  }
  peers.Grow(4);  // not above the size: nothing happens
  EXPECT_EQ(peers.size(), 6u);
  // Unlinked before the requests go (the lists point into them).
  for (Peer& peer : peers) {
    while (PeerLink* link = peer.pending.front()) peer.pending.erase(link);
    while (RingLink* link = peer.direct_queue.front()) peer.direct_queue.erase(link);
  }
}

// The count of peers on UCX against a model, over random paths and growth.
TEST(PeerTableTest, TheCountOnUcxFollowsAModel) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    std::mt19937 random(seed);
    const Rank self = random() % 8;
    PeerTable peers(self);
    std::vector<Path> model;
    for (int step = 0; step < 2000; ++step) {
      if (model.size() <= self || random() % 50 == 0) {
        const uint32_t size = static_cast<uint32_t>(model.size()) + 1 + random() % 4;
        peers.Grow(size);
        model.resize(size, Path::kUcx);
      } else {
        const Rank peer = random() % model.size();
        const Path path = static_cast<Path>(random() % 3);
        const bool changed = peers.SetPath(peer, path);
        const bool expected = peer != self && (model[peer] == Path::kUcx) != (path == Path::kUcx);
        model[peer] = path;
        ASSERT_EQ(changed, expected) << "seed " << seed << " step " << step;
      }
      uint32_t on_ucx = 0;
      for (Rank r = 0; r < model.size(); ++r) on_ucx += r != self && model[r] == Path::kUcx;
      ASSERT_EQ(peers.ucx_peers(), on_ucx) << "seed " << seed << " step " << step;
    }
  }
}

}  // namespace
}  // namespace rft::transport
