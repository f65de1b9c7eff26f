#include "transport/wire/rendezvous.h"

#include "base/byte_order.h"

namespace rft::transport {

void EncodeRendezvousDescriptor(const RendezvousDescriptor& descriptor,
                                std::span<std::byte, kRendezvousDescriptorSize> out) {
  StoreLittleEndian<uint64_t>(out, 0, descriptor.address);
  StoreLittleEndian<uint64_t>(out, 8, descriptor.length);
  StoreLittleEndian<uint64_t>(out, 16, descriptor.cookie);
  StoreLittleEndian<uint64_t>(out, 24, descriptor.sequence);
  StoreLittleEndian<uint32_t>(out, 32, descriptor.rkey);
  StoreLittleEndian<uint32_t>(out, 36, 0);  // reserved
}

bool DecodeRendezvousDescriptor(std::span<const std::byte> payload, RendezvousDescriptor* out) {
  // The reserved word must be zero: a future use of it is then never misread as this format.
  if (payload.size() != kRendezvousDescriptorSize || LoadLittleEndian<uint32_t>(payload, 36) != 0) {
    return false;
  }
  out->address = LoadLittleEndian<uint64_t>(payload, 0);
  out->length = LoadLittleEndian<uint64_t>(payload, 8);
  out->cookie = LoadLittleEndian<uint64_t>(payload, 16);
  out->sequence = LoadLittleEndian<uint64_t>(payload, 24);
  out->rkey = LoadLittleEndian<uint32_t>(payload, 32);
  return true;
}

void EncodeRendezvousDone(const RendezvousDone& done,
                          std::span<std::byte, kRendezvousDoneSize> out) {
  StoreLittleEndian<uint64_t>(out, 0, done.cookie);
  StoreLittleEndian<uint64_t>(out, 8, done.sequence);
}

bool DecodeRendezvousDone(std::span<const std::byte> payload, RendezvousDone* out) {
  if (payload.size() != kRendezvousDoneSize) return false;
  out->cookie = LoadLittleEndian<uint64_t>(payload, 0);
  out->sequence = LoadLittleEndian<uint64_t>(payload, 8);
  return true;
}

}  // namespace rft::transport
