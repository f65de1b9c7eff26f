// Session's recovery by replacement (docs/recovery.md, "The merge"): Spawn at the survivors,
// JoinSpawners at the replacements, and the agreement that ends both.
#include <string>
#include <vector>

#include "base/fault_injection.h"
#include "base/log.h"
#include "ulfm_api/merge_record.h"
#include "ulfm_api/session.h"

namespace rft::api {

using agreement::AgreeValue;
using agreement::Decision;

namespace {

// What the spawning survivor tells the others under SpawnKey: "+" and the replacements'
// namespace, or "-" and why the launcher could not spawn.
std::string SpawnKey(const ContextIds::Allocation& contexts) {
  return "rft.spawn." + std::to_string(contexts.pair) + "." + std::to_string(contexts.epoch);
}

std::span<const std::byte> Bytes(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

}  // namespace

StatusOr<std::unique_ptr<Communicator>> Session::Spawn(Communicator& comm,
                                                       const std::vector<std::string>& argv) {
  const std::string what = "spawn on " + comm.name();
  RFT_RETURN_IF_ERROR(RefuseInter("spawn", comm));
  // One agreement: the failed members, the new contexts, and whether every member had a
  // program to start (a member refusing must not leave the others waiting for it).
  const bool refused = argv.empty() || argv[0].empty();
  AgreeValue contribution = ShrinkContribution(contexts_.Propose());
  contribution.flag = refused ? 0 : 1;
  Decision decision;
  RFT_ASSIGN_OR_RETURN(decision, RunAgreement(comm, std::move(contribution)));
  ContextIds::Allocation contexts;
  RFT_ASSIGN_OR_RETURN(contexts, TakeAgreedContexts(decision, nullptr, what));
  auto give_back = [&](Status status) {
    (void)contexts_.Release(contexts.pair);
    return status;
  };
  if (decision.value.flag == 0) {
    return give_back(ArgError(what + ": " +
                              (refused ? "argv is empty" : "another member's argv is empty") +
                              "; expected the program to start and its arguments"));
  }

  // Each failed member's place goes to a new job rank, in order; the lowest survivor spawns.
  transport::Bootstrap& job = runtime_->bootstrap();
  const Rank first = job.size();
  std::vector<Rank> members(comm.size());
  uint32_t count = 0;
  Rank leader = kInvalidRank;
  for (Rank m = 0; m < comm.size(); ++m) {
    if (decision.failed.Contains(m)) {
      members[m] = first + count++;
    } else {
      members[m] = comm.JobRank(m);
      if (leader == kInvalidRank) leader = m;
    }
  }
  if (count > 0) {
    std::string word;  // SpawnKey's value
    if (comm.rank() == leader) {
      auto spawned = job.Spawn(argv, count, /*join=*/true);
      if (spawned.ok() && fault::Armed("spawn.launched", job.rank())) fault::Die("spawn.launched");
      if (spawned.ok()) {
        const MergeRecord record{.members = members,
                                 .pair = contexts.pair,
                                 .epoch = contexts.epoch,
                                 .failed = runtime_->registry().Failed()};
        const Status put = job.Put(MergeRecordKey(*spawned), EncodeMergeRecord(record));
        word = put.ok() ? "+" + *spawned : "-" + put.message();
      } else {
        RFT_LOG_ERROR("%s: %s", what.c_str(), spawned.status().ToString().c_str());
        word = "-" + spawned.status().message();
      }
      Status told = job.Put(SpawnKey(contexts), Bytes(word));
      if (told.ok()) told = job.Commit();
      if (!told.ok()) return give_back(told);
    } else {
      // A leader that died before telling ends this with RFT_ERR_PROC_FAILED once the launcher
      // reports it (Bootstrap::Get); one that hangs, with RFT_ERR_TIMEOUT after RFT_PMIX_TIMEOUT.
      auto got = job.Get(comm.JobRank(leader), SpawnKey(contexts));
      if (!got.ok()) return give_back(got.status());
      word.assign(reinterpret_cast<const char*>(got->data()), got->size());
    }
    if (word.empty() || word[0] != '+') {
      return give_back(
          OtherError(what + ": the launcher could not start the replacements: " +
                     (word.empty() ? std::string("no reason given") : word.substr(1))));
    }
    // Every layer holds the replacements before this member enters the agreement below, so
    // nothing any member sends on the merged communicator finds a survivor that cannot take it.
    Status grown = runtime_->AddRanks(word.substr(1), count);
    if (!grown.ok()) return give_back(grown);
  }
  auto group = Group::FromJobRanks(std::move(members));
  if (!group.ok()) return give_back(group.status());
  std::unique_ptr<Communicator> merged;
  RFT_ASSIGN_OR_RETURN(merged, Build(std::move(*group), contexts, what));
  Status confirmed = ConfirmMerge(*merged);
  if (!confirmed.ok()) {
    (void)Free(merged);
    return confirmed;
  }
  return merged;
}

Status Session::JoinSpawners() {
  const MergeRecord& record = *runtime_->merge_record();
  const ContextIds::Allocation contexts{.pair = record.pair, .epoch = record.epoch};
  RFT_RETURN_IF_ERROR(contexts_.TakeExact(contexts));
  auto group = Group::FromJobRanks(record.members);
  if (!group.ok()) return group.status();
  if (!group->Contains(plane().rank())) {
    return ArgError("the merge record names no place for job rank " +
                    std::to_string(plane().rank()));
  }
  RFT_ASSIGN_OR_RETURN(parent_, Build(std::move(*group), contexts, "COMM_PARENT"));
  return ConfirmMerge(*parent_);
}

Status Session::ConfirmMerge(Communicator& merged) {
  uint32_t flag = 1;
  if (fault::Armed("merge.confirming", plane().rank())) {
    // Its part started on the agreement service (as rft_comm_iagree's), then the end: the
    // others decide without it or with its contribution, and uniformly either way.
    Request* request = nullptr;
    (void)Iagree(merged, &flag, &request);
    fault::Die("merge.confirming");
  }
  return Agree(merged, &flag);
}

}  // namespace rft::api
