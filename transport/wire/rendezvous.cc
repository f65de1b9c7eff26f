#include "transport/wire/rendezvous.h"

#include "transport/wire/little_endian.h"

namespace rft::transport {
using wire_internal::Load;
using wire_internal::Store;

void EncodeRendezvousDescriptor(const RendezvousDescriptor& descriptor,
                                std::span<std::byte, kRendezvousDescriptorSize> out) {
  Store<uint64_t>(out, 0, descriptor.address);
  Store<uint64_t>(out, 8, descriptor.length);
  Store<uint64_t>(out, 16, descriptor.cookie);
  Store<uint64_t>(out, 24, descriptor.sequence);
}

bool DecodeRendezvousDescriptor(std::span<const std::byte> payload, RendezvousDescriptor* out) {
  if (payload.size() != kRendezvousDescriptorSize) return false;
  out->address = Load<uint64_t>(payload, 0);
  out->length = Load<uint64_t>(payload, 8);
  out->cookie = Load<uint64_t>(payload, 16);
  out->sequence = Load<uint64_t>(payload, 24);
  return true;
}

void EncodeRendezvousDone(const RendezvousDone& done,
                          std::span<std::byte, kRendezvousDoneSize> out) {
  Store<uint64_t>(out, 0, done.cookie);
  Store<uint64_t>(out, 8, done.sequence);
}

bool DecodeRendezvousDone(std::span<const std::byte> payload, RendezvousDone* out) {
  if (payload.size() != kRendezvousDoneSize) return false;
  out->cookie = Load<uint64_t>(payload, 0);
  out->sequence = Load<uint64_t>(payload, 8);
  return true;
}

}  // namespace rft::transport
