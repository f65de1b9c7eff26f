// rft::api::Session: the process's use of rft through the API: the runtime, COMM_WORLD and
// COMM_SELF, communicator creation, point-to-point operations on communicators with ULFM's
// completion rules, revoke and abort. The C API (rft.h) is a thin binding over it.
//
// Completion rules (MPI 4.1 ULFM, docs/api.md):
// - A named peer that failed: the operation completes with RFT_ERR_PROC_FAILED.
// - An ANY_SOURCE receive while a failed member of its communicator is not acknowledged: Wait and
//   Test return RFT_ERR_PROC_FAILED_PENDING and the request stays active (it can still match,
//   be cancelled, or complete after AckFailed); a blocking Recv cancels it and returns
//   RFT_ERR_PROC_FAILED unless it matched meanwhile.
// - Waitall/Testall: RFT_ERR_IN_STATUS when some request failed or is held by the rule above;
//   each status then says its own error (RFT_ERR_PENDING for one not done). A completed
//   request is released with its real status; the others stay active.
// - A revoked communicator: every operation in it completes with RFT_ERR_REVOKED.
//
// Threading: one thread (the one that created the session), like the data plane.
#ifndef RFT_ULFM_API_SESSION_H_
#define RFT_ULFM_API_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "transport/dataplane/request.h"
#include "ulfm_api/communicator.h"
#include "ulfm_api/context_ids.h"
#include "ulfm_api/group.h"
#include "ulfm_api/request_table.h"
#include "ulfm_api/runtime.h"
#include "ulfm_api/schedule.h"

namespace rft::api {

// How failures reach the program, asked for at initialisation like a thread level.
enum class FaultLevel : uint8_t {
  kNone,    // any failure of a process of the job aborts the whole job
  kNotify,  // failures are returned as errors (ULFM)
  kAsync,   // the same, and Options::on_failure runs on the control thread for each failure
};

class Session {
 public:
  struct Options {
    FaultLevel level = FaultLevel::kNotify;
    // kAsync: called on the control thread with the job rank of each failed process, once, in
    // the registry's order. Must be quick; must not call the API.
    std::function<void(Rank)> on_failure;
    // Called with a communicator's binding() when a free that waited for its pending requests
    // (Free's `deferred`) has happened, from the call that released the last of them. Not at
    // teardown: what is still pending then goes with the session.
    std::function<void(void*)> on_deferred_free;
    // Called with the error a request the program freed (FreeRequest) ended with, other than a
    // failed peer or a revocation, from the call that found it ended (the binding hands it to
    // COMM_SELF's handler: no handle is left to report it on).
    std::function<void(const Status&)> on_freed_error;
  };

  // Joins the job (Runtime::Create) and builds COMM_WORLD and COMM_SELF. Collective over the job.
  static StatusOr<std::unique_ptr<Session>> Create(const Options& options);
  static StatusOr<std::unique_ptr<Session>> Create(std::unique_ptr<Runtime> runtime,
                                                   const Options& options);
  // Closes the runtime (Runtime::Close): never waits for other processes, so it ends after any
  // failures. Requests still pending are reported and leaked.
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  Runtime& runtime() { return *runtime_; }
  transport::DataPlane& plane() { return runtime_->plane(); }
  FaultLevel level() const { return options_.level; }
  Communicator& world() { return *world_; }
  Communicator& self() { return *self_; }
  const ContextIds& contexts() const { return contexts_; }

  // Communicator creation: collective over `parent` (every member calls, in the same order);
  // RFT_ERR_PROC_FAILED or RFT_ERR_REVOKED when the parent cannot run a collective (a member
  // failed, it was revoked), possibly at some members only.
  StatusOr<std::unique_ptr<Communicator>> Dup(Communicator& parent);
  // Members with the same `color` (>= 0) form a communicator, ordered by (key, parent rank);
  // kUndefinedColor gives nullptr. Of an intercommunicator: an intercommunicator between the
  // two groups' members of that color (nullptr when the other group has none).
  static constexpr int kUndefinedColor = -32766;
  StatusOr<std::unique_ptr<Communicator>> Split(Communicator& parent, int color, int key);
  // The members of `group` (a subset of the parent's, in its order) form a communicator;
  // nullptr at the other members. Collective over `parent`. A caller that found its own argument
  // bad passes the error as `refused`: it still takes part, so that every member fails with
  // RFT_ERR_ARG instead of waiting for it. Of an intercommunicator, each group passes a subgroup
  // of its own group: an intercommunicator between the two subgroups (nullptr when either is
  // empty).
  StatusOr<std::unique_ptr<Communicator>> Create(Communicator& parent, const Group& group,
                                                 Status refused = Status::Ok());
  // MPI's Comm_create_group: the members of `group` (a subset of the parent's containing this
  // process) form a communicator, in the group's order. Collective over the group's members
  // only: the others need not call, and only a failure among the members fails it
  // (RFT_ERR_PROC_FAILED; RFT_ERR_REVOKED on a revoked parent). `tag` (>= 0) tells apart
  // creations that overlapping groups of one parent run at the same time.
  StatusOr<std::unique_ptr<Communicator>> CreateGroup(Communicator& parent, const Group& group,
                                                      int tag);
  // The tags of create_group's messages in the parent's collective context: the high bit below
  // the sign, never set by NextCollectiveTag; the caller's tag fills the bits under it.
  static constexpr int32_t kCreateGroupTags = 0x40000000;
  // MPI's Intercomm_create: an intercommunicator between `local`'s group and another, disjoint
  // group, whose leaders are `local`'s rank `local_leader` and `peer`'s rank `remote_leader`
  // (significant at the local leader only). The leaders exchange their groups and context
  // proposals over `peer` with `tag` (MPI's rule: the tag tells concurrent creations apart);
  // each leader hands the outcome to its group. Collective over `local` (and so over both
  // groups). The members are ordered with the group of the lower leader (by job rank) first.
  StatusOr<std::unique_ptr<Communicator>> IntercommCreate(Communicator& local, int local_leader,
                                                          Communicator& peer, int remote_leader,
                                                          int tag);
  // MPI's Intercomm_merge: an intracommunicator of both groups of `inter`; the group whose
  // members all pass `high` comes after the other (the intercommunicator's order when both
  // groups pass the same). Collective over both groups.
  StatusOr<std::unique_ptr<Communicator>> IntercommMerge(Communicator& inter, bool high);
  // Gives the communicator's contexts back (local: the epochs keep a reuse apart) and destroys
  // it (`comm` becomes null). With requests started on it not yet released, MPI's rule: the
  // session takes it, they go on and complete as usual, and the free happens when the last one
  // is released (`*deferred` says so; Options::on_deferred_free tells of the end).
  Status Free(std::unique_ptr<Communicator>& comm, bool* deferred = nullptr);
  // MPI's Comm_disconnect, before the free: waits until the requests the program gave up on
  // `comm` (rft_request_free) have completed, then agrees over `comm` (Agree), so every member
  // that returns is past its communication on it and gets the same outcome: RFT_ERR_PROC_FAILED
  // when a member failed that not every one had acknowledged. Works on a revoked communicator;
  // collective over its live members (both groups of an intercommunicator). The caller frees
  // `comm` whatever the outcome (docs/api.md, "Disconnecting").
  Status Disconnect(Communicator& comm);
  // Teardown: hands what the transport may still write into (Communicator::Abandon) to the
  // session, which keeps it until the transport is closed, and destroys `comm`.
  void Discard(std::unique_ptr<Communicator> comm);

  // ULFM agreement (docs/agreement.md): `*flag` becomes the bitwise AND of the flags of the
  // live members (and maybe of members that failed during it), the same at every member that
  // returns. RFT_ERR_PROC_FAILED when a member failed that not every participant had
  // acknowledged (the flag is still the agreed one). Never RFT_ERR_REVOKED. Collective over
  // `comm`'s live members; the agreed failed set is in the registry on return.
  Status Agree(Communicator& comm, uint32_t* flag);
  // The non-blocking form: `*request` completes with Agree's outcome, and `*flag` (which must
  // stay valid until then) gets the agreed flag.
  Status Iagree(Communicator& comm, uint32_t* flag, Request** request);
  // The guarded agreement (docs/agreement.md, "Guarded agreement"): Agree on the agreement
  // service, where the members it still waits for `seconds` after their parent's start (the
  // root: 1.2 × seconds and a grace after its children's) are declared failed and killed.
  // `*cut_off` (if not null) becomes the job ranks the agreement found failed that not every
  // participant had acknowledged: the cut-off members and any that died (then
  // RFT_ERR_PROC_FAILED). RFT_ERR_ARG for `seconds` not positive and finite, or above a year.
  Status AgreeDeadline(Communicator& comm, uint32_t* flag, double seconds,
                       std::vector<Rank>* cut_off);
  // Runs an agreement on `comm` with `contribution` (its acknowledged set is filled here) to
  // its decision: first the fast path when every member is alive (FastAgreement), else (or when
  // it fails) the control plane's agreement service.
  StatusOr<agreement::Decision> RunAgreement(Communicator& comm,
                                             agreement::AgreeValue contribution);
  // Starts agreement `seq` (Communicator::AgreementStarted's number) on `comm` on the agreement
  // service (its undecided_floor is the service's).
  StatusOr<std::shared_ptr<agreement::Operation>> StartAgreement(Communicator& comm, uint64_t seq,
                                                                 agreement::AgreeValue contribution,
                                                                 int64_t deadline_ns = 0);
  // The outcome of a finished agreement on `comm`: the flag, and RFT_ERR_PROC_FAILED when a
  // member failed that not every participant had acknowledged.
  static Status AgreementOutcome(Communicator& comm, const agreement::Decision& decision,
                                 uint32_t* flag);
  // ULFM shrink: a new communicator of `comm`'s members that are not in the agreed failed set,
  // in `comm`'s order, with fresh contexts. Works on a revoked communicator; equals Dup when
  // nothing failed. Collective over `comm`'s live members.
  StatusOr<std::unique_ptr<Communicator>> Shrink(Communicator& comm);
  // The non-blocking form: `*request` completes once the agreement is decided here, and then
  // `deliver` gets the new communicator (on the thread that completes the request). Its contexts
  // come from a reservation (ContextIds::Reserve), so creations may run meanwhile. `comm` must
  // outlive the request (a Free meanwhile waits for it: deferred).
  Status Ishrink(Communicator& comm, std::function<void(std::unique_ptr<Communicator>)> deliver,
                 Request** request);

  // Recovery by replacement (docs/recovery.md, "The merge"). Collective over `comm`'s live
  // members; works on a revoked communicator. One agreement decides the failed members and the
  // new contexts (as Shrink); the lowest live member spawns one process running `argv` for each
  // failed member through the launcher (PMIx_Spawn), and every survivor adds them to the job
  // (Runtime::AddRanks). The result has `comm`'s size: every survivor keeps its rank, each
  // replacement takes a failed member's, in order. A last agreement over it, the replacements
  // included, confirms it. Without failures no process starts (a dup). RFT_ERR_ARG (at every
  // member) when a member's `argv` is empty; RFT_ERR_PROC_FAILED when a participant failed on
  // the way (shrink and spawn again); RFT_ERR_OTHER when the launcher could not spawn.
  StatusOr<std::unique_ptr<Communicator>> Replace(Communicator& comm,
                                                  const std::vector<std::string>& argv);
  // MPI's Comm_spawn: the root starts each program's `maxprocs` processes running its `argv`
  // (the program, then its arguments; significant at the root only) through the launcher, in a
  // namespace of their own (their RFT_COMM_WORLD), and returns an intercommunicator between
  // `comm`'s group and theirs; they find it with TakeParent. Collective over `comm`, which must
  // hold every live process of the job (the new processes join the job's rank space). One agreement
  // decides the contexts and checks the arguments, a last one over the intercommunicator, the new
  // processes included, confirms it. `*errcodes` gets one code per spawned process: RFT_SUCCESS, or
  // RFT_ERR_PROC_FAILED for one that died during the spawn (then the call fails so at every
  // member of both groups). RFT_ERR_ARG at every member for a bad root, program or count;
  // RFT_ERR_PROC_FAILED when a member of `comm` failed; RFT_ERR_OTHER when the launcher could
  // not start them.
  // With several programs (MPI's Comm_spawn_multiple), the processes of program 0 come first in
  // the new processes' RFT_COMM_WORLD, then those of program 1, ...; each finds its program's
  // index with rft_appnum. The root's programs count; each needs a command and maxprocs >= 1,
  // and their sum is at most kMaxSpawn.
  struct SpawnProgram {
    std::vector<std::string> argv;  // the program, then its arguments
    int maxprocs = 0;
    std::string wdir;  // where its processes start; empty: the root's working directory
  };
  StatusOr<std::unique_ptr<Communicator>> Spawn(Communicator& comm,
                                                const std::vector<SpawnProgram>& programs, int root,
                                                std::vector<int>* errcodes);
  // The most processes one spawn starts.
  static constexpr int kMaxSpawn = 1 << 16;
  // In a replacement: the communicator its spawners built, which it joined at start-up; the
  // caller takes it (then nullptr). nullptr in any other process.
  std::unique_ptr<Communicator> TakeParent() { return std::move(parent_); }

  // A warning the program raised here (rft_warning): counted, the first kept, logged at once.
  void RaiseWarning(std::string_view message);
  uint64_t warnings() const { return warnings_; }
  // At finalize (RFT_FINALIZE_WARNINGS): one agreement over world says whether any rank raised a
  // warning; if one did, the survivors gather (count, first message) and the lowest prints a
  // line per rank that raised any. Collective over world's live members; problems are logged,
  // never returned (finalize goes on).
  void ReportWarnings();
  static constexpr size_t kWarningBytes = 160;  // of the first message, with its terminator

  // ULFM revoke: not collective, idempotent; every live member's operations in `comm` complete
  // with RFT_ERR_REVOKED.
  Status Revoke(Communicator& comm);
  // Kills the processes of `comm`'s group through the launcher (this one last, if a member). When
  // the launcher refuses, kills those on this node by process id and returns the refusal (the
  // caller then ends this process).
  Status Abort(Communicator& comm, int code, std::string_view message);
  // The same for every process of the job (ERRORS_ARE_FATAL: all connected processes).
  Status AbortJob(int code, std::string_view message);

  // Point-to-point: ranks are `comm`'s; statuses name `comm`'s ranks. A synchronous send
  // (`mode`; Ssend) completes only once the receiver matched it.
  Status Isend(Communicator& comm, const void* buffer, size_t bytes, int dest, int tag,
               Request** request, transport::SendMode mode = transport::SendMode::kStandard);
  Status Ssend(Communicator& comm, const void* buffer, size_t bytes, int dest, int tag);
  Status Irecv(Communicator& comm, void* buffer, size_t capacity, int source, int tag,
               Request** request);
  Status Send(Communicator& comm, const void* buffer, size_t bytes, int dest, int tag);
  // A message sent at once with no request (the data plane's fast path, for a small message
  // with nothing queued before it): false, with nothing sent, when it cannot leave now or an
  // argument is bad (Isend then says why).
  bool TrySend(Communicator& comm, const void* buffer, size_t bytes, int dest, int tag);
  Status Recv(Communicator& comm, void* buffer, size_t capacity, int source, int tag,
              transport::MessageStatus* status);
  Status Sendrecv(Communicator& comm, const void* send, size_t send_bytes, int dest, int send_tag,
                  void* receive, size_t capacity, int source, int receive_tag,
                  transport::MessageStatus* status);
  Status Iprobe(Communicator& comm, int source, int tag, bool* found,
                transport::MessageStatus* status);
  Status Probe(Communicator& comm, int source, int tag, transport::MessageStatus* status);

  // Collectives. A blocking one: checks that `comm` can run it (RFT_ERR_PROC_FAILED,
  // RFT_ERR_REVOKED), has `build` write its algorithm (collectives.h), runs it to the end.
  // StartCollective: the non-blocking form's start, with a schedule built the same way; the
  // request completes with the collective's outcome. Non-blocking collectives progress in every
  // completion call and blocking operation of the session, not only in those on their request.
  template <class Build>
  Status RunCollective(Communicator& comm, const char* what, Build&& build) {
    RFT_RETURN_IF_ERROR(Schedule::CheckCanRun(comm, what));
    Schedule schedule(comm, what);
    RFT_RETURN_IF_ERROR(build(schedule));
    return schedule.Run(*this);
  }
  template <class Build>
  Status StartCollective(Communicator& comm, const char* what, Build&& build, Request** request) {
    RFT_RETURN_IF_ERROR(Schedule::CheckCanRun(comm, what));
    auto schedule = std::make_unique<Schedule>(comm, what);
    RFT_RETURN_IF_ERROR(build(*schedule));
    return StartCollective(std::move(schedule), request);
  }
  Status StartCollective(std::unique_ptr<Schedule> schedule, Request** request);

  // Completion (the rules above). A nullptr handle is complete with an empty status. A
  // collective's request: its status carries only the error.
  Status Wait(Request** request, transport::MessageStatus* status);
  Status Test(Request** request, bool* done, transport::MessageStatus* status);
  Status Waitall(std::span<Request*> requests, std::span<transport::MessageStatus> statuses);
  Status Testall(std::span<Request*> requests, bool* done,
                 std::span<transport::MessageStatus> statuses);
  // `*index`: the completed (or held) request's position; kNoIndex when all are nullptr.
  static constexpr size_t kNoIndex = SIZE_MAX;
  Status Waitany(std::span<Request*> requests, size_t* index, transport::MessageStatus* status);
  // Testany: `*done` when one completed (or all are nullptr: `*index` kNoIndex); a held one is
  // PROC_FAILED_PENDING with its `*index`, not done.
  Status Testany(std::span<Request*> requests, size_t* index, bool* done,
                 transport::MessageStatus* status);
  // Waitsome (`block`) and Testsome: completes every finished request; `indices` and `statuses`
  // (one per index) say which. Nothing active: both empty. With none finished, held receives
  // are reported (RFT_ERR_IN_STATUS, PROC_FAILED_PENDING in their statuses; still active).
  // RFT_ERR_IN_STATUS when some completed request failed.
  Status Some(std::span<Request*> requests, bool block, std::vector<size_t>* indices,
              std::vector<transport::MessageStatus>* statuses);
  Status Cancel(Request* request);
  // MPI's request free: the program gives the request up (its handles are stale at once); the
  // operation goes on and the request is released when it ends, found by the sweep in every
  // progress call. A failed peer or a revocation it ends with is not reported (the
  // communicator's next operation reports them, ULFM's way); any other error goes to
  // Options::on_freed_error.
  void FreeRequest(Request* request);
  // Advances the non-blocking collectives and drives the data plane once (the test calls' one
  // look); what Progress returned.
  size_t ProgressOnce();
  // Drives the data plane once; sleeps (block mode) when nothing happened.
  void ProgressOrIdle();
  // For loops whose test already progressed the data plane: in block mode, progress once more and
  // sleep if nothing happened; in poll mode nothing (spin on the test).
  void IdleIfBlocking();

 private:
  Session(std::unique_ptr<Runtime> runtime, const Options& options);
  Status Start();
  // Takes a context pair agreed over `parent` (an allreduce of the proposals). `refuse`: this
  // member found its arguments bad; every member then fails with RFT_ERR_ARG (none hangs).
  StatusOr<ContextIds::Allocation> AllocateContexts(Communicator& parent, bool refuse,
                                                    const char* kind);
  // Split's work after its argument check: `check` not ok refuses it at every member together.
  StatusOr<std::unique_ptr<Communicator>> SplitChecked(Communicator& parent, int color, int key,
                                                       Status check, const char* kind);
  StatusOr<std::unique_ptr<Communicator>> CreateInter(Communicator& parent, const Group& group,
                                                      Status refused);
  // With `local`: an intercommunicator whose local group it is (communicator.h).
  StatusOr<std::unique_ptr<Communicator>> Build(Group group, ContextIds::Allocation contexts,
                                                std::string name,
                                                std::optional<Group> local = std::nullopt);
  // The allreduce operator of context proposals (ContextIds::Combine, element-wise).
  static void CombineProposals(const void* in, void* inout, size_t count);
  // "<kind> of <parent's name>", the start of a creation's error messages.
  static std::string Describe(const char* kind, const Communicator& parent);
  // RFT_ERR_ARG for a creation rft does not make from an intercommunicator.
  static Status RefuseInter(const char* kind, const Communicator& parent);
  // Gives the data plane the communicator's life (epoch and owner) in both its contexts.
  Status StartLife(const Communicator& comm);
  // What shrink agrees on besides the failed set: `contexts` (the free pairs and the epoch).
  static agreement::AgreeValue ShrinkContribution(const ContextIds::Proposal& contexts);
  // Builds the communicator of `comm`'s members outside `decision`'s failed set, with the
  // contexts the decision combined: from a reservation (`reserved`) or, with null, the pairs
  // free now.
  StatusOr<std::unique_ptr<Communicator>> ShrinkTo(Communicator& comm,
                                                   const agreement::Decision& decision,
                                                   const ContextIds::Proposal* reserved);
  // The contexts a shrink-like decision combined: from a reservation (`reserved`) or, with
  // null, the pairs free now. `what` names the creation in errors.
  StatusOr<ContextIds::Allocation> TakeAgreedContexts(const agreement::Decision& decision,
                                                      const ContextIds::Proposal* reserved,
                                                      const std::string& what);
  // The agreement that opens a spawn (Replace, Spawn): shrink's contribution (the failed
  // members, the free contexts) and `flag` (bitwise AND over the members). `*contexts` gets the
  // agreed pair, which the caller releases if it goes no further.
  StatusOr<agreement::Decision> AgreeToSpawn(Communicator& comm, uint32_t flag,
                                             const std::string& what,
                                             ContextIds::Allocation* contexts);
  // The lowest job rank outside `comm` that has neither failed nor ended cleanly; kInvalidRank
  // when `comm` holds every live process of the job.
  Rank FirstLiveOutside(const Communicator& comm) const;
  // A spawn's launch: the member `leader` starts the processes of `apps` that join the job,
  // publishes `record` for them (the failures known are added here) and tells the others; every
  // member adds them to the job (Runtime::AddRanks) and returns how many started (the others
  // learn the count from the leader). RFT_ERR_OTHER when the launcher could not start them.
  StatusOr<uint32_t> Launch(Communicator& comm, Rank leader,
                            const std::vector<transport::SpawnApp>& apps, MergeRecord record,
                            const ContextIds::Allocation& contexts, const std::string& what);
  // Spawn's check of the root's programs: empty when good, else what is wrong; `*total` gets
  // the processes they start.
  static std::string CheckPrograms(const std::vector<SpawnProgram>& programs, int64_t* total);
  // In a replacement or a spawned process: builds the communicator its spawners published
  // (Runtime::merge_record) and takes part in the agreement that confirms it (ConfirmMerge).
  Status JoinSpawners();
  // The last step of a spawn, at survivors and replacements alike: an agreement over the
  // merged communicator, which every member enters only once it has added the replacements.
  Status ConfirmMerge(Communicator& merged);
  // The non-blocking agreements' start (iagree, ishrink): `*request` completes once the
  // agreement on `contribution` is decided here, with what `finish` makes of the decision (or
  // of the error that ended it). The fast path runs as a schedule advanced with the other
  // non-blocking collectives, falling back to the agreement service as RunAgreement does.
  Status StartAgreementRequest(Communicator& comm, const char* what,
                               agreement::AgreeValue contribution,
                               std::function<Status(StatusOr<agreement::Decision>)> finish,
                               Request** request);
  // Joins `comm` to the agreement service at its first agreement here.
  Status JoinAgreement(Communicator& comm);
  // The agreement's fast path: an allreduce of the contributions on the data plane, with `tag`
  // in the collective context. The decision once this member has it and has passed on what its
  // partners need; nullopt when it must fall back to the agreement service (a member failed or
  // the communicator was revoked on the way).
  std::optional<agreement::Decision> FastAgreement(Communicator& comm, int32_t tag,
                                                   const agreement::AgreeValue& contribution);
  // Advances every non-blocking collective not yet finished; how much moved (data-plane events
  // processed, collectives finished).
  size_t AdvanceCollectives();
  // What runs in the background of every progress call: the non-blocking collectives, and the
  // freed requests that ended (released, their errors reported). Returns how much moved.
  bool HasBackgroundWork() const { return !active_collectives_.empty() || !freed_.empty(); }
  size_t AdvanceBackground();
  // Releases the freed requests that ended; how many.
  size_t SweepFreed();
  // Releases a freed request whose operation ended, reporting its error (FreeRequest).
  void EndFreed(Request* request);
  // Whether the request's operation has ended (a message completed, a collective finished).
  // Inline: Waitall looks at its requests once per pass of progress.
  static bool Finished(const Request* request) {
    if (request->collective == nullptr) [[likely]]
      return request->inner->complete;
    return request->collective->finished();
  }
  // A collective's request: advanced (until finished when `block`), then released if finished.
  Status CompleteCollective(Request** handle, bool block);
  // Whether the request is an ANY_SOURCE receive held by an unacknowledged failure.
  static bool Held(Request* request) {
    return request->any_source && request->comm->HasUnacknowledgedFailure();
  }
  // Why an ANY_SOURCE operation on `comm` cannot go on (its first unacknowledged failure), and
  // the PROC_FAILED_PENDING error of a request that stays active for that reason.
  static std::string HeldWhy(Communicator& comm, const char* what);
  static Status HeldError(Communicator& comm, const char* what);
  // Waitall/Testall's look at their requests: whether any has not finished, and whether one of
  // those is held (Held).
  struct Survey {
    bool pending = false;
    bool held = false;
  };
  static Survey SurveyAll(std::span<Request*> requests);
  Request* NewRequest(Communicator& comm, transport::Request* inner, bool any_source);
  // Checks the arguments and starts the data plane's send or receive in `comm`'s point-to-point
  // context (ranks translated to job ranks).
  Status PostSend(Communicator& comm, const void* buffer, size_t bytes, int dest, int tag,
                  transport::Request** inner,
                  transport::SendMode mode = transport::SendMode::kStandard);
  Status PostReceive(Communicator& comm, void* buffer, size_t capacity, int source, int tag,
                     transport::Request** inner);
  // The errors behind a failed SendArgsOk / ReceiveArgsOk.
  [[gnu::noinline]] static Status SendArgError(const Communicator& comm, int dest, int tag);
  [[gnu::noinline]] static Status ReceiveArgError(const Communicator& comm, int source, int tag);
  // Waits for the request (returning PROC_FAILED_PENDING while it is held, with
  // `apply_held_rule`), then releases it.
  Status Complete(Request** request, transport::MessageStatus* status, bool apply_held_rule);
  // A completed request: its status in the communicator's ranks; back to the pool.
  Status Release(Request** request, transport::MessageStatus* status, Status result);
  // The end of every API request: back to the table, and a deferred free that waited for it.
  void ReleaseRequest(Request* request);
  // Waitany's look: true when it is answered (a request completed, a held one, or none active).
  bool TakeAny(std::span<Request*> requests, size_t* index, transport::MessageStatus* status,
               Status* result);
  Status AbortRanks(const RankSet& ranks, int code, std::string_view message);
  void FinishDeferredFree(Communicator* comm);
  // Waits for a data-plane request of `comm` (PROC_FAILED_PENDING while an ANY_SOURCE receive is
  // held, with `apply_held_rule`); the status names `comm`'s ranks.
  Status WaitInner(Communicator& comm, transport::Request** inner, transport::MessageStatus* status,
                   bool apply_held_rule);
  // A blocking receive's end: a held receive is cancelled (PROC_FAILED) unless it matched.
  Status FinishBlockingReceive(Communicator& comm, transport::Request** inner,
                               transport::MessageStatus* status, bool any_source);
  // A status's source (a job rank) as `comm`'s rank.
  static void Translate(const Communicator& comm, transport::MessageStatus* status) {
    if (status != nullptr && status->source != transport::kAnySource) {
      status->source = comm.PeerRank(status->source);
    }
  }
  // Waitall/Testall's outcome: every status filled; completed requests released when
  // `release_done`; RFT_ERR_IN_STATUS when some status is not a success.
  Status FinishAll(std::span<Request*> requests, std::span<transport::MessageStatus> statuses,
                   bool release_done);

  std::unique_ptr<Runtime> runtime_;
  Options options_;
  detector::Subscription on_failure_;  // kNone and kAsync
  ContextIds contexts_;
  uint64_t warnings_ = 0;  // raised here (RaiseWarning)
  std::string first_warning_;
  std::unique_ptr<Communicator> world_;
  std::unique_ptr<Communicator> self_;
  std::unique_ptr<Communicator> parent_;  // a replacement's, until taken
  RequestTable requests_;
  // Requests of non-blocking collectives not yet finished (each owns its schedule).
  std::vector<Request*> active_collectives_;
  // Requests the program freed before they ended (FreeRequest).
  std::vector<Request*> freed_;
  // Internal requests of collectives given up on, from freed communicators, and their buffers
  // (Communicator::Abandon): held until the transport lets go (at the latest, Close).
  Communicator::Abandoned abandoned_;
  // Freed by the program with requests still pending (Free's `deferred`).
  std::vector<std::unique_ptr<Communicator>> deferred_frees_;
};

}  // namespace rft::api

#endif  // RFT_ULFM_API_SESSION_H_
