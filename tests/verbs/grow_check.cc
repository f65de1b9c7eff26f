// verbs grow: an eager channel (eager_channel.h) that grows for a rank joining after the job's
// QPs were connected, on a real device (a soft-RoCE guest, docs/verbs.md "Replacements"). Run
// under a PMIx launcher:
//
//   rftrun -n 3 grow_check [RFT_NET_DEVICE value]
//
// Ranks 0 and 1 play survivors of a job of 3 whose rank 2 failed; process 2 plays the
// replacement, job rank 3 of 4. Every step waits on the check's own fences:
// 1. The survivors create channels for 3 ranks and connect to each other; the replacement one
//    for 4. Each publishes its QP addresses.
// 2. Each survivor expects rank 2 (holding the last place in its receive queue), grows to 4,
//    and must be refused a QP for rank 3 with RFT_ERR_ARG naming the places. It then fails
//    rank 2, whose place rank 3 takes: connected, waiting for its greeting.
// 3. Before anything is connected, each side queues a window of messages for the other (Send
//    queues them; SendNow must say kFull). The bursts of 3 windows go on after step 4, and the
//    survivors send each other the same.
// 4. The survivors publish their QP's address for rank 3, which connects to each and greets.
// 5. Everything arrives, in order and intact; each survivor got one greeting from rank 3.
// Exits 0 when every step passed, 1 when one failed, 77 without an RDMA device.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/byte_order.h"
#include "tests/verbs/device_check.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/verbs/eager_channel.h"
#include "transport/verbs/qp_address.h"
#include "transport/verbs/verbs_context.h"

namespace rft::verbs {
namespace {

using transport::Bootstrap;
using Clock = std::chrono::steady_clock;

constexpr Rank kJoiner = 3;  // the replacement's rank in the grown job
constexpr auto kTrafficLimit = std::chrono::seconds(120);
constexpr uint32_t kBurstWindows = 3;

Rank self = 0;

CheckVoice voice("grow");

std::span<const std::byte> Bytes(const std::vector<std::byte>& v) { return v; }

Status Publish(Bootstrap& job, const std::string& key, const std::vector<std::byte>& value) {
  RFT_RETURN_IF_ERROR(job.Put(key, value));
  RFT_RETURN_IF_ERROR(job.Commit());
  return job.Fence(true);
}

// Entry `index` of the table `rank` published under `key`, made for `entries` ranks.
StatusOr<QpAddress> Entry(Bootstrap& job, Rank rank, const std::string& key, uint32_t entries,
                          uint32_t index) {
  StatusOr<std::vector<std::byte>> table = job.Get(rank, key);
  if (!table.ok()) return table.status();
  return DecodeQpAddressTable(*table, entries, index);
}

int Run(int argc, char** argv) {
  std::variant<JobCheckStart, int> check_start =
      StartJobCheck(voice, argc > 1 ? argv[1] : "", 3, 3);
  if (const int* status = std::get_if<int>(&check_start)) return *status;
  const Endpoint* endpoint = &std::get<JobCheckStart>(check_start).endpoint;
  Bootstrap& boot = *std::get<JobCheckStart>(check_start).job;
  const bool joiner = boot.rank() == 2;
  self = joiner ? kJoiner : boot.rank();
  voice.set_speaker("rank " + std::to_string(self));  // the joiner speaks as the rank it joins as
  StatusOr<std::unique_ptr<VerbsContext>> opened = VerbsContext::Open(*endpoint, 4096);
  if (!opened.ok()) return voice.Fail(opened.status().message());

  // Every message from `from` arrives in order and intact.
  ArrivalCheck arrivals(self, kJoiner + 1);
  std::vector<int> failures(kJoiner + 1, 0);
  auto on_message = [&](Rank from, std::span<const std::byte> payload) {
    arrivals.OnMessage(from, payload);
  };
  auto on_failure = [&](Rank peer, std::string_view) { ++failures[peer]; };
  StatusOr<std::unique_ptr<EagerChannel>> created =
      EagerChannel::Create(**opened, self, joiner ? 4 : 3, EagerConfig(), on_message, on_failure);
  if (!created.ok()) return voice.Fail(created.status().message());
  EagerChannel& channel = **created;
  const uint32_t burst = kBurstWindows * channel.credits();

  // Step 1: the tables of the first round.
  const std::string first = "rft.grow.first";
  const std::vector<std::byte> table =
      EncodeQpAddressTable(channel.size(), self, [&](uint32_t p) { return channel.address(p); });
  if (Status s = Publish(boot, first, table); !s.ok())
    return voice.Fail("publish: " + s.ToString());
  const Rank other = self == 0 ? 1 : 0;  // a survivor's fellow survivor
  std::vector<Rank> peers;               // those this process sends its burst to
  if (!joiner) {
    StatusOr<QpAddress> address = Entry(boot, other, first, 3, self);
    if (!address.ok())
      return voice.Fail("rank " + std::to_string(other) + ": " + address.status().message());
    if (Status s = channel.Connect(other, *address); !s.ok()) return voice.Fail(s.ToString());

    // Step 2: no place left while rank 2 holds it; its failure frees it for rank 3.
    if (Status s = channel.Expect(2); !s.ok())
      return voice.Fail("expecting rank 2: " + s.ToString());
    if (Status s = channel.Grow(4); !s.ok()) return voice.Fail("growing: " + s.ToString());
    StatusOr<QpAddress> joiner_address = Entry(boot, 2, first, 4, self);
    if (!joiner_address.ok()) return voice.Fail("rank 3: " + joiner_address.status().message());
    const Status refused =
        channel.Connect(kJoiner, *joiner_address, EagerChannel::Handshake::kAwaitGreeting);
    if (refused.code() != RFT_ERR_ARG ||
        refused.message().find("no place left") == std::string::npos) {
      return voice.Fail("connecting rank 3 with every place held: " + refused.ToString() +
                        ", expected RFT_ERR_ARG naming the places");
    }
    voice.Say("refused while full: " + refused.message());
    channel.Disconnect(2);
    if (failures[2] != 1)
      return voice.Fail("rank 2's failure was reported " + std::to_string(failures[2]) + " times");
    if (Status s =
            channel.Connect(kJoiner, *joiner_address, EagerChannel::Handshake::kAwaitGreeting);
        !s.ok()) {
      return voice.Fail("connecting rank 3 in rank 2's place: " + s.ToString());
    }
    if (channel.ready(kJoiner)) return voice.Fail("rank 3 is ready before its greeting");
    peers = {other, kJoiner};
  } else {
    channel.Disconnect(2);  // never connected: failed without touching the QP
    for (Rank p : {0u, 1u}) {
      if (Status s = channel.Expect(p); !s.ok())
        return voice.Fail("expecting rank " + std::to_string(p) + ": " + s.ToString());
    }
    peers = {0, 1};
  }

  // Step 3: queued before the other end is ready (the survivors' QPs to each other are
  // connected, but nobody sends before the next fence says every one is).
  const std::string second = "rft.grow.second";
  std::vector<uint32_t> sent(kJoiner + 1, 0);
  for (Rank p : peers) {
    if (p == other && !joiner) continue;  // after the fence
    const std::vector<std::byte> probe = NumberedMessage(self, p, 0);
    StatusOr<SendResult> now = channel.SendNow(p, Bytes(probe), {});
    if (!now.ok() || *now != SendResult::kFull) {
      return voice.Fail("SendNow to rank " + std::to_string(p) + " before it is ready: " +
                        (now.ok() ? "not kFull" : now.status().ToString()));
    }
    // One window: queued messages hold send slots, which the peers share.
    for (; sent[p] < channel.credits(); ++sent[p]) {
      StatusOr<SendResult> queued = channel.Send(p, Bytes(NumberedMessage(self, p, sent[p])));
      if (!queued.ok())
        return voice.Fail("queueing for rank " + std::to_string(p) + ": " +
                          queued.status().ToString());
      if (*queued != SendResult::kQueued)
        return voice.Fail("a send to a rank not ready was not queued");
    }
  }
  // Step 4: the survivors' addresses for rank 3.
  std::vector<std::byte> mine;
  if (!joiner) {
    mine = EncodeSingleQpAddress(channel.address(kJoiner));
  }
  if (Status s = Publish(boot, second, mine); !s.ok())
    return voice.Fail("publish: " + s.ToString());
  if (joiner) {
    for (Rank p : {0u, 1u}) {
      StatusOr<QpAddress> address = Entry(boot, p, second, 1, 0);
      if (!address.ok())
        return voice.Fail("rank " + std::to_string(p) + ": " + address.status().message());
      if (Status s = channel.Connect(p, *address, EagerChannel::Handshake::kGreet); !s.ok()) {
        return voice.Fail("connecting to rank " + std::to_string(p) + ": " + s.ToString());
      }
      if (!channel.ready(p))
        return voice.Fail("rank " + std::to_string(p) + " is not ready after the greeting went");
    }
  }

  // Step 5: the rest of the traffic, and everything arrives.
  const Clock::time_point deadline = Clock::now() + kTrafficLimit;
  auto done = [&] {
    for (Rank p : peers) {
      if (arrivals.arrived(p) < burst || sent[p] < burst) return false;
    }
    return channel.Idle();
  };
  while (!done()) {
    if (Clock::now() > deadline) return voice.Fail("traffic did not end within the limit");
    for (Rank p : peers) {
      while (sent[p] < burst) {
        StatusOr<SendResult> r = channel.Send(p, Bytes(NumberedMessage(self, p, sent[p])));
        if (!r.ok())
          return voice.Fail("send to rank " + std::to_string(p) + ": " + r.status().ToString());
        if (*r == SendResult::kFull) break;
        ++sent[p];
      }
    }
    StatusOr<int> progressed = channel.Progress();
    if (!progressed.ok()) return voice.Fail("progress: " + progressed.status().ToString());
    if (!arrivals.wrong().empty()) return voice.Fail(arrivals.wrong());
  }
  for (Rank p : peers) {
    if (arrivals.arrived(p) != burst)
      return voice.Fail("rank " + std::to_string(p) + " sent " +
                        std::to_string(arrivals.arrived(p)) + " messages, expected " +
                        std::to_string(burst));
    if (failures[p] != 0) return voice.Fail("rank " + std::to_string(p) + " was reported failed");
  }
  if (!joiner && channel.stats(kJoiner).greetings != 1) {
    return voice.Fail("rank 3 greeted " + std::to_string(channel.stats(kJoiner).greetings) +
                      " times");
  }
  voice.Say("grown ok: " + std::to_string(burst) + " messages each way with rank" +
            (joiner ? "s 0 and 1" : "s " + std::to_string(other) + " and 3"));
  // The others may still wait for credits this rank owes them.
  if (Status s = boot.Fence(false); !s.ok()) return voice.Fail("fence: " + s.ToString());
  return 0;
}

}  // namespace
}  // namespace rft::verbs

int main(int argc, char** argv) { return rft::verbs::Run(argc, argv); }
