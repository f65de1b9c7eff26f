#include "base/config.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "base/check.h"
#include "base/settings.h"

extern char** environ;

namespace rft::config {

namespace {

using internal::SettingSpec;
using internal::SettingTable;

constexpr int64_t kNs = 1;
constexpr int64_t kUs = 1000;
constexpr int64_t kMs = 1000 * kUs;
constexpr int64_t kSec = 1000 * kMs;
constexpr int64_t kMin = 60 * kSec;
constexpr int64_t kHour = 60 * kMin;

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (Lower(a[i]) != Lower(b[i])) return false;
  }
  return true;
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

// Splits "123.5ms" into the number and the unit, with optional spaces between them.
void SplitNumber(std::string_view s, std::string_view* number, std::string_view* unit) {
  size_t i = 0;
  while (i < s.size() && (IsDigit(s[i]) || s[i] == '.')) ++i;
  *number = s.substr(0, i);
  *unit = Trim(s.substr(i));
}

const SettingSpec* FindSpec(std::string_view name) {
  for (const SettingSpec& spec : SettingTable()) {
    if (name == spec.name) return &spec;
  }
  return nullptr;
}

const char* KindArticle(Kind kind) {
  return kind == Kind::kInt || kind == Kind::kEnum ? "an" : "a";
}

std::string BoundText(Kind kind, int64_t v) {
  switch (kind) {
    case Kind::kSize:
      return FormatSize(static_cast<uint64_t>(v));
    case Kind::kDuration:
      return FormatDuration(std::chrono::nanoseconds(v));
    default:
      return std::to_string(v);
  }
}

bool HasLowerBound(const SettingSpec& spec) {
  return spec.min != INT64_MIN && !(spec.kind == Kind::kSize && spec.min <= 0) &&
         !(spec.kind == Kind::kDuration && spec.min <= 0);
}

// "1..64", ">= 1ms", "<= 1g" or "" for a numeric setting without bounds.
std::string RangeText(const SettingSpec& spec) {
  bool has_min = HasLowerBound(spec);
  bool has_max = spec.max != INT64_MAX;
  if (has_min && has_max)
    return BoundText(spec.kind, spec.min) + ".." + BoundText(spec.kind, spec.max);
  if (has_min) return ">= " + BoundText(spec.kind, spec.min);
  if (has_max) return "<= " + BoundText(spec.kind, spec.max);
  return "";
}

std::string AllowedText(const SettingSpec& spec) {
  switch (spec.kind) {
    case Kind::kBool:
      return "y|n (also 1|0, yes|no, true|false, on|off)";
    case Kind::kString:
      return "any text";
    case Kind::kEnum:
      return spec.choices;
    case Kind::kInt:
    case Kind::kSize:
    case Kind::kDuration: {
      std::string range = RangeText(spec);
      return range.empty() ? std::string("any ") + KindName(spec.kind) : range;
    }
  }
  return "";
}

// What a malformed value should have looked like.
std::string ExpectedText(const SettingSpec& spec) {
  switch (spec.kind) {
    case Kind::kBool:
      return "expected a boolean: y|n, yes|no, 1|0, true|false or on|off";
    case Kind::kInt: {
      std::string range = RangeText(spec);
      return "expected an integer" + (range.empty() ? "" : " " + range);
    }
    case Kind::kSize:
      return "expected a size such as 8192, 8k, 1m or 2g";
    case Kind::kDuration:
      return "expected a duration such as 500ms or 10s";
    case Kind::kEnum:
      return std::string("expected one of ") + spec.choices;
    case Kind::kString:
      break;
  }
  return "";
}

// Quotes a value for a message, escaping what would garble a log line.
std::string Quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  out += '"';
  return out;
}

Status BadValue(const SettingSpec& spec, std::string_view text, const std::string& why) {
  return ArgError(std::string(spec.name) + "=" + Quote(text) + ": " + why);
}

// A parsed value; only the member for the setting's kind is meaningful.
struct Value {
  bool b = false;
  int64_t i = 0;
  uint64_t size = 0;
  std::chrono::nanoseconds d{0};
  std::string s;
};

Status ParseValue(const SettingSpec& spec, std::string_view text, Value* out) {
  auto out_of_range = [&]() {
    return BadValue(spec, text,
                    std::string("out of range: expected ") + KindArticle(spec.kind) + " " +
                        KindName(spec.kind) + " " + RangeText(spec));
  };
  switch (spec.kind) {
    case Kind::kBool: {
      std::optional<bool> v = ParseBool(text);
      if (!v) return BadValue(spec, text, ExpectedText(spec));
      out->b = *v;
      return Status::Ok();
    }
    case Kind::kInt: {
      std::optional<int64_t> v = ParseInt(text);
      if (!v) return BadValue(spec, text, ExpectedText(spec));
      if (*v < spec.min || *v > spec.max) return out_of_range();
      out->i = *v;
      return Status::Ok();
    }
    case Kind::kSize: {
      std::optional<uint64_t> v = ParseSize(text);
      if (!v) return BadValue(spec, text, ExpectedText(spec));
      if ((spec.min > 0 && *v < static_cast<uint64_t>(spec.min)) ||
          (spec.max != INT64_MAX && *v > static_cast<uint64_t>(spec.max))) {
        return out_of_range();
      }
      out->size = *v;
      return Status::Ok();
    }
    case Kind::kDuration: {
      std::optional<std::chrono::nanoseconds> v = ParseDuration(text);
      if (!v) return BadValue(spec, text, ExpectedText(spec));
      if (v->count() < spec.min || v->count() > spec.max) return out_of_range();
      out->d = *v;
      return Status::Ok();
    }
    case Kind::kEnum: {
      std::string_view trimmed = Trim(text);
      std::string_view choices = spec.choices;
      while (!choices.empty()) {
        size_t bar = choices.find('|');
        std::string_view choice = choices.substr(0, bar);
        if (EqualsIgnoreCase(trimmed, choice)) {
          out->s = std::string(choice);
          return Status::Ok();
        }
        if (bar == std::string_view::npos) break;
        choices.remove_prefix(bar + 1);
      }
      return BadValue(spec, text, ExpectedText(spec));
    }
    case Kind::kString:
      out->s = std::string(text);
      return Status::Ok();
  }
  return OtherError("unreachable");
}

// A programming error in the use of this API (not a bad value): abort with the message.
[[noreturn]] void Fail(const std::string& msg) {
  rft::internal::CheckFailed(__FILE__, __LINE__, "valid use of rft::config", msg.c_str());
}

// The spec for `name`, which must exist and have one of the kinds `a` or `b`.
const SettingSpec& SpecOrDie(std::string_view name, Kind a, Kind b, const char* getter) {
  const SettingSpec* spec = FindSpec(name);
  if (spec == nullptr) {
    std::string msg = std::string(getter) + "(\"" + std::string(name) +
                      "\"): no such setting; add it to base/settings.cc";
    Fail(msg);
  }
  if (spec->kind != a && spec->kind != b) {
    std::string msg = std::string(getter) + "(\"" + std::string(name) + "\"): the setting is " +
                      KindArticle(spec->kind) + " " + KindName(spec->kind);
    Fail(msg);
  }
  return *spec;
}

StatusOr<Value> Read(std::string_view name, Kind a, Kind b, const char* getter,
                     const EnvLookup& env) {
  const SettingSpec& spec = SpecOrDie(name, a, b, getter);
  const char* raw = env(spec.name);
  Value value;
  Status status = ParseValue(spec, raw != nullptr ? raw : spec.default_text, &value);
  if (!status.ok()) {
    if (raw == nullptr) {
      Fail(std::string("the default of ") + spec.name + " is invalid: " + status.message());
    }
    return status;
  }
  return value;
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

Status UnknownVariable(std::string_view name) {
  // Rank candidates by edit distance, breaking ties towards names that extend the unknown one or
  // that it extends (RFT_LOG_PREFIX -> RFT_LOG_PREFIX_RANK): a truncated name is the likelier slip.
  const SettingSpec* best = nullptr;
  size_t best_distance = SIZE_MAX;
  size_t best_score = SIZE_MAX;
  for (const SettingSpec& spec : SettingTable()) {
    std::string_view known = spec.name;
    size_t d = EditDistance(name, known);
    bool prefix = known.starts_with(name) || name.starts_with(known);
    size_t score = 2 * d - (prefix && d > 0 ? 1 : 0);
    if (score < best_score) {
      best = &spec;
      best_distance = d;
      best_score = score;
    }
  }
  std::string msg = "unknown variable " + std::string(name);
  if (best != nullptr) {
    std::string_view known = best->name;
    bool prefix = known.starts_with(name) || name.starts_with(known);
    // A typo is a few edits away; beyond that the name is only the nearest of a short list.
    if (prefix || best_distance <= std::max<size_t>(3, known.size() / 4)) {
      msg += std::string(" (did you mean ") + best->name + "?)";
    } else {
      msg += std::string(" (the closest known setting is ") + best->name +
             "; rft_info lists them all)";
    }
  }
  return ArgError(std::move(msg));
}

}  // namespace

const EnvLookup& DefaultEnv() {
  static const EnvLookup* const kEnv =
      new EnvLookup([](const char* name) -> const char* { return ::getenv(name); });
  return *kEnv;
}

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "integer";
    case Kind::kSize:
      return "size";
    case Kind::kDuration:
      return "duration";
    case Kind::kString:
      return "string";
    case Kind::kEnum:
      return "enum";
  }
  return "?";
}

const std::vector<SettingInfo>& AllSettings() {
  // Built on first use, and rebuilt only when a test swaps the table (the vector is never
  // replaced, so references handed out earlier stay valid in production).
  static std::mutex mu;
  static auto* infos = new std::vector<SettingInfo>();
  static const SettingSpec* built_from = nullptr;
  std::lock_guard<std::mutex> lock(mu);
  std::span<const SettingSpec> table = SettingTable();
  if (built_from != table.data()) {
    infos->clear();
    for (const SettingSpec& spec : table) {
      infos->push_back(
          SettingInfo{spec.name, spec.kind, spec.default_text, spec.doc, AllowedText(spec)});
    }
    built_from = table.data();
  }
  return *infos;
}

const SettingInfo* FindSetting(std::string_view name) {
  for (const SettingInfo& info : AllSettings()) {
    if (info.name == name) return &info;
  }
  return nullptr;
}

StatusOr<bool> GetBool(std::string_view name, const EnvLookup& env) {
  StatusOr<Value> v = Read(name, Kind::kBool, Kind::kBool, "GetBool", env);
  if (!v.ok()) return v.status();
  return v->b;
}

StatusOr<int64_t> GetInt(std::string_view name, const EnvLookup& env) {
  StatusOr<Value> v = Read(name, Kind::kInt, Kind::kInt, "GetInt", env);
  if (!v.ok()) return v.status();
  return v->i;
}

StatusOr<uint64_t> GetSize(std::string_view name, const EnvLookup& env) {
  StatusOr<Value> v = Read(name, Kind::kSize, Kind::kSize, "GetSize", env);
  if (!v.ok()) return v.status();
  return v->size;
}

StatusOr<std::chrono::nanoseconds> GetDuration(std::string_view name, const EnvLookup& env) {
  StatusOr<Value> v = Read(name, Kind::kDuration, Kind::kDuration, "GetDuration", env);
  if (!v.ok()) return v.status();
  return v->d;
}

StatusOr<std::string> GetString(std::string_view name, const EnvLookup& env) {
  StatusOr<Value> v = Read(name, Kind::kString, Kind::kEnum, "GetString", env);
  if (!v.ok()) return v.status();
  return std::move(v->s);
}

Status CheckSetting(std::string_view name, const EnvLookup& env) {
  const SettingSpec* spec = FindSpec(name);
  RFT_CHECK(spec != nullptr, "CheckSetting: no such setting");
  StatusOr<Value> v = Read(name, spec->kind, spec->kind, "CheckSetting", env);
  return v.ok() ? Status::Ok() : v.status();
}

bool IsSet(std::string_view name, const EnvLookup& env) {
  const SettingSpec* spec = FindSpec(name);
  RFT_CHECK(spec != nullptr, "IsSet: no such setting");
  return env(spec->name) != nullptr;
}

std::vector<Status> EnvironmentProblems(const std::vector<std::string>& environ_entries) {
  std::vector<Status> problems;
  for (const std::string& entry : environ_entries) {
    std::string_view e = entry;
    if (e.substr(0, 4) != "RFT_") continue;
    size_t eq = e.find('=');
    std::string_view name = e.substr(0, eq);
    std::string_view text = eq == std::string_view::npos ? std::string_view() : e.substr(eq + 1);
    const SettingSpec* spec = FindSpec(name);
    if (spec == nullptr) {
      problems.push_back(UnknownVariable(name));
      continue;
    }
    Value ignored;
    Status status = ParseValue(*spec, text, &ignored);
    if (!status.ok()) problems.push_back(std::move(status));
  }
  return problems;
}

Status ValidateEnvironment(const std::vector<std::string>& environ_entries) {
  std::vector<Status> problems = EnvironmentProblems(environ_entries);
  if (problems.empty()) return Status::Ok();
  std::string msg;
  for (const Status& p : problems) {
    if (!msg.empty()) msg += "; ";
    msg += p.message();
  }
  return ArgError(std::move(msg));
}

std::vector<std::string> ProcessEnvironment() {
  std::vector<std::string> entries;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) entries.emplace_back(*e);
  return entries;
}

std::string CurrentValueText(std::string_view name, const EnvLookup& env) {
  const SettingSpec* spec = FindSpec(name);
  RFT_CHECK(spec != nullptr, "CurrentValueText: no such setting");
  const char* raw = env(spec->name);
  if (raw == nullptr) return spec->default_text;
  Value ignored;
  if (!ParseValue(*spec, raw, &ignored).ok()) return Quote(raw) + " (invalid)";
  return raw;
}

std::optional<bool> ParseBool(std::string_view text) {
  text = Trim(text);
  for (std::string_view yes : {"1", "y", "yes", "true", "on"}) {
    if (EqualsIgnoreCase(text, yes)) return true;
  }
  for (std::string_view no : {"0", "n", "no", "false", "off"}) {
    if (EqualsIgnoreCase(text, no)) return false;
  }
  return std::nullopt;
}

std::optional<int64_t> ParseInt(std::string_view text) {
  text = Trim(text);
  // An optional sign, then digits only (from_chars alone would take "-" but not "+").
  size_t digits = !text.empty() && (text[0] == '+' || text[0] == '-') ? 1 : 0;
  if (digits == text.size()) return std::nullopt;
  for (size_t i = digits; i < text.size(); ++i) {
    if (!IsDigit(text[i])) return std::nullopt;
  }
  if (text[0] == '+') text.remove_prefix(1);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || ptr != text.data() + text.size()) return std::nullopt;
  return v;
}

std::optional<uint64_t> ParseSize(std::string_view text) {
  std::string_view number, unit;
  SplitNumber(Trim(text), &number, &unit);
  if (number.empty() || number.find('.') != std::string_view::npos) return std::nullopt;
  uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), v);
  if (ec != std::errc() || ptr != number.data() + number.size()) return std::nullopt;
  static constexpr struct {
    const char* suffix;
    uint64_t multiplier;
  } kUnits[] = {
      {"", 1},
      {"b", 1},
      {"k", 1ull << 10},
      {"kb", 1ull << 10},
      {"kib", 1ull << 10},
      {"m", 1ull << 20},
      {"mb", 1ull << 20},
      {"mib", 1ull << 20},
      {"g", 1ull << 30},
      {"gb", 1ull << 30},
      {"gib", 1ull << 30},
      {"t", 1ull << 40},
      {"tb", 1ull << 40},
      {"tib", 1ull << 40},
  };
  for (const auto& u : kUnits) {
    if (!EqualsIgnoreCase(unit, u.suffix)) continue;
    uint64_t bytes = 0;
    if (__builtin_mul_overflow(v, u.multiplier, &bytes)) return std::nullopt;
    return bytes;
  }
  return std::nullopt;
}

std::optional<std::chrono::nanoseconds> ParseDuration(std::string_view text) {
  std::string_view number, unit;
  SplitNumber(Trim(text), &number, &unit);
  // Digits with at most one '.', and at least one digit.
  size_t dot = number.find('.');
  if (dot != std::string_view::npos && number.find('.', dot + 1) != std::string_view::npos) {
    return std::nullopt;
  }
  std::string_view int_part = number.substr(0, dot);
  std::string_view frac_part =
      dot == std::string_view::npos ? std::string_view() : number.substr(dot + 1);
  if (int_part.empty() && frac_part.empty()) return std::nullopt;
  // Bounds the exact arithmetic below: 24 digits times the largest unit fits in 128 bits.
  if (int_part.size() + frac_part.size() > 24) return std::nullopt;

  static constexpr struct {
    const char* suffix;
    int64_t ns;
  } kUnits[] = {
      {"", kMs},   {"ns", kNs}, {"us", kUs},   {"ms", kMs},
      {"s", kSec}, {"m", kMin}, {"min", kMin}, {"h", kHour},
  };
  int64_t unit_ns = 0;
  for (const auto& u : kUnits) {
    if (EqualsIgnoreCase(unit, u.suffix)) unit_ns = u.ns;
  }
  if (unit_ns == 0) return std::nullopt;

  unsigned __int128 mantissa = 0;
  unsigned __int128 scale = 1;
  for (char c : int_part) mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
  for (char c : frac_part) {
    mantissa = mantissa * 10 + static_cast<unsigned>(c - '0');
    scale *= 10;
  }
  // Round to the nearest nanosecond.
  unsigned __int128 ns = (mantissa * static_cast<unsigned __int128>(unit_ns) + scale / 2) / scale;
  if (ns > static_cast<unsigned __int128>(INT64_MAX)) return std::nullopt;
  return std::chrono::nanoseconds(static_cast<int64_t>(ns));
}

std::string FormatDuration(std::chrono::nanoseconds d) {
  int64_t ns = d.count();
  if (ns == 0) return "0s";
  static constexpr struct {
    const char* suffix;
    int64_t ns;
  } kUnits[] = {{"h", kHour}, {"m", kMin}, {"s", kSec}, {"ms", kMs}, {"us", kUs}};
  for (const auto& u : kUnits) {
    if (ns % u.ns == 0) return std::to_string(ns / u.ns) + u.suffix;
  }
  return std::to_string(ns) + "ns";
}

std::string FormatSize(uint64_t bytes) {
  if (bytes == 0) return "0";
  static constexpr struct {
    const char* suffix;
    uint64_t bytes;
  } kUnits[] = {{"t", 1ull << 40}, {"g", 1ull << 30}, {"m", 1ull << 20}, {"k", 1ull << 10}};
  for (const auto& u : kUnits) {
    if (bytes % u.bytes == 0) return std::to_string(bytes / u.bytes) + u.suffix;
  }
  return std::to_string(bytes);
}

}  // namespace rft::config
