// Session's warnings gathered at finalize: a warning raised on one process (rft_warning) is
// printed by one process for the whole job, so it is not lost among many processes' output or
// with a process whose output went nowhere.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/log.h"
#include "ulfm_api/collectives.h"
#include "ulfm_api/session.h"

namespace rft::api {

namespace {

// What each survivor sends to the reporting one.
struct WarningReport {
  uint32_t job_rank = 0;
  uint32_t count = 0;  // saturated at UINT32_MAX
  char first[Session::kWarningBytes] = {};
};

}  // namespace

void Session::RaiseWarning(std::string_view message) {
  if (warnings_++ == 0) first_warning_ = std::string(message.substr(0, kWarningBytes - 1));
  RFT_LOG_WARN("warning raised by the program: %.*s", static_cast<int>(message.size()),
               message.data());
}

void Session::ReportWarnings() {
  auto enabled = config::GetBool("RFT_FINALIZE_WARNINGS");
  if (!enabled.ok()) {
    RFT_LOG_WARN("%s: warnings not gathered", enabled.status().ToString().c_str());
    return;
  }
  if (!*enabled) return;
  // Nothing but this agreement when nobody raised one (its fast path: about an allreduce).
  uint32_t none_here = warnings_ == 0 ? 1 : 0;
  const Status agreed = Agree(world(), &none_here);
  if (!agreed.ok() && agreed.code() != RFT_ERR_PROC_FAILED) {
    RFT_LOG_WARN("warnings at finalize: %s", agreed.ToString().c_str());
    return;
  }
  if (none_here != 0) return;
  // The survivors, so that a process that failed holds nobody up.
  auto survivors = Shrink(world());
  if (!survivors.ok()) {
    RFT_LOG_WARN("warnings at finalize: %s", survivors.status().ToString().c_str());
    return;
  }
  Communicator& comm = **survivors;
  WarningReport mine;
  mine.job_rank = runtime_->registry().self();
  mine.count = static_cast<uint32_t>(std::min<uint64_t>(warnings_, UINT32_MAX));
  std::memcpy(mine.first, first_warning_.data(),
              std::min(first_warning_.size(), kWarningBytes - 1));
  std::vector<WarningReport> all(comm.rank() == 0 ? comm.size() : 0);
  const Status gathered = RunCollective(comm, "warnings at finalize", [&](Schedule& schedule) {
    return BuildGather(schedule, &mine, sizeof mine, all.data(), 0);
  });
  if (!gathered.ok()) {
    RFT_LOG_WARN("warnings at finalize: %s", gathered.ToString().c_str());
  } else {
    for (WarningReport& report : all) {
      if (report.count == 0) continue;
      report.first[kWarningBytes - 1] = '\0';  // whatever came over the wire
      std::fprintf(stderr, "rft: rank %u raised %u warning(s); the first: %s\n", report.job_rank,
                   report.count, report.first);
    }
    std::fflush(stderr);
  }
  std::unique_ptr<Communicator> done = std::move(*survivors);
  (void)Free(done);
}

}  // namespace rft::api
