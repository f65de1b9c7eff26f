// Small POSIX helpers for the launcher: fork/exec with output pipes, program lookup, temp
// directories.
#ifndef RFT_TOOLS_RFTRUN_PROCESS_UTIL_H_
#define RFT_TOOLS_RFTRUN_PROCESS_UTIL_H_

#include <signal.h>
#include <sys/types.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace rft::rftrun {

struct ChildSpec {
  std::string path;               // resolved executable
  std::vector<std::string> argv;  // argv[0] included
  std::vector<std::string> env;   // complete environment
  std::string cwd;                // empty: inherit
  sigset_t unblock;               // signals the parent blocks that the child must not inherit
};

struct Child {
  pid_t pid = -1;
  int out_fd = -1;  // read ends of the child's stdout and stderr, non-blocking, close-on-exec
  int err_fd = -1;
};

// Starts `spec` with stdin from /dev/null and stdout/stderr on fresh pipes. Only
// async-signal-safe calls run between fork and exec.
StatusOr<Child> ForkExec(const ChildSpec& spec);

// Finds `program` as execvp would (PATH search when it has no '/'); an error names the program
// and says whether it is missing or not executable.
StatusOr<std::string> ResolveProgram(const std::string& program);

// Creates a private directory under $TMPDIR (or /tmp) named PREFIX.XXXXXX.
StatusOr<std::string> MakeTempDir(const std::string& prefix);

// Removes the regular files of this user in /dev/shm whose names start with one of `prefixes`
// (never another user's, never a link); returns how many.
int RemoveShmFiles(const std::vector<std::string>& prefixes);

// Whether process `pid` is exiting or has exited (a zombie not yet reaped): its state in
// /proc/PID/stat is Z or X, or its flags have PF_EXITING (the kernel sets it first thing in
// do_exit, before the process's robust mutexes are released).
bool IsExiting(pid_t pid);

std::string Hostname();
uint32_t OnlineCpus();  // CPUs this process may run on
void WriteAll(int fd, std::string_view text);

}  // namespace rft::rftrun

#endif  // RFT_TOOLS_RFTRUN_PROCESS_UTIL_H_
