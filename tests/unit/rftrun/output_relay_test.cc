#include "tools/rftrun/output_relay.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace rft::rftrun {
namespace {

// Collects what a relay writes through a pipe.
class Sink {
 public:
  Sink() { EXPECT_EQ(pipe2(fds_, O_NONBLOCK), 0); }
  ~Sink() {
    close(fds_[0]);
    close(fds_[1]);
  }
  int fd() const { return fds_[1]; }
  std::string Take() {
    std::string out;
    char buffer[4096];
    ssize_t n;
    while ((n = read(fds_[0], buffer, sizeof(buffer))) > 0) out.append(buffer, n);
    return out;
  }

 private:
  int fds_[2];
};

TEST(OutputRelayTest, PrefixesWholeLinesOnly) {
  Sink sink;
  OutputRelay relay(sink.fd(), "[3] ");
  relay.Feed("hel");
  EXPECT_EQ(sink.Take(), "");
  relay.Feed("lo\nwor");
  EXPECT_EQ(sink.Take(), "[3] hello\n");
  relay.Feed("ld\n\nlast");
  EXPECT_EQ(sink.Take(), "[3] world\n[3] \n");
  relay.Flush();
  EXPECT_EQ(sink.Take(), "[3] last\n");
  relay.Flush();
  EXPECT_EQ(sink.Take(), "");
}

TEST(OutputRelayTest, WithoutPrefixBytesPassThrough) {
  Sink sink;
  OutputRelay relay(sink.fd(), "");
  relay.Feed("par");
  EXPECT_EQ(sink.Take(), "par");
  relay.Feed("tial\n");
  EXPECT_EQ(sink.Take(), "tial\n");
}

TEST(OutputRelayTest, DrainReadsUntilEndOfFileAndFlushes) {
  Sink sink;
  int source[2];
  ASSERT_EQ(pipe2(source, O_NONBLOCK), 0);
  OutputRelay relay(sink.fd(), "[0] ");
  ASSERT_EQ(write(source[1], "a\nb", 3), 3);
  EXPECT_TRUE(relay.Drain(source[0]));  // more may come
  EXPECT_EQ(sink.Take(), "[0] a\n");
  close(source[1]);
  EXPECT_FALSE(relay.Drain(source[0]));  // end of file: the tail is flushed
  EXPECT_EQ(sink.Take(), "[0] b\n");
  close(source[0]);
}

}  // namespace
}  // namespace rft::rftrun
