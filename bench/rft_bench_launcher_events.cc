// rft_bench_launcher_events: how long after a SIGKILL every survivor has the launcher's
// termination event.
//
//   rft_bench_launcher_events [--sizes 2,4,8] [--faults 20] [--json] [--rftrun PATH]
//
// For each job size n it runs `rftrun -n n --ft --kill n-1@0.4` over itself `faults` times.
// rftrun stamps the injected fault's CLOCK_MONOTONIC time into the event; each survivor
// subtracts it from the time its handler ran (same host, same clock). Per fault the
// figure is the slowest survivor ("known at every survivor"); per-event figures are printed
// too. Without --json it prints a table; with it, one JSON object per size (DESIGN.md §6).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "base/clock.h"
#include "transport/bootstrap/bootstrap.h"

namespace {

constexpr double kKillAtSeconds = 0.4;

// The job's side: survivors wait for the event and print its latency.
int Worker() {
  auto init = rft::transport::Bootstrap::Init();
  if (!init.ok()) {
    std::printf("error %s\n", init.status().ToString().c_str());
    return 1;
  }
  rft::transport::Bootstrap& job = **init;
  std::mutex mutex;
  std::condition_variable arrived;
  std::vector<rft::transport::TerminationEvent> events;
  rft::Status status = job.OnTermination([&](const rft::transport::TerminationEvent& event) {
    std::lock_guard<std::mutex> lock(mutex);
    events.push_back(event);
    arrived.notify_all();
  });
  if (status.ok()) status = job.Fence(false);
  if (!status.ok()) {
    std::printf("error %s\n", status.ToString().c_str());
    return 1;
  }
  if (job.rank() == job.size() - 1) {
    for (;;) pause();  // the victim
  }
  std::unique_lock<std::mutex> lock(mutex);
  if (!arrived.wait_for(lock, std::chrono::seconds(10), [&] { return !events.empty(); })) {
    std::printf("error no event within 10 s\n");
    return 1;
  }
  const auto& event = events.front();
  if (event.fault_ns == 0) {
    std::printf("error the event carries no fault time (not rftrun?)\n");
    return 1;
  }
  std::printf("latency_ns %lld\n",
              static_cast<long long>(event.received_ns - static_cast<int64_t>(event.fault_ns)));
  return 0;
}

std::string FindRftrun(const char* argv0) {
  std::string self(argv0);
  const size_t slash = self.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : self.substr(0, slash);
  for (const std::string& candidate :
       {dir + "/rftrun", dir + "/../tools/rftrun/rftrun",
        dir + "/rft_bench_launcher_events.runfiles/rft/tools/rftrun/rftrun"}) {
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "rftrun";  // from PATH
}

// Runs one job; returns the survivors' latencies in ns (empty on failure, with a message).
std::vector<int64_t> RunJob(const std::string& rftrun, const std::string& self, int n) {
  char kill_arg[64];
  std::snprintf(kill_arg, sizeof(kill_arg), "%d@%.3f", n - 1, kKillAtSeconds);
  const std::string command = rftrun + " -n " + std::to_string(n) +
                              " --ft --timeout 30 --no-tag-output --kill " + kill_arg + " " + self +
                              " --worker 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::vector<int64_t> latencies;
  if (pipe == nullptr) return latencies;
  char line[512];
  std::string errors;
  while (std::fgets(line, sizeof(line), pipe) != nullptr) {
    long long ns = 0;
    if (std::sscanf(line, "latency_ns %lld", &ns) == 1) {
      latencies.push_back(ns);
    } else if (std::strncmp(line, "error", 5) == 0) {
      errors += line;
    }
  }
  const int status = pclose(pipe);
  if (status != 0 || static_cast<int>(latencies.size()) != n - 1) {
    std::fprintf(stderr, "job failed (status %d, %zu of %d survivors reported): %s\n%s", status,
                 latencies.size(), n - 1, command.c_str(), errors.c_str());
    latencies.clear();
  }
  return latencies;
}

double Percentile(std::vector<int64_t> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t index = std::min(
      values.size() - 1, static_cast<size_t>(p / 100.0 * static_cast<double>(values.size())));
  return static_cast<double>(values[index]);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {2, 4, 8};
  int faults = 20;
  bool json = false;
  std::string rftrun;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--worker") return Worker();
    if (arg == "--json") {
      json = true;
    } else if (arg == "--faults" && i + 1 < argc) {
      faults = std::atoi(argv[++i]);
    } else if (arg == "--rftrun" && i + 1 < argc) {
      rftrun = argv[++i];
    } else if (arg == "--sizes" && i + 1 < argc) {
      sizes.clear();
      for (char* s = std::strtok(argv[++i], ","); s != nullptr; s = std::strtok(nullptr, ",")) {
        sizes.push_back(std::atoi(s));
      }
    } else {
      std::fprintf(stderr,
                   "usage: %s [--sizes 2,4,8] [--faults 20] [--json] [--rftrun PATH]\n"
                   "unexpected argument \"%s\"\n",
                   argv[0], arg.c_str());
      return 2;
    }
  }
  for (int n : sizes) {
    if (n < 2 || faults < 1) {
      std::fprintf(stderr, "sizes must be >= 2 and --faults >= 1 (got n=%d, faults=%d)\n", n,
                   faults);
      return 2;
    }
  }
  if (rftrun.empty()) rftrun = FindRftrun(argv[0]);
  char self[4096];
  const ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (len <= 0) return 1;
  self[len] = '\0';

  if (!json) {
    std::printf("# kill -> termination event at the survivors (rftrun %s)\n", rftrun.c_str());
    std::printf("%4s %7s %14s %14s %14s %14s\n", "n", "faults", "all_p50_ms", "all_p99_ms",
                "event_p50_ms", "event_p99_ms");
  }
  int failed_jobs = 0;
  for (int n : sizes) {
    std::vector<int64_t> slowest;  // per fault: the last survivor to know
    std::vector<int64_t> every;    // per event
    for (int f = 0; f < faults; ++f) {
      std::vector<int64_t> latencies = RunJob(rftrun, self, n);
      if (latencies.empty()) {
        ++failed_jobs;
        continue;
      }
      slowest.push_back(*std::max_element(latencies.begin(), latencies.end()));
      every.insert(every.end(), latencies.begin(), latencies.end());
    }
    const double ms = 1e6;
    if (json) {
      std::printf(
          "{\"bench\":\"launcher_kill_event\",\"n\":%d,\"faults\":%zu,\"p50_ms\":%.3f,"
          "\"p99_ms\":%.3f,\"event_p50_ms\":%.3f,\"event_p99_ms\":%.3f,\"failed_jobs\":%d,"
          "\"all_know_ms\":[",
          n, slowest.size(), Percentile(slowest, 50) / ms, Percentile(slowest, 99) / ms,
          Percentile(every, 50) / ms, Percentile(every, 99) / ms, failed_jobs);
      // Every fault's slowest survivor, for a distribution plot (bench/plot.py).
      for (size_t i = 0; i < slowest.size(); ++i) {
        std::printf("%s%.3f", i == 0 ? "" : ",", static_cast<double>(slowest[i]) / ms);
      }
      std::printf("]}\n");
    } else {
      std::printf("%4d %7zu %14.3f %14.3f %14.3f %14.3f\n", n, slowest.size(),
                  Percentile(slowest, 50) / ms, Percentile(slowest, 99) / ms,
                  Percentile(every, 50) / ms, Percentile(every, 99) / ms);
    }
    std::fflush(stdout);
  }
  return failed_jobs == 0 ? 0 : 1;
}
