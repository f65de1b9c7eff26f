// RC QP addresses between the ranks of a job, through its bootstrap: every rank has one QP per
// peer, so it publishes a table with an entry per rank (its own a hole) and takes from each
// peer's table the entry that peer made for it.
#ifndef RFT_TRANSPORT_VERBS_ADDRESS_EXCHANGE_H_
#define RFT_TRANSPORT_VERBS_ADDRESS_EXCHANGE_H_

#include <functional>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/verbs/qp_address.h"

namespace rft::verbs {

// Publishes `address_for(p)` for every peer p under `key` (a collective over the job) and returns,
// indexed by rank, the address each peer published for this rank (this rank's entry empty).
// Errors name the peer whose publication is malformed.
StatusOr<std::vector<QpAddress>> ExchangeQpAddresses(
    transport::Bootstrap& job, std::string_view key,
    const std::function<QpAddress(Rank peer)>& address_for);

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_ADDRESS_EXCHANGE_H_
