// The clock of the ping-pong benchmarks (rft_bench_p2p, rft_bench_verbs): a timestamp read once
// per round trip, inside the measured interval, so it must cost next to nothing.
// clock_gettime does on hardware (the vDSO reads the TSC), but in a soft-RoCE guest under TCG
// the kernel's clock source is the emulated HPET, and a call takes about 1 us: half a
// microsecond on every one-way figure. perftest and ucx_perftest read the TSC; so does this on
// x86, converting ticks to time at the rate measured over the loop.
#ifndef RFT_BENCH_ROUND_TRIP_CLOCK_H_
#define RFT_BENCH_ROUND_TRIP_CLOCK_H_

#include <cstdint>
#include <cstdio>
#include <cstdlib>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "base/clock.h"

namespace rft::bench {

class RoundTripClock {
 public:
  // The loop starts: the rate is measured from here.
  RoundTripClock() : start_ns_(MonotonicNanos()), start_(Ticks()) {}

#if defined(__x86_64__)
  static int64_t Ticks() { return static_cast<int64_t>(__rdtsc()); }
#else
  static int64_t Ticks() { return MonotonicNanos(); }
#endif
  int64_t start() const { return start_; }

  // Nanoseconds per tick over the loop, whose last timestamp was `end`. Exits the benchmark
  // (status 1, naming `program`) when the counter did not advance: no figure would mean anything.
  double NanosPerTick(int64_t end, const char* program) const {
    const int64_t ticks = end - start_;
    if (ticks <= 0) {
      std::fprintf(stderr, "%s: the time stamp counter did not advance (%lld ticks)\n", program,
                   static_cast<long long>(ticks));
      std::exit(1);
    }
    return static_cast<double>(MonotonicNanos() - start_ns_) / static_cast<double>(ticks);
  }

 private:
  int64_t start_ns_;
  int64_t start_;
};

}  // namespace rft::bench

#endif  // RFT_BENCH_ROUND_TRIP_CLOCK_H_
