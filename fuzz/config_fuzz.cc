// Fuzzes the RFT_* value parsers (base/config.h): ParseBool, ParseInt, ParseSize and
// ParseDuration, which read whatever users put in their environment or on rftrun's command line.
//
// Input: the value text, handed to all four parsers. Properties:
// - ParseBool and ParseInt accept exactly what an independent reading of the syntax in
//   base/config.h accepts, with the same value; ParseSize too for every suffix, with no silent
//   overflow;
// - ParseDuration never returns a negative duration, reads a bare integer as milliseconds and
//   never accepts more than one '.';
// - every accepted value survives Format -> Parse (FormatSize, FormatDuration, std::to_string)
//   unchanged;
// - the parsers ignore surrounding whitespace and letter case, as documented.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/config.h"
#include "fuzz/fuzz_check.h"
#include "fuzz/fuzz_text.h"

namespace {

namespace config = rft::config;

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
using rft_fuzz::Lowered;
using rft_fuzz::Uppered;

std::string Trimmed(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return std::string(s);
}

std::optional<bool> ReferenceBool(std::string_view text) {
  const std::string t = Lowered(Trimmed(text));
  if (t == "1" || t == "y" || t == "yes" || t == "true" || t == "on") return true;
  if (t == "0" || t == "n" || t == "no" || t == "false" || t == "off") return false;
  return std::nullopt;
}

// Decimal digits into an unsigned 128-bit value; nullopt past 2^127 (far beyond any int64).
std::optional<unsigned __int128> Digits(std::string_view s) {
  if (s.empty()) return std::nullopt;
  unsigned __int128 v = 0;
  for (char c : s) {
    if (!IsDigit(c)) return std::nullopt;
    v = v * 10 + static_cast<unsigned>(c - '0');
    if (v >> 127) return std::nullopt;
  }
  return v;
}

std::optional<int64_t> ReferenceInt(std::string_view text) {
  const std::string t = Trimmed(text);
  std::string_view digits = t;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  std::optional<unsigned __int128> v = Digits(digits);
  if (!v) return std::nullopt;
  const unsigned __int128 limit = static_cast<unsigned __int128>(INT64_MAX) + (negative ? 1 : 0);
  if (*v > limit) return std::nullopt;
  if (negative) return static_cast<int64_t>(-static_cast<__int128>(*v));
  return static_cast<int64_t>(*v);
}

std::optional<uint64_t> ReferenceSize(std::string_view text) {
  const std::string t = Trimmed(text);
  size_t i = 0;
  while (i < t.size() && (IsDigit(t[i]) || t[i] == '.')) ++i;
  std::optional<unsigned __int128> v = Digits(std::string_view(t).substr(0, i));
  if (!v || *v > UINT64_MAX) return std::nullopt;
  const std::string unit = Lowered(Trimmed(std::string_view(t).substr(i)));
  unsigned shift = 0;
  if (unit == "" || unit == "b") {
    shift = 0;
  } else if (unit == "k" || unit == "kb" || unit == "kib") {
    shift = 10;
  } else if (unit == "m" || unit == "mb" || unit == "mib") {
    shift = 20;
  } else if (unit == "g" || unit == "gb" || unit == "gib") {
    shift = 30;
  } else if (unit == "t" || unit == "tb" || unit == "tib") {
    shift = 40;
  } else {
    return std::nullopt;
  }
  const unsigned __int128 bytes = *v << shift;
  if (bytes > UINT64_MAX) return std::nullopt;
  return static_cast<uint64_t>(bytes);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const std::string padded = " \t" + text + "\r\n ";
  const std::string upper = Uppered(text);

  const std::optional<bool> b = config::ParseBool(text);
  FUZZ_CHECK(b == ReferenceBool(text));
  FUZZ_CHECK(config::ParseBool(padded) == b && config::ParseBool(upper) == b);

  const std::optional<int64_t> i = config::ParseInt(text);
  FUZZ_CHECK(i == ReferenceInt(text));
  FUZZ_CHECK(config::ParseInt(padded) == i);
  if (i) FUZZ_CHECK(config::ParseInt(std::to_string(*i)) == i);

  const std::optional<uint64_t> s = config::ParseSize(text);
  FUZZ_CHECK(s == ReferenceSize(text));
  FUZZ_CHECK(config::ParseSize(padded) == s && config::ParseSize(upper) == s);
  if (s) FUZZ_CHECK(config::ParseSize(config::FormatSize(*s)) == s);

  const std::optional<std::chrono::nanoseconds> d = config::ParseDuration(text);
  FUZZ_CHECK(config::ParseDuration(padded) == d && config::ParseDuration(upper) == d);
  if (d) {
    FUZZ_CHECK(d->count() >= 0);
    FUZZ_CHECK(config::ParseDuration(config::FormatDuration(*d)) == d);
    FUZZ_CHECK(Trimmed(text).find('.') == Trimmed(text).rfind('.'));
  }
  // A bare number is milliseconds (base/config.h); 12 digits of ms fit an int64 of ns.
  const std::string t = Trimmed(text);
  if (!t.empty() && t.size() <= 12 && Digits(t)) {
    FUZZ_CHECK(d && d->count() == static_cast<int64_t>(*Digits(t)) * 1000000);
  }
  return 0;
}
