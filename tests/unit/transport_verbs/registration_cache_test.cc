#include "transport/verbs/registration_cache.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <random>
#include <thread>
#include <vector>

namespace rft::verbs {
namespace {

constexpr int kRead = 1;   // stands for IBV_ACCESS_REMOTE_READ
constexpr int kWrite = 2;  // stands for IBV_ACCESS_LOCAL_WRITE

const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));

// Records registrations as a device would hold them: each has a serial number (its handle) and
// its range; deregistering an unknown or already deregistered handle is a test failure.
class Registrar {
 public:
  struct Live {
    uintptr_t start;
    uintptr_t end;
    int access;
  };

  RegistrationCache Make(size_t max_bytes) {
    return RegistrationCache(
        max_bytes,
        [this](void* address, size_t length,
               int access) -> StatusOr<RegistrationCache::Registration> {
          if (fail_next_) {
            fail_next_ = false;
            return OtherError("ibv_reg_mr failed (test)");
          }
          const uintptr_t serial = ++serial_;
          const uintptr_t start = reinterpret_cast<uintptr_t>(address);
          live_[serial] = Live{start, start + length, access};
          return RegistrationCache::Registration{reinterpret_cast<void*>(serial),
                                                 static_cast<uint32_t>(serial),
                                                 static_cast<uint32_t>(serial + 1000)};
        },
        [this](void* handle) {
          const auto serial = reinterpret_cast<uintptr_t>(handle);
          EXPECT_EQ(live_.erase(serial), 1u) << "deregistered twice or unknown: " << serial;
        });
  }

  size_t live() const { return live_.size(); }
  const Live& of(const RegistrationCache::Lease& lease) const {
    return live_.at(reinterpret_cast<uintptr_t>(lease.registration.handle));
  }
  uintptr_t registered() const { return serial_; }
  void FailNext() { fail_next_ = true; }

 private:
  std::map<uintptr_t, Live> live_;
  uintptr_t serial_ = 0;
  bool fail_next_ = false;
};

// Addresses are only compared, never touched: page-aligned fake buffers.
const void* At(uintptr_t page, uintptr_t offset = 0) {
  return reinterpret_cast<const void*>(0x10000000 + page * kPage + offset);
}

TEST(RegistrationCacheTest, TheSameBufferIsRegisteredOnce) {
  Registrar device;
  RegistrationCache cache = device.Make(1 << 20);
  auto first = cache.Acquire(At(3, 100), 3 * kPage, kRead);
  ASSERT_TRUE(first.ok());
  cache.Release(*first);
  auto again = cache.Acquire(At(3, 100), 3 * kPage, kRead);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->registration.rkey, first->registration.rkey);
  EXPECT_EQ(device.registered(), 1u);
  // Whole pages around the range: the fourth page holds the tail.
  EXPECT_EQ(device.of(*again).start, reinterpret_cast<uintptr_t>(At(3)));
  EXPECT_EQ(device.of(*again).end, reinterpret_cast<uintptr_t>(At(7)));
  // A part of it, in the same pages, is found too; a range reaching past it is not.
  auto part = cache.Acquire(At(4, 8), 64, kRead);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(part->entry, again->entry);
  auto past = cache.Acquire(At(6), 2 * kPage, kRead);
  ASSERT_TRUE(past.ok());
  EXPECT_NE(past->entry, again->entry);
  EXPECT_EQ(cache.stats().hits, 2u);
  EXPECT_EQ(cache.stats().misses, 2u);
  cache.Release(*again);
  cache.Release(*part);
  cache.Release(*past);
  EXPECT_EQ(device.live(), 2u);  // kept for the next transfers
  EXPECT_EQ(cache.pinned_bytes(), 6 * kPage);
}

TEST(RegistrationCacheTest, MoreAccessThanAnEntryHasRegistersAgain) {
  Registrar device;
  RegistrationCache cache = device.Make(1 << 20);
  auto read = cache.Acquire(At(0), kPage, kRead);
  ASSERT_TRUE(read.ok());
  auto write = cache.Acquire(At(0), kPage, kWrite);
  ASSERT_TRUE(write.ok());
  EXPECT_NE(write->entry, read->entry);
  EXPECT_EQ(device.of(*write).access, kWrite);
  auto both = cache.Acquire(At(0), kPage, kRead | kWrite);
  ASSERT_TRUE(both.ok());
  EXPECT_EQ(device.registered(), 3u);
  // An entry with more access than asked serves the smaller request.
  auto read_again = cache.Acquire(At(0), kPage, kRead);
  ASSERT_TRUE(read_again.ok());
  EXPECT_EQ(device.registered(), 3u);
  for (const auto* lease : {&*read, &*write, &*both, &*read_again}) cache.Release(*lease);
}

TEST(RegistrationCacheTest, AnUnmappedRangeIsNeverFoundAgain) {
  Registrar device;
  RegistrationCache cache = device.Make(1 << 20);
  auto lease = cache.Acquire(At(10), 4 * kPage, kRead);
  ASSERT_TRUE(lease.ok());
  cache.Release(*lease);
  auto other = cache.Acquire(At(20), kPage, kRead);
  ASSERT_TRUE(other.ok());
  cache.Release(*other);
  // Ranges that end where the entry starts, or start where it ends, leave it alone.
  cache.Unmapped(At(8), 2 * kPage);
  cache.Unmapped(At(14), kPage);
  auto hit = cache.Acquire(At(10), 4 * kPage, kRead);
  ASSERT_TRUE(hit.ok());
  EXPECT_EQ(device.registered(), 2u);
  cache.Release(*hit);
  // One byte of its last page is enough.
  cache.Unmapped(At(13, kPage - 1), 1);
  EXPECT_EQ(cache.stats().invalidations, 1u);
  auto fresh = cache.Acquire(At(10), 4 * kPage, kRead);
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(device.registered(), 3u);
  EXPECT_EQ(device.live(), 2u);  // the stale one was deregistered; the other entry stays
  EXPECT_EQ(cache.pinned_bytes(), 5 * kPage);
  cache.Release(*fresh);
}

TEST(RegistrationCacheTest, AHeldEntryUnmappedGoesWhenItsTransferEnds) {
  Registrar device;
  RegistrationCache cache = device.Make(1 << 20);
  auto held = cache.Acquire(At(0), kPage, kRead);
  ASSERT_TRUE(held.ok());
  cache.Unmapped(At(0), kPage);
  auto fresh = cache.Acquire(At(0), kPage, kRead);  // drops stale entries no one holds
  ASSERT_TRUE(fresh.ok());
  EXPECT_NE(fresh->registration.handle, held->registration.handle);
  EXPECT_EQ(device.live(), 2u);
  cache.Release(*held);
  EXPECT_EQ(device.live(), 1u);
  cache.Release(*fresh);
  EXPECT_EQ(device.live(), 1u);
}

TEST(RegistrationCacheTest, TheByteBoundEvictsTheLeastRecentlyUsed) {
  Registrar device;
  RegistrationCache cache = device.Make(4 * kPage);
  std::vector<RegistrationCache::Lease> leases;
  for (uintptr_t page : {0, 10, 20, 30}) {
    auto lease = cache.Acquire(At(page), kPage, kRead);
    ASSERT_TRUE(lease.ok());
    cache.Release(*lease);
  }
  auto touch = cache.Acquire(At(0), kPage, kRead);  // page 0 becomes the most recent
  ASSERT_TRUE(touch.ok());
  cache.Release(*touch);
  auto fifth = cache.Acquire(At(40), kPage, kRead);
  ASSERT_TRUE(fifth.ok());
  cache.Release(*fifth);
  EXPECT_EQ(cache.stats().evictions, 1u);
  EXPECT_EQ(device.live(), 4u);
  EXPECT_LE(cache.pinned_bytes(), 4 * kPage);
  const uintptr_t before = device.registered();
  auto still = cache.Acquire(At(0), kPage, kRead);  // kept
  ASSERT_TRUE(still.ok());
  cache.Release(*still);
  EXPECT_EQ(device.registered(), before);
  auto evicted = cache.Acquire(At(10), kPage, kRead);  // page 10 was the least recent
  ASSERT_TRUE(evicted.ok());
  cache.Release(*evicted);
  EXPECT_EQ(device.registered(), before + 1);
}

TEST(RegistrationCacheTest, WithoutRoomATransferRegistersForItself) {
  Registrar device;
  RegistrationCache cache = device.Make(2 * kPage);
  auto a = cache.Acquire(At(0), kPage, kRead);
  auto b = cache.Acquire(At(10), kPage, kRead);
  ASSERT_TRUE(a.ok() && b.ok());
  auto c = cache.Acquire(At(20), kPage, kRead);  // a and b are held: no room
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->entry, RegistrationCache::kUncached);
  auto huge = cache.Acquire(At(100), 3 * kPage, kRead);  // over the bound
  ASSERT_TRUE(huge.ok());
  EXPECT_EQ(huge->entry, RegistrationCache::kUncached);
  EXPECT_EQ(cache.stats().uncached, 2u);
  EXPECT_EQ(device.live(), 4u);
  cache.Release(*c);
  cache.Release(*huge);
  EXPECT_EQ(device.live(), 2u);
  cache.Release(*a);
  cache.Release(*b);
  EXPECT_EQ(device.live(), 2u);
}

TEST(RegistrationCacheTest, AZeroBoundCachesNothing) {
  Registrar device;
  RegistrationCache cache = device.Make(0);
  for (int i = 0; i < 3; ++i) {
    auto lease = cache.Acquire(At(0), kPage, kRead);
    ASSERT_TRUE(lease.ok());
    EXPECT_EQ(lease->entry, RegistrationCache::kUncached);
    cache.Release(*lease);
    EXPECT_EQ(device.live(), 0u);
  }
  EXPECT_EQ(device.registered(), 3u);
}

TEST(RegistrationCacheTest, AFailedRegistrationKeepsNothing) {
  Registrar device;
  RegistrationCache cache = device.Make(1 << 20);
  device.FailNext();
  auto failed = cache.Acquire(At(0), kPage, kRead);
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find("ibv_reg_mr failed"), std::string::npos);
  EXPECT_EQ(cache.entries(), 0);
  EXPECT_EQ(cache.pinned_bytes(), 0u);
  auto lease = cache.Acquire(At(0), kPage, kRead);
  ASSERT_TRUE(lease.ok());
  cache.Release(*lease);
}

TEST(RegistrationCacheTest, DestroyingTheCacheDeregistersEverything) {
  Registrar device;
  {
    RegistrationCache cache = device.Make(1 << 20);
    auto held = cache.Acquire(At(0), kPage, kRead);
    auto kept = cache.Acquire(At(10), kPage, kRead);
    ASSERT_TRUE(held.ok() && kept.ok());
    cache.Release(*kept);
  }
  EXPECT_EQ(device.live(), 0u);
}

// Random acquires, releases and unmaps against a model of the address space: a lease always
// covers its range with the access asked, and never comes from a registration made before an
// unmap of any of its pages. Prints the seed of a failure.
TEST(RegistrationCacheTest, RandomSchedulesNeverHandOutARegistrationOfUnmappedPages) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Registrar device;
    RegistrationCache cache = device.Make(24 * kPage);
    std::mt19937 random(seed);
    std::map<uintptr_t, uintptr_t> unmapped_at;  // page -> the last registration serial before
    std::vector<RegistrationCache::Lease> held;
    for (int step = 0; step < 400; ++step) {
      const int what = static_cast<int>(random() % 10);
      if (what < 5) {
        const uintptr_t page = random() % 32;
        const size_t length = 1 + random() % (3 * kPage);
        const int access = 1 + static_cast<int>(random() % 3);
        auto lease = cache.Acquire(At(page, random() % kPage), length, access);
        ASSERT_TRUE(lease.ok());
        const auto& live = device.of(*lease);
        const uintptr_t start = reinterpret_cast<uintptr_t>(At(page));
        ASSERT_LE(live.start, start);
        ASSERT_GE(live.end, start + length);
        ASSERT_EQ(access & ~live.access, 0);
        const uintptr_t serial = reinterpret_cast<uintptr_t>(lease->registration.handle);
        for (uintptr_t p = (live.start - reinterpret_cast<uintptr_t>(At(0))) / kPage;
             reinterpret_cast<uintptr_t>(At(p)) < live.end; ++p) {
          auto it = unmapped_at.find(p);
          ASSERT_TRUE(it == unmapped_at.end() || serial > it->second)
              << "registration " << serial << " covers page " << p << ", unmapped after "
              << it->second;
        }
        held.push_back(*lease);
      } else if (what < 8 && !held.empty()) {
        const size_t i = random() % held.size();
        cache.Release(held[i]);
        held[i] = held.back();
        held.pop_back();
      } else {
        const uintptr_t page = random() % 34;
        const uintptr_t pages = 1 + random() % 3;
        cache.Unmapped(At(page), pages * kPage);
        for (uintptr_t p = page; p < page + pages; ++p) unmapped_at[p] = device.registered();
      }
      ASSERT_LE(cache.pinned_bytes(), cache.max_bytes());
    }
    for (const auto& lease : held) cache.Release(lease);
  }
}

// Unmapped runs in whatever thread unmaps memory, while the owner acquires and releases: no
// data race (this test is for the TSan build) and nothing stale is handed out afterwards.
TEST(RegistrationCacheTest, UnmapsFromAnotherThreadAreSafe) {
  Registrar device;
  RegistrationCache cache = device.Make(64 * kPage);
  std::atomic<bool> stop{false};
  std::thread unmapper([&] {
    uint32_t page = 0;
    while (!stop.load()) {
      cache.Unmapped(At(page % 16), kPage);
      ++page;
    }
  });
  for (int i = 0; i < 20000; ++i) {
    auto lease = cache.Acquire(At(i % 16), kPage, kRead);
    ASSERT_TRUE(lease.ok());
    cache.Release(*lease);
  }
  stop.store(true);
  unmapper.join();
  cache.Unmapped(At(0), 16 * kPage);
  const uintptr_t before = device.registered();
  auto lease = cache.Acquire(At(0), kPage, kRead);
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(device.registered(), before + 1);
  cache.Release(*lease);
}

}  // namespace
}  // namespace rft::verbs
