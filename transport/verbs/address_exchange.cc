#include "transport/verbs/address_exchange.h"

#include <cstring>
#include <span>
#include <string>

namespace rft::verbs {

StatusOr<std::vector<QpAddress>> ExchangeQpAddresses(
    transport::Bootstrap& job, std::string_view key,
    const std::function<QpAddress(Rank peer)>& address_for) {
  const Rank self = job.rank();
  const uint32_t n = job.size();
  std::vector<std::byte> blob(n * kQpAddressSize);
  for (Rank p = 0; p < n; ++p) {
    if (p == self) continue;
    const std::vector<std::byte> record = EncodeQpAddress(address_for(p));
    std::memcpy(blob.data() + p * kQpAddressSize, record.data(), kQpAddressSize);
  }
  StatusOr<std::vector<std::vector<std::byte>>> all = job.Exchange(key, blob);
  if (!all.ok()) return OtherError("exchange: " + all.status().ToString());
  std::vector<QpAddress> remote(n);
  for (Rank p = 0; p < n; ++p) {
    if (p == self) continue;
    const std::vector<std::byte>& theirs = (*all)[p];
    if (theirs.size() != n * kQpAddressSize) {
      return OtherError("rank " + std::to_string(p) + " published " +
                        std::to_string(theirs.size()) + " bytes, expected " + std::to_string(n) +
                        " records of " + std::to_string(kQpAddressSize));
    }
    StatusOr<QpAddress> record = DecodeQpAddress(
        std::span<const std::byte>(theirs).subspan(self * kQpAddressSize, kQpAddressSize));
    if (!record.ok()) {
      return OtherError("rank " + std::to_string(p) + "'s record: " + record.status().message());
    }
    remote[p] = *record;
  }
  return remote;
}

}  // namespace rft::verbs
