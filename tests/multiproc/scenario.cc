#include "tests/multiproc/scenario.h"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include "base/clock.h"

extern char** environ;

namespace rft::testing {

std::string ScenarioResult::Report() const {
  std::ostringstream out;
  out << "command: " << command << "\nexit status: " << exit_status
      << (timed_out ? " (killed by the test harness at its time limit)" : "")
      << "\nseconds: " << seconds << "\noutput:\n"
      << output;
  return out.str();
}

std::string Runfile(const std::string& workspace_relative) {
  if (!workspace_relative.empty() && workspace_relative[0] == '/') return workspace_relative;
  // Bazel runs tests in their runfiles tree (TEST_SRCDIR/TEST_WORKSPACE).
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  if (srcdir != nullptr && workspace != nullptr) {
    return std::string(srcdir) + "/" + workspace + "/" + workspace_relative;
  }
  char cwd[4096];
  return std::string(getcwd(cwd, sizeof(cwd)) != nullptr ? cwd : ".") + "/" + workspace_relative;
}

pid_t StartCommand(const std::string& program, const std::vector<std::string>& args,
                   const std::vector<std::string>& extra_env, int* output_fd,
                   std::string* command) {
  const std::string path = Runfile(program);
  *command = path;
  for (const std::string& arg : args) *command += " " + arg;

  // The test's own settings come first (getenv finds the first), then the inherited ones.
  std::vector<std::string> env_strings(extra_env.begin(), extra_env.end());
  for (char** var = environ; *var != nullptr; ++var) env_strings.emplace_back(*var);
  // RFT_PMIX_TIMEOUT bounds waits for ranks that died; under load (sanitizers, tests running
  // side by side on 2 cores) a failure-free fence can take longer than its 10 s default. Jobs
  // stay bounded by rftrun --timeout and this harness's limit; tests of the timeout set theirs.
  const bool timeout_set =
      std::any_of(env_strings.begin(), env_strings.end(),
                  [](const std::string& var) { return var.rfind("RFT_PMIX_TIMEOUT=", 0) == 0; });
  if (!timeout_set) env_strings.emplace_back("RFT_PMIX_TIMEOUT=60s");
  std::vector<char*> envp;
  for (auto& var : env_strings) envp.push_back(var.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_strings{path};
  argv_strings.insert(argv_strings.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& arg : argv_strings) argv.push_back(arg.data());
  argv.push_back(nullptr);

  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return -1;
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);  // the whole job can be killed as one group at the time limit
    dup2(pipe_fds[1], 1);
    dup2(pipe_fds[1], 2);
    execve(path.c_str(), argv.data(), envp.data());
    _exit(126);
  }
  close(pipe_fds[1]);
  if (pid < 0) {
    close(pipe_fds[0]);
    return -1;
  }
  setpgid(pid, pid);
  *output_fd = pipe_fds[0];
  return pid;
}

ScenarioResult RunCommand(const std::string& program, const std::vector<std::string>& args,
                          std::chrono::milliseconds limit,
                          const std::vector<std::string>& extra_env) {
  ScenarioResult result;
  const int64_t start = MonotonicNanos();
  int output_fd = -1;
  const pid_t pid = StartCommand(program, args, extra_env, &output_fd, &result.command);
  if (pid < 0) {
    result.output = std::string("cannot start: ") + std::strerror(errno);
    return result;
  }
  const int64_t deadline = start + std::chrono::nanoseconds(limit).count();
  char buffer[4096];
  for (;;) {
    const int64_t left_ms = (deadline - MonotonicNanos()) / 1000000;
    if (left_ms <= 0) {
      result.timed_out = true;
      kill(-pid, SIGKILL);
      break;
    }
    pollfd pfd{output_fd, POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(left_ms));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;
    const ssize_t n = read(output_fd, buffer, sizeof(buffer));
    if (n > 0) {
      result.output.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    break;  // EOF: every writer is gone
  }
  close(output_fd);
  int status = 0;
  if (result.timed_out) {
    waitpid(pid, &status, 0);
  } else {
    // EOF came first; the process itself ends right after (bounded anyway).
    while (waitpid(pid, &status, WNOHANG) == 0) {
      if (MonotonicNanos() > deadline) {
        result.timed_out = true;
        kill(-pid, SIGKILL);
      }
      usleep(1000);
    }
  }
  result.exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.seconds = static_cast<double>(MonotonicNanos() - start) / 1e9;
  return result;
}

ScenarioResult RunRftrun(const std::vector<std::string>& args, std::chrono::milliseconds limit) {
  return RunCommand("tools/rftrun/rftrun", args, limit);
}

const std::vector<std::string>& TolerantHeartbeats() {
  static const std::vector<std::string> env = {"RFT_HEARTBEAT_PERIOD=10ms",
                                               "RFT_HEARTBEAT_TIMEOUT=1s"};
  return env;
}

const std::vector<std::string>& DefaultsUnlessSanitized() {
  static const std::vector<std::string> none;
  return kSanitizedBuild ? TolerantHeartbeats() : none;
}

int CountLines(const std::string& output, const std::string& text) {
  int count = 0;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.find(text) != std::string::npos) ++count;
  }
  return count;
}

int UsableCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return CPU_COUNT(&set);
}

}  // namespace rft::testing
