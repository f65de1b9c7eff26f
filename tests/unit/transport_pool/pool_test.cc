#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <set>
#include <vector>

#include "transport/pool/buffer_pool.h"
#include "transport/pool/object_pool.h"

// Counts every allocation in this test binary, so a test can assert that a stretch of code
// allocated nothing.
namespace {
std::atomic<uint64_t> g_allocations{0};
}  // namespace

void* operator new(size_t size) {
  ++g_allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }
void* operator new(size_t size, std::align_val_t align) {
  ++g_allocations;
  void* p = nullptr;
  if (posix_memalign(&p, static_cast<size_t>(align), size == 0 ? 1 : size) == 0) return p;
  throw std::bad_alloc();
}
void operator delete(void* p, std::align_val_t) noexcept { std::free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { std::free(p); }

namespace rft::transport {
namespace {

struct Tracked {
  static int live;
  explicit Tracked(int v = 7) : value(v) { ++live; }
  ~Tracked() { --live; }
  int value;
  char payload[40];
};
int Tracked::live = 0;

// The "does not allocate" tests below are only as good as the counter.
TEST(AllocationCounterTest, SeesAllocations) {
  const uint64_t before = g_allocations.load();
  auto* volatile p = new int(3);
  delete p;
  ObjectPool<Tracked> growing(4, 0);
  growing.Release(growing.Acquire());  // the first Acquire must grow the pool
  EXPECT_GE(g_allocations.load(), before + 2);
}

TEST(ObjectPoolTest, ConstructsOnAcquireAndDestroysOnRelease) {
  ObjectPool<Tracked> pool(4, 4);
  Tracked* a = pool.Acquire(42);
  Tracked* b = pool.Acquire();
  EXPECT_EQ(a->value, 42);
  EXPECT_EQ(b->value, 7);
  EXPECT_EQ(Tracked::live, 2);
  EXPECT_EQ(pool.in_use(), 2u);
  pool.Release(a);
  pool.Release(b);
  EXPECT_EQ(Tracked::live, 0);
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(ObjectPoolTest, ReusesLastReleasedFirst) {
  ObjectPool<Tracked> pool(4, 4);
  Tracked* a = pool.Acquire();
  pool.Release(a);
  EXPECT_EQ(pool.Acquire(), a);  // warm in cache
  pool.Release(a);
}

TEST(ObjectPoolTest, GrowsInChunksAndHandsOutDistinctObjects) {
  ObjectPool<Tracked> pool(8, 0);
  EXPECT_EQ(pool.capacity(), 0u);
  std::set<Tracked*> seen;
  std::vector<Tracked*> held;
  for (int i = 0; i < 100; ++i) {
    Tracked* t = pool.Acquire(i);
    EXPECT_TRUE(seen.insert(t).second) << "object handed out twice";
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t) % alignof(Tracked), 0u);
    held.push_back(t);
  }
  EXPECT_EQ(pool.capacity(), 104u);  // 13 chunks of 8
  for (int i = 0; i < 100; ++i) EXPECT_EQ(held[i]->value, i);
  for (Tracked* t : held) pool.Release(t);
}

TEST(ObjectPoolTest, SteadyStateDoesNotAllocate) {
  ObjectPool<Tracked> pool(64, 64);
  std::vector<Tracked*> held;
  held.reserve(64);
  const uint64_t before = g_allocations.load();
  for (int round = 0; round < 1000; ++round) {
    for (int i = 0; i < 64; ++i) held.push_back(pool.Acquire(i));
    for (Tracked* t : held) pool.Release(t);
    held.clear();
  }
  EXPECT_EQ(g_allocations.load(), before);
}

TEST(ObjectPoolDeathTest, DestroyingWithObjectsOutIsALeak) {
  EXPECT_DEATH(
      {
        ObjectPool<Tracked> pool(4, 4);
        pool.Acquire();
      },
      "objects still in use");
}

TEST(BufferPoolTest, SizesRoundUpToPowerOfTwoClasses) {
  BufferPool pool(8192);
  EXPECT_EQ(pool.max_size(), 8192u);
  EXPECT_EQ(BufferPool(5000).max_size(), 8192u);
  EXPECT_EQ(BufferPool(1).max_size(), 64u);
  EXPECT_EQ(pool.Acquire(8193), nullptr);  // beyond the eager limit: not the pool's job
  std::byte* zero = pool.Acquire(0);
  ASSERT_NE(zero, nullptr);
  pool.Release(zero, 0);
}

TEST(BufferPoolTest, BuffersAreAlignedDistinctAndWritable) {
  BufferPool pool(4096);
  std::mt19937 rng(12345);
  struct Held {
    std::byte* buffer;
    size_t size;
    uint8_t fill;
  };
  std::vector<Held> held;
  for (int i = 0; i < 2000; ++i) {
    const size_t size = rng() % 4097;
    std::byte* buffer = pool.Acquire(size);
    ASSERT_NE(buffer, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer) % 64, 0u);
    const uint8_t fill = static_cast<uint8_t>(i);
    std::memset(buffer, fill, size);
    held.push_back({buffer, size, fill});
  }
  // No buffer overlapped another: every one still holds its own bytes.
  for (const Held& h : held) {
    for (size_t j = 0; j < h.size; ++j) {
      ASSERT_EQ(static_cast<uint8_t>(h.buffer[j]), h.fill);
    }
  }
  EXPECT_EQ(pool.in_use(), held.size());
  for (const Held& h : held) pool.Release(h.buffer, h.size);
  EXPECT_EQ(pool.in_use(), 0u);
}

TEST(BufferPoolTest, SteadyStateDoesNotAllocate) {
  BufferPool pool(8192);
  std::vector<std::pair<std::byte*, size_t>> held;
  held.reserve(256);
  std::mt19937 rng(7);
  std::vector<size_t> sizes(256);
  for (size_t& s : sizes) s = rng() % 8193;
  // Warm up: the pool grows to what this pattern needs.
  for (size_t s : sizes) held.emplace_back(pool.Acquire(s), s);
  for (auto& [b, s] : held) pool.Release(b, s);
  held.clear();
  const size_t footprint = pool.footprint();
  const uint64_t before = g_allocations.load();
  for (int round = 0; round < 200; ++round) {
    for (size_t s : sizes) held.emplace_back(pool.Acquire(s), s);
    for (auto& [b, s] : held) pool.Release(b, s);
    held.clear();
  }
  EXPECT_EQ(g_allocations.load(), before);
  EXPECT_EQ(pool.footprint(), footprint);
}

}  // namespace
}  // namespace rft::transport
