// Multi-process checks of the detector (detector/), run under rftrun by detector_test.cc.
// Every check prints "FAILED: ..." and exits 3 on a violation.
//
//   fault kill|stop --victim V[,W...] [--writes]   (rftrun --ft) the ranks agree on an instant;
//                the victims then SIGKILL or SIGSTOP themselves. Every survivor's registry must
//                have exactly them, its data plane must have failed the receive posted on the
//                first, and the survivors must still talk to each other. A stopped victim must
//                be killed by the launcher. --writes (a verbs port): the survivors' heartbeats
//                then all go by RDMA WRITE, to the repaired ring's observers too, within 20 s.
//   quiet --seconds S   no fault: heartbeats flow (each rank's observer sees its counter move)
//                and nobody is suspected; with RFT_PROGRESS_THREAD=n through Poll calls.
//   services     a service hosted beside the detector gets its messages (sent from posted
//                work), its broadcasts and its timers on the control thread; messages for a
//                service not hosted yet are kept for it, and dropped (counted) once it has gone;
//                hosting is refused twice or for the detector,
//                and a service hosted late gets what it missed. (The control plane alone.)
//   revoke --origin R   rank R revokes a context in which every rank waits in a receive: each
//                receive ends REVOKED, and the revocation was delivered once everywhere.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/clock.h"
#include "detector/control_plane.h"
#include "detector/failure_registry.h"
#include "tests/multiproc/dataplane_checks.h"
#include "tests/multiproc/survivors.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/dataplane/data_plane.h"
#include "ulfm_api/runtime.h"

namespace rft::testing {
namespace {

using detector::BroadcastKind;
using detector::BroadcastMessage;
using detector::ControlPlane;
using detector::FailureRegistry;
using transport::Bootstrap;
using transport::ControlService;
using transport::DataPlane;

constexpr uint32_t kContext = 5;

// Waits until a window of 25 heartbeat periods in which every heartbeat this process put went
// by RDMA WRITE; the windows it took, or 0 after 20 s.
int AwaitHeartbeatsByRdmaWrite(ControlPlane& control) {
  const int64_t period = control.options().heartbeat.period_ns;
  const Deadline deadline = Deadline::After(std::chrono::seconds(20));
  for (int windows = 1; !deadline.expired(); ++windows) {
    const uint64_t put = control.heartbeats_put();
    const uint64_t written = control.heartbeats_written();
    usleep(static_cast<useconds_t>(25 * period / 1000));
    const uint64_t put_in_window = control.heartbeats_put() - put;
    if (put_in_window > 0 && control.heartbeats_written() - written == put_in_window) {
      return windows;
    }
  }
  return 0;
}

int Fault(Bootstrap& job, FailureRegistry& registry, ControlPlane& control, DataPlane& plane,
          bool kill, const RankSet& victims, bool writes) {
  const Rank me = job.rank();
  const Rank n = job.size();
  CHECK(!victims.empty() && victims.Nth(victims.size() - 1) < n && victims.size() < n,
        "victims " << victims.ToString() << " of " << n);
  const Rank first_victim = victims.Nth(0);
  // A receive only the first victim could complete.
  char in[8];
  transport::Request* pending = nullptr;
  if (!victims.Contains(me)) {
    CHECK_OK(plane.Irecv(in, sizeof(in), first_victim, 1, kContext, &pending));
  }
  // The instant of the fault: the latest clock of all ranks plus a margin for the ring to run.
  const int64_t now = MonotonicNanos();
  auto clocks = job.Exchange(
      "test.detector.now",
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(&now), sizeof(now)));
  CHECK_OK(clocks.status());
  int64_t fault_at = now;
  for (const auto& bytes : *clocks) {
    int64_t theirs;
    std::memcpy(&theirs, bytes.data(), sizeof(theirs));
    fault_at = std::max(fault_at, theirs);
  }
  fault_at += 3 * control.options().heartbeat.timeout_ns;
  CHECK_OK(job.Fence(false));  // everyone has every clock before anyone can fail
  if (victims.Contains(me)) {
    while (MonotonicNanos() < fault_at) usleep(100);
    raise(kill ? SIGKILL : SIGSTOP);
    for (;;) pause();
  }
  // Generous for sanitizer builds on 2 shared cores; the benchmark measures the real figure.
  CHECK_OK(AwaitFailed(registry, victims, Deadline::After(std::chrono::seconds(20))));
  const auto records = registry.Records();
  CHECK(records.size() == victims.size(),
        records.size() << " failures recorded; expected only ranks " << victims.ToString());
  for (const auto& record : records) {
    CHECK(victims.Contains(record.rank), "rank " << record.rank << " recorded failed");
  }
  const double ms = static_cast<double>(records[0].known_ns - fault_at) / 1e6;
  // The data plane heard it through the registry and failed what depended on the victim.
  transport::MessageStatus status;
  const Status received = plane.Wait(&pending, &status, Deadline::After(std::chrono::seconds(10)));
  CHECK(received.code() == RFT_ERR_PROC_FAILED, "receive from the victim: " << received.ToString());
  // The survivors go on: a ring among them.
  const RankSet survivors = RankSet::Range(0, n).Difference(victims);
  CHECK_OK(TokenRing(plane, survivors, 2, kContext));
  std::string by_rdma_write;
  if (writes) {
    const int windows = AwaitHeartbeatsByRdmaWrite(control);
    CHECK(windows > 0, "heartbeats still put through UCX 20 s after the ring was repaired ("
                           << control.heartbeats_written() << " of " << control.heartbeats_put()
                           << " by RDMA WRITE)");
    by_rdma_write = " heartbeats_by_rdma_write_after_windows=" + std::to_string(windows);
  }
  std::printf("fault ok rank=%u victim=%u source=%s ms=%.2f%s\n", me, first_victim,
              detector::FailureSourceName(records[0].source), ms, by_rdma_write.c_str());
  std::fflush(stdout);
  // The survivors finish together (a fence over the dead victim has no defined outcome).
  CHECK_OK(job.Fence(false, survivors));
  return 0;
}

int Quiet(Bootstrap& job, FailureRegistry& registry, ControlPlane& control, double seconds) {
  CHECK_OK(job.Fence(false));
  if (control.options().progress_thread) {
    usleep(static_cast<useconds_t>(seconds * 1e6));
  } else {
    // RFT_PROGRESS_THREAD=n: the detector runs only inside Poll.
    const Deadline end =
        Deadline::After(std::chrono::nanoseconds(static_cast<int64_t>(seconds * 1e9)));
    while (!end.expired()) CHECK_OK(control.Poll(5));
  }
  const uint64_t put = control.heartbeats_put();
  const int64_t period = control.options().heartbeat.period_ns;
  // At least half the periods of the run produced a put (the thread may be descheduled).
  const uint64_t expected = job.size() > 1 ? static_cast<uint64_t>(seconds * 1e9 / period / 2) : 0;
  CHECK(put >= expected, put << " heartbeats put in " << seconds << " s; expected >= " << expected);
  CHECK(control.suspicions() == 0 && registry.count() == 0,
        control.suspicions() << " suspicions, " << registry.count() << " failures without a fault");
  CHECK_OK(job.Fence(false));
  std::printf("quiet ok rank=%u heartbeats=%llu by_rdma_write=%llu\n", job.rank(),
              static_cast<unsigned long long>(put),
              static_cast<unsigned long long>(control.heartbeats_written()));
  return 0;
}

// A rank that died or hung before the start-up exchange: the others started without it, it is
// failed in their registry from the first call, and they work together.
int Startup(Bootstrap& job, FailureRegistry& registry, DataPlane& plane, Rank victim,
            const char* expected_source) {
  CHECK(registry.IsFailed(victim), "rank " << victim << " is not failed after start-up");
  const auto records = registry.Records();
  CHECK(records.size() == 1 && records[0].rank == victim,
        records.size() << " failures recorded; expected only rank " << victim);
  // Whoever decides first declares it; if that one has it killed, the others may learn it
  // from the launcher's event before their own lookup gives up: either source is right.
  const std::string source = detector::FailureSourceName(records[0].source);
  CHECK(source == expected_source || source == "launcher",
        "source " << source << ", expected " << expected_source << " or launcher");
  const Status refused = plane.Send("x", 1, victim, 3, kContext);
  CHECK(refused.code() == RFT_ERR_PROC_FAILED, "send to the victim: " << refused.ToString());
  RankSet survivors = RankSet::Range(0, job.size());
  survivors.Erase(victim);
  CHECK_OK(TokenRing(plane, survivors, 4, kContext));
  std::printf("startup ok rank=%u victim=%u source=%s\n", job.rank(), victim, source.c_str());
  std::fflush(stdout);
  CHECK_OK(job.Fence(false, survivors));
  return 0;
}

// A live rank falsely accused by one process (as a transport error or the caller's word would):
// fail-stop still holds — the accused is told and killed through the launcher, and every
// survivor learns it. `how` is "transport" or "application", the source of the accusation.
int Accuse(Bootstrap& job, FailureRegistry& registry, Rank victim, const std::string& how) {
  const Rank accuser = (victim + 1) % job.size();
  CHECK_OK(job.Fence(false));
  if (job.rank() == victim) {
    // Alive and well: it must be ended by the accusation, not by anything it does.
    std::this_thread::sleep_for(std::chrono::seconds(20));
    return Fail("the accused rank was not ended within 20 s");
  }
  if (job.rank() == accuser) {
    registry.Report(victim, how == "transport" ? detector::FailureSource::kTransport
                                               : detector::FailureSource::kApplication);
  }
  CHECK_OK(AwaitFailed(registry, {victim}, Deadline::After(std::chrono::seconds(20))));
  RankSet survivors = RankSet::Range(0, job.size());
  survivors.Erase(victim);
  CHECK_OK(job.Fence(false, survivors));
  std::printf("accused ok rank=%u victim=%u\n", job.rank(), victim);
  return 0;
}

// Records what reaches it, and whether it always ran on the control thread.
class RecordingService final : public detector::ControlServiceHandler {
 public:
  struct Message {
    Rank from;
    uint8_t kind;
    std::vector<std::byte> payload;
  };
  explicit RecordingService(ControlPlane* control) : control_(control) {}

  void OnControlMessage(Rank from, uint8_t kind, std::span<const std::byte> payload) override {
    std::lock_guard<std::mutex> lock(mutex_);
    off_thread_ = off_thread_ || !control_->OnControlThread();
    messages_.push_back({from, kind, std::vector<std::byte>(payload.begin(), payload.end())});
  }
  void OnBroadcastDelivered(const BroadcastMessage& message) override {
    std::lock_guard<std::mutex> lock(mutex_);
    off_thread_ = off_thread_ || !control_->OnControlThread();
    broadcasts_.push_back(message);
  }
  std::vector<Message> messages() {
    std::lock_guard<std::mutex> lock(mutex_);
    return messages_;
  }
  std::vector<BroadcastMessage> broadcasts() {
    std::lock_guard<std::mutex> lock(mutex_);
    return broadcasts_;
  }
  bool off_thread() {
    std::lock_guard<std::mutex> lock(mutex_);
    return off_thread_;
  }

 private:
  ControlPlane* control_;
  std::mutex mutex_;
  std::vector<Message> messages_;
  std::vector<BroadcastMessage> broadcasts_;
  bool off_thread_ = false;
};

// Polls `done` every millisecond until it holds or 10 s passed (generous for sanitizer builds).
template <typename Predicate>
bool WaitFor(Predicate done) {
  const Deadline deadline = Deadline::After(std::chrono::seconds(10));
  while (!done()) {
    if (deadline.expired()) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

int Services(Bootstrap& job, ControlPlane& control) {
  const Rank me = job.rank();
  const Rank n = job.size();
  CHECK(n >= 2, "services needs 2 ranks or more, not " << n);
  RecordingService service(&control);
  auto own = control.Host(ControlService::kDetector, &service);
  CHECK(own.status().code() == RFT_ERR_ARG,
        "hosting the detector's id: " << own.status().ToString());
  auto hosted = control.Host(ControlService::kRevoke, &service);
  CHECK_OK(hosted.status());
  auto twice = control.Host(ControlService::kRevoke, &service);
  CHECK(twice.status().code() == RFT_ERR_ARG, "hosting twice: " << twice.status().ToString());
  const uint64_t dropped_before = control.dropped_messages();
  CHECK_OK(job.Fence(false));  // everyone hosts before anyone sends

  // Messages around the ring, from posted work: one for the hosted service, one for a service
  // nobody hosts here yet (agreement), which is kept for it.
  const Rank next = (me + 1) % n;
  const Rank prev = (me + n - 1) % n;
  const bool posted = control.Post([&control, me, next] {
    const std::byte payload[1] = {static_cast<std::byte>(me)};
    control.Send(next, ControlService::kAgreement, 1, payload);
    control.Send(next, ControlService::kRevoke, 7, payload);
  });
  CHECK(posted, "Post refused while the control thread runs");
  CHECK(WaitFor([&] { return !service.messages().empty(); }), "no message from rank " << prev);
  const auto messages = service.messages();
  CHECK(messages.size() == 1 && messages[0].from == prev && messages[0].kind == 7 &&
            messages[0].payload.size() == 1 &&
            messages[0].payload[0] == static_cast<std::byte>(prev),
        messages.size() << " message(s); expected kind 7 from rank " << prev);
  // The agreement message is kept (or, if still on its way, comes straight to the service once
  // hosted): never dropped.
  {
    RecordingService agreement(&control);
    auto hosted_agreement = control.Host(ControlService::kAgreement, &agreement);
    CHECK_OK(hosted_agreement.status());
    CHECK(WaitFor([&] { return !agreement.messages().empty(); }),
          "the message for a service hosted late never reached it");
    CHECK(control.dropped_messages() == dropped_before,
          "a message for a service not hosted yet was dropped");
    const auto kept = agreement.messages();
    CHECK(kept.size() == 1 && kept[0].from == prev && kept[0].kind == 1 &&
              kept[0].payload.size() == 1 && kept[0].payload[0] == static_cast<std::byte>(prev),
          kept.size() << " kept message(s); expected kind 1 from rank " << prev);
  }
  // Once a service was hosted and is gone (a process ending), its messages are dropped.
  CHECK_OK(job.Fence(false));
  const bool resent = control.Post([&control, me, next] {
    const std::byte payload[1] = {static_cast<std::byte>(me)};
    control.Send(next, ControlService::kAgreement, 1, payload);
  });
  CHECK(resent, "Post refused while the control thread runs");
  CHECK(WaitFor([&] { return control.dropped_messages() > dropped_before; }),
        "the message for a service no longer hosted was not counted as dropped");

  // A timer set on the control thread runs there, and not before its time.
  std::atomic<int64_t> set_at{0}, fired_at{0};
  std::atomic<bool> timer_on_thread{false};
  constexpr int64_t kDelay = 30'000'000;
  const bool timer_posted = control.Post([&] {
    set_at = MonotonicNanos();
    control.RunAt(set_at + kDelay, [&] {
      timer_on_thread = control.OnControlThread();
      fired_at = MonotonicNanos();
    });
  });
  CHECK(timer_posted, "Post refused");
  CHECK(WaitFor([&] { return fired_at.load() != 0; }), "the timer never ran");
  CHECK(fired_at - set_at >= kDelay, "the timer ran after " << (fired_at - set_at) << " ns");
  CHECK(timer_on_thread, "the timer ran off the control thread");
  CHECK(!control.OnControlThread(), "the main thread claims to be the control thread");

  // Rank 0 revokes context 9 at epoch 1 by reliable broadcast: delivered once everywhere.
  const BroadcastMessage revoke{
      .kind = BroadcastKind::kRevoke, .context = 9, .epoch = 1, .origin = 0, .subject = 0};
  if (me == 0) {
    const bool revoke_posted = control.Post([&] { control.Broadcast(revoke); });
    CHECK(revoke_posted, "Post refused");
  }
  CHECK(WaitFor([&] { return !service.broadcasts().empty(); }), "the revocation never arrived");
  CHECK_OK(job.Fence(false));  // every rank delivered: any duplicate is on its way
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK(service.broadcasts().size() == 1 && service.broadcasts()[0] == revoke,
        service.broadcasts().size() << " deliveries of the revocation");

  // Hosted again after the end of the first hosting: what was delivered is replayed at once.
  hosted->Reset();
  RecordingService late(&control);
  auto again = control.Host(ControlService::kRevoke, &late);
  CHECK_OK(again.status());
  CHECK(late.broadcasts().size() == 1 && late.broadcasts()[0] == revoke,
        late.broadcasts().size() << " revocations replayed to a late service; expected 1");
  CHECK(!service.off_thread() && !late.off_thread(), "a callback ran off the control thread");
  CHECK_OK(job.Fence(false));
  std::printf("services ok rank=%u dropped=%llu\n", me,
              static_cast<unsigned long long>(control.dropped_messages() - dropped_before));
  return 0;
}

// Returns once the control thread has run everything handed to it before the call; false if
// it takes no more work.
bool WaitForControlThread(ControlPlane& control) {
  std::promise<void> handled;
  if (!control.Post([&handled] { handled.set_value(); })) return false;
  handled.get_future().wait();
  return true;
}

// Revocation across the job: every rank waits in a receive nobody will match; `origin` revokes
// the context (twice: idempotent); every receive completes with REVOKED, the revocation was
// delivered once everywhere, and new operations in the context are refused.
int Revoke(Bootstrap& job, ControlPlane& control, DataPlane& plane, api::RevokeService& revoke,
           Rank origin) {
  constexpr uint32_t kRevokedContext = 11;
  const Rank me = job.rank();
  const Rank n = job.size();
  CHECK(origin < n, "origin " << origin << " of " << n);
  char in[8];
  transport::Request* pending = nullptr;
  CHECK_OK(plane.Irecv(in, sizeof(in), (me + n - 1) % n, 1, kRevokedContext, &pending));
  CHECK_OK(job.Fence(false));
  const int64_t start = MonotonicNanos();
  if (me == origin) {
    CHECK_OK(revoke.Revoke(kRevokedContext, 0, 0));
    CHECK_OK(revoke.Revoke(kRevokedContext, 0, 0));
  }
  const Status waited = plane.Wait(&pending, nullptr, Deadline::After(std::chrono::seconds(20)));
  CHECK(waited.code() == RFT_ERR_REVOKED, "pending receive: " << waited.ToString());
  const double us = static_cast<double>(MonotonicNanos() - start) / 1e3;
  CHECK(revoke.delivered() == 1, revoke.delivered() << " deliveries of one revocation");
  const Status refused = plane.Send(in, sizeof(in), (me + 1) % n, 2, kRevokedContext);
  CHECK(refused.code() == RFT_ERR_REVOKED, "send after the revoke: " << refused.ToString());
  // The control thread delivers the revocation and then forwards it: the receive above can end
  // before the forwards are sent. A task posted now runs after them, so the counts include them.
  CHECK(WaitForControlThread(control), "the control thread takes no more work");
  // How the control messages travelled (the soft-RoCE checks read it: with
  // RFT_CONTROL_SOCKETS=n and a verbs port, all by verbs). Read before the fence: after it, a
  // rank that went on to end sends departures, whose answers would count here.
  const auto by_ucx = static_cast<unsigned long long>(control.messages_sent_by_ucx());
  const auto by_verbs = static_cast<unsigned long long>(control.messages_sent_by_verbs());
  const auto received = static_cast<unsigned long long>(control.messages_received_by_verbs());
  const auto wakeups = static_cast<unsigned long long>(control.verbs_wakeups());
  CHECK_OK(job.Fence(false));
  std::printf(
      "revoke ok rank=%u us=%.1f control_by_ucx=%llu by_verbs=%llu received_by_verbs=%llu "
      "verbs_wakeups=%llu\n",
      me, us, by_ucx, by_verbs, received, wakeups);
  return 0;
}

// Ranks end at different times: rank 0 right away, the others after talking among themselves
// for a while (their transports see rank 0's endpoints close). Nobody records rank 0 failed.
int Staggered(Bootstrap& job, FailureRegistry& registry, ControlPlane& control, DataPlane& plane) {
  CHECK_OK(job.Fence(false));
  if (job.rank() == 0) {
    std::printf("staggered ok rank=0 (left first)\n");
    return 0;
  }
  // Keep the data plane progressing (its transport reports what it sees) for half a second.
  const Deadline end = Deadline::After(std::chrono::milliseconds(500));
  while (!end.expired()) {
    plane.Progress();
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  CHECK(registry.count() == 0,
        registry.count() << " failure(s) recorded; rank " << registry.Records()[0].rank << " by "
                         << detector::FailureSourceName(registry.Records()[0].source));
  CHECK(registry.IsDeparted(0), "rank 0's departure was not recorded");
  CHECK(control.suspicions() == 0, control.suspicions() << " suspicions");
  // Work handed to the control thread makes it close the endpoints its transport saw fail,
  // rank 0's included (over TCP its end was an error there). Rank 0 observes rank n - 1: that
  // one's farewell must not go through the closed endpoint (it crashed UCX once in a soak).
  CHECK(WaitForControlThread(control), "the control thread takes no more work");
  CHECK_OK(job.Fence(false, RankSet::Range(1, job.size())));
  std::printf("staggered ok rank=%u\n", job.rank());
  return 0;
}

int Main(int argc, char** argv) {
  if (argc < 2) {
    return Fail(
        "usage: detector_worker fault kill|stop --victim V[,W...] [--writes] | quiet --seconds S | "
        "startup kill|stop --victim V");
  }
  const std::string mode = argv[1];
  auto init = Bootstrap::Init();
  CHECK_OK(init.status());
  Bootstrap& job = **init;
  const bool startup = mode == "startup" && argc == 5 && std::string(argv[3]) == "--victim";
  const bool startup_kill = startup && std::string(argv[2]) == "kill";
  const Rank startup_victim = startup ? static_cast<Rank>(std::atoi(argv[4])) : kInvalidRank;
  if (job.rank() == startup_victim) {
    // Before publishing anything: the others are in (or about to enter) their exchanges.
    raise(startup_kill ? SIGKILL : SIGSTOP);
    for (;;) pause();
  }
  if (mode == "services") {
    // The control plane alone (the runtime hosts its own revoke service): every service id but
    // the detector's is free for the test's.
    auto options = ControlPlane::OptionsFromConfig();
    CHECK_OK(options.status());
    auto registry = FailureRegistry::Create(job.rank(), job.size());
    CHECK_OK(registry.status());
    auto control = ControlPlane::Create(&job, registry->get(), *options);
    CHECK_OK(control.status());
    const int rc = Services(job, **control);
    (*control)->AnnounceDeparture();
    return rc;
  }
  auto options = api::Runtime::OptionsFromConfig(job);
  CHECK_OK(options.status());
  auto runtime = api::Runtime::Create(std::move(*init), *options);
  CHECK_OK(runtime.status());
  FailureRegistry& registry = (*runtime)->registry();
  ControlPlane& control = (*runtime)->control();
  DataPlane& plane = (*runtime)->plane();
  int rc;
  if (mode == "fault" && (argc == 5 || (argc == 6 && std::string(argv[5]) == "--writes")) &&
      std::string(argv[3]) == "--victim") {
    const std::string kind = argv[2];
    RankSet victims;
    for (const char* at = argv[4]; *at != '\0';) {
      char* end = nullptr;
      const unsigned long victim = std::strtoul(at, &end, 10);
      if (end == at || (*end != ',' && *end != '\0') || victim >= job.size()) {
        return Fail(std::string("--victim ") + argv[4] + ": expected ranks below " +
                    std::to_string(job.size()) + " separated by commas");
      }
      victims.Insert(static_cast<Rank>(victim));
      at = *end == ',' ? end + 1 : end;
    }
    rc = Fault(job, registry, control, plane, kind == "kill", victims, argc == 6);
  } else if (mode == "accuse" && argc == 5 && std::string(argv[3]) == "--victim") {
    rc = Accuse(job, registry, std::atoi(argv[4]), argv[2]);
  } else if (mode == "revoke" && argc == 4 && std::string(argv[2]) == "--origin") {
    rc = Revoke(job, control, plane, (*runtime)->revoke(), static_cast<Rank>(std::atoi(argv[3])));
  } else if (mode == "staggered") {
    rc = Staggered(job, registry, control, plane);
  } else if (startup) {
    rc = Startup(job, registry, plane, startup_victim, startup_kill ? "launcher" : "start-up");
  } else if (mode == "quiet" && argc == 4 && std::string(argv[2]) == "--seconds") {
    rc = Quiet(job, registry, control, std::atof(argv[3]));
  } else {
    rc = Fail("unknown arguments");
  }
  return rc;  // the runtime departs before it closes anything
}

}  // namespace
}  // namespace rft::testing

int main(int argc, char** argv) { return rft::testing::Main(argc, argv); }
