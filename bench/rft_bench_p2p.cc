// rft_bench_p2p: point-to-point latency and bandwidth of rft's data plane between two ranks,
// OSU style.
//
//   rftrun -n 2 rft_bench_p2p [--sizes 8,1024,1048576] [--iters N] [--latency-only] [--json]
//
// Latency: ping-pong with blocking Send/Recv (what an application writes); one-way = round
// trip / 2, median and p99 over iterations (one clock read per iteration).
// Bandwidth: rank 0 streams windows of 64 Isends, rank 1 pre-posts 64 Irecvs per window and
// acknowledges each window with an 8-byte message. --latency-only skips it (a run whose every
// step but the ping-pong is the same, for bench/count_instructions.sh: how much the streaming
// queues depends on timing).
// bench/compare_p2p.sh runs it beside ucx_perftest and prints the ratios.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "bench/round_trip_clock.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/dataplane/data_plane.h"
#include "ulfm_api/runtime.h"

namespace {

using rft::Rank;
using rft::transport::DataPlane;
using rft::transport::Request;

constexpr int kWindow = 64;
constexpr uint32_t kContext = 0;
constexpr int32_t kTag = 1;
constexpr int32_t kAckTag = 2;

void Check(const rft::Status& status, const char* what) {
  if (status.ok()) return;
  std::fprintf(stderr, "rft_bench_p2p: %s: %s\n", what, status.ToString().c_str());
  std::exit(1);
}

int64_t Percentile(std::vector<int64_t>& values, double p) {
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, static_cast<size_t>(p / 100 * values.size()))];
}

bool ParseSizes(char* text, std::vector<size_t>* sizes) {
  sizes->clear();
  for (char* s = std::strtok(text, ","); s != nullptr; s = std::strtok(nullptr, ",")) {
    char* end = nullptr;
    const unsigned long long value = std::strtoull(s, &end, 10);
    if (end == s || *end != '\0' || value > (1ull << 30)) return false;
    sizes->push_back(value);
  }
  return !sizes->empty();
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<size_t> sizes = {8, 64, 1024, 8192, 65536, 1048576, 4194304};
  bool json = false;
  bool detector = false;
  bool latency_only = false;
  long fixed_iters = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--json") {
      json = true;
    } else if (arg == "--detector") {
      detector = true;
    } else if (arg == "--latency-only") {
      latency_only = true;
    } else if (arg == "--iters" && i + 1 < argc) {
      fixed_iters = std::atol(argv[++i]);
      if (fixed_iters <= 0) {
        std::fprintf(stderr, "rft_bench_p2p: --iters %s: expected a positive count\n", argv[i]);
        return 2;
      }
    } else if (arg == "--sizes" && i + 1 < argc) {
      if (!ParseSizes(argv[++i], &sizes)) {
        std::fprintf(stderr,
                     "rft_bench_p2p: --sizes: expected byte counts up to 1 GiB "
                     "separated by commas\n");
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "usage: rftrun -n 2 %s [--sizes 8,1024] [--iters N] [--latency-only] "
                   "[--detector] [--json]\n",
                   argv[0]);
      return 2;
    }
  }
  auto init = rft::transport::Bootstrap::Init();
  Check(init.status(), "bootstrap");
  auto& job = **init;
  if (job.size() != 2) {
    std::fprintf(stderr, "rft_bench_p2p needs exactly 2 ranks (got %u)\n", job.size());
    return 2;
  }
  // --detector: the whole runtime (failure registry, control thread with heartbeats and death
  // watch, data plane), as in a fault-tolerant job, to show what the detector costs the fast
  // path. Without it, the data plane alone.
  std::unique_ptr<rft::api::Runtime> runtime;
  std::unique_ptr<DataPlane> bare_plane;
  if (detector) {
    auto options = rft::api::Runtime::OptionsFromConfig(job);
    Check(options.status(), "options");
    auto created = rft::api::Runtime::Create(std::move(*init), *options);
    Check(created.status(), "runtime");
    runtime = std::move(*created);
  } else {
    auto options = DataPlane::OptionsFromConfig(job);
    Check(options.status(), "options");
    auto created = DataPlane::Create(&job, *options);
    Check(created.status(), "data plane");
    bare_plane = std::move(*created);
  }
  DataPlane& plane = runtime != nullptr ? runtime->plane() : *bare_plane;
  const Rank peer = 1 - job.rank();
  const bool leader = job.rank() == 0;
  const size_t largest = *std::max_element(sizes.begin(), sizes.end());
  std::vector<char> send_buffer(largest, 'x');
  std::vector<char> receive_buffer(largest);  // a window's receives share it, as in OSU's bw
  std::vector<Request*> window(kWindow);
  char ack[8] = {};

  if (leader && !json) {
    std::printf(
        "# rft_bench_p2p: rft data plane over UCX (n=2, eager limit %zu, %s progress)\n",
        plane.options().eager_limit,
        plane.options().progress == rft::transport::ProgressMode::kPoll ? "polling" : "blocking");
    std::printf("%10s %10s %10s %10s %12s\n", "size", "iters", "p50_us", "p99_us", "MB/s");
  }
  for (size_t size : sizes) {
    const long iters = fixed_iters > 0 ? fixed_iters
                       : size <= 8192  ? 20000
                       : size <= 65536 ? 5000
                                       : 500;
    const long warmup = iters / 10;
    std::vector<int64_t> samples;
    samples.reserve(iters);
    const rft::bench::RoundTripClock clock;
    int64_t last = clock.start();
    for (long i = 0; i < warmup + iters; ++i) {
      if (leader) {
        Check(plane.Send(send_buffer.data(), size, peer, kTag, kContext), "send");
        Check(plane.Recv(receive_buffer.data(), size, peer, kTag, kContext, nullptr), "recv");
      } else {
        Check(plane.Recv(receive_buffer.data(), size, peer, kTag, kContext, nullptr), "recv");
        Check(plane.Send(send_buffer.data(), size, peer, kTag, kContext), "send");
      }
      const int64_t now = rft::bench::RoundTripClock::Ticks();
      if (i >= warmup) samples.push_back(now - last);
      last = now;
    }
    const double ns_per_tick = clock.NanosPerTick(last, "rft_bench_p2p");
    // At least 32 windows (2048 messages, as many as ucx_perftest's tag_bw -n 2000): fewer
    // made the large sizes' figure swing by a third between runs.
    const long windows = latency_only ? 0 : std::max<long>(32, iters / kWindow / 4);
    Check(job.Fence(false), "fence");  // both sides start streaming together
    const int64_t bw_start = rft::MonotonicNanos();
    for (long w = 0; w < windows; ++w) {
      if (leader) {
        for (int k = 0; k < kWindow; ++k) {
          Check(plane.Isend(send_buffer.data(), size, peer, kTag, kContext, &window[k]), "isend");
        }
        Check(plane.Waitall(window, {}), "waitall");
        Check(plane.Recv(ack, sizeof(ack), peer, kAckTag, kContext, nullptr), "ack");
      } else {
        for (int k = 0; k < kWindow; ++k) {
          Check(plane.Irecv(receive_buffer.data(), size, peer, kTag, kContext, &window[k]),
                "irecv");
        }
        Check(plane.Waitall(window, {}), "waitall");
        Check(plane.Send(ack, sizeof(ack), peer, kAckTag, kContext), "ack");
      }
    }
    const double seconds = static_cast<double>(rft::MonotonicNanos() - bw_start) / 1e9;
    const double mb_s = static_cast<double>(size) * kWindow * windows / seconds / 1e6;
    if (leader) {
      // One-way, in us.
      const double p50 = static_cast<double>(Percentile(samples, 50)) * ns_per_tick / 2e3;
      const double p99 = static_cast<double>(Percentile(samples, 99)) * ns_per_tick / 2e3;
      // The mean too, for a reference whose median is coarse: in a soft-RoCE guest,
      // ucx_perftest's one-way median moves in steps of 0.5 us (its clock's ticks).
      const double avg =
          static_cast<double>(std::accumulate(samples.begin(), samples.end(), int64_t{0})) /
          static_cast<double>(samples.size()) * ns_per_tick / 2e3;
      if (json) {
        std::printf(
            "{\"bench\":\"p2p_latency\",\"transport\":\"rft\",\"n\":2,\"detector\":%d,"
            "\"size\":%zu,\"iters\":%ld,\"p50_us\":%.3f,\"p99_us\":%.3f,\"avg_us\":%.3f}\n",
            detector ? 1 : 0, size, iters, p50, p99, avg);
        if (!latency_only) {
          std::printf(
              "{\"bench\":\"p2p_bandwidth\",\"transport\":\"rft\",\"n\":2,\"size\":%zu,"
              "\"iters\":%ld,\"mb_s\":%.1f}\n",
              size, windows * kWindow, mb_s);
        }
      } else if (latency_only) {
        std::printf("%10zu %10ld %10.3f %10.3f %12s\n", size, iters, p50, p99, "-");
      } else {
        std::printf("%10zu %10ld %10.3f %10.3f %12.1f\n", size, iters, p50, p99, mb_s);
      }
      std::fflush(stdout);
    }
  }
  Check(job.Fence(false), "fence");  // nobody tears down while the other still sends
  if (runtime != nullptr) runtime->Close();
  bare_plane.reset();
  return 0;
}
