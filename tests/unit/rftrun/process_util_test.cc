#include "tools/rftrun/process_util.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace rft::rftrun {
namespace {

// An abort request must not be laid on a process that is already ending by itself (its crash
// would read as "aborted on request"): IsExiting tells the two apart.
TEST(ProcessUtilTest, IsExitingTellsARunningChildFromAnEndedOne) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  EXPECT_FALSE(IsExiting(child));
  ASSERT_EQ(kill(child, SIGKILL), 0);
  // Until it is reaped, the child stays a zombie: still exiting, as rftrun sees it.
  siginfo_t info{};
  ASSERT_EQ(waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  EXPECT_TRUE(IsExiting(child));
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFSIGNALED(status));
  // Reaped: gone, which also counts as ended.
  EXPECT_TRUE(IsExiting(child));
}

TEST(ProcessUtilTest, IsExitingSaysARunningProcessIsNot) { EXPECT_FALSE(IsExiting(getpid())); }

}  // namespace
}  // namespace rft::rftrun
