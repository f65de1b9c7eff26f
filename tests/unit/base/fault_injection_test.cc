#include "base/fault_injection.h"

#include <gtest/gtest.h>

#include <string>

namespace rft::fault {
namespace {

TEST(FaultInjectionTest, ArmsExactlyTheNamedPointsAtTheNamedRanks) {
  ASSERT_TRUE(Arm("spawn.launched@0,merge.confirming@17").ok());
  EXPECT_TRUE(Armed("spawn.launched", 0));
  EXPECT_TRUE(Armed("merge.confirming", 17));
  EXPECT_FALSE(Armed("spawn.launched", 17));
  EXPECT_FALSE(Armed("merge.confirming", 0));
  // Arming again replaces; empty disarms.
  ASSERT_TRUE(Arm("merge.confirming@1").ok());
  EXPECT_FALSE(Armed("spawn.launched", 0));
  EXPECT_TRUE(Armed("merge.confirming", 1));
  ASSERT_TRUE(Arm("").ok());
  EXPECT_FALSE(Armed("merge.confirming", 1));
}

TEST(FaultInjectionTest, BadEntriesAreRefusedNamingThemAndLeaveTheArmedPointsAlone) {
  ASSERT_TRUE(Arm("spawn.launched@3").ok());
  for (const char* bad : {"spawn.launch@0", "spawn.launched", "spawn.launched@", "spawn.launched@x",
                          "spawn.launched@-1", "spawn.launched@4294967295", "@2",
                          "spawn.launched@1,,merge.confirming@2", "merge.confirming@2 "}) {
    const Status status = Arm(bad);
    EXPECT_EQ(status.code(), RFT_ERR_ARG) << bad;
    EXPECT_NE(status.message().find("expected <point>@<job rank>"), std::string::npos) << bad;
    EXPECT_NE(status.message().find("spawn.launched, merge.confirming"), std::string::npos);
  }
  EXPECT_TRUE(Armed("spawn.launched", 3));
}

TEST(FaultInjectionTest, AFailingPointNamesItselfInItsError) {
  ASSERT_TRUE(Arm("verbs.offer.fails@2").ok());
  EXPECT_TRUE(Armed("verbs.offer.fails", 2));
  const Status failed = Failure("verbs.offer.fails");
  EXPECT_EQ(failed.code(), RFT_ERR_OTHER);
  EXPECT_NE(failed.message().find("fault injected at verbs.offer.fails"), std::string::npos);
  ASSERT_TRUE(Arm("").ok());
}

TEST(FaultInjectionDeathTest, DieEndsTheProcessBySigkillNamingThePoint) {
  EXPECT_EXIT(Die("merge.confirming"), ::testing::KilledBySignal(SIGKILL),
              "fault injected at merge.confirming");
}

}  // namespace
}  // namespace rft::fault
