// rft_bench_shm_ring: one-way latency of transport/shm's ring between two processes of one node
// (ping-pong, both spinning, each on its own CPU when there are two), beside the floor of the
// same machine measured in the same run: the same ping-pong on two bare shared counters.
//
//   rft_bench_shm_ring [--iters N] [--reps R] [--sizes 8,1024,8192] [--json]
//
// A record is rft's 32-byte wire header plus the payload, as the data plane would write it.
// Prints per size the median over R repetitions of the one-way time (round trip / 2), and the
// ratio to the floor; with --json one JSON line per figure (bench "shm_ring_latency").
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "transport/shm/spsc_ring.h"

namespace {

using rft::transport::shm::RingBytes;
using rft::transport::shm::RingReader;
using rft::transport::shm::RingWriter;
using Clock = std::chrono::steady_clock;

constexpr size_t kCapacity = 64 * 1024;
constexpr size_t kHeader = 32;

struct alignas(64) Counter {
  std::atomic<uint64_t> value;
};

struct Shared {
  Counter ping;
  Counter pong;
  Counter go;     // the partner's next command (Command), new each time
  Counter ready;  // the last command the partner finished
};

// sequence << 40 | kind << 32 | payload size: every command differs from the one before.
enum Kind : uint64_t { kFloor = 1, kRing = 2, kQuit = 3 };
uint64_t Command(uint64_t sequence, Kind kind, size_t size) {
  return sequence << 40 | static_cast<uint64_t>(kind) << 32 | size;
}

void Pin(int cpu) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  sched_setaffinity(0, sizeof(set), &set);
}

// Echoes `iters` records of `size` payload bytes from `in` to `out`.
void Echo(RingReader& in, RingWriter& out, size_t size, long iters, std::vector<std::byte>& buf) {
  for (long i = 0; i < iters; ++i) {
    int got = 0;
    while (got == 0) {
      got = *in.Drain(
          1, [&](std::span<const std::byte> p) { std::memcpy(buf.data(), p.data(), p.size()); });
    }
    while (!out.TryWrite(std::span(buf).first(kHeader), std::span(buf).subspan(kHeader, size))) {
    }
  }
}

double PingPong(RingWriter& out, RingReader& in, size_t size, long iters,
                std::vector<std::byte>& buf) {
  const auto start = Clock::now();
  for (long i = 0; i < iters; ++i) {
    while (!out.TryWrite(std::span(buf).first(kHeader), std::span(buf).subspan(kHeader, size))) {
    }
    int got = 0;
    while (got == 0) {
      got = *in.Drain(
          1, [&](std::span<const std::byte> p) { std::memcpy(buf.data(), p.data(), p.size()); });
    }
  }
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  return ns / static_cast<double>(iters) / 2 / 1000;  // one way, µs
}

double FloorPingPong(Shared& s, long iters) {
  const auto start = Clock::now();
  for (long i = 1; i <= iters; ++i) {
    s.ping.value.store(static_cast<uint64_t>(i), std::memory_order_release);
    while (s.pong.value.load(std::memory_order_acquire) != static_cast<uint64_t>(i)) {
    }
  }
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count();
  return ns / static_cast<double>(iters) / 2 / 1000;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  long iters = 200000;
  int reps = 5;
  bool json = false;
  std::vector<size_t> sizes = {8, 1024, 8192};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--iters" && i + 1 < argc) {
      iters = std::atol(argv[++i]);
    } else if (arg == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else if (arg == "--json") {
      json = true;
    } else if (arg == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (char* p = std::strtok(argv[++i], ","); p != nullptr; p = std::strtok(nullptr, ",")) {
        sizes.push_back(std::strtoul(p, nullptr, 10));
      }
    } else {
      std::fprintf(stderr,
                   "rft_bench_shm_ring: unknown argument %s\nusage: rft_bench_shm_ring [--iters N] "
                   "[--reps R] [--sizes 8,1024,8192] [--json]\n",
                   argv[i]);
      return 2;
    }
  }
  if (iters < 1 || reps < 1) {
    std::fprintf(stderr, "rft_bench_shm_ring: --iters and --reps must be at least 1\n");
    return 2;
  }
  for (size_t size : sizes) {
    if (kHeader + size > kCapacity / 4) {
      std::fprintf(stderr, "rft_bench_shm_ring: size %zu: expected at most %zu bytes\n", size,
                   kCapacity / 4 - kHeader);
      return 2;
    }
  }
  const size_t ring_bytes = RingBytes(kCapacity);
  const size_t bytes = sizeof(Shared) + 2 * ring_bytes;
  void* memory = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    std::perror("mmap");
    return 1;
  }
  auto* shared = new (memory) Shared{};
  std::byte* to_partner = static_cast<std::byte*>(memory) + sizeof(Shared);
  std::byte* from_partner = to_partner + ring_bytes;
  std::vector<std::byte> buf(kHeader + *std::max_element(sizes.begin(), sizes.end()));

  const pid_t partner = fork();
  if (partner == 0) {
    Pin(1);
    RingReader in(to_partner, kCapacity);
    RingWriter out(from_partner, kCapacity);
    uint64_t last = 0;
    for (;;) {
      uint64_t command;
      while ((command = shared->go.value.load(std::memory_order_acquire)) == last) {
      }
      const auto kind = static_cast<Kind>((command >> 32) & 0xff);
      if (kind == kQuit) _exit(0);
      if (kind == kFloor) {
        for (long i = 1; i <= iters; ++i) {
          while (shared->ping.value.load(std::memory_order_acquire) != static_cast<uint64_t>(i)) {
          }
          shared->pong.value.store(static_cast<uint64_t>(i), std::memory_order_release);
        }
      } else {
        Echo(in, out, static_cast<size_t>(command & 0xffffffff), iters, buf);
      }
      last = command;
      shared->ready.value.store(command, std::memory_order_release);
    }
  }
  Pin(0);
  RingWriter out(to_partner, kCapacity);
  RingReader in(from_partner, kCapacity);
  uint64_t sequence = 0;
  // Starts `command` at the partner, runs `measure` here, waits until the partner is done.
  auto run = [&](uint64_t command, auto&& measure) {
    shared->go.value.store(command, std::memory_order_release);
    const double us = measure();
    while (shared->ready.value.load(std::memory_order_acquire) != command) {
    }
    return us;
  };
  std::vector<double> floor;
  std::vector<std::vector<double>> ring(sizes.size());
  for (int r = 0; r < reps; ++r) {
    // Interleaved: each repetition measures the floor and every size back to back.
    shared->ping.value.store(0, std::memory_order_relaxed);
    shared->pong.value.store(0, std::memory_order_relaxed);
    floor.push_back(
        run(Command(++sequence, kFloor, 0), [&] { return FloorPingPong(*shared, iters); }));
    for (size_t k = 0; k < sizes.size(); ++k) {
      ring[k].push_back(run(Command(++sequence, kRing, sizes[k]),
                            [&] { return PingPong(out, in, sizes[k], iters, buf); }));
    }
  }
  shared->go.value.store(Command(++sequence, kQuit, 0), std::memory_order_release);
  waitpid(partner, nullptr, 0);

  const double floor_us = Median(floor);
  std::printf(
      "shm ring one-way latency, median of %d reps of %ld round trips (floor: bare shared "
      "counters, %.3f us)\n",
      reps, iters, floor_us);
  for (size_t k = 0; k < sizes.size(); ++k) {
    const double us = Median(ring[k]);
    std::printf("  %6zu B payload: %.3f us  (%.2fx the floor)\n", sizes[k], us, us / floor_us);
    if (json) {
      std::printf(
          "{\"bench\":\"shm_ring_latency\",\"size\":%zu,\"p50_us\":%.4f,\"floor_us\":%.4f,"
          "\"ratio\":%.3f,\"reps\":%d,\"iters\":%ld}\n",
          sizes[k], us, floor_us, us / floor_us, reps, iters);
    }
  }
  return 0;
}
