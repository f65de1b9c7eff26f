// The eager channel's header in a SEND's immediate data: every kind and credit count survives
// the round trip, and a value that is not one (a flipped bit, a kind that does not exist, a
// credit message returning nothing, a greeting returning something, another protocol's number)
// is refused and named.
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
  const uint32_t greeting = EncodeEagerImm(EagerKind::kGreeting, 0);
  EagerImm got;
  ASSERT_TRUE(DecodeEagerImm(greeting, &got)) << DescribeBadEagerImm(greeting);
  EXPECT_EQ(got.kind, EagerKind::kGreeting);
  EXPECT_EQ(got.credits, 0u);
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
  const uint32_t greeting = EncodeEagerImm(EagerKind::kGreeting, 0);
  for (int bit = 0; bit < 32; ++bit) {
    EagerImm got;
    EXPECT_FALSE(DecodeEagerImm(greeting ^ (1u << bit), &got)) << "bit " << bit;
    EXPECT_NE(DescribeBadEagerImm(greeting ^ (1u << bit)), "") << "bit " << bit;
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

  // Kind 0 with matching check bits: refused for the kind.
  const uint32_t kind0 = (EagerImmCheck(7) << 18) | 7;
  EXPECT_FALSE(DecodeEagerImm(kind0, &got));
  char hex[16];
  std::snprintf(hex, sizeof(hex), "0x%08x", kind0);
  EXPECT_EQ(DescribeBadEagerImm(kind0),
            std::string("immediate data ") + hex +
                ": kind 0, none of data (1), credit (2) or greeting (3)");

  // A greeting returning credits: nothing can be owed before it.
  const uint32_t greeting7 = EncodeEagerImm(EagerKind::kGreeting, 7);
  EXPECT_FALSE(DecodeEagerImm(greeting7, &got));
  std::snprintf(hex, sizeof(hex), "0x%08x", greeting7);
  EXPECT_EQ(DescribeBadEagerImm(greeting7),
            std::string("immediate data ") + hex + ": a greeting returning 7 credits, expected 0");

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
