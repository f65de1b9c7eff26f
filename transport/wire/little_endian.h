// Fixed-width little-endian loads and stores for the wire codecs (not part of the interface).
//
// memcpy compiles to one load or store per field on little-endian hosts (a byte loop cost ~150
// instructions per header in the 8-byte ping-pong), and a byte swap on big-endian ones.
// Callers guarantee that `at + sizeof(T)` is inside the span.
#ifndef RFT_TRANSPORT_WIRE_LITTLE_ENDIAN_H_
#define RFT_TRANSPORT_WIRE_LITTLE_ENDIAN_H_

#include <bit>
#include <cstddef>
#include <cstring>
#include <span>

namespace rft::transport::wire_internal {

template <class T>
T ToLittleEndian(T value) {
  if constexpr (std::endian::native == std::endian::big && sizeof(T) > 1) {
    if constexpr (sizeof(T) == 2) return static_cast<T>(__builtin_bswap16(value));
    if constexpr (sizeof(T) == 4) return static_cast<T>(__builtin_bswap32(value));
    if constexpr (sizeof(T) == 8) return static_cast<T>(__builtin_bswap64(value));
  }
  return value;
}

template <class T, size_t N>
void Store(std::span<std::byte, N> out, size_t at, T value) {
  const T little = ToLittleEndian(value);
  std::memcpy(out.data() + at, &little, sizeof(T));
}

template <class T>
T Load(std::span<const std::byte> in, size_t at) {
  T value;
  std::memcpy(&value, in.data() + at, sizeof(T));
  return ToLittleEndian(value);
}

}  // namespace rft::transport::wire_internal

#endif  // RFT_TRANSPORT_WIRE_LITTLE_ENDIAN_H_
