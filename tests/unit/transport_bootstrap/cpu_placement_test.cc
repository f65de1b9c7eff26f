// Whether the ranks of a node must share cores, for the placements launchers make: unbound
// ranks on a shared set, ranks bound one per core (mpirun, srun --cpu-bind), two bound to one
// core, and mixtures.
#include "transport/bootstrap/cpu_placement.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace rft::transport {
namespace {

TEST(CpuPlacementTest, UnboundRanksShareWhenThereAreMoreThanCpus) {
  EXPECT_FALSE(MustShareCores({{0, 1}, {0, 1}}));
  EXPECT_TRUE(MustShareCores({{0, 1}, {0, 1}, {0, 1}}));
}

// mpirun's default: each rank sees one CPU. The caller's own mask (1 CPU for 2 ranks) would
// have said "oversubscribed" and cost 4.6x in latency.
TEST(CpuPlacementTest, RanksBoundToCoresOfTheirOwnDoNotShare) {
  EXPECT_FALSE(MustShareCores({{0}, {1}}));
  EXPECT_FALSE(MustShareCores({{3}, {1}, {2}, {0}}));
}

TEST(CpuPlacementTest, RanksBoundToOneCoreShare) {
  EXPECT_TRUE(MustShareCores({{0}, {0}}));
  EXPECT_TRUE(MustShareCores({{1}, {0, 1}, {0}}));
}

TEST(CpuPlacementTest, NarrowMasksChooseFirst) {
  // Greedy in the given order would give rank 0 CPU 0 and leave rank 1 nothing.
  EXPECT_FALSE(MustShareCores({{0, 1}, {0}}));
  EXPECT_TRUE(MustShareCores({{}}));  // a rank that may run nowhere has no core of its own
  EXPECT_FALSE(MustShareCores({}));
}

TEST(CpuPlacementTest, CpuListsRoundTripAndOddLengthsAreRefused) {
  const CpuList cpus = {0, 5, 1023};
  auto decoded = DecodeCpuList(EncodeCpuList(cpus), 2);
  ASSERT_TRUE(decoded.ok()) << decoded.status().ToString();
  EXPECT_EQ(*decoded, cpus);
  std::vector<std::byte> odd(3);
  auto bad = DecodeCpuList(odd, 2);
  EXPECT_EQ(bad.status().code(), RFT_ERR_OTHER);
  EXPECT_NE(bad.status().message().find("rank 2 published a CPU list of 3 bytes"),
            std::string::npos)
      << bad.status().ToString();
}

TEST(CpuPlacementTest, OwnCpusIsThisProcessesMask) {
  const CpuList own = OwnCpus();
  ASSERT_FALSE(own.empty());
  EXPECT_TRUE(std::is_sorted(own.begin(), own.end()));
}

}  // namespace
}  // namespace rft::transport
