// Fuzzes the agreement's message decoder (agreement/era_message.h), then feeds what it accepts
// to an EraNode, as the agreement service does with a peer's bytes.
//
// Input: members byte (1..64 members), self byte, then the message bytes. Properties:
// - DecodeEraMessage accepts or refuses with RFT_ERR_ARG and a message; what it accepts
//   re-encodes to exactly the input (the form is canonical: sorted disjoint intervals within the
//   members, no trailing bytes) and decodes again to the same message;
// - an EraNode given the message (from every other member in turn, before and after starting
//   its agreement) sends only to live members other than itself, learns failed only members,
//   and decides each agreement at most once.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <set>
#include <span>
#include <variant>
#include <vector>

#include "agreement/era_message.h"
#include "agreement/era_node.h"
#include "fuzz/fuzz_check.h"

namespace {

using rft::Rank;
using rft::RankSet;
using rft::agreement::AgreeValue;
using rft::agreement::Decide;
using rft::agreement::DecodeEraMessage;
using rft::agreement::EncodeEraMessage;
using rft::agreement::EraAction;
using rft::agreement::EraMessage;
using rft::agreement::EraNode;
using rft::agreement::LearnFailed;
using rft::agreement::SendEra;

void CheckActions(const EraNode& node, const std::vector<EraAction>& actions,
                  std::set<uint64_t>* decided) {
  for (const EraAction& action : actions) {
    if (const auto* send = std::get_if<SendEra>(&action)) {
      FUZZ_CHECK(send->to < node.size() && send->to != node.self());
    } else if (const auto* learned = std::get_if<LearnFailed>(&action)) {
      FUZZ_CHECK(learned->member < node.size() && node.failed().Contains(learned->member));
    } else {
      FUZZ_CHECK(decided->insert(std::get<Decide>(action).seq).second);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const uint32_t members = 1 + data[0] % 64;
  const Rank self = data[1] % members;
  const std::span<const std::byte> bytes =
      std::as_bytes(std::span<const uint8_t>(data + 2, size - 2));
  auto decoded = DecodeEraMessage(bytes, members);
  if (!decoded.ok()) {
    FUZZ_CHECK(decoded.status().code() == RFT_ERR_ARG);
    FUZZ_CHECK(!decoded.status().message().empty());
    return 0;
  }
  std::vector<std::byte> again;
  EncodeEraMessage(*decoded, &again);
  FUZZ_CHECK(again.size() == bytes.size() &&
             std::memcmp(again.data(), bytes.data(), again.size()) == 0);
  auto twice = DecodeEraMessage(again, members);
  FUZZ_CHECK(twice.ok() && *twice == *decoded);

  EraNode node(self, members, RankSet());
  std::set<uint64_t> decided;
  std::vector<EraAction> actions;
  for (int round = 0; round < 2; ++round) {
    for (Rank from = 0; from < members; ++from) {
      if (from == self) continue;
      actions.clear();
      node.OnMessage(from, *decoded, &actions);
      CheckActions(node, actions, &decided);
    }
    if (round == 0) {
      actions.clear();
      node.Start(AgreeValue{}, &actions);
      CheckActions(node, actions, &decided);
    }
  }
  return 0;
}
