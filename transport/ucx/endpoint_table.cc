#include "transport/ucx/endpoint_table.h"

#include <algorithm>
#include <string>

#include "base/clock.h"
#include "base/log.h"

namespace rft::transport::ucx {
namespace {

// How long teardown waits for graceful closes before cancelling them.
constexpr int64_t kCloseBudgetNs = 2'000'000'000;

}  // namespace

StatusOr<std::unique_ptr<EndpointTable>> EndpointTable::Create(
    UcxWorker* worker, Rank self, std::vector<std::vector<std::byte>> addresses,
    PeerFailureSink* sink, Options options) {
  if (self >= addresses.size()) {
    return ArgError("endpoint table: rank " + std::to_string(self) + " outside a job of " +
                    std::to_string(addresses.size()));
  }
  std::unique_ptr<EndpointTable> table(
      new EndpointTable(worker, self, sink, options.connect_all_max, options.owner));
  RFT_RETURN_IF_ERROR(table->Append(std::move(addresses), options.failed));
  table->ConnectFrom(0);
  return table;
}

Status EndpointTable::Grow(std::vector<std::vector<std::byte>> addresses, const RankSet& failed) {
  const auto first = static_cast<Rank>(peers_.size());
  RFT_RETURN_IF_ERROR(Append(std::move(addresses), failed));
  ConnectFrom(first);
  return Status::Ok();
}

Status EndpointTable::Append(std::vector<std::vector<std::byte>> addresses, const RankSet& failed) {
  const auto first = static_cast<Rank>(peers_.size());
  for (size_t i = 0; i < addresses.size(); ++i) {
    const Rank r = first + static_cast<Rank>(i);
    if (addresses[i].empty() && !(failed.Contains(r) && r != self_)) {
      return ArgError("endpoint table: rank " + std::to_string(r) + " published no UCX address");
    }
  }
  peers_.reserve(first + addresses.size());
  for (size_t i = 0; i < addresses.size(); ++i) {
    Peer& peer = peers_.emplace_back();
    peer.rank = first + static_cast<Rank>(i);
    peer.address = std::move(addresses[i]);
    peer.error_target = std::make_unique<ErrorTarget>(ErrorTarget{this, peer.rank});
    if (failed.Contains(peer.rank) && peer.rank != self_) {
      peer.failed = true;
      failed_ranks_.Insert(peer.rank);
    }
  }
  return Status::Ok();
}

void EndpointTable::ConnectFrom(Rank first) {
  if (peers_.size() > connect_all_max_) return;  // on first use
  for (Rank r = first; r < peers_.size(); ++r) {
    Peer& peer = peers_[r];
    if (peer.failed) continue;
    Status status = Connect(peer);
    if (status.ok()) continue;
    // A peer that published its address and died before this connect (its shared memory is
    // gone): a failure like any other, for the sink (the failure registry) to act on, not a
    // reason for every other process to fail its start-up.
    RFT_LOG_WARN("%s: rank %u taken as failed", status.ToString().c_str(), peer.rank);
    MarkFailed(peer.rank);
    if (sink_ != nullptr) sink_->OnPeerFailed(peer.rank, status);
  }
}

Status EndpointTable::Connect(Peer& peer) {
  ucp_ep_params_t params{};
  params.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE |
                      UCP_EP_PARAM_FIELD_ERR_HANDLER;
  params.address = reinterpret_cast<const ucp_address_t*>(peer.address.data());
  params.err_mode = UCP_ERR_HANDLING_MODE_PEER;
  params.err_handler.cb = &EndpointTable::OnEndpointError;
  params.err_handler.arg = peer.error_target.get();
  const ucs_status_t status = ucp_ep_create(worker_->get(), &params, &peer.ep);
  if (status != UCS_OK) {
    peer.ep = nullptr;
    return UcxError("ucp_ep_create to rank " + std::to_string(peer.rank), status);
  }
  return Status::Ok();
}

StatusOr<ucp_ep_h> EndpointTable::GetSlow(Rank rank) {
  if (rank >= peers_.size()) {
    return ArgError("rank " + std::to_string(rank) + ": expected a rank below the job size " +
                    std::to_string(peers_.size()));
  }
  Peer& peer = peers_[rank];
  if (peer.failed) {
    return Status(RFT_ERR_PROC_FAILED, "rank " + std::to_string(rank) + " has failed");
  }
  Status status = Connect(peer);  // lazy connection
  if (!status.ok()) return status;
  RFT_LOG_DEBUG("%s: UCX endpoint to rank %u made on first use", owner_, rank);
  return peer.ep;
}

void EndpointTable::OnEndpointError(void* arg, ucp_ep_h, ucs_status_t status) {
  const auto& target = *static_cast<const ErrorTarget*>(arg);
  EndpointTable& table = *target.table;
  Peer& peer = table.peers_[target.rank];
  if (peer.failed) return;
  table.MarkFailed(peer.rank);
  if (table.sink_ != nullptr) {
    table.sink_->OnPeerFailed(
        peer.rank, Status(RFT_ERR_PROC_FAILED, "UCX reported the endpoint to rank " +
                                                   std::to_string(peer.rank) +
                                                   " broken: " + ucs_status_string(status)));
  }
}

void EndpointTable::MarkFailed(Rank rank) {
  if (rank >= peers_.size() || peers_[rank].failed) return;
  peers_[rank].failed = true;
  failed_ranks_.Insert(rank);
}

void* EndpointTable::StartClose(ucp_ep_h ep, bool force) {
  ucp_request_param_t param{};
  param.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = force ? UCP_EP_CLOSE_FLAG_FORCE : 0;
  void* request = ucp_ep_close_nbx(ep, &param);
  if (request == nullptr) return nullptr;
  if (UCS_PTR_IS_ERR(request)) {
    // A failed close still ends the endpoint; nothing is left to wait for.
    RFT_LOG_DEBUG("ucp_ep_close_nbx: %s", ucs_status_string(UCS_PTR_STATUS(request)));
    return nullptr;
  }
  return request;
}

void EndpointTable::CloseFailed() {
  for (Peer& peer : peers_) {
    if (!peer.failed || peer.closed || peer.ep == nullptr) continue;
    void* request = StartClose(peer.ep, /*force=*/true);
    while (request != nullptr && ucp_request_check_status(request) == UCS_INPROGRESS) {
      worker_->Progress();
    }
    if (request != nullptr) ucp_request_free(request);
    peer.closed = true;
  }
}

EndpointTable::~EndpointTable() {
  CloseFailed();
  auto departed = [this](Rank rank) { return departed_ != nullptr && departed_(rank); };
  struct Closing {
    Rank rank;
    void* request;
  };
  std::vector<Closing> pending;
  size_t flushed = 0;
  size_t forced = 0;
  for (Peer& peer : peers_) {
    if (peer.closed || peer.ep == nullptr) continue;
    // A live peer gets what was sent to it (flush); one that ended has nothing left to take.
    const bool force = departed(peer.rank);
    ++(force ? forced : flushed);
    void* request = StartClose(peer.ep, force);
    if (request != nullptr) pending.push_back({peer.rank, request});
    peer.closed = true;
  }
  RFT_LOG_DEBUG("closing the %s's UCX endpoints: %zu flushed, %zu force-closed", owner_, flushed,
                forced);
  // Done, or no longer worth waiting for: its peer has departed since (see WatchDepartures).
  auto settled = [&](const Closing& closing) {
    return ucp_request_check_status(closing.request) != UCS_INPROGRESS || departed(closing.rank);
  };
  auto all_settled = [&] { return std::all_of(pending.begin(), pending.end(), settled); };
  auto all_done = [&] {
    return std::all_of(pending.begin(), pending.end(), [](const Closing& closing) {
      return ucp_request_check_status(closing.request) != UCS_INPROGRESS;
    });
  };
  const Deadline deadline = Deadline::After(std::chrono::nanoseconds(kCloseBudgetNs));
  while (!all_settled() && !deadline.expired()) worker_->Progress();
  // Settled by departures: a flush a moment from its end (on shared memory or TCP, microseconds)
  // still gets to finish, so the worker is not destroyed under it without need.
  const Deadline grace = Deadline::After(std::chrono::milliseconds(50));
  while (all_settled() && !all_done() && !grace.expired()) worker_->Progress();
  if (!all_settled()) {
    // A peer that stopped answering (hung, or dead and not yet noticed) must not hang the
    // teardown: cancel what is left and let UCX finish it.
    std::string ranks;
    for (const Closing& closing : pending) {
      if (settled(closing)) continue;
      ranks += (ranks.empty() ? "" : ", ") + std::to_string(closing.rank);
      ucp_request_cancel(worker_->get(), closing.request);
    }
    RFT_LOG_WARN(
        "closing the %s's UCX endpoints: rank(s) %s did not flush within %lld ms; "
        "cancelling",
        owner_, ranks.c_str(), static_cast<long long>(kCloseBudgetNs / 1000000));
    const Deadline cancel_deadline = Deadline::After(std::chrono::milliseconds(500));
    while (!all_done() && !cancel_deadline.expired()) worker_->Progress();
  }
  // Freeing a request still in progress is allowed: UCX releases it when it completes.
  for (const Closing& closing : pending) ucp_request_free(closing.request);
}

}  // namespace rft::transport::ucx
