// The shared-memory ring: order and content through wrap-around, full and empty, records the
// reader must refuse, a writer and a reader on two threads, and the property it exists for: a
// writer killed at any instruction never blocks its reader, and what the reader got from it is
// whole. A failing schedule prints its seed.
#include "transport/shm/spsc_ring.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace rft::transport::shm {
namespace {

constexpr size_t kCapacity = 4096;

// Shared (MAP_SHARED) so that forked writers see the same ring; zeroed by mmap.
class SharedRings {
 public:
  SharedRings(size_t count, size_t capacity) : bytes_(count * RingBytes(capacity)) {
    memory_ = mmap(nullptr, bytes_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    EXPECT_NE(memory_, MAP_FAILED);
    stride_ = RingBytes(capacity);
  }
  ~SharedRings() { munmap(memory_, bytes_); }
  void* ring(size_t i) const { return static_cast<std::byte*>(memory_) + i * stride_; }

 private:
  size_t bytes_;
  size_t stride_ = 0;
  void* memory_ = nullptr;
};

// Record `sequence` of writer `writer`: its first 8 bytes the sequence, 4 the writer, then a
// pattern both sides compute; `size` >= 12.
void FillRecord(uint32_t writer, uint64_t sequence, std::span<std::byte> out) {
  std::memcpy(out.data(), &sequence, 8);
  std::memcpy(out.data() + 8, &writer, 4);
  for (size_t i = 12; i < out.size(); ++i) {
    out[i] = static_cast<std::byte>((sequence * 131 + writer * 7 + i) & 0xff);
  }
}

// Empty if `got` is record `sequence` of `writer` of `size` bytes, else what differs.
std::string CheckRecord(uint32_t writer, uint64_t sequence, size_t size,
                        std::span<const std::byte> got) {
  if (got.size() != size) {
    return "record " + std::to_string(sequence) + ": " + std::to_string(got.size()) +
           " bytes, expected " + std::to_string(size);
  }
  std::vector<std::byte> want(size);
  FillRecord(writer, sequence, want);
  if (std::memcmp(want.data(), got.data(), size) != 0) {
    return "record " + std::to_string(sequence) + " of writer " + std::to_string(writer) +
           ": content differs";
  }
  return "";
}

size_t SizeOf(uint64_t sequence, size_t max) { return 12 + (sequence * 2654435761u) % (max - 11); }

TEST(SpscRingTest, CapacityMustBeAPowerOfTwoInRange) {
  EXPECT_TRUE(CheckRingCapacity(4096).ok());
  EXPECT_TRUE(CheckRingCapacity(size_t{1} << 30).ok());
  for (size_t bad : {size_t{0}, size_t{2048}, size_t{6000}, (size_t{1} << 30) * 2}) {
    const Status s = CheckRingCapacity(bad);
    EXPECT_EQ(s.code(), RFT_ERR_ARG);
    EXPECT_NE(s.message().find(std::to_string(bad) + " bytes"), std::string::npos) << s.message();
  }
}

// One thread alternating bursts of writes and drains: every record arrives once, in order,
// whole, through many wrap-arounds and pads.
TEST(SpscRingTest, RecordsArriveInOrderAndWholeThroughWrapArounds) {
  SharedRings rings(1, kCapacity);
  RingWriter writer(rings.ring(0), kCapacity);
  RingReader reader(rings.ring(0), kCapacity);
  std::mt19937_64 rng(7);
  std::vector<std::byte> record(writer.max_payload());
  uint64_t written = 0, read = 0;
  std::string wrong;
  while (read < 20000) {
    const int burst = static_cast<int>(rng() % 8);
    for (int i = 0; i < burst; ++i) {
      const size_t size = SizeOf(written, writer.max_payload());
      FillRecord(1, written, std::span(record).first(size));
      // Split in two pieces at a random point: the reader sees one payload.
      const size_t cut = rng() % (size + 1);
      if (!writer.TryWrite(std::span(record).first(cut),
                           std::span(record).subspan(cut, size - cut))) {
        break;
      }
      ++written;
    }
    StatusOr<int> got =
        reader.Drain(static_cast<int>(rng() % 8), [&](std::span<const std::byte> p) {
          const std::string why = CheckRecord(1, read, SizeOf(read, writer.max_payload()), p);
          if (wrong.empty()) wrong = why;
          ++read;
        });
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    ASSERT_TRUE(wrong.empty()) << wrong;
    ASSERT_LE(read, written);
  }
}

TEST(SpscRingTest, AFullRingRefusesAndKeepsWhatItHas) {
  SharedRings rings(1, kCapacity);
  RingWriter writer(rings.ring(0), kCapacity);
  RingReader reader(rings.ring(0), kCapacity);
  EXPECT_FALSE(reader.HasData());
  std::vector<std::byte> record(1000);
  int accepted = 0;
  while (true) {
    FillRecord(2, static_cast<uint64_t>(accepted), record);
    if (!writer.TryWrite(record)) break;
    ++accepted;
  }
  EXPECT_EQ(accepted, 4);  // 4 x 1008 bytes of 4096
  EXPECT_TRUE(reader.HasData());
  EXPECT_EQ(writer.Backlog(), 4u * 1008u);
  uint64_t read = 0;
  std::string wrong;
  StatusOr<int> got = reader.Drain(100, [&](std::span<const std::byte> p) {
    if (wrong.empty()) wrong = CheckRecord(2, read, 1000, p);
    ++read;
  });
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, 4);
  EXPECT_TRUE(wrong.empty()) << wrong;
  EXPECT_FALSE(reader.HasData());
  EXPECT_EQ(writer.Backlog(), 0u);
  EXPECT_TRUE(writer.TryWrite(record));  // room again
}

TEST(SpscRingTest, EmptyRecordsAndTheLargestOneFit) {
  SharedRings rings(1, kCapacity);
  RingWriter writer(rings.ring(0), kCapacity);
  RingReader reader(rings.ring(0), kCapacity);
  std::vector<std::byte> largest(writer.max_payload(), std::byte{0x5a});
  ASSERT_TRUE(writer.TryWrite({}));
  ASSERT_TRUE(writer.TryWrite(largest));
  std::vector<size_t> sizes;
  ASSERT_TRUE(
      reader.Drain(10, [&](std::span<const std::byte> p) { sizes.push_back(p.size()); }).ok());
  EXPECT_EQ(sizes, (std::vector<size_t>{0, writer.max_payload()}));
}

// A length or kind no writer produces (a scribbled ring) is refused by name, never followed.
TEST(SpscRingTest, ABadRecordIsRefusedNotFollowed) {
  SharedRings rings(1, kCapacity);
  RingWriter writer(rings.ring(0), kCapacity);
  RingReader reader(rings.ring(0), kCapacity);
  std::vector<std::byte> record(16);
  ASSERT_TRUE(writer.TryWrite(record));
  auto* data = static_cast<std::byte*>(rings.ring(0)) + kRingControlBytes;
  const uint32_t huge = 1u << 20;
  std::memcpy(data, &huge, 4);
  int delivered = 0;
  StatusOr<int> got = reader.Drain(10, [&](std::span<const std::byte>) { ++delivered; });
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(delivered, 0);
  EXPECT_NE(got.status().message().find("length 1048576"), std::string::npos)
      << got.status().message();
}

// A writer thread and a reader thread: a million records in order (run under TSan too).
TEST(SpscRingTest, AWriterAndAReaderOnTwoThreads) {
  constexpr uint64_t kRecords = 200000;
  SharedRings rings(1, 64 * 1024);
  RingReader reader(rings.ring(0), 64 * 1024);
  std::thread producer([&] {
    RingWriter writer(rings.ring(0), 64 * 1024);
    std::vector<std::byte> record(256);
    for (uint64_t i = 0; i < kRecords;) {
      const size_t size = SizeOf(i, 256);
      FillRecord(3, i, std::span(record).first(size));
      if (writer.TryWrite(std::span(record).first(size))) {
        ++i;
      } else {
        std::this_thread::yield();
      }
    }
  });
  uint64_t read = 0;
  std::string wrong;
  while (read < kRecords && wrong.empty()) {
    StatusOr<int> got = reader.Drain(64, [&](std::span<const std::byte> p) {
      if (wrong.empty()) wrong = CheckRecord(3, read, SizeOf(read, 256), p);
      ++read;
    });
    ASSERT_TRUE(got.ok()) << got.status().ToString();
    if (*got == 0) std::this_thread::yield();
  }
  producer.join();
  EXPECT_TRUE(wrong.empty()) << wrong;
  EXPECT_EQ(read, kRecords);
}

// The property the ring exists for. Two writer processes stream into their own rings; one is
// SIGKILLed a random time after its first record arrived, whatever it is doing (often inside
// TryWrite's copy). The reader must go on getting the other writer's records, and from the
// victim only whole records in order (a prefix of what it wrote).
TEST(SpscRingTest, AWriterKilledAnywhereNeverBlocksTheReader) {
  constexpr int kSchedules = 40;
  constexpr uint64_t kAfterKill = 5000;  // records from the survivor read after the kill
  for (int schedule = 0; schedule < kSchedules; ++schedule) {
    const uint64_t seed = 1000 + static_cast<uint64_t>(schedule);
    SCOPED_TRACE("seed " + std::to_string(seed));
    SharedRings rings(2, kCapacity);
    auto writer_process = [&](uint32_t index, uint64_t records) {
      RingWriter writer(rings.ring(index), kCapacity);
      std::vector<std::byte> record(writer.max_payload());
      for (uint64_t i = 0; i < records;) {
        const size_t size = SizeOf(i, writer.max_payload());
        FillRecord(index, i, std::span(record).first(size));
        if (writer.TryWrite(std::span(record).first(size / 2),
                            std::span(record).subspan(size / 2, size - size / 2))) {
          ++i;
        }
      }
      _exit(0);
    };
    const pid_t victim = fork();
    if (victim == 0) writer_process(0, UINT64_MAX);
    const pid_t survivor = fork();
    if (survivor == 0) writer_process(1, UINT64_MAX);
    ASSERT_GT(victim, 0);
    ASSERT_GT(survivor, 0);
    RingReader from_victim(rings.ring(0), kCapacity);
    RingReader from_survivor(rings.ring(1), kCapacity);
    std::mt19937_64 rng(seed);
    // The kill comes a random time after the victim's first record arrived (so it is writing).
    const auto delay = std::chrono::microseconds(rng() % 20000);
    std::chrono::steady_clock::time_point kill_at = std::chrono::steady_clock::time_point::max();
    bool killed = false;
    uint64_t victim_read = 0, survivor_read = 0;
    std::string wrong;
    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    uint64_t survivor_at_kill = 0;
    while ((!killed || survivor_read < survivor_at_kill + kAfterKill) && wrong.empty()) {
      ASSERT_LT(std::chrono::steady_clock::now(), limit)
          << "the reader is stuck: " << survivor_read - survivor_at_kill
          << " records from the survivor since the kill (killed: " << killed << "), seed " << seed;
      if (kill_at == std::chrono::steady_clock::time_point::max() && victim_read > 0) {
        kill_at = std::chrono::steady_clock::now() + delay;
      }
      if (!killed && std::chrono::steady_clock::now() >= kill_at) {
        ASSERT_EQ(kill(victim, SIGKILL), 0);
        ASSERT_EQ(waitpid(victim, nullptr, 0), victim);
        killed = true;
        survivor_at_kill = survivor_read;
      }
      StatusOr<int> got = from_victim.Drain(16, [&](std::span<const std::byte> p) {
        if (wrong.empty())
          wrong = CheckRecord(0, victim_read, SizeOf(victim_read, kCapacity / 4), p);
        ++victim_read;
      });
      ASSERT_TRUE(got.ok()) << got.status().ToString() << ", seed " << seed;
      got = from_survivor.Drain(16, [&](std::span<const std::byte> p) {
        if (wrong.empty()) {
          wrong = CheckRecord(1, survivor_read, SizeOf(survivor_read, kCapacity / 4), p);
        }
        ++survivor_read;
      });
      ASSERT_TRUE(got.ok()) << got.status().ToString() << ", seed " << seed;
    }
    kill(survivor, SIGKILL);
    ASSERT_EQ(waitpid(survivor, nullptr, 0), survivor);
    // What the victim left published is still whole.
    StatusOr<int> rest = from_victim.Drain(1 << 20, [&](std::span<const std::byte> p) {
      if (wrong.empty()) wrong = CheckRecord(0, victim_read, SizeOf(victim_read, kCapacity / 4), p);
      ++victim_read;
    });
    ASSERT_TRUE(rest.ok()) << rest.status().ToString() << ", seed " << seed;
    ASSERT_TRUE(wrong.empty()) << wrong << ", seed " << seed;
  }
}

}  // namespace
}  // namespace rft::transport::shm
