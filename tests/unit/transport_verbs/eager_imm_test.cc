// The eager channel's header in a SEND's immediate data: every kind and credit count survives
// the round trip, and a value that is not one (a flipped bit, a kind that does not exist, a
// credit message returning nothing, another protocol's number) is refused and named.
#include "transport/verbs/eager_imm.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>

#include "transport/verbs/credit_window.h"

namespace rft::verbs {
namespace {

TEST(EagerImmTest, EveryKindAndCreditCountRoundTrips) {
  for (EagerKind kind : {EagerKind::kData, EagerKind::kCredit}) {
    for (uint32_t credits = kind == EagerKind::kCredit ? 1 : 0; credits <= kEagerImmMaxCredits;
         ++credits) {
      const uint32_t imm = EncodeEagerImm(kind, credits);
      EagerImm got;
      ASSERT_TRUE(DecodeEagerImm(imm, &got)) << DescribeBadEagerImm(imm);
      ASSERT_EQ(got.kind, kind);
      ASSERT_EQ(got.credits, credits);
      ASSERT_EQ(DescribeBadEagerImm(imm), "");
    }
  }
}

TEST(EagerImmTest, TheWidestWindowFits) {
  EXPECT_EQ(kEagerImmMaxCredits, CreditWindow::kMaxWindow);
}

TEST(EagerImmTest, AnySingleFlippedBitIsRefused) {
  for (EagerKind kind : {EagerKind::kData, EagerKind::kCredit}) {
    for (uint32_t credits = 1; credits <= kEagerImmMaxCredits; ++credits) {
      const uint32_t imm = EncodeEagerImm(kind, credits);
      for (int bit = 0; bit < 32; ++bit) {
        const uint32_t bad = imm ^ (1u << bit);
        EagerImm got;
        if (DecodeEagerImm(bad, &got)) FAIL() << std::hex << imm << " bit " << bit;
        // The message is built on the error path only; a sample of them suffices here.
        if (credits % 251 == 0) {
          ASSERT_NE(DescribeBadEagerImm(bad), "");
        }
      }
    }
  }
}

TEST(EagerImmTest, MalformedValuesAreRefusedByName) {
  EagerImm got;
  // A plain number, as another protocol might send.
  EXPECT_FALSE(DecodeEagerImm(0x00010001, &got));
  EXPECT_EQ(DescribeBadEagerImm(0x00010001),
            "immediate data 0x00010001: check bits 0x0000, expected 0x2e9e (not an eager header)");
  EXPECT_FALSE(DecodeEagerImm(0, &got));
  EXPECT_FALSE(DecodeEagerImm(0xffffffff, &got));

  // Kinds 0 and 3 with matching check bits: refused for the kind.
  for (uint32_t kind : {0u, 3u}) {
    const uint32_t low18 = (kind << 16) | 7;
    const uint32_t imm = (EagerImmCheck(low18) << 18) | low18;
    EXPECT_FALSE(DecodeEagerImm(imm, &got));
    char hex[16];
    std::snprintf(hex, sizeof(hex), "0x%08x", imm);
    EXPECT_EQ(DescribeBadEagerImm(imm), std::string("immediate data ") + hex + ": kind " +
                                            std::to_string(kind) +
                                            ", neither data (1) nor credit (2)");
  }

  const uint32_t empty_credit = EncodeEagerImm(EagerKind::kCredit, 0);
  EXPECT_FALSE(DecodeEagerImm(empty_credit, &got));
  EXPECT_NE(DescribeBadEagerImm(empty_credit).find("a credit message returning 0 credits"),
            std::string::npos);
}

TEST(EagerImmTest, FewRandomValuesPass) {
  // Every value of the top bits, with a few low patterns: about 1 in 32768 may pass.
  uint64_t passed = 0, tried = 0;
  for (uint32_t high = 0; high < (1u << 14); ++high) {
    for (uint32_t low18 : {0x00000u, 0x10001u, 0x1ffffu, 0x2abcdu, 0x3ffffu, 0x15555u}) {
      EagerImm got;
      passed += DecodeEagerImm((high << 18) | low18, &got);
      ++tried;
    }
  }
  // Exactly one check value matches each low pattern; 4 of the 6 have a valid kind and credits.
  EXPECT_EQ(passed, 4u);
  EXPECT_EQ(tried, 6u << 14);
}

}  // namespace
}  // namespace rft::verbs
