// A minimal streaming JSON writer for rft_info's --json output: one object on one line.
//
// The caller nests Begin/End calls correctly; the writer handles commas and string escaping.
// Strings are taken as UTF-8; invalid bytes (an environment variable may hold anything) become
// U+FFFD so the output always parses.
#ifndef RFT_TOOLS_RFT_INFO_JSON_WRITER_H_
#define RFT_TOOLS_RFT_INFO_JSON_WRITER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rft::info {

class JsonWriter {
 public:
  // Containers. Inside an object, every value is preceded by Key().
  void BeginObject();
  void EndObject();
  void BeginArray();
  void EndArray();
  void Key(std::string_view key);

  void String(std::string_view value);
  void Int(int64_t value);
  void Bool(bool value);
  void Null();

  // Key + value shorthands.
  void Field(std::string_view key, std::string_view value) {
    Key(key);
    String(value);
  }
  void Field(std::string_view key, const char* value) { Field(key, std::string_view(value)); }
  void Field(std::string_view key, int64_t value) {
    Key(key);
    Int(value);
  }
  void Field(std::string_view key, int value) { Field(key, static_cast<int64_t>(value)); }
  void Field(std::string_view key, bool value) {
    Key(key);
    Bool(value);
  }

  const std::string& str() const { return out_; }

  // `text` as a JSON string literal, quotes included.
  static std::string Quote(std::string_view text);

 private:
  // Emits the comma that separates this value from the previous one at the same level.
  void BeforeValue();

  std::string out_;
  // One entry per open container: true once it holds a value (so the next needs a comma).
  std::vector<bool> has_value_;
  bool after_key_ = false;
};

}  // namespace rft::info

#endif  // RFT_TOOLS_RFT_INFO_JSON_WRITER_H_
