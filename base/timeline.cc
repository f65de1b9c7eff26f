#include "base/timeline.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "base/clock.h"
#include "base/config.h"

namespace rft::timeline {
namespace internal {
std::atomic<int> g_fd{-1};
}  // namespace internal

namespace {

uint32_t g_self = 0;

// Appends `text` to the line as a JSON string body: quotes, backslashes and control bytes
// escaped, cut at `room` bytes (never inside an escape).
size_t AppendEscaped(char* out, size_t room, std::string_view text) {
  size_t at = 0;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    char escaped[7];
    size_t length = 1;
    if (c == '"' || c == '\\') {
      escaped[0] = '\\';
      escaped[1] = c;
      length = 2;
    } else if (byte < 0x20) {
      length = static_cast<size_t>(snprintf(escaped, sizeof escaped, "\\u%04x", byte));
    } else {
      escaped[0] = c;
    }
    if (at + length > room) break;
    memcpy(out + at, escaped, length);
    at += length;
  }
  return at;
}

}  // namespace

const char* EventName(Event event) {
  switch (event) {
    case Event::kStarted:
      return "started";
    case Event::kSuspected:
      return "suspected";
    case Event::kFailed:
      return "failed";
    case Event::kBroadcast:
      return "broadcast";
    case Event::kKillAsked:
      return "kill-asked";
    case Event::kDeclaredSelf:
      return "declared-self";
    case Event::kAcknowledged:
      return "acknowledged";
    case Event::kAgreed:
      return "agreed";
    case Event::kRevoked:
      return "revoked";
    case Event::kRevokeHeard:
      return "revoke-heard";
    case Event::kShrunk:
      return "shrunk";
    case Event::kSpawned:
      return "spawned";
    case Event::kFinalized:
      return "finalized";
  }
  return "unknown";
}

Status Open(uint32_t self, uint32_t job_size) {
  if (Enabled()) return Status::Ok();
  std::string dir;
  RFT_ASSIGN_OR_RETURN(dir, config::GetString("RFT_TIMELINE"));
  if (dir.empty()) return Status::Ok();
  if (mkdir(dir.c_str(), 0777) != 0 && errno != EEXIST) {
    return ArgError("RFT_TIMELINE=" + dir + ": cannot make the directory: " + strerror(errno));
  }
  const std::string path = dir + "/rank-" + std::to_string(self) + "-" +
                           std::to_string(static_cast<long>(getpid())) + ".jsonl";
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0666);
  if (fd < 0) {
    return ArgError("RFT_TIMELINE=" + dir + ": cannot open " + path + ": " + strerror(errno));
  }
  g_self = self;
  internal::g_fd.store(fd, std::memory_order_release);
  Record(Event::kStarted, job_size);
  return Status::Ok();
}

void Close() {
  if (!Enabled()) return;
  Record(Event::kFinalized, g_self);
  const int fd = internal::g_fd.exchange(-1, std::memory_order_acq_rel);
  if (fd >= 0) close(fd);
}

namespace internal {

void Write(Event event, int64_t subject, std::string_view detail) {
  const int fd = g_fd.load(std::memory_order_acquire);
  if (fd < 0) return;
  char line[384];
  int at = snprintf(line, sizeof line,
                    "{\"ns\":%lld,\"rank\":%u,\"event\":\"%s\",\"subject\":%lld,\"detail\":\"",
                    static_cast<long long>(MonotonicNanos()), g_self, EventName(event),
                    static_cast<long long>(subject));
  if (at < 0 || static_cast<size_t>(at) >= sizeof line) return;
  at +=
      static_cast<int>(AppendEscaped(line + at, sizeof line - static_cast<size_t>(at) - 3, detail));
  memcpy(line + at, "\"}\n", 3);
  at += 3;
  // One write of the whole line: O_APPEND keeps it in one piece beside other threads' lines.
  // A failed write loses the event and nothing else (the timeline is a record, not a duty).
  if (write(fd, line, static_cast<size_t>(at)) < 0) return;
}

}  // namespace internal
}  // namespace rft::timeline
