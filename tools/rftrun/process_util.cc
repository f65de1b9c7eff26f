#include "tools/rftrun/process_util.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rft::rftrun {

StatusOr<Child> ForkExec(const ChildSpec& spec) {
  int out[2];
  int err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return OtherError(std::string("pipe: ") + std::strerror(errno));
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return OtherError(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<char*> argv;
  for (const std::string& arg : spec.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  for (const std::string& var : spec.env) envp.push_back(const_cast<char*>(var.c_str()));
  envp.push_back(nullptr);
  const char* cwd = spec.cwd.empty() ? nullptr : spec.cwd.c_str();

  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int saved = errno;
    close(out[0]);
    close(out[1]);
    close(err[0]);
    close(err[1]);
    return OtherError(std::string("fork: ") + std::strerror(saved));
  }
  if (pid == 0) {
    // If rftrun dies (even by SIGKILL) its job dies with it instead of running on as orphans.
    // The forking thread is rftrun's main thread, which lives until the job is over.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // rftrun died before prctl took effect
    sigprocmask(SIG_UNBLOCK, &spec.unblock, nullptr);
    signal(SIGPIPE, SIG_DFL);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (cwd != nullptr && chdir(cwd) != 0) {
      static const char kMessage[] = "rftrun: cannot change to the spawn's working directory\n";
      (void)!write(2, kMessage, sizeof(kMessage) - 1);
      _exit(127);
    }
    execve(spec.path.c_str(), argv.data(), envp.data());
    static const char kMessage[] = "rftrun: exec failed for ";
    (void)!write(2, kMessage, sizeof(kMessage) - 1);
    (void)!write(2, spec.path.c_str(), spec.path.size());
    (void)!write(2, "\n", 1);
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  fcntl(out[0], F_SETFL, O_NONBLOCK);
  fcntl(err[0], F_SETFL, O_NONBLOCK);
  return Child{pid, out[0], err[0]};
}

StatusOr<std::string> ResolveProgram(const std::string& program) {
  auto check = [](const std::string& path) {
    struct stat st;
    return stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && access(path.c_str(), X_OK) == 0;
  };
  if (program.empty()) return ArgError("empty program name");
  if (program.find('/') != std::string::npos) {
    if (check(program)) return program;
    return ArgError(
        "program \"" + program +
        "\": " + (access(program.c_str(), F_OK) == 0 ? "not an executable file" : "no such file"));
  }
  const char* path_env = std::getenv("PATH");
  std::string path = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find(':', start);
    if (end == std::string::npos) end = path.size();
    std::string dir = path.substr(start, end - start);
    if (dir.empty()) dir = ".";
    const std::string candidate = dir + "/" + program;
    if (check(candidate)) return candidate;
    start = end + 1;
  }
  return ArgError("program \"" + program + "\": not found in PATH");
}

StatusOr<std::string> MakeTempDir(const std::string& prefix) {
  const char* base = std::getenv("TMPDIR");
  std::string templ =
      std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/" + prefix + ".XXXXXX";
  std::vector<char> buffer(templ.begin(), templ.end());
  buffer.push_back('\0');
  if (mkdtemp(buffer.data()) == nullptr) {
    return OtherError("cannot create a directory like " + templ + ": " + std::strerror(errno));
  }
  return std::string(buffer.data());
}

bool IsExiting(pid_t pid) {
  siginfo_t ended{};
  if (waitid(P_PID, static_cast<id_t>(pid), &ended, WEXITED | WNOHANG | WNOWAIT) == 0 &&
      ended.si_pid == pid) {
    return true;
  }
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  FILE* file = std::fopen(path, "r");
  if (file == nullptr) return true;  // gone
  char line[1024];
  const bool read = std::fgets(line, sizeof line, file) != nullptr;
  std::fclose(file);
  const char* end_of_name = read ? std::strrchr(line, ')') : nullptr;
  if (end_of_name == nullptr) return false;
  char state = '?';
  unsigned long flags = 0;
  // After the name: state ppid pgrp session tty_nr tpgid flags ...
  if (std::sscanf(end_of_name + 1, " %c %*d %*d %*d %*d %*d %lu", &state, &flags) != 2) {
    return false;
  }
  constexpr unsigned long kExiting = 0x4;  // PF_EXITING
  return state == 'Z' || state == 'X' || (flags & kExiting) != 0;
}

std::string Hostname() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

uint32_t OnlineCpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) {
    return static_cast<uint32_t>(CPU_COUNT(&set));
  }
  const long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<uint32_t>(n) : 1;
}

void WriteAll(int fd, std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = write(fd, text.data(), text.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return;
    }
    text.remove_prefix(static_cast<size_t>(n));
  }
}

int RemoveShmFiles(const std::vector<std::string>& prefixes) {
  DIR* directory = opendir("/dev/shm");
  if (directory == nullptr) return 0;
  int removed = 0;
  while (const dirent* entry = readdir(directory)) {
    const std::string_view name(entry->d_name);
    const bool ours = std::any_of(prefixes.begin(), prefixes.end(), [&](const std::string& p) {
      return name.substr(0, p.size()) == p;
    });
    if (!ours) continue;
    struct stat info;
    if (fstatat(dirfd(directory), entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (!S_ISREG(info.st_mode) || info.st_uid != geteuid()) continue;
    if (unlinkat(dirfd(directory), entry->d_name, 0) == 0) ++removed;
  }
  closedir(directory);
  return removed;
}

}  // namespace rft::rftrun
