// cma::Read, the pidfd calls and the probe, on this process and on children it forks.
#include "transport/dataplane/cma/peer_process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

namespace rft::transport::cma {
namespace {

TEST(PeerProcessTest, TheProbeSaysReadingWorksOnThisMachine) {
  // The machines that run these tests allow process_vm_readv (the same-node tests rely on it);
  // which Yama scope they run under varies, so only success is asserted.
  const StatusOr<bool> probe = ProbeReading();
  EXPECT_TRUE(probe.ok()) << probe.status().ToString();
}

TEST(PeerProcessTest, ReadCopiesTheRemoteRangeWhole) {
  std::vector<unsigned char> source(3 * 4096 + 5);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>(i * 7);
  std::vector<unsigned char> copy(source.size());
  ASSERT_EQ(Read(getpid(), copy.data(), reinterpret_cast<uint64_t>(source.data()), copy.size()), 0);
  EXPECT_EQ(copy, source);
}

TEST(PeerProcessTest, ARangeThatEndsEarlyIsAnError) {
  const long page = sysconf(_SC_PAGESIZE);
  void* pages = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(pages, MAP_FAILED);
  ASSERT_EQ(munmap(static_cast<char*>(pages) + page, page), 0);
  std::vector<char> copy(2 * page);
  EXPECT_EQ(Read(getpid(), copy.data(), reinterpret_cast<uint64_t>(pages), copy.size()), EFAULT);
  munmap(pages, page);
}

TEST(PeerProcessTest, AProcessThatEndedIsSeenThroughItsPidfd) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    const char one = 1;
    [[maybe_unused]] const ssize_t n = write(ready[1], &one, 1);
    pause();
    _exit(0);
  }
  close(ready[1]);
  char byte;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  const int pidfd = OpenPidfd(child);
  ASSERT_GE(pidfd, 0) << std::strerror(errno);
  EXPECT_FALSE(Ended(pidfd));
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(Ended(pidfd));
  // Reaped: its pid names nothing (not reused within this test on any machine seen so far).
  uint64_t word = 0;
  EXPECT_EQ(Read(child, &word, reinterpret_cast<uint64_t>(&word), sizeof(word)), ESRCH);
  close(pidfd);
}

TEST(PeerProcessTest, CopyDescriptorGivesTheSameFile) {
  const int pidfd = OpenPidfd(getpid());
  ASSERT_GE(pidfd, 0) << std::strerror(errno);
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const int copy = CopyDescriptor(pidfd, pipe_fds[1]);
  ASSERT_GE(copy, 0) << std::strerror(errno);
  EXPECT_NE(copy, pipe_fds[1]);
  struct stat original {
  }, copied{};
  ASSERT_EQ(fstat(pipe_fds[1], &original), 0);
  ASSERT_EQ(fstat(copy, &copied), 0);
  EXPECT_EQ(original.st_ino, copied.st_ino);
  close(copy);
  // A descriptor the process does not have, and no pidfd at all.
  EXPECT_EQ(CopyDescriptor(pidfd, 100000), -1);
  EXPECT_EQ(errno, EBADF);
  EXPECT_EQ(CopyDescriptor(-1, pipe_fds[1]), -1);
  EXPECT_EQ(OpenPidfd(-1), -1);
  close(pipe_fds[0]);
  close(pipe_fds[1]);
  close(pidfd);
}

}  // namespace
}  // namespace rft::transport::cma
