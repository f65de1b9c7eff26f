// verbs async: proves on a real device (a soft-RoCE guest, docs/verbs.md) that the device's
// asynchronous events reach the eager channel. The link under the port is taken down and
// brought back (`ip link set NETDEV down|up`); the channel must count a port-down and then a
// port-up event, read without blocking through the context's async fd, and fail no peer for
// them (a link that comes back before the QPs' retries run out loses nobody).
// Prints one line per step; exits 0 when all pass, 1 when one fails, 77 without an RDMA device.
//
//   async_check NETDEV [RFT_NET_DEVICE value, e.g. rxe0:1]
#include <poll.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "tests/verbs/device_check.h"
#include "transport/verbs/eager_channel.h"
#include "transport/verbs/verbs_context.h"

namespace rft::verbs {
namespace {

constexpr auto kLimit = std::chrono::seconds(20);

CheckVoice voice("async");

// Waits on the async fd until `done` holds, reading events as they come; the milliseconds it
// took, or -1 after kLimit.
template <typename Done>
long WaitForEvents(VerbsContext& context, EagerChannel& channel, Done done) {
  const auto start = std::chrono::steady_clock::now();
  while (!done()) {
    const auto waited = std::chrono::steady_clock::now() - start;
    if (waited > kLimit) return -1;
    pollfd fd{.fd = context.async_fd(), .events = POLLIN, .revents = 0};
    poll(&fd, 1, 100);
    channel.PollAsyncEvents();
  }
  return static_cast<long>(std::chrono::duration_cast<std::chrono::milliseconds>(
                               std::chrono::steady_clock::now() - start)
                               .count());
}

int Run(int argc, char** argv) {
  if (argc < 2) return voice.Fail("usage: async_check NETDEV [RFT_NET_DEVICE value]");
  const std::string netdev = argv[1];
  const std::variant<Endpoint, int> port = ChoosePort(voice, argc > 2 ? argv[2] : "");
  if (const int* status = std::get_if<int>(&port)) return *status;
  const Endpoint* endpoint = &std::get<Endpoint>(port);
  StatusOr<std::unique_ptr<VerbsContext>> opened = VerbsContext::Open(*endpoint, 4096, 16);
  if (!opened.ok()) return voice.Fail(opened.status().message());
  VerbsContext& context = **opened;
  int failures = 0;
  StatusOr<std::unique_ptr<EagerChannel>> created = EagerChannel::Create(
      context, 0, 2, EagerConfig{}, [](Rank, std::span<const std::byte>) {},
      [&failures](Rank peer, std::string_view why) {
        ++failures;
        voice.Say("peer " + std::to_string(peer) + " failed: " + std::string(why));
      });
  if (!created.ok()) return voice.Fail(created.status().message());
  EagerChannel& channel = **created;
  voice.Say("using " + endpoint->device + " port " + std::to_string(endpoint->port) + " on " +
            netdev);
  if (channel.PollAsyncEvents() != 0) voice.Say("events were pending before the test (read)");

  if (std::system(("ip link set " + netdev + " down").c_str()) != 0) {
    return voice.Fail("ip link set " + netdev + " down failed");
  }
  const long down_ms =
      WaitForEvents(context, channel, [&] { return channel.device_stats().port_down > 0; });
  if (down_ms < 0)
    return voice.Fail("no port-down event within 20 s of taking " + netdev + " down");
  voice.Say("port down seen after " + std::to_string(down_ms) + " ms");

  if (std::system(("ip link set " + netdev + " up").c_str()) != 0) {
    return voice.Fail("ip link set " + netdev + " up failed");
  }
  const long up_ms =
      WaitForEvents(context, channel, [&] { return channel.device_stats().port_up > 0; });
  if (up_ms < 0) return voice.Fail("no port-up event within 20 s of bringing " + netdev + " up");
  voice.Say("port up seen after " + std::to_string(up_ms) + " ms");

  if (failures != 0 || channel.failed(1)) return voice.Fail("a port event failed a peer");
  voice.Say("port events ok (down " + std::to_string(channel.device_stats().port_down) + ", up " +
            std::to_string(channel.device_stats().port_up) + ", other " +
            std::to_string(channel.device_stats().other) + "; no peer failed)");
  return 0;
}

}  // namespace
}  // namespace rft::verbs

int main(int argc, char** argv) { return rft::verbs::Run(argc, argv); }
