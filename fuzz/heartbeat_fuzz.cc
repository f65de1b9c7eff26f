// Fuzzes the heartbeat slot word (detector/heartbeat_ring.h) and the heartbeat core that reads
// it. The word is written into this process's memory by a one-sided put from a peer, and observe
// requests come from peers, so both are untrusted input.
//
// Input (FuzzedDataProvider): a job size, self, then a sequence of events: timer ticks with an
// arbitrary slot word (sometimes a fresh word of the observed process), failures and observe
// requests with arbitrary ranks, generations and requester sizes, and growths of the job.
// Properties:
// - HeartbeatWordWriter inverts EncodeHeartbeatWord for every writer <= kMaxRank and counter,
//   and reads the never-written word 0 as kInvalidRank;
// - a tick that shows a fresh word of the observed process never suspects it;
// - every action targets a live rank of the job other than self; puts carry self's word with a
//   strictly increasing counter (a hand-over put repeats it, to the former observer); observe
//   requests carry strictly increasing generations; nothing is suspected twice; observer() and
//   observed() stay live ranks of the job or kInvalidRank.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstddef>
#include <cstdint>
#include <set>
#include <variant>
#include <vector>

#include "detector/heartbeat_ring.h"
#include "fuzz/fuzz_check.h"

namespace {

using rft::kInvalidRank;
using rft::kMaxRank;
using rft::Rank;
using rft::detector::EncodeHeartbeatWord;
using rft::detector::HeartbeatAction;
using rft::detector::HeartbeatConfig;
using rft::detector::HeartbeatRing;
using rft::detector::HeartbeatWordWriter;
using rft::detector::PutHeartbeat;
using rft::detector::SendObserveRequest;
using rft::detector::Suspect;

void CheckWord(uint64_t word, Rank writer, uint32_t counter) {
  const uint32_t high = static_cast<uint32_t>(word >> 32);
  FUZZ_CHECK(HeartbeatWordWriter(word) == (high == 0 ? kInvalidRank : high - 1));
  if (high != 0) {
    FUZZ_CHECK(EncodeHeartbeatWord(HeartbeatWordWriter(word), static_cast<uint32_t>(word)) == word);
  }
  if (writer <= kMaxRank) {
    const uint64_t encoded = EncodeHeartbeatWord(writer, counter);
    FUZZ_CHECK(HeartbeatWordWriter(encoded) == writer);
    FUZZ_CHECK(static_cast<uint32_t>(encoded) == counter);
    FUZZ_CHECK(encoded != 0);  // 0 is reserved for "never written"
  }
}

bool LiveOther(const HeartbeatRing& ring, Rank r) {
  return r < ring.size() && r != ring.self() && !ring.failed().Contains(r);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  CheckWord(in.ConsumeIntegral<uint64_t>(), in.ConsumeIntegral<Rank>(),
            in.ConsumeIntegral<uint32_t>());

  Rank n = in.ConsumeIntegralInRange<Rank>(1, 12);
  const Rank self = in.ConsumeIntegralInRange<Rank>(0, n - 1);
  const HeartbeatConfig config{1000, 5000};
  int64_t now = in.ConsumeIntegralInRange<int64_t>(0, int64_t{1} << 40);
  HeartbeatRing ring(self, n, config, now);

  std::vector<HeartbeatAction> out;
  std::set<Rank> suspected;
  uint32_t last_counter = 0;
  uint32_t last_generation = 0;
  uint32_t fresh_counter = 0;  // the observed process's own counter, for fresh words
  while (in.remaining_bytes() > 0) {
    out.clear();
    const Rank observed_before = ring.observed();
    bool fresh_word_of_observed = false;
    switch (in.ConsumeIntegralInRange<int>(0, 4)) {
      case 0:
      case 1: {
        now += in.ConsumeIntegralInRange<int64_t>(0, 4 * config.timeout_ns);
        uint64_t word;
        if (in.ConsumeBool() && observed_before != kInvalidRank) {
          word = EncodeHeartbeatWord(observed_before, ++fresh_counter);
          fresh_word_of_observed = true;
        } else {
          word = in.ConsumeIntegral<uint64_t>();  // any bytes a peer may have put
        }
        ring.OnTimer(now, word, &out);
        break;
      }
      case 2:
        ring.OnFailure(in.ConsumeIntegralInRange<Rank>(0, n), now, &out);  // n: not a rank
        break;
      case 3: {
        const Rank from = in.ConsumeBool() ? in.ConsumeIntegral<Rank>()
                                           : in.ConsumeIntegralInRange<Rank>(0, n - 1);
        const uint32_t generation = in.ConsumeIntegral<uint32_t>();
        ring.OnObserveRequest(from, generation, in.ConsumeIntegralInRange<Rank>(1, ring.size()),
                              now, &out);
        break;
      }
      case 4:
        if (n < 40) {
          n += in.ConsumeIntegralInRange<Rank>(0, 4);
          ring.Grow(n, now, in.ConsumeIntegralInRange<int64_t>(0, 4 * config.timeout_ns), &out);
          FUZZ_CHECK(ring.size() == n);
        }
        break;
    }
    for (const HeartbeatAction& action : out) {
      if (const auto* put = std::get_if<PutHeartbeat>(&action)) {
        FUZZ_CHECK(put->observer < n && put->observer != self);
        FUZZ_CHECK(HeartbeatWordWriter(put->word) == self);
        const auto counter = static_cast<uint32_t>(put->word);
        // A hand-over put repeats the word just put to the observer, into another slot.
        FUZZ_CHECK(put->handover ? counter == last_counter : counter > last_counter);
        if (put->handover) FUZZ_CHECK(put->observer == ring.former_observer());
        last_counter = counter;
      } else if (const auto* suspect = std::get_if<Suspect>(&action)) {
        FUZZ_CHECK(!fresh_word_of_observed);
        FUZZ_CHECK(suspect->rank == observed_before);
        FUZZ_CHECK(suspect->rank < n && suspect->rank != self);
        FUZZ_CHECK(suspected.insert(suspect->rank).second);
      } else {
        const auto& request = std::get<SendObserveRequest>(action);
        FUZZ_CHECK(LiveOther(ring, request.to));
        FUZZ_CHECK(request.generation > last_generation);
        last_generation = request.generation;
      }
    }
    // The puts of this event went to the observer of that moment (and the former one in a
    // hand-over); the first of the last batch is still the observer unless the same event then
    // found it failed (in a job of two, the observed process is also the observer: a tick puts
    // to it, then suspects it).
    for (auto it = out.rbegin(); it != out.rend(); ++it) {
      if (const auto* put = std::get_if<PutHeartbeat>(&*it)) {
        const bool handover = put->observer == ring.former_observer() && it + 1 != out.rend() &&
                              std::holds_alternative<PutHeartbeat>(*(it + 1));
        if (handover) continue;
        FUZZ_CHECK(put->observer == ring.observer() || ring.failed().Contains(put->observer));
        break;
      }
    }
    FUZZ_CHECK(ring.former_observer() == kInvalidRank || ring.former_observer() != ring.observer());
    FUZZ_CHECK(ring.observer() == kInvalidRank || LiveOther(ring, ring.observer()));
    FUZZ_CHECK(ring.observed() == kInvalidRank || LiveOther(ring, ring.observed()));
  }
  return 0;
}
