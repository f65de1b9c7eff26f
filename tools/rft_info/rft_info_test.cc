// Runs the rft_info binary and checks what it prints, in both formats and with bad settings.
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/config.h"
#include "gtest/gtest.h"
#include "tools/rft_info/json_writer.h"

extern char** environ;

namespace rft::info {
namespace {

struct Result {
  int exit_code = -1;
  std::string out;
  std::string err;
};

std::string BinaryPath() {
  const char* srcdir = std::getenv("TEST_SRCDIR");
  const char* workspace = std::getenv("TEST_WORKSPACE");
  return std::string(srcdir ? srcdir : ".") + "/" + (workspace ? workspace : "rft") +
         "/tools/rft_info/rft_info";
}

// Runs rft_info with `args`, with the test's environment minus every RFT_* variable plus `env`.
Result RunInfo(std::vector<std::string> args, std::vector<std::string> env = {}) {
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "RFT_", 4) != 0) environment.emplace_back(*e);
  }
  environment.insert(environment.end(), env.begin(), env.end());
  std::string path = BinaryPath();
  args.insert(args.begin(), path);
  std::vector<char*> argv, envp;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  for (std::string& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  EXPECT_EQ(::pipe(out_pipe), 0);
  EXPECT_EQ(::pipe(err_pipe), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out_pipe[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_pipe[1], STDERR_FILENO);
  posix_spawn_file_actions_addclose(&actions, out_pipe[0]);
  posix_spawn_file_actions_addclose(&actions, err_pipe[0]);
  pid_t pid = -1;
  int rc = posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out_pipe[1]);
  ::close(err_pipe[1]);
  Result result;
  EXPECT_EQ(rc, 0) << "spawn " << path << ": " << std::strerror(rc);
  if (rc != 0) return result;

  // Drain both pipes together so neither can fill up and stall the child.
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  while (open_fds > 0) {
    if (::poll(fds, 2, -1) < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      ssize_t n = ::read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

bool HasLineStartingWith(const std::string& text, std::string_view prefix) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (std::string_view(text).substr(pos, end - pos).starts_with(prefix)) return true;
    pos = end + 1;
  }
  return false;
}

// A strict recursive-descent JSON checker: enough to prove --json prints one valid object.
class JsonChecker {
 public:
  explicit JsonChecker(std::string_view text) : s_(text) {}
  bool ValidObject() {
    SkipSpace();
    if (Peek() != '{' || !Value()) return false;
    SkipSpace();
    return i_ == s_.size();
  }

 private:
  char Peek() const { return i_ < s_.size() ? s_[i_] : '\0'; }
  void SkipSpace() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\t')) ++i_;
  }
  bool Literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }
  bool String() {
    if (Peek() != '"') return false;
    for (++i_; i_ < s_.size(); ++i_) {
      unsigned char c = static_cast<unsigned char>(s_[i_]);
      if (c == '"') {
        ++i_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        ++i_;
        if (Peek() == 'u') {
          for (int k = 0; k < 4; ++k) {
            ++i_;
            if (!std::isxdigit(static_cast<unsigned char>(Peek()))) return false;
          }
        } else if (std::strchr("\"\\/bfnrt", Peek()) == nullptr || Peek() == '\0') {
          return false;
        }
      }
    }
    return false;
  }
  bool Number() {
    size_t start = i_;
    if (Peek() == '-') ++i_;
    while (std::isdigit(static_cast<unsigned char>(Peek()))) ++i_;
    return i_ > start && std::isdigit(static_cast<unsigned char>(s_[i_ - 1]));
  }
  bool Value() {
    SkipSpace();
    switch (Peek()) {
      case '{': {
        ++i_;
        SkipSpace();
        if (Peek() == '}') return ++i_, true;
        while (true) {
          SkipSpace();
          if (!String()) return false;
          SkipSpace();
          if (Peek() != ':') return false;
          ++i_;
          if (!Value()) return false;
          SkipSpace();
          if (Peek() == '}') return ++i_, true;
          if (Peek() != ',') return false;
          ++i_;
        }
      }
      case '[': {
        ++i_;
        SkipSpace();
        if (Peek() == ']') return ++i_, true;
        while (true) {
          if (!Value()) return false;
          SkipSpace();
          if (Peek() == ']') return ++i_, true;
          if (Peek() != ',') return false;
          ++i_;
        }
      }
      case '"':
        return String();
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        return Number();
    }
  }

  std::string_view s_;
  size_t i_ = 0;
};

TEST(JsonCheckerTest, RejectsBrokenJson) {
  EXPECT_TRUE(JsonChecker(R"({"a":[1,-2,"x\n",true,null,{}],"b":{"c":false}})").ValidObject());
  for (const char* bad : {"", "{", "{\"a\":}", "{\"a\":1,}", "[1]", "{\"a\":1}x",
                          "{\"a\":\"\x01\"}", "{\"a\":tru}", "{\"a\":\"\\q\"}", "{'a':1}"}) {
    EXPECT_FALSE(JsonChecker(bad).ValidObject()) << bad;
  }
}

TEST(JsonWriterTest, QuotesAndEscapes) {
  EXPECT_EQ(JsonWriter::Quote("plain"), "\"plain\"");
  EXPECT_EQ(JsonWriter::Quote("a\"b\\c\nd\te\x01"), "\"a\\\"b\\\\c\\nd\\te\\u0001\"");
  EXPECT_EQ(JsonWriter::Quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // valid UTF-8 kept
  EXPECT_EQ(JsonWriter::Quote("x\xff"
                              "y"),
            "\"x\\ufffdy\"");                                                 // stray byte
  EXPECT_EQ(JsonWriter::Quote("\xc0\xaf"), "\"\\ufffd\\ufffd\"");             // overlong '/'
  EXPECT_EQ(JsonWriter::Quote("\xe2\x82"), "\"\\ufffd\\ufffd\"");             // truncated
  EXPECT_EQ(JsonWriter::Quote("\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\"");  // surrogate
}

TEST(JsonWriterTest, NestingAndCommas) {
  JsonWriter w;
  w.BeginObject();
  w.Field("a", 1);
  w.Key("b");
  w.BeginArray();
  w.String("x");
  w.BeginObject();
  w.EndObject();
  w.Null();
  w.EndArray();
  w.Field("c", true);
  w.EndObject();
  EXPECT_EQ(w.str(), R"({"a":1,"b":["x",{},null],"c":true})");
}

TEST(RftInfoTest, HumanReport) {
  Result r = RunInfo({});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(HasLineStartingWith(r.out, "rft: version 0.1.0")) << r.out;
  ASSERT_FALSE(config::AllSettings().empty());
  for (const config::SettingInfo& s : config::AllSettings()) {
    // An empty default (RFT_NET_DEVICE's) is shown as "", not as nothing.
    const std::string shown = s.default_text.empty() ? "\"\"" : s.default_text;
    EXPECT_TRUE(HasLineStartingWith(r.out, "  " + s.name + " = " + shown + " (default)"))
        << s.name << " missing from:\n"
        << r.out;
    EXPECT_NE(r.out.find(s.doc), std::string::npos) << s.name;
    EXPECT_NE(r.out.find("allowed " + s.allowed), std::string::npos) << s.name;
  }
  EXPECT_TRUE(HasLineStartingWith(r.out, "verbs: ")) << r.out;
  EXPECT_TRUE(HasLineStartingWith(r.out, "ucx: version ")) << r.out;
  // Every machine has at least UCX's loopback transport.
  EXPECT_TRUE(HasLineStartingWith(r.out, "ucx: transport self/")) << r.out;
  EXPECT_TRUE(HasLineStartingWith(r.out, "hwloc: ")) << r.out;
  EXPECT_EQ(r.out.find("hwloc: error"), std::string::npos) << r.out;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

TEST(RftInfoTest, NoRdmaDeviceLine) {
  // This check holds only where libibverbs sees no device (the CI machines have none); on an RDMA
  // host the device lines are checked instead.
  Result r = RunInfo({});
  if (r.out.find("verbs: device ") == std::string::npos) {
    EXPECT_TRUE(HasLineStartingWith(r.out, "verbs: none: no RDMA device")) << r.out;
  } else {
    EXPECT_TRUE(HasLineStartingWith(r.out, "verbs: ")) << r.out;
    EXPECT_NE(r.out.find(" port "), std::string::npos) << r.out;
  }
}

TEST(RftInfoTest, SetValuesAreShown) {
  Result r =
      RunInfo({}, {"RFT_PMIX_TIMEOUT=250ms", "RFT_LOG_LEVEL=debug", "RFT_NET_DEVICE=mlx5_0:1"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_TRUE(HasLineStartingWith(r.out, "  RFT_PMIX_TIMEOUT = 250ms (set)")) << r.out;
  EXPECT_TRUE(HasLineStartingWith(r.out, "  RFT_LOG_LEVEL = debug (set)")) << r.out;
  EXPECT_TRUE(HasLineStartingWith(r.out, "  RFT_NET_DEVICE = mlx5_0:1 (set)")) << r.out;
  EXPECT_EQ(r.err.find("warning"), std::string::npos) << r.err;
}

TEST(RftInfoTest, BadValueIsReportedNamingTheVariable) {
  Result r = RunInfo({}, {"RFT_LOG_LEVEL=bogus"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("rft_info: warning: RFT_LOG_LEVEL=\"bogus\": expected one of "
                       "error|warn|info|debug|trace"),
            std::string::npos)
      << r.err;
  EXPECT_TRUE(HasLineStartingWith(r.out, "  RFT_LOG_LEVEL = \"bogus\" (invalid)")) << r.out;
  EXPECT_NE(r.out.find("invalid: RFT_LOG_LEVEL=\"bogus\""), std::string::npos) << r.out;
}

TEST(RftInfoTest, UnknownVariableIsReportedWithASuggestion) {
  Result r = RunInfo({}, {"RFT_PMIX_TIMOUT=5s"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.err.find("rft_info: warning: unknown variable RFT_PMIX_TIMOUT (did you mean "
                       "RFT_PMIX_TIMEOUT?)"),
            std::string::npos)
      << r.err;
}

TEST(RftInfoTest, JsonReport) {
  Result r = RunInfo({"--json"}, {"RFT_LOG_LEVEL=bo\"gus\xff", "RFT_NOPE=1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  ASSERT_FALSE(r.out.empty());
  EXPECT_EQ(r.out.back(), '\n');
  EXPECT_EQ(r.out.find('\n'), r.out.size() - 1) << "one line";
  EXPECT_TRUE(JsonChecker(r.out).ValidObject()) << r.out;
  EXPECT_NE(r.out.find(R"("rft_version":"0.1.0")"), std::string::npos);
  for (const config::SettingInfo& s : config::AllSettings()) {
    EXPECT_NE(r.out.find("{\"name\":\"" + s.name + "\""), std::string::npos) << s.name;
  }
  EXPECT_NE(r.out.find(R"("value":"bo\"gus\ufffd","set":true,"valid":false)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(R"("warnings":["RFT_LOG_LEVEL=\"bo\\\"gus\ufffd\": expected one of)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("unknown variable RFT_NOPE"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"("verbs":{"devices":[)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"("ucx":{"version":")"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(R"("hwloc":{"api_version":")"), std::string::npos) << r.out;
  // The warnings also reach stderr, outside the JSON.
  EXPECT_NE(r.err.find("rft_info: warning: unknown variable RFT_NOPE"), std::string::npos);
}

TEST(RftInfoTest, Arguments) {
  Result help = RunInfo({"--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("usage: rft_info"), std::string::npos);
  Result version = RunInfo({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_EQ(version.out, "0.1.0\n");
  Result bad = RunInfo({"--bogus"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("unknown argument \"--bogus\""), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace rft::info
