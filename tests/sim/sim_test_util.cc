#include "tests/sim/sim_test_util.h"

#include <cstdlib>

namespace rft::sim {

namespace {

// An unsigned decimal environment variable, or `fallback` when unset or malformed.
uint64_t EnvNumber(const char* name, uint64_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  return *end == '\0' ? value : fallback;
}

constexpr int kMaxReportedFailures = 5;

}  // namespace

bool UnderSlowSanitizer() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return true;
#endif
#endif
  // This file may be built without the sanitizer flags; the configs set these for the tests.
  return std::getenv("TSAN_OPTIONS") != nullptr || std::getenv("ASAN_OPTIONS") != nullptr;
}

std::vector<uint64_t> SeedsToRun(int default_count) {
  const uint64_t only = EnvNumber("RFT_SIM_SEED", 0);
  if (only != 0) return {only};
  const uint64_t count = EnvNumber("RFT_SIM_SEEDS", static_cast<uint64_t>(default_count));
  std::vector<uint64_t> seeds;
  for (uint64_t s = 1; s <= count; ++s) seeds.push_back(s);
  return seeds;
}

void ForEachSeed(const std::vector<Rank>& sizes, int default_count,
                 const std::function<std::string(uint64_t seed, Rank n)>& check) {
  const uint64_t only_n = EnvNumber("RFT_SIM_N", 0);
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string filter = std::string(test->test_suite_name()) + "." + test->name();
  int failures = 0;
  for (Rank n : sizes) {
    if (only_n != 0 && n != only_n) continue;
    for (uint64_t seed : SeedsToRun(default_count)) {
      const std::string violation = check(seed, n);
      if (violation.empty()) continue;
      ADD_FAILURE() << "seed=" << seed << " n=" << n << ": " << violation
                    << "\n  replay: bazel test //tests/sim:all --test_filter=" << filter
                    << " --test_env=RFT_SIM_SEED=" << seed << " --test_env=RFT_SIM_N=" << n;
      if (++failures >= kMaxReportedFailures) return;
    }
  }
}

}  // namespace rft::sim
