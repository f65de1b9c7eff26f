#include "base/log.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace rft::log {

namespace internal {
std::atomic<int> g_threshold{kUnconfigured};
}  // namespace internal

namespace {

constexpr Level kDefaultLevel = Level::kWarn;

std::atomic<int> g_rank{-1};
std::atomic<bool> g_prefix_rank{true};
std::atomic<const char*> g_program{nullptr};
std::atomic<int> g_fd{STDERR_FILENO};
std::once_flag g_env_once;

void WriteAll(const char* data, size_t len) {
  int fd = g_fd.load(std::memory_order_relaxed);
  while (len > 0) {
    ssize_t n = ::write(fd, data, len);
    if (n < 0) {
      if (errno == EINTR) continue;
      return;  // Nowhere left to report a failing log.
    }
    data += n;
    len -= static_cast<size_t>(n);
  }
}

// "[rft:3] " and friends, into `buf`; returns the length.
size_t FormatPrefix(char* buf, size_t size, Level level) {
  const char* program = g_program.load(std::memory_order_acquire);
  int rank = g_rank.load(std::memory_order_relaxed);
  bool with_id = g_prefix_rank.load(std::memory_order_relaxed);
  int n;
  if (with_id && rank >= 0) {
    n = std::snprintf(buf, size, "[%s:%d] %s: ", program ? program : "rft", rank, LevelName(level));
  } else if (with_id && program == nullptr) {
    n = std::snprintf(buf, size, "[rft:%d] %s: ", static_cast<int>(::getpid()), LevelName(level));
  } else {
    n = std::snprintf(buf, size, "[%s] %s: ", program ? program : "rft", LevelName(level));
  }
  return n < 0 ? 0 : std::min(static_cast<size_t>(n), size - 1);
}

void WriteLine(Level level, const char* format, va_list args) {
  char buf[1024];
  size_t prefix = FormatPrefix(buf, sizeof(buf), level);
  va_list copy;
  va_copy(copy, args);
  int n = std::vsnprintf(buf + prefix, sizeof(buf) - prefix, format, copy);
  va_end(copy);
  if (n < 0) n = 0;
  size_t len = prefix + static_cast<size_t>(n);
  std::string big;
  char* line = buf;
  // Room for the newline too; otherwise format again into a heap buffer.
  if (len + 1 >= sizeof(buf)) {
    big.resize(len + 2);
    std::memcpy(big.data(), buf, prefix);
    std::vsnprintf(big.data() + prefix, big.size() - prefix, format, args);
    line = big.data();
  }
  // A message that already ends in a newline does not get a second one.
  if (len == prefix || line[len - 1] != '\n') line[len++] = '\n';
  WriteAll(line, len);
}

// A line that bypasses the threshold: configuration errors must show at every level.
void WriteRaw(Level level, const char* format, ...) __attribute__((format(printf, 2, 3)));
void WriteRaw(Level level, const char* format, ...) {
  va_list args;
  va_start(args, format);
  WriteLine(level, format, args);
  va_end(args);
}

void EnsureConfigured() {
  if (internal::g_threshold.load(std::memory_order_relaxed) != internal::kUnconfigured) return;
  std::call_once(g_env_once, [] {
    if (internal::g_threshold.load(std::memory_order_relaxed) == internal::kUnconfigured) {
      internal::ConfigureFromEnv(config::DefaultEnv());
    }
  });
}

}  // namespace

const char* LevelName(Level level) {
  switch (level) {
    case Level::kError:
      return "error";
    case Level::kWarn:
      return "warn";
    case Level::kInfo:
      return "info";
    case Level::kDebug:
      return "debug";
    case Level::kTrace:
      return "trace";
  }
  return "?";
}

std::optional<Level> ParseLevel(std::string_view text) {
  for (Level level : {Level::kError, Level::kWarn, Level::kInfo, Level::kDebug, Level::kTrace}) {
    std::string_view name = LevelName(level);
    if (name.size() != text.size()) continue;
    bool same = true;
    for (size_t i = 0; i < name.size(); ++i) {
      char c = text[i];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
      same = same && c == name[i];
    }
    if (same) return level;
  }
  return std::nullopt;
}

void SetLevel(Level level) {
  internal::g_threshold.store(static_cast<int>(level), std::memory_order_relaxed);
}

Level CurrentLevel() {
  EnsureConfigured();
  return static_cast<Level>(internal::g_threshold.load(std::memory_order_relaxed));
}

void SetRank(int rank) { g_rank.store(rank < 0 ? -1 : rank, std::memory_order_relaxed); }

void SetProgramName(const char* name) {
  // Every copy stays alive (and reachable) for the life of the process: a concurrent Write may
  // still be reading the previous one. Programs set this once or twice.
  static std::mutex mu;
  static std::vector<std::unique_ptr<char[]>>* names = new std::vector<std::unique_ptr<char[]>>();
  if (name == nullptr) {
    g_program.store(nullptr, std::memory_order_release);
    return;
  }
  size_t len = std::strlen(name);
  auto copy = std::make_unique<char[]>(len + 1);
  std::memcpy(copy.get(), name, len + 1);
  std::lock_guard<std::mutex> lock(mu);
  g_program.store(copy.get(), std::memory_order_release);
  names->push_back(std::move(copy));
}

int SetOutputFd(int fd) { return g_fd.exchange(fd, std::memory_order_relaxed); }

void Write(Level level, const char* format, ...) {
  int saved_errno = errno;
  EnsureConfigured();
  if (IsEnabled(level)) {
    va_list args;
    va_start(args, format);
    WriteLine(level, format, args);
    va_end(args);
  }
  errno = saved_errno;
}

namespace internal {

void ConfigureFromEnv(const config::EnvLookup& env) {
  StatusOr<bool> prefix = config::GetBool("RFT_LOG_PREFIX_RANK", env);
  if (prefix.ok()) {
    g_prefix_rank.store(*prefix, std::memory_order_relaxed);
  } else {
    g_prefix_rank.store(true, std::memory_order_relaxed);
    WriteRaw(Level::kError, "%s; using the default", prefix.status().message().c_str());
  }
  Level level = kDefaultLevel;
  StatusOr<std::string> text = config::GetString("RFT_LOG_LEVEL", env);
  if (text.ok()) {
    // The table's choices are exactly the level names.
    level = ParseLevel(*text).value_or(kDefaultLevel);
  } else {
    WriteRaw(Level::kError, "%s; using %s", text.status().message().c_str(),
             LevelName(kDefaultLevel));
  }
  g_threshold.store(static_cast<int>(level), std::memory_order_relaxed);
}

}  // namespace internal

}  // namespace rft::log
