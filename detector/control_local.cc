// ControlPlane's same-node path: control messages to the peers of this node as kernel datagrams
// (transport/datagram/local_datagram.h), so that a peer killed while it sends cannot block this
// process's receiving, as it can block UCX's shared-memory FIFO (docs/reliability.md). Peers on
// other nodes, and any peer the socket cannot reach, stay on UCX. And what /proc says of a
// same-node peer's process.
#include <signal.h>

#include <cerrno>

#include "base/log.h"
#include "detector/control_plane.h"
#include "detector/thread_state.h"

namespace rft::detector {
namespace {
// Datagrams handled per pass: the loop goes back to its other work (failures, timers) between.
constexpr size_t kLocalBatch = 64;
}  // namespace

void ControlPlane::OpenLocalChannel() {
  same_node_ = job_->node_peers();
  if (same_node_.size() < 2) return;  // nobody to talk to on this node
  if (!options_.local_sockets) {
    RFT_LOG_INFO("same-node control messages go like the others (RFT_CONTROL_SOCKETS=n)");
    return;
  }
  // Named after the job's first namespace, not this process's: a replacement and its parents
  // share the names' prefix, as they share the token (LocalDatagramChannel::Connect checks it).
  const uint32_t tag = transport::NspaceTag(job_->ranks().blocks().front().nspace);
  auto channel = transport::LocalDatagramChannel::Open(tag, job_token_, self_, size_);
  if (!channel.ok()) {
    RFT_LOG_INFO("same-node control messages go through UCX: %s",
                 channel.status().ToString().c_str());
    return;
  }
  local_ = std::move(*channel);
}

void ControlPlane::ConnectLocalPeers(const std::vector<std::string>& sockets) {
  if (local_ == nullptr) return;
  for (Rank peer : same_node_) {
    if (peer == self_ || peer >= sockets.size() || sockets[peer].empty()) continue;
    if (!local_->Connect(peer, sockets[peer])) {
      RFT_LOG_INFO("control messages to rank %u go through UCX: its socket %s is not reachable",
                   peer, sockets[peer].c_str());
    }
  }
}

bool ControlPlane::SendLocal(Rank to, std::span<const std::byte> header,
                             std::span<const std::byte> payload) {
  if (local_ == nullptr || !local_->Reaches(to)) return false;
  auto outcome = local_->Send(to, header, payload);
  if (!outcome.ok()) {
    // Too large, or a peer that let thousands of messages wait (stopped, about to be declared
    // failed): dropped and counted, as a transport that cannot deliver does.
    dropped_.fetch_add(1, std::memory_order_relaxed);
    RFT_LOG_WARN("control message to rank %u: %s", to, outcome.status().ToString().c_str());
  } else if (*outcome == transport::LocalDatagramChannel::Outcome::kGone) {
    local_gone_.Insert(to);
  }
  return true;
}

bool ControlPlane::PumpLocal() {
  if (local_ == nullptr) return false;
  const auto deliver = [this](std::span<const std::byte> message) {
    HandleControlMessage(message);
  };
  const bool received = local_->Receive(deliver, kLocalBatch) > 0;
  local_->Flush([this](Rank peer) { local_gone_.Insert(peer); });
  if (local_gone_.empty()) return received;
  // A closed socket means its process ended. A peer that ended cleanly sent its departure
  // before closing, and it is in this socket's queue: read everything first, so the registry
  // knows the departure and takes the report for what it is.
  while (local_->Receive(deliver, kLocalBatch) > 0) {
  }
  const RankSet gone = std::move(local_gone_);
  local_gone_.clear();
  for (Rank peer : gone) {
    local_->Forget(peer);
    if (!registry_->IsDeparted(peer)) {
      RFT_LOG_DEBUG("control plane: rank %u's socket is closed", peer);
      registry_->Report(peer, FailureSource::kTransport);
    }
  }
  return true;
}

RankSet ControlPlane::KillLocalProcesses(const RankSet& ranks) const {
  RankSet unreached;
  for (Rank rank : ranks) {
    if (rank == self_) continue;
    if (!same_node_.Contains(rank) || rank >= pids_.size() || pids_[rank] <= 0) {
      unreached.Insert(rank);
      continue;
    }
    // One that ended already is left alone: once reaped, its pid may be another process's.
    if (LocalPeerEnded(rank)) continue;
    if (kill(pids_[rank], SIGKILL) != 0 && errno != ESRCH) unreached.Insert(rank);
  }
  return unreached;
}

bool ControlPlane::LocalPeerEnded(Rank rank) const {
  if (!same_node_.Contains(rank) || rank >= pids_.size() || pids_[rank] <= 0) {
    return false;
  }
  const char state = internal::ThreadState(pids_[rank], pids_[rank]);
  return state == '?' || state == 'Z' || state == 'X';
}

}  // namespace rft::detector
