// RingPath between two paths of this one process: pidfd_getfd on the process's own pidfd maps
// the other's segment as it maps a peer's.
#include "transport/dataplane/ring/ring_path.h"

#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

namespace rft::transport {
namespace {

constexpr size_t kLargestRecord = 2000;  // rings of 64 KiB; 4 KiB ones too small

std::span<const std::byte> Bytes(const std::string& text) {
  return std::as_bytes(std::span<const char>(text.data(), text.size()));
}

class RingPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    node_.Insert(0);
    node_.Insert(1);
    pidfd_ = static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0));
    ASSERT_GE(pidfd_, 0) << std::strerror(errno);
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    ASSERT_GE(wake_fd_, 0);
    writer_.Open(node_, 0, kLargestRecord);
    reader_.Open(node_, 1, kLargestRecord);
    ASSERT_TRUE(writer_.open());
    ASSERT_TRUE(reader_.open());
    writer_.Grow(2);
    reader_.Grow(2);
  }
  void TearDown() override {
    if (pidfd_ >= 0) close(pidfd_);
    if (wake_fd_ >= 0) close(wake_fd_);
  }
  bool AttachWriter(bool blocks) {
    return writer_.Attach(1, pidfd_, reader_.offer(), wake_fd_, blocks);
  }
  // What the reader delivers now, and the writers it found broken.
  std::vector<std::string> Read(std::vector<Rank>* broken = nullptr) {
    std::vector<std::string> records;
    reader_.Progress(
        [&](std::span<const std::byte> record) {
          records.emplace_back(reinterpret_cast<const char*>(record.data()), record.size());
        },
        [&](Rank writer, const Status&) {
          if (broken != nullptr) broken->push_back(writer);
        });
    return records;
  }
  bool WokenUp() {
    uint64_t count = 0;
    return read(wake_fd_, &count, sizeof(count)) == sizeof(count) && count > 0;
  }

  RankSet node_;
  int pidfd_ = -1;
  int wake_fd_ = -1;
  RingPath writer_;  // rank 0
  RingPath reader_;  // rank 1
};

TEST_F(RingPathTest, RecordsArriveWholeAndInOrder) {
  ASSERT_TRUE(AttachWriter(false));
  EXPECT_TRUE(writer_.attached(1));
  EXPECT_FALSE(writer_.attached(0));
  EXPECT_FALSE(reader_.AnyHasData());
  ASSERT_TRUE(writer_.Write(1, Bytes("head:"), Bytes("first")));
  ASSERT_TRUE(writer_.Write(1, Bytes("second"), {}));
  EXPECT_TRUE(reader_.AnyHasData());
  EXPECT_EQ(Read(), (std::vector<std::string>{"head:first", "second"}));
  EXPECT_FALSE(reader_.AnyHasData());
  EXPECT_TRUE(Read().empty());
}

TEST_F(RingPathTest, AFullRingRefusesUntilItsReaderDrains) {
  ASSERT_TRUE(AttachWriter(false));
  const std::string record(kLargestRecord, 'x');
  int written = 0;
  while (writer_.Write(1, Bytes(record), {})) ++written;
  ASSERT_GT(written, 3);  // a quarter of the ring takes the largest record
  size_t read = 0;
  while (true) {  // 64 records a pass at most
    const size_t got = Read().size();
    if (got == 0) break;
    read += got;
  }
  EXPECT_EQ(read, static_cast<size_t>(written));
  EXPECT_TRUE(writer_.Write(1, Bytes(record), {}));
}

TEST_F(RingPathTest, AWriterWakesItsReaderOnlyWhileItSleeps) {
  ASSERT_TRUE(AttachWriter(true));
  ASSERT_TRUE(writer_.Write(1, Bytes("awake"), {}));
  EXPECT_FALSE(WokenUp());
  // A record already there: no sleep, and nothing to undo.
  EXPECT_FALSE(reader_.PrepareToSleep());
  EXPECT_EQ(Read().size(), 1u);
  ASSERT_TRUE(reader_.PrepareToSleep());
  ASSERT_TRUE(writer_.Write(1, Bytes("asleep"), {}));
  EXPECT_TRUE(WokenUp());
  reader_.Awake();
  ASSERT_TRUE(writer_.Write(1, Bytes("awake again"), {}));
  EXPECT_FALSE(WokenUp());
  EXPECT_EQ(Read(), (std::vector<std::string>{"asleep", "awake again"}));
}

TEST_F(RingPathTest, AttachRefusesWhatItCannotUse) {
  // A rank outside the node, beyond the table, a closed descriptor, rings too small for the
  // largest record: UCX stays, nothing is kept.
  RankSet node = node_;
  node.Insert(2);
  RingPath three;
  three.Open(node, 2, kLargestRecord);
  three.Grow(4);
  EXPECT_FALSE(writer_.Attach(2, pidfd_, three.offer(), wake_fd_, false));
  EXPECT_FALSE(writer_.Attach(5, pidfd_, reader_.offer(), wake_fd_, false));
  EXPECT_FALSE(
      writer_.Attach(1, pidfd_, {.fd = -1, .capacity = reader_.offer().capacity}, wake_fd_, false));
  EXPECT_FALSE(
      writer_.Attach(1, pidfd_, {.fd = reader_.offer().fd, .capacity = 4096}, wake_fd_, false));
  EXPECT_FALSE(writer_.Attach(1, -1, reader_.offer(), wake_fd_, false));
  EXPECT_FALSE(writer_.attached(1));
  // A wake-up fd that is not open in the peer: the ring is not kept either.
  const int closed = dup(wake_fd_);
  close(closed);
  EXPECT_FALSE(writer_.Attach(1, pidfd_, reader_.offer(), closed, true));
  EXPECT_FALSE(writer_.attached(1));
  EXPECT_TRUE(AttachWriter(false));
}

TEST_F(RingPathTest, NoRingsForAProcessAloneOnItsNode) {
  RankSet alone;
  alone.Insert(0);
  RingPath path;
  path.Open(alone, 0, kLargestRecord);
  EXPECT_FALSE(path.open());
  EXPECT_FALSE(path.has_incoming());
  EXPECT_EQ(path.offer().fd, -1);
  EXPECT_TRUE(path.PrepareToSleep());
}

TEST_F(RingPathTest, AWriterThatBreaksTheFormatIsReadNoMore) {
  ASSERT_TRUE(AttachWriter(false));
  ASSERT_TRUE(writer_.Write(1, Bytes("good"), {}));
  EXPECT_EQ(Read().size(), 1u);
  // Rank 0's ring in the reader's segment (after the 4 KiB control page, index 0), at the
  // reader's position: a record header of a kind no writer produces.
  const RingPath::Offer offer = reader_.offer();
  const size_t bytes = 4096 + shm::RingBytes(offer.capacity);
  void* segment = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, offer.fd, 0);
  ASSERT_NE(segment, MAP_FAILED);
  std::byte* data = static_cast<std::byte*>(segment) + 4096 + shm::kRingControlBytes;
  const size_t position = shm::kRecordHeaderBytes + 8;  // after "good", padded to 8
  const uint64_t bad = (uint64_t{0x7777} << 32) | 4;
  std::memcpy(data + position, &bad, sizeof(bad));
  munmap(segment, bytes);
  std::vector<Rank> broken;
  EXPECT_TRUE(Read(&broken).empty());
  EXPECT_EQ(broken, std::vector<Rank>{0});
  EXPECT_FALSE(reader_.has_incoming());
}

TEST_F(RingPathTest, CloseLeavesThePathOffAndCanBeRepeated) {
  ASSERT_TRUE(AttachWriter(true));
  writer_.Close();
  EXPECT_FALSE(writer_.attached(1));
  EXPECT_FALSE(writer_.open());
  writer_.Close();
  reader_.Close();
  EXPECT_FALSE(reader_.has_incoming());
  EXPECT_EQ(reader_.offer().fd, -1);
}

}  // namespace
}  // namespace rft::transport
