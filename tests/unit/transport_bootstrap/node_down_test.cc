// A node-down event that names no process fails every rank of that node (it used to be
// dropped): the expansion from the launcher's node map.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "transport/bootstrap/bootstrap.h"

namespace rft::transport {
namespace {

TEST(NodeDownTest, EveryRankOfTheNodeButThisOne) {
  const std::map<std::string, RankSet> ranks_by_host = {{"n1", RankSet{0, 1, 2}},
                                                        {"n2", RankSet{3, 4}}};
  EXPECT_EQ(RanksOnDownNode(ranks_by_host, "n2", 0), (RankSet{3, 4}));
  EXPECT_EQ(RanksOnDownNode(ranks_by_host, "n1", 1), (RankSet{0, 2}));
  EXPECT_TRUE(RanksOnDownNode(ranks_by_host, "n3", 0).empty());  // not a node of this job
  EXPECT_TRUE(RanksOnDownNode(ranks_by_host, "", 0).empty());    // the event named none
}

}  // namespace
}  // namespace rft::transport
