#include "transport/bootstrap/rank_space.h"

#include <charconv>

namespace rft::transport {

Status RankSpace::Add(std::string_view nspace, uint32_t count) {
  const std::string name(nspace);
  if (nspace.empty() || nspace.find_first_of(";:") != std::string_view::npos) {
    return ArgError("job rank space: namespace \"" + name +
                    "\": expected a non-empty name without ';' or ':'");
  }
  if (count == 0) {
    return ArgError("job rank space: namespace \"" + name + "\": expected at least 1 rank");
  }
  if (static_cast<uint64_t>(size_) + count - 1 > kMaxRank) {
    return ArgError("job rank space: " + std::to_string(count) + " ranks of \"" + name +
                    "\" after " + std::to_string(size_) + ": expected at most " +
                    std::to_string(kMaxRank + 1ull) + " in all");
  }
  for (const RankBlock& block : blocks_) {
    if (block.nspace == nspace) {
      return ArgError("job rank space: namespace \"" + name + "\" is in the job already");
    }
  }
  blocks_.push_back(RankBlock{name, size_, count});
  size_ += count;
  return Status::Ok();
}

const RankBlock* RankSpace::BlockOf(Rank job_rank) const {
  for (const RankBlock& block : blocks_) {
    if (job_rank >= block.first && job_rank - block.first < block.count) return &block;
  }
  return nullptr;
}

Rank RankSpace::JobRankOf(std::string_view nspace, uint32_t pmix_rank) const {
  for (const RankBlock& block : blocks_) {
    if (block.nspace == nspace)
      return pmix_rank < block.count ? block.first + pmix_rank : kInvalidRank;
  }
  return kInvalidRank;
}

std::string RankSpace::Encode() const {
  std::string text;
  for (const RankBlock& block : blocks_) {
    if (!text.empty()) text += ';';
    text += std::to_string(block.count) + ':' + block.nspace;
  }
  return text;
}

StatusOr<RankSpace> RankSpace::Decode(std::string_view text) {
  RankSpace space;
  const std::string whole(text);
  if (text.empty() || text.back() == ';') {
    return ArgError("job rank space \"" + whole + "\": expected count:namespace;...");
  }
  while (!text.empty()) {
    const size_t end = std::min(text.find(';'), text.size());
    const std::string_view item = text.substr(0, end);
    text.remove_prefix(std::min(end + 1, text.size()));
    const size_t colon = item.find(':');
    uint32_t count = 0;
    const char* first = item.data();
    const char* last = item.data() + (colon == std::string_view::npos ? 0 : colon);
    const auto [ptr, ec] = std::from_chars(first, last, count);
    if (colon == std::string_view::npos || ec != std::errc() || ptr != last) {
      return ArgError("job rank space \"" + whole + "\": \"" + std::string(item) +
                      "\" is not count:namespace");
    }
    Status added = space.Add(item.substr(colon + 1), count);
    if (!added.ok()) return added;
  }
  return space;
}

}  // namespace rft::transport
