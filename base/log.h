// Diagnostic logging to stderr.
//
//   RFT_LOG_WARN("peer %u: bad header (len %zu)", rank, len);
//   -> "[rft:3] warn: peer 7: bad header (len 12)"
//
// The threshold comes from RFT_LOG_LEVEL, read on first use (a bad value prints one error line and
// leaves the default, warn). A disabled statement costs one relaxed load and one branch: the
// arguments are not evaluated. Each line goes out in a single write(2), so lines from threads and
// processes sharing stderr do not interleave (pipes keep writes up to PIPE_BUF = 4096 bytes
// whole). Thread-safe without locks; errno is preserved.
//
// The prefix names the process: "[rft:<rank>]" after SetRank, "[rft:<pid>]" before; a program
// that is not an rft rank (the launcher) calls SetProgramName("rftrun") to get "[rftrun]".
// RFT_LOG_PREFIX_RANK=n drops the rank/pid part.
#ifndef RFT_BASE_LOG_H_
#define RFT_BASE_LOG_H_

#include <atomic>
#include <optional>
#include <string_view>

#include "base/config.h"

namespace rft::log {

// Ordered by verbosity: a threshold of kInfo shows error, warn and info.
enum class Level : int { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3, kTrace = 4 };

// "error", "warn", "info", "debug", "trace".
const char* LevelName(Level level);
// Accepts those names, case-insensitive.
std::optional<Level> ParseLevel(std::string_view text);

// Overrides RFT_LOG_LEVEL from now on.
void SetLevel(Level level);
// The threshold in force (reads RFT_LOG_LEVEL if nothing has yet).
Level CurrentLevel();
// A negative rank goes back to the pid.
void SetRank(int rank);
// Replaces "rft" in the prefix and drops the pid: "[rftrun]", or "[rftrun:<rank>]" after
// SetRank. The name is copied. nullptr restores the default.
void SetProgramName(const char* name);
// Where lines go (default STDERR_FILENO); returns the previous fd. For tests.
int SetOutputFd(int fd);

// Formats and writes one line if `level` is enabled. Prefer the macros, which skip the call.
void Write(Level level, const char* format, ...) __attribute__((format(printf, 2, 3)));

namespace internal {

// Above every level: until configured, every statement reaches Write(), which configures.
inline constexpr int kUnconfigured = 1000;
extern std::atomic<int> g_threshold;

// What the first log statement does with the process environment: reads RFT_LOG_LEVEL and
// RFT_LOG_PREFIX_RANK from `env`, reporting a bad value as one error line and keeping the default.
void ConfigureFromEnv(const config::EnvLookup& env);

}  // namespace internal

inline bool IsEnabled(Level level) {
  return static_cast<int>(level) <= internal::g_threshold.load(std::memory_order_relaxed);
}

}  // namespace rft::log

#define RFT_LOG_AT(level, ...)                               \
  do {                                                       \
    if (__builtin_expect(::rft::log::IsEnabled(level), 0)) { \
      ::rft::log::Write(level, __VA_ARGS__);                 \
    }                                                        \
  } while (0)

#define RFT_LOG_ERROR(...) RFT_LOG_AT(::rft::log::Level::kError, __VA_ARGS__)
#define RFT_LOG_WARN(...) RFT_LOG_AT(::rft::log::Level::kWarn, __VA_ARGS__)
#define RFT_LOG_INFO(...) RFT_LOG_AT(::rft::log::Level::kInfo, __VA_ARGS__)
#define RFT_LOG_DEBUG(...) RFT_LOG_AT(::rft::log::Level::kDebug, __VA_ARGS__)
#define RFT_LOG_TRACE(...) RFT_LOG_AT(::rft::log::Level::kTrace, __VA_ARGS__)

#endif  // RFT_BASE_LOG_H_
