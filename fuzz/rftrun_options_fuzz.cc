// Fuzzes rftrun's command-line parser (tools/rftrun/options.h).
//
// Input: the argument vector, arguments separated by NUL bytes (argv[0] excluded), as execve
// would hand them over. Properties of an accepted command line (without --help):
// - 1 <= nprocs <= 4096; the program vector is non-empty and is exactly the tail of the input;
// - every fault names a time within [0, 1e6] s and SIGKILL or SIGSTOP, and, on one node, a
//   rank of the job (across nodes the job's size is known only once the nodes have joined);
// - --listen goes with --nodes K (2 <= K <= 64), --join without either;
// - the timeout is 0 (none) or within (0, 1e6] s;
// - rendering the options back into arguments and parsing them again gives the same options.
#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "tools/rftrun/options.h"

namespace {

using rft::rftrun::Options;
using rft::rftrun::ParseOptions;

constexpr int64_t kMaxNs = int64_t{1000000} * 1000000000;

// Exact decimal seconds, so that the parse back must land on the same nanosecond.
std::string Seconds(std::chrono::nanoseconds d) {
  const int64_t ns = d.count();
  std::string frac = std::to_string(ns % 1000000000);
  frac.insert(0, 9 - frac.size(), '0');
  return std::to_string(ns / 1000000000) + "." + frac;
}

std::vector<std::string> Render(const Options& o) {
  std::vector<std::string> args = {"-n", std::to_string(o.nprocs)};
  if (o.fault_tolerant) args.push_back("--ft");
  if (o.timeout.count() != 0) {
    args.push_back("--timeout");
    args.push_back(Seconds(o.timeout));
  }
  for (const auto& fault : o.faults) {
    args.push_back(fault.signal == SIGKILL ? "--kill" : "--stop");
    args.push_back(std::to_string(fault.rank) + "@" + Seconds(fault.at));
  }
  if (o.stack_traces) args.push_back("--get-stack-traces");
  if (!o.tag_output) args.push_back("--no-tag-output");
  if (o.verbose) args.push_back("-v");
  if (o.plain_pmix) args.push_back("--plain-pmix");
  if (!o.listen.empty()) {
    args.insert(args.end(), {"--nodes", std::to_string(o.nodes), "--listen", o.listen});
  }
  if (!o.join.empty()) args.insert(args.end(), {"--join", o.join});
  if (!o.node_name.empty()) args.insert(args.end(), {"--node-name", o.node_name});
  args.push_back("--");
  args.insert(args.end(), o.argv.begin(), o.argv.end());
  return args;
}

bool SameOptions(const Options& a, const Options& b) {
  if (a.faults.size() != b.faults.size()) return false;
  for (size_t i = 0; i < a.faults.size(); ++i) {
    if (a.faults[i].rank != b.faults[i].rank || a.faults[i].at != b.faults[i].at ||
        a.faults[i].signal != b.faults[i].signal) {
      return false;
    }
  }
  return a.nprocs == b.nprocs && a.fault_tolerant == b.fault_tolerant && a.timeout == b.timeout &&
         a.stack_traces == b.stack_traces && a.tag_output == b.tag_output &&
         a.verbose == b.verbose && a.plain_pmix == b.plain_pmix && a.nodes == b.nodes &&
         a.listen == b.listen && a.join == b.join && a.node_name == b.node_name &&
         a.help == b.help && a.argv == b.argv;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> args;
  if (size > 0) {
    const std::string input(reinterpret_cast<const char*>(data), size);
    size_t start = 0;
    while (true) {
      const size_t nul = input.find('\0', start);
      args.push_back(input.substr(start, nul - start));
      if (nul == std::string::npos) break;
      start = nul + 1;
    }
  }
  auto parsed = ParseOptions(args);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == RFT_ERR_ARG && !parsed.status().message().empty());
    return 0;
  }
  const Options& o = *parsed;
  if (o.help) return 0;
  FUZZ_CHECK(o.nprocs >= 1 && o.nprocs <= 4096);
  FUZZ_CHECK(!o.argv.empty() && o.argv.size() <= args.size());
  FUZZ_CHECK(std::equal(o.argv.begin(), o.argv.end(), args.end() - o.argv.size()));
  FUZZ_CHECK(o.timeout.count() >= 0 && o.timeout.count() <= kMaxNs);
  FUZZ_CHECK(o.listen.empty() || o.join.empty());
  FUZZ_CHECK(o.listen.empty() ? o.nodes == 1 : (o.nodes >= 2 && o.nodes <= 64));
  for (const auto& fault : o.faults) {
    FUZZ_CHECK(o.spans_nodes() || fault.rank < o.nprocs);
    FUZZ_CHECK(fault.at.count() >= 0 && fault.at.count() <= kMaxNs);
    FUZZ_CHECK(fault.signal == SIGKILL || fault.signal == SIGSTOP);
  }
  auto again = ParseOptions(Render(o));
  FUZZ_CHECK(again.ok() && SameOptions(*again, o));
  return 0;
}
