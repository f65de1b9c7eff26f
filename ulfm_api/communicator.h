// rft::api::Communicator: a group of processes with a private pair of data-plane contexts, and
// ULFM's view of the failures among its members.
//
// Ranks: a communicator's rank r is the r-th member of its group; the data plane speaks job
// ranks, and the communicator translates (world is the identity, checked once).
//
// Failures (MPI 4.1 ULFM): the failed members a communicator knows are the failure registry's
// records restricted to its group, in the registry's order, so the lists it hands out
// (FailedMembers) are prefixes of each other. AckFailed acknowledges a prefix of that list; it
// only grows. While a failed member is not acknowledged, an ANY_SOURCE receive cannot complete
// for want of a message (it may still match one): its waits return PROC_FAILED_PENDING and the
// request stays active (Session's completion calls apply the rule).
//
// Intercommunicators (MPI's): the members are two disjoint groups, the caller's (local) one and
// the remote one, in one order every member agrees on (the group whose leader has the lower job
// rank first). Collectives' internal messages, agreement, revocation and the failure view run
// over all members, as on any communicator (so ULFM's operations span both groups); what the
// program sees as its rank and size is the local group's (local_rank, local_size), and
// point-to-point names the remote group's ranks (the peer functions).
//
// Threading: the API's thread (the data plane's), like the data plane.
#ifndef RFT_ULFM_API_COMMUNICATOR_H_
#define RFT_ULFM_API_COMMUNICATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "agreement/agreement_service.h"
#include "base/status.h"
#include "detector/failure_registry.h"
#include "transport/dataplane/data_plane.h"
#include "ulfm_api/context_ids.h"
#include "ulfm_api/group.h"

namespace rft::api {

class Communicator;
class NodeCollectives;
class Schedule;

// An operation started on a communicator (the C API's rft_request_t): a point-to-point message
// (`inner`) or a non-blocking collective (`collective`).
struct Request {
  transport::Request* inner = nullptr;  // the data plane's; nullptr once completed
  Schedule* collective = nullptr;       // owned by the session until the request is released
  Communicator* comm = nullptr;
  bool any_source = false;  // an ANY_SOURCE receive: the PROC_FAILED_PENDING rule applies
};

class Communicator {
 public:
  // `group` contains this process (job rank `plane->rank()`); `contexts` came from ContextIds.
  Communicator(transport::DataPlane* plane, detector::FailureRegistry* registry, Group group,
               ContextIds::Allocation contexts, std::string name);
  // An intercommunicator: `local` (containing this process) is a part of `group`; the rest, in
  // `group`'s order, is the remote group.
  Communicator(transport::DataPlane* plane, detector::FailureRegistry* registry, Group group,
               ContextIds::Allocation contexts, std::string name, Group local);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  // Over all members (an intercommunicator's both groups): collectives' and ULFM's view.
  uint32_t size() const { return group_.size(); }
  Rank rank() const { return rank_; }
  const Group& group() const { return group_; }
  // The program's view: its own group (all members for an intracommunicator), and the group
  // point-to-point names (the remote group of an intercommunicator).
  bool is_inter() const { return inter_ != nullptr; }
  const Group& local_group() const { return inter_ ? inter_->local : group_; }
  const Group& remote_group() const { return inter_ ? inter_->remote : group_; }
  uint32_t local_size() const { return inter_ ? inter_->local.size() : size(); }
  Rank local_rank() const { return inter_ ? inter_->local_rank : rank_; }
  // Whether the local group comes first among the members (always, for an intracommunicator).
  bool local_first() const { return !inter_ || inter_->local_first; }
  const std::string& name() const { return name_; }
  void set_name(std::string name) { name_ = std::move(name); }
  const ContextIds::Allocation& contexts() const { return contexts_; }
  // The lowest job rank among the members: with the contexts and epoch, it names this
  // communicator's life across the job (two live communicators sharing contexts are disjoint).
  uint32_t owner() const { return owner_; }
  // Its life's name for the agreement service (contexts, epoch and owner, as above).
  agreement::CommKey agreement_key() const {
    return {.context = p2p_context(), .epoch = contexts_.epoch, .owner = owner_};
  }
  // Whether this process joined the agreement service for it (at its first agreement).
  bool agreement_joined() const { return agreement_joined_; }
  void set_agreement_joined() { agreement_joined_ = true; }
  // Agreements this member started on it (each path counts: the number of the next one), and
  // the numbers of non-blocking ones not yet finished.
  uint64_t agreements_started() const { return agreements_started_; }
  uint64_t AgreementStarted() { return agreements_started_++; }
  void AgreementPending(uint64_t seq, bool pending) {
    pending ? (void)agreements_pending_.insert(seq) : (void)agreements_pending_.erase(seq);
  }
  // The lowest agreement not decided here (AgreeValue::undecided_floor).
  uint64_t UndecidedFloor() const {
    return agreements_pending_.empty() ? agreements_started_ : *agreements_pending_.begin();
  }
  uint32_t p2p_context() const { return contexts_.p2p_context(); }
  uint32_t collective_context() const { return contexts_.collective_context(); }
  transport::DataPlane& plane() const { return *plane_; }
  // The binding's handle for this communicator (the C API's rft_comm_t), so errors found on a
  // request reach the handler of the communicator it belongs to.
  void* binding() const { return binding_; }
  void set_binding(void* binding) { binding_ = binding; }

  // Job rank of member `rank` (< size()), and the member rank of a job rank (kUndefined when it
  // is not a member).
  Rank JobRank(Rank rank) const { return world_order_ ? rank : group_.JobRank(rank); }
  Rank MemberRank(Rank job_rank) const {
    if (world_order_) return job_rank < size() ? job_rank : Group::kUndefined;
    return group_.RankOf(job_rank);
  }

  // Point-to-point peers: the job rank of peer `peer` (< peer_count(); a member, or a remote
  // member of an intercommunicator) and the peer rank of a job rank (kUndefined if none).
  uint32_t peer_count() const { return peer_count_; }
  Rank PeerJobRank(Rank peer) const {
    if (inter_ != nullptr) [[unlikely]]
      return inter_->remote.JobRank(peer);
    return JobRank(peer);
  }
  Rank PeerRank(Rank job_rank) const {
    if (inter_ != nullptr) [[unlikely]]
      return inter_->remote.RankOf(job_rank);
    return MemberRank(job_rank);
  }

  // The fast paths' checks: a send's peer and tag; a receive's source and tag (wildcards too).
  bool SendArgsOk(int dest, int tag) const {
    return dest >= 0 && static_cast<uint32_t>(dest) < peer_count_ && tag >= 0;
  }
  bool ReceiveArgsOk(int source, int tag) const {
    return source >= -1 && (source < 0 || static_cast<uint32_t>(source) < peer_count_) && tag >= -1;
  }
  // Argument checks, RFT_ERR_ARG naming the value: a peer rank for a send (0..peers-1), a source
  // (also ANY_SOURCE), a tag (>= 0, or ANY_TAG when `wildcard`).
  Status CheckPeer(const char* what, int rank) const;
  Status CheckSource(const char* what, int rank) const;
  static Status CheckTag(const char* what, int tag, bool wildcard);

  // Failure view.
  // Whether a member failed whose failure is not acknowledged (one atomic load when nothing
  // new failed since the last call).
  bool HasUnacknowledgedFailure() {
    Refresh();
    return failed_.size() > acked_;
  }
  // Whether any member is known failed (collectives refuse to start then).
  bool HasFailedMember() {
    Refresh();
    return !failed_.empty();
  }
  // Failed members by job rank, in the order this process learned of them.
  const std::vector<Rank>& FailedMembers() {
    Refresh();
    return failed_;
  }
  // Whether members failed and every one of them was aborted by another process (an abort of a
  // group it belongs to: FailureRegistry::IsAborted), so an error for them is
  // RFT_ERR_PROC_ABORTED. Error paths only (it takes the registry's lock per member).
  bool FailuresAreAborts() {
    Refresh();
    if (failed_.empty()) return false;
    for (Rank job_rank : failed_) {
      if (!registry_->IsAborted(job_rank)) return false;
    }
    return true;
  }
  // Acknowledges the first `count` failed members (all known ones when more); returns how many
  // are acknowledged now. Never decreases.
  uint32_t AckFailed(uint32_t count);
  uint32_t acknowledged() const { return acked_; }

  // The tag of the next collective call's messages (in the collective context): members start
  // collectives in the same order, so they agree on it, and calls in flight together never
  // take each other's messages.
  int32_t NextCollectiveTag() { return static_cast<int32_t>(collective_calls_++ & 0x3fffffff); }

  // Requests started on this communicator and not yet released (it is not freed while any is).
  uint32_t requests_in_use() const { return requests_in_use_; }
  void RequestStarted() { ++requests_in_use_; }
  void RequestReleased() { --requests_in_use_; }
  // Freed by the program while requests were pending: gone once the last one is released.
  bool free_deferred() const { return free_deferred_; }
  void DeferFree() { free_deferred_ = true; }

  // Revocation: starts nothing itself (Session::Revoke floods it); whether the data plane has
  // processed a revocation of this communicator.
  bool IsRevoked() const { return plane_->IsRevoked(p2p_context()); }

  // Collective operations' internal traffic (collectives.cc): a request the collective gave up
  // on (a member failed meanwhile) stays here until the data plane completes it, and so does the
  // temporary buffer it reads or writes, so neither is released under the transport.
  void Abandon(transport::Request* request) { abandoned_.requests.push_back(request); }
  bool HasAbandoned() const { return !abandoned_.requests.empty(); }
  void KeepAlive(std::unique_ptr<std::byte[]> buffer) {
    abandoned_.buffers.push_back(std::move(buffer));
  }
  // Completes what the transport has finished with among the abandoned requests (their buffers
  // go once none is left); how many are left.
  size_t ReapAbandoned();
  struct Abandoned {
    std::vector<transport::Request*> requests;
    std::vector<std::unique_ptr<std::byte[]>> buffers;
  };
  // The shared-memory area of its blocking small collectives (node_collectives.h): decided at
  // the first call that may use one; nullptr after that when they go through messages.
  bool node_area_decided() const { return node_area_decided_; }
  NodeCollectives* node_area() const { return node_area_.get(); }
  void DecideNodeArea(std::unique_ptr<NodeCollectives> area);

  // Hands what is left to `out` (the communicator is being freed).
  void MoveAbandoned(Abandoned* out) {
    for (auto* r : abandoned_.requests) out->requests.push_back(r);
    for (auto& b : abandoned_.buffers) out->buffers.push_back(std::move(b));
    abandoned_ = Abandoned();
  }

 private:
  void Refresh() {
    if (registry_->count() != seen_count_) [[unlikely]]
      Reload();
  }
  void Reload();

  struct InterGroups {
    Group local;
    Group remote;
    Rank local_rank;
    bool local_first;
  };

  transport::DataPlane* plane_;
  detector::FailureRegistry* registry_;
  Group group_;
  Rank rank_;
  bool world_order_;  // the members are job ranks 0..size-1 in order: member rank == job rank
  std::unique_ptr<InterGroups> inter_;  // an intercommunicator's groups; null otherwise
  uint32_t peer_count_;
  ContextIds::Allocation contexts_;
  uint32_t owner_;
  std::string name_;
  uint64_t seen_count_ = 0;  // registry count() when failed_ was last brought up to date
  size_t records_seen_ = 0;  // how many of the registry's records failed_ accounts for
  std::vector<Rank> failed_;
  uint32_t acked_ = 0;
  Abandoned abandoned_;
  void* binding_ = nullptr;
  uint32_t collective_calls_ = 0;
  bool agreement_joined_ = false;
  bool free_deferred_ = false;
  uint64_t agreements_started_ = 0;
  std::set<uint64_t> agreements_pending_;
  uint32_t requests_in_use_ = 0;
  bool node_area_decided_ = false;
  std::unique_ptr<NodeCollectives> node_area_;
};

}  // namespace rft::api

#endif  // RFT_ULFM_API_COMMUNICATOR_H_
