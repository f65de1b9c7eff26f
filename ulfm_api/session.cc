#include "ulfm_api/session.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "base/check.h"
#include "base/fault_injection.h"
#include "base/log.h"
#include "base/timeline.h"
#include "ulfm_api/collectives.h"
#include "ulfm_api/schedule.h"

namespace rft::api {

using transport::DataPlane;

StatusOr<std::unique_ptr<Session>> Session::Create(const Options& options) {
  std::unique_ptr<Runtime> runtime;
  RFT_ASSIGN_OR_RETURN(runtime, Runtime::Create());
  return Create(std::move(runtime), options);
}

StatusOr<std::unique_ptr<Session>> Session::Create(std::unique_ptr<Runtime> runtime,
                                                   const Options& options) {
  if (runtime == nullptr) return ArgError("Session::Create: runtime is null");
  if (options.level == FaultLevel::kAsync && !options.on_failure) {
    return ArgError("fault level ASYNC needs a failure callback; none was given");
  }
  std::unique_ptr<Session> session(new Session(std::move(runtime), options));
  RFT_RETURN_IF_ERROR(session->Start());
  return session;
}

Session::Session(std::unique_ptr<Runtime> runtime, const Options& options)
    : runtime_(std::move(runtime)), options_(options), requests_(64) {}

Status Session::Start() {
  detector::FailureRegistry* registry = &runtime_->registry();
  DataPlane* plane = &runtime_->plane();
  const Rank me = plane->rank();
  // A replacement's COMM_WORLD is the processes spawned with it (as MPI's spawned children's);
  // the job it joined is its COMM_PARENT (JoinSpawners).
  const transport::RankBlock& own = runtime_->bootstrap().own_block();
  const Group world_group = runtime_->bootstrap().joined() ? Group::Range(own.first, own.count)
                                                           : Group::Range(0, plane->size());
  world_ = std::make_unique<Communicator>(
      plane, registry, world_group,
      ContextIds::Allocation{.pair = ContextIds::kWorldPair, .epoch = 0}, "COMM_WORLD");
  self_ = std::make_unique<Communicator>(
      plane, registry, Group::Range(me, 1),
      ContextIds::Allocation{.pair = ContextIds::kSelfPair, .epoch = 0}, "COMM_SELF");
  RFT_RETURN_IF_ERROR(StartLife(*world_));
  RFT_RETURN_IF_ERROR(StartLife(*self_));
  detector::ControlPlane* control = &runtime_->control();
  switch (options_.level) {
    case FaultLevel::kNotify:
      break;
    case FaultLevel::kNone: {
      // On the control thread: the listener may run on a thread that must not block.
      transport::Bootstrap* job = &runtime_->bootstrap();
      on_failure_ = registry->Subscribe([control, job](const detector::FailureRecord& record) {
        control->Post([job, rank = record.rank] {
          const std::string why =
              "rank " + std::to_string(rank) + " failed and the fault level is NONE: the job ends";
          RFT_LOG_ERROR("%s", why.c_str());
          (void)job->Abort(1, why, RankSet());
        });
      });
      break;
    }
    case FaultLevel::kAsync: {
      // Once per rank: a failure recorded while this subscribes comes both ways. `told` is only
      // touched on the control thread.
      auto told = std::make_shared<std::vector<bool>>(plane->size(), false);
      auto tell = [callback = options_.on_failure, told](Rank rank) {
        if (rank >= told->size()) told->resize(rank + 1, false);  // the job grew
        if ((*told)[rank]) return;
        (*told)[rank] = true;
        callback(rank);
      };
      on_failure_ = registry->Subscribe([control, tell](const detector::FailureRecord& record) {
        control->Post([tell, rank = record.rank] { tell(rank); });
      });
      // Failures recorded before the subscription (a peer dead at start-up).
      for (const detector::FailureRecord& record : registry->Records()) {
        control->Post([tell, rank = record.rank] { tell(rank); });
      }
      break;
    }
  }
  // A spawned process starts knowing the job's gone processes (the merge record's, recorded
  // first: failed before it existed, or ended cleanly); only a failure after those is one here.
  const size_t known_gone =
      runtime_->merge_record().has_value() ? runtime_->merge_record()->failed.size() : 0;
  if (options_.level == FaultLevel::kNone && registry->count() > known_gone) {
    return ProcFailedError("rank " + std::to_string(registry->Records()[known_gone].rank) +
                           " failed during start-up and the fault level is NONE");
  }
  if (runtime_->merge_record().has_value()) return JoinSpawners();
  return Status::Ok();
}

Session::~Session() {
  on_failure_.Reset();
  // Freed requests that ended since the last progress call are not leaks; their errors are
  // logged (the program's handlers are gone). Only swept: advancing non-blocking collectives
  // here could complete an ishrink, whose delivery needs handles finalize has already retired.
  options_.on_freed_error = nullptr;
  plane().Progress();
  SweepFreed();
  // What the transport may still write into outlives its Close (abandoned_ is destroyed after
  // this body), whichever communicator it came from.
  for (std::unique_ptr<Communicator>* comm : {&world_, &self_, &parent_}) Discard(std::move(*comm));
  for (std::unique_ptr<Communicator>& comm : deferred_frees_) Discard(std::move(comm));
  deferred_frees_.clear();
  for (transport::Request*& request : abandoned_.requests) {
    bool done = false;
    (void)plane().Test(&request, &done, nullptr);
  }
  std::erase(abandoned_.requests, nullptr);
  if (requests_.in_use() > 0 || !abandoned_.requests.empty()) {
    RFT_LOG_WARN(
        "finalize with %zu request(s) not completed by the program (%zu of them freed by it) "
        "and %zu internal one(s) the transport still holds: leaked",
        requests_.in_use(), freed_.size(), abandoned_.requests.size());
    requests_.AbandonInUse();
  }
  // abandoned_.buffers go after Close (a member: destroyed after this body), when the data
  // plane has cancelled what it still ran.
  runtime_->Close();
}

// ---- Communicator creation ----

Status Session::StartLife(const Communicator& comm) {
  const ContextIds::Allocation& contexts = comm.contexts();
  RFT_RETURN_IF_ERROR(
      plane().SetContextEpoch(contexts.p2p_context(), contexts.epoch, comm.owner()));
  return plane().SetContextEpoch(contexts.collective_context(), contexts.epoch, comm.owner());
}

void Session::CombineProposals(const void* in, void* inout, size_t count) {
  const auto* a = static_cast<const ContextIds::Proposal*>(in);
  auto* b = static_cast<ContextIds::Proposal*>(inout);
  for (size_t i = 0; i < count; ++i) ContextIds::Combine(a[i], &b[i]);
}

std::string Session::Describe(const char* kind, const Communicator& parent) {
  return std::string(kind) + " of " + parent.name();
}

Status Session::RefuseInter(const char* kind, const Communicator& parent) {
  if (!parent.is_inter()) [[likely]]
    return Status::Ok();
  return ArgError(Describe(kind, parent) +
                  ": an intercommunicator; expected an intracommunicator (rft does not " + kind +
                  " intercommunicators, docs/api.md)");
}

StatusOr<ContextIds::Allocation> Session::AllocateContexts(Communicator& parent, bool refuse,
                                                           const char* kind) {
  ContextIds::Proposal proposal = contexts_.Propose();
  proposal.refused = refuse ? 1 : 0;
  const ReduceOp combine{.combine = CombineProposals, .element_size = sizeof(ContextIds::Proposal)};
  RFT_RETURN_IF_ERROR(RunCollective(parent, "context allocation", [&](Schedule& schedule) {
    return BuildAllreduce(schedule, &proposal, &proposal, 1, combine);
  }));
  if (proposal.refused != 0) {
    return ArgError(Describe(kind, parent) + ": another member gave a bad argument");
  }
  return contexts_.Take(proposal);
}

StatusOr<std::unique_ptr<Communicator>> Session::Build(Group group, ContextIds::Allocation contexts,
                                                       std::string name,
                                                       std::optional<Group> local) {
  auto comm =
      local.has_value()
          ? std::make_unique<Communicator>(&plane(), &runtime_->registry(), std::move(group),
                                           contexts, std::move(name), std::move(*local))
          : std::make_unique<Communicator>(&plane(), &runtime_->registry(), std::move(group),
                                           contexts, std::move(name));
  Status status = StartLife(*comm);
  if (!status.ok()) {
    (void)contexts_.Release(contexts.pair);
    return status;
  }
  return comm;
}

StatusOr<std::unique_ptr<Communicator>> Session::Dup(Communicator& parent) {
  ContextIds::Allocation contexts;
  RFT_ASSIGN_OR_RETURN(contexts, AllocateContexts(parent, false, "dup"));
  std::optional<Group> local;
  if (parent.is_inter()) local = parent.local_group();
  return Build(parent.group(), contexts, Describe("dup", parent), std::move(local));
}

StatusOr<std::unique_ptr<Communicator>> Session::Split(Communicator& parent, int color, int key) {
  Status check = Status::Ok();
  if (color < 0 && color != kUndefinedColor) {
    check = ArgError("split of " + parent.name() + ": color " + std::to_string(color) +
                     ": expected a color >= 0 or UNDEFINED");
  }
  return SplitChecked(parent, color, key, std::move(check), "split");
}

StatusOr<std::unique_ptr<Communicator>> Session::SplitChecked(Communicator& parent, int color,
                                                              int key, Status check,
                                                              const char* kind) {
  ContextIds::Allocation contexts;
  auto allocated = AllocateContexts(parent, !check.ok(), kind);
  if (!check.ok()) return check;
  RFT_ASSIGN_OR_RETURN(contexts, std::move(allocated));
  // Every member learns every (color, key); the pair is the same for every new communicator
  // (they are disjoint).
  struct Entry {
    int32_t color;
    int32_t key;
  };
  const Entry mine{.color = color, .key = key};
  std::vector<Entry> entries(parent.size());
  Status gathered = RunCollective(parent, kind, [&](Schedule& schedule) {
    return BuildAllgather(schedule, &mine, sizeof(Entry), entries.data());
  });
  if (!gathered.ok() || color == kUndefinedColor) {
    (void)contexts_.Release(contexts.pair);
    if (!gathered.ok()) return gathered;
    return std::unique_ptr<Communicator>();
  }
  // The job ranks of the members in [begin, end) (member ranks) with `color`, by key, then by
  // member rank.
  auto pick = [&](Rank begin, Rank end) {
    std::vector<Rank> members;
    for (Rank r = begin; r < end; ++r) {
      if (entries[r].color == color) members.push_back(r);
    }
    std::stable_sort(members.begin(), members.end(),
                     [&](Rank a, Rank b) { return entries[a].key < entries[b].key; });
    std::vector<Rank> job_ranks;
    job_ranks.reserve(members.size());
    for (Rank r : members) job_ranks.push_back(parent.JobRank(r));
    return job_ranks;
  };
  const std::string name = Describe(kind, parent) + " (color " + std::to_string(color) + ")";
  if (!parent.is_inter()) {
    Group group;
    RFT_ASSIGN_OR_RETURN(group, Group::FromJobRanks(pick(0, parent.size())));
    return Build(std::move(group), contexts, name);
  }
  // An intercommunicator (MPI-4.1 §7.4.2): the members of each group with this color form the
  // two groups of a new one, in the parent's order of the groups; a color the other group lacks
  // gives no communicator.
  const Rank local_begin = parent.local_first() ? 0 : parent.size() - parent.local_size();
  const Rank local_end = local_begin + parent.local_size();
  std::vector<Rank> local = pick(local_begin, local_end);
  std::vector<Rank> remote =
      parent.local_first() ? pick(local_end, parent.size()) : pick(0, local_begin);
  if (remote.empty()) {
    (void)contexts_.Release(contexts.pair);
    return std::unique_ptr<Communicator>();
  }
  std::vector<Rank> both = parent.local_first() ? local : remote;
  const std::vector<Rank>& second = parent.local_first() ? remote : local;
  both.insert(both.end(), second.begin(), second.end());
  Group group, local_group;
  RFT_ASSIGN_OR_RETURN(local_group, Group::FromJobRanks(std::move(local)));
  RFT_ASSIGN_OR_RETURN(group, Group::FromJobRanks(std::move(both)));
  return Build(std::move(group), contexts, name, std::move(local_group));
}

StatusOr<std::unique_ptr<Communicator>> Session::Create(Communicator& parent, const Group& group,
                                                        Status refused) {
  if (parent.is_inter()) return CreateInter(parent, group, std::move(refused));
  // A member of `group` outside the parent is a bad argument; refused by all together.
  Status check = std::move(refused);
  for (Rank job_rank : check.ok() ? group.job_ranks() : std::vector<Rank>()) {
    if (parent.MemberRank(job_rank) == Group::kUndefined) {
      check = ArgError("create from " + parent.name() + ": job rank " + std::to_string(job_rank) +
                       " is in the group but not in the communicator");
      break;
    }
  }
  auto allocated = AllocateContexts(parent, !check.ok(), "create");
  if (!check.ok()) return check;
  ContextIds::Allocation contexts;
  RFT_ASSIGN_OR_RETURN(contexts, std::move(allocated));
  if (!group.Contains(plane().rank())) {
    (void)contexts_.Release(contexts.pair);
    return std::unique_ptr<Communicator>();
  }
  return Build(group, contexts, Describe("create", parent));
}

// MPI-4.1 §7.4.2 (MPI_COMM_CREATE of an intercommunicator): each group passes a subgroup of its
// own group, and the members of the two subgroups form an intercommunicator, each side in its
// subgroup's order; RFT_COMM_NULL outside them, and everywhere when either subgroup is empty.
// That is a split with one color for the subgroups' members, keyed by their subgroup rank.
StatusOr<std::unique_ptr<Communicator>> Session::CreateInter(Communicator& parent,
                                                             const Group& group, Status refused) {
  Status check = std::move(refused);
  const Rank local_begin = parent.local_first() ? 0 : parent.size() - parent.local_size();
  for (Rank job_rank : check.ok() ? group.job_ranks() : std::vector<Rank>()) {
    const Rank member = parent.MemberRank(job_rank);
    if (member == Group::kUndefined || member < local_begin ||
        member >= local_begin + parent.local_size()) {
      check = ArgError("create from " + parent.name() + ": job rank " + std::to_string(job_rank) +
                       " is in the group but not in this process's group of the "
                       "intercommunicator");
      break;
    }
  }
  const Rank mine = group.RankOf(plane().rank());
  const int color = mine == Group::kUndefined ? kUndefinedColor : 0;
  const int key = mine == Group::kUndefined ? 0 : static_cast<int>(mine);
  return SplitChecked(parent, color, key, std::move(check), "create");
}

StatusOr<std::unique_ptr<Communicator>> Session::CreateGroup(Communicator& parent,
                                                             const Group& group, int tag) {
  const std::string what = Describe("create_group", parent);
  RFT_RETURN_IF_ERROR(RefuseInter("create_group", parent));
  if (!group.Contains(plane().rank())) {
    return ArgError(what + ": the calling process is not in the group (only its members call)");
  }
  for (Rank job_rank : group.job_ranks()) {
    if (parent.MemberRank(job_rank) == Group::kUndefined) {
      return ArgError(what + ": job rank " + std::to_string(job_rank) +
                      " is in the group but not in the communicator");
    }
  }
  // A bad tag (every member passes the same one) is refused by all together, after the
  // exchange: the others would wait for this member otherwise.
  const bool bad_tag = tag < 0;
  // Only the group's members take part: they agree on the contexts by an allreduce among
  // themselves, over a communicator of the group that borrows the parent's collective context.
  // Its messages carry tags the parent's own collectives never use (NextCollectiveTag stays
  // below 2^30), and the caller's tag tells concurrent creations over overlapping groups apart.
  Communicator members(&plane(), &runtime_->registry(), group, parent.contexts(), what);
  ContextIds::Proposal proposal = contexts_.Propose();
  proposal.refused = bad_tag ? 1 : 0;
  Status allocated = Schedule::CheckCanRun(members, "create_group");
  if (allocated.ok()) {
    Schedule schedule(members, "create_group", kCreateGroupTags | (tag & (kCreateGroupTags - 1)));
    const ReduceOp combine{.combine = CombineProposals,
                           .element_size = sizeof(ContextIds::Proposal)};
    allocated = BuildAllreduce(schedule, &proposal, &proposal, 1, combine);
    if (allocated.ok()) allocated = schedule.Run(*this);
  }
  // What the transport may still write into (a member failed on the way) stays with the session.
  members.ReapAbandoned();
  members.MoveAbandoned(&abandoned_);
  if (bad_tag) return ArgError(what + ": tag " + std::to_string(tag) + ": expected a tag >= 0");
  RFT_RETURN_IF_ERROR(allocated);
  if (proposal.refused != 0) return ArgError(what + ": another member gave a bad argument");
  ContextIds::Allocation contexts;
  RFT_ASSIGN_OR_RETURN(contexts, contexts_.Take(proposal));
  return Build(group, contexts, what);
}

Status Session::Free(std::unique_ptr<Communicator>& comm, bool* deferred) {
  if (deferred != nullptr) *deferred = false;
  if (comm == nullptr) return ArgError("free: the communicator is null");
  if (comm.get() == world_.get() || comm.get() == self_.get()) {
    return ArgError("free: COMM_WORLD and COMM_SELF are never freed");
  }
  if (comm->requests_in_use() > 0) {
    comm->DeferFree();
    deferred_frees_.push_back(std::move(comm));
    if (deferred != nullptr) *deferred = true;
    return Status::Ok();
  }
  RFT_RETURN_IF_ERROR(contexts_.Release(comm->contexts().pair));
  // Its agreement node stays a while on the control thread, for members still agreeing.
  if (comm->agreement_joined()) runtime_->agreement().Leave(comm->agreement_key());
  comm->ReapAbandoned();
  comm->MoveAbandoned(&abandoned_);
  comm.reset();
  return Status::Ok();
}

Status Session::Disconnect(Communicator& comm) {
  if (&comm == world_.get() || &comm == self_.get()) {
    return ArgError("disconnect: COMM_WORLD and COMM_SELF are never disconnected");
  }
  // A freed request ends by completing or by its peer's failure, never waits on the program.
  const auto given_up_here = [this, &comm] {
    return std::any_of(freed_.begin(), freed_.end(),
                       [&comm](const Request* request) { return request->comm == &comm; });
  };
  while (given_up_here()) {
    SweepFreed();
    if (given_up_here()) ProgressOrIdle();
  }
  uint32_t flag = 1;
  return Agree(comm, &flag);
}

void Session::FinishDeferredFree(Communicator* comm) {
  auto it =
      std::find_if(deferred_frees_.begin(), deferred_frees_.end(),
                   [comm](const std::unique_ptr<Communicator>& c) { return c.get() == comm; });
  RFT_CHECK(it != deferred_frees_.end(), "a deferred free of a communicator the session lacks");
  std::unique_ptr<Communicator> freed = std::move(*it);
  deferred_frees_.erase(it);
  void* binding = freed->binding();
  const Status status = Free(freed);
  if (!status.ok()) RFT_LOG_WARN("deferred free: %s", status.ToString().c_str());
  if (options_.on_deferred_free) options_.on_deferred_free(binding);
}

void Session::Discard(std::unique_ptr<Communicator> comm) {
  if (comm == nullptr) return;
  comm->ReapAbandoned();
  comm->MoveAbandoned(&abandoned_);
}

// ---- Revoke and abort ----

Status Session::Revoke(Communicator& comm) {
  const ContextIds::Allocation& contexts = comm.contexts();
  if (timeline::Enabled()) {
    timeline::Record(timeline::Event::kRevoked, contexts.p2p_context(), comm.name());
  }
  // Fast: a notice to every member over the data plane (a member waiting in a receive learns it
  // within a message's latency). Sure: the control plane's reliable flood, started soon after
  // (RevokeService: without waking the control threads now) and by every member that heard a
  // notice, so it reaches every live member even if this process dies now.
  const bool one_notice = fault::Armed("revoke.one_notice", plane().rank());
  for (Rank member = 0; member < comm.size(); ++member) {
    const Rank job_rank = comm.JobRank(member);
    if (job_rank == plane().rank()) continue;
    plane().SendRevocation(job_rank, contexts.p2p_context(), contexts.epoch, comm.owner());
    plane().SendRevocation(job_rank, contexts.collective_context(), contexts.epoch, comm.owner());
    if (one_notice) [[unlikely]] {
      plane().Progress();  // out of this process before it dies
      fault::Die("revoke.one_notice");
    }
  }
  RFT_RETURN_IF_ERROR(
      runtime_->revoke().Revoke(contexts.p2p_context(), contexts.epoch, comm.owner()));
  // Here at once: the caller's next call already sees its own revocation.
  plane().RevokeHere(contexts.p2p_context(), contexts.epoch, comm.owner());
  plane().RevokeHere(contexts.collective_context(), contexts.epoch, comm.owner());
  plane().Progress();
  return Status::Ok();
}

Status Session::Abort(Communicator& comm, int code, std::string_view message) {
  RankSet ranks;
  for (Rank job_rank : comm.group().job_ranks()) ranks.Insert(job_rank);
  // The processes outside the group outlive the abort: they learn these failures as aborts
  // (RFT_ERR_PROC_ABORTED), told before the launcher acts.
  if (ranks.size() < plane().size()) runtime_->control().AnnounceAborted(ranks);
  return AbortRanks(ranks, code, message);
}

Status Session::AbortJob(int code, std::string_view message) {
  return AbortRanks(RankSet::Range(0, plane().size()), code, message);
}

Status Session::AbortRanks(const RankSet& ranks, int code, std::string_view message) {
  const Status aborted = fault::Armed("abort.refused", plane().rank())
                             ? fault::Failure("abort.refused")
                             : runtime_->bootstrap().Abort(code, message, ranks);
  if (aborted.ok()) return aborted;
  // The last resort: the group's processes this node can reach, by their records' pids.
  const RankSet unreached = runtime_->control().KillLocalProcesses(ranks);
  RFT_LOG_ERROR(
      "the launcher refused the abort (%s): killed the members on this node by process "
      "id%s%s",
      aborted.ToString().c_str(), unreached.empty() ? "" : "; out of reach on other nodes: ranks ",
      unreached.empty() ? "" : unreached.ToString().c_str());
  return aborted;
}

// ---- Requests (point-to-point in session_messages.cc) ----

Request* Session::NewRequest(Communicator& comm, transport::Request* inner, bool any_source) {
  Request* request = requests_.Acquire();
  request->inner = inner;
  request->comm = &comm;
  request->any_source = any_source;
  comm.RequestStarted();
  return request;
}

void Session::ReleaseRequest(Request* request) {
  Communicator* comm = request->comm;
  comm->RequestReleased();
  requests_.Release(request);
  if (comm->free_deferred() && comm->requests_in_use() == 0) [[unlikely]]
    FinishDeferredFree(comm);
}

// ---- Collectives ----

Status Session::StartCollective(std::unique_ptr<Schedule> schedule, Request** request) {
  Communicator& comm = schedule->comm();
  Request* started = NewRequest(comm, nullptr, false);
  bool done = false;
  (void)schedule->Advance(&done);  // its first round goes out now; the outcome is the request's
  started->collective = schedule.release();
  if (!done) active_collectives_.push_back(started);
  *request = started;
  return Status::Ok();
}

size_t Session::AdvanceCollectives() {
  // One schedule's progress call may complete another's transfers after that one was advanced
  // in this pass: passes repeat while any moved (bounded), so none is left waiting for an event
  // that has come already (the caller would sleep until the next one).
  constexpr int kMaxPasses = 8;
  size_t moved = 0;
  for (int pass = 0; pass < kMaxPasses && !active_collectives_.empty(); ++pass) {
    size_t moved_now = 0;
    for (size_t i = 0; i < active_collectives_.size();) {
      Schedule& schedule = *active_collectives_[i]->collective;
      const uint64_t events = schedule.progress_events();
      bool done = false;
      (void)schedule.Advance(&done);
      moved_now += schedule.progress_events() - events;
      if (done) {
        ++moved_now;
        active_collectives_[i] = active_collectives_.back();
        active_collectives_.pop_back();
      } else {
        ++i;
      }
    }
    moved += moved_now;
    if (moved_now == 0) break;
  }
  return moved;
}

Status Session::CompleteCollective(Request** handle, bool block) {
  Request* request = *handle;
  Schedule& schedule = *request->collective;
  bool done = false;
  Status result = schedule.Advance(&done);
  while (!done && block) {
    IdleIfBlocking();
    result = schedule.Advance(&done);
  }
  if (!done) return result;
  std::erase(active_collectives_, request);
  delete request->collective;
  request->collective = nullptr;
  ReleaseRequest(request);
  *handle = nullptr;
  return result;
}

}  // namespace rft::api
