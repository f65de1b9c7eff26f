// Payloads of rft's own rendezvous (docs/wire_format.md, "Rendezvous").
//
// A large message travels as a kRendezvousRequest whose payload says where the data is in the
// sender's address space; the receiver copies it straight into the matched buffer (one
// process_vm_readv between processes of one node, an RDMA READ under the descriptor's rkey over
// verbs) and answers with a kRendezvousDone carrying the request's cookie, which completes the
// send.
#ifndef RFT_TRANSPORT_WIRE_RENDEZVOUS_H_
#define RFT_TRANSPORT_WIRE_RENDEZVOUS_H_

#include <cstddef>
#include <cstdint>
#include <span>

namespace rft::transport {

// kRendezvousRequest payload.
struct RendezvousDescriptor {
  uint64_t address = 0;   // the data in the sender's address space
  uint64_t length = 0;    // the message's length in bytes
  uint64_t cookie = 0;    // names the send request to the sender; echoed by the done message
  uint64_t sequence = 0;  // tells a reused request from its earlier life
  // The verbs rendezvous: the key under which the sender registered the data for remote reads
  // (0 for a same-node request, which reads by address).
  uint32_t rkey = 0;
  bool operator==(const RendezvousDescriptor&) const = default;
};
inline constexpr size_t kRendezvousDescriptorSize = 40;

// kRendezvousDone payload; the header's flags say whether the receiver read the data.
struct RendezvousDone {
  uint64_t cookie = 0;
  uint64_t sequence = 0;
  bool operator==(const RendezvousDone&) const = default;
};
inline constexpr size_t kRendezvousDoneSize = 16;

enum RendezvousDoneFlags : uint16_t {
  kRendezvousReadFailed = 1,  // the receiver could not read the data: the send fails too
  kRendezvousDiscarded = 2,   // the receiver dropped the message unread (revoked, or closed)
};

void EncodeRendezvousDescriptor(const RendezvousDescriptor& descriptor,
                                std::span<std::byte, kRendezvousDescriptorSize> out);
// False (and `*out` untouched) unless `payload` is exactly a descriptor, its reserved word 0.
bool DecodeRendezvousDescriptor(std::span<const std::byte> payload, RendezvousDescriptor* out);

void EncodeRendezvousDone(const RendezvousDone& done,
                          std::span<std::byte, kRendezvousDoneSize> out);
bool DecodeRendezvousDone(std::span<const std::byte> payload, RendezvousDone* out);

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_WIRE_RENDEZVOUS_H_
