// The program that multi-process tests run under rftrun. Each mode exercises one behaviour
// and exits 0 only when what it observed is right; the tests check exit statuses and output.
//
//   exchange [--local K]          publish a rank-specific blob, check every peer's blob and
//                                 that this node runs K ranks (default: all)
//   direct                        publish a blob, fence without collecting data, get everyone's
//   failures --victims R,.. [--end self-abort|crash|exit0|announce]
//                                 victims wait to be killed; survivors exit 0 once each
//                                 victim's termination event arrived (and no other). With
//                                 --end, each victim ends itself once the exchange is done
//                                 (an agreed point, not a timer): self-abort asks the launcher
//                                 to kill it (PMIx_Abort of itself, status 0), crash is
//                                 raise(SIGKILL), exit0 is _exit(0) without PMIx_Finalize,
//                                 announce prints "victim R ready" and waits to be killed
//   abort-subset --victims R,..   like failures, and rank 0 asks the launcher to abort the victims
//                                 (PMIx_Abort of a subset) with status 5
//   abort-all [STATUS]            rank 1 aborts the whole job with STATUS (7); others wait
//   exit CODE                     rank 1 exits with CODE, the others exit 0 after a while
//   sleep SECONDS                 every rank sleeps
//   spawn                         rank 0 spawns 2 processes running `spawned`
//   spawned                       checks it was spawned, prints, exits 0
//   replace                       rank 0 spawns 2 replacements that join the job (job ranks
//                                 n, n+1), every rank adds them and reads their values; then
//                                 the second replacement exits with status 7 and every parent
//                                 must get its termination event under its job rank
//   replacement                   (started by replace) checks its job rank, size and token and
//                                 reads its parents' values
//   no-pmix                       prints and exits without touching PMIx
//   pid-sleep                     prints "pid N" and sleeps for a minute
//   leave-shm                     each rank leaves a file named like the job's shared-memory
//                                 segments in /dev/shm (as a crash would) and prints its path
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "base/rank_set.h"
#include "transport/bootstrap/bootstrap.h"

namespace {

using rft::Rank;
using rft::RankSet;
using rft::transport::Bootstrap;
using rft::transport::TerminationEvent;

constexpr auto kWait = std::chrono::seconds(20);

int Fail(const std::string& what) {
  std::printf("FAILED: %s\n", what.c_str());
  std::fflush(stdout);
  return 3;
}

std::vector<std::byte> BlobOf(Rank rank) {
  std::vector<std::byte> blob((rank * 37) % 1000 + 1);
  for (size_t i = 0; i < blob.size(); ++i) blob[i] = static_cast<std::byte>((rank + i) & 0xff);
  return blob;
}

// The termination events this process heard, by job rank.
struct Failures {
  std::mutex mutex;
  std::condition_variable changed;
  std::set<Rank> failed;
  std::vector<TerminationEvent> events;

  rft::Status Listen(Bootstrap& job) {
    return job.OnTermination([this](const TerminationEvent& event) {
      std::lock_guard<std::mutex> lock(mutex);
      failed.insert(event.job_rank);
      events.push_back(event);
      changed.notify_all();
    });
  }
};

void SleepForever() {
  for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
}

// Registers for termination events, exchanges addresses, then waits for the victims.
int WaitForVictims(Bootstrap& job, const RankSet& victims, bool abort_them,
                   const std::string& end) {
  Failures failures;
  rft::Status status = failures.Listen(job);
  if (!status.ok()) return Fail(status.ToString());
  // One subscriber per process: a second one is refused, not silently put in the first's place.
  const rft::Status second = job.OnTermination([](const TerminationEvent&) {});
  if (second.code() != RFT_ERR_ARG || second.message().find("already") == std::string::npos) {
    return Fail("a second termination subscriber: " + second.ToString());
  }
  auto all = job.Exchange("test.addr", BlobOf(job.rank()));
  if (!all.ok()) return Fail(all.status().ToString());
  // The agreed point: everyone finished the exchange (a victim ending right after its own would
  // leave others still looking its value up).
  status = job.Fence(false);
  if (!status.ok()) return Fail("fence after the exchange: " + status.ToString());
  if (victims.Contains(job.rank())) {
    if (end == "self-abort") {
      (void)job.Abort(0, "test victim ends itself", RankSet{job.rank()});
    } else if (end == "crash") {
      raise(SIGKILL);
    } else if (end == "exit0") {
      std::fflush(stdout);
      _exit(0);  // a clean status, but the job never heard it finish: a failure to its peers
    } else if (end == "announce") {
      std::printf("victim %u ready\n", job.rank());  // the test ends it from outside
      std::fflush(stdout);
    }
    SleepForever();
  }
  if (abort_them && job.rank() == 0) {
    status = job.Abort(5, "test aborts the victims", victims);
    if (!status.ok()) return Fail(status.ToString());
    std::printf("abort of %s returned\n", victims.ToString().c_str());
  }
  std::unique_lock<std::mutex> lock(failures.mutex);
  const bool all_seen = failures.changed.wait_for(lock, kWait, [&] {
    for (Rank v : victims) {
      if (failures.failed.count(v) == 0) return false;
    }
    return true;
  });
  if (!all_seen) return Fail("timed out waiting for the failure of " + victims.ToString());
  for (Rank r : failures.failed) {
    if (!victims.Contains(r)) return Fail("rank " + std::to_string(r) + " reported failed");
  }
  for (const TerminationEvent& event : failures.events) {
    if (event.nspace != job.nspace()) return Fail("event from namespace " + event.nspace);
    const double ms =
        event.fault_ns == 0
            ? -1
            : static_cast<double>(event.received_ns - static_cast<int64_t>(event.fault_ns)) / 1e6;
    std::printf("rank %u failed (%s), known %.3f ms after the fault\n", event.rank,
                rft::transport::DescribeTermination(event).c_str(), ms);
  }
  std::printf("failures ok %s\n", victims.ToString().c_str());
  return 0;
}

std::vector<std::byte> TokenBlob(uint32_t token) {
  std::vector<std::byte> blob(4);
  std::memcpy(blob.data(), &token, 4);
  return blob;
}

int Replace(Bootstrap& job, const char* program) {
  const Rank n = job.size();
  Failures failures;
  rft::Status status = failures.Listen(job);
  if (!status.ok()) return Fail(status.ToString());
  // What the replacements check: every parent's blob and the token.
  if (!(status = job.Put("test.parent", BlobOf(job.rank()))).ok()) return Fail(status.ToString());
  if (!(status = job.Put("test.token", TokenBlob(job.job_token()))).ok()) {
    return Fail(status.ToString());
  }
  if (!(status = job.Commit()).ok()) return Fail(status.ToString());
  if (!(status = job.Fence(false)).ok()) return Fail(status.ToString());
  if (job.rank() == 0) {
    auto child = job.Spawn({program, "replacement"}, 2, /*join=*/true);
    if (!child.ok()) return Fail(child.status().ToString());
    const std::string& name = *child;
    status = job.Put("test.nspace", std::as_bytes(std::span(name.data(), name.size())));
    if (status.ok()) status = job.Commit();
    if (!status.ok()) return Fail(status.ToString());
  }
  // Every parent adds the namespace rank 0 spawned (an agreement does this in the API).
  if (!(status = job.Fence(true)).ok()) return Fail(status.ToString());
  auto nspace = job.Get(0, "test.nspace");
  if (!nspace.ok()) return Fail(nspace.status().ToString());
  const std::string name(reinterpret_cast<const char*>(nspace->data()), nspace->size());
  if (!(status = job.AddRanks(name, 2)).ok()) return Fail(status.ToString());
  if (job.size() != n + 2) return Fail("size after AddRanks " + std::to_string(job.size()));
  // rftrun runs every namespace on this node.
  if (job.node_peers() != RankSet::Range(0, n + 2) || job.local_peers() != RankSet::Range(0, n)) {
    return Fail("after AddRanks: node peers " + job.node_peers().ToString() + ", local peers " +
                job.local_peers().ToString());
  }
  const rft::Status again = job.AddRanks(name, 2);
  if (again.code() != RFT_ERR_ARG)
    return Fail("the same namespace added twice: " + again.ToString());
  for (Rank r = n; r < n + 2; ++r) {
    auto blob = job.Get(r, "test.child");
    if (!blob.ok()) return Fail("job rank " + std::to_string(r) + ": " + blob.status().ToString());
    if (*blob != BlobOf(r)) return Fail("wrong blob from job rank " + std::to_string(r));
    std::printf("parent %u read replacement %u\n", job.rank(), r);
  }
  if (!(status = job.Put("test.read." + std::to_string(job.rank()), BlobOf(0))).ok() ||
      !(status = job.Commit()).ok()) {
    return Fail(status.ToString());
  }
  std::unique_lock<std::mutex> lock(failures.mutex);
  const Rank victim = n + 1;
  if (!failures.changed.wait_for(lock, kWait, [&] { return failures.failed.count(victim); })) {
    return Fail("no termination event for job rank " + std::to_string(victim));
  }
  const std::vector<TerminationEvent> events = failures.events;
  lock.unlock();  // the callback takes it under the bootstrap's lock, which DeadRanks takes
  for (const TerminationEvent& event : events) {
    if (event.job_rank != victim || event.nspace != name || event.rank != 1) {
      return Fail("unexpected event: " + event.nspace + " rank " + std::to_string(event.rank) +
                  " (job rank " + std::to_string(event.job_rank) + ")");
    }
  }
  if (!job.DeadRanks().Contains(victim)) return Fail("DeadRanks lacks " + std::to_string(victim));
  std::printf("parent %u saw job rank %u end: %s\n", job.rank(), victim,
              rft::transport::DescribeTermination(events.front()).c_str());
  return 0;
}

int Replacement(Bootstrap& job) {
  if (!job.spawned() || !job.joined()) return Fail("not spawned to join a job");
  const auto space = job.ranks();
  if (space.blocks().size() != 2 || space.blocks()[1].nspace != job.nspace()) {
    return Fail("rank space " + space.Encode());
  }
  const Rank parents = space.blocks()[0].count;
  if (job.size() != parents + 2 || job.rank() < parents) {
    return Fail("job rank " + std::to_string(job.rank()) + " of " + std::to_string(job.size()));
  }
  if (job.node_peers() != RankSet::Range(0, parents + 2) ||
      job.local_peers() != RankSet::Range(parents, parents + 2)) {
    return Fail("node peers " + job.node_peers().ToString() + ", local peers " +
                job.local_peers().ToString());
  }
  rft::Status status = job.Put("test.child", BlobOf(job.rank()));
  if (status.ok()) status = job.Commit();
  if (!status.ok()) return Fail(status.ToString());
  for (Rank r = 0; r < parents; ++r) {
    auto blob = job.Get(r, "test.parent");
    if (!blob.ok()) return Fail(blob.status().ToString());
    if (*blob != BlobOf(r)) return Fail("wrong blob from parent " + std::to_string(r));
  }
  auto token = job.Get(0, "test.token");
  if (!token.ok()) return Fail(token.status().ToString());
  if (*token != TokenBlob(job.job_token())) return Fail("the job token is not the parents'");
  // Stay until every parent read this process's value.
  for (Rank r = 0; r < parents; ++r) {
    auto read = job.Get(r, "test.read." + std::to_string(r));
    if (!read.ok()) return Fail(read.status().ToString());
  }
  std::printf("replacement %u of %u joined\n", job.rank(), job.size());
  std::fflush(stdout);
  return job.rank() == parents + 1 ? 7 : 0;
}

// `local`: how many ranks the launcher runs on this node (0: all of them, as rftrun on one node
// does); a job across nodes numbers them node by node, so they are one block with this rank.
int Exchange(Bootstrap& job, Rank local) {
  auto all = job.Exchange("test.addr", BlobOf(job.rank()));
  if (!all.ok()) return Fail(all.status().ToString());
  if (all->size() != job.size()) return Fail("wrong number of blobs");
  for (Rank r = 0; r < job.size(); ++r) {
    if ((*all)[r] != BlobOf(r)) return Fail("blob of rank " + std::to_string(r) + " differs");
  }
  // Bounded by RFT_PMIX_TIMEOUT (the test sets it short): an error, not a hang.
  auto missing = job.Get(job.size() - 1, "test.never-published");
  if (missing.ok()) return Fail("Get of a key nobody published succeeded");
  if (missing.status().message().find("test.never-published") == std::string::npos) {
    return Fail("the error does not name the key: " + missing.status().ToString());
  }
  const RankSet peers = job.local_peers();
  if (local == 0) local = job.size();
  if (peers.size() != local || !peers.Contains(job.rank()) ||
      peers != RankSet::Range(*peers.begin(), *peers.begin() + local)) {
    return Fail("local peers " + peers.ToString() + ": expected a block of " +
                std::to_string(local) + " with rank " + std::to_string(job.rank()));
  }
  std::printf("exchange ok n=%u local=%s oversubscribed=%d\n", job.size(),
              job.local_peers().ToString().c_str(), job.oversubscribed() ? 1 : 0);
  return 0;
}

// Data no fence collected: every rank's Get of another rank's key goes to the launcher, which
// across nodes fetches it from the node that runs that rank (direct modex).
int Direct(Bootstrap& job) {
  rft::Status status = job.Put("test.direct", BlobOf(job.rank() + 1000));
  if (status.ok()) status = job.Commit();
  if (status.ok()) status = job.Fence(false);
  if (!status.ok()) return Fail(status.ToString());
  for (Rank r = 0; r < job.size(); ++r) {
    auto blob = job.Get(r, "test.direct");
    if (!blob.ok()) return Fail("rank " + std::to_string(r) + ": " + blob.status().ToString());
    if (*blob != BlobOf(r + 1000)) return Fail("blob of rank " + std::to_string(r) + " differs");
  }
  std::printf("direct ok n=%u\n", job.size());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  if (argc < 2) return Fail("no mode");
  const std::string mode = argv[1];
  if (mode == "pid-sleep") {
    std::printf("pid %d\n", static_cast<int>(getpid()));
    std::this_thread::sleep_for(std::chrono::seconds(60));
    return 0;
  }
  if (mode == "no-pmix") {
    std::printf("no-pmix ran\n");
    return 0;
  }
  auto init = Bootstrap::Init();
  if (!init.ok()) return Fail(init.status().ToString());
  Bootstrap& job = **init;
  RankSet victims;
  std::string end;
  Rank local = 0;
  for (int i = 2; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--end") == 0) end = argv[i + 1];
    if (std::strcmp(argv[i], "--local") == 0) local = static_cast<Rank>(std::atoi(argv[i + 1]));
    if (std::strcmp(argv[i], "--victims") == 0) {
      auto parsed = RankSet::Parse(std::string("{") + argv[i + 1] + "}");
      if (!parsed.ok()) return Fail(parsed.status().ToString());
      victims = *parsed;
    }
  }
  if (mode == "leave-shm") {
    char path[96];
    std::snprintf(path, sizeof(path), "/dev/shm/rft-%08x-%u-leftover", job.job_tag(), job.rank());
    const int fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (fd < 0) return Fail(std::string("creating ") + path + ": " + std::strerror(errno));
    close(fd);
    std::printf("left %s\n", path);
    return 0;
  }
  if (mode == "exchange") return Exchange(job, local);
  if (mode == "direct") return Direct(job);
  if (mode == "failures") return WaitForVictims(job, victims, false, end);
  if (mode == "abort-subset") return WaitForVictims(job, victims, true, end);
  if (mode == "abort-all") {
    if (job.rank() == 1) {
      const int code = argc > 2 ? std::atoi(argv[2]) : 7;
      rft::Status status = job.Abort(code, "test aborts the job", RankSet());
      return Fail("abort returned: " + status.ToString());
    }
    SleepForever();
  }
  if (mode == "exit" && argc > 2) {
    if (job.rank() == 1) return std::atoi(argv[2]);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    return 0;
  }
  if (mode == "sleep" && argc > 2) {
    std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(argv[2])));
    return 0;
  }
  if (mode == "spawn") {
    if (job.rank() != 0) return 0;
    auto child = job.Spawn({argv[0], "spawned"}, 2);
    if (!child.ok()) return Fail(child.status().ToString());
    std::printf("spawned namespace %s\n", child->c_str());
    return 0;
  }
  if (mode == "spawned") {
    if (!job.spawned()) return Fail("PMIX_SPAWNED is not set");
    std::printf("spawned child %u of %u up\n", job.rank(), job.size());
    return 0;
  }
  if (mode == "replace") return Replace(job, argv[0]);
  if (mode == "replacement") return Replacement(job);
  return Fail("unknown mode " + mode);
}
