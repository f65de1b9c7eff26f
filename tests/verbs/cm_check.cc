// verbs cm: two processes started by hand, not by a PMIx launcher, connect the eager channel's
// QPs by IP address through the RDMA connection manager (cm_exchange.h), on a real device (a
// soft-RoCE guest, or two: docs/verbs.md, "Connecting by IP address"):
//
//   cm_check --listen [HOST:]PORT [--messages N] [RFT_NET_DEVICE value]
//   cm_check --connect HOST:PORT [--messages N] [RFT_NET_DEVICE value]
//
// The connecting side sends N messages of sizes from 0 bytes to a full slot (the last one full,
// so that its SEND is signaled), each filled with a pattern of its index; the listener checks
// each and sends it back, and the connecting side checks the echo. Each prints
// "verbs cm: <role>: N messages ok ..." and exits 0; 1 when a step failed, naming it; 77
// without an RDMA device.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/config.h"
#include "tests/verbs/device_check.h"
#include "transport/verbs/cm_exchange.h"
#include "transport/verbs/eager_channel.h"
#include "transport/verbs/qp_address.h"
#include "transport/verbs/verbs_context.h"

namespace rft::verbs {
namespace {

constexpr auto kLimit = std::chrono::seconds(120);  // generous: an emulated guest stalls

CheckVoice voice("cm");

std::byte Pattern(uint32_t index, size_t i) {
  return std::byte(static_cast<uint8_t>(index * 29 + i * 7 + 1));
}

// Message i's size: every size class of the channel in turn, the last one a full slot.
size_t SizeOf(uint32_t index, uint32_t count, const EagerChannel& channel) {
  const size_t inline_max = channel.max_inline_payload();
  const size_t sizes[] = {0, 1, inline_max, inline_max + 1, 1000, channel.max_payload()};
  if (index + 1 == count) return channel.max_payload();
  return sizes[index % std::size(sizes)];
}

bool Matches(std::span<const std::byte> message, uint32_t index, size_t size) {
  if (message.size() != size) return false;
  for (size_t i = 0; i < size; ++i) {
    if (message[i] != Pattern(index, i)) return false;
  }
  return true;
}

int Run(int argc, char** argv) {
  std::string where, device;
  bool listen = false;
  long messages = 200;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if ((arg == "--listen" || arg == "--connect") && i + 1 < argc) {
      listen = arg == "--listen";
      where = argv[++i];
    } else if (arg == "--messages" && i + 1 < argc) {
      messages = std::strtol(argv[++i], nullptr, 10);
    } else if (arg[0] != '-' && device.empty()) {
      device = arg;
    } else {
      return voice.Fail("unknown argument \"" + arg +
                        "\"; usage: cm_check --listen [HOST:]PORT | " +
                        "--connect HOST:PORT [--messages N] [device[:port]]");
    }
  }
  voice.set_speaker(listen ? "listener" : "connecting side");
  if (where.empty() || messages < 1)
    return voice.Fail("--listen or --connect, and --messages >= 1");
  StatusOr<CmPeer> peer = ParseCmPeer(where, listen);
  if (!peer.ok()) return voice.Fail(peer.status().message());
  if (device.empty()) {
    StatusOr<std::string> setting = config::GetString("RFT_NET_DEVICE");
    if (!setting.ok()) return voice.Fail(setting.status().message());
    device = *setting;
  }
  const std::variant<Endpoint, int> port = ChoosePort(voice, device);
  if (const int* status = std::get_if<int>(&port)) return *status;
  const Endpoint* endpoint = &std::get<Endpoint>(port);
  StatusOr<std::unique_ptr<VerbsContext>> context = VerbsContext::Open(*endpoint, 4096);
  if (!context.ok()) return voice.Fail(context.status().message());

  // Two ranks: the listener is 0. What arrives is kept and handled outside the channel's
  // Progress, which delivers it.
  const Rank self = listen ? 0 : 1;
  const Rank other = 1 - self;
  std::deque<std::vector<std::byte>> arrived;
  std::string failure;
  EagerConfig config;
  config.timing.retry_cnt = 7;  // a loss in an emulated guest is retried, as perftest does
  auto created = EagerChannel::Create(
      **context, self, 2, config,
      [&](Rank, std::span<const std::byte> message) {
        arrived.emplace_back(message.begin(), message.end());
      },
      [&](Rank, std::string_view status) { failure = std::string(status); });
  if (!created.ok()) return voice.Fail(created.status().message());
  EagerChannel& channel = **created;

  const Deadline deadline = Deadline::After(kLimit);
  // The listener connects first and waits for the greeting; the connecting side, whose QP
  // connects second, greets.
  const auto handshake =
      listen ? EagerChannel::Handshake::kAwaitGreeting : EagerChannel::Handshake::kGreet;
  QpAddress theirs;
  Status exchanged = ExchangeByCm(
      *peer, endpoint->device, channel.address(other),
      [&](const QpAddress& address) {
        theirs = address;
        return channel.Connect(other, address, handshake);
      },
      deadline);
  if (!exchanged.ok()) return voice.Fail(exchanged.ToString());

  auto next = [&]() -> StatusOr<std::vector<std::byte>> {
    while (arrived.empty()) {
      StatusOr<int> progressed = channel.Progress();
      if (!progressed.ok()) return progressed.status();
      if (!failure.empty()) return OtherError("the peer's QP failed: " + failure);
      if (deadline.expired()) return TimeoutError("no message before the deadline");
    }
    std::vector<std::byte> message = std::move(arrived.front());
    arrived.pop_front();
    return message;
  };
  const uint32_t count = static_cast<uint32_t>(messages);
  std::vector<std::byte> outgoing(channel.max_payload());
  for (uint32_t index = 0; index < count; ++index) {
    const size_t size = SizeOf(index, count, channel);
    if (!listen) {
      for (size_t i = 0; i < size; ++i) outgoing[i] = Pattern(index, i);
      StatusOr<SendResult> sent = channel.Send(other, std::span(outgoing).first(size));
      if (!sent.ok())
        return voice.Fail("message " + std::to_string(index) + ": " + sent.status().message());
    }
    StatusOr<std::vector<std::byte>> got = next();
    if (!got.ok())
      return voice.Fail("message " + std::to_string(index) + ": " + got.status().message());
    if (!Matches(*got, index, size)) {
      return voice.Fail("message " + std::to_string(index) + ": " + std::to_string(got->size()) +
                        " bytes that are not the " + std::to_string(size) + " sent");
    }
    if (listen) {
      StatusOr<SendResult> echoed = channel.Send(other, *got);
      if (!echoed.ok())
        return voice.Fail("echo " + std::to_string(index) + ": " + echoed.status().message());
    }
  }
  // The last echo is a full slot's SEND, signaled: once it completed, the connecting side has it
  // and this QP may go.
  while (listen && channel.awaiting(other)) {
    StatusOr<int> progressed = channel.Progress();
    if (!progressed.ok()) return voice.Fail(progressed.status().message());
    if (deadline.expired()) return voice.Fail("the last echo did not complete before the deadline");
  }
  voice.Say(std::to_string(count) + " messages ok over " + endpoint->device +
            " with the peer's QP " + std::to_string(theirs.qpn));
  return 0;
}

}  // namespace
}  // namespace rft::verbs

int main(int argc, char** argv) { return rft::verbs::Run(argc, argv); }
