// rft_bench_sim_agree: the agreement's latency in message delays and its messages per process
// against n, in the simulator of tests/sim/ driving the real EraNode (no processes, no network).
//
//   bazel run -c opt //bench:rft_bench_sim_agree -- [--max-n 65536] [--runs 20] [--json]
//
// Every message and every detection takes exactly one unit, so times are counts of message
// delays. For each n = 2, 4, ..., max-n: one failure-free agreement, and `runs` agreements (seeds
// 1..runs; 3 above 4,096 members) in which one or two members crash mid-agreement (after one of
// their first messages). A sample is when the last survivor decided; "bound" is the target for
// the failure-free case, 2⌈log2 n⌉ + 2.
#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "tests/sim/agreement_sim.h"

namespace {

bool g_json = false;

double Percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const size_t at = static_cast<size_t>(p / 100.0 * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(at, values.size() - 1)];
}

void Report(uint32_t n, int crashes, int runs, const std::vector<double>& delays,
            const std::vector<double>& messages) {
  const int bound = 2 * std::bit_width(n - 1) + 2;
  const double p50 = Percentile(delays, 50), p99 = Percentile(delays, 99);
  const double per_process = Percentile(messages, 50);
  if (g_json) {
    std::printf(
        "{\"bench\":\"sim_agree\",\"n\":%u,\"crashes\":%d,\"runs\":%d,\"p50_delays\":%.0f,"
        "\"p99_delays\":%.0f,\"messages_per_process\":%.2f,\"bound_delays\":%d}\n",
        n, crashes, runs, p50, p99, per_process, bound);
  } else {
    std::printf("%7u %7d %5d %10.0f %10.0f %12.2f %7d\n", n, crashes, runs, p50, p99, per_process,
                bound);
  }
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t max_n = 65536;
  int runs = 20;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      g_json = true;
    } else if (std::strcmp(argv[i], "--max-n") == 0 && i + 1 < argc) {
      max_n = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (std::strcmp(argv[i], "--runs") == 0 && i + 1 < argc) {
      runs = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: rft_bench_sim_agree [--max-n N] [--runs R] [--json]\n");
      return 2;
    }
  }
  if (max_n < 2 || runs < 1) {
    std::fprintf(stderr, "rft_bench_sim_agree: --max-n must be >= 2 and --runs >= 1\n");
    return 2;
  }
  if (!g_json) {
    std::printf("# agreement in the simulator: one unit per message and per detection\n");
    std::printf("%7s %7s %5s %10s %10s %12s %7s\n", "n", "crashes", "runs", "p50_delays",
                "p99_delays", "msgs/process", "bound");
  }
  for (uint32_t n = 2; n <= max_n; n *= 2) {
    for (int crashes : {0, 1, 2}) {
      if (crashes >= static_cast<int>(n)) continue;
      const int count = crashes == 0 ? 1 : (n > 4096 ? 3 : runs);
      std::vector<double> delays, messages;
      for (int seed = 1; seed <= count; ++seed) {
        rft::sim::AgreementSimOptions options;
        options.n = n;
        options.seed = static_cast<uint64_t>(seed);
        options.unit_delays = true;
        options.crashes = crashes;
        options.crash_window_messages = 3;
        const rft::sim::AgreementSimResult result = rft::sim::RunAgreementSim(options);
        const std::string violation = rft::sim::CheckAgreementProperties(options, result);
        if (!violation.empty()) {
          std::fprintf(stderr, "n=%u seed=%d: %s\n", n, seed, violation.c_str());
          return 1;
        }
        delays.push_back(static_cast<double>(result.decided_ns[0]));
        messages.push_back(static_cast<double>(result.messages) / n);
      }
      Report(n, crashes, count, delays, messages);
    }
  }
  return 0;
}
