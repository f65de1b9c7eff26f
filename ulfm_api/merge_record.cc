#include "ulfm_api/merge_record.h"

#include "base/byte_order.h"

namespace rft::api {
namespace {
constexpr size_t kHeader = 20;
}  // namespace

std::string MergeRecordKey(std::string_view nspace) { return "rft.merge." + std::string(nspace); }

std::vector<std::byte> EncodeMergeRecord(const MergeRecord& record) {
  const std::span<const RankSet::Interval> runs = record.failed.intervals();
  std::vector<std::byte> bytes(kHeader + 4 * record.members.size() + 8 * runs.size());
  StoreLittleEndian<uint32_t>(bytes, 0, static_cast<uint32_t>(record.members.size()));
  StoreLittleEndian<uint32_t>(bytes, 4, record.pair);
  StoreLittleEndian<uint32_t>(bytes, 8, record.epoch);
  StoreLittleEndian<uint32_t>(bytes, 12, record.parents);
  StoreLittleEndian<uint32_t>(bytes, 16, static_cast<uint32_t>(runs.size()));
  size_t at = kHeader;
  for (Rank member : record.members) {
    StoreLittleEndian<uint32_t>(bytes, at, member);
    at += 4;
  }
  for (const RankSet::Interval& run : runs) {
    StoreLittleEndian<uint32_t>(bytes, at, run.first);
    StoreLittleEndian<uint32_t>(bytes, at + 4, run.last);
    at += 8;
  }
  return bytes;
}

StatusOr<MergeRecord> DecodeMergeRecord(std::span<const std::byte> bytes) {
  if (bytes.size() < kHeader) {
    return ArgError("merge record of " + std::to_string(bytes.size()) +
                    " bytes: expected at least " + std::to_string(kHeader));
  }
  const uint64_t members = LoadLittleEndian<uint32_t>(bytes, 0);
  const uint64_t runs = LoadLittleEndian<uint32_t>(bytes, 16);
  if (members == 0 || bytes.size() != kHeader + 4 * members + 8 * runs) {
    return ArgError("merge record of " + std::to_string(bytes.size()) + " bytes for " +
                    std::to_string(members) + " members and " + std::to_string(runs) +
                    " failed intervals: expected at least one member and " +
                    std::to_string(kHeader + 4 * members + 8 * runs) + " bytes");
  }
  MergeRecord record;
  record.pair = LoadLittleEndian<uint32_t>(bytes, 4);
  record.epoch = LoadLittleEndian<uint32_t>(bytes, 8);
  record.parents = LoadLittleEndian<uint32_t>(bytes, 12);
  if (record.parents >= members) {
    return ArgError("merge record: " + std::to_string(record.parents) + " parents of " +
                    std::to_string(members) + " members: expected fewer parents than members");
  }
  size_t at = kHeader;
  for (uint64_t i = 0; i < members; ++i, at += 4) {
    const Rank member = LoadLittleEndian<uint32_t>(bytes, at);
    if (member > kMaxRank)
      return ArgError("merge record: member " + std::to_string(i) + " is not a rank");
    record.members.push_back(member);
  }
  Rank previous_end = 0;
  for (uint64_t i = 0; i < runs; ++i, at += 8) {
    const Rank first = LoadLittleEndian<uint32_t>(bytes, at);
    const Rank last = LoadLittleEndian<uint32_t>(bytes, at + 4);
    if (first >= last || last - 1 > kMaxRank || (i > 0 && first <= previous_end)) {
      return ArgError("merge record: failed interval [" + std::to_string(first) + ", " +
                      std::to_string(last) + ") is empty, beyond kMaxRank or out of order");
    }
    record.failed.InsertRange(first, last);
    previous_end = last;
  }
  return record;
}

Status CheckMergeRecordFits(const MergeRecord& record, uint32_t job_size) {
  for (Rank member : record.members) {
    if (member >= job_size) {
      return ArgError("merge record: member " + std::to_string(member) +
                      " is not a rank of the job of " + std::to_string(job_size));
    }
  }
  if (!record.failed.empty() && record.failed.intervals().back().last > job_size) {
    return ArgError("merge record: failed rank " +
                    std::to_string(record.failed.intervals().back().last - 1) +
                    " is not a rank of the job of " + std::to_string(job_size));
  }
  return Status::Ok();
}

}  // namespace rft::api
