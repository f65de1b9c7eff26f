#include "agreement/era_message.h"

#include <algorithm>
#include <string>

#include "base/byte_order.h"

namespace rft::agreement {

void AgreeValue::Merge(const AgreeValue& other) {
  flag &= other.flag;
  max = std::max(max, other.max);
  // Members contribute words of one length; a shorter one ANDs as if its missing words were 0.
  if (other.bits.size() < bits.size()) bits.resize(other.bits.size());
  for (size_t i = 0; i < bits.size(); ++i) bits[i] &= other.bits[i];
  acked &= other.acked;
  undecided_floor = std::min(undecided_floor, other.undecided_floor);
}

namespace {

// Layout (little-endian): kind u8, seq u64, failed set, then for kUp and kDecided: flag u32,
// max u32, undecided_floor u64, word count u32, words u64..., acked set. A set is an interval
// count u32 and (first u32, last u32) per interval, canonical (sorted, disjoint, non-adjacent).

class Writer {
 public:
  explicit Writer(std::vector<std::byte>* out) : out_(out) {}
  template <class T>
  void Put(T value) {
    const size_t at = out_->size();
    out_->resize(at + sizeof(T));
    StoreLittleEndian<T>(*out_, at, value);
  }
  void PutSet(const RankSet& set) {
    Put<uint32_t>(static_cast<uint32_t>(set.intervals().size()));
    for (const RankSet::Interval& run : set.intervals()) {
      Put<uint32_t>(run.first);
      Put<uint32_t>(run.last);
    }
  }

 private:
  std::vector<std::byte>* out_;
};

class Reader {
 public:
  explicit Reader(std::span<const std::byte> in) : in_(in) {}
  template <class T>
  Status Get(const char* what, T* value) {
    if (in_.size() - at_ < sizeof(T)) {
      return ArgError(std::string("agreement message: ") + what + " past the end at byte " +
                      std::to_string(at_) + " of " + std::to_string(in_.size()));
    }
    *value = LoadLittleEndian<T>(in_, at_);
    at_ += sizeof(T);
    return Status::Ok();
  }
  Status GetSet(const char* what, uint32_t members, RankSet* set) {
    uint32_t count = 0;
    RFT_RETURN_IF_ERROR(Get(what, &count));
    if (count > kMaxSetIntervals || count > (in_.size() - at_) / 8) {
      return ArgError(std::string("agreement message: ") + what + " has " + std::to_string(count) +
                      " intervals; expected at most " +
                      std::to_string(std::min<size_t>(kMaxSetIntervals, (in_.size() - at_) / 8)));
    }
    Rank previous_end = 0;
    for (uint32_t i = 0; i < count; ++i) {
      uint32_t first = 0;
      uint32_t last = 0;
      RFT_RETURN_IF_ERROR(Get(what, &first));
      RFT_RETURN_IF_ERROR(Get(what, &last));
      // Canonical: increasing, non-empty, not touching the previous run, within the members.
      if (first >= last || last > members || (i > 0 && first <= previous_end)) {
        return ArgError(std::string("agreement message: ") + what + " interval [" +
                        std::to_string(first) + ", " + std::to_string(last) +
                        ") is not canonical for " + std::to_string(members) + " members");
      }
      set->InsertRange(first, last);
      previous_end = last;
    }
    return Status::Ok();
  }
  bool AtEnd() const { return at_ == in_.size(); }
  size_t remaining() const { return in_.size() - at_; }

 private:
  std::span<const std::byte> in_;
  size_t at_ = 0;
};

}  // namespace

void EncodeEraMessage(const EraMessage& message, std::vector<std::byte>* out) {
  Writer w(out);
  w.Put<uint8_t>(static_cast<uint8_t>(message.kind));
  w.Put<uint64_t>(message.seq);
  w.PutSet(message.failed);
  if (message.kind == EraMessage::Kind::kView) return;
  const AgreeValue& v = message.value;
  w.Put<uint32_t>(v.flag);
  w.Put<uint32_t>(v.max);
  w.Put<uint64_t>(v.undecided_floor);
  w.Put<uint32_t>(static_cast<uint32_t>(v.bits.size()));
  for (uint64_t word : v.bits) w.Put<uint64_t>(word);
  w.PutSet(v.acked);
}

StatusOr<EraMessage> DecodeEraMessage(std::span<const std::byte> bytes, uint32_t members) {
  Reader r(bytes);
  EraMessage message;
  uint8_t kind = 0;
  RFT_RETURN_IF_ERROR(r.Get("kind", &kind));
  if (kind < 1 || kind > 3) {
    return ArgError("agreement message: kind " + std::to_string(kind) +
                    "; expected 1 (up), 2 (decided) or 3 (view)");
  }
  message.kind = static_cast<EraMessage::Kind>(kind);
  RFT_RETURN_IF_ERROR(r.Get("seq", &message.seq));
  RFT_RETURN_IF_ERROR(r.GetSet("failed set", members, &message.failed));
  if (message.kind != EraMessage::Kind::kView) {
    AgreeValue& v = message.value;
    RFT_RETURN_IF_ERROR(r.Get("flag", &v.flag));
    RFT_RETURN_IF_ERROR(r.Get("max", &v.max));
    RFT_RETURN_IF_ERROR(r.Get("undecided floor", &v.undecided_floor));
    uint32_t words = 0;
    RFT_RETURN_IF_ERROR(r.Get("word count", &words));
    if (words > kMaxValueWords || words > r.remaining() / 8) {
      return ArgError("agreement message: " + std::to_string(words) +
                      " value words; expected at most " +
                      std::to_string(std::min<size_t>(kMaxValueWords, r.remaining() / 8)));
    }
    v.bits.resize(words);
    for (uint64_t& word : v.bits) RFT_RETURN_IF_ERROR(r.Get("value word", &word));
    RFT_RETURN_IF_ERROR(r.GetSet("acknowledged set", members, &v.acked));
  }
  if (!r.AtEnd()) {
    return ArgError("agreement message: " + std::to_string(r.remaining()) + " bytes after the end");
  }
  return message;
}

}  // namespace rft::agreement
