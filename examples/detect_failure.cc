// Demo: a job whose processes exchange addresses, lose one of their number, and learn of it.
//
//   rftrun -n 4 --ft --kill 2@0.5 detect_failure --expect 1
//
// Each process connects to the launcher (PMIx), publishes an address, reads everyone else's,
// then computes until it has heard of the expected number of failures, printing each with
// how long after the fault it arrived. Exit status 0 when the expected failures were seen.
#include <unistd.h>

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

struct Learned {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<rft::transport::TerminationEvent> events;
};

int Usage() {
  std::fprintf(stderr, "usage: detect_failure [--expect N] [--wait SECONDS]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  unsigned expect = 1;
  double wait_s = 10;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--expect") == 0 && i + 1 < argc) {
      expect = static_cast<unsigned>(std::atoi(argv[++i]));
    } else if (std::strcmp(argv[i], "--wait") == 0 && i + 1 < argc) {
      wait_s = std::atof(argv[++i]);
    } else {
      return Usage();
    }
  }
  auto bootstrap = rft::transport::Bootstrap::Init();
  if (!bootstrap.ok()) {
    std::fprintf(stderr, "detect_failure: %s\n", bootstrap.status().ToString().c_str());
    return 1;
  }
  rft::transport::Bootstrap& job = **bootstrap;
  Learned learned;
  rft::Status status = job.OnTermination([&](const rft::transport::TerminationEvent& event) {
    std::lock_guard<std::mutex> lock(learned.mutex);
    learned.events.push_back(event);
    learned.changed.notify_all();
  });

  char host[128] = {};
  gethostname(host, sizeof(host) - 1);
  const std::string address = std::string(host) + ":" + std::to_string(getpid());
  auto all = status.ok() ? job.Exchange("demo.addr", std::as_bytes(std::span(address)))
                         : rft::StatusOr<std::vector<std::vector<std::byte>>>(status);
  if (!all.ok()) {
    std::fprintf(stderr, "detect_failure: %s\n", all.status().ToString().c_str());
    return 1;
  }
  std::printf("rank %u of %u: exchanged addresses with %zu processes (mine %s)\n", job.rank(),
              job.size(), all->size() - 1, address.c_str());
  std::fflush(stdout);

  // "Compute" until the failures arrive.
  std::unique_lock<std::mutex> lock(learned.mutex);
  const bool seen = learned.changed.wait_for(lock, std::chrono::duration<double>(wait_s),
                                             [&] { return learned.events.size() >= expect; });
  for (const auto& event : learned.events) {
    const double after_ms =
        event.fault_ns != 0
            ? static_cast<double>(event.received_ns - static_cast<int64_t>(event.fault_ns)) / 1e6
            : -1;
    std::printf("rank %u: learned that rank %u failed (%s) %.2f ms after the fault\n", job.rank(),
                event.rank, rft::transport::DescribeTermination(event).c_str(), after_ms);
  }
  if (!seen) {
    std::printf("rank %u: expected %u failure(s) within %.1f s, learned of %zu\n", job.rank(),
                expect, wait_s, learned.events.size());
    return 1;
  }
  std::printf("rank %u: finishing cleanly\n", job.rank());
  return 0;
}
