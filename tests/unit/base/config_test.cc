#include "base/config.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "base/settings.h"
#include "gtest/gtest.h"

namespace rft::config {
namespace {

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;
using std::chrono::seconds;

// An environment that holds exactly the given variables.
EnvLookup Env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

const EnvLookup kEmpty = Env({});

// ---- The real table ----

TEST(SettingsTableTest, EntriesAreWellFormed) {
  std::set<std::string> names;
  ASSERT_FALSE(AllSettings().empty());
  for (const SettingInfo& s : AllSettings()) {
    EXPECT_EQ(s.name.rfind("RFT_", 0), 0u) << s.name;
    EXPECT_TRUE(names.insert(s.name).second) << "duplicate " << s.name;
    EXPECT_FALSE(s.doc.empty()) << s.name;
    EXPECT_FALSE(s.allowed.empty()) << s.name;
    EXPECT_EQ(s.doc.back(), '.') << s.name << ": doc strings are sentences";
    EXPECT_EQ(FindSetting(s.name), &s);
  }
  EXPECT_EQ(FindSetting("RFT_NO_SUCH"), nullptr);
}

TEST(SettingsTableTest, EveryDefaultParsesAndIsInRange) {
  for (const SettingInfo& s : AllSettings()) {
    SCOPED_TRACE(s.name);
    Status status;
    switch (s.kind) {
      case Kind::kBool:
        status = GetBool(s.name, kEmpty).status();
        break;
      case Kind::kInt:
        status = GetInt(s.name, kEmpty).status();
        break;
      case Kind::kSize:
        status = GetSize(s.name, kEmpty).status();
        break;
      case Kind::kDuration:
        status = GetDuration(s.name, kEmpty).status();
        break;
      case Kind::kString:
      case Kind::kEnum:
        status = GetString(s.name, kEmpty).status();
        break;
    }
    EXPECT_TRUE(status.ok()) << status.ToString();
    EXPECT_EQ(CurrentValueText(s.name, kEmpty), s.default_text);
    EXPECT_FALSE(IsSet(s.name, kEmpty));
  }
}

TEST(SettingsTableTest, TheSettingsOfThisRelease) {
  const SettingInfo* level = FindSetting("RFT_LOG_LEVEL");
  ASSERT_NE(level, nullptr);
  EXPECT_EQ(level->kind, Kind::kEnum);
  EXPECT_EQ(level->default_text, "warn");
  EXPECT_EQ(level->allowed, "error|warn|info|debug|trace");
  EXPECT_EQ(level->doc, "Verbosity of rft's diagnostic log on stderr.");

  const SettingInfo* timeout = FindSetting("RFT_PMIX_TIMEOUT");
  ASSERT_NE(timeout, nullptr);
  EXPECT_EQ(timeout->kind, Kind::kDuration);
  EXPECT_EQ(timeout->default_text, "10s");
  EXPECT_EQ(timeout->allowed, "1ms..24h");
  EXPECT_EQ(*GetDuration("RFT_PMIX_TIMEOUT", kEmpty), seconds(10));

  const SettingInfo* prefix = FindSetting("RFT_LOG_PREFIX_RANK");
  ASSERT_NE(prefix, nullptr);
  EXPECT_EQ(prefix->kind, Kind::kBool);
  EXPECT_EQ(*GetBool("RFT_LOG_PREFIX_RANK", kEmpty), true);
}

TEST(SettingsTableTest, PmixTimeout) {
  EXPECT_EQ(*GetDuration("RFT_PMIX_TIMEOUT", Env({{"RFT_PMIX_TIMEOUT", "250ms"}})),
            milliseconds(250));
  EXPECT_EQ(*GetDuration("RFT_PMIX_TIMEOUT", Env({{"RFT_PMIX_TIMEOUT", "1ms"}})), milliseconds(1));
  EXPECT_EQ(*GetDuration("RFT_PMIX_TIMEOUT", Env({{"RFT_PMIX_TIMEOUT", "30"}})), milliseconds(30));

  StatusOr<nanoseconds> fast = GetDuration("RFT_PMIX_TIMEOUT", Env({{"RFT_PMIX_TIMEOUT", "fast"}}));
  ASSERT_FALSE(fast.ok());
  EXPECT_EQ(fast.status().code(), RFT_ERR_ARG);
  EXPECT_EQ(fast.status().message(),
            "RFT_PMIX_TIMEOUT=\"fast\": expected a duration such as 500ms or 10s");

  StatusOr<nanoseconds> tiny =
      GetDuration("RFT_PMIX_TIMEOUT", Env({{"RFT_PMIX_TIMEOUT", "999us"}}));
  ASSERT_FALSE(tiny.ok());
  EXPECT_EQ(tiny.status().message(),
            "RFT_PMIX_TIMEOUT=\"999us\": out of range: expected a duration 1ms..24h");

  // PMIx counts an int of seconds: a huge value must be refused, not wrap.
  StatusOr<nanoseconds> huge = GetDuration("RFT_PMIX_TIMEOUT", Env({{"RFT_PMIX_TIMEOUT", "25h"}}));
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().message(),
            "RFT_PMIX_TIMEOUT=\"25h\": out of range: expected a duration 1ms..24h");
  EXPECT_EQ(*GetDuration("RFT_PMIX_TIMEOUT", Env({{"RFT_PMIX_TIMEOUT", "24h"}})), hours(24));
}

TEST(SettingsTableTest, LogLevelIsCaseInsensitiveAndCanonical) {
  EXPECT_EQ(*GetString("RFT_LOG_LEVEL", Env({{"RFT_LOG_LEVEL", "DEBUG"}})), "debug");
  EXPECT_EQ(*GetString("RFT_LOG_LEVEL", Env({{"RFT_LOG_LEVEL", " Trace "}})), "trace");
  StatusOr<std::string> bad = GetString("RFT_LOG_LEVEL", Env({{"RFT_LOG_LEVEL", "bogus"}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(),
            "RFT_LOG_LEVEL=\"bogus\": expected one of error|warn|info|debug|trace");
}

// ---- Every kind, through a test table ----

constexpr int64_t kMsNs = 1000000;
constexpr internal::SettingSpec kTestTable[] = {
    {.name = "RFT_T_BOOL", .kind = Kind::kBool, .default_text = "n", .doc = "A bool."},
    {.name = "RFT_T_INT",
     .kind = Kind::kInt,
     .default_text = "8",
     .doc = "An int.",
     .min = 1,
     .max = 64},
    {.name = "RFT_T_INT_ANY", .kind = Kind::kInt, .default_text = "-3", .doc = "Any int."},
    {.name = "RFT_T_SIZE",
     .kind = Kind::kSize,
     .default_text = "8k",
     .doc = "A size.",
     .min = 1024,
     .max = int64_t{1} << 30},
    {.name = "RFT_T_DURATION",
     .kind = Kind::kDuration,
     .default_text = "1.5s",
     .doc = "A duration.",
     .min = kMsNs / 1000,
     .max = 3600 * 1000 * kMsNs},
    {.name = "RFT_T_STRING", .kind = Kind::kString, .default_text = "abc", .doc = "A string."},
    {.name = "RFT_T_ENUM",
     .kind = Kind::kEnum,
     .default_text = "ud",
     .doc = "An enum.",
     .choices = "rc|ud|dc"},
};

class ConfigKindsTest : public ::testing::Test {
 protected:
  void SetUp() override { internal::SetSettingTableForTesting(kTestTable); }
  void TearDown() override { internal::SetSettingTableForTesting({}); }

  // The message of the error GetX returns for `name`="`value`".
  template <class Getter>
  std::string ErrorFor(Getter get, const char* name, const std::string& value) {
    auto result = get(name, Env({{name, value}}));
    EXPECT_FALSE(result.ok()) << name << "=" << value << " was accepted";
    if (result.ok()) return "";
    EXPECT_EQ(result.status().code(), RFT_ERR_ARG);
    // Every message names the variable and quotes the value.
    EXPECT_EQ(result.status().message().rfind(std::string(name) + "=\"", 0), 0u)
        << result.status().message();
    return result.status().message();
  }
};

TEST_F(ConfigKindsTest, TableSwapIsVisible) {
  ASSERT_EQ(AllSettings().size(), std::size(kTestTable));
  EXPECT_EQ(AllSettings()[1].allowed, "1..64");
  EXPECT_EQ(FindSetting("RFT_T_INT_ANY")->allowed, "any integer");
  EXPECT_EQ(FindSetting("RFT_T_SIZE")->allowed, "1k..1g");
  EXPECT_EQ(FindSetting("RFT_T_DURATION")->allowed, "1us..1h");
  EXPECT_EQ(FindSetting("RFT_T_STRING")->allowed, "any text");
  EXPECT_EQ(FindSetting("RFT_T_ENUM")->allowed, "rc|ud|dc");
}

TEST_F(ConfigKindsTest, Defaults) {
  EXPECT_EQ(*GetBool("RFT_T_BOOL", kEmpty), false);
  EXPECT_EQ(*GetInt("RFT_T_INT", kEmpty), 8);
  EXPECT_EQ(*GetInt("RFT_T_INT_ANY", kEmpty), -3);
  EXPECT_EQ(*GetSize("RFT_T_SIZE", kEmpty), 8192u);
  EXPECT_EQ(*GetDuration("RFT_T_DURATION", kEmpty), milliseconds(1500));
  EXPECT_EQ(*GetString("RFT_T_STRING", kEmpty), "abc");
  EXPECT_EQ(*GetString("RFT_T_ENUM", kEmpty), "ud");
}

TEST_F(ConfigKindsTest, Bool) {
  for (const char* yes : {"1", "y", "Y", "yes", "YES", "true", "True", "on", "ON", " y "}) {
    EXPECT_EQ(*GetBool("RFT_T_BOOL", Env({{"RFT_T_BOOL", yes}})), true) << yes;
  }
  for (const char* no : {"0", "n", "N", "no", "No", "false", "FALSE", "off", "Off"}) {
    EXPECT_EQ(*GetBool("RFT_T_BOOL", Env({{"RFT_T_BOOL", no}})), false) << no;
  }
  for (const char* bad : {"", "2", "yess", "enable", "t", "-1"}) {
    std::string msg = ErrorFor(GetBool, "RFT_T_BOOL", bad);
    EXPECT_NE(msg.find("expected a boolean"), std::string::npos) << msg;
  }
}

TEST_F(ConfigKindsTest, Int) {
  EXPECT_EQ(*GetInt("RFT_T_INT", Env({{"RFT_T_INT", "1"}})), 1);
  EXPECT_EQ(*GetInt("RFT_T_INT", Env({{"RFT_T_INT", "64"}})), 64);
  EXPECT_EQ(*GetInt("RFT_T_INT", Env({{"RFT_T_INT", "+17"}})), 17);
  EXPECT_EQ(*GetInt("RFT_T_INT_ANY", Env({{"RFT_T_INT_ANY", "-9223372036854775808"}})), INT64_MIN);
  EXPECT_EQ(ErrorFor(GetInt, "RFT_T_INT", "65"),
            "RFT_T_INT=\"65\": out of range: expected an integer 1..64");
  EXPECT_EQ(ErrorFor(GetInt, "RFT_T_INT", "0"),
            "RFT_T_INT=\"0\": out of range: expected an integer 1..64");
  EXPECT_EQ(ErrorFor(GetInt, "RFT_T_INT", "ten"), "RFT_T_INT=\"ten\": expected an integer 1..64");
  for (const char* bad : {"", "1.5", "0x10", "1e3", "++1", "+-1", "12abc", "9223372036854775808"}) {
    ErrorFor(GetInt, "RFT_T_INT_ANY", bad);
  }
}

TEST_F(ConfigKindsTest, Size) {
  struct Case {
    const char* text;
    uint64_t bytes;
  };
  for (const Case& c :
       {Case{"8192", 8192}, Case{"8k", 8192}, Case{"8K", 8192}, Case{"8kb", 8192},
        Case{"8KiB", 8192}, Case{"1m", 1 << 20}, Case{"1MiB", 1 << 20}, Case{"1M", 1 << 20},
        Case{"1g", 1 << 30}, Case{"1024b", 1024}, Case{"2 k", 2048}}) {
    StatusOr<uint64_t> v = GetSize("RFT_T_SIZE", Env({{"RFT_T_SIZE", c.text}}));
    ASSERT_TRUE(v.ok()) << c.text << ": " << v.status().ToString();
    EXPECT_EQ(*v, c.bytes) << c.text;
  }
  EXPECT_EQ(ErrorFor(GetSize, "RFT_T_SIZE", "2g"),
            "RFT_T_SIZE=\"2g\": out of range: expected a size 1k..1g");
  EXPECT_EQ(ErrorFor(GetSize, "RFT_T_SIZE", "1023"),
            "RFT_T_SIZE=\"1023\": out of range: expected a size 1k..1g");
  EXPECT_EQ(ErrorFor(GetSize, "RFT_T_SIZE", "lots"),
            "RFT_T_SIZE=\"lots\": expected a size such as 8192, 8k, 1m or 2g");
  for (const char* bad : {"", "1.5k", "-8k", "8kk", "8x", "k", "8 kib b"}) {
    ErrorFor(GetSize, "RFT_T_SIZE", bad);
  }
}

TEST_F(ConfigKindsTest, SizeParserUnitsAndOverflow) {
  EXPECT_EQ(ParseSize("1t"), uint64_t{1} << 40);
  EXPECT_EQ(ParseSize("3TiB"), uint64_t{3} << 40);
  EXPECT_EQ(ParseSize("0"), 0u);
  EXPECT_EQ(ParseSize("18446744073709551615"), UINT64_MAX);
  EXPECT_FALSE(ParseSize("18446744073709551616").has_value());
  EXPECT_FALSE(ParseSize("16777216t").has_value());  // 2^64 bytes
  EXPECT_EQ(FormatSize(8192), "8k");
  EXPECT_EQ(FormatSize(1000), "1000");
  EXPECT_EQ(FormatSize(3ull << 30), "3g");
}

TEST_F(ConfigKindsTest, Duration) {
  struct Case {
    const char* text;
    nanoseconds value;
  };
  for (const Case& c : {
           Case{"250us", microseconds(250)},
           Case{"1000000ns", milliseconds(1)},
           Case{"10ms", milliseconds(10)},
           Case{"1.5s", milliseconds(1500)},
           Case{"2m", minutes(2)},
           Case{"1min", minutes(1)},
           Case{"1h", hours(1)},
           Case{"500", milliseconds(500)},  // a bare number is milliseconds
           Case{"2.5", microseconds(2500)},
           Case{"10 MS", milliseconds(10)},
           Case{".5s", milliseconds(500)},
           Case{"0.001s", milliseconds(1)},
       }) {
    StatusOr<nanoseconds> v = GetDuration("RFT_T_DURATION", Env({{"RFT_T_DURATION", c.text}}));
    ASSERT_TRUE(v.ok()) << c.text << ": " << v.status().ToString();
    EXPECT_EQ(*v, c.value) << c.text;
  }
  EXPECT_EQ(ErrorFor(GetDuration, "RFT_T_DURATION", "fast"),
            "RFT_T_DURATION=\"fast\": expected a duration such as 500ms or 10s");
  EXPECT_EQ(ErrorFor(GetDuration, "RFT_T_DURATION", "2h"),
            "RFT_T_DURATION=\"2h\": out of range: expected a duration 1us..1h");
  EXPECT_EQ(ErrorFor(GetDuration, "RFT_T_DURATION", "0.0005"),
            "RFT_T_DURATION=\"0.0005\": out of range: expected a duration 1us..1h");
  for (const char* bad : {"", "-1s", "1.2.3s", ".s", "10 seconds", "1d", "s", "1e3ms"}) {
    ErrorFor(GetDuration, "RFT_T_DURATION", bad);
  }
}

TEST_F(ConfigKindsTest, DurationParserExactness) {
  EXPECT_EQ(ParseDuration("1.000000001s"), nanoseconds(1000000001));
  EXPECT_EQ(ParseDuration("0.4ns"), nanoseconds(0));  // rounds to nearest
  EXPECT_EQ(ParseDuration("0.5ns"), nanoseconds(1));
  EXPECT_EQ(ParseDuration("9223372036854775807ns"), nanoseconds(INT64_MAX));
  EXPECT_FALSE(ParseDuration("9223372036854775808ns").has_value());
  EXPECT_FALSE(ParseDuration("99999999999999999999h").has_value());
  EXPECT_FALSE(ParseDuration("1234567890123456789012345ms").has_value());  // too many digits
  EXPECT_EQ(FormatDuration(seconds(10)), "10s");
  EXPECT_EQ(FormatDuration(microseconds(1500)), "1500us");
  EXPECT_EQ(FormatDuration(minutes(2)), "2m");
  EXPECT_EQ(FormatDuration(nanoseconds(7)), "7ns");
  EXPECT_EQ(FormatDuration(nanoseconds(0)), "0s");
  for (nanoseconds d :
       std::vector<nanoseconds>{nanoseconds(1), microseconds(3), milliseconds(1500), hours(5)}) {
    EXPECT_EQ(ParseDuration(FormatDuration(d)), d) << FormatDuration(d);
  }
}

TEST_F(ConfigKindsTest, StringAndEnum) {
  EXPECT_EQ(*GetString("RFT_T_STRING", Env({{"RFT_T_STRING", " any thing "}})), " any thing ");
  EXPECT_EQ(*GetString("RFT_T_STRING", Env({{"RFT_T_STRING", ""}})), "");
  EXPECT_EQ(*GetString("RFT_T_ENUM", Env({{"RFT_T_ENUM", "DC"}})), "dc");
  EXPECT_EQ(ErrorFor(GetString, "RFT_T_ENUM", "rd"), "RFT_T_ENUM=\"rd\": expected one of rc|ud|dc");
  ErrorFor(GetString, "RFT_T_ENUM", "");
  ErrorFor(GetString, "RFT_T_ENUM", "rc|ud");
}

TEST_F(ConfigKindsTest, ValueInMessageIsEscaped) {
  EXPECT_EQ(ErrorFor(GetString, "RFT_T_ENUM", "a\"b\n"),
            "RFT_T_ENUM=\"a\\\"b\\x0a\": expected one of rc|ud|dc");
}

TEST_F(ConfigKindsTest, CurrentValueText) {
  EXPECT_EQ(CurrentValueText("RFT_T_SIZE", kEmpty), "8k");
  EXPECT_EQ(CurrentValueText("RFT_T_SIZE", Env({{"RFT_T_SIZE", "16K"}})), "16K");
  EXPECT_EQ(CurrentValueText("RFT_T_SIZE", Env({{"RFT_T_SIZE", "huge"}})), "\"huge\" (invalid)");
  EXPECT_TRUE(IsSet("RFT_T_SIZE", Env({{"RFT_T_SIZE", ""}})));
}

TEST_F(ConfigKindsTest, CheckSettingCoversEveryKind) {
  for (const SettingInfo& s : AllSettings()) {
    EXPECT_TRUE(CheckSetting(s.name, kEmpty).ok()) << s.name;
    Status bad = CheckSetting(s.name, Env({{s.name,
                                            "\x01"
                                            "bad"}}));
    if (s.kind == Kind::kString) {
      EXPECT_TRUE(bad.ok());
    } else {
      EXPECT_EQ(bad.code(), RFT_ERR_ARG) << s.name;
      EXPECT_EQ(bad.message().rfind(s.name + "=\"\\x01bad\": ", 0), 0u) << bad.message();
    }
  }
  EXPECT_EQ(CheckSetting("RFT_T_INT", Env({{"RFT_T_INT", "99"}})).message(),
            "RFT_T_INT=\"99\": out of range: expected an integer 1..64");
}

TEST_F(ConfigKindsTest, DeathOnMisuse) {
  EXPECT_DEATH((void)GetInt("RFT_T_NOPE", kEmpty), "RFT_T_NOPE.*no such setting");
  EXPECT_DEATH((void)GetInt("RFT_T_BOOL", kEmpty), "GetInt.*RFT_T_BOOL.*is a bool");
  EXPECT_DEATH((void)GetBool("RFT_T_ENUM", kEmpty), "is an enum");
  EXPECT_DEATH((void)GetString("RFT_T_SIZE", kEmpty), "is a size");
}

// ---- Environment validation ----

TEST(ValidateEnvironmentTest, CleanEnvironment) {
  EXPECT_TRUE(ValidateEnvironment({}).ok());
  EXPECT_TRUE(
      ValidateEnvironment({"PATH=/bin", "HOME=/root", "RFT_LOG_LEVEL=debug", "RFT_PMIX_TIMEOUT=5s",
                           "UCX_TLS=rc", "rft_lower=whatever", "NOT_RFT_X=1"})
          .ok());
}

TEST(ValidateEnvironmentTest, BadValuesAreReportedWithVariableAndValue) {
  Status s = ValidateEnvironment({"RFT_LOG_LEVEL=bogus", "PATH=/bin", "RFT_PMIX_TIMEOUT=fast"});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), RFT_ERR_ARG);
  EXPECT_EQ(s.message(),
            "RFT_LOG_LEVEL=\"bogus\": expected one of error|warn|info|debug|trace; "
            "RFT_PMIX_TIMEOUT=\"fast\": expected a duration such as 500ms or 10s");
  std::vector<Status> problems =
      EnvironmentProblems({"RFT_LOG_LEVEL=bogus", "RFT_PMIX_TIMEOUT=fast", "RFT_LOG_LEVEL=info"});
  EXPECT_EQ(problems.size(), 2u);
}

TEST(ValidateEnvironmentTest, UnknownVariablesSuggestTheClosestName) {
  std::vector<Status> problems = EnvironmentProblems(
      {"RFT_LOG_LEVL=debug", "RFT_PMIX_TIMOUT=1s", "RFT_LOG_PREFIX=n", "RFT_ZZZZZZZZZZZZZZZZZ=1"});
  ASSERT_EQ(problems.size(), 4u);
  EXPECT_EQ(problems[0].message(), "unknown variable RFT_LOG_LEVL (did you mean RFT_LOG_LEVEL?)");
  EXPECT_EQ(problems[1].message(),
            "unknown variable RFT_PMIX_TIMOUT (did you mean RFT_PMIX_TIMEOUT?)");
  EXPECT_EQ(problems[2].message(),
            "unknown variable RFT_LOG_PREFIX (did you mean RFT_LOG_PREFIX_RANK?)");
  EXPECT_NE(problems[3].message().find("unknown variable RFT_ZZZZZZZZZZZZZZZZZ"),
            std::string::npos);
  EXPECT_NE(problems[3].message().find("closest known setting is RFT_"), std::string::npos)
      << problems[3].message();
  // A name without '=' (as some environ lists allow) and an empty value are still checked.
  EXPECT_EQ(EnvironmentProblems({"RFT_WHAT"}).size(), 1u);
  EXPECT_EQ(EnvironmentProblems({"RFT_LOG_LEVEL="}).size(), 1u);
}

TEST(ValidateEnvironmentTest, ProcessEnvironmentSeesSetenv) {
  ::setenv("RFT_CONFIG_TEST_MARKER", "1", 1);
  std::vector<std::string> env = ProcessEnvironment();
  ::unsetenv("RFT_CONFIG_TEST_MARKER");
  EXPECT_NE(std::find(env.begin(), env.end(), "RFT_CONFIG_TEST_MARKER=1"), env.end());
}

TEST(DefaultEnvTest, ReadsTheProcessEnvironment) {
  ::setenv("RFT_LOG_LEVEL", "trace", 1);
  StatusOr<std::string> v = GetString("RFT_LOG_LEVEL");
  ::unsetenv("RFT_LOG_LEVEL");
  EXPECT_EQ(*v, "trace");
  EXPECT_EQ(*GetString("RFT_LOG_LEVEL"), "warn");
}

}  // namespace
}  // namespace rft::config
