#include "tests/verbs/device_check.h"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "base/byte_order.h"

namespace rft::verbs {

void CheckVoice::Say(const std::string& line) const {
  std::printf("verbs %s: %s%s%s\n", name_.c_str(), speaker_.c_str(), speaker_.empty() ? "" : ": ",
              line.c_str());
  std::fflush(stdout);
}

int CheckVoice::Fail(const std::string& line) const {
  Say("FAILED: " + line);
  return 1;
}

std::variant<Endpoint, int> ChoosePort(const CheckVoice& voice, std::string_view requested) {
  // Before anything else, PMIx included: a host without RDMA is a skip whoever launched us.
  StatusOr<std::vector<VerbsDevice>> devices = ListDevices();
  if (!devices.ok()) return voice.Fail(devices.status().message());
  if (devices->empty()) {
    voice.Say("no RDMA device on this host");
    return kSkippedExitStatus;
  }
  StatusOr<Endpoint> endpoint = SelectPort(*devices, requested);
  if (!endpoint.ok()) return voice.Fail(endpoint.status().message());
  return *std::move(endpoint);
}

std::variant<JobCheckStart, int> StartJobCheck(CheckVoice& voice, std::string_view requested,
                                               uint32_t min_size, uint32_t max_size) {
  std::variant<Endpoint, int> port = ChoosePort(voice, requested);
  if (const int* status = std::get_if<int>(&port)) return *status;
  StatusOr<std::unique_ptr<transport::Bootstrap>> job = transport::Bootstrap::Init();
  if (!job.ok()) return voice.Fail("bootstrap: " + job.status().ToString());
  const uint32_t size = (*job)->size();
  if (size < min_size || size > max_size) {
    const std::string wanted = min_size == max_size ? std::to_string(min_size)
                               : max_size == UINT32_MAX
                                   ? "at least " + std::to_string(min_size)
                                   : std::to_string(min_size) + " to " + std::to_string(max_size);
    return voice.Fail("needs " + wanted + " processes, the job has " + std::to_string(size));
  }
  voice.set_speaker("rank " + std::to_string((*job)->rank()));
  return JobCheckStart{std::get<Endpoint>(std::move(port)), *std::move(job)};
}

std::vector<std::byte> NumberedMessage(Rank from, Rank to, uint32_t index) {
  std::vector<std::byte> bytes(index % 2 == 0 ? 64 : 4096);
  for (size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = std::byte(static_cast<uint8_t>(from * 29 + to * 5 + index * 11 + i));
  }
  StoreLittleEndian<uint32_t>(bytes, 0, index);
  return bytes;
}

void ArrivalCheck::OnMessage(Rank from, std::span<const std::byte> payload) {
  const uint32_t index = arrived_[from]++;
  const std::vector<std::byte> expected = NumberedMessage(from, self_, index);
  if (wrong_.empty() && (payload.size() != expected.size() ||
                         !std::equal(payload.begin(), payload.end(), expected.begin()))) {
    wrong_ = "message " + std::to_string(index) + " from rank " + std::to_string(from) +
             " is not what was sent (" + std::to_string(payload.size()) + " bytes)";
  }
}

}  // namespace rft::verbs
