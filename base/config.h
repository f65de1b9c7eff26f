// Configuration from RFT_* environment variables, like UCX's UCX_* variables.
//
// Every setting is declared once, with its kind, default, bounds and doc string, in the table in
// base/settings.cc; rft_info and docs/configuration.md are generated from that table. Reading a
// setting parses and validates it on each call (settings are read at init, not on a hot path).
//
// Value syntax (case-insensitive):
//   bool      1|0, y|n, yes|no, true|false, on|off
//   int       decimal, optionally signed, within the setting's min..max
//   size      bytes, with an optional binary suffix: 8192, 8k, 8K, 8kb, 8KiB, 1m, 2g, 1t
//             (k = 1024; no fractions)
//   duration  a number with an optional unit: 250us, 10ms, 1.5s, 2m (minutes), 1h; also ns and
//             min. A bare number is MILLISECONDS ("500" = 500ms), the unit most timeouts use.
//   string    any text
//   enum      one of the listed choices
// An unset variable gives the default. A variable set to the empty string is a value like any
// other (and so an error for every kind but string).
//
// A bad value is an RFT_ERR_ARG status whose message names the variable, the value and what was
// expected. Asking for a setting that is not in the table, or with the wrong Get function, is a
// bug and aborts.
#ifndef RFT_BASE_CONFIG_H_
#define RFT_BASE_CONFIG_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace rft::config {

// Returns the value of an environment variable or nullptr when unset. Injectable for tests.
using EnvLookup = std::function<const char*(const char*)>;
// Wraps ::getenv.
const EnvLookup& DefaultEnv();

enum class Kind { kBool, kInt, kSize, kDuration, kString, kEnum };

struct SettingInfo {
  std::string name;  // "RFT_LOG_LEVEL"
  Kind kind;
  std::string default_text;  // "warn"
  std::string doc;           // one or two sentences
  std::string allowed;       // "1..64", "error|warn|info|debug|trace", ">= 1ms", ...
};

// Every setting, in table order (grouped by layer).
const std::vector<SettingInfo>& AllSettings();
// The entry for `name`, or nullptr if there is none.
const SettingInfo* FindSetting(std::string_view name);
// "bool", "int", "size", "duration", "string", "enum".
const char* KindName(Kind kind);

StatusOr<bool> GetBool(std::string_view name, const EnvLookup& env = DefaultEnv());
StatusOr<int64_t> GetInt(std::string_view name, const EnvLookup& env = DefaultEnv());
// In bytes.
StatusOr<uint64_t> GetSize(std::string_view name, const EnvLookup& env = DefaultEnv());
StatusOr<std::chrono::nanoseconds> GetDuration(std::string_view name,
                                               const EnvLookup& env = DefaultEnv());
// For kString and kEnum settings. Enum values come back as the canonical (lower-case) choice.
StatusOr<std::string> GetString(std::string_view name, const EnvLookup& env = DefaultEnv());

// OK when the setting's current value (or its default, when unset) is valid, whatever its kind;
// otherwise the error the matching Get function would return.
Status CheckSetting(std::string_view name, const EnvLookup& env = DefaultEnv());

// True when the variable is present in the environment (even if empty or invalid).
bool IsSet(std::string_view name, const EnvLookup& env = DefaultEnv());

// Checks every RFT_* entry ("NAME=value", as in `environ`): a known setting must parse and be in
// range; an unknown RFT_* name is reported with the closest known name as a suggestion. Other
// variables are ignored. Returns one status per problem, in input order.
std::vector<Status> EnvironmentProblems(const std::vector<std::string>& environ_entries);
// OK, or one RFT_ERR_ARG status whose message lists every problem, separated by "; ".
Status ValidateEnvironment(const std::vector<std::string>& environ_entries);
// The entries of the process's `environ`, for the two functions above.
std::vector<std::string> ProcessEnvironment();

// What rft_info prints as the current value: the variable's text when set and valid, the default
// when unset, and `"<text>" (invalid)` when set to a bad value.
std::string CurrentValueText(std::string_view name, const EnvLookup& env = DefaultEnv());

// The parsers behind the Get functions, for command-line options that take the same syntax.
// nullopt means malformed; bounds are not checked.
std::optional<bool> ParseBool(std::string_view text);
std::optional<int64_t> ParseInt(std::string_view text);
std::optional<uint64_t> ParseSize(std::string_view text);
std::optional<std::chrono::nanoseconds> ParseDuration(std::string_view text);

// Short exact renderings in the same syntax: "1500us" -> "1500us", 10 s -> "10s", 8192 -> "8k".
std::string FormatDuration(std::chrono::nanoseconds d);
std::string FormatSize(uint64_t bytes);

}  // namespace rft::config

#endif  // RFT_BASE_CONFIG_H_
