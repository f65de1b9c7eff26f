// verbs channel: the eager channel (eager_channel.h) between the processes of a job, on a real
// device (a soft-RoCE guest, docs/verbs.md). Run under a PMIx launcher:
//
//   rftrun [--ft] -n N channel_check [--kill-last | --mismatch] [--blocking]
//                                    [RFT_NET_DEVICE value]
//
// Each rank creates an EagerChannel, publishes its QPs' records through the bootstrap (one
// blob: rank p's record for rank r at slot r) and connects to its peers'. Then every rank sends
// every other rank messages of 0, 1, the inline limit, one byte more, 4 KiB and a full slot's
// payload, and the next rank a burst of 10 windows' worth (sent as fast as the channel takes
// them, so the window closes and the queue and explicit credits carry the rest). Each message
// of 8 bytes or more carries its index and a checksum of the rest; smaller ones are compared
// byte by byte, and every source's messages must arrive in the order sent. Then every rank
// writes two words by RDMA WRITE (Write: one unsignaled, one signaled) into its own slot of each
// peer's registered buffer, and finds the peers' second words in its own.
// With --kill-last (needs rftrun --ft) the last rank raises SIGKILL after the traffic, and rank
// 0's failure callback must fire for it once rank 0 sends to it.
// With --blocking a rank that has nothing to do sleeps in WaitForCompletion instead of
// spinning, and after the traffic an idle wait must cost next to no CPU.
// With --mismatch the last rank's channel has half the credits: every connection between it and
// another rank must be refused with RFT_ERR_ARG naming both configurations, the others accepted
// (the check then ends without traffic).
// Exits 0 when every step passed, 1 when one failed, 77 without an RDMA device.
#include <signal.h>
#include <time.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "base/byte_order.h"
#include "tests/verbs/device_check.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/verbs/address_exchange.h"
#include "transport/verbs/eager_channel.h"
#include "transport/verbs/qp_address.h"
#include "transport/verbs/verbs_context.h"

namespace rft::verbs {
namespace {

using transport::Bootstrap;
using Clock = std::chrono::steady_clock;

constexpr char kKey[] = "rft.verbs.eager";
constexpr uint32_t kBurstWindows = 10;
constexpr auto kTrafficLimit = std::chrono::seconds(120);  // generous: an emulated guest stalls

Rank self = 0;

double ThreadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

CheckVoice voice("channel");

uint32_t Checksum(std::span<const std::byte> bytes) {  // FNV-1a
  uint32_t h = 2166136261u;
  for (std::byte b : bytes) h = (h ^ static_cast<uint8_t>(b)) * 16777619u;
  return h;
}

std::byte Pattern(Rank from, Rank to, uint32_t index, size_t i) {
  return std::byte(static_cast<uint8_t>(from * 31 + to * 7 + index * 13 + i));
}

// Message `index` from `from` to `to`, `size` bytes, into `out`.
void Fill(Rank from, Rank to, uint32_t index, std::span<std::byte> out) {
  for (size_t i = 0; i < out.size(); ++i) out[i] = Pattern(from, to, index, i);
  if (out.size() < 8) return;
  StoreLittleEndian<uint32_t>(out, 0, index);
  StoreLittleEndian<uint32_t>(out, 4, Checksum(out.subspan(8)));
}

// Why message `index` from `from` is not what was sent, or "" when it is.
std::string Verify(Rank from, uint32_t index, size_t size, std::span<const std::byte> got) {
  const std::string what =
      "message " + std::to_string(index) + " from rank " + std::to_string(from);
  if (got.size() != size) {
    return what + ": " + std::to_string(got.size()) + " bytes, sent " + std::to_string(size);
  }
  if (size < 8) {
    for (size_t i = 0; i < size; ++i) {
      if (got[i] != Pattern(from, self, index, i)) return what + ": byte " + std::to_string(i);
    }
    return "";
  }
  const uint32_t carried = LoadLittleEndian<uint32_t>(got, 0);
  if (carried != index) return what + ": carries index " + std::to_string(carried) + " (order)";
  if (LoadLittleEndian<uint32_t>(got, 4) != Checksum(got.subspan(8))) return what + ": checksum";
  return "";
}

uint64_t WordFor(Rank from, Rank to, uint32_t round) {
  return 0x5752495445000000ull | (uint64_t{round} << 20) | (uint64_t{from} << 10) | to;
}

// RDMA WRITEs on the channel's QPs (the control plane's heartbeats take this path): each rank
// writes an unsignaled word and then a signaled one into its slot (8 bytes at 8 · rank) of every
// peer's registered buffer; once none awaits its completion and all have fenced, every slot of
// this rank's buffer holds its writer's second word.
Status CheckWrites(Bootstrap& boot, EagerChannel& channel, const std::vector<QpAddress>& remote,
                   VerbsContext& context) {
  const uint32_t n = boot.size();
  for (Rank d = 0; d < n; ++d) {
    if (d == self) continue;
    for (uint32_t round = 0; round < 2; ++round) {
      const auto give_up = Clock::now() + std::chrono::seconds(20);
      for (;;) {
        StatusOr<bool> posted = channel.Write(d, WordFor(self, d, round), remote[d].addr + 8 * self,
                                              remote[d].rkey, /*signaled=*/round == 1);
        if (!posted.ok())
          return OtherError("write to rank " + std::to_string(d) + ": " +
                            posted.status().ToString());
        if (*posted) break;
        if (Clock::now() > give_up)
          return OtherError("write to rank " + std::to_string(d) + " not taken in 20 s");
        if (StatusOr<int> polled = channel.Progress(); !polled.ok()) return polled.status();
      }
    }
  }
  const auto give_up = Clock::now() + std::chrono::seconds(20);
  for (Rank d = 0; d < n; ++d) {
    while (d != self && channel.awaiting(d)) {
      if (Clock::now() > give_up) {
        return OtherError("the signaled write to rank " + std::to_string(d) +
                          " did not complete in 20 s");
      }
      if (StatusOr<int> polled = channel.Progress(); !polled.ok()) return polled.status();
    }
  }
  if (Status s = boot.Fence(false); !s.ok()) return s;
  const std::span<const std::byte> buffer = context.buffer();
  for (Rank from = 0; from < n; ++from) {
    if (from == self) continue;
    const uint64_t word = LoadLittleEndian<uint64_t>(buffer, 8 * from);
    if (word != WordFor(from, self, 1) || channel.stats(from).writes != 2) {
      return OtherError("slot of rank " + std::to_string(from) + " holds " + std::to_string(word) +
                        ", expected " + std::to_string(WordFor(from, self, 1)) + "; " +
                        std::to_string(channel.stats(from).writes) + " writes posted to it");
    }
  }
  voice.Say("writes ok (2 RDMA WRITEs to each of " + std::to_string(n - 1) + " peers, " +
            (channel.inline_capable() ? "inline" : "from send slots") +
            "; every peer's second word in its slot here)");
  return Status::Ok();
}

int Run(int argc, char** argv) {
  bool kill_last = false;
  bool mismatch = false;
  bool blocking = false;
  std::string requested;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--kill-last") == 0) {
      kill_last = true;
    } else if (std::strcmp(argv[i], "--mismatch") == 0) {
      mismatch = true;
    } else if (std::strcmp(argv[i], "--blocking") == 0) {
      blocking = true;
    } else {
      requested = argv[i];
    }
  }
  std::variant<JobCheckStart, int> check_start = StartJobCheck(voice, requested, 2, UINT32_MAX);
  if (const int* status = std::get_if<int>(&check_start)) return *status;
  const Endpoint* endpoint = &std::get<JobCheckStart>(check_start).endpoint;
  Bootstrap& boot = *std::get<JobCheckStart>(check_start).job;
  self = boot.rank();
  const uint32_t n = boot.size();
  const Rank next = (self + 1) % n;
  const Rank prev = (self + n - 1) % n;

  StatusOr<std::unique_ptr<VerbsContext>> opened = VerbsContext::Open(*endpoint, 4096);
  if (!opened.ok()) return voice.Fail(opened.status().message());

  // What arrives, checked as it does. plan[d] lists the sizes of the messages to rank d.
  std::vector<std::vector<size_t>> plan(n);
  std::vector<uint32_t> arrived(n, 0);
  std::string wrong;
  struct Failure {
    int calls = 0;
    std::string status;
    Clock::time_point when;
  };
  std::vector<Failure> failures(n);
  auto on_message = [&](Rank from, std::span<const std::byte> payload) {
    const uint32_t index = arrived[from]++;
    // Every rank's plan for `self` matches the one `self` makes for the sender's direction.
    const std::vector<size_t>& sizes = plan[from];
    const size_t expected = index < sizes.size() ? sizes[index] : SIZE_MAX;
    const std::string why = expected == SIZE_MAX
                                ? "unexpected message from rank " + std::to_string(from)
                                : Verify(from, index, expected, payload);
    if (!why.empty() && wrong.empty()) wrong = why;
  };
  auto on_failure = [&](Rank peer, std::string_view status) {
    ++failures[peer].calls;
    failures[peer].status = std::string(status);
    failures[peer].when = Clock::now();
  };
  EagerConfig config;
  const bool odd_one = mismatch && self == n - 1;
  if (odd_one) config.credits /= 2;
  StatusOr<std::unique_ptr<EagerChannel>> created =
      EagerChannel::Create(**opened, self, n, config, on_message, on_failure);
  if (!created.ok()) return voice.Fail(created.status().message());
  EagerChannel& channel = **created;

  StatusOr<std::vector<QpAddress>> remote =
      ExchangeQpAddresses(boot, kKey, [&](Rank p) { return channel.address(p); });
  if (!remote.ok()) return voice.Fail(remote.status().message());
  for (Rank p = 0; p < n; ++p) {
    if (p == self) continue;
    const Status s = channel.Connect(p, (*remote)[p]);
    if (!mismatch) {
      if (!s.ok()) return voice.Fail(s.message());
      continue;
    }
    // The last rank's window differs: exactly its connections are refused, by name, and the
    // others go through.
    const bool refused_expected = odd_one || p == n - 1;
    if (refused_expected == s.ok()) {
      return voice.Fail("connecting to rank " + std::to_string(p) + ": " +
                        (s.ok() ? "accepted despite different credits" : s.ToString()));
    }
    if (!s.ok() && s.code() != RFT_ERR_ARG)
      return voice.Fail("refused, but not as RFT_ERR_ARG: " + s.ToString());
    if (!s.ok()) voice.Say("refused rank " + std::to_string(p) + ": " + s.message());
  }
  if (mismatch) {
    voice.Say("mismatch ok");
    return 0;
  }
  // No SEND before every QP is ready to receive.
  if (Status s = boot.Fence(false); !s.ok()) return voice.Fail("fence: " + s.ToString());

  const size_t limit = channel.max_inline_payload();
  const std::vector<size_t> sizes = {0, 1, limit, limit + 1, 4096, channel.max_payload()};
  const uint32_t burst = kBurstWindows * channel.credits();
  // Symmetric plans: what rank d expects from self is what self plans for d, and vice versa.
  for (Rank d = 0; d < n; ++d) {
    if (d == self) continue;
    plan[d] = sizes;
    const bool bursts = d == next || d == prev;
    if (bursts) {
      for (uint32_t i = 0; i < burst; ++i) plan[d].push_back(i % 2 == 0 ? 64 : 4096);
    }
  }
  // With two ranks next == prev, so the burst runs both ways; with more, only self -> next and
  // prev -> self, so what comes from next is the sizes alone.
  std::vector<std::vector<size_t>> outgoing = plan;
  if (n > 2) {
    outgoing[prev].resize(sizes.size());
    plan[next].resize(sizes.size());
  }
  if (self == 0) {
    voice.Say(std::to_string(n) + " ranks on " + endpoint->device + " port " +
              std::to_string(endpoint->port) + ", slots of " + std::to_string(config.slot_size) +
              " bytes, window " + std::to_string(channel.credits()) + ", inline up to " +
              std::to_string(limit) + " bytes");
  }

  // The traffic: one message to each peer in turn, as long as the channel takes them.
  std::vector<std::byte> message(channel.max_payload());
  std::vector<uint32_t> sent(n, 0);
  uint64_t full = 0;
  // The first window + 1 messages to `next` go before this rank polls at all: credits come back
  // only through its own Progress, so the last of them must wait, whatever the receiver's pace
  // (a fast receiver otherwise kept the window from filling, and the burst check failed).
  for (uint32_t i = 0; i <= channel.credits() && sent[next] < outgoing[next].size(); ++i) {
    const std::span<std::byte> payload(message.data(), outgoing[next][sent[next]]);
    Fill(self, next, sent[next], payload);
    StatusOr<SendResult> result = channel.Send(next, payload);
    if (!result.ok()) return voice.Fail(result.status().ToString());
    if (*result == SendResult::kFull) {
      ++full;
      break;
    }
    ++sent[next];
  }
  const auto give_up = Clock::now() + kTrafficLimit;
  auto done = [&] {
    for (Rank p = 0; p < n; ++p) {
      if (p != self && (sent[p] < outgoing[p].size() || arrived[p] < plan[p].size())) {
        return false;
      }
    }
    return channel.Idle();
  };
  while (!done()) {
    if (Clock::now() > give_up) {
      std::string counts;
      for (Rank p = 0; p < n; ++p) {
        if (p == self) continue;
        counts += " rank " + std::to_string(p) + ": sent " + std::to_string(sent[p]) + "/" +
                  std::to_string(outgoing[p].size()) + " received " + std::to_string(arrived[p]) +
                  "/" + std::to_string(plan[p].size()) + ";";
      }
      return voice.Fail("traffic incomplete after " + std::to_string(kTrafficLimit.count()) +
                        " s:" + counts);
    }
    bool sent_any = false;
    for (Rank d = 0; d < n; ++d) {
      if (d == self || sent[d] == outgoing[d].size()) continue;
      const std::span<std::byte> payload(message.data(), outgoing[d][sent[d]]);
      Fill(self, d, sent[d], payload);
      StatusOr<SendResult> result = channel.Send(d, payload);
      if (!result.ok()) return voice.Fail(result.status().ToString());
      if (*result == SendResult::kFull) {
        ++full;
      } else {
        ++sent[d];
        sent_any = true;
      }
    }
    StatusOr<int> polled = channel.Progress();
    if (!polled.ok()) return voice.Fail(polled.status().ToString());
    if (blocking && !sent_any && *polled == 0 && !done()) {
      // Nothing moved: sleep until a completion comes instead of spinning.
      StatusOr<bool> woken = channel.WaitForCompletion(100);
      if (!woken.ok()) return voice.Fail(woken.status().ToString());
    }
    if (!wrong.empty()) return voice.Fail(wrong);
    for (Rank p = 0; p < n; ++p) {
      if (failures[p].calls > 0)
        return voice.Fail("rank " + std::to_string(p) + " failed: " + failures[p].status);
    }
  }

  std::string listed;
  for (size_t s : sizes) listed += (listed.empty() ? "" : ", ") + std::to_string(s);
  voice.Say("sizes ok (" + listed + " bytes to and from each of " + std::to_string(n - 1) +
            " peers, checksums match)");
  uint64_t inline_expected = 0, inline_sent = 0;
  for (Rank d = 0; d < n; ++d) {
    if (d == self) continue;
    for (size_t s : outgoing[d]) inline_expected += channel.inline_capable() && s <= limit;
    inline_sent += channel.stats(d).sent_inline;
  }
  if (inline_sent != inline_expected) {
    return voice.Fail("inline: " + std::to_string(inline_sent) +
                      " messages went inline, expected " + std::to_string(inline_expected));
  }
  voice.Say("inline ok (" + std::to_string(inline_sent) + " messages of at most " +
            std::to_string(limit) + " bytes inline, larger ones from registered slots)");
  const EagerChannel::PeerStats& to_next = channel.stats(next);
  if (to_next.max_in_flight > channel.credits() || to_next.queued == 0) {
    return voice.Fail("burst to rank " + std::to_string(next) + ": at most " +
                      std::to_string(to_next.max_in_flight) + " in flight for a window of " +
                      std::to_string(channel.credits()) + ", " + std::to_string(to_next.queued) +
                      " sends queued");
  }
  voice.Say("burst ok (" + std::to_string(burst) + " messages to rank " + std::to_string(next) +
            ": " + std::to_string(to_next.queued) + " queued, " + std::to_string(full) +
            " offered again, at most " + std::to_string(to_next.max_in_flight) + " of " +
            std::to_string(channel.credits()) + " credits in flight; rank " + std::to_string(prev) +
            "'s " + std::to_string(plan[prev].size()) + " arrived in order)");
  const uint64_t credit_messages = channel.stats(prev).credit_messages;
  if (credit_messages == 0) {
    return voice.Fail("credits: no explicit credit message to rank " + std::to_string(prev));
  }
  voice.Say("credits ok (" + std::to_string(credit_messages) +
            " explicit credit messages to rank " + std::to_string(prev) +
            " while it sent its burst)");
  if (Status s = CheckWrites(boot, channel, *remote, **opened); !s.ok())
    return voice.Fail(s.message());
  if (blocking) {
    // Asleep, not spinning: a wait that nothing ends costs next to no CPU. The others may still
    // send a late credit message, which ends a wait early: up to 10 tries for a quiet one.
    double cpu_ms = -1;
    for (int attempt = 0; attempt < 10 && cpu_ms < 0; ++attempt) {
      const double before = ThreadCpuMs();
      StatusOr<bool> woken = channel.WaitForCompletion(300);
      if (!woken.ok()) return voice.Fail(woken.status().ToString());
      if (!*woken) cpu_ms = ThreadCpuMs() - before;
    }
    if (cpu_ms < 0) return voice.Fail("blocking: no quiet 300 ms wait in 10 tries");
    if (cpu_ms > 20) {
      return voice.Fail("blocking: an idle 300 ms wait used " + std::to_string(cpu_ms) +
                        " ms of CPU");
    }
    // And woken by a message: rank 0 sends one to every other rank, which waits for it with no
    // time limit short of the check's. Whether it is asleep when the message comes or not (the
    // wait polls once after arming), the message must end the wait and arrive.
    if (Status s = boot.Fence(false); !s.ok()) return voice.Fail("fence: " + s.ToString());
    if (self == 0) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      for (Rank d = 1; d < n; ++d) {
        const std::span<std::byte> payload(message.data(), 8);
        Fill(self, d, sent[d], payload);
        StatusOr<SendResult> result = channel.Send(d, payload);
        if (!result.ok() || *result == SendResult::kFull) {
          return voice.Fail("wake-up message to rank " + std::to_string(d) + " not taken");
        }
        ++sent[d];
      }
    } else {
      plan[0].push_back(8);
      const auto limit = Clock::now() + std::chrono::seconds(20);
      while (arrived[0] < plan[0].size()) {
        if (Clock::now() > limit)
          return voice.Fail("blocking: rank 0's message never woke this rank");
        StatusOr<bool> woken = channel.WaitForCompletion(1000);
        if (!woken.ok()) return voice.Fail(woken.status().ToString());
        StatusOr<int> polled = channel.Progress();
        if (!polled.ok()) return voice.Fail(polled.status().ToString());
      }
      if (!wrong.empty()) return voice.Fail(wrong);
    }
    // Nobody goes on (rank 0 could end, and its QPs with it) before every message arrived.
    if (Status s = boot.Fence(false); !s.ok()) return voice.Fail("fence: " + s.ToString());
    char used[32];
    std::snprintf(used, sizeof(used), "%.2f", cpu_ms);
    voice.Say(std::string("blocking ok (an idle 300 ms wait used ") + used + " ms of CPU; " +
              (self == 0 ? "sent the wake-up messages" : "woken by rank 0's message") + "; " +
              std::to_string(channel.wakeups()) + " wakeups in all)");
  }
  if (!kill_last) return 0;

  // The last rank dies the hard way: no goodbye, the kernel tears its QPs down.
  const Rank victim = n - 1;
  if (Status s = boot.Fence(false); !s.ok()) return voice.Fail("fence: " + s.ToString());
  if (self == victim) {
    voice.Say("raising SIGKILL");
    raise(SIGKILL);
  }
  if (self != 0) return 0;
  // Only once the launcher says so: a send while the victim still lives would succeed.
  const auto no_word = Clock::now() + std::chrono::seconds(20);
  while (!boot.DeadRanks().Contains(victim)) {
    if (Clock::now() > no_word) {
      return voice.Fail("no termination event for rank " + std::to_string(victim) + " in 20 s");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  Fill(self, victim, 0, std::span<std::byte>(message.data(), 8));
  const auto start = Clock::now();
  StatusOr<SendResult> result = channel.Send(victim, std::span<std::byte>(message.data(), 8));
  if (!result.ok()) return voice.Fail("send to dead rank: " + result.status().ToString());
  while (failures[victim].calls == 0) {
    if (Clock::now() > start + std::chrono::seconds(30)) {
      return voice.Fail("no failure callback for dead rank " + std::to_string(victim) + " in 30 s");
    }
    StatusOr<int> polled = channel.Progress();
    if (!polled.ok()) return voice.Fail(polled.status().ToString());
  }
  const auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(failures[victim].when - start).count();
  voice.Say("dead peer " + std::to_string(victim) + " -> " + failures[victim].status + " after " +
            std::to_string(ms) + " ms");
  // Whatever else completes for it (flushes) must not report it again, and sends are refused.
  const auto settle = Clock::now() + std::chrono::milliseconds(200);
  while (Clock::now() < settle) {
    StatusOr<int> polled = channel.Progress();
    if (!polled.ok()) return voice.Fail(polled.status().ToString());
  }
  StatusOr<SendResult> refused = channel.Send(victim, std::span<std::byte>(message.data(), 8));
  if (refused.ok() || failures[victim].calls != 1) {
    return voice.Fail("after the failure: " + std::to_string(failures[victim].calls) +
                      " callbacks, send " + (refused.ok() ? "accepted" : "refused"));
  }
  voice.Say("failure ok (reported once; then " + refused.status().ToString() + ")");
  return 0;
}

}  // namespace
}  // namespace rft::verbs

int main(int argc, char** argv) { return rft::verbs::Run(argc, argv); }
