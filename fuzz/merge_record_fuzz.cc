// Fuzzes the merge record (ulfm_api/merge_record.h) and the job-rank space
// (transport/bootstrap/rank_space.h): a replacement decodes the record its spawner published
// through the launcher, and the blocks of the job it joins from its environment (RFT_JOIN).
//
// Input: a byte that picks the decoder, then its input. Properties:
// - a decoder that refuses says RFT_ERR_ARG;
// - an accepted merge record has members (fewer parents than members), every member and failed
//   rank a rank, and re-encodes to exactly the input;
// - an accepted rank space has blocks that tile [0, size) in order, each with a namespace free of
//   the separators, maps every job rank back to itself, and re-encodes to text that decodes to
//   the same space.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "fuzz/fuzz_check.h"
#include "transport/bootstrap/rank_space.h"
#include "ulfm_api/merge_record.h"

namespace {

void CheckMergeRecord(std::span<const std::byte> bytes) {
  auto decoded = rft::api::DecodeMergeRecord(bytes);
  if (!decoded.ok()) {
    FUZZ_CHECK(decoded.status().code() == RFT_ERR_ARG);
    return;
  }
  FUZZ_CHECK(!decoded->members.empty());
  FUZZ_CHECK(decoded->parents < decoded->members.size());  // a spawn's record has children
  for (rft::Rank member : decoded->members) FUZZ_CHECK(member <= rft::kMaxRank);
  for (const auto& run : decoded->failed.intervals()) FUZZ_CHECK(run.last - 1 <= rft::kMaxRank);
  // Checked against a job: accepted only when every rank it names is of the job.
  const rft::Status fits = rft::api::CheckMergeRecordFits(*decoded, 64);
  bool inside = decoded->failed.empty() || decoded->failed.intervals().back().last <= 64;
  for (rft::Rank member : decoded->members) inside = inside && member < 64;
  FUZZ_CHECK(fits.ok() == inside);
  if (!fits.ok()) FUZZ_CHECK(fits.code() == RFT_ERR_ARG);
  const std::vector<std::byte> again = rft::api::EncodeMergeRecord(*decoded);
  FUZZ_CHECK(again.size() == bytes.size() && std::equal(again.begin(), again.end(), bytes.begin()));
}

void CheckRankSpace(std::string_view text) {
  auto decoded = rft::transport::RankSpace::Decode(text);
  if (!decoded.ok()) {
    FUZZ_CHECK(decoded.status().code() == RFT_ERR_ARG);
    return;
  }
  uint64_t next = 0;
  for (const rft::transport::RankBlock& block : decoded->blocks()) {
    FUZZ_CHECK(block.first == next && block.count > 0 && !block.nspace.empty());
    FUZZ_CHECK(block.nspace.find_first_of(";:") == std::string::npos);
    next += block.count;
    // The ends of the block map back (every rank would be too slow for huge counts).
    for (rft::Rank r : {block.first, block.first + block.count - 1}) {
      FUZZ_CHECK(decoded->BlockOf(r) == &block);
      FUZZ_CHECK(decoded->JobRankOf(block.nspace, r - block.first) == r);
    }
  }
  FUZZ_CHECK(next == decoded->size());
  auto again = rft::transport::RankSpace::Decode(decoded->Encode());
  FUZZ_CHECK(again.ok() && again->blocks() == decoded->blocks());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const std::span<const std::byte> rest(reinterpret_cast<const std::byte*>(data) + 1, size - 1);
  if (data[0] % 2 == 0) {
    CheckMergeRecord(rest);
  } else {
    CheckRankSpace(std::string_view(reinterpret_cast<const char*>(rest.data()), rest.size()));
  }
  return 0;
}
