// The UCP endpoints of one worker to every process of the job, and what happens when one
// breaks.
//
// Every endpoint uses UCP_ERR_HANDLING_MODE_PEER, so UCX reports a broken peer through an
// error callback instead of failing the whole worker. The callback only records the failure
// and tells the PeerFailureSink (the failure registry, later); closing the endpoint waits for
// CloseFailed(), outside UCX's progress.
//
// UCX's error callback is only one source of failure news: on shared memory UCX notices a
// dead peer late (keepalive) and a stopped one never (NOTES.md). Whoever learns of a failure
// first calls MarkFailed(); from then on Get() refuses that rank with RFT_ERR_PROC_FAILED. A
// peer Create cannot connect to (it died after publishing its address) is failed the same way,
// through the sink, rather than failing Create.
#ifndef RFT_TRANSPORT_UCX_ENDPOINT_TABLE_H_
#define RFT_TRANSPORT_UCX_ENDPOINT_TABLE_H_

#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "base/rank_set.h"
#include "base/status.h"
#include "transport/ucx/ucx_worker.h"

namespace rft::transport::ucx {

// Receives the failures UCX reports. Called on the worker's thread, from inside UCX progress:
// record and return; do not call back into UCX.
class PeerFailureSink {
 public:
  virtual ~PeerFailureSink() = default;
  virtual void OnPeerFailed(Rank rank, const Status& why) = 0;
};

class EndpointTable {
 public:
  struct Options {
    // Jobs up to this size connect to everyone at creation (ucp_ep_create costs ~0.8 ms on
    // shared memory, 4 ms on TCP); larger ones connect to a peer on first use.
    uint32_t connect_all_max = 256;
    // Ranks already failed at creation (they may have published no address): never connected.
    RankSet failed;
    // Whose endpoints these are, in log lines ("data plane", "control plane").
    const char* owner = "rft";
  };

  // `addresses[r]` is rank r's worker address (from the bootstrap exchange); addresses[self]
  // too, for messages to oneself.
  static StatusOr<std::unique_ptr<EndpointTable>> Create(
      UcxWorker* worker, Rank self, std::vector<std::vector<std::byte>> addresses,
      PeerFailureSink* sink, Options options);
  static StatusOr<std::unique_ptr<EndpointTable>> Create(
      UcxWorker* worker, Rank self, std::vector<std::vector<std::byte>> addresses,
      PeerFailureSink* sink) {
    return Create(worker, self, std::move(addresses), sink, Options());
  }
  // Closes every endpoint: those to live peers gracefully (flushing what is in flight, so the
  // peer gets it all), failed and departed ones forcibly; bounded in time, never hangs on a dead
  // peer. Endpoints that never carried anything are flushed too: over RC such a connection may
  // be half made (UCX wires up on the peer's progress), and UCX 1.13 aborted in
  // ucp_ep_close_nbx when one was force-closed (seen once in the soft-RoCE guest's CI stage).
  ~EndpointTable();
  EndpointTable(const EndpointTable&) = delete;
  EndpointTable& operator=(const EndpointTable&) = delete;

  uint32_t size() const { return static_cast<uint32_t>(peers_.size()); }

  // Ranks size()..size()+addresses.size()-1 join (replacements, docs/recovery.md): their
  // endpoints are created now if the job is within Options::connect_all_max, else on first use.
  // Those in `failed` (their address may be empty) are never connected. From the table's thread
  // only, like Get. RFT_ERR_ARG for another empty address.
  Status Grow(std::vector<std::vector<std::byte>> addresses, const RankSet& failed);

  // The endpoint to `rank`: RFT_ERR_PROC_FAILED once the rank is known failed, RFT_ERR_ARG for
  // a rank outside the job.
  StatusOr<ucp_ep_h> Get(Rank rank) {
    if (ucp_ep_h ep = Connected(rank)) return ep;  // the fast path: one compare and a load
    return GetSlow(rank);
  }

  // The endpoint to `rank` if it is connected and not failed, else nullptr (then Get says why,
  // or connects). For fast paths that have a fallback.
  ucp_ep_h Connected(Rank rank) const {
    return rank < peers_.size() && !peers_[rank].failed ? peers_[rank].ep : nullptr;
  }
  bool failed(Rank rank) const { return rank < peers_.size() && peers_[rank].failed; }
  const RankSet& failed_ranks() const { return failed_ranks_; }

  // Records that `rank` failed, whatever the source. Idempotent. Does not call the sink.
  void MarkFailed(Rank rank);
  // Force-closes the endpoints of failed ranks. Call outside UCX progress.
  void CloseFailed();
  // Which ranks ended cleanly (they said so; the failure registry knows), asked during teardown:
  // a departed peer's endpoint is force-closed rather than flushed, and a flush already started
  // to a peer that departs meanwhile is no longer waited for. A flush to a process that is gone
  // (or that stopped progressing its worker to end) waits for an acknowledgement that never
  // comes; over UCX's RC transport that took the whole teardown budget. Peers tell their
  // departure before they close anything, so a peer not yet departed still progresses its
  // worker. `departed` must stay callable until the table is destroyed, from its thread.
  void WatchDepartures(std::function<bool(Rank)> departed) { departed_ = std::move(departed); }

 private:
  // What UCX's error callback gets: it outlives any move of peers_ (which grows).
  struct ErrorTarget {
    EndpointTable* table;
    Rank rank;
  };
  struct Peer {
    Rank rank = 0;
    ucp_ep_h ep = nullptr;
    bool failed = false;
    bool closed = false;
    std::vector<std::byte> address;
    std::unique_ptr<ErrorTarget> error_target;
  };

  EndpointTable(UcxWorker* worker, Rank self, PeerFailureSink* sink, uint32_t connect_all_max,
                const char* owner)
      : worker_(worker),
        self_(self),
        sink_(sink),
        connect_all_max_(connect_all_max),
        owner_(owner) {}
  // Appends `addresses` as the next ranks, marking those in `failed` (their address may be
  // empty).
  Status Append(std::vector<std::vector<std::byte>> addresses, const RankSet& failed);
  // Connects the peers from `first` on (within connect_all_max), failing the unreachable.
  void ConnectFrom(Rank first);
  Status Connect(Peer& peer);
  StatusOr<ucp_ep_h> GetSlow(Rank rank);
  static void OnEndpointError(void* arg, ucp_ep_h ep, ucs_status_t status);
  // Starts closing `ep` (forcibly or not); returns the request to wait on, or nullptr when done.
  void* StartClose(ucp_ep_h ep, bool force);

  UcxWorker* worker_;
  Rank self_;
  PeerFailureSink* sink_;
  uint32_t connect_all_max_;  // Options::connect_all_max
  const char* owner_;         // Options::owner
  std::vector<Peer> peers_;   // error callbacks hold ErrorTargets, not &peers_[r]: it may grow
  RankSet failed_ranks_;
  std::function<bool(Rank)> departed_;  // WatchDepartures; empty: nobody departs
};

}  // namespace rft::transport::ucx

#endif  // RFT_TRANSPORT_UCX_ENDPOINT_TABLE_H_
