#include "agreement/agreement_service.h"

#include <algorithm>
#include <future>
#include <iterator>
#include <mutex>
#include <string>
#include <utility>

#include "base/byte_order.h"
#include "base/clock.h"
#include "base/log.h"

namespace rft::agreement {
namespace {

const char* KindName(EraMessage::Kind kind) {
  switch (kind) {
    case EraMessage::Kind::kUp:
      return "up";
    case EraMessage::Kind::kDecided:
      return "decided";
    case EraMessage::Kind::kView:
      return "view";
  }
  return "?";
}

}  // namespace

Rank AgreementService::Node::MemberOf(Rank job_rank) const {
  if (identity) return job_rank < members.size() ? job_rank : kInvalidRank;
  auto it = member_of.find(job_rank);
  return it == member_of.end() ? kInvalidRank : it->second;
}

StatusOr<std::unique_ptr<AgreementService>> AgreementService::Create(
    detector::ControlPlane* control, detector::FailureRegistry* registry,
    std::function<void()> wake) {
  std::unique_ptr<AgreementService> service(
      new AgreementService(control, registry, std::move(wake)));
  RFT_ASSIGN_OR_RETURN(service->hosting_,
                       control->Host(transport::ControlService::kAgreement, service.get()));
  return service;
}

AgreementService::~AgreementService() {
  // Timers run on the control thread, in order with posts: the post below runs before the
  // Unhost that Reset waits for. If the thread has ended, no timer runs again anyway. Without
  // a progress thread the caller is the control thread.
  if (control_->OnControlThread()) {
    *timers_live_ = false;
  } else {
    (void)control_->Post([live = timers_live_] { *live = false; });
  }
  hosting_.Reset();
}

Status AgreementService::PostOrFail(const char* what, std::function<void()> task) {
  // Fast decisions noted before a task are given to their nodes first (Feed orders them by
  // number anyway): a node answers with what this process decided as soon as possible.
  if (!control_->Post([this, task = std::move(task)] {
        InstallFastDecisions();
        task();
      })) {
    return OtherError(std::string(what) + ": the control plane has ended");
  }
  return Status::Ok();
}

Status AgreementService::Join(const CommKey& key, std::vector<Rank> members) {
  const Rank self = registry_->self();
  if (std::find(members.begin(), members.end(), self) == members.end()) {
    return ArgError("agreement Join: the members of context " + std::to_string(key.context) +
                    " do not include this process (job rank " + std::to_string(self) + ")");
  }
  return PostOrFail("agreement Join", [this, key, members = std::move(members)]() mutable {
    if (nodes_.count(key) != 0) {
      RFT_LOG_ERROR("agreement: context %u epoch %u joined twice; the second is ignored",
                    key.context, key.epoch);
      return;
    }
    Node& node = nodes_[key];
    node.identity = true;
    for (Rank m = 0; m < members.size(); ++m) node.identity &= members[m] == m;
    if (!node.identity) {
      for (Rank m = 0; m < members.size(); ++m) node.member_of[members[m]] = m;
    }
    node.members = std::move(members);
    RankSet failed;
    for (Rank job_rank : registry_->Failed()) {
      const Rank member = node.MemberOf(job_rank);
      if (member != kInvalidRank) failed.Insert(member);
    }
    const Rank self_member = node.MemberOf(registry_->self());
    node.era =
        std::make_unique<EraNode>(self_member, static_cast<uint32_t>(node.members.size()), failed);
    // Messages that came before this process joined, in arrival order.
    if (auto early = early_.find(key); early != early_.end()) {
      std::vector<Early> messages = std::move(early->second);
      early_.erase(early);
      for (const Early& message : messages) {
        early_bytes_ -= message.bytes.size();
        Deliver(key, node, message.from, message.bytes);
      }
    }
    InstallFastDecisions();  // those noted after the Join call, kept until the node existed
  });
}

void AgreementService::Leave(const CommKey& key) {
  (void)PostOrFail("agreement Leave", [this, key] {
    if (nodes_.count(key) == 0) return;
    left_.push_back(key);
    if (left_.size() > kKeptAfterLeave) {
      // Gone for good: what still comes for it is dropped, not kept as for a future Join.
      nodes_.erase(left_.front());
      if (auto early = early_.find(left_.front()); early != early_.end()) {
        for (const Early& message : early->second) early_bytes_ -= message.bytes.size();
        early_.erase(early);
      }
      gone_.insert(left_.front());
      gone_order_.push_back(left_.front());
      if (gone_order_.size() > kGoneRemembered) {
        gone_.erase(gone_order_.front());
        gone_order_.pop_front();
      }
      left_.pop_front();
    }
  });
}

Status AgreementService::Start(const CommKey& key, uint64_t seq, AgreeValue contribution,
                               std::shared_ptr<Operation> operation, int64_t deadline_ns) {
  const int64_t start_ns = MonotonicNanos();  // the caller's start, not the control thread's
  return PostOrFail(
      "agreement Start", [this, key, seq, contribution = std::move(contribution),
                          operation = std::move(operation), deadline_ns, start_ns]() mutable {
        auto it = nodes_.find(key);
        if (it == nodes_.end()) {
          RFT_LOG_ERROR("agreement: Start on context %u epoch %u, which was never joined",
                        key.context, key.epoch);
          return;
        }
        Feed(key, it->second, seq,
             Node::Queued{.fast = false,
                          .decision = {},
                          .contribution = std::move(contribution),
                          .operation = std::move(operation),
                          .deadline_ns = deadline_ns,
                          .start_ns = start_ns});
      });
}

void AgreementService::Feed(const CommKey& key, Node& node, uint64_t seq, Node::Queued queued) {
  if (seq < node.era->started() || !node.queued.emplace(seq, std::move(queued)).second) {
    RFT_LOG_ERROR("agreement: number %llu on context %u given twice; ignored",
                  static_cast<unsigned long long>(seq), key.context);
    return;
  }
  while (!node.queued.empty() && node.queued.begin()->first == node.era->started()) {
    const uint64_t next = node.queued.begin()->first;
    Node::Queued item = std::move(node.queued.begin()->second);
    node.queued.erase(node.queued.begin());
    std::vector<EraAction> actions;
    if (item.fast) {
      node.era->Install(item.decision, &actions);
      Perform(key, node, actions);
      continue;
    }
    // Registered before the start: a member alone decides inside it.
    node.waiting[next] = std::move(item.operation);
    node.era->Start(std::move(item.contribution), &actions);
    if (item.deadline_ns > 0 && node.era->Undecided(next)) {
      node.guards.emplace(next, DeadlineGuard(*node.era, next, item.start_ns, item.deadline_ns));
    }
    Perform(key, node, actions);
    if (item.deadline_ns > 0) RunGuard(key, next);
  }
}

void AgreementService::RunGuard(const CommKey& key, uint64_t seq) {
  auto node = nodes_.find(key);
  if (node == nodes_.end()) return;
  auto guard = node->second.guards.find(seq);
  if (guard == node->second.guards.end()) return;
  const DeadlineGuard::Verdict verdict = guard->second.Check(*node->second.era, MonotonicNanos());
  if (verdict.next_ns == DeadlineGuard::kNever) {
    node->second.guards.erase(guard);
    return;
  }
  for (Rank member : verdict.cut) {
    const Rank job_rank = node->second.members[member];
    RFT_LOG_WARN(
        "agreement %llu on context %u: job rank %u did not contribute by the deadline; "
        "declared failed",
        static_cast<unsigned long long>(seq), key.context, job_rank);
    registry_->Report(job_rank, detector::FailureSource::kDeadline);
    OnPeerFailed(job_rank);  // at once: the registry's notice comes at the next pass
  }
  control_->RunAt(verdict.next_ns, [this, live = timers_live_, key, seq] {
    if (*live) RunGuard(key, seq);
  });
}

void AgreementService::Depart() {
  const auto flush = [this] {
    InstallFastDecisions();
    for (auto& [key, node] : nodes_) {
      std::vector<EraAction> actions;
      node.era->Depart(&actions);
      Perform(key, node, actions);
    }
  };
  // Without a progress thread the caller owns the control plane: nobody else would run a post.
  if (control_->OnControlThread()) {
    flush();
    return;
  }
  std::promise<void> sent;
  std::future<void> done = sent.get_future();
  // Posts are run even by a control thread that is ending (ClosePosts): the wait ends.
  if (control_->Post([&flush, &sent] {
        flush();
        sent.set_value();
      })) {
    done.wait();
  }
}

Status AgreementService::NoteDecided(const CommKey& key, uint64_t seq, Decision decision) {
  // Not posted: waking the control thread for every failure-free agreement cost ~25 us at n = 2
  // (it takes a core from a member that spins). The control thread installs what is noted here
  // before it next touches a node, and is woken once every kFastBatch decisions.
  size_t noted = 0;
  {
    std::lock_guard<std::mutex> lock(fast_mutex_);
    fast_decided_.push_back({key, seq, std::move(decision)});
    noted = fast_decided_.size();
  }
  if (noted % kFastBatch == 0) return PostOrFail("agreement NoteDecided", [] {});
  return Status::Ok();
}

void AgreementService::InstallFastDecisions() {
  std::vector<FastDecision> decided;
  {
    std::lock_guard<std::mutex> lock(fast_mutex_);
    if (fast_decided_.empty()) return;
    decided.swap(fast_decided_);
  }
  std::vector<FastDecision> not_joined;  // the Join is still on its way here
  for (FastDecision& fast : decided) {
    auto it = nodes_.find(fast.key);
    if (it == nodes_.end()) {
      not_joined.push_back(std::move(fast));
      continue;
    }
    Feed(fast.key, it->second, fast.seq,
         Node::Queued{.fast = true,
                      .decision = std::move(fast.decision),
                      .contribution = {},
                      .operation = nullptr,
                      .deadline_ns = 0,
                      .start_ns = 0});
  }
  if (not_joined.empty()) return;
  std::lock_guard<std::mutex> lock(fast_mutex_);
  // Before what was noted meanwhile (their numbers order them anyway once joined).
  fast_decided_.insert(fast_decided_.begin(), std::make_move_iterator(not_joined.begin()),
                       std::make_move_iterator(not_joined.end()));
}

void AgreementService::OnControlMessage(Rank from, uint8_t kind,
                                        std::span<const std::byte> payload) {
  InstallFastDecisions();
  if (kind != kEraMessageKind || payload.size() < kKeyBytes) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  const CommKey key{.context = LoadLittleEndian<uint32_t>(payload, 0),
                    .epoch = LoadLittleEndian<uint32_t>(payload, 4),
                    .owner = LoadLittleEndian<uint32_t>(payload, 8)};
  const std::span<const std::byte> bytes = payload.subspan(kKeyBytes);
  auto it = nodes_.find(key);
  if (it != nodes_.end()) {
    Deliver(key, it->second, from, bytes);
    return;
  }
  if (gone_.count(key) != 0 || early_bytes_ + bytes.size() > kMaxEarlyBytes) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  early_bytes_ += bytes.size();
  early_[key].push_back(Early{from, std::vector<std::byte>(bytes.begin(), bytes.end())});
}

void AgreementService::Deliver(const CommKey& key, Node& node, Rank from,
                               std::span<const std::byte> bytes) {
  const Rank member = node.MemberOf(from);
  auto message = DecodeEraMessage(bytes, static_cast<uint32_t>(node.members.size()));
  if (member == kInvalidRank || !message.ok()) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    if (!message.ok()) RFT_LOG_DEBUG("%s", message.status().ToString().c_str());
    return;
  }
  RFT_LOG_DEBUG("agreement: context %u: %s %llu from member %u", key.context,
                KindName(message->kind), static_cast<unsigned long long>(message->seq), member);
  std::vector<EraAction> actions;
  node.era->OnMessage(member, *message, &actions);
  Perform(key, node, actions);
}

void AgreementService::OnPeerFailed(Rank rank) {
  InstallFastDecisions();
  for (auto& [key, node] : nodes_) {
    const Rank member = node.MemberOf(rank);
    if (member == kInvalidRank) continue;
    std::vector<EraAction> actions;
    node.era->OnFailure(member, &actions);
    Perform(key, node, actions);
  }
}

void AgreementService::Perform(const CommKey& key, Node& node,
                               const std::vector<EraAction>& actions) {
  // Sending may progress UCX (connecting an endpoint), which may deliver another message to
  // this service: each call has its own actions and encoding buffer, and `node` (a map entry)
  // stays where it is.
  std::vector<std::byte> encoded;
  for (const EraAction& action : actions) {
    if (const auto* send = std::get_if<SendEra>(&action)) {
      encoded.clear();
      encoded.resize(kKeyBytes);
      StoreLittleEndian<uint32_t>(encoded, 0, key.context);
      StoreLittleEndian<uint32_t>(encoded, 4, key.epoch);
      StoreLittleEndian<uint32_t>(encoded, 8, key.owner);
      EncodeEraMessage(send->message, &encoded);
      RFT_LOG_DEBUG("agreement: context %u: %s %llu to member %u", key.context,
                    KindName(send->message.kind),
                    static_cast<unsigned long long>(send->message.seq), send->to);
      control_->Send(node.members[send->to], transport::ControlService::kAgreement, kEraMessageKind,
                     encoded);
    } else if (const auto* learned = std::get_if<LearnFailed>(&action)) {
      registry_->Report(node.members[learned->member], detector::FailureSource::kAgreement);
    } else if (const auto* decide = std::get_if<Decide>(&action)) {
      // The agreed failed set is in this process's registry before the caller returns.
      for (Rank member : decide->decision.failed) {
        registry_->Report(node.members[member], detector::FailureSource::kAgreement);
      }
      auto waiting = node.waiting.find(decide->seq);
      if (waiting == node.waiting.end()) continue;  // nobody here waits (cannot happen)
      std::shared_ptr<Operation> operation = std::move(waiting->second);
      node.waiting.erase(waiting);
      operation->decision_ = decide->decision;
      operation->done_.store(true, std::memory_order_release);
      if (wake_) wake_();
    }
  }
}

}  // namespace rft::agreement
