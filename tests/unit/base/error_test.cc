#include "base/error.h"

#include <climits>
#include <set>
#include <string>

#include "base/version.h"
#include "gtest/gtest.h"
#include "tests/unit/base/error_c_compat.h"

namespace {

TEST(ErrorTest, NameOfEveryCode) {
  const char* expected[] = {
      "RFT_SUCCESS",     "RFT_ERR_PROC_FAILED",  "RFT_ERR_PROC_FAILED_PENDING",
      "RFT_ERR_REVOKED", "RFT_ERR_TRUNCATE",     "RFT_ERR_ARG",
      "RFT_ERR_TIMEOUT", "RFT_ERR_IN_STATUS",    "RFT_ERR_PENDING",
      "RFT_ERR_OTHER",   "RFT_ERR_PROC_ABORTED",
  };
  ASSERT_EQ(sizeof(expected) / sizeof(expected[0]), static_cast<size_t>(RFT_ERR_LASTCODE));
  for (int code = RFT_SUCCESS; code < RFT_ERR_LASTCODE; ++code) {
    EXPECT_STREQ(rft_error_name(code), expected[code]) << "code " << code;
  }
}

TEST(ErrorTest, ValuesAreTheAbi) {
  EXPECT_EQ(RFT_SUCCESS, 0);
  EXPECT_EQ(RFT_ERR_PROC_FAILED, 1);
  EXPECT_EQ(RFT_ERR_PROC_FAILED_PENDING, 2);
  EXPECT_EQ(RFT_ERR_REVOKED, 3);
  EXPECT_EQ(RFT_ERR_TRUNCATE, 4);
  EXPECT_EQ(RFT_ERR_ARG, 5);
  EXPECT_EQ(RFT_ERR_TIMEOUT, 6);
  EXPECT_EQ(RFT_ERR_IN_STATUS, 7);
  EXPECT_EQ(RFT_ERR_PENDING, 8);
  EXPECT_EQ(RFT_ERR_OTHER, 9);
  EXPECT_EQ(RFT_ERR_PROC_ABORTED, 10);
  EXPECT_EQ(RFT_ERR_LASTCODE, 11);
}

TEST(ErrorTest, EveryCodeHasADistinctOneLineDescription) {
  std::set<std::string> seen;
  for (int code = RFT_SUCCESS; code < RFT_ERR_LASTCODE; ++code) {
    std::string s = rft_error_string(code);
    EXPECT_FALSE(s.empty()) << "code " << code;
    EXPECT_EQ(s.find('\n'), std::string::npos) << s;
    EXPECT_NE(s.back(), '.') << s;
    EXPECT_TRUE(seen.insert(s).second) << "duplicate description: " << s;
    EXPECT_NE(s, rft_error_string(-1)) << "code " << code << " looks unknown";
  }
  EXPECT_EQ(std::string(rft_error_string(RFT_ERR_PROC_FAILED)),
            "a process involved in the operation has failed");
}

TEST(ErrorTest, OutOfRangeCodesAreUnknown) {
  for (int code : {-1, static_cast<int>(RFT_ERR_LASTCODE), 12, 1000, INT_MIN, INT_MAX}) {
    EXPECT_STREQ(rft_error_name(code), "RFT_ERR_UNKNOWN") << code;
    EXPECT_STREQ(rft_error_string(code), "unknown error code") << code;
  }
}

TEST(ErrorTest, HeadersCompileAndWorkFromC) { EXPECT_EQ(rft_test_error_header_from_c(), 1); }

TEST(VersionTest, StringMatchesComponents) {
  EXPECT_STREQ(RFT_VERSION_STRING, "0.1.0");
  EXPECT_EQ(std::to_string(RFT_VERSION_MAJOR) + "." + std::to_string(RFT_VERSION_MINOR) + "." +
                std::to_string(RFT_VERSION_PATCH),
            RFT_VERSION_STRING);
}

}  // namespace
