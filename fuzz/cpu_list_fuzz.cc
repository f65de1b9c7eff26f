// Fuzzes the CPU lists ranks publish at start-up (transport/bootstrap/cpu_placement.h) and the
// judgement made from them: whether the ranks of a node must share cores decides if progress
// loops may spin.
//
// Input: split on 0xff 0xff into per-rank lists. Properties:
// - a list decodes exactly when its length is even, and re-encodes to the same bytes;
// - MustShareCores never crashes, says "share" whenever there are more ranks than distinct CPUs
//   in all lists together, and "no" when every rank has a CPU no other rank lists.
#include <cstddef>
#include <cstdint>
#include <set>
#include <span>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "transport/bootstrap/cpu_placement.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using rft::transport::CpuList;
  std::vector<CpuList> masks;
  size_t start = 0;
  for (size_t i = 0; i <= size; ++i) {
    const bool end = i == size || (i + 1 < size && data[i] == 0xff && data[i + 1] == 0xff);
    if (!end) continue;
    const std::span<const std::byte> part(reinterpret_cast<const std::byte*>(data + start),
                                          i - start);
    auto decoded = rft::transport::DecodeCpuList(part, 3);
    FUZZ_CHECK(decoded.ok() == (part.size() % 2 == 0));
    if (decoded.ok()) {
      const std::vector<std::byte> again = rft::transport::EncodeCpuList(*decoded);
      FUZZ_CHECK(again.size() == part.size() &&
                 std::equal(again.begin(), again.end(), part.begin()));
      masks.push_back(*decoded);
    }
    start = i + 2;
    ++i;
    if (masks.size() > 64) break;
  }
  const bool share = rft::transport::MustShareCores(masks);
  std::set<uint16_t> all;
  for (const CpuList& mask : masks) all.insert(mask.begin(), mask.end());
  if (masks.size() > all.size()) FUZZ_CHECK(share);
  // Every rank owns a CPU nobody else lists: a placement exists.
  bool exclusive = true;
  for (size_t a = 0; a < masks.size() && exclusive; ++a) {
    bool has_own = false;
    for (uint16_t cpu : masks[a]) {
      bool others = false;
      for (size_t b = 0; b < masks.size() && !others; ++b) {
        if (b == a) continue;
        for (uint16_t c : masks[b]) others |= c == cpu;
      }
      has_own |= !others;
    }
    exclusive = has_own;
  }
  if (exclusive) FUZZ_CHECK(!share);
  return 0;
}
