// The fault matrix (docs/reliability.md): one rank dies (SIGKILL) or hangs (SIGSTOP) at a chosen
// protocol phase, in a chosen role, and every survivor must complete what it had pending with the
// right outcome within a bound, learn of the failure, and go on. Run under `rftrun --ft` by
// fault_matrix_test.cc; every check prints "FAILED: ..." and exits 3 on a violation.
//
//   fault_matrix_worker PHASE ROLE kill|stop      (n >= 4)
//
// Ranks: the sender S = 1, the receiver R = n-1, a bystander B = 2; the victim is the rank of
// ROLE. The victim ends itself at an agreed point of the phase's own protocol, never on a timer:
//   eager     S posts 16 eager sends to R's posted receives; S dies right after posting them,
//             R right after telling S its receives are posted, B when S tells it the sends
//             are posted.
//   rts       S sends a rendezvous message R has not matched, then a marker; S dies after the
//             marker, R on receiving it, B when S tells it. R matches the message only once the
//             victim is known failed.
//   read      S sends 64 MiB to R's posted receive; the victim dies when the first bytes land
//             in R's buffer (a watcher thread reads it, through process_vm_readv from S and B),
//             i.e. during the copy: the same-node read, or UCX's rendezvous with
//             RFT_RENDEZVOUS=ucx.
//   put       S puts 64 MiB one-sided into R's registered memory (transport/ucx RemoteRegion);
//             the victim dies when the first bytes land.
//   repair    rank P = 2 is ended through the launcher; the victim dies when it learns it,
//             i.e. while the heartbeat ring repairs around P. Roles: sender = P's emitter (1),
//             receiver = P's observer (3), bystander = the last rank (rank 0 at n = 4).
//   teardown  with operations in flight (S: a rendezvous send R never matches; R: a receive S
//             never sends), every rank closes its runtime after a fence; the victim dies
//             right after the fence. Survivors must finish within a bound and exit cleanly.
//
// Expected outcomes: an operation that needed the victim completes with RFT_ERR_PROC_FAILED, or
// with success when the data had fully moved before the fault (never with wrong data, never
// not at all); an operation between survivors succeeds with the right data. Each survivor prints
// "matrix ok rank=R outcome=..." where outcome says which of the allowed results it saw.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "tests/multiproc/dataplane_checks.h"
#include "tests/multiproc/fault_points.h"
#include "tests/multiproc/survivors.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/dataplane/data_plane.h"
#include "transport/ucx/endpoint_table.h"
#include "transport/ucx/memory_region.h"
#include "transport/ucx/ucx_worker.h"
#include "ulfm_api/runtime.h"

namespace rft::testing {
namespace {

using transport::Bootstrap;
using transport::DataPlane;
using transport::MessageStatus;
using transport::Request;

constexpr uint32_t kContext = 9;
enum Tag : int32_t {
  kPosted = 100,   // R -> S (and B): receives posted; carries R's pid and buffer address
  kData,           // S -> R: the phase's payload
  kMarker,         // S -> R: sent after the payload (ordered behind it)
  kNow,            // S -> B: the agreed point for a bystander victim
  kNever,          // posted on the victim by every survivor; nobody sends it
  kNeverTeardown,  // R's receive in flight at teardown
  kRing,
};

constexpr size_t kEagerCount = 16;
constexpr size_t kEagerBytes = 1024;
constexpr size_t kHugeBytes = size_t{64} << 20;
constexpr std::chrono::seconds kBound{30};

Deadline Bound() { return Deadline::After(kBound); }

struct Cell {
  std::string phase, role;
  bool kill = true;
  Rank sender = 1, receiver = 0, bystander = 2;
  Rank victim = kInvalidRank;
  Rank primer = kInvalidRank;  // repair: the rank whose failure starts the repair
};

class Matrix {
 public:
  Matrix(api::Runtime& runtime, Cell cell)
      : job_(runtime.bootstrap()),
        registry_(runtime.registry()),
        plane_(runtime.plane()),
        cell_(std::move(cell)) {}

  // The phase; the survivors' common checks follow in Aftermath.
  int Run();

 private:
  Rank me() const { return job_.rank(); }
  bool Victim() const { return me() == cell_.victim; }
  RankSet Failed() const {
    RankSet failed{cell_.victim};
    if (cell_.primer != kInvalidRank) failed.Insert(cell_.primer);
    return failed;
  }
  void Note(const std::string& what) {
    if (!outcome_.empty()) outcome_ += ",";
    outcome_ += what;
  }
  // S tells a bystander victim that the agreed point has come.
  Status Signal() {
    return cell_.bystander == cell_.victim ? plane_.Send("now", 3, cell_.bystander, kNow, kContext)
                                           : Status::Ok();
  }
  // A bystander victim dies when S tells it to.
  int DieOnSignal() {
    char now[3];
    CHECK_OK(plane_.Recv(now, sizeof(now), cell_.sender, kNow, kContext, nullptr));
    Die(cell_.kill);
  }
  // A message size that goes by rendezvous whatever the eager limit.
  size_t RendezvousBytes() const { return plane_.options().eager_limit * 4 + 3; }

  int Eager();
  int Rts();
  int Read();
  int Put();
  int Repair();
  int Teardown();
  int Aftermath();

  Bootstrap& job_;
  detector::FailureRegistry& registry_;
  DataPlane& plane_;
  Cell cell_;
  std::string outcome_;
  std::vector<Request*> never_;  // receives posted on the failed ranks
  std::vector<char> teardown_buffer_;
  std::thread watcher_;  // victims only, which never return
};

int Matrix::Run() {
  // Receives only a failure can complete: every survivor posts one on each rank that will fail.
  if (!Failed().Contains(me())) {
    for (Rank r : Failed()) {
      never_.push_back(nullptr);
      CHECK_OK(plane_.Irecv(nullptr, 0, r, kNever, kContext, &never_.back()));
    }
  }
  CHECK_OK(job_.Fence(false));
  int rc;
  if (cell_.phase == "eager") {
    rc = Eager();
  } else if (cell_.phase == "rts") {
    rc = Rts();
  } else if (cell_.phase == "read") {
    rc = Read();
  } else if (cell_.phase == "put") {
    rc = Put();
  } else if (cell_.phase == "repair") {
    rc = Repair();
  } else {
    return Teardown();
  }
  if (rc != 0) return rc;
  if (Victim()) {
    for (;;) pause();  // its watcher ends it
  }
  return Aftermath();
}

int Matrix::Eager() {
  const Cell& c = cell_;
  if (me() == c.receiver) {
    std::vector<std::vector<char>> in(kEagerCount, std::vector<char>(kEagerBytes));
    std::vector<Request*> receives(kEagerCount);
    for (size_t i = 0; i < kEagerCount; ++i) {
      CHECK_OK(plane_.Irecv(in[i].data(), kEagerBytes, c.sender, kData, kContext, &receives[i]));
    }
    CHECK_OK(plane_.Send("posted", 6, c.sender, kPosted, kContext));
    if (Victim()) Die(c.kill);
    std::vector<MessageStatus> statuses(kEagerCount);
    const Status all = plane_.Waitall(receives, statuses, Bound());
    CHECK(all.ok() || all.code() == RFT_ERR_IN_STATUS, "waitall: " << all.ToString());
    // Messages arrive in order: what arrived is a prefix, each whole and right.
    size_t arrived = 0;
    for (size_t i = 0; i < kEagerCount; ++i) {
      const bool right = statuses[i].error == RFT_SUCCESS && in[i] == TestBytes(kEagerBytes, i);
      if (c.victim == c.sender) {
        CHECK(right || statuses[i].error == RFT_ERR_PROC_FAILED,
              "message " << i << ": " << rft_error_name(statuses[i].error));
        CHECK(!right || arrived == i, "message " << i << " arrived after a lost one");
      } else {
        CHECK(right,
              "message " << i << " between survivors: " << rft_error_name(statuses[i].error));
      }
      if (right) ++arrived;
    }
    Note("received=" + std::to_string(arrived));
  } else if (me() == c.sender) {
    char posted[6];
    const Status got = plane_.Recv(posted, sizeof(posted), c.receiver, kPosted, kContext, nullptr);
    CHECK(got.ok() || (c.victim == c.receiver && got.code() == RFT_ERR_PROC_FAILED),
          "receives-posted message: " << got.ToString());
    std::vector<std::vector<char>> out;
    for (size_t i = 0; i < kEagerCount; ++i) out.push_back(TestBytes(kEagerBytes, i));
    std::vector<Request*> sends(kEagerCount);
    for (size_t i = 0; i < kEagerCount; ++i) {
      CHECK_OK(plane_.Isend(out[i].data(), kEagerBytes, c.receiver, kData, kContext, &sends[i]));
    }
    if (Victim()) Die(c.kill);
    CHECK_OK(Signal());
    std::vector<MessageStatus> statuses(kEagerCount);
    (void)plane_.Waitall(sends, statuses, Bound());
    size_t failed = 0;
    for (size_t i = 0; i < kEagerCount; ++i) {
      CHECK(sends[i] == nullptr, "send " << i << " still pending after " << kBound.count() << " s");
      // An eager send may have left before the receiver died: success is no error there.
      const bool allowed = statuses[i].error == RFT_SUCCESS ||
                           (c.victim == c.receiver && statuses[i].error == RFT_ERR_PROC_FAILED);
      CHECK(allowed, "send " << i << ": " << rft_error_name(statuses[i].error));
      if (statuses[i].error != RFT_SUCCESS) ++failed;
    }
    Note("sends_failed=" + std::to_string(failed));
  } else if (Victim()) {
    return DieOnSignal();
  }
  return 0;
}

int Matrix::Rts() {
  const Cell& c = cell_;
  const size_t large = RendezvousBytes();
  if (me() == c.sender) {
    const std::vector<char> out = TestBytes(large, 77);
    Request* send = nullptr;
    CHECK_OK(plane_.Isend(out.data(), large, c.receiver, kData, kContext, &send));
    CHECK_OK(plane_.Send("marker", 6, c.receiver, kMarker, kContext));
    if (Victim()) Die(c.kill);
    CHECK_OK(Signal());
    MessageStatus status;
    const Status sent = plane_.Wait(&send, &status, Bound());
    CHECK(send == nullptr, "rendezvous send still pending after " << kBound.count() << " s");
    if (c.victim == c.receiver) {
      CHECK(sent.code() == RFT_ERR_PROC_FAILED, "send to the dead receiver: " << sent.ToString());
    } else {
      CHECK(sent.ok(), "rendezvous send between survivors: " << sent.ToString());
    }
  } else if (me() == c.receiver) {
    char marker[6];
    const Status got = plane_.Recv(marker, sizeof(marker), c.sender, kMarker, kContext, nullptr);
    CHECK(got.ok() || (c.victim == c.sender && got.code() == RFT_ERR_PROC_FAILED),
          "marker: " << got.ToString());
    if (Victim()) Die(c.kill);  // with the request-to-send unmatched
    // The failure is processed while the request-to-send waits unmatched; then it is matched.
    CHECK_OK(AwaitFailed(registry_, {c.victim}, Bound()));
    std::vector<char> in(large);
    MessageStatus status;
    const Status received = plane_.Recv(in.data(), large, c.sender, kData, kContext, &status);
    if (c.victim == c.sender) {
      // A stopped sender is alive until the launcher killed it: a read that came first gets
      // the whole message, which it sent before it stopped.
      CHECK(FailedOrWhole(received, in == TestBytes(large, 77)),
            "rendezvous from the dead sender: " << received.ToString());
      Note(received.ok() ? "completed" : "failed");
    } else {
      CHECK(received.ok() && in == TestBytes(large, 77),
            "rendezvous between survivors: " << received.ToString());
    }
  } else if (Victim()) {
    return DieOnSignal();
  }
  return 0;
}

int Matrix::Read() {
  const Cell& c = cell_;
  if (me() == c.receiver) {
    Pages in(kHugeBytes);
    Request* receive = nullptr;
    CHECK_OK(plane_.Irecv(in.data(), kHugeBytes, c.sender, kData, kContext, &receive));
    const Target target{static_cast<uint64_t>(getpid()), reinterpret_cast<uint64_t>(in.data())};
    if (Victim()) watcher_ = Watch(target, c.kill);
    for (Rank to : {c.sender, c.bystander}) {
      CHECK_OK(plane_.Send(&target, sizeof(target), to, kPosted, kContext));
    }
    MessageStatus status;
    const Status received = plane_.Wait(&receive, &status, Bound());
    CHECK(receive == nullptr, "receive still pending after " << kBound.count() << " s");
    const bool whole =
        received.ok() && status.count == kHugeBytes && Stamped(in.data(), kHugeBytes, 5);
    if (c.victim == c.sender) {
      CHECK(FailedOrWhole(received, whole),
            "receive from the dying sender: " << received.ToString());
    } else {
      CHECK(whole, "receive between survivors: " << received.ToString());
    }
    Note(received.ok() ? "completed" : "failed");
  } else if (me() == c.sender || me() == c.bystander) {
    Target target;
    const Status got = plane_.Recv(&target, sizeof(target), c.receiver, kPosted, kContext, nullptr);
    CHECK(got.ok(), "receive-posted message: " << got.ToString());
    if (Victim()) watcher_ = Watch(target, c.kill);
    if (me() == c.sender) {
      const Pages out(kHugeBytes, 5);
      Request* send = nullptr;
      CHECK_OK(plane_.Isend(out.data(), kHugeBytes, c.receiver, kData, kContext, &send));
      const Status sent = plane_.Wait(&send, nullptr, Bound());
      CHECK(send == nullptr, "send still pending after " << kBound.count() << " s");
      if (c.victim == c.receiver) {
        CHECK(sent.ok() || sent.code() == RFT_ERR_PROC_FAILED,
              "send to the dying receiver: " << sent.ToString());
      } else {
        CHECK(sent.ok(), "send between survivors: " << sent.ToString());
      }
      Note(sent.ok() ? "completed" : "failed");
    }
  }
  if (me() == c.sender || me() == c.receiver) {
    Note(plane_.UsesCmaWith(me() == c.sender ? c.receiver : c.sender) ? "cma" : "ucx");
  }
  return 0;
}

// A PeerFailureSink for the test's own UCX endpoints: a dead peer goes to the registry, like
// every other source.
class RegistrySink : public transport::ucx::PeerFailureSink {
 public:
  explicit RegistrySink(detector::FailureRegistry& registry) : registry_(registry) {}
  void OnPeerFailed(Rank rank, const Status&) override {
    registry_.Report(rank, detector::FailureSource::kTransport);
  }

 private:
  detector::FailureRegistry& registry_;
};

int Matrix::Put() {
  using transport::ucx::EndpointTable;
  using transport::ucx::LocalRegion;
  using transport::ucx::RemoteRegion;
  const Cell& c = cell_;
  auto context = transport::ucx::UcxContext::Create();
  CHECK_OK(context.status());
  auto worker = transport::ucx::UcxWorker::Create(**context);
  CHECK_OK(worker.status());
  auto addresses = job_.Exchange("test.matrix.ucx", (*worker)->address());
  CHECK_OK(addresses.status());
  RegistrySink sink(registry_);
  auto table = EndpointTable::Create(worker->get(), me(), std::move(*addresses), &sink);
  CHECK_OK(table.status());
  std::unique_ptr<LocalRegion> region;
  if (me() == c.receiver) {
    auto allocated = LocalRegion::Allocate(**context, kHugeBytes);
    CHECK_OK(allocated.status());
    region = std::move(*allocated);
    std::memset(region->data(), 0, kHugeBytes);
  }
  auto descriptors = job_.Exchange(
      "test.matrix.region", region != nullptr ? region->descriptor() : std::vector<std::byte>{});
  CHECK_OK(descriptors.status());
  const Target mine = region == nullptr ? Target{}
                                        : Target{static_cast<uint64_t>(getpid()),
                                                 reinterpret_cast<uint64_t>(region->data())};
  auto targets = job_.Exchange("test.matrix.target", std::as_bytes(std::span(&mine, 1)));
  CHECK_OK(targets.status());
  Target target;
  std::memcpy(&target, (*targets)[c.receiver].data(), sizeof(target));
  if (Victim()) watcher_ = Watch(target, c.kill);
  if (me() == c.sender) {
    const Pages out(kHugeBytes, 6);
    auto ep = (*table)->Get(c.receiver);
    CHECK_OK(ep.status());
    auto remote = RemoteRegion::Attach(worker->get(), *ep, (*descriptors)[c.receiver]);
    CHECK_OK(remote.status());
    const Status put =
        (*remote)->Put(0, std::span<const std::byte>(out.data(), kHugeBytes), kBound);
    // Into shared memory a put may complete even after the target died: the memory is mapped.
    if (c.victim == c.receiver) {
      CHECK(put.ok() || put.code() == RFT_ERR_PROC_FAILED,
            "put to the dying receiver: " << put.ToString());
    } else {
      CHECK(put.ok(), "put between survivors: " << put.ToString());
    }
    Note(put.ok() ? "completed" : "failed");
    remote->reset();
    // A victim whose put finished before its watcher fired sends nothing more: its watcher may
    // fire in the middle of that send, which is the shared-memory FIFO limit
    // (docs/reliability.md), not this cell's subject.
    if (put.ok() && !Victim()) CHECK_OK(plane_.Send("put", 3, c.receiver, kMarker, kContext));
  } else if (me() == c.receiver && !Victim()) {
    // The sender says when its put is complete; a dead sender's word never comes.
    char marker[3];
    const Status done = plane_.Recv(marker, sizeof(marker), c.sender, kMarker, kContext, nullptr);
    if (c.victim == c.sender) {
      CHECK(done.code() == RFT_ERR_PROC_FAILED ||
                (done.ok() && Stamped(region->data(), kHugeBytes, 6)),
            "put from the dying sender: " << done.ToString());
    } else {
      CHECK(done.ok() && Stamped(region->data(), kHugeBytes, 6),
            "put between survivors: " << done.ToString() << " (or the data is wrong)");
    }
    Note(done.ok() ? "completed" : "failed");
  }
  if (Victim()) {
    for (;;) pause();  // its watcher ends it
  }
  region.reset();
  table->reset();  // bounded even with the victim's endpoint
  return 0;
}

int Matrix::Repair() {
  const Cell& c = cell_;
  if (me() == c.primer) {
    (void)job_.Abort(0, "test: the first failure", RankSet{me()});
    for (;;) pause();
  }
  if (Victim()) {
    CHECK_OK(AwaitFailed(registry_, {c.primer}, Bound()));
    Die(c.kill);  // while this process's control thread repairs its ring
  }
  return 0;
}

int Matrix::Teardown() {
  const Cell& c = cell_;
  // Left in flight on purpose: the data plane reports and leaks them. The buffers are members,
  // alive until after the runtime closed.
  Request* pending = nullptr;
  teardown_buffer_ = TestBytes(RendezvousBytes(), 9);
  if (me() == c.sender) {
    CHECK_OK(plane_.Isend(teardown_buffer_.data(), teardown_buffer_.size(), c.receiver, kData,
                          kContext, &pending));
  }
  if (me() == c.receiver) {
    CHECK_OK(plane_.Irecv(teardown_buffer_.data(), teardown_buffer_.size(), c.sender,
                          kNeverTeardown, kContext, &pending));
  }
  CHECK_OK(job_.Fence(false));
  if (Victim()) Die(c.kill);
  return 0;  // the caller tears down and times it
}

int Matrix::Aftermath() {
  const Cell& c = cell_;
  const int64_t start = MonotonicNanos();
  CHECK_OK(AwaitFailed(registry_, Failed(), Bound()));
  // Nobody else was taken for failed.
  for (const auto& record : registry_.Records()) {
    CHECK(Failed().Contains(record.rank), "rank " << record.rank << " recorded failed by "
                                                  << detector::FailureSourceName(record.source));
  }
  std::vector<MessageStatus> statuses(never_.size());
  (void)plane_.Waitall(never_, statuses, Bound());
  for (size_t i = 0; i < never_.size(); ++i) {
    CHECK(never_[i] == nullptr && statuses[i].error == RFT_ERR_PROC_FAILED,
          "receive posted on a failed rank: "
              << (never_[i] != nullptr ? "still pending" : rft_error_name(statuses[i].error)));
  }
  const Status late = plane_.Send("x", 1, c.victim, kData, kContext);
  CHECK(late.code() == RFT_ERR_PROC_FAILED, "send after the failure: " << late.ToString());
  const RankSet survivors = RankSet::Range(0, job_.size()).Difference(Failed());
  CHECK_OK(TokenRing(plane_, survivors, kRing, kContext));
  const double ms = static_cast<double>(MonotonicNanos() - start) / 1e6;
  std::printf("matrix ok rank=%u phase=%s role=%s how=%s outcome=%s known_ms=%.0f\n", me(),
              c.phase.c_str(), c.role.c_str(), c.kill ? "kill" : "stop",
              outcome_.empty() ? "-" : outcome_.c_str(), ms);
  CHECK_OK(job_.Fence(false, survivors));
  return 0;
}

std::optional<Cell> ParseCell(int argc, char** argv, Rank n) {
  if (argc != 4 || n < 4) return std::nullopt;
  Cell cell{.phase = argv[1], .role = argv[2]};
  const std::string how = argv[3];
  if (how != "kill" && how != "stop") return std::nullopt;
  cell.kill = how == "kill";
  cell.receiver = n - 1;
  const std::vector<std::string> phases = {"eager", "rts", "read", "put", "repair", "teardown"};
  if (std::find(phases.begin(), phases.end(), cell.phase) == phases.end()) return std::nullopt;
  if (cell.phase == "repair") {
    // The ring: every rank is observed by its successor. P = 2 is put into by 1, observed by 3.
    cell.primer = 2;
    if (cell.role == "sender") cell.victim = 1;
    if (cell.role == "receiver") cell.victim = 3;
    if (cell.role == "bystander") cell.victim = n > 4 ? n - 1 : 0;
  } else {
    if (cell.role == "sender") cell.victim = cell.sender;
    if (cell.role == "receiver") cell.victim = cell.receiver;
    if (cell.role == "bystander") cell.victim = cell.bystander;
  }
  if (cell.victim == kInvalidRank) return std::nullopt;
  return cell;
}

int Main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  auto runtime = api::Runtime::Create();
  CHECK_OK(runtime.status());
  Bootstrap& job = (*runtime)->bootstrap();
  const std::optional<Cell> cell = ParseCell(argc, argv, job.size());
  if (!cell.has_value()) {
    return Fail(
        "usage (n >= 4): fault_matrix_worker eager|rts|read|put|repair|teardown "
        "sender|receiver|bystander kill|stop");
  }
  Matrix matrix(**runtime, *cell);  // outlives the planes: teardown leaves requests in them
  const int rc = matrix.Run();
  if (rc != 0) return rc;
  if (cell->phase != "teardown") return 0;
  // Teardown with operations in flight and a peer dead or hung: bounded, no abort.
  const int64_t start = MonotonicNanos();
  (*runtime)->Close();
  const double seconds = static_cast<double>(MonotonicNanos() - start) / 1e9;
  CHECK(seconds < 15, "tearing down took " << seconds << " s");
  std::printf("matrix ok rank=%u phase=teardown role=%s how=%s outcome=- teardown_s=%.2f\n",
              job.rank(), cell->role.c_str(), cell->kill ? "kill" : "stop", seconds);
  // A hung victim is nobody's to end once the survivors stopped watching: rank 0 (never a
  // victim here) has the launcher end it, as a job's last survivor would.
  if (job.rank() == 0 && !cell->kill) {
    (void)job.Abort(0, "test: the stopped rank is done", RankSet{cell->victim});
  }
  return 0;
}

}  // namespace
}  // namespace rft::testing

int main(int argc, char** argv) { return rft::testing::Main(argc, argv); }
