// Fuzzes rft::log::ParseLevel (base/log.h), which reads RFT_LOG_LEVEL as the user wrote it.
//
// Input: the level text. Properties: an accepted text is, ignoring ASCII case, exactly the name
// LevelName gives the returned level (no prefix, no trailing bytes past an embedded NUL); the
// answer does not depend on letter case; every level's own name parses back to it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/log.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_text.h"

namespace {

using rft::log::Level;
using rft::log::LevelName;
using rft::log::ParseLevel;

using rft_fuzz::Lowered;
using rft_fuzz::Uppered;

void CheckNames() {
  for (Level level : {Level::kError, Level::kWarn, Level::kInfo, Level::kDebug, Level::kTrace}) {
    FUZZ_CHECK(ParseLevel(LevelName(level)) == level);
    FUZZ_CHECK(ParseLevel(Uppered(LevelName(level))) == level);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool names_checked = (CheckNames(), true);
  (void)names_checked;
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::optional<Level> level = ParseLevel(text);
  if (level) {
    const int value = static_cast<int>(*level);
    FUZZ_CHECK(value >= static_cast<int>(Level::kError) &&
               value <= static_cast<int>(Level::kTrace));
    FUZZ_CHECK(Lowered(text) == LevelName(*level));
  }
  FUZZ_CHECK(ParseLevel(Uppered(text)) == level);
  FUZZ_CHECK(ParseLevel(Lowered(text)) == level);
  return 0;
}
