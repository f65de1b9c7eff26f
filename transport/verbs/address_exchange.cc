#include "transport/verbs/address_exchange.h"

#include <string>

namespace rft::verbs {

StatusOr<std::vector<QpAddress>> ExchangeQpAddresses(
    transport::Bootstrap& job, std::string_view key,
    const std::function<QpAddress(Rank peer)>& address_for) {
  const Rank self = job.rank();
  const uint32_t n = job.size();
  StatusOr<std::vector<std::vector<std::byte>>> all =
      job.Exchange(key, EncodeQpAddressTable(n, self, address_for));
  if (!all.ok()) return OtherError("exchange: " + all.status().ToString());
  std::vector<QpAddress> remote(n);
  for (Rank p = 0; p < n; ++p) {
    if (p == self) continue;
    StatusOr<QpAddress> record = DecodeQpAddressTable((*all)[p], n, self);
    if (!record.ok()) {
      return OtherError("rank " + std::to_string(p) +
                        "'s QP addresses: " + record.status().message());
    }
    remote[p] = *record;
  }
  return remote;
}

}  // namespace rft::verbs
