#include "ulfm_api/context_ids.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>
#include <vector>

namespace rft::api {
namespace {

// Every member proposes, the proposals are combined (as the allreduce does), every member takes.
std::vector<ContextIds::Allocation> Agree(std::vector<ContextIds*> members) {
  ContextIds::Proposal combined = members.front()->Propose();
  for (ContextIds* member : members) ContextIds::Combine(member->Propose(), &combined);
  std::vector<ContextIds::Allocation> taken;
  for (ContextIds* member : members) {
    auto allocation = member->Take(combined);
    EXPECT_TRUE(allocation.ok()) << allocation.status().ToString();
    if (allocation.ok()) taken.push_back(*allocation);
  }
  return taken;
}

TEST(ContextIdsTest, WorldAndSelfAreTakenAndNeverReleased) {
  ContextIds ids;
  EXPECT_TRUE(ids.IsTaken(ContextIds::kWorldPair));
  EXPECT_TRUE(ids.IsTaken(ContextIds::kSelfPair));
  EXPECT_EQ(ids.pairs_taken(), 2u);
  EXPECT_EQ(ids.Release(ContextIds::kWorldPair).code(), RFT_ERR_ARG);
  EXPECT_EQ(ids.Release(ContextIds::kSelfPair).code(), RFT_ERR_ARG);
  EXPECT_EQ(ids.Release(7).code(), RFT_ERR_ARG);  // never taken
}

TEST(ContextIdsTest, MembersTakeTheLowestPairFreeAtAllOfThem) {
  ContextIds a, b;
  // a holds pairs 2 and 3 (with others), b only pair 2: the next common one is 4.
  ContextIds c;
  Agree({&a, &b});  // pair 2 at a and b
  Agree({&a, &c});  // pair 3 at a and c
  auto both = Agree({&a, &b});
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(both[0].pair, 4u);
  EXPECT_EQ(both[1].pair, 4u);
  EXPECT_EQ(both[0].epoch, both[1].epoch);
  EXPECT_EQ(both[0].p2p_context(), 8u);
  EXPECT_EQ(both[0].collective_context(), 9u);
}

TEST(ContextIdsTest, AReusedPairGetsAnEpochAboveEveryMembersOld) {
  ContextIds a, b;
  const auto first = Agree({&a, &b});
  ASSERT_TRUE(a.Release(first[0].pair).ok());
  ASSERT_TRUE(b.Release(first[0].pair).ok());
  const auto second = Agree({&a, &b});
  EXPECT_EQ(second[0].pair, first[0].pair);
  EXPECT_GT(second[0].epoch, first[0].epoch);
  // A member with a higher epoch lifts everyone's.
  ContextIds c;
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(c.Release(Agree({&c})[0].pair).ok());
  const auto third = Agree({&a, &c});
  EXPECT_GT(third[0].epoch, c.epoch() - 1);
  EXPECT_EQ(a.epoch(), c.epoch());
}

TEST(ContextIdsTest, ARefusalCombinesToEveryMember) {
  ContextIds a, b;
  ContextIds::Proposal pa = a.Propose();
  ContextIds::Proposal pb = b.Propose();
  pb.refused = 1;
  ContextIds::Combine(pb, &pa);
  EXPECT_EQ(pa.refused, 1u);
}

TEST(ContextIdsTest, RunningOutNamesTheLimit) {
  ContextIds ids;
  for (uint32_t i = 2; i < ContextIds::kPairs; ++i) ASSERT_TRUE(ids.Take(ids.Propose()).ok());
  auto none = ids.Take(ids.Propose());
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), RFT_ERR_OTHER);
  EXPECT_NE(none.status().message().find("2046 communicators"), std::string::npos)
      << none.status().message();
  ASSERT_TRUE(ids.Release(100).ok());
  auto again = ids.Take(ids.Propose());
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->pair, 100u);
}

// Random communicator lives among 6 processes: no process ever holds two live communicators on
// one pair, and a new life of a pair has an epoch above every life its members ever had on it
// (so the data plane can always tell them apart).
TEST(ContextIdsTest, RandomLivesNeverCollide) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 random(seed);
    constexpr int kProcesses = 6;
    std::vector<ContextIds> ids(kProcesses);
    struct Life {
      std::vector<int> members;
      ContextIds::Allocation allocation;
      std::set<int> freed;
    };
    std::vector<Life> lives;
    // [process][pair]: the highest epoch that process has used on the pair.
    std::vector<std::map<uint32_t, uint32_t>> used(kProcesses);
    for (int step = 0; step < 300; ++step) {
      if (random() % 3 != 0 || lives.empty()) {
        std::vector<int> members;
        for (int p = 0; p < kProcesses; ++p) {
          if (random() % 2) members.push_back(p);
        }
        if (members.empty()) continue;
        std::vector<ContextIds*> pointers;
        for (int p : members) pointers.push_back(&ids[p]);
        const auto taken = Agree(pointers);
        ASSERT_EQ(taken.size(), members.size()) << "seed " << seed;
        const ContextIds::Allocation allocation = taken[0];
        for (size_t i = 0; i < members.size(); ++i) {
          ASSERT_EQ(taken[i].pair, allocation.pair) << "seed " << seed;
          ASSERT_EQ(taken[i].epoch, allocation.epoch) << "seed " << seed;
          auto [it, fresh] = used[members[i]].try_emplace(allocation.pair, allocation.epoch);
          if (!fresh) {
            ASSERT_GT(allocation.epoch, it->second) << "seed " << seed << ": epoch reused";
            it->second = allocation.epoch;
          }
        }
        // No member holds another live communicator on this pair.
        for (const Life& life : lives) {
          if (life.allocation.pair != allocation.pair) continue;
          for (int p : members) {
            const bool holds = std::count(life.members.begin(), life.members.end(), p) > 0 &&
                               life.freed.count(p) == 0;
            ASSERT_FALSE(holds) << "seed " << seed << ": process " << p << " holds pair "
                                << allocation.pair << " twice";
          }
        }
        lives.push_back({members, allocation, {}});
      } else {
        // A member frees its handle of a random life (frees are local, in any order).
        Life& life = lives[random() % lives.size()];
        const int p = life.members[random() % life.members.size()];
        if (life.freed.insert(p).second) {
          ASSERT_TRUE(ids[p].Release(life.allocation.pair).ok()) << "seed " << seed;
        }
      }
    }
  }
}

// ishrink's reservation: two members reserve, each creates another communicator meanwhile (one
// of them twice), and both still take the same pair and epoch, one nobody took meanwhile.
TEST(ContextIdsTest, AReservationGivesEveryMemberTheSameContextsWhateverHappensMeanwhile) {
  ContextIds a, b;
  const ContextIds::Proposal reserved_a = a.Reserve();
  const ContextIds::Proposal reserved_b = b.Reserve();
  EXPECT_EQ(a.pairs_taken(), 2 + ContextIds::kReservedPairs);
  // Meanwhile: a creates two communicators with a third process (c), b one.
  ContextIds c;
  for (int i = 0; i < 2; ++i) {
    ContextIds::Proposal combined = a.Propose();
    ContextIds::Combine(c.Propose(), &combined);
    auto taken_a = a.Take(combined);
    auto taken_c = c.Take(combined);
    ASSERT_TRUE(taken_a.ok() && taken_c.ok());
    EXPECT_GE(taken_a->pair, 2 + ContextIds::kReservedPairs) << "took a reserved pair";
  }
  ASSERT_TRUE(b.Take(b.Propose()).ok());
  ContextIds::Proposal combined = reserved_a;
  ContextIds::Combine(reserved_b, &combined);
  auto at_a = a.TakeReserved(reserved_a, combined);
  auto at_b = b.TakeReserved(reserved_b, combined);
  ASSERT_TRUE(at_a.ok() && at_b.ok());
  EXPECT_EQ(at_a->pair, at_b->pair);
  EXPECT_EQ(at_a->epoch, at_b->epoch);
  EXPECT_EQ(at_a->pair, 2u);  // the lowest reserved by both
  EXPECT_GT(a.epoch(), 0u);
  // The rest of the reservation is free again: 2 predefined, 2 made meanwhile, 1 shrunk.
  EXPECT_EQ(a.pairs_taken(), 5u);
  EXPECT_EQ(b.pairs_taken(), 4u);
}

TEST(ContextIdsTest, ReservationsWithNothingInCommonFailTheSameEverywhere) {
  ContextIds a, b;
  ContextIds::Proposal reserved_a = a.Reserve(1);
  ContextIds::Proposal reserved_b = b.Reserve(2);
  reserved_b.free[0] &= ~reserved_a.free[0];  // b's reservation lacks a's only pair
  ContextIds::Proposal combined = reserved_a;
  ContextIds::Combine(reserved_b, &combined);
  EXPECT_EQ(a.TakeReserved(reserved_a, combined).status().code(), RFT_ERR_OTHER);
  EXPECT_EQ(a.pairs_taken(), 2u);               // given back
  a.CancelReservation(ContextIds::Proposal{});  // nothing reserved: nothing changes
  EXPECT_EQ(a.pairs_taken(), 2u);
}

// A replacement takes the pair its spawners agreed on without it: afterwards that pair is taken
// and its own allocations use higher epochs; a taken or out-of-range pair is refused.
TEST(ContextIdsTest, AReplacementTakesTheAgreedPairExactly) {
  ContextIds survivor, replacement;
  const std::vector<ContextIds::Allocation> taken = Agree({&survivor});
  ASSERT_EQ(taken.size(), 1u);
  ASSERT_TRUE(replacement.TakeExact(taken[0]).ok());
  EXPECT_TRUE(replacement.IsTaken(taken[0].pair));
  EXPECT_EQ(replacement.epoch(), taken[0].epoch);
  const std::vector<ContextIds::Allocation> next = Agree({&survivor, &replacement});
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0].pair, next[1].pair);
  EXPECT_NE(next[0].pair, taken[0].pair);
  EXPECT_GT(next[0].epoch, taken[0].epoch);
  EXPECT_EQ(replacement.TakeExact(taken[0]).code(), RFT_ERR_ARG);
  EXPECT_EQ(replacement.TakeExact({.pair = ContextIds::kWorldPair, .epoch = 1}).code(),
            RFT_ERR_ARG);
  EXPECT_EQ(replacement.TakeExact({.pair = ContextIds::kPairs, .epoch = 1}).code(), RFT_ERR_ARG);
}
}  // namespace
}  // namespace rft::api
