// Session's intercommunicator creation (MPI's Intercomm_create and Intercomm_merge).
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "ulfm_api/collectives.h"
#include "ulfm_api/session.h"

namespace rft::api {

namespace {

// What a leader tells the other leader, then its group: the groups' combined context proposal
// and the other group's size; `error` non-zero (an error class) when its group could not pool
// its proposals, or (to its group) when the exchange failed: every member then returns it, and
// none waits for the others.
struct InterHello {
  ContextIds::Proposal contexts;
  uint32_t size = 0;
  uint32_t leader_job_rank = 0;
  int32_t error = 0;  // an error class
};

// Merge's proposal: the contexts, and whether any member of each group (in the
// intercommunicator's order) passed `high`.
struct MergeProposal {
  ContextIds::Proposal contexts;
  uint32_t high[2] = {0, 0};
};

void CombineMerge(const void* in, void* inout, size_t count) {
  const auto* a = static_cast<const MergeProposal*>(in);
  auto* b = static_cast<MergeProposal*>(inout);
  for (size_t i = 0; i < count; ++i) {
    ContextIds::Combine(a[i].contexts, &b[i].contexts);
    b[i].high[0] |= a[i].high[0];
    b[i].high[1] |= a[i].high[1];
  }
}

}  // namespace

StatusOr<std::unique_ptr<Communicator>> Session::IntercommCreate(Communicator& local,
                                                                 int local_leader,
                                                                 Communicator& peer,
                                                                 int remote_leader, int tag) {
  const std::string what = Describe("intercomm_create", local);
  RFT_RETURN_IF_ERROR(RefuseInter("intercomm_create", local));
  if (local_leader < 0 || static_cast<uint32_t>(local_leader) >= local.size()) {
    return ArgError(what + ": local_leader " + std::to_string(local_leader) + ": expected 0.." +
                    std::to_string(local.size() - 1));
  }
  // 1. The local group's combined proposal, at every member (the leader needs it).
  InterHello mine{.contexts = contexts_.Propose(),
                  .size = local.size(),
                  .leader_job_rank = local.JobRank(static_cast<Rank>(local_leader))};
  const ReduceOp combine{.combine = CombineProposals, .element_size = sizeof(ContextIds::Proposal)};
  const Status pooled = RunCollective(local, "intercomm_create", [&](Schedule& schedule) {
    return BuildAllreduce(schedule, &mine.contexts, &mine.contexts, 1, combine);
  });
  // 2. The leaders exchange proposals and groups over `peer`; a leader whose group failed in
  // step 1 still does, with the error, so that the other leader (alive) never waits for it.
  if (!pooled.ok()) mine.error = pooled.code();
  if (!pooled.ok() && local.rank() != static_cast<Rank>(local_leader)) return pooled;
  InterHello outcome;
  std::vector<Rank> remote;
  if (local.rank() == static_cast<Rank>(local_leader)) {
    Status exchanged = peer.CheckPeer("intercomm_create: remote_leader", remote_leader);
    if (exchanged.ok()) exchanged = Communicator::CheckTag("intercomm_create", tag, false);
    InterHello theirs;
    if (exchanged.ok()) {
      exchanged = Sendrecv(peer, &mine, sizeof mine, remote_leader, tag, &theirs, sizeof theirs,
                           remote_leader, tag, nullptr);
    }
    if (exchanged.ok() && (mine.error != 0 || theirs.error != 0)) {
      exchanged = mine.error != 0 ? pooled
                                  : Status(static_cast<rft_error_t>(theirs.error),
                                           what + ": the remote group failed to start it");
    }
    if (exchanged.ok()) {
      remote.resize(theirs.size);
      exchanged = Sendrecv(peer, local.group().job_ranks().data(), local.size() * sizeof(Rank),
                           remote_leader, tag, remote.data(), remote.size() * sizeof(Rank),
                           remote_leader, tag, nullptr);
    }
    for (Rank job_rank : exchanged.ok() ? remote : std::vector<Rank>()) {
      if (local.MemberRank(job_rank) != Group::kUndefined) {
        exchanged = ArgError(what + ": job rank " + std::to_string(job_rank) +
                             " is in both groups; expected disjoint groups");
        break;
      }
    }
    if (exchanged.ok()) {
      outcome = theirs;
      ContextIds::Combine(mine.contexts, &outcome.contexts);
    } else {
      outcome.error = exchanged.code();
    }
    if (!pooled.ok()) return pooled;  // its group's next collective fails (a member failed)
  }
  // 3. The leader hands the outcome to its group.
  RFT_RETURN_IF_ERROR(RunCollective(local, "intercomm_create", [&](Schedule& schedule) {
    return BuildBcast(schedule, &outcome, sizeof outcome, local_leader);
  }));
  if (outcome.error != 0) {
    return Status(static_cast<rft_error_t>(outcome.error),
                  what + ": the leader (rank " + std::to_string(local_leader) +
                      ") could not reach the remote group");
  }
  remote.resize(outcome.size);
  RFT_RETURN_IF_ERROR(RunCollective(local, "intercomm_create", [&](Schedule& schedule) {
    return BuildBcast(schedule, remote.data(), remote.size() * sizeof(Rank), local_leader);
  }));
  ContextIds::Allocation contexts;
  RFT_ASSIGN_OR_RETURN(contexts, contexts_.Take(outcome.contexts));
  // Both groups order the members alike: the lower leader's group first.
  std::vector<Rank> members;
  const bool local_first = mine.leader_job_rank < outcome.leader_job_rank;
  const std::vector<Rank>& first = local_first ? local.group().job_ranks() : remote;
  const std::vector<Rank>& second = local_first ? remote : local.group().job_ranks();
  members.insert(members.end(), first.begin(), first.end());
  members.insert(members.end(), second.begin(), second.end());
  auto group = Group::FromJobRanks(std::move(members));
  if (!group.ok()) {
    (void)contexts_.Release(contexts.pair);
    return group.status();
  }
  return Build(std::move(*group), contexts, what, local.group());
}

StatusOr<std::unique_ptr<Communicator>> Session::IntercommMerge(Communicator& inter, bool high) {
  const std::string what = Describe("intercomm_merge", inter);
  if (!inter.is_inter()) {
    return ArgError(what + ": an intracommunicator; expected an intercommunicator");
  }
  MergeProposal proposal{.contexts = contexts_.Propose()};
  proposal.high[inter.local_first() ? 0 : 1] = high ? 1 : 0;
  const ReduceOp combine{.combine = CombineMerge, .element_size = sizeof(MergeProposal)};
  RFT_RETURN_IF_ERROR(RunCollective(inter, "intercomm_merge", [&](Schedule& schedule) {
    return BuildAllreduce(schedule, &proposal, &proposal, 1, combine);
  }));
  ContextIds::Allocation contexts;
  RFT_ASSIGN_OR_RETURN(contexts, contexts_.Take(proposal.contexts));
  // The intercommunicator's order, unless only its first group asked to come last.
  const bool swap = proposal.high[0] != 0 && proposal.high[1] == 0;
  const Group& local = inter.local_group();
  const Group& remote = inter.remote_group();
  const bool local_first = inter.local_first() != swap;
  Group merged = local_first ? Group::Union(local, remote) : Group::Union(remote, local);
  return Build(std::move(merged), contexts, what);
}

}  // namespace rft::api
