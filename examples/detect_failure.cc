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
#include "detector/control_plane.h"
#include "detector/failure_registry.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/dataplane/data_plane.h"

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
  auto bootstrap = rft::transport::Bootstrap::Init();
  if (!bootstrap.ok()) return Fail("bootstrap", bootstrap.status());
  rft::transport::Bootstrap& job = **bootstrap;
  const rft::Rank me = job.rank();

  // The detector: every failure, whatever its source, lands in the registry.
  auto registry = rft::detector::FailureRegistry::Create(me, job.size());
  if (!registry.ok()) return Fail("registry", registry.status());
  auto control_options = rft::detector::ControlPlane::OptionsFromConfig();
  if (!control_options.ok()) return Fail("detector settings", control_options.status());
  auto control = rft::detector::ControlPlane::Create(&job, registry->get(), *control_options);
  if (!control.ok()) return Fail("detector", control.status());
  // The data plane hears of failures from the registry and completes what depended on them.
  auto plane_options = rft::transport::DataPlane::OptionsFromConfig(job);
  if (!plane_options.ok()) return Fail("data plane settings", plane_options.status());
  plane_options->watch_launcher_events = false;
  plane_options->report_failure = [&registry](rft::Rank rank) {
    (*registry)->Report(rank, rft::detector::FailureSource::kTransport);
  };
  auto plane = rft::transport::DataPlane::Create(&job, *plane_options);
  if (!plane.ok()) return Fail("data plane", plane.status());
  rft::transport::DataPlane* data = plane->get();
  // Owned here, after the plane: it ends before the plane does, on every return path.
  const rft::detector::Subscription subscription = (*registry)->Subscribe(
      [data](const rft::detector::FailureRecord& record) { data->ReportPeerFailed(record.rank); });
  std::printf("rank %u of %u: detector and data plane up\n", me, job.size());
  std::fflush(stdout);

  // "Compute" until the failures are known.
  const rft::Stopwatch since_start;
  const rft::Deadline deadline =
      rft::Deadline::After(std::chrono::nanoseconds(static_cast<int64_t>(wait_s * 1e9)));
  while ((*registry)->count() < expect) {
    if (!(*registry)->WaitForChange((*registry)->count(), deadline)) break;
  }
  const int64_t start_ns = rft::MonotonicNanos() - since_start.elapsed_ns();
  for (const auto& record : (*registry)->Records()) {
    std::printf("rank %u: rank %u failed (source: %s), known at %.1f ms\n", me, record.rank,
                rft::detector::FailureSourceName(record.source),
                static_cast<double>(record.known_ns - start_ns) / 1e6);
  }
  int rc = 0;
  if ((*registry)->count() < expect) {
    std::printf("rank %u: expected %u failure(s) within %.1f s, learned of %llu\n", me, expect,
                wait_s, static_cast<unsigned long long>((*registry)->count()));
    rc = 1;
  } else {
    // The job goes on: a token around the ring of survivors (in rank order).
    std::vector<rft::Rank> live;
    for (rft::Rank r = 0; r < job.size(); ++r) {
      if (!(*registry)->IsFailed(r)) live.push_back(r);
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
  // Before the data plane closes its endpoints: the others must not take that for a failure.
  (*control)->AnnounceDeparture();
  return rc;
}
