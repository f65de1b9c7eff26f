// rft_bench_sim_detect: detection + propagation time of a crash versus job size, in the
// simulator of tests/sim/ driving the real detector cores (no processes, no network).
//
//   bazel run -c opt //bench:rft_bench_sim_detect -- [--max-n 65536] [--faults 20] [--json]
//       [--period-ms 4] [--timeout-ms 20] [--latency-ns 1500] [--jitter-ns 500]
//       [--timer-lateness-us 20] [--seed 1]
//
// For each n = 2, 4, ..., max-n: `faults` independent runs (seeds seed, seed+1, ...; by default
// 20, and 10 above 16,384 ranks where a run costs about a second of CPU), each
// crashing one random rank 4-5 periods after start. A sample is the simulated time from the
// crash until the last surviving process's registry has it (heartbeat timeout at its observer,
// then the reliable broadcast); "detect" is until the first suspicion. hops_max is the longest
// path the failure flood took to first reach a process.
//
// Network model (docs/detector.md, "Simulator"): every message and put takes latency +
// exponential jitter; every timer firing is late by an exponential lateness (the control
// thread's wake-up); η and δ are RFT_HEARTBEAT_PERIOD and RFT_HEARTBEAT_TIMEOUT's defaults.
#include <malloc.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "tests/sim/simulator.h"

namespace {

using rft::Rank;
using rft::sim::BroadcastRecord;
using rft::sim::SimOptions;
using rft::sim::Simulator;

constexpr double kNsPerMs = 1e6;

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const size_t index = static_cast<size_t>(p / 100 * static_cast<double>(values.size()));
  return values[std::min(values.size() - 1, index)];
}

// A positive integer flag value, or exit with a message naming the flag.
long long PositiveFlag(const char* flag, const char* text) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (end == text || *end != '\0' || value <= 0) {
    std::fprintf(stderr, "rft_bench_sim_detect: %s %s: expected a positive integer\n", flag, text);
    std::exit(2);
  }
  return value;
}

struct Sample {
  double detect_ms;
  double all_know_ms;
  int hops;
};

// One run: crash a random rank of `n`, return when every survivor knows.
Sample RunOnce(const SimOptions& base, Rank n, uint64_t seed, uint64_t* events) {
  SimOptions options = base;
  options.size = n;
  options.seed = seed;
  Simulator sim(options);
  std::mt19937_64 rng(seed ^ 0x5eed5eedULL);
  const Rank victim = static_cast<Rank>(rng() % n);
  const int64_t period = options.heartbeat.period_ns;
  const int64_t crash_at = 4 * period + static_cast<int64_t>(rng() % period);
  sim.Crash(victim, crash_at);
  const int64_t limit = crash_at + 10 * options.heartbeat.timeout_ns;
  if (!sim.RunUntilAllKnow(limit, period / 2)) {
    std::fprintf(stderr, "rft_bench_sim_detect: n=%u seed=%llu: crash of %u not known everywhere\n",
                 n, static_cast<unsigned long long>(seed), victim);
    std::exit(1);
  }
  *events += sim.events_processed();
  Sample sample{};
  const rft::sim::FailureRecord& failure = sim.failures().front();
  sample.detect_ms = static_cast<double>(failure.declared_ns - crash_at) / kNsPerMs;
  int64_t last = failure.declared_ns;
  for (Rank r = 0; r < n; ++r) {
    if (sim.running(r)) last = std::max(last, sim.LearnedAt(r, victim));
  }
  sample.all_know_ms = static_cast<double>(last - crash_at) / kNsPerMs;
  const BroadcastRecord* flood =
      sim.FindBroadcast({rft::detector::BroadcastKind::kFailure, 0, 0, 0, victim});
  if (flood != nullptr) {
    for (uint16_t h : flood->hops) {
      if (h != BroadcastRecord::kNoHops) sample.hops = std::max<int>(sample.hops, h);
    }
  }
  return sample;
}

}  // namespace

int main(int argc, char** argv) {
  // Each run builds and drops a simulator of up to 65,536 processes; keeping freed memory in the
  // heap instead of returning it to the kernel saves re-faulting it in every run.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  SimOptions options;
  options.network.latency_ns = 1'500;
  options.network.jitter_ns = 500;
  options.network.timer_lateness_mean_ns = 20'000;
  long long max_n = 65536, faults = 0, seed = 1;  // faults 0: the size-dependent default
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const char* value = i + 1 < argc ? argv[i + 1] : nullptr;
    if (arg == "--json") {
      json = true;
    } else if (value != nullptr && arg == "--max-n") {
      max_n = PositiveFlag(argv[i], value);
      ++i;
    } else if (value != nullptr && arg == "--faults") {
      faults = PositiveFlag(argv[i], value);
      ++i;
    } else if (value != nullptr && arg == "--seed") {
      seed = PositiveFlag(argv[i], value);
      ++i;
    } else if (value != nullptr && arg == "--period-ms") {
      options.heartbeat.period_ns = PositiveFlag(argv[i], value) * 1'000'000;
      ++i;
    } else if (value != nullptr && arg == "--timeout-ms") {
      options.heartbeat.timeout_ns = PositiveFlag(argv[i], value) * 1'000'000;
      ++i;
    } else if (value != nullptr && arg == "--latency-ns") {
      options.network.latency_ns = PositiveFlag(argv[i], value);
      ++i;
    } else if (value != nullptr && arg == "--jitter-ns") {
      options.network.jitter_ns = PositiveFlag(argv[i], value);
      ++i;
    } else if (value != nullptr && arg == "--timer-lateness-us") {
      options.network.timer_lateness_mean_ns = PositiveFlag(argv[i], value) * 1'000;
      ++i;
    } else {
      std::fprintf(stderr,
                   "usage: %s [--max-n N] [--faults N] [--seed S] [--period-ms MS] "
                   "[--timeout-ms MS] [--latency-ns NS] [--jitter-ns NS] "
                   "[--timer-lateness-us US] [--json]\n",
                   argv[0]);
      return 2;
    }
  }
  if (max_n > 100'000) {
    std::fprintf(stderr, "rft_bench_sim_detect: --max-n %lld: at most 100000\n", max_n);
    return 2;
  }
  if (!json) {
    std::printf(
        "# rft_bench_sim_detect: simulated crash -> known by every survivor (eta=%.1f ms, "
        "delta=%.1f ms, %lld+exp(%lld) ns per message, timer lateness exp(%.0f us))\n",
        static_cast<double>(options.heartbeat.period_ns) / kNsPerMs,
        static_cast<double>(options.heartbeat.timeout_ns) / kNsPerMs,
        static_cast<long long>(options.network.latency_ns),
        static_cast<long long>(options.network.jitter_ns),
        static_cast<double>(options.network.timer_lateness_mean_ns) / 1e3);
    std::printf("%8s %7s %14s %10s %10s %9s %12s %9s\n", "n", "faults", "detect_p50_ms", "p50_ms",
                "p99_ms", "hops_max", "events", "wall_s");
  }
  for (long long n = 2; n <= max_n; n *= 2) {
    const long long runs = faults > 0 ? faults : n > 16384 ? 10 : 20;
    const auto wall_start = std::chrono::steady_clock::now();
    std::vector<double> detect, all_know;
    int hops_max = 0;
    uint64_t events = 0;
    for (long long f = 0; f < runs; ++f) {
      const Sample s =
          RunOnce(options, static_cast<Rank>(n), static_cast<uint64_t>(seed + f), &events);
      detect.push_back(s.detect_ms);
      all_know.push_back(s.all_know_ms);
      hops_max = std::max(hops_max, s.hops);
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
    if (json) {
      std::printf(
          "{\"bench\":\"sim_detect\",\"n\":%lld,\"faults\":%lld,\"p50_ms\":%.3f,\"p99_ms\":%.3f,"
          "\"hops_max\":%d,\"detect_p50_ms\":%.3f,\"period_ms\":%.3f,\"timeout_ms\":%.3f}\n",
          n, runs, Percentile(all_know, 50), Percentile(all_know, 99), hops_max,
          Percentile(detect, 50), static_cast<double>(options.heartbeat.period_ns) / kNsPerMs,
          static_cast<double>(options.heartbeat.timeout_ns) / kNsPerMs);
    } else {
      std::printf("%8lld %7lld %14.3f %10.3f %10.3f %9d %12llu %9.2f\n", n, runs,
                  Percentile(detect, 50), Percentile(all_know, 50), Percentile(all_know, 99),
                  hops_max, static_cast<unsigned long long>(events), wall);
    }
    std::fflush(stdout);
  }
  return 0;
}
