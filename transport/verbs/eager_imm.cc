#include "transport/verbs/eager_imm.h"

#include <cstdio>

namespace rft::verbs {
namespace {

std::string Hex(uint32_t value, int digits) {
  char text[16];
  std::snprintf(text, sizeof(text), "0x%0*x", digits, value);
  return text;
}

}  // namespace

std::string DescribeBadEagerImm(uint32_t imm) {
  const std::string what = "immediate data " + Hex(imm, 8) + ": ";
  const uint32_t low18 = imm & 0x3ffff;
  const uint32_t kind = low18 >> 16;
  if ((imm >> 18) != EagerImmCheck(low18)) {
    return what + "check bits " + Hex(imm >> 18, 4) + ", expected " + Hex(EagerImmCheck(low18), 4) +
           " (not an eager header)";
  }
  if (kind == 0) return what + "kind 0, none of data (1), credit (2) or greeting (3)";
  if (kind == static_cast<uint32_t>(EagerKind::kCredit) && (low18 & kEagerImmMaxCredits) == 0) {
    return what + "a credit message returning 0 credits";
  }
  if (kind == static_cast<uint32_t>(EagerKind::kGreeting) && (low18 & kEagerImmMaxCredits) != 0) {
    return what + "a greeting returning " + std::to_string(low18 & kEagerImmMaxCredits) +
           " credits, expected 0";
  }
  return "";
}

}  // namespace rft::verbs
