// Fuzzes RankSet::Parse (base/rank_set.h), which reads rank sets users write (e.g. in settings
// and test tools), and the set algebra on what it returns.
//
// Input: one or two rank-set texts separated by a NUL byte. Properties:
// - Parse either fails with RFT_ERR_ARG or returns a canonical set: sorted, disjoint,
//   non-adjacent, non-empty intervals of ranks <= kMaxRank, whose sizes add up to size();
// - ToString -> Parse gives the same set, and ToString of that is the same text;
// - optional braces and surrounding blanks do not change the result;
// - every plain rank item of the text is a member, and Nth/IndexOf agree at interval edges;
// - the two sets obey |A u B| + |A n B| = |A| + |B|, (A - B) u (A n B) = A, (A - B) n B = {}.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/rank_set.h"
#include "fuzz/fuzz_check.h"

namespace {

using rft::kMaxRank;
using rft::Rank;
using rft::RankSet;

void CheckCanonical(const RankSet& set) {
  uint64_t total = 0;
  uint64_t previous_last = 0;
  bool first = true;
  for (const RankSet::Interval& run : set.intervals()) {
    FUZZ_CHECK(run.first < run.last);
    FUZZ_CHECK(run.last - 1 <= kMaxRank);
    FUZZ_CHECK(first || run.first > previous_last);  // disjoint and not adjacent
    first = false;
    previous_last = run.last;
    total += run.last - run.first;
    FUZZ_CHECK(set.Contains(run.first) && set.Contains(run.last - 1));
    FUZZ_CHECK(!set.Contains(run.last) || run.last > kMaxRank);
    const auto index = set.IndexOf(run.first);
    FUZZ_CHECK(index.has_value() && set.Nth(*index) == run.first);
    const auto last_index = set.IndexOf(run.last - 1);
    FUZZ_CHECK(last_index.has_value() && set.Nth(*last_index) == run.last - 1);
  }
  FUZZ_CHECK(total == set.size());
  FUZZ_CHECK(set.empty() == (total == 0));
}

bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Items that are plain ranks (digits only after trimming blanks) must be members.
void CheckPlainItems(std::string_view text, const RankSet& set) {
  while (!text.empty() && (IsBlank(text.front()) || text.front() == '{')) text.remove_prefix(1);
  while (!text.empty() && (IsBlank(text.back()) || text.back() == '}')) text.remove_suffix(1);
  while (true) {
    const size_t comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    while (!item.empty() && IsBlank(item.front())) item.remove_prefix(1);
    while (!item.empty() && IsBlank(item.back())) item.remove_suffix(1);
    if (!item.empty() && item.size() <= 10 &&
        item.find_first_not_of("0123456789") == std::string_view::npos) {
      FUZZ_CHECK(set.Contains(static_cast<Rank>(std::stoull(std::string(item)))));
    }
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
}

bool ParseChecked(std::string_view text, RankSet* out) {
  auto parsed = RankSet::Parse(text);
  if (!parsed.ok()) {
    FUZZ_CHECK(parsed.status().code() == RFT_ERR_ARG);
    return false;
  }
  const RankSet& set = *parsed;
  CheckCanonical(set);
  const std::string canonical = set.ToString();
  auto again = RankSet::Parse(canonical);
  FUZZ_CHECK(again.ok() && *again == set && again->ToString() == canonical);
  if (text.find_first_of("{}") == std::string_view::npos) {
    auto braced = RankSet::Parse("{ " + std::string(text) + "\t}");
    FUZZ_CHECK(braced.ok() && *braced == set);
  }
  auto padded = RankSet::Parse("\t " + std::string(text) + " ");
  FUZZ_CHECK(padded.ok() && *padded == set);
  CheckPlainItems(text, set);
  *out = set;
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  RankSet a, b;
  if (!ParseChecked(input.substr(0, nul), &a)) return 0;
  if (nul == std::string_view::npos || !ParseChecked(input.substr(nul + 1), &b)) return 0;
  const RankSet u = a.Union(b);
  const RankSet i = a.Intersection(b);
  const RankSet d = a.Difference(b);
  CheckCanonical(u);
  CheckCanonical(i);
  CheckCanonical(d);
  FUZZ_CHECK(u.size() + i.size() == a.size() + b.size());
  FUZZ_CHECK(d.Union(i) == a);
  FUZZ_CHECK(d.Intersection(b).empty());
  FUZZ_CHECK(u == b.Union(a) && i == b.Intersection(a));
  RankSet c = a;
  c -= b;
  FUZZ_CHECK(c == d);
  c |= b;
  FUZZ_CHECK(c == u);
  return 0;
}
