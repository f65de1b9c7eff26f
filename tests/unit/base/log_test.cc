#include "base/log.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace rft::log {
namespace {

config::EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

// Sends log lines into a pipe for the life of the object.
class LogCapture {
 public:
  explicit LogCapture(bool nonblocking = true) {
    EXPECT_EQ(::pipe2(fds_, nonblocking ? O_NONBLOCK : 0), 0);
    previous_ = SetOutputFd(fds_[1]);
  }
  ~LogCapture() {
    SetOutputFd(previous_);
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  // Everything written so far (non-blocking mode).
  std::string Take() {
    std::string out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fds_[0], buf, sizeof(buf))) > 0) out.append(buf, static_cast<size_t>(n));
    return out;
  }
  int read_fd() const { return fds_[0]; }

 private:
  int fds_[2] = {-1, -1};
  int previous_ = -1;
};

class LogTest : public ::testing::Test {
 protected:
  void SetUp() override { Reset(); }
  void TearDown() override { Reset(); }
  static void Reset() {
    LogCapture quiet;  // configuring must not print anything here, but keep stderr clean anyway
    internal::ConfigureFromEnv(Env({}));
    SetRank(-1);
    SetProgramName(nullptr);
    SetLevel(Level::kWarn);
  }
  std::string Pid() const { return std::to_string(::getpid()); }
};

TEST_F(LogTest, LevelNames) {
  EXPECT_STREQ(LevelName(Level::kError), "error");
  EXPECT_STREQ(LevelName(Level::kTrace), "trace");
  EXPECT_EQ(ParseLevel("DEBUG"), Level::kDebug);
  EXPECT_EQ(ParseLevel("warn"), Level::kWarn);
  EXPECT_FALSE(ParseLevel("warning").has_value());
  EXPECT_FALSE(ParseLevel("").has_value());
}

TEST_F(LogTest, FiltersByLevel) {
  LogCapture cap;
  SetLevel(Level::kInfo);
  EXPECT_EQ(CurrentLevel(), Level::kInfo);
  RFT_LOG_TRACE("trace %d", 1);
  RFT_LOG_DEBUG("debug %d", 2);
  RFT_LOG_INFO("info %d", 3);
  RFT_LOG_WARN("warn %s", "four");
  RFT_LOG_ERROR("error %c", '5');
  std::string p = "[rft:" + Pid() + "] ";
  EXPECT_EQ(cap.Take(), p + "info: info 3\n" + p + "warn: warn four\n" + p + "error: error 5\n");

  SetLevel(Level::kError);
  RFT_LOG_WARN("hidden");
  RFT_LOG_ERROR("shown");
  EXPECT_EQ(cap.Take(), p + "error: shown\n");

  SetLevel(Level::kTrace);
  RFT_LOG_TRACE("deep");
  EXPECT_EQ(cap.Take(), p + "trace: deep\n");
}

TEST_F(LogTest, DisabledStatementsDoNotEvaluateArguments) {
  LogCapture cap;
  SetLevel(Level::kWarn);
  int calls = 0;
  auto count = [&calls] { return ++calls; };
  RFT_LOG_DEBUG("%d", count());
  RFT_LOG_INFO("%d", count());
  EXPECT_EQ(calls, 0);
  RFT_LOG_WARN("%d", count());
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(IsEnabled(Level::kInfo));
  EXPECT_TRUE(IsEnabled(Level::kWarn));
}

TEST_F(LogTest, RankAndProgramPrefixes) {
  LogCapture cap;
  SetRank(3);
  RFT_LOG_WARN("a");
  EXPECT_EQ(cap.Take(), "[rft:3] warn: a\n");
  SetRank(-1);
  RFT_LOG_WARN("b");
  EXPECT_EQ(cap.Take(), "[rft:" + Pid() + "] warn: b\n");
  SetProgramName("rftrun");
  RFT_LOG_WARN("c");
  EXPECT_EQ(cap.Take(), "[rftrun] warn: c\n");
  SetRank(12);
  RFT_LOG_ERROR("d");
  EXPECT_EQ(cap.Take(), "[rftrun:12] error: d\n");
  std::string name = "temporary";
  SetProgramName(name.c_str());
  name = "overwritten";  // the logger keeps its own copy
  RFT_LOG_ERROR("e");
  EXPECT_EQ(cap.Take(), "[temporary:12] error: e\n");
}

TEST_F(LogTest, PrefixRankCanBeTurnedOff) {
  LogCapture cap;
  internal::ConfigureFromEnv(Env({{"RFT_LOG_PREFIX_RANK", "no"}}));
  SetRank(5);
  RFT_LOG_WARN("x");
  EXPECT_EQ(cap.Take(), "[rft] warn: x\n");
  SetProgramName("rftrun");
  RFT_LOG_WARN("y");
  EXPECT_EQ(cap.Take(), "[rftrun] warn: y\n");
}

TEST_F(LogTest, ConfigureFromEnvironment) {
  LogCapture cap;
  internal::ConfigureFromEnv(Env({{"RFT_LOG_LEVEL", "DEBUG"}}));
  EXPECT_EQ(CurrentLevel(), Level::kDebug);
  internal::ConfigureFromEnv(Env({}));
  EXPECT_EQ(CurrentLevel(), Level::kWarn);
  EXPECT_EQ(cap.Take(), "");
}

TEST_F(LogTest, BadLevelPrintsOneErrorAndFallsBackToWarn) {
  LogCapture cap;
  SetRank(0);
  internal::ConfigureFromEnv(Env({{"RFT_LOG_LEVEL", "bogus"}}));
  EXPECT_EQ(CurrentLevel(), Level::kWarn);
  EXPECT_EQ(cap.Take(),
            "[rft:0] error: RFT_LOG_LEVEL=\"bogus\": expected one of "
            "error|warn|info|debug|trace; using warn\n");
  internal::ConfigureFromEnv(Env({{"RFT_LOG_PREFIX_RANK", "maybe"}}));
  std::string out = cap.Take();
  EXPECT_NE(out.find("error: RFT_LOG_PREFIX_RANK=\"maybe\""), std::string::npos) << out;
  EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
}

TEST_F(LogTest, LongLinesAreWrittenWhole) {
  LogCapture cap;
  SetRank(1);
  std::string big(5000, 'x');
  RFT_LOG_WARN("%s|end", big.c_str());
  EXPECT_EQ(cap.Take(), "[rft:1] warn: " + big + "|end\n");
  RFT_LOG_WARN("already terminated\n");
  EXPECT_EQ(cap.Take(), "[rft:1] warn: already terminated\n");
  RFT_LOG_WARN("%s", "");
  EXPECT_EQ(cap.Take(), "[rft:1] warn: \n");
}

TEST_F(LogTest, PreservesErrno) {
  LogCapture cap;
  errno = EAGAIN;
  RFT_LOG_WARN("x");
  EXPECT_EQ(errno, EAGAIN);
  SetOutputFd(-1);  // a write that fails with EBADF
  errno = ENOENT;
  RFT_LOG_WARN("lost");
  EXPECT_EQ(errno, ENOENT);
}

TEST_F(LogTest, ConcurrentLinesDoNotInterleave) {
  LogCapture cap(/*nonblocking=*/false);
  SetRank(7);
  constexpr int kThreads = 8;
  constexpr int kLines = 300;
  std::string received;
  std::thread reader([&] {
    size_t newlines = 0;
    char buf[4096];
    while (newlines < kThreads * kLines) {
      ssize_t n = ::read(cap.read_fd(), buf, sizeof(buf));
      if (n <= 0) break;
      received.append(buf, static_cast<size_t>(n));
      newlines += static_cast<size_t>(std::count(buf, buf + n, '\n'));
    }
  });
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([t] {
      std::string payload(100 + 10 * t, static_cast<char>('a' + t));
      for (int i = 0; i < kLines; ++i) RFT_LOG_WARN("t%d i%d %s", t, i, payload.c_str());
    });
  }
  for (std::thread& w : writers) w.join();
  reader.join();

  std::istringstream lines(received);
  std::string line;
  std::vector<int> next(kThreads, 0);
  int total = 0;
  while (std::getline(lines, line)) {
    int t = -1, i = -1;
    ASSERT_EQ(std::sscanf(line.c_str(), "[rft:7] warn: t%d i%d", &t, &i), 2) << line;
    ASSERT_TRUE(t >= 0 && t < kThreads) << line;
    EXPECT_EQ(i, next[t]++) << "lines of one thread stay in order";
    std::string payload(100 + 10 * t, static_cast<char>('a' + t));
    EXPECT_EQ(line,
              "[rft:7] warn: t" + std::to_string(t) + " i" + std::to_string(i) + " " + payload);
    ++total;
  }
  EXPECT_EQ(total, kThreads * kLines);
}

// The first statement of a fresh process reads RFT_LOG_LEVEL from the real environment. Each
// death test below runs in a re-executed child so that nothing has configured the logger yet.
class LogFirstUseDeathTest : public ::testing::Test {
 protected:
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST_F(LogFirstUseDeathTest, ReadsTheLevelLazily) {
  EXPECT_EXIT(
      {
        ::setenv("RFT_LOG_LEVEL", "debug", 1);
        RFT_LOG_DEBUG("lazy debug line");
        std::exit(CurrentLevel() == Level::kDebug ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "\\] debug: lazy debug line");
}

TEST_F(LogFirstUseDeathTest, BadLevelFallsBackToWarn) {
  EXPECT_EXIT(
      {
        ::setenv("RFT_LOG_LEVEL", "bogus", 1);
        RFT_LOG_INFO("not shown");
        RFT_LOG_WARN("shown");
        std::exit(CurrentLevel() == Level::kWarn ? 0 : 1);
      },
      ::testing::ExitedWithCode(0),
      "^\\[rft:[0-9]+\\] error: RFT_LOG_LEVEL=\"bogus\": expected one of "
      "error\\|warn\\|info\\|debug\\|trace; using warn\n\\[rft:[0-9]+\\] warn: shown\n$");
}

TEST_F(LogFirstUseDeathTest, SetLevelBeforeFirstUseWins) {
  EXPECT_EXIT(
      {
        ::setenv("RFT_LOG_LEVEL", "bogus", 1);
        SetLevel(Level::kError);
        RFT_LOG_ERROR("only line");
        std::exit(CurrentLevel() == Level::kError ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "^\\[rft:[0-9]+\\] error: only line\n$");
}

}  // namespace
}  // namespace rft::log
