// Session's fault-tolerant agreement and shrink (docs/agreement.md).
//
// Two paths to one decision. The fast path runs when every member is alive and nothing is
// revoked: an allreduce over the data plane, with no thread hand-off.
// The agreement service on the control plane runs otherwise, and takes over from any member
// whose fast attempt met a failure; the fast path's decisions are handed to the service, which
// then answers such members with them, so both paths agree (docs/agreement.md, "Fast path").
#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "base/timeline.h"
#include "ulfm_api/collectives.h"
#include "ulfm_api/session.h"

namespace rft::api {

using agreement::AgreeValue;
using agreement::Decision;
using agreement::Operation;

namespace {

// The fast path's packet, as 64-bit words: [0] the flag (low half, AND) and the maximum (high
// half, MAX), [1] the undecided floor (MIN), then the value's words (AND).
constexpr size_t kPacketHeaderWords = 2;

void CombinePackets(const void* in, void* inout, size_t count) {
  const auto* a = static_cast<const uint64_t*>(in);
  auto* b = static_cast<uint64_t*>(inout);
  const uint64_t flag = (a[0] & b[0]) & 0xffffffffu;
  const uint64_t max = std::max(a[0] >> 32, b[0] >> 32);
  b[0] = max << 32 | flag;
  b[1] = std::min(a[1], b[1]);
  for (size_t i = kPacketHeaderWords; i < count; ++i) b[i] &= a[i];
}

void ToPacket(const AgreeValue& value, uint64_t* packet) {
  packet[0] = uint64_t{value.max} << 32 | value.flag;
  packet[1] = value.undecided_floor;
  std::copy(value.bits.begin(), value.bits.end(), packet + kPacketHeaderWords);
}

AgreeValue FromPacket(const uint64_t* packet, size_t words) {
  AgreeValue value;
  value.flag = static_cast<uint32_t>(packet[0]);
  value.max = static_cast<uint32_t>(packet[0] >> 32);
  value.undecided_floor = packet[1];
  value.bits.assign(packet + kPacketHeaderWords, packet + kPacketHeaderWords + words);
  return value;
}

}  // namespace

std::optional<Decision> Session::FastAgreement(Communicator& comm, int32_t tag,
                                               const AgreeValue& contribution) {
  // An allreduce of the members' packets (recursive doubling: ⌈log2 n⌉ exchanges, and every
  // member has the result at once). Every member that completes it has the same combination of
  // every member's contribution: the decision, with nobody failed. Its buffers are the
  // schedule's: if it is given up, the transport may still write into them, and the schedule
  // keeps them alive for that.
  const ReduceOp combine{.combine = CombinePackets, .element_size = sizeof(uint64_t)};
  const size_t count = kPacketHeaderWords + contribution.bits.size();
  Schedule schedule(comm, "agree", tag);
  auto* mine = reinterpret_cast<uint64_t*>(schedule.Scratch(count * sizeof(uint64_t)));
  auto* decided = reinterpret_cast<uint64_t*>(schedule.Scratch(count * sizeof(uint64_t)));
  ToPacket(contribution, mine);
  if (!BuildAllreduce(schedule, mine, decided, count, combine).ok()) return std::nullopt;
  // A member whose partner failed or whose communicator was revoked meanwhile falls back; one
  // that completed has sent everything its partners need before it returns.
  if (!schedule.Run(*this).ok()) return std::nullopt;
  return Decision{.value = FromPacket(decided, contribution.bits.size()), .failed = {}};
}

Status Session::JoinAgreement(Communicator& comm) {
  if (comm.agreement_joined()) return Status::Ok();
  RFT_RETURN_IF_ERROR(runtime_->agreement().Join(comm.agreement_key(), comm.group().job_ranks()));
  comm.set_agreement_joined();
  return Status::Ok();
}

StatusOr<Decision> Session::RunAgreement(Communicator& comm, AgreeValue contribution) {
  // Every member takes the tag, whichever path it takes: later collectives stay in step.
  const int32_t tag = comm.NextCollectiveTag();
  RFT_RETURN_IF_ERROR(JoinAgreement(comm));
  // Nothing failed or was revoked here: try the fast path. (A member that knows of a failure or
  // a revocation goes to the service at once; the others learn of it too, and fall back, so
  // nobody waits for a member on the other path.)
  contribution.undecided_floor = comm.UndecidedFloor();
  const uint64_t seq = comm.AgreementStarted();
  if (!comm.HasFailedMember() && !comm.IsRevoked()) {
    std::optional<Decision> decided = FastAgreement(comm, tag, contribution);
    if (decided.has_value()) {
      RFT_RETURN_IF_ERROR(runtime_->agreement().NoteDecided(comm.agreement_key(), seq, *decided));
      return *std::move(decided);
    }
  }
  std::shared_ptr<Operation> operation;
  RFT_ASSIGN_OR_RETURN(operation, StartAgreement(comm, seq, std::move(contribution)));
  while (!operation->done()) ProgressOrIdle();
  return operation->decision();
}

StatusOr<std::shared_ptr<Operation>> Session::StartAgreement(Communicator& comm, uint64_t seq,
                                                             AgreeValue contribution,
                                                             int64_t deadline_ns) {
  RFT_RETURN_IF_ERROR(JoinAgreement(comm));
  // What this member acknowledged, as member ranks: the intersection over the participants says
  // whether a failure went unacknowledged somewhere.
  const std::vector<Rank>& failed = comm.FailedMembers();
  contribution.acked.clear();
  for (uint32_t i = 0; i < comm.acknowledged() && i < failed.size(); ++i) {
    contribution.acked.Insert(comm.MemberRank(failed[i]));
  }
  auto operation = std::make_shared<Operation>();
  RFT_RETURN_IF_ERROR(runtime_->agreement().Start(comm.agreement_key(), seq,
                                                  std::move(contribution), operation, deadline_ns));
  return operation;
}

Status Session::AgreementOutcome(Communicator& comm, const Decision& decision, uint32_t* flag) {
  if (flag != nullptr) *flag = decision.value.flag;
  // The agreements of a recovery, not every agreement of a loop: those that decided a failure.
  if (timeline::Enabled() && !decision.failed.empty()) {
    timeline::Record(timeline::Event::kAgreed, comm.contexts().p2p_context(),
                     comm.name() + ": failed members " + decision.failed.ToString());
  }
  if (!decision.unacknowledged_failure()) return Status::Ok();
  const RankSet unacknowledged = decision.failed.Difference(decision.value.acked);
  return ProcFailedError("agreement on " + comm.name() + ": member(s) " +
                         unacknowledged.ToString() +
                         " failed and not every participant acknowledged it");
}

Status Session::Agree(Communicator& comm, uint32_t* flag) {
  AgreeValue contribution;
  contribution.flag = *flag;
  Decision decision;
  RFT_ASSIGN_OR_RETURN(decision, RunAgreement(comm, std::move(contribution)));
  return AgreementOutcome(comm, decision, flag);
}

Status Session::AgreeDeadline(Communicator& comm, uint32_t* flag, double seconds,
                              std::vector<Rank>* cut_off) {
  constexpr double kYear = 365.0 * 24 * 3600;
  if (!(seconds > 0 && seconds <= kYear)) {  // NaN fails both
    return ArgError(
        "guarded agreement on " + comm.name() + ": deadline " + std::to_string(seconds) +
        " s: expected a number of seconds > 0 and <= " + std::to_string(static_cast<long>(kYear)));
  }
  // On the service, whose tree knows whom each member waits for (the fast path's allreduce
  // would only block). The tag is taken as by every agreement (RunAgreement).
  (void)comm.NextCollectiveTag();
  AgreeValue contribution;
  contribution.flag = *flag;
  const uint64_t seq = comm.AgreementStarted();
  std::shared_ptr<Operation> operation;
  RFT_ASSIGN_OR_RETURN(operation, StartAgreement(comm, seq, std::move(contribution),
                                                 static_cast<int64_t>(seconds * 1e9)));
  while (!operation->done()) ProgressOrIdle();
  const Decision& decision = operation->decision();
  if (cut_off != nullptr) {
    cut_off->clear();
    for (Rank member : decision.failed.Difference(decision.value.acked)) {
      cut_off->push_back(comm.JobRank(member));
    }
  }
  return AgreementOutcome(comm, decision, flag);
}

Status Session::StartAgreementRequest(Communicator& comm, const char* what, AgreeValue contribution,
                                      std::function<Status(StatusOr<Decision>)> finish,
                                      Request** request) {
  // Numbered and tagged as every agreement (RunAgreement), so that later ones stay in step.
  const int32_t tag = comm.NextCollectiveTag();
  RFT_RETURN_IF_ERROR(JoinAgreement(comm));
  contribution.undecided_floor = comm.UndecidedFloor();
  const uint64_t seq = comm.AgreementStarted();
  // The fast path as a schedule the session advances in the background (no control-thread hop
  // when nothing fails); the agreement service when it fails or cannot run, as in RunAgreement.
  // Each agreement number is either noted decided or started on the service, exactly once.
  struct Pending {
    std::unique_ptr<Schedule> fast;
    uint64_t* decided = nullptr;  // the fast schedule's result packet (its scratch)
    AgreeValue contribution;      // for the service, if the fast path fails
    std::shared_ptr<Operation> operation;
  };
  auto pending = std::make_shared<Pending>();
  if (!comm.HasFailedMember() && !comm.IsRevoked()) {
    pending->fast = std::make_unique<Schedule>(comm, what, tag);
    const size_t count = kPacketHeaderWords + contribution.bits.size();
    auto* mine = reinterpret_cast<uint64_t*>(pending->fast->Scratch(count * sizeof(uint64_t)));
    pending->decided =
        reinterpret_cast<uint64_t*>(pending->fast->Scratch(count * sizeof(uint64_t)));
    ToPacket(contribution, mine);
    const ReduceOp combine{.combine = CombinePackets, .element_size = sizeof(uint64_t)};
    if (!BuildAllreduce(*pending->fast, mine, pending->decided, count, combine).ok()) {
      pending->fast.reset();
    }
  }
  if (pending->fast == nullptr) {
    RFT_ASSIGN_OR_RETURN(pending->operation, StartAgreement(comm, seq, std::move(contribution)));
  } else {
    pending->contribution = std::move(contribution);
  }
  comm.AgreementPending(seq, true);
  auto schedule = std::make_unique<Schedule>(comm, what, tag);
  schedule->AwaitExternal([this, pending, seq, &comm,
                           finish = std::move(finish)](bool* moved) -> std::optional<Status> {
    if (pending->fast != nullptr) {
      bool done = false;
      const uint64_t events = pending->fast->progress_events();
      const Status fast = pending->fast->Advance(&done);
      *moved = pending->fast->progress_events() != events;
      if (!done) return std::nullopt;
      if (fast.ok()) {
        Decision decision{.value = FromPacket(pending->decided, pending->contribution.bits.size()),
                          .failed = {}};
        pending->fast.reset();
        comm.AgreementPending(seq, false);
        const Status noted = runtime_->agreement().NoteDecided(comm.agreement_key(), seq, decision);
        if (!noted.ok()) return finish(noted);
        return finish(std::move(decision));
      }
      // A member failed or the communicator was revoked on the way: the service decides, and
      // answers members that completed the fast path with their decision.
      pending->fast.reset();  // what is under way stays with the communicator (Abandon)
      auto operation = StartAgreement(comm, seq, std::move(pending->contribution));
      if (!operation.ok()) {
        comm.AgreementPending(seq, false);
        return finish(operation.status());
      }
      pending->operation = *std::move(operation);
    }
    if (!pending->operation->done()) return std::nullopt;
    comm.AgreementPending(seq, false);
    return finish(pending->operation->decision());
  });
  return StartCollective(std::move(schedule), request);
}

Status Session::Iagree(Communicator& comm, uint32_t* flag, Request** request) {
  AgreeValue contribution;
  contribution.flag = *flag;
  auto finish = [&comm, flag](StatusOr<Decision> decision) -> Status {
    if (!decision.ok()) return decision.status();
    return AgreementOutcome(comm, *decision, flag);
  };
  return StartAgreementRequest(comm, "iagree", std::move(contribution), std::move(finish), request);
}

AgreeValue Session::ShrinkContribution(const ContextIds::Proposal& contexts) {
  AgreeValue contribution;
  contribution.max = contexts.epoch;
  contribution.bits.assign(contexts.free.begin(), contexts.free.end());
  return contribution;
}

StatusOr<std::unique_ptr<Communicator>> Session::Shrink(Communicator& comm) {
  // One agreement decides both the survivors (its failed set) and the new contexts (the free
  // pairs ANDed, the epochs' maximum), so shrink costs one agreement, not two.
  Decision decision;
  RFT_ASSIGN_OR_RETURN(decision, RunAgreement(comm, ShrinkContribution(contexts_.Propose())));
  return ShrinkTo(comm, decision, nullptr);
}

Status Session::Ishrink(Communicator& comm,
                        std::function<void(std::unique_ptr<Communicator>)> deliver,
                        Request** request) {
  // The contexts from a reservation, since the caller may create other communicators before
  // this one completes.
  auto reserved = std::make_shared<const ContextIds::Proposal>(contexts_.Reserve());
  auto finish = [this, reserved, &comm,
                 deliver = std::move(deliver)](StatusOr<Decision> decision) -> Status {
    if (!decision.ok()) {
      contexts_.CancelReservation(*reserved);
      return decision.status();
    }
    auto built = ShrinkTo(comm, *decision, reserved.get());
    if (!built.ok()) return built.status();
    deliver(*std::move(built));
    return Status::Ok();
  };
  const Status started = StartAgreementRequest(comm, "ishrink", ShrinkContribution(*reserved),
                                               std::move(finish), request);
  if (!started.ok()) contexts_.CancelReservation(*reserved);
  return started;
}

StatusOr<ContextIds::Allocation> Session::TakeAgreedContexts(const Decision& decision,
                                                             const ContextIds::Proposal* reserved,
                                                             const std::string& what) {
  ContextIds::Proposal combined{};
  if (decision.value.bits.size() != combined.free.size()) {
    if (reserved != nullptr) contexts_.CancelReservation(*reserved);
    return OtherError(what + ": the agreed context set has " +
                      std::to_string(decision.value.bits.size()) + " words; expected " +
                      std::to_string(combined.free.size()));
  }
  std::copy(decision.value.bits.begin(), decision.value.bits.end(), combined.free.begin());
  combined.epoch = decision.value.max;
  return reserved != nullptr ? contexts_.TakeReserved(*reserved, combined)
                             : contexts_.Take(combined);
}

StatusOr<std::unique_ptr<Communicator>> Session::ShrinkTo(Communicator& comm,
                                                          const Decision& decision,
                                                          const ContextIds::Proposal* reserved) {
  ContextIds::Allocation contexts;
  RFT_ASSIGN_OR_RETURN(contexts,
                       TakeAgreedContexts(decision, reserved, "shrink of " + comm.name()));
  std::vector<Rank> survivors;
  for (Rank member = 0; member < comm.size(); ++member) {
    if (!decision.failed.Contains(member)) survivors.push_back(comm.JobRank(member));
  }
  auto group = Group::FromJobRanks(std::move(survivors));
  if (!group.ok()) {
    (void)contexts_.Release(contexts.pair);
    return group.status();
  }
  std::optional<Group> local;  // an intercommunicator's survivors of each group
  if (comm.is_inter()) local = Group::Intersection(comm.local_group(), *group);
  if (timeline::Enabled()) {
    timeline::Record(timeline::Event::kShrunk, group->size(),
                     comm.name() + ": failed members " + decision.failed.ToString());
  }
  return Build(std::move(*group), contexts, "shrink of " + comm.name(), std::move(local));
}

}  // namespace rft::api
