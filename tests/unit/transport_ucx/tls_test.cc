// Which UCX_TLS values let UCX open shared memory, so that rft sets UCX_MM_ERROR_HANDLING=y for
// them (and only them: for the others UCX warns, in every process, of an unused variable).
#include <gtest/gtest.h>

#include "transport/ucx/ucx_worker.h"

namespace rft::transport::ucx {
namespace {

TEST(TlsAllowSharedMemory, UnsetEmptyAndAllDo) {
  EXPECT_TRUE(TlsAllowSharedMemory(nullptr));
  EXPECT_TRUE(TlsAllowSharedMemory(""));
  EXPECT_TRUE(TlsAllowSharedMemory("all"));
}

TEST(TlsAllowSharedMemory, ListsNamingSharedMemoryDo) {
  for (const char* tls : {"sm", "shm", "mm", "posix", "sysv", "xpmem", "rc,sm", "rc_x,self,sm",
                          "ud:aux,shm", "tcp,posix", "self,sysv,tcp"}) {
    EXPECT_TRUE(TlsAllowSharedMemory(tls)) << tls;
  }
}

TEST(TlsAllowSharedMemory, ListsWithoutSharedMemoryDoNot) {
  for (const char* tls :
       {"rc", "rc,ud:aux", "tcp", "self,tcp", "dc_x", "cma", "smx", "rc,", ",", "ib"}) {
    EXPECT_FALSE(TlsAllowSharedMemory(tls)) << tls;
  }
}

TEST(TlsAllowSharedMemory, ExclusionsDoUnlessTheyExcludeIt) {
  EXPECT_TRUE(TlsAllowSharedMemory("^tcp"));
  EXPECT_TRUE(TlsAllowSharedMemory("^rc,ud"));
  EXPECT_TRUE(TlsAllowSharedMemory("^posix"));  // sysv is left
  EXPECT_TRUE(TlsAllowSharedMemory("^"));
  EXPECT_FALSE(TlsAllowSharedMemory("^sm"));
  EXPECT_FALSE(TlsAllowSharedMemory("^tcp,shm"));
  EXPECT_FALSE(TlsAllowSharedMemory("^mm"));
  EXPECT_FALSE(TlsAllowSharedMemory("^all"));
}

}  // namespace
}  // namespace rft::transport::ucx
