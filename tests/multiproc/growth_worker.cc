// Replacements joining a running job (docs/recovery.md), under rftrun --ft -n 3: the runtime's
// layers grow (Runtime::AddRanks), as the API's merge will drive them. Every step waits on the
// test's own protocol (values published through PMIx), never on a timer:
// 1. Rank 2 kills itself after a fence; ranks 0 and 1 wait until their registries have it.
// 2. Rank 0 spawns one replacement that joins the job (job rank 3); ranks 0 and 1 add it.
// 3. The replacement is told the failed set by rank 0 and starts its runtime with it.
// 4. Traffic: every live process sends every other one a small and a large message (eager and
//    rendezvous) and checks what it receives.
// 5. Quiet: for 1.5 s after every process is up, nobody suspects anybody (each registry holds
//    only rank 2).
// 6. Rank 1 kills itself: ranks 0 and 3 learn it. Then the replacement kills itself: rank 0
//    learns it, and its receive posted on the replacement completes with PROC_FAILED.
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

#include "detector/failure_registry.h"
#include "tests/multiproc/dataplane_checks.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/dataplane/data_plane.h"
#include "ulfm_api/runtime.h"

namespace rft::testing {
namespace {

using api::Runtime;
using detector::FailureRegistry;
using transport::Bootstrap;
using transport::DataPlane;
using transport::MessageStatus;
using transport::Request;

constexpr Rank kFirstVictim = 2;
constexpr Rank kReplacement = 3;
constexpr Rank kSecondVictim = 1;
constexpr auto kLearnWithin = std::chrono::seconds(20);
constexpr uint32_t kContext = 7;
const RankSet kLive = {0, 1, kReplacement};

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

// Step 4 at every live process: the failed set stays `expected` for a while. Says how many of
// its heartbeats went by RDMA WRITE meanwhile (the soft-RoCE guest's growth-verbs check wants
// some at every process: each one's observer is reached by verbs, the replacement's included).
int Quiet(Runtime& runtime, const RankSet& expected, Rank me) {
  const FailureRegistry& registry = runtime.registry();
  const uint64_t written = runtime.control().heartbeats_written();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  CHECK(registry.Failed() == expected, "rank " << me << " holds " << registry.Failed().ToString()
                                               << " failed, expected " << expected.ToString());
  std::printf("rank %u quiet after the growth\n", me);
  std::printf("rank %u wrote %llu heartbeats by RDMA while quiet\n", me,
              static_cast<unsigned long long>(runtime.control().heartbeats_written() - written));
  std::fflush(stdout);  // some end by SIGKILL
  return 0;
}

StatusOr<std::unique_ptr<Runtime>> StartRuntime(std::unique_ptr<Bootstrap> job,
                                                const RankSet& known_failed = {}) {
  auto options = Runtime::OptionsFromConfig(*job);
  if (!options.ok()) return options.status();
  options->known_failed = known_failed;
  return Runtime::Create(std::move(job), *options);
}

// Step 4: every live process sends each other one a small and a large message and checks what
// it gets (the content names sender, receiver and size).
int Traffic(DataPlane& plane, Rank me) {
  for (size_t bytes : {size_t{100}, size_t{256} << 10}) {
    std::vector<std::vector<char>> out, in;
    std::vector<Request*> requests;
    for (Rank peer : kLive) {
      if (peer == me) continue;
      out.push_back(TestBytes(bytes, me * 16 + peer));
      in.emplace_back(bytes);
      requests.emplace_back();
      CHECK_OK(plane.Isend(out.back().data(), bytes, peer, static_cast<int32_t>(me), kContext,
                           &requests.back()));
      requests.emplace_back();
      CHECK_OK(plane.Irecv(in.back().data(), bytes, peer, static_cast<int32_t>(peer), kContext,
                           &requests.back()));
    }
    std::vector<MessageStatus> statuses(requests.size());
    CHECK_OK(plane.Waitall(requests, statuses, Deadline::After(std::chrono::seconds(20))));
    size_t i = 0;
    for (Rank peer : kLive) {
      if (peer == me) continue;
      CHECK(in[i] == TestBytes(bytes, peer * 16 + me),
            "rank " << me << " got wrong bytes from " << peer << " (" << bytes << " B)");
      ++i;
    }
  }
  std::printf("rank %u exchanged messages with the grown job\n", me);
  // The launcher puts everyone on this node: each pair takes the same large-message path,
  // across namespaces as within one (growth_test compares the lines; the soft-RoCE guest's
  // growth-verbs check wants verbs everywhere).
  for (Rank peer : kLive) {
    if (peer == me) continue;
    std::printf("rank %u reaches %u by %s\n", me, peer,
                plane.UsesVerbsTo(peer)   ? "verbs"
                : plane.UsesCmaWith(peer) ? "cma"
                                          : "ucx");
  }
  std::fflush(stdout);
  return 0;
}

int Parent(std::unique_ptr<Bootstrap> init, const char* program) {
  auto runtime = StartRuntime(std::move(init));
  CHECK_OK(runtime.status());
  Bootstrap& job = (*runtime)->bootstrap();
  DataPlane& plane = (*runtime)->plane();
  const Rank me = job.rank();
  FailureRegistry* registry = &(*runtime)->registry();
  CHECK_OK(job.Fence(false));
  if (me == kFirstVictim) raise(SIGKILL);
  CHECK(Learns(*registry, kFirstVictim), "rank " << me << " never learned rank 2 failed");

  if (me == 0) {
    auto child = job.Spawn({program, "replacement"}, 1, /*join=*/true);
    CHECK_OK(child.status());
    CHECK_OK(Say(job, "test.nspace", *child));
    CHECK_OK(Say(job, "test.failed", registry->Failed().ToString()));
  }
  auto nspace = Await(job, 0, "test.nspace");
  CHECK_OK(nspace.status());
  CHECK_OK((*runtime)->AddRanks(*nspace, 1));
  CHECK(job.node_peers().Contains(kReplacement) && !job.local_peers().Contains(kReplacement),
        "after the growth: node peers " << job.node_peers().ToString() << ", local peers "
                                        << job.local_peers().ToString());
  CHECK((*runtime)->control().size() == 4 && plane.size() == 4 && registry->size() == 4,
        "sizes after the growth: control " << (*runtime)->control().size() << ", data "
                                           << plane.size() << ", registry " << registry->size());
  const Status again = (*runtime)->control().AddRanks(4);
  CHECK(again.code() == RFT_ERR_ARG, "growing to the same size: " << again.ToString());
  CHECK(plane.AddRanks(4).code() == RFT_ERR_ARG, "data plane grown to the same size");
  // Grown before any message to or from the replacement (what the merge guarantees).
  CHECK_OK(Say(job, "test.grown." + std::to_string(me)));
  CHECK_OK(Await(job, kReplacement, "test.started").status());
  if (int rc = Traffic(plane, me); rc != 0) return rc;

  if (int rc = Quiet(**runtime, RankSet{kFirstVictim}, me); rc != 0) return rc;
  CHECK_OK(Say(job, "test.quiet." + std::to_string(me)));
  if (me == kSecondVictim) {
    CHECK_OK(Await(job, 0, "test.quiet.0").status());
    CHECK_OK(Await(job, kReplacement, "test.quiet.3").status());
    raise(SIGKILL);
  }
  CHECK(Learns(*registry, kSecondVictim), "rank 0 never learned rank 1 failed");
  std::printf("rank %u learned rank 1 failed\n", me);
  char in[8];
  Request* pending = nullptr;
  CHECK_OK(plane.Irecv(in, sizeof(in), kReplacement, 99, kContext, &pending));
  CHECK_OK(Say(job, "test.learned.0"));
  CHECK(Learns(*registry, kReplacement), "rank 0 never learned the replacement failed");
  const Status outcome = plane.Wait(&pending, nullptr, Deadline::After(std::chrono::seconds(20)));
  CHECK(outcome.code() == RFT_ERR_PROC_FAILED,
        "the receive posted on the replacement ended " << outcome.ToString());
  std::printf("rank %u learned replacement 3 failed\n", me);
  return 0;
}

int Replacement(std::unique_ptr<Bootstrap> init) {
  Bootstrap* bootstrap = init.get();
  const Rank me = bootstrap->rank();
  CHECK(bootstrap->joined() && me == kReplacement && bootstrap->size() == 4,
        "job rank " << me << " of " << bootstrap->size());
  // What the merge will hand over: the failures its parents agreed on.
  auto failed = Await(*bootstrap, 0, "test.failed");
  CHECK_OK(failed.status());
  auto told = RankSet::Parse(*failed);
  CHECK_OK(told.status());
  auto runtime = StartRuntime(std::move(init), *told);
  CHECK_OK(runtime.status());
  Bootstrap& job = (*runtime)->bootstrap();
  FailureRegistry* registry = &(*runtime)->registry();
  CHECK(job.node_peers() == (RankSet{0, 1, 2, kReplacement}),
        "the replacement's node peers " << job.node_peers().ToString());
  CHECK_OK(Say(job, "test.started"));
  CHECK_OK(Await(job, 0, "test.grown.0").status());
  CHECK_OK(Await(job, 1, "test.grown.1").status());
  if (int rc = Traffic((*runtime)->plane(), me); rc != 0) return rc;

  if (int rc = Quiet(**runtime, RankSet{kFirstVictim}, me); rc != 0) return rc;
  CHECK_OK(Say(job, "test.quiet.3"));
  CHECK(Learns(*registry, kSecondVictim), "the replacement never learned rank 1 failed");
  std::printf("rank %u learned rank 1 failed\n", me);
  std::fflush(stdout);
  CHECK_OK(Await(job, 0, "test.learned.0").status());
  raise(SIGKILL);
  return 0;
}

int Main(int argc, char** argv) {
  auto init = Bootstrap::Init();
  CHECK_OK(init.status());
  if (argc > 1 && std::string(argv[1]) == "replacement") return Replacement(std::move(*init));
  CHECK((*init)->size() == 3, "run with -n 3, not " << (*init)->size());
  return Parent(std::move(*init), argv[0]);
}

}  // namespace
}  // namespace rft::testing

int main(int argc, char** argv) { return rft::testing::Main(argc, argv); }
