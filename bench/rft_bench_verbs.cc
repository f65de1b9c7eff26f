// rft_bench_verbs: latency and bandwidth of the verbs backend's eager channel
// (transport/verbs/eager_channel.h) between the two ranks of a job, on a real RDMA device.
//
//   rftrun -n 2 rft_bench_verbs [--sizes 8,64] [--iters N] [--warmup N] [--reps R] [--window W]
//                               [--json] [RFT_NET_DEVICE value, e.g. rxe0:1]
//   rft_bench_verbs --listen [HOST:]PORT [options]     (on one host, started by hand)
//   rft_bench_verbs --connect HOST:PORT [options]      (on the other)
//
// With --listen and --connect there is no PMIx job: the two processes exchange their QP
// addresses by IP through the RDMA connection manager (transport/verbs/cm_exchange.h), as
// perftest's -R does, and the listener is rank 0, which prints the figures.
// Latency: ping-pong, rank 0 sends and rank 1 answers with as many bytes; one-way = round trip
// / 2, one clock read per iteration. Each rep gives a p50 and a p99 over its iterations; the
// figure printed is the median of the reps' (an emulated guest stalls now and then, and one bad
// rep must not decide the figure). Sizes default to 8, 64, 256, 1024, 4096 and the largest
// payload a slot holds.
// Bandwidth: rank 0 streams full-slot messages as fast as the channel takes them, W per window
// (64 by default); rank 1 answers each window with 8 bytes. MB/s of payload, median of reps.
// Without an argument the port comes from the RFT_NET_DEVICE setting, else the nearest usable one.
// Exits 77 without an RDMA device. bench/verbs_compare.sh runs it beside ib_send_lat.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/config.h"
#include "bench/round_trip_clock.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/verbs/cm_exchange.h"
#include "transport/verbs/device.h"
#include "transport/verbs/eager_channel.h"
#include "transport/verbs/qp_address.h"
#include "transport/verbs/verbs_context.h"

namespace rft::verbs {
namespace {

using transport::Bootstrap;

constexpr char kKey[] = "rft.verbs.bench";
constexpr int64_t kStallNanos = 60'000'000'000;  // an emulated guest pauses, but not this long

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "rft_bench_verbs: %s\n", what.c_str());
  std::exit(1);
}

void Check(const Status& status, const char* what) {
  if (!status.ok()) Die(std::string(what) + ": " + status.ToString());
}

struct Options {
  std::vector<size_t> sizes;  // empty: the defaults, which need the channel's max_payload()
  long iters = 2000;
  long warmup = -1;  // -1: a tenth of iters
  int reps = 3;
  int window = 64;
  bool json = false;
  std::string device;
  std::optional<CmPeer> by_ip;  // --listen or --connect: no PMIx job
};

bool ParseCount(const char* text, long low, long high, long* out) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < low || value > high) return false;
  *out = value;
  return true;
}

bool ParseSizes(const char* text, std::vector<size_t>* sizes) {
  sizes->clear();
  const char* s = text;
  while (*s != '\0') {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(s, &end, 10);
    if (end == s || (*end != ',' && *end != '\0')) return false;
    sizes->push_back(value);
    s = *end == ',' ? end + 1 : end;
  }
  return !sizes->empty();
}

int Usage(const char* argv0) {
  std::fprintf(stderr,
               "usage: rftrun -n 2 %s [--sizes 8,64] [--iters N] [--warmup N] [--reps R] "
               "[--window W] [--json] [RFT_NET_DEVICE value]\n"
               "   or: %s --listen [HOST:]PORT | --connect HOST:PORT [the same options]\n",
               argv0, argv0);
  return 2;
}

// Returns 0 when the options are good, else the exit status.
int Parse(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    long value = 0;
    if (arg == "--json") {
      options->json = true;
    } else if (arg == "--iters" && has_value && ParseCount(argv[i + 1], 1, 100'000'000, &value)) {
      options->iters = value;
      ++i;
    } else if (arg == "--warmup" && has_value && ParseCount(argv[i + 1], 0, 100'000'000, &value)) {
      options->warmup = value;
      ++i;
    } else if (arg == "--reps" && has_value && ParseCount(argv[i + 1], 1, 1000, &value)) {
      options->reps = static_cast<int>(value);
      ++i;
    } else if (arg == "--window" && has_value && ParseCount(argv[i + 1], 1, 65536, &value)) {
      options->window = static_cast<int>(value);
      ++i;
    } else if (arg == "--sizes" && has_value && ParseSizes(argv[i + 1], &options->sizes)) {
      ++i;
    } else if ((arg == "--listen" || arg == "--connect") && has_value && !options->by_ip) {
      StatusOr<CmPeer> peer = ParseCmPeer(argv[++i], arg == "--listen");
      if (!peer.ok()) {
        std::fprintf(stderr, "rft_bench_verbs: %s: %s\n", arg.c_str(),
                     peer.status().message().c_str());
        return 2;
      }
      options->by_ip = *peer;
    } else if (arg.starts_with("-") || !options->device.empty()) {
      return Usage(argv[0]);
    } else {
      options->device = arg;
    }
  }
  if (options->warmup < 0) options->warmup = options->iters / 10;
  return 0;
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Nanoseconds at percentile p of `samples` (reordered).
int64_t Percentile(std::vector<int64_t>& samples, double p) {
  const size_t at = std::min(samples.size() - 1, static_cast<size_t>(p / 100 * samples.size()));
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(at),
                   samples.end());
  return samples[at];
}

// The two ranks' ends of the benchmark. Everything the timed loops touch is allocated before
// them: the channel's slots, the payload buffer and the sample vector.
class Bench {
 public:
  Bench(EagerChannel* channel, Rank peer) : channel_(channel), peer_(peer) {}

  void OnMessage(std::span<const std::byte> payload) {
    if (++arrived_ == watched_) watched_size_ = payload.size();
  }
  // Keeps the size of the message that will be the `index`th to arrive. Not simply the last
  // one's: the peer's next message (a barrier's) may come in the same poll.
  void WatchSizeOf(uint64_t index) {
    watched_ = index;
    watched_size_ = 0;
  }
  void OnFailure(std::string_view status) { failed_ = status; }

  // Until `count` messages have arrived in all. The clock is read only every 64Ki polls, so
  // the stall check costs the latency nothing.
  void AwaitArrivals(uint64_t count) {
    uint64_t spins = 0;
    int64_t deadline = 0;
    while (arrived_ < count) {
      Poll();
      if (++spins % 65536 != 0) continue;
      const int64_t now = MonotonicNanos();
      if (deadline == 0) {
        deadline = now + kStallNanos;
      } else if (now > deadline) {
        Die("no message from rank " + std::to_string(peer_) + " for 60 s (" +
            std::to_string(arrived_) + " of " + std::to_string(count) + " arrived)");
      }
    }
  }

  // Offers the message until the channel keeps it: kFull frees up only as completions are
  // polled.
  void SendOne(std::span<const std::byte> payload) {
    for (;;) {
      StatusOr<SendResult> result = channel_->Send(peer_, payload);
      if (!result.ok()) Die("send: " + result.status().ToString());
      if (*result != SendResult::kFull) return;
      Poll();
    }
  }

  void Poll() {
    StatusOr<int> polled = channel_->Progress();
    if (!polled.ok()) Die("progress: " + polled.status().ToString());
    if (!failed_.empty()) Die("rank " + std::to_string(peer_) + "'s QP failed: " + failed_);
  }

  // Every send completed and every credit returned, so that neither side tears its QP down
  // under the other's traffic.
  void Drain() {
    while (!channel_->Idle()) Poll();
  }

  uint64_t arrived() const { return arrived_; }
  size_t watched_size() const { return watched_size_; }

 private:
  EagerChannel* channel_;
  const Rank peer_;
  uint64_t arrived_ = 0;
  uint64_t watched_ = 0;
  size_t watched_size_ = 0;
  std::string failed_;
};

int Run(int argc, char** argv) {
  Options options;
  if (int status = Parse(argc, argv, &options); status != 0) return status;
  if (options.device.empty()) {
    StatusOr<std::string> setting = config::GetString("RFT_NET_DEVICE");
    if (!setting.ok()) Die(setting.status().message());
    options.device = *std::move(setting);
  }
  // Before PMIx: a host without RDMA is a skip, whoever launched us.
  StatusOr<std::vector<VerbsDevice>> devices = ListDevices();
  if (!devices.ok()) Die(devices.status().message());
  if (devices->empty()) {
    std::printf("rft_bench_verbs: no RDMA device on this host (skipped)\n");
    return 77;
  }
  StatusOr<Endpoint> endpoint = SelectPort(*devices, options.device);
  if (!endpoint.ok()) Die(endpoint.status().message());

  // A PMIx job of two ranks, or two processes that connect by IP address (no bootstrap).
  std::unique_ptr<Bootstrap> boot;
  if (!options.by_ip) {
    StatusOr<std::unique_ptr<Bootstrap>> job = Bootstrap::Init();
    Check(job.status(), "bootstrap");
    boot = std::move(*job);
    if (boot->size() != 2) {
      std::fprintf(stderr, "rft_bench_verbs needs exactly 2 ranks (got %u)\n", boot->size());
      return 2;
    }
  }
  const Rank self = boot != nullptr ? boot->rank() : (options.by_ip->listen ? 0 : 1);
  const Rank peer = 1 - self;
  const bool leader = self == 0;

  StatusOr<std::unique_ptr<VerbsContext>> opened = VerbsContext::Open(*endpoint, 4096);
  if (!opened.ok()) Die(opened.status().message());
  EagerConfig config;
  // As perftest does: a loss in an emulated guest is retried, not a failed run.
  config.timing.retry_cnt = 7;
  Bench* bench = nullptr;
  StatusOr<std::unique_ptr<EagerChannel>> created = EagerChannel::Create(
      **opened, self, 2, config,
      [&bench](Rank, std::span<const std::byte> payload) { bench->OnMessage(payload); },
      [&bench](Rank, std::string_view status) { bench->OnFailure(status); });
  if (!created.ok()) Die(created.status().message());
  EagerChannel& channel = **created;
  Bench state(&channel, peer);
  bench = &state;

  if (boot != nullptr) {
    // Each rank publishes a table of its one QP; with two ranks there is nothing to index.
    const std::vector<std::byte> mine = EncodeSingleQpAddress(channel.address(peer));
    StatusOr<std::vector<std::vector<std::byte>>> all = boot->Exchange(kKey, mine);
    Check(all.status(), "exchange");
    StatusOr<QpAddress> theirs = DecodeSingleQpAddress((*all)[peer]);
    if (!theirs.ok()) {
      Die("rank " + std::to_string(peer) + "'s record: " + theirs.status().message());
    }
    Check(channel.Connect(peer, *theirs), "connect");
  } else {
    // The listener's QP connects first and waits for the other's greeting, which comes once
    // that one's QP connected too: no SEND reaches a QP that cannot receive it.
    const auto handshake =
        leader ? EagerChannel::Handshake::kAwaitGreeting : EagerChannel::Handshake::kGreet;
    Check(ExchangeByCm(
              *options.by_ip, endpoint->device, channel.address(peer),
              [&](const QpAddress& theirs) { return channel.Connect(peer, theirs, handshake); },
              Deadline::After(std::chrono::seconds(120))),
          "connection manager");
  }

  const size_t largest = channel.max_payload();
  std::vector<size_t> sizes = options.sizes;
  if (sizes.empty()) sizes = {8, 64, 256, 1024, 4096, largest};
  for (size_t size : sizes) {
    if (size > largest) {
      Die("--sizes: " + std::to_string(size) + " bytes do not fit a slot (at most " +
          std::to_string(largest) + ")");
    }
  }
  std::vector<std::byte> payload(largest, std::byte{0x5a});
  uint64_t expected = 0;  // messages from the peer so far
  // Both ranks get here before either goes on. Without a job, a message each way: the last
  // one a full slot, whose SEND is signaled, so that once Drain saw it complete the peer has it.
  auto barrier = [&](bool last) {
    if (boot != nullptr) return Check(boot->Fence(false), "fence");
    state.SendOne(std::span<const std::byte>(payload.data(), last ? largest : 0));
    state.AwaitArrivals(++expected);
  };
  barrier(false);  // no SEND before the peer's QP can receive
  std::vector<int64_t> samples(static_cast<size_t>(options.iters));
  if (leader && !options.json) {
    std::printf(
        "# rft_bench_verbs: eager channel on %s port %u (n=2, slots of %zu bytes, window %u, "
        "inline up to %zu bytes), median of %d reps of %ld iters (+%ld warmup)\n",
        endpoint->device.c_str(), static_cast<unsigned>(endpoint->port), config.slot_size,
        channel.credits(), channel.max_inline_payload(), options.reps, options.iters,
        options.warmup);
    std::printf("%10s %8s %10s %10s %10s   %s\n", "size", "inline", "iters", "p50_us", "p99_us",
                "p50 of each rep");
    std::fflush(stdout);
  }

  for (size_t size : sizes) {
    const std::span<const std::byte> message(payload.data(), size);
    std::vector<double> p50s, p99s;
    for (int rep = 0; rep < options.reps; ++rep) {
      const long total = options.warmup + options.iters;
      if (leader) {
        state.WatchSizeOf(expected + static_cast<uint64_t>(total));
        const bench::RoundTripClock clock;
        int64_t last = clock.start();
        for (long i = 0; i < total; ++i) {
          state.SendOne(message);
          state.AwaitArrivals(++expected);
          const int64_t now = bench::RoundTripClock::Ticks();
          if (i >= options.warmup) samples[static_cast<size_t>(i - options.warmup)] = now - last;
          last = now;
        }
        const double ns_per_tick = clock.NanosPerTick(last, "rft_bench_verbs");
        if (state.watched_size() != size) {
          Die("rank 1 answered " + std::to_string(state.watched_size()) + " bytes to " +
              std::to_string(size));
        }
        p50s.push_back(static_cast<double>(Percentile(samples, 50)) * ns_per_tick / 2e3);
        p99s.push_back(static_cast<double>(Percentile(samples, 99)) * ns_per_tick / 2e3);
      } else {
        for (long i = 0; i < total; ++i) {
          state.AwaitArrivals(++expected);
          state.SendOne(message);
        }
      }
    }
    if (!leader) continue;
    const bool inline_send = size <= channel.max_inline_payload();
    const double p50 = Median(p50s), p99 = Median(p99s);
    if (options.json) {
      std::printf(
          "{\"bench\":\"p2p_latency\",\"transport\":\"verbs\",\"n\":2,\"size\":%zu,"
          "\"inline\":%s,\"iters\":%ld,\"reps\":%d,\"p50_us\":%.3f,\"p99_us\":%.3f,"
          "\"rep_p50_us\":[",
          size, inline_send ? "true" : "false", options.iters, options.reps, p50, p99);
      for (size_t r = 0; r < p50s.size(); ++r) std::printf("%s%.3f", r == 0 ? "" : ",", p50s[r]);
      std::printf("]}\n");
    } else {
      std::printf("%10zu %8s %10ld %10.3f %10.3f  ", size, inline_send ? "yes" : "no",
                  options.iters, p50, p99);
      for (double v : p50s) std::printf(" %.3f", v);
      std::printf("\n");
    }
    std::fflush(stdout);
  }

  // Streaming: a window of full slots, then rank 1's 8-byte answer, so the sender measures
  // what actually arrived. The credit window (not W) bounds what is in flight; W only sets how
  // often the stream pauses for the answer.
  const long windows = std::max<long>(4, options.iters / options.window);
  const std::span<const std::byte> full(payload.data(), largest);
  const std::span<const std::byte> ack(payload.data(), 8);
  std::vector<double> rates;
  for (int rep = 0; rep < options.reps; ++rep) {
    barrier(false);  // both sides start together
    const int64_t start = MonotonicNanos();
    for (long w = 0; w < windows; ++w) {
      if (leader) {
        for (int k = 0; k < options.window; ++k) state.SendOne(full);
        state.AwaitArrivals(++expected);
      } else {
        expected += static_cast<uint64_t>(options.window);
        state.AwaitArrivals(expected);
        state.SendOne(ack);
      }
    }
    const double seconds = static_cast<double>(MonotonicNanos() - start) / 1e9;
    rates.push_back(static_cast<double>(largest) * options.window * windows / seconds / 1e6);
  }
  if (leader) {
    const double mb_s = Median(rates);
    if (options.json) {
      std::printf(
          "{\"bench\":\"p2p_bandwidth\",\"transport\":\"verbs\",\"n\":2,\"size\":%zu,"
          "\"window\":%d,\"iters\":%ld,\"reps\":%d,\"mb_s\":%.1f}\n",
          largest, options.window, windows * options.window, options.reps, mb_s);
    } else {
      std::printf("# bandwidth: %zu-byte messages, %ld windows of %d: %.1f MB/s (reps:", largest,
                  windows, options.window, mb_s);
      for (double v : rates) std::printf(" %.1f", v);
      std::printf(")\n");
    }
    std::fflush(stdout);
  }
  state.Drain();
  barrier(true);  // nobody tears down while the other still sends
  state.Drain();
  return 0;
}

}  // namespace
}  // namespace rft::verbs

int main(int argc, char** argv) { return rft::verbs::Run(argc, argv); }
