// The eager channel's header, carried in a SEND's 32-bit immediate data instead of in the
// payload: no header bytes on the wire, so a full slot of payload is as many packets as the
// payload alone. The source is the QP the message came on and the length the receive's
// byte_len; what remains is the kind and the credits returned, plus check bits that make a
// value from anything else (a bug, another protocol's SEND with immediate data) fail loudly.
//
// Layout (host order; the channel converts to and from the wire's big-endian __be32):
//   bits  0..15  credits returned (CreditWindow::kMaxWindow fits)
//   bits 16..17  kind: 1 data, 2 credit, 3 greeting (0 is refused)
//   bits 18..31  check: kEagerImmMagic XOR the low 18 bits folded to 14
// Every bit of the low 18 lands on exactly one check bit, so any single flipped bit is refused,
// and a random value passes with odds of 2 in 65536 (a valid kind and a matching check).
#ifndef RFT_TRANSPORT_VERBS_EAGER_IMM_H_
#define RFT_TRANSPORT_VERBS_EAGER_IMM_H_

#include <cstdint>
#include <string>

namespace rft::verbs {

enum class EagerKind : uint8_t {
  kData = 1,
  kCredit = 2,  // no payload; it takes no credit and is owed none
  // No payload, no credits: the first SEND of a QP connected after the job started, telling a
  // peer that connected first that this end is ready to receive (EagerChannel::Handshake).
  kGreeting = 3,
};

struct EagerImm {
  EagerKind kind = EagerKind::kData;
  uint32_t credits = 0;
};

inline constexpr uint32_t kEagerImmMaxCredits = 0xffff;
inline constexpr uint32_t kEagerImmMagic = 0x2e9b;  // 14 bits

constexpr uint32_t EagerImmCheck(uint32_t low18) {
  return (kEagerImmMagic ^ (low18 & 0x3fff) ^ (low18 >> 14)) & 0x3fff;
}

// `credits` must be at most kEagerImmMaxCredits (a CreditWindow never owes more).
constexpr uint32_t EncodeEagerImm(EagerKind kind, uint32_t credits) {
  const uint32_t low18 = (static_cast<uint32_t>(kind) << 16) | (credits & kEagerImmMaxCredits);
  return (EagerImmCheck(low18) << 18) | low18;
}

// True when `imm` is a well-formed header; `out` is then set. The receive path calls this and
// builds a message only on failure (DescribeBadEagerImm), so it allocates nothing.
constexpr bool DecodeEagerImm(uint32_t imm, EagerImm* out) {
  const uint32_t low18 = imm & 0x3ffff;
  const uint32_t kind = low18 >> 16;
  const uint32_t credits = low18 & kEagerImmMaxCredits;
  if ((imm >> 18) != EagerImmCheck(low18)) return false;
  if (kind == 0) return false;
  // A greeting comes before anything is owed.
  if (kind == static_cast<uint32_t>(EagerKind::kGreeting) && credits != 0) return false;
  // A credit message is sent only once half a window is owed; one returning nothing is not
  // one of ours.
  if (kind == static_cast<uint32_t>(EagerKind::kCredit) && credits == 0) return false;
  out->kind = static_cast<EagerKind>(kind);
  out->credits = credits;
  return true;
}

// Why DecodeEagerImm refused `imm`, naming the value and the field, e.g.
// "immediate data 0x00010001: check bits 0x0000, expected 0x2e9e (not an eager header)";
// "" when it is well-formed.
std::string DescribeBadEagerImm(uint32_t imm);

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_EAGER_IMM_H_
