#include "base/fault_injection.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "base/config.h"

namespace rft::fault {
namespace {

constexpr std::array<std::string_view, 8> kPoints = {
    "spawn.launched",     "merge.confirming",  "verbs.close.requested", "verbs.close.closing",
    "verbs.return.taken", "revoke.one_notice", "verbs.offer.fails",     "abort.refused"};

std::mutex g_mutex;
std::vector<std::pair<std::string, Rank>> g_armed;  // guarded by g_mutex

std::string PointList() {
  std::string list;
  for (std::string_view point : kPoints) {
    if (!list.empty()) list += ", ";
    list += point;
  }
  return list;
}

}  // namespace

Status Arm(std::string_view text) {
  std::vector<std::pair<std::string, Rank>> armed;
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string_view entry = text.substr(start, comma - start);
    start = comma + 1;
    const size_t at = entry.find('@');
    const std::string_view point = entry.substr(0, at);
    const std::string_view rank = at == std::string_view::npos ? "" : entry.substr(at + 1);
    uint32_t value = 0;
    const auto [end, ec] = std::from_chars(rank.data(), rank.data() + rank.size(), value);
    const bool known = std::find(kPoints.begin(), kPoints.end(), point) != kPoints.end();
    if (!known || rank.empty() || ec != std::errc() || end != rank.data() + rank.size() ||
        value > kMaxRank) {
      return ArgError("RFT_FAULT_INJECT entry \"" + std::string(entry) +
                      "\": expected <point>@<job rank>, the point one of " + PointList());
    }
    armed.emplace_back(std::string(point), value);
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  g_armed = std::move(armed);
  return Status::Ok();
}

Status ArmFromConfig() {
  auto text = config::GetString("RFT_FAULT_INJECT");
  if (!text.ok()) return text.status();
  return Arm(*text);
}

bool Armed(std::string_view point, Rank rank) {
  std::lock_guard<std::mutex> lock(g_mutex);
  for (const auto& [armed_point, armed_rank] : g_armed) {
    if (armed_point == point && armed_rank == rank) return true;
  }
  return false;
}

void Die(std::string_view point) {
  std::fprintf(stderr, "rft: fault injected at %.*s (RFT_FAULT_INJECT): ending with SIGKILL\n",
               static_cast<int>(point.size()), point.data());
  std::fflush(nullptr);
  raise(SIGKILL);
  for (;;) pause();
}

Status Failure(std::string_view point) {
  return OtherError("fault injected at " + std::string(point) + " (RFT_FAULT_INJECT)");
}

}  // namespace rft::fault
