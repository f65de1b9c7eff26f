#include "detector/thread_state.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rft::detector::internal {
namespace {

// Reads a small /proc file into `out` (NUL-terminated); the number of bytes, or -1.
ssize_t ReadSmall(const char* path, char* out, size_t size) {
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  const ssize_t n = read(fd, out, size - 1);
  close(fd);
  if (n < 0) return -1;
  out[n] = '\0';
  return n;
}

}  // namespace

char ThreadState(pid_t pid, pid_t tid) {
  char path[96], stat[512];
  std::snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", static_cast<int>(pid),
                static_cast<int>(tid));
  if (ReadSmall(path, stat, sizeof(stat)) <= 0) return '?';
  // "tid (comm) S ...": the name may contain spaces and parentheses; the state follows the
  // last ')'.
  const char* end = std::strrchr(stat, ')');
  if (end == nullptr || end[1] != ' ' || end[2] == '\0') return '?';
  return end[2];
}

bool AnyThreadRunnableOrInIo(pid_t pid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/task", static_cast<int>(pid));
  DIR* tasks = opendir(path);
  if (tasks == nullptr) return false;
  bool found = false;
  while (dirent* entry = readdir(tasks)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    const char state = ThreadState(pid, static_cast<pid_t>(std::atoi(entry->d_name)));
    if (state == 'R' || state == 'D') {
      found = true;
      break;
    }
  }
  closedir(tasks);
  return found;
}

}  // namespace rft::detector::internal
