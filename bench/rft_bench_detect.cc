// rft_bench_detect: how fast the detector makes a failure known, and what it costs.
//
//   rftrun -n N --ft rft_bench_detect --fault kill|stop [--victim R] [--json]
//       One fault per run: the ranks agree on an instant T; at T the victim SIGKILLs (or
//       SIGSTOPs) itself; every survivor prints the time from T until its failure registry had
//       the victim, and through which source. bench/detect.sh runs this ≥ 20 times per n and
//       reports the median and p99 of the slowest survivor per fault.
//   rftrun -n N rft_bench_detect --idle SECONDS [--json]
//       No fault: each rank sleeps while the control thread runs, then prints the CPU time the
//       process used (percent of one core), heartbeats put, and suspicions (must be 0).
//
// Lines: {"bench":"detect_kill","n":4,"rank":1,"victim":2,"latency_us":812.5,"source":"..."}
//        {"bench":"detect_idle","n":4,"rank":1,"seconds":5,"cpu_percent":0.4,...}
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "base/clock.h"
#include "detector/control_plane.h"
#include "detector/failure_registry.h"
#include "transport/bootstrap/bootstrap.h"

namespace {

using rft::Rank;
using rft::detector::ControlPlane;
using rft::detector::FailureRegistry;

void Check(const rft::Status& status, const char* what) {
  if (status.ok()) return;
  std::fprintf(stderr, "rft_bench_detect: %s: %s\n", what, status.ToString().c_str());
  std::exit(1);
}

int64_t CpuNanos() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return (static_cast<int64_t>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1000000 +
          usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) *
         1000;
}

// An instant every rank computes alike: the latest clock reading of all ranks plus `margin`
// (CLOCK_MONOTONIC is one clock for the whole node).
int64_t AgreeOnInstant(rft::transport::Bootstrap& job, int64_t margin_ns) {
  const int64_t now = rft::MonotonicNanos();
  auto all = job.Exchange(
      "bench.detect.now",
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(&now), sizeof(now)));
  Check(all.status(), "exchange");
  int64_t latest = now;
  for (const auto& bytes : *all) {
    int64_t theirs;
    std::memcpy(&theirs, bytes.data(), sizeof(theirs));
    latest = std::max(latest, theirs);
  }
  Check(job.Fence(false), "fence");  // everyone has every clock before anyone can fail
  return latest + margin_ns;
}

}  // namespace

int main(int argc, char** argv) {
  std::string fault;
  long victim_arg = -1;
  double idle_seconds = 0;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--fault" && i + 1 < argc) {
      fault = argv[++i];
    } else if (arg == "--victim" && i + 1 < argc) {
      victim_arg = std::atol(argv[++i]);
    } else if (arg == "--idle" && i + 1 < argc) {
      idle_seconds = std::atof(argv[++i]);
    } else if (arg == "--json") {
      json = true;
    } else {
      std::fprintf(stderr,
                   "usage: rftrun -n N --ft %s --fault kill|stop [--victim R] [--json]\n"
                   "       rftrun -n N %s --idle SECONDS [--json]\n",
                   argv[0], argv[0]);
      return 2;
    }
  }
  if (fault.empty() == (idle_seconds <= 0) ||
      (!fault.empty() && fault != "kill" && fault != "stop")) {
    std::fprintf(stderr, "rft_bench_detect: expected --fault kill|stop or --idle SECONDS\n");
    return 2;
  }
  auto init = rft::transport::Bootstrap::Init();
  Check(init.status(), "bootstrap");
  auto& job = **init;
  const Rank me = job.rank();
  const uint32_t n = job.size();
  auto registry_or = FailureRegistry::Create(me, n);
  Check(registry_or.status(), "registry");
  FailureRegistry& registry = **registry_or;
  auto options = ControlPlane::OptionsFromConfig();
  Check(options.status(), "options");
  auto plane_or = ControlPlane::Create(&job, &registry, *options);
  Check(plane_or.status(), "control plane");
  ControlPlane& plane = **plane_or;

  if (idle_seconds > 0) {
    Check(job.Fence(false), "fence");
    const int64_t cpu_start = CpuNanos();
    const rft::Stopwatch wall;
    usleep(static_cast<useconds_t>(idle_seconds * 1e6));
    const double cpu_percent = 100.0 * static_cast<double>(CpuNanos() - cpu_start) /
                               static_cast<double>(wall.elapsed_ns());
    if (json) {
      std::printf(
          "{\"bench\":\"detect_idle\",\"n\":%u,\"rank\":%u,\"seconds\":%g,\"cpu_percent\":%.3f,"
          "\"heartbeats\":%llu,\"suspicions\":%llu,\"late_ticks\":%llu,\"starved_ticks\":%llu}\n",
          n, me, idle_seconds, cpu_percent, static_cast<unsigned long long>(plane.heartbeats_put()),
          static_cast<unsigned long long>(plane.suspicions()),
          static_cast<unsigned long long>(plane.late_ticks()),
          static_cast<unsigned long long>(plane.starved_ticks()));
    } else {
      std::printf("rank %u: %.3f%% of a core over %g s, %llu heartbeats, %llu suspicions\n", me,
                  cpu_percent, idle_seconds,
                  static_cast<unsigned long long>(plane.heartbeats_put()),
                  static_cast<unsigned long long>(plane.suspicions()));
    }
    Check(job.Fence(false), "fence");
    return plane.suspicions() == 0 ? 0 : 3;
  }

  const Rank victim = victim_arg >= 0 ? static_cast<Rank>(victim_arg) : n - 1;
  if (victim >= n || n < 2) {
    std::fprintf(stderr, "rft_bench_detect: victim %ld: expected a rank below %u (n >= 2)\n",
                 victim_arg, n);
    return 2;
  }
  // Let the ring settle (first heartbeats exchanged) before the fault.
  const int64_t fault_at = AgreeOnInstant(job, 3 * options->heartbeat.timeout_ns);
  if (me == victim) {
    while (rft::MonotonicNanos() < fault_at) {
    }
    raise(fault == "kill" ? SIGKILL : SIGSTOP);
    for (;;) pause();  // a stopped process that is continued waits to be killed
  }
  const rft::Deadline give_up = rft::Deadline::At(fault_at + int64_t{10} * 1000000000);
  while (!registry.IsFailed(victim)) {
    if (!registry.WaitForChange(registry.count(), give_up)) {
      std::fprintf(stderr, "rank %u: rank %u not known failed 10 s after the %s\n", me, victim,
                   fault.c_str());
      return 1;
    }
  }
  for (const auto& record : registry.Records()) {
    if (record.rank != victim) continue;
    const double latency_us = static_cast<double>(record.known_ns - fault_at) / 1e3;
    if (json) {
      std::printf(
          "{\"bench\":\"detect_%s\",\"n\":%u,\"rank\":%u,\"victim\":%u,\"latency_us\":%.1f,"
          "\"source\":\"%s\"}\n",
          fault.c_str(), n, me, victim, latency_us, FailureSourceName(record.source));
    } else {
      std::printf("rank %u: rank %u's %s known after %.1f us (%s)\n", me, victim, fault.c_str(),
                  latency_us, FailureSourceName(record.source));
    }
  }
  std::fflush(stdout);
  // The survivors end together (a fence over the dead victim has no defined outcome).
  rft::RankSet survivors = rft::RankSet::Range(0, n);
  survivors.Erase(victim);
  Check(job.Fence(false, survivors), "fence");
  return 0;
}
