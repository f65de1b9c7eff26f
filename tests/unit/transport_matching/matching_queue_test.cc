#include "transport/matching/matching_queue.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <random>
#include <vector>

namespace rft::transport {
namespace {

// Owns the nodes a test hands to the queue.
struct Nodes {
  std::deque<PostedReceive> receives;
  std::deque<UnexpectedMessage> messages;
  PostedReceive* Receive(Rank source, int32_t tag) {
    receives.emplace_back();
    receives.back().source = source;
    receives.back().tag = tag;
    return &receives.back();
  }
  UnexpectedMessage* Message(Rank source, int32_t tag) {
    messages.emplace_back();
    messages.back().source = source;
    messages.back().tag = tag;
    return &messages.back();
  }
};

TEST(MatchingQueueTest, MessagesFromOneSourceMatchInArrivalOrder) {
  MatchingQueue q;
  Nodes n;
  UnexpectedMessage* first = n.Message(1, 5);
  UnexpectedMessage* second = n.Message(1, 5);
  q.AddUnexpected(first);
  q.AddUnexpected(second);
  EXPECT_EQ(q.MatchPosted(1, 5), first);
  EXPECT_EQ(q.MatchPosted(1, 5), second);
  EXPECT_EQ(q.MatchPosted(1, 5), nullptr);
}

TEST(MatchingQueueTest, ReceivesMatchInPostedOrderAndEarlierWildcardWins) {
  MatchingQueue q;
  Nodes n;
  PostedReceive* wildcard = n.Receive(kAnySource, kAnyTag);
  PostedReceive* specific = n.Receive(2, 7);
  q.AddPosted(wildcard);
  q.AddPosted(specific);
  EXPECT_EQ(q.MatchArrival(2, 7), wildcard);
  EXPECT_EQ(q.MatchArrival(2, 7), specific);
  EXPECT_EQ(q.MatchArrival(2, 7), nullptr);
}

TEST(MatchingQueueTest, SpecificTagAndSourceNeverMatchOthers) {
  MatchingQueue q;
  Nodes n;
  q.AddPosted(n.Receive(3, 1));
  EXPECT_EQ(q.MatchArrival(3, 2), nullptr);
  EXPECT_EQ(q.MatchArrival(4, 1), nullptr);
  q.AddUnexpected(n.Message(3, 2));
  EXPECT_EQ(q.MatchPosted(3, 1), nullptr);
  EXPECT_EQ(q.MatchPosted(2, 2), nullptr);
  EXPECT_NE(q.MatchPosted(kAnySource, 2), nullptr);
}

TEST(MatchingQueueTest, AnyTagFromOneSourceSkipsOtherSources) {
  MatchingQueue q;
  Nodes n;
  UnexpectedMessage* from0 = n.Message(0, 9);
  UnexpectedMessage* from1 = n.Message(1, 4);
  q.AddUnexpected(from0);
  q.AddUnexpected(from1);
  EXPECT_EQ(q.MatchPosted(1, kAnyTag), from1);
  EXPECT_EQ(q.unexpected_size(), 1u);
}

TEST(MatchingQueueTest, ProbeDoesNotRemove) {
  MatchingQueue q;
  Nodes n;
  UnexpectedMessage* m = n.Message(0, 1);
  q.AddUnexpected(m);
  EXPECT_EQ(q.Probe(kAnySource, kAnyTag), m);
  EXPECT_EQ(q.Probe(0, 1), m);
  EXPECT_EQ(q.Probe(0, 2), nullptr);
  EXPECT_EQ(q.unexpected_size(), 1u);
  EXPECT_EQ(q.MatchPosted(0, 1), m);
}

TEST(MatchingQueueTest, CancelRemovesOnlyWhatIsStillQueued) {
  MatchingQueue q;
  Nodes n;
  PostedReceive* a = n.Receive(kAnySource, 1);
  PostedReceive* b = n.Receive(0, 1);
  q.AddPosted(a);
  q.AddPosted(b);
  EXPECT_TRUE(q.HasAnySourceReceive());
  EXPECT_TRUE(q.Cancel(a));
  EXPECT_FALSE(q.Cancel(a));
  EXPECT_FALSE(q.HasAnySourceReceive());
  EXPECT_EQ(q.MatchArrival(0, 1), b);
  EXPECT_FALSE(q.Cancel(b));  // already matched
}

TEST(MatchingQueueTest, FailureRemovesNamedReceivesAndKeepsWildcardsAndData) {
  MatchingQueue q;
  Nodes n;
  PostedReceive* named1 = n.Receive(4, 1);
  PostedReceive* wildcard = n.Receive(kAnySource, 1);
  PostedReceive* other = n.Receive(5, 1);
  PostedReceive* named2 = n.Receive(4, kAnyTag);
  for (PostedReceive* r : {named1, wildcard, other, named2}) q.AddPosted(r);
  q.AddUnexpected(n.Message(4, 2));
  std::vector<PostedReceive*> removed;
  q.RemovePostedFrom(4, [&](PostedReceive* r) { removed.push_back(r); });
  EXPECT_EQ(removed, (std::vector<PostedReceive*>{named1, named2}));
  EXPECT_EQ(q.posted_size(), 2u);
  EXPECT_TRUE(q.HasAnySourceReceive());
  EXPECT_EQ(q.unexpected_size(), 1u);  // what rank 4 sent before failing is still there
}

TEST(MatchingQueueTest, PurgeEmptiesBothQueues) {
  MatchingQueue q;
  Nodes n;
  q.AddPosted(n.Receive(kAnySource, 3));
  q.AddPosted(n.Receive(1, 3));
  q.AddUnexpected(n.Message(2, 4));
  int unexpected = 0;
  int posted = 0;
  q.Purge([&](UnexpectedMessage*) { ++unexpected; }, [&](PostedReceive*) { ++posted; });
  EXPECT_EQ(unexpected, 1);
  EXPECT_EQ(posted, 2);
  EXPECT_EQ(q.posted_size(), 0u);
  EXPECT_EQ(q.unexpected_size(), 0u);
  EXPECT_FALSE(q.HasAnySourceReceive());
}

// The reference: two vectors scanned linearly with the MPI rules, written independently.
struct Model {
  struct Entry {
    Rank source;
    int32_t tag;
    int id;
  };
  std::vector<Entry> posted;
  std::vector<Entry> unexpected;
  static bool Match(const Entry& want, Rank source, int32_t tag) {
    return (want.source == kAnySource || want.source == source) &&
           (want.tag == kAnyTag || want.tag == tag);
  }
  int Arrive(Rank source, int32_t tag, int id) {
    for (size_t i = 0; i < posted.size(); ++i) {
      if (Match(posted[i], source, tag)) {
        const int matched = posted[i].id;
        posted.erase(posted.begin() + static_cast<long>(i));
        return matched;
      }
    }
    unexpected.push_back({source, tag, id});
    return -1;
  }
  int Post(Rank source, int32_t tag, int id) {
    for (size_t i = 0; i < unexpected.size(); ++i) {
      if (Match({source, tag, 0}, unexpected[i].source, unexpected[i].tag)) {
        const int matched = unexpected[i].id;
        unexpected.erase(unexpected.begin() + static_cast<long>(i));
        return matched;
      }
    }
    posted.push_back({source, tag, id});
    return -1;
  }
};

// The operation id rides in the node's owner pointer (no allocation to track).
void* IdTag(int id) { return reinterpret_cast<void*>(static_cast<intptr_t>(id) + 1); }
int IdOf(const void* owner) { return static_cast<int>(reinterpret_cast<intptr_t>(owner) - 1); }

TEST(MatchingQueueTest, AgreesWithAReferenceModelOnRandomSchedules) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed) + " (replay: set this seed in the loop)");
    std::mt19937 rng(seed);
    MatchingQueue q;
    Model model;
    std::deque<PostedReceive> receive_nodes;
    std::deque<UnexpectedMessage> message_nodes;
    std::vector<PostedReceive*> queued_receives;  // candidates for Cancel
    const Rank sources = 1 + rng() % 5;
    const int32_t tags = 1 + static_cast<int32_t>(rng() % 4);
    for (int op = 0; op < 2000; ++op) {
      const Rank source = rng() % sources;
      const int32_t tag = static_cast<int32_t>(rng() % static_cast<uint32_t>(tags));
      const int id = op;
      switch (rng() % 5) {
        case 0:
        case 1: {  // a message arrives
          PostedReceive* r = q.MatchArrival(source, tag);
          const int expected = model.Arrive(source, tag, id);
          ASSERT_EQ(r == nullptr ? -1 : IdOf(r->owner), expected) << "op " << op;
          if (r == nullptr) {
            message_nodes.emplace_back();
            UnexpectedMessage* m = &message_nodes.back();
            m->source = source;
            m->tag = tag;
            m->owner = IdTag(id);
            q.AddUnexpected(m);
          }
          break;
        }
        case 2:
        case 3: {  // a receive is posted, sometimes with wildcards
          const Rank want_source = rng() % 3 == 0 ? kAnySource : source;
          const int32_t want_tag = rng() % 3 == 0 ? kAnyTag : tag;
          UnexpectedMessage* m = q.MatchPosted(want_source, want_tag);
          const int expected = model.Post(want_source, want_tag, id);
          ASSERT_EQ(m == nullptr ? -1 : IdOf(m->owner), expected) << "op " << op;
          if (m == nullptr) {
            receive_nodes.emplace_back();
            PostedReceive* r = &receive_nodes.back();
            r->source = want_source;
            r->tag = want_tag;
            r->owner = IdTag(id);
            q.AddPosted(r);
            queued_receives.push_back(r);
          }
          break;
        }
        case 4: {  // cancel a random receive (it may have matched already)
          if (queued_receives.empty()) break;
          const size_t pick = rng() % queued_receives.size();
          PostedReceive* r = queued_receives[pick];
          const int rid = IdOf(r->owner);
          const auto it = std::find_if(model.posted.begin(), model.posted.end(),
                                       [&](const Model::Entry& e) { return e.id == rid; });
          const bool in_model = it != model.posted.end();
          ASSERT_EQ(q.Cancel(r), in_model) << "op " << op;
          if (in_model) model.posted.erase(it);
          queued_receives.erase(queued_receives.begin() + static_cast<long>(pick));
          break;
        }
      }
      ASSERT_EQ(q.posted_size(), model.posted.size());
      ASSERT_EQ(q.unexpected_size(), model.unexpected.size());
      const bool any = std::any_of(model.posted.begin(), model.posted.end(),
                                   [](const Model::Entry& e) { return e.source == kAnySource; });
      ASSERT_EQ(q.HasAnySourceReceive(), any);
    }
    size_t purged = 0;
    q.Purge([&](UnexpectedMessage*) { ++purged; }, [&](PostedReceive*) { ++purged; });
    ASSERT_EQ(purged, model.posted.size() + model.unexpected.size());
  }
}

}  // namespace
}  // namespace rft::transport
