// Fuzzes the control plane's published record (detector/peer_record.h): every rank decodes the
// record each other rank published through the launcher, and its fields then name a shared-memory
// segment to open and a UCX address to connect to.
//
// Input: a record's bytes. Properties:
// - a decoder that refuses says RFT_ERR_OTHER and names the rank;
// - an accepted record has a non-empty worker address and a segment name of at most 255 bytes,
//   a control socket name of at most 107 bytes, its parts (verbs QP addresses included) add up
//   to the input's length, and it re-encodes to exactly the input.
#include <cstddef>
#include <cstdint>
#include <span>

#include "detector/peer_record.h"
#include "fuzz/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  auto decoded = rft::detector::DecodePeerRecord(bytes, 7);
  if (!decoded.ok()) {
    FUZZ_CHECK(decoded.status().code() == RFT_ERR_OTHER);
    FUZZ_CHECK(decoded.status().message().find("rank 7") != std::string::npos);
    return 0;
  }
  FUZZ_CHECK(!decoded->worker_address.empty());
  FUZZ_CHECK(decoded->death_watch_segment.size() <= 255);
  FUZZ_CHECK(decoded->control_socket.size() <= 107);
  FUZZ_CHECK(20 + decoded->region_descriptor.size() + decoded->death_watch_segment.size() +
                 decoded->control_socket.size() + decoded->verbs_qps.size() +
                 decoded->worker_address.size() ==
             size);
  const std::vector<std::byte> again = rft::detector::EncodePeerRecord(*decoded);
  FUZZ_CHECK(again.size() == size && std::equal(again.begin(), again.end(), bytes.begin()));
  return 0;
}
