#include "transport/dataplane/cma/peer_process.h"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <string>

namespace rft::transport::cma {

StatusOr<bool> ProbeReading() {
  // The system call may be compiled out or filtered (seccomp in containers): try it on
  // ourselves.
  uint64_t word = 0x5243'4d41'5052'4f42;  // any value
  uint64_t copy = 0;
  const int error = Read(getpid(), &copy, reinterpret_cast<uint64_t>(&word), 8);
  if (error != 0 || copy != word) {
    return OtherError(std::string("process_vm_readv is not usable here (") + std::strerror(error) +
                      ")");
  }
  // Yama restricts reading other processes: scope 1 only to descendants of a tracer the
  // process declared, 2 and 3 never for ordinary processes. Under scope 1 this process declares
  // its parent, the launcher (rftrun, prted, slurmstepd): the ranks it started, being its
  // descendants, may then read this one, and no other process of the user may (no
  // PR_SET_PTRACER_ANY: that would open every rank to ptrace by anything the user runs).
  std::ifstream yama("/proc/sys/kernel/yama/ptrace_scope");
  int scope = 0;
  if (!(yama >> scope)) return false;  // no Yama: the usual same-user rules apply
  if (scope >= 2) {
    return OtherError("kernel.yama.ptrace_scope is " + std::to_string(scope) +
                      ": processes may not read each other's memory");
  }
  if (scope == 0) return false;
  if (prctl(PR_SET_PTRACER, static_cast<unsigned long>(getppid()), 0, 0, 0) != 0) {
    return OtherError(std::string("kernel.yama.ptrace_scope is 1 and PR_SET_PTRACER failed: ") +
                      std::strerror(errno));
  }
  return true;
}

int Read(pid_t pid, void* local, uint64_t remote, size_t length) {
  size_t done = 0;
  while (done < length) {
    struct iovec local_iov = {static_cast<char*>(local) + done, length - done};
    struct iovec remote_iov = {reinterpret_cast<void*>(remote + done), length - done};
    const ssize_t n = process_vm_readv(pid, &local_iov, 1, &remote_iov, 1, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return EFAULT;  // no progress: the remote range ends early
    done += static_cast<size_t>(n);
  }
  return 0;
}

int OpenPidfd(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }

int CopyDescriptor(int pidfd, int fd) {
  return static_cast<int>(syscall(SYS_pidfd_getfd, pidfd, fd, 0));
}

bool Ended(int pidfd) {
  pollfd ended = {pidfd, POLLIN, 0};
  return poll(&ended, 1, 0) > 0 && (ended.revents & (POLLIN | POLLHUP)) != 0;
}

}  // namespace rft::transport::cma
