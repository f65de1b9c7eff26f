// The failure timeline's file (RFT_TIMELINE): one JSON line per event, escaped details, nothing
// without the setting, a path that cannot be made named in the error.
#include "base/timeline.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace rft::timeline {
namespace {

std::string TempDir(const std::string& name) {
  const char* tmp = getenv("TEST_TMPDIR");
  return std::string(tmp != nullptr ? tmp : "/tmp") + "/" + name;
}

// The lines of the one file in `dir`.
std::vector<std::string> Lines(const std::string& dir) {
  std::vector<std::string> files;
  if (DIR* d = opendir(dir.c_str()); d != nullptr) {
    for (dirent* entry; (entry = readdir(d)) != nullptr;) {
      if (std::string(entry->d_name).ends_with(".jsonl")) files.push_back(entry->d_name);
    }
    closedir(d);
  }
  EXPECT_EQ(files.size(), 1u) << dir;
  std::vector<std::string> lines;
  if (files.size() != 1) return lines;
  std::ifstream in(dir + "/" + files[0]);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(TimelineTest, UnsetRecordsNothing) {
  unsetenv("RFT_TIMELINE");
  ASSERT_TRUE(Open(3, 8).ok());
  EXPECT_FALSE(Enabled());
  Record(Event::kFailed, 1, "heartbeat");  // no file, no crash
}

TEST(TimelineTest, EachEventIsOneJsonLineInTheRanksFile) {
  const std::string dir = TempDir("timeline-lines");
  setenv("RFT_TIMELINE", dir.c_str(), 1);
  ASSERT_TRUE(Open(3, 8).ok());
  ASSERT_TRUE(Enabled());
  Record(Event::kSuspected, 5, "no heartbeat");
  Record(Event::kRevoked, 42, "say \"hi\"\\\n");
  Close();
  EXPECT_FALSE(Enabled());
  Record(Event::kFailed, 6, "after the close: dropped");
  unsetenv("RFT_TIMELINE");
  const std::vector<std::string> lines = Lines(dir);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find(R"("rank":3,"event":"started","subject":8,"detail":"")"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find(R"("event":"suspected","subject":5,"detail":"no heartbeat"})"),
            std::string::npos)
      << lines[1];
  EXPECT_NE(lines[2].find(R"("subject":42,"detail":"say \"hi\"\\\u000a"})"), std::string::npos)
      << lines[2];
  EXPECT_NE(lines[3].find(R"("event":"finalized","subject":3)"), std::string::npos) << lines[3];
  EXPECT_EQ(lines[0].rfind("{\"ns\":", 0), 0u) << lines[0];
  // The file is named by rank and pid.
  std::ifstream named(dir + "/rank-3-" + std::to_string(getpid()) + ".jsonl");
  EXPECT_TRUE(named.good());
}

TEST(TimelineTest, ALongDetailIsCutNotOverrun) {
  const std::string dir = TempDir("timeline-long");
  setenv("RFT_TIMELINE", dir.c_str(), 1);
  ASSERT_TRUE(Open(0, 1).ok());
  Record(Event::kAgreed, 0, std::string(5000, '"'));
  Close();
  unsetenv("RFT_TIMELINE");
  const std::vector<std::string> lines = Lines(dir);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_LT(lines[1].size(), 400u);
  EXPECT_TRUE(lines[1].ends_with("\"}")) << lines[1];  // still whole JSON: no escape cut in two
  EXPECT_FALSE(lines[1].ends_with("\\\"}")) << lines[1];
}

TEST(TimelineTest, ADirectoryThatCannotBeMadeIsNamed) {
  setenv("RFT_TIMELINE", "/proc/no/such/dir", 1);
  const Status opened = Open(0, 1);
  unsetenv("RFT_TIMELINE");
  EXPECT_FALSE(opened.ok());
  EXPECT_NE(opened.ToString().find("RFT_TIMELINE=/proc/no/such/dir"), std::string::npos)
      << opened.ToString();
  EXPECT_FALSE(Enabled());
}

}  // namespace
}  // namespace rft::timeline
