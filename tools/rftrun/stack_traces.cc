#include "tools/rftrun/stack_traces.h"

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "base/clock.h"
#include "tools/rftrun/process_util.h"

namespace rft::rftrun {

extern "C" char** environ;

StatusOr<std::string> CollectStackTraces(pid_t pid, std::chrono::milliseconds bound) {
  auto gdb = ResolveProgram("gdb");
  if (!gdb.ok()) return OtherError("cannot take stack traces: " + gdb.status().message());
  ChildSpec spec;
  spec.path = *gdb;
  // -nx: no user or system gdbinit (their settings, pagers or auto-loaded scripts would change
  // or stall the output); debuginfod off: it would try the network for every library.
  spec.argv = {"gdb",
               "-batch",
               "-nx",
               "-p",
               std::to_string(pid),
               "-ex",
               "set pagination off",
               "-ex",
               "set debuginfod enabled off",
               "-ex",
               "thread apply all bt"};
  for (char** var = environ; *var != nullptr; ++var) spec.env.emplace_back(*var);
  sigemptyset(&spec.unblock);
  sigaddset(&spec.unblock, SIGCHLD);
  sigaddset(&spec.unblock, SIGTERM);
  sigaddset(&spec.unblock, SIGINT);
  sigaddset(&spec.unblock, SIGHUP);
  RFT_ASSIGN_OR_RETURN(Child child, ForkExec(spec));

  std::string output;
  const int64_t deadline_ns = MonotonicNanos() + std::chrono::nanoseconds(bound).count();
  bool timed_out = false;
  int open_fds = 2;
  int fds[2] = {child.out_fd, child.err_fd};
  while (open_fds > 0) {
    const int64_t left_ns = deadline_ns - MonotonicNanos();
    if (left_ns <= 0) {
      timed_out = true;
      break;
    }
    std::vector<pollfd> polled;
    for (int fd : fds) {
      if (fd >= 0) polled.push_back({fd, POLLIN, 0});
    }
    const int ready = poll(polled.data(), polled.size(), static_cast<int>(left_ns / 1000000) + 1);
    if (ready < 0 && errno != EINTR) break;
    for (const pollfd& p : polled) {
      if (p.revents == 0) continue;
      char buffer[4096];
      const ssize_t got = read(p.fd, buffer, sizeof(buffer));
      if (got > 0) {
        output.append(buffer, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
        for (int& fd : fds) {
          if (fd == p.fd) {
            close(fd);
            fd = -1;
            --open_fds;
          }
        }
      }
    }
  }
  for (int fd : fds) {
    if (fd >= 0) close(fd);
  }
  if (timed_out) {
    kill(child.pid, SIGKILL);  // a killed gdb detaches: the traced process goes on
    output += "(gdb did not finish within " + std::to_string(bound.count()) + " ms; killed)\n";
  }
  int status = 0;
  while (waitpid(child.pid, &status, 0) < 0 && errno == EINTR) {
  }
  return output;
}

}  // namespace rft::rftrun
