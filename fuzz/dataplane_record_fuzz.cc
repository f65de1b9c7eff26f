// Fuzzes the data plane's published record (transport/dataplane/record.h): every rank decodes the
// record each other rank published through the launcher, and its fields then name descriptors
// to map, a pid to read from and a UCX address to connect to.
//
// Input: a record's bytes. Properties:
// - a decoder that refuses says RFT_ERR_OTHER and names the rank;
// - an accepted record has only known flags, a verbs part exactly when it has the verbs flag, a
//   non-empty UCX address, parts that add up to the input's length, and it re-encodes to
//   exactly the input.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>

#include "fuzz/fuzz_check.h"
#include "transport/dataplane/record.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using rft::transport::DataPlaneRecord;
  const std::span<const std::byte> bytes(reinterpret_cast<const std::byte*>(data), size);
  auto decoded = rft::transport::DecodeDataPlaneRecord(bytes, 7);
  if (!decoded.ok()) {
    FUZZ_CHECK(decoded.status().code() == RFT_ERR_OTHER);
    FUZZ_CHECK(decoded.status().message().find("rank 7") != std::string::npos);
    return 0;
  }
  const uint32_t known = DataPlaneRecord::kCmaUsable | DataPlaneRecord::kCmaParentOnly |
                         DataPlaneRecord::kBlocks | DataPlaneRecord::kVerbs;
  FUZZ_CHECK((decoded->flags & ~known) == 0);
  FUZZ_CHECK(decoded->verbs.has_value() == ((decoded->flags & DataPlaneRecord::kVerbs) != 0));
  FUZZ_CHECK(!decoded->ucx_address.empty());
  FUZZ_CHECK(24 + (decoded->verbs ? 8 : 0) + decoded->ucx_address.size() == size);
  const std::vector<std::byte> again = rft::transport::EncodeDataPlaneRecord(*decoded);
  FUZZ_CHECK(again.size() == size && std::equal(again.begin(), again.end(), bytes.begin()));
  return 0;
}
