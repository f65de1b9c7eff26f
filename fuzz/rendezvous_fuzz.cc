// Fuzzes the same-node rendezvous payload decoders (transport/wire/rendezvous.h): a peer's
// descriptor names memory the receiver then reads with process_vm_readv, so a decoder that
// accepted a wrong-sized payload or garbled a field would point the copy at the wrong place.
//
// Input: the payload bytes, handed to both decoders. Properties:
// - each decoder accepts exactly the payloads of its documented size and leaves `*out` untouched
//   otherwise;
// - an accepted payload decodes to the fields an independent little-endian reading gives and
//   re-encodes to the same bytes;
// - any descriptor and done built from the input survive encode -> decode intact.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

#include "fuzz/fuzz_check.h"
#include "transport/wire/rendezvous.h"

namespace {

using rft::transport::DecodeRendezvousDescriptor;
using rft::transport::DecodeRendezvousDone;
using rft::transport::EncodeRendezvousDescriptor;
using rft::transport::EncodeRendezvousDone;
using rft::transport::kRendezvousDescriptorSize;
using rft::transport::kRendezvousDoneSize;
using rft::transport::RendezvousDescriptor;
using rft::transport::RendezvousDone;

// Byte-by-byte little-endian read, deliberately not the memcpy loads of the code under test.
uint64_t ReadLe64(const uint8_t* p) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v |= static_cast<uint64_t>(p[i]) << (8 * i);
  return v;
}

constexpr uint64_t kPoison = 0xeeeeeeeeeeeeeeee;

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto payload = std::as_bytes(std::span<const uint8_t>(data, size));

  RendezvousDescriptor descriptor{kPoison, kPoison, kPoison, kPoison};
  const bool descriptor_ok = DecodeRendezvousDescriptor(payload, &descriptor);
  const bool reserved_zero = size == kRendezvousDescriptorSize && data[36] == 0 && data[37] == 0 &&
                             data[38] == 0 && data[39] == 0;
  FUZZ_CHECK(descriptor_ok == reserved_zero);
  if (!descriptor_ok) {
    FUZZ_CHECK((descriptor == RendezvousDescriptor{kPoison, kPoison, kPoison, kPoison}));
  } else {
    FUZZ_CHECK(descriptor.address == ReadLe64(data));
    FUZZ_CHECK(descriptor.length == ReadLe64(data + 8));
    FUZZ_CHECK(descriptor.cookie == ReadLe64(data + 16));
    FUZZ_CHECK(descriptor.sequence == ReadLe64(data + 24));
    FUZZ_CHECK(descriptor.rkey == (ReadLe64(data + 32) & 0xffffffff));
    std::byte again[kRendezvousDescriptorSize];
    EncodeRendezvousDescriptor(descriptor, std::span<std::byte, kRendezvousDescriptorSize>(again));
    FUZZ_CHECK(std::memcmp(again, data, size) == 0);
  }

  RendezvousDone done{kPoison, kPoison};
  const bool done_ok = DecodeRendezvousDone(payload, &done);
  FUZZ_CHECK(done_ok == (size == kRendezvousDoneSize));
  if (!done_ok) {
    FUZZ_CHECK((done == RendezvousDone{kPoison, kPoison}));
  } else {
    FUZZ_CHECK(done.cookie == ReadLe64(data));
    FUZZ_CHECK(done.sequence == ReadLe64(data + 8));
    std::byte again[kRendezvousDoneSize];
    EncodeRendezvousDone(done, std::span<std::byte, kRendezvousDoneSize>(again));
    FUZZ_CHECK(std::memcmp(again, data, size) == 0);
  }

  // Encoder round trips from whatever the input holds (zero-padded).
  uint8_t padded[kRendezvousDescriptorSize] = {};
  std::memcpy(padded, data, size < sizeof(padded) ? size : sizeof(padded));
  const RendezvousDescriptor d{ReadLe64(padded), ReadLe64(padded + 8), ReadLe64(padded + 16),
                               ReadLe64(padded + 24)};
  std::byte d_bytes[kRendezvousDescriptorSize];
  EncodeRendezvousDescriptor(d, std::span<std::byte, kRendezvousDescriptorSize>(d_bytes));
  RendezvousDescriptor d_back;
  FUZZ_CHECK(DecodeRendezvousDescriptor(d_bytes, &d_back) && d_back == d);
  const RendezvousDone r{ReadLe64(padded), ReadLe64(padded + 8)};
  std::byte r_bytes[kRendezvousDoneSize];
  EncodeRendezvousDone(r, std::span<std::byte, kRendezvousDoneSize>(r_bytes));
  RendezvousDone r_back;
  FUZZ_CHECK(DecodeRendezvousDone(r_bytes, &r_back) && r_back == r);
  // A done message is never mistaken for a descriptor, nor the reverse.
  FUZZ_CHECK(!DecodeRendezvousDescriptor(r_bytes, &d_back));
  FUZZ_CHECK(!DecodeRendezvousDone(d_bytes, &r_back));
  return 0;
}
