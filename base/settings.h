// The table of settings behind base/config.h. Internal to base/ and its tests: other layers read
// settings through config::Get* and list them through config::AllSettings().
#ifndef RFT_BASE_SETTINGS_H_
#define RFT_BASE_SETTINGS_H_

#include <cstdint>
#include <span>

#include "base/config.h"

namespace rft::config::internal {

struct SettingSpec {
  const char* name;
  Kind kind;
  const char* default_text;
  const char* doc;
  // Inclusive bounds: the value for kInt, bytes for kSize, nanoseconds for kDuration.
  // Ignored for the other kinds.
  int64_t min = INT64_MIN;
  int64_t max = INT64_MAX;
  // kEnum only: the choices, lower case, separated by '|'.
  const char* choices = "";
};

// Every setting. Names are unique and start with "RFT_"; every default parses and is in bounds
// (tests/unit/base/config_test.cc checks both).
std::span<const SettingSpec> SettingTable();

// Makes SettingTable() return `table` instead (an empty span restores the real one), so tests can
// exercise kinds no real setting uses yet. Not thread-safe: call only while nothing reads settings.
void SetSettingTableForTesting(std::span<const SettingSpec> table);

}  // namespace rft::config::internal

#endif  // RFT_BASE_SETTINGS_H_
