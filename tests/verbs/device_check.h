// What the device checks (tests/verbs/*_check.cc) share: how they speak and how they start.
//
// Each check prints "verbs NAME: [SPEAKER: ]LINE" on stdout, flushed at once so that the lines of
// a job's ranks interleave whole (tools/softroce/selftest.sh matches them), and exits 0 when
// every step passed, 1 when one failed (named on its "FAILED:" line) or 77 when the host has no
// RDMA device: a skip, whoever launched it. They are test programs, not part of the library: the
// soft-RoCE guests run them (docs/verbs.md, "Running the checks in a guest").
#ifndef RFT_TESTS_VERBS_DEVICE_CHECK_H_
#define RFT_TESTS_VERBS_DEVICE_CHECK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/status.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/verbs/device.h"

namespace rft::verbs {

// Exit status of a check that cannot run here (the automake and CTest convention).
inline constexpr int kSkippedExitStatus = 77;

class CheckVoice {
 public:
  explicit CheckVoice(std::string_view name) : name_(name) {}

  // From now on each line names `speaker` ("rank 2", "listener").
  void set_speaker(std::string speaker) { speaker_ = std::move(speaker); }
  void Say(const std::string& line) const;
  // Says "FAILED: line"; returns the exit status of a failed check.
  int Fail(const std::string& line) const;

 private:
  std::string name_;
  std::string speaker_;
};

// The port a check runs on: the one `requested` names (RFT_NET_DEVICE's syntax, device.h; empty:
// the first active port), or the exit status to end with now — kSkippedExitStatus on a host
// without an RDMA device (said so), 1 when the devices cannot be listed or the port chosen.
std::variant<Endpoint, int> ChoosePort(const CheckVoice& voice, std::string_view requested);

// A check that runs as a job: its port (as ChoosePort), then the job of the launcher that started
// it (PMIx), which must have `min_size` to `max_size` processes; the voice names the rank from
// then on. Or the exit status to end with now (a failure is said).
struct JobCheckStart {
  Endpoint endpoint;
  std::unique_ptr<transport::Bootstrap> job;
};
std::variant<JobCheckStart, int> StartJobCheck(CheckVoice& voice, std::string_view requested,
                                               uint32_t min_size, uint32_t max_size);

// Message `index` from `from` to `to`, for the checks that send numbered streams: its size
// alternates between inline (64 bytes) and a slot's worth (4096), and its bytes depend on both
// ranks and the index, which it carries in its first word.
std::vector<std::byte> NumberedMessage(Rank from, Rank to, uint32_t index);

// What arrived at rank `self` from each of `size` ranks: counts, and the first message that was
// not the NumberedMessage expected next from its sender (order and content in one check).
class ArrivalCheck {
 public:
  ArrivalCheck(Rank self, uint32_t size) : self_(self), arrived_(size, 0) {}
  void OnMessage(Rank from, std::span<const std::byte> payload);
  uint32_t arrived(Rank from) const { return arrived_[from]; }
  // Empty while every message was the expected one.
  const std::string& wrong() const { return wrong_; }

 private:
  Rank self_;
  std::vector<uint32_t> arrived_;
  std::string wrong_;
};

}  // namespace rft::verbs

#endif  // RFT_TESTS_VERBS_DEVICE_CHECK_H_
