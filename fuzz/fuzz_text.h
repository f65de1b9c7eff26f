// ASCII case helpers for the fuzz targets in fuzz/. The targets compare the code under test
// with readings of their own, so these are written here rather than taken from base/.
#ifndef RFT_FUZZ_FUZZ_TEXT_H_
#define RFT_FUZZ_FUZZ_TEXT_H_

#include <string>
#include <string_view>

namespace rft_fuzz {

inline char Lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }
inline char Upper(char c) { return c >= 'a' && c <= 'z' ? static_cast<char>(c - 'a' + 'A') : c; }

inline std::string Lowered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = Lower(c);
  return out;
}

inline std::string Uppered(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = Upper(c);
  return out;
}

}  // namespace rft_fuzz

#endif  // RFT_FUZZ_FUZZ_TEXT_H_
