// Demo: a job loses one process to a crash and another to a hang, learns of both, and goes on.
//
//   rftrun -n 5 --ft --kill 2@1.0 --stop 3@1.5 detect_failure --expect 2
//
// Each process starts the failure detector (failure registry, control thread with heartbeats
// and death watch) and the data plane, then "computes" until it knows of the expected number of
// failures, printing each with its source and when it arrived. The crash is seen at once; the
// hang only by its heartbeat observer, which has the launcher kill it (fail-stop) and spreads
// the news. Then the survivors pass a token around their ring through the data plane: the job
// goes on. Exit status 0 when the expected failures were seen and the token came back.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "base/clock.h"
#include "ulfm_api/runtime.h"

namespace {

int Fail(const char* what, const rft::Status& status) {
  std::fprintf(stderr, "detect_failure: %s: %s\n", what, status.ToString().c_str());
  return 1;
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
      std::fprintf(stderr, "usage: detect_failure [--expect N] [--wait SECONDS]\n");
      return 2;
    }
  }
  // The runtime: the failure detector (every failure, whatever its source, lands in the
  // registry) and the data plane, which hears of failures from the registry and completes what
  // depended on them.
  auto runtime = rft::api::Runtime::Create();
  if (!runtime.ok()) return Fail("start-up", runtime.status());
  rft::transport::Bootstrap& job = (*runtime)->bootstrap();
  rft::detector::FailureRegistry& registry = (*runtime)->registry();
  rft::transport::DataPlane* data = &(*runtime)->plane();
  const rft::Rank me = job.rank();
  std::printf("rank %u of %u: detector and data plane up\n", me, job.size());
  std::fflush(stdout);

  // "Compute" until the failures are known.
  const rft::Stopwatch since_start;
  const rft::Deadline deadline =
      rft::Deadline::After(std::chrono::nanoseconds(static_cast<int64_t>(wait_s * 1e9)));
  while (registry.count() < expect) {
    if (!registry.WaitForChange(registry.count(), deadline)) break;
  }
  const int64_t start_ns = rft::MonotonicNanos() - since_start.elapsed_ns();
  for (const auto& record : registry.Records()) {
    std::printf("rank %u: rank %u failed (source: %s), known at %.1f ms\n", me, record.rank,
                rft::detector::FailureSourceName(record.source),
                static_cast<double>(record.known_ns - start_ns) / 1e6);
  }
  int rc = 0;
  if (registry.count() < expect) {
    std::printf("rank %u: expected %u failure(s) within %.1f s, learned of %llu\n", me, expect,
                wait_s, static_cast<unsigned long long>(registry.count()));
    rc = 1;
  } else {
    // The job goes on: a token around the ring of survivors (in rank order).
    std::vector<rft::Rank> live;
    for (rft::Rank r = 0; r < job.size(); ++r) {
      if (!registry.IsFailed(r)) live.push_back(r);
    }
    size_t at = 0;
    while (live[at] != me) ++at;
    const rft::Rank next = live[(at + 1) % live.size()];
    const rft::Rank prev = live[(at + live.size() - 1) % live.size()];
    uint32_t token = 0;
    rft::Status passed;
    if (at == 0) {
      token = 1;
      passed = data->Send(&token, sizeof(token), next, 7, 0);
      if (passed.ok()) passed = data->Recv(&token, sizeof(token), prev, 7, 0, nullptr);
    } else {
      passed = data->Recv(&token, sizeof(token), prev, 7, 0, nullptr);
      ++token;
      if (passed.ok()) passed = data->Send(&token, sizeof(token), next, 7, 0);
    }
    if (!passed.ok()) return Fail("token ring", passed);
    if (at == 0) {
      std::printf("rank %u: the token went around the %zu survivors and came back (%u hops)\n", me,
                  live.size(), token);
    }
    std::printf("rank %u: finishing cleanly\n", me);
  }
  return rc;  // the runtime tells the others this process ends cleanly, then closes
}
