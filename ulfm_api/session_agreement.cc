// Session's fault-tolerant agreement and shrink (docs/agreement.md): both run on the control
// plane's agreement service, so they work on revoked communicators and after failures, and the
// caller waits in the data plane's progress (woken when the decision comes).
#include <algorithm>
#include <string>
#include <utility>

#include "ulfm_api/session.h"

namespace rft::api {

using agreement::AgreeValue;
using agreement::Decision;
using agreement::Operation;

StatusOr<std::shared_ptr<Operation>> Session::StartAgreement(Communicator& comm,
                                                             AgreeValue contribution) {
  agreement::AgreementService& service = runtime_->agreement();
  if (!comm.agreement_joined()) {
    RFT_RETURN_IF_ERROR(service.Join(comm.agreement_key(), comm.group().job_ranks()));
    comm.set_agreement_joined();
  }
  // What this member acknowledged, as member ranks: the intersection over the participants says
  // whether a failure went unacknowledged somewhere.
  const std::vector<Rank>& failed = comm.FailedMembers();
  for (uint32_t i = 0; i < comm.acknowledged() && i < failed.size(); ++i) {
    contribution.acked.Insert(comm.MemberRank(failed[i]));
  }
  auto operation = std::make_shared<Operation>();
  RFT_RETURN_IF_ERROR(service.Start(comm.agreement_key(), std::move(contribution), operation));
  return operation;
}

Status Session::AgreementOutcome(Communicator& comm, const Decision& decision, uint32_t* flag) {
  if (flag != nullptr) *flag = decision.value.flag;
  if (!decision.unacknowledged_failure()) return Status::Ok();
  const RankSet unacknowledged = decision.failed.Difference(decision.value.acked);
  return ProcFailedError("agreement on " + comm.name() + ": member(s) " +
                         unacknowledged.ToString() +
                         " failed and not every participant acknowledged it");
}

Status Session::Agree(Communicator& comm, uint32_t* flag) {
  AgreeValue contribution;
  contribution.flag = *flag;
  std::shared_ptr<Operation> operation;
  RFT_ASSIGN_OR_RETURN(operation, StartAgreement(comm, std::move(contribution)));
  while (!operation->done()) ProgressOrIdle();
  return AgreementOutcome(comm, operation->decision(), flag);
}

Status Session::Iagree(Communicator& comm, uint32_t* flag, Request** request) {
  AgreeValue contribution;
  contribution.flag = *flag;
  std::shared_ptr<Operation> operation;
  RFT_ASSIGN_OR_RETURN(operation, StartAgreement(comm, std::move(contribution)));
  auto schedule = std::make_unique<Schedule>(comm, "iagree");
  schedule->AwaitExternal([operation, flag, &comm]() -> std::optional<Status> {
    if (!operation->done()) return std::nullopt;
    return AgreementOutcome(comm, operation->decision(), flag);
  });
  return StartCollective(std::move(schedule), request);
}

StatusOr<std::unique_ptr<Communicator>> Session::Shrink(Communicator& comm) {
  // One agreement decides both the survivors (its failed set) and the new contexts (the free
  // pairs ANDed, the epochs' maximum), so shrink costs one agreement, not two.
  const ContextIds::Proposal proposal = contexts_.Propose();
  AgreeValue contribution;
  contribution.max = proposal.epoch;
  contribution.bits.assign(proposal.free.begin(), proposal.free.end());
  std::shared_ptr<Operation> operation;
  RFT_ASSIGN_OR_RETURN(operation, StartAgreement(comm, std::move(contribution)));
  while (!operation->done()) ProgressOrIdle();
  const Decision& decision = operation->decision();

  ContextIds::Proposal combined{};
  if (decision.value.bits.size() != combined.free.size()) {
    return OtherError("shrink of " + comm.name() + ": the agreed context set has " +
                      std::to_string(decision.value.bits.size()) + " words; expected " +
                      std::to_string(combined.free.size()));
  }
  std::copy(decision.value.bits.begin(), decision.value.bits.end(), combined.free.begin());
  combined.epoch = decision.value.max;
  ContextIds::Allocation contexts;
  RFT_ASSIGN_OR_RETURN(contexts, contexts_.Take(combined));
  std::vector<Rank> survivors;
  for (Rank member = 0; member < comm.size(); ++member) {
    if (!decision.failed.Contains(member)) survivors.push_back(comm.JobRank(member));
  }
  auto group = Group::FromJobRanks(std::move(survivors));
  if (!group.ok()) {
    (void)contexts_.Release(contexts.pair);
    return group.status();
  }
  return Build(std::move(*group), contexts, "shrink of " + comm.name());
}

}  // namespace rft::api
