// Fixed-width little-endian loads and stores: the one byte-order codec behind every encoding rft
// puts on the wire or publishes (message headers, rendezvous descriptors, control payloads,
// control-plane records), so a job whose nodes differ in byte order still reads them alike.
//
// memcpy compiles to one load or store per field on little-endian hosts (a byte loop cost ~150
// instructions per header in the 8-byte ping-pong), and to a byte swap on big-endian ones. No
// bounds check (these run on the fast path): callers guarantee `at + sizeof(T) <= size()`.
#ifndef RFT_BASE_BYTE_ORDER_H_
#define RFT_BASE_BYTE_ORDER_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>

namespace rft {

template <class T>
constexpr T ToLittleEndian(T value) {
  static_assert(std::is_integral_v<T> && sizeof(T) <= 8, "integers of 1 to 8 bytes");
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    using U = std::make_unsigned_t<T>;
    const U bits = static_cast<U>(value);
    if constexpr (sizeof(T) == 2) return static_cast<T>(__builtin_bswap16(bits));
    if constexpr (sizeof(T) == 4) return static_cast<T>(__builtin_bswap32(bits));
    if constexpr (sizeof(T) == 8) return static_cast<T>(__builtin_bswap64(bits));
  }
  return value;
}

template <class T>
void StoreLittleEndian(std::span<std::byte> out, size_t at, T value) {
  const T little = ToLittleEndian(value);
  std::memcpy(out.data() + at, &little, sizeof(T));
}

template <class T>
T LoadLittleEndian(std::span<const std::byte> in, size_t at) {
  T value;
  std::memcpy(&value, in.data() + at, sizeof(T));
  return ToLittleEndian(value);
}

}  // namespace rft

#endif  // RFT_BASE_BYTE_ORDER_H_
