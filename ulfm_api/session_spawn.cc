// Session's spawns (docs/recovery.md): Replace (recovery by replacement, "The merge") and Spawn
// (MPI's Comm_spawn: an intercommunicator to new processes) at the parents, JoinSpawners at the
// processes they start, and the agreement that ends both.
#include <sys/stat.h>

#include <charconv>
#include <optional>
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

// What the spawning member tells the others under SpawnKey: "+", the count and the new
// processes' namespace ("+2 rftrun.42.s1"), or "-" and why the launcher could not spawn.
std::string SpawnKey(const ContextIds::Allocation& contexts) {
  return "rft.spawn." + std::to_string(contexts.pair) + "." + std::to_string(contexts.epoch);
}

std::span<const std::byte> Bytes(const std::string& text) {
  return std::as_bytes(std::span(text.data(), text.size()));
}

}  // namespace

StatusOr<std::unique_ptr<Communicator>> Session::Replace(Communicator& comm,
                                                         const std::vector<std::string>& argv) {
  const std::string what = "spawn on " + comm.name();
  RFT_RETURN_IF_ERROR(RefuseInter("spawn", comm));
  // One agreement: the failed members, the new contexts, and whether every member had a
  // program to start (a member refusing must not leave the others waiting for it).
  const bool refused = argv.empty() || argv[0].empty();
  ContextIds::Allocation contexts;
  Decision decision;
  RFT_ASSIGN_OR_RETURN(decision, AgreeToSpawn(comm, refused ? 0 : 1, what, &contexts));
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
  const Rank first = runtime_->bootstrap().size();
  MergeRecord record{.members = std::vector<Rank>(comm.size()),
                     .pair = contexts.pair,
                     .epoch = contexts.epoch,
                     .failed = {}};
  uint32_t count = 0;
  Rank leader = kInvalidRank;
  for (Rank m = 0; m < comm.size(); ++m) {
    if (decision.failed.Contains(m)) {
      record.members[m] = first + count++;
    } else {
      record.members[m] = comm.JobRank(m);
      if (leader == kInvalidRank) leader = m;
    }
  }
  if (count > 0) {
    std::vector<transport::SpawnApp> apps;
    if (comm.rank() == leader) apps.push_back({argv, count, ""});
    StatusOr<uint32_t> started = Launch(comm, leader, apps, record, contexts, what);
    if (!started.ok()) return give_back(started.status());
  }
  auto group = Group::FromJobRanks(std::move(record.members));
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

std::string Session::CheckPrograms(const std::vector<SpawnProgram>& programs, int64_t* total) {
  *total = 0;
  if (programs.empty()) return "no program; expected at least one";
  for (size_t i = 0; i < programs.size(); ++i) {
    const SpawnProgram& program = programs[i];
    const std::string which =
        programs.size() == 1 ? std::string() : "program " + std::to_string(i) + ": ";
    if (program.argv.empty() || program.argv[0].empty()) {
      return which + "the command is empty; expected a program to start";
    }
    if (program.maxprocs < 1 || program.maxprocs > kMaxSpawn) {
      return which + "maxprocs " + std::to_string(program.maxprocs) + ": expected 1.." +
             std::to_string(kMaxSpawn);
    }
    struct stat info;
    if (!program.wdir.empty() &&
        (stat(program.wdir.c_str(), &info) != 0 || !S_ISDIR(info.st_mode))) {
      return which + "working directory \"" + program.wdir + "\": expected a directory";
    }
    *total += program.maxprocs;
  }
  if (*total > kMaxSpawn) {
    return "the programs' maxprocs add up to " + std::to_string(*total) + ": expected at most " +
           std::to_string(kMaxSpawn);
  }
  return {};
}

StatusOr<std::unique_ptr<Communicator>> Session::Spawn(Communicator& comm,
                                                       const std::vector<SpawnProgram>& programs,
                                                       int root, std::vector<int>* errcodes) {
  const std::string what = Describe("spawn", comm);
  RFT_RETURN_IF_ERROR(RefuseInter("spawn", comm));
  errcodes->clear();
  // One agreement over `comm`: the contexts, that nobody failed, and the arguments, so that a
  // member with a bad one does not leave the others waiting. Flag bits: the root is a member
  // (every member checks), the root's program and count are good (the root checks), `comm`
  // holds every live process of the job (every member checks: the spawned processes join the
  // job's rank space, which every process must grow alike).
  constexpr uint32_t kRootValid = 1, kArgumentsValid = 2, kHoldsJob = 4;
  const bool root_valid = root >= 0 && static_cast<uint32_t>(root) < comm.size();
  const bool is_root = root_valid && comm.rank() == static_cast<Rank>(root);
  std::string bad_argument;
  int64_t total = 0;
  if (is_root) bad_argument = CheckPrograms(programs, &total);
  const Rank outsider = FirstLiveOutside(comm);
  const uint32_t mine = (root_valid ? kRootValid : 0) |
                        (bad_argument.empty() ? kArgumentsValid : 0) |
                        (outsider == kInvalidRank ? kHoldsJob : 0);
  ContextIds::Allocation contexts;
  Decision decision;
  RFT_ASSIGN_OR_RETURN(decision, AgreeToSpawn(comm, mine, what, &contexts));
  auto give_back = [&](Status status) {
    (void)contexts_.Release(contexts.pair);
    return status;
  };
  const uint32_t flag = decision.value.flag;
  if (!decision.failed.empty()) {
    return give_back(ProcFailedError(what + ": member(s) " + decision.failed.ToString() +
                                     " failed; spawn needs every member alive"));
  }
  if ((flag & kRootValid) == 0) {
    return give_back(ArgError(what + ": root " + std::to_string(root) +
                              (root_valid ? " here, but another member passed one outside"
                                          : ": expected 0.." + std::to_string(comm.size() - 1))));
  }
  if ((flag & kArgumentsValid) == 0) {
    return give_back(
        ArgError(what + ": " + (is_root ? bad_argument : "the root's arguments are bad")));
  }
  if ((flag & kHoldsJob) == 0) {
    return give_back(ArgError(
        what + ": " +
        (outsider != kInvalidRank ? "job rank " + std::to_string(outsider) + " is alive"
                                  : std::string("another member found a live process")) +
        " outside it; spawned processes join the whole job, so spawn from a communicator of "
        "every live process (COMM_WORLD, or a dup or shrink of it)"));
  }

  // The parents, then the spawned processes at the next job ranks; the root spawns.
  const Rank first = runtime_->bootstrap().size();
  MergeRecord record{.members = comm.group().job_ranks(),
                     .pair = contexts.pair,
                     .epoch = contexts.epoch,
                     .parents = comm.size(),
                     .failed = {}};
  std::vector<transport::SpawnApp> apps;
  if (is_root) {
    for (int64_t i = 0; i < total; ++i) record.members.push_back(first + static_cast<Rank>(i));
    for (const SpawnProgram& program : programs) {
      apps.push_back({program.argv, static_cast<uint32_t>(program.maxprocs), program.wdir});
    }
  }
  StatusOr<uint32_t> count = Launch(comm, static_cast<Rank>(root), apps, record, contexts, what);
  if (!count.ok()) {
    if (is_root) errcodes->assign(static_cast<size_t>(total), count.status().code());
    return give_back(count.status());
  }
  std::vector<Rank> members = comm.group().job_ranks();
  for (uint32_t i = 0; i < *count; ++i) members.push_back(first + i);
  auto group = Group::FromJobRanks(std::move(members));
  if (!group.ok()) return give_back(group.status());
  std::unique_ptr<Communicator> inter;
  RFT_ASSIGN_OR_RETURN(inter, Build(std::move(*group), contexts, what, comm.group()));
  // The spawned processes confirm it with their parents; one that died on the way fails it at
  // every member of both groups alike, and its entry of `errcodes` says which.
  const Status confirmed = ConfirmMerge(*inter);
  errcodes->assign(*count, RFT_SUCCESS);
  if (!confirmed.ok()) {
    for (uint32_t i = 0; i < *count; ++i) {
      if (runtime_->registry().IsFailed(first + i)) (*errcodes)[i] = RFT_ERR_PROC_FAILED;
    }
    (void)Free(inter);
    return confirmed;
  }
  return inter;
}

StatusOr<Decision> Session::AgreeToSpawn(Communicator& comm, uint32_t flag, const std::string& what,
                                         ContextIds::Allocation* contexts) {
  AgreeValue contribution = ShrinkContribution(contexts_.Propose());
  contribution.flag = flag;
  Decision decision;
  RFT_ASSIGN_OR_RETURN(decision, RunAgreement(comm, std::move(contribution)));
  RFT_ASSIGN_OR_RETURN(*contexts, TakeAgreedContexts(decision, nullptr, what));
  return decision;
}

Rank Session::FirstLiveOutside(const Communicator& comm) const {
  const Rank size = runtime_->bootstrap().size();
  for (Rank rank = 0; rank < size; ++rank) {
    const detector::FailureRegistry& registry = runtime_->registry();
    if (!comm.group().Contains(rank) && !registry.IsFailed(rank) && !registry.IsDeparted(rank)) {
      return rank;
    }
  }
  return kInvalidRank;
}

StatusOr<uint32_t> Session::Launch(Communicator& comm, Rank leader,
                                   const std::vector<transport::SpawnApp>& apps, MergeRecord record,
                                   const ContextIds::Allocation& contexts,
                                   const std::string& what) {
  transport::Bootstrap& job = runtime_->bootstrap();
  std::string word;  // SpawnKey's value
  if (comm.rank() == leader) {
    uint32_t count = 0;
    for (const transport::SpawnApp& app : apps) count += app.nprocs;
    auto spawned = job.Spawn(apps, /*join=*/true);
    if (spawned.ok() && fault::Armed("spawn.launched", job.rank())) fault::Die("spawn.launched");
    if (spawned.ok()) {
      // Processes that ended cleanly are gone as surely as failed ones: the new processes must
      // not wait at start-up for endpoints to them (a spawn after earlier children finalized).
      record.failed = runtime_->registry().Failed();
      for (Rank r = 0; r < runtime_->registry().size(); ++r) {
        if (runtime_->registry().IsDeparted(r)) record.failed.Insert(r);
      }
      const Status put = job.Put(MergeRecordKey(*spawned), EncodeMergeRecord(record));
      word = put.ok() ? "+" + std::to_string(count) + " " + *spawned : "-" + put.message();
    } else {
      RFT_LOG_ERROR("%s: %s", what.c_str(), spawned.status().ToString().c_str());
      word = "-" + spawned.status().message();
    }
    Status told = job.Put(SpawnKey(contexts), Bytes(word));
    if (told.ok()) told = job.Commit();
    if (!told.ok()) return told;
  } else {
    // A leader that died before telling ends this with RFT_ERR_PROC_FAILED once the launcher
    // reports it (Bootstrap::Get); one that hangs, with RFT_ERR_TIMEOUT after RFT_PMIX_TIMEOUT.
    auto got = job.Get(comm.JobRank(leader), SpawnKey(contexts));
    if (!got.ok()) return got.status();
    word.assign(reinterpret_cast<const char*>(got->data()), got->size());
  }
  if (word.empty() || word[0] != '+') {
    return OtherError(what + ": the launcher could not start the processes: " +
                      (word.empty() ? std::string("no reason given") : word.substr(1)));
  }
  const size_t space = word.find(' ');
  uint32_t started = 0;
  const auto [end, error] = std::from_chars(word.data() + 1, word.data() + word.size(), started);
  if (space == std::string::npos || error != std::errc() || end != word.data() + space ||
      started == 0) {
    return OtherError(what + ": the spawning member's word \"" + word +
                      "\" is not \"+<count> <namespace>\"");
  }
  // Every layer holds the new processes before this member builds anything with them, so
  // nothing any member sends on the new communicator finds one that cannot take it.
  RFT_RETURN_IF_ERROR(runtime_->AddRanks(word.substr(space + 1), started));
  return started;
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
  std::optional<Group> local;  // a spawn's: the processes started together
  if (record.parents > 0) {
    auto spawned = Group::FromJobRanks(
        std::vector<Rank>(record.members.begin() + record.parents, record.members.end()));
    if (!spawned.ok()) return spawned.status();
    local = std::move(*spawned);
  }
  RFT_ASSIGN_OR_RETURN(parent_,
                       Build(std::move(*group), contexts, "COMM_PARENT", std::move(local)));
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
