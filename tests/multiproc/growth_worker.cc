// Replacements joining a running job's detector (docs/recovery.md), under rftrun --ft -n 3. The
// control plane alone, as the API's merge will drive it. Every step waits on the test's own
// protocol (values published through PMIx), never on a timer:
// 1. Rank 2 kills itself after a fence; ranks 0 and 1 wait until their registries have it.
// 2. Rank 0 spawns one replacement that joins the job (job rank 3); ranks 0 and 1 add it to the
//    bootstrap, the registry and the control plane.
// 3. The replacement is told the failed set by rank 0, then starts its control plane.
// 4. Quiet: for 1.5 s after every process is up, nobody suspects anybody (each registry holds
//    only rank 2).
// 5. Rank 1 kills itself: ranks 0 and 3 learn it. Then the replacement kills itself: rank 0
//    learns it.
// Prints "FAILED: ..." and exits 3 on a violation.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "detector/control_plane.h"
#include "detector/failure_registry.h"
#include "tests/multiproc/dataplane_checks.h"
#include "transport/bootstrap/bootstrap.h"

namespace rft::testing {
namespace {

using detector::ControlPlane;
using detector::FailureRegistry;
using detector::FailureSource;
using transport::Bootstrap;

constexpr Rank kFirstVictim = 2;
constexpr Rank kReplacement = 3;
constexpr Rank kSecondVictim = 1;
constexpr auto kLearnWithin = std::chrono::seconds(20);

std::span<const std::byte> Bytes(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

// Publishes `key` (a step this process reached).
Status Say(Bootstrap& job, const std::string& key, const std::string& value = "1") {
  RFT_RETURN_IF_ERROR(job.Put(key, Bytes(value)));
  return job.Commit();
}

// Waits until `rank` published `key`; its value.
StatusOr<std::string> Await(Bootstrap& job, Rank rank, const std::string& key) {
  auto bytes = job.Get(rank, key);
  if (!bytes.ok()) return bytes.status();
  return std::string(reinterpret_cast<const char*>(bytes->data()), bytes->size());
}

bool Learns(const FailureRegistry& registry, Rank rank) {
  const Deadline deadline = Deadline::After(kLearnWithin);
  while (!registry.IsFailed(rank) && !deadline.expired()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return registry.IsFailed(rank);
}

// Step 4 at every live process: the failed set stays `expected` for a while.
int Quiet(const FailureRegistry& registry, const RankSet& expected, Rank me) {
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  CHECK(registry.Failed() == expected, "rank " << me << " holds " << registry.Failed().ToString()
                                               << " failed, expected " << expected.ToString());
  std::printf("rank %u quiet after the growth\n", me);
  std::fflush(stdout);  // some end by SIGKILL
  return 0;
}

StatusOr<std::unique_ptr<ControlPlane>> StartControl(Bootstrap& job, FailureRegistry& registry) {
  auto options = ControlPlane::OptionsFromConfig();
  if (!options.ok()) return options.status();
  return ControlPlane::Create(&job, &registry, *options);
}

int Parent(Bootstrap& job, const char* program) {
  const Rank me = job.rank();
  auto registry = FailureRegistry::Create(me, job.size());
  CHECK_OK(registry.status());
  auto control = StartControl(job, **registry);
  CHECK_OK(control.status());
  CHECK_OK(job.Fence(false));
  if (me == kFirstVictim) raise(SIGKILL);
  CHECK(Learns(**registry, kFirstVictim), "rank " << me << " never learned rank 2 failed");

  if (me == 0) {
    auto child = job.Spawn({program, "replacement"}, 1, /*join=*/true);
    CHECK_OK(child.status());
    CHECK_OK(Say(job, "test.nspace", *child));
    CHECK_OK(Say(job, "test.failed", (*registry)->Failed().ToString()));
  }
  auto nspace = Await(job, 0, "test.nspace");
  CHECK_OK(nspace.status());
  CHECK_OK(job.AddRanks(*nspace, 1));
  CHECK_OK((*registry)->Grow(job.size()));
  CHECK_OK((*control)->AddRanks(job.size()));
  CHECK((*control)->size() == 4, "control plane size " << (*control)->size());
  const Status again = (*control)->AddRanks(job.size());
  CHECK(again.code() == RFT_ERR_ARG, "growing to the same size: " << again.ToString());
  CHECK_OK(Say(job, "test.grown." + std::to_string(me)));
  CHECK_OK(Await(job, kReplacement, "test.started").status());

  if (int rc = Quiet(**registry, RankSet{kFirstVictim}, me); rc != 0) return rc;
  CHECK_OK(Say(job, "test.quiet." + std::to_string(me)));
  if (me == kSecondVictim) {
    CHECK_OK(Await(job, 0, "test.quiet.0").status());
    CHECK_OK(Await(job, kReplacement, "test.quiet.3").status());
    raise(SIGKILL);
  }
  CHECK(Learns(**registry, kSecondVictim), "rank 0 never learned rank 1 failed");
  std::printf("rank %u learned rank 1 failed\n", me);
  CHECK_OK(Say(job, "test.learned.0"));
  CHECK(Learns(**registry, kReplacement), "rank 0 never learned the replacement failed");
  std::printf("rank %u learned replacement 3 failed\n", me);
  (*control)->AnnounceDeparture();
  return 0;
}

int Replacement(Bootstrap& job) {
  const Rank me = job.rank();
  CHECK(job.joined() && me == kReplacement && job.size() == 4,
        "job rank " << me << " of " << job.size());
  auto registry = FailureRegistry::Create(me, job.size());
  CHECK_OK(registry.status());
  // What the merge will hand over: the failures its parents agreed on.
  auto failed = Await(job, 0, "test.failed");
  CHECK_OK(failed.status());
  auto told = RankSet::Parse(*failed);
  CHECK_OK(told.status());
  for (Rank r : *told) (*registry)->Report(r, FailureSource::kPropagated);
  auto control = StartControl(job, **registry);
  CHECK_OK(control.status());
  CHECK_OK(Say(job, "test.started"));
  CHECK_OK(Await(job, 0, "test.grown.0").status());
  CHECK_OK(Await(job, 1, "test.grown.1").status());

  if (int rc = Quiet(**registry, RankSet{kFirstVictim}, me); rc != 0) return rc;
  CHECK_OK(Say(job, "test.quiet.3"));
  CHECK(Learns(**registry, kSecondVictim), "the replacement never learned rank 1 failed");
  std::printf("rank %u learned rank 1 failed\n", me);
  std::fflush(stdout);
  CHECK_OK(Await(job, 0, "test.learned.0").status());
  raise(SIGKILL);
  return 0;
}

int Main(int argc, char** argv) {
  auto init = Bootstrap::Init();
  CHECK_OK(init.status());
  Bootstrap& job = **init;
  if (argc > 1 && std::string(argv[1]) == "replacement") return Replacement(job);
  CHECK(job.size() == 3, "run with -n 3, not " << job.size());
  return Parent(job, argv[0]);
}

}  // namespace
}  // namespace rft::testing

int main(int argc, char** argv) { return rft::testing::Main(argc, argv); }
