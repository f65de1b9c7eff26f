#include "ulfm_api/node_collectives.h"

#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include "base/config.h"
#include "base/log.h"
#include "ulfm_api/collectives.h"
#include "ulfm_api/session.h"

namespace rft::api {
namespace {

inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// Whether the communicator's members set up an area at all: computed alike at every member from
// what they all know (its kind and size), so all take part in the set-up or none does.
bool Eligible(const Communicator& comm) {
  return !comm.is_inter() && comm.size() >= 2 && comm.size() <= NodeCollectives::kMaxMembers;
}

// Whether this member can use one: it polls, and it reaches every other member (so all are on
// this node) through a pidfd. May differ between members: the set-up's allreduce reconciles it.
bool Usable(const Communicator& comm) {
  transport::DataPlane& plane = comm.plane();
  if (plane.options().progress != transport::ProgressMode::kPoll) return false;
  for (Rank member = 0; member < comm.size(); ++member) {
    if (member != comm.rank() && !plane.HasPeerProcess(comm.JobRank(member))) return false;
  }
  return true;
}

void MinCombine(const void* in, void* inout, size_t count) {
  const auto* a = static_cast<const int64_t*>(in);
  auto* b = static_cast<int64_t*>(inout);
  for (size_t i = 0; i < count; ++i) b[i] = std::min(a[i], b[i]);
}

}  // namespace

NodeCollectives::NodeCollectives(Communicator& comm, void* mapping, size_t bytes)
    : comm_(comm),
      slots_(static_cast<MemberSlots*>(mapping)),
      entries_(reinterpret_cast<MemberEntries*>(slots_ + comm.size())),
      mapping_bytes_(bytes),
      rank_(comm.rank()),
      size_(comm.size()),
      seen_(comm.size(), 0) {}

NodeCollectives::~NodeCollectives() { munmap(slots_, mapping_bytes_); }

Status NodeCollectives::For(Session& session, Communicator& comm, const char* what, size_t bytes,
                            NodeCollectives** area) {
  *area = nullptr;
  if (!comm.node_area_decided()) [[unlikely]] {
    if (!Eligible(comm)) {
      comm.DecideNodeArea(nullptr);
    } else {
      std::unique_ptr<NodeCollectives> made;
      Status set_up = SetUp(session, comm, &made);
      // Whatever the outcome, it is decided: after an error the communicator runs no more
      // collectives anyway (a member failed, or it is revoked).
      comm.DecideNodeArea(std::move(made));
      if (!set_up.ok()) return Status(set_up.code(), std::string(what) + ": " + set_up.message());
    }
  }
  if (bytes <= kMaxBytes) *area = comm.node_area();
  return Status::Ok();
}

Status NodeCollectives::SetUp(Session& session, Communicator& comm,
                              std::unique_ptr<NodeCollectives>* out) {
  auto setting = config::GetBool("RFT_NODE_COLLECTIVES");
  const bool wanted = setting.ok() ? *setting : true;
  if (!setting.ok()) RFT_LOG_WARN("%s; node collectives off", setting.status().message().c_str());
  const bool usable = wanted && Usable(comm);
  const size_t bytes = (sizeof(MemberSlots) + sizeof(MemberEntries)) * comm.size();

  // Member 0 makes the area; -1 tells the others it did not.
  int fd = -1;
  void* mapping = MAP_FAILED;
  int64_t published = -1;
  if (comm.rank() == 0 && usable) {
    fd = static_cast<int>(syscall(SYS_memfd_create, "rft-node-collectives", MFD_CLOEXEC));
    if (fd >= 0 && ftruncate(fd, static_cast<off_t>(bytes)) == 0) {
      mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    }
    if (mapping != MAP_FAILED) published = fd;
    if (mapping == MAP_FAILED) RFT_LOG_INFO("no node collectives: %s", std::strerror(errno));
  }
  Status sent = session.RunCollective(comm, "node collectives set-up", [&](Schedule& schedule) {
    return BuildBcast(schedule, &published, sizeof published, 0);
  });
  if (sent.ok() && comm.rank() != 0 && usable && published >= 0) {
    const int mine = comm.plane().CopyPeerDescriptor(comm.JobRank(0), static_cast<int>(published));
    if (mine >= 0) {
      mapping = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, mine, 0);
      close(mine);  // the mapping keeps the file
    }
    if (mapping == MAP_FAILED) RFT_LOG_INFO("no node collectives: %s", std::strerror(errno));
  }
  int64_t mapped = mapping != MAP_FAILED ? 1 : 0;
  if (sent.ok()) {
    sent = session.RunCollective(comm, "node collectives set-up", [&](Schedule& schedule) {
      return BuildAllreduce(schedule, &mapped, &mapped, 1,
                            ReduceOp{.combine = MinCombine, .element_size = sizeof mapped});
    });
  }
  if (fd >= 0) close(fd);  // every member that maps it has (the allreduce came after)
  if (!sent.ok() || mapped == 0) {
    if (mapping != MAP_FAILED) munmap(mapping, bytes);
    if (sent.ok() && comm.rank() == 0) {
      RFT_LOG_INFO("node collectives on %s: through messages (%s)", comm.name().c_str(),
                   "a member has RFT_NODE_COLLECTIVES=n, blocks when idle (RFT_PROGRESS), has "
                   "no pidfd of member 0, or could not map the area");
    }
    return sent;
  }
  if (comm.rank() == 0) {
    RFT_LOG_INFO("node collectives on %s: an area shared by its %u members", comm.name().c_str(),
                 comm.size());
  }
  out->reset(new NodeCollectives(comm, mapping, bytes));
  return Status::Ok();
}

bool NodeCollectives::Began(Rank member, uint64_t call) {
  if (seen_[member] >= call) return true;
  // The line may be behind what this member saw: a barrier is published in its slot only.
  seen_[member] = std::max(seen_[member], entries_[member].began.load(std::memory_order_acquire));
  return seen_[member] >= call;
}

bool NodeCollectives::PassedBarrier(Rank member, uint64_t call) {
  if (seen_[member] >= call) return true;
  // Later than `call` when the member went on to the next barrier with this slot already.
  const uint64_t now = SlotOf(member, call).call.load(std::memory_order_acquire);
  if (now < call) return false;
  seen_[member] = now;
  return true;
}

bool NodeCollectives::HasData(Rank member, uint64_t call, bool in_entry, uint64_t* bytes,
                              const std::byte** data) {
  // Exactly `call`: neither holds a later call's data before this member began the next call,
  // and a slot's data stays until then. (A slot's `call` may run ahead: a barrier publishes
  // there without waiting.)
  const auto in_entry_now = [&] {
    const Entry& entry = EntryOf(member, call);
    const uint64_t word = entry.word.load(std::memory_order_acquire);
    if ((word >> 8) != call) return false;
    *bytes = word & 0xff;
    *data = entry.data;
    return true;
  };
  const auto in_slot_now = [&] {
    const Slot& slot = SlotOf(member, call);
    if (slot.data_call.load(std::memory_order_acquire) != call) return false;
    *bytes = slot.bytes;
    *data = slot.data;
    return true;
  };
  const bool found = in_entry ? in_entry_now() || in_slot_now() : in_slot_now() || in_entry_now();
  // It began the call to publish it: no need to read its line for that.
  if (found && seen_[member] < call) seen_[member] = call;
  return found;
}

template <class Ready>
Status NodeCollectives::Await(Session& session, const char* what, Ready&& ready) {
  for (uint64_t spins = 1;; ++spins) {
    if (ready()) [[likely]]
      return Status::Ok();
    if (spins % kSpinsPerPoll != 0) {
      CpuRelax();
      continue;
    }
    // What a peer may wait for before it reaches this call: its messages to this process, a
    // non-blocking collective's next round.
    (void)session.ProgressOnce();
    if (ready()) return Status::Ok();
    // A long wait: the member waited for may be off its core (a busy host); give it the core.
    if (spins >= kSpinsBeforeYield) sched_yield();
    RFT_RETURN_IF_ERROR(Schedule::CheckCanRun(comm_, what));
  }
}

Status NodeCollectives::Begin(Session& session, const char* what, bool writes, bool in_entry,
                              uint64_t* call) {
  RFT_RETURN_IF_ERROR(Schedule::CheckCanRun(comm_, what));
  *call = ++calls_;
  // What this call writes was read at call - kEntries (kSlots); a member that began the call
  // after that one is past it.
  const uint64_t reuse = in_entry ? kEntries : kSlots;
  if (!writes || *call < reuse) return Status::Ok();
  for (Rank member = 0; member < size_; ++member) {
    if (member == rank_) continue;
    RFT_RETURN_IF_ERROR(Await(session, what, [&] { return Began(member, *call - reuse + 1); }));
  }
  return Status::Ok();
}

void NodeCollectives::PublishBegan(uint64_t call, bool in_slot) {
  // A barrier's in its slot only: the others saw it there (they waited for it), so none needs
  // to read this member's line for it.
  if (in_slot) {
    SlotOf(rank_, call).call.store(call, std::memory_order_release);
  } else {
    entries_[rank_].began.store(call, std::memory_order_release);
  }
  seen_[rank_] = call;
}

void NodeCollectives::PublishData(uint64_t call, bool in_entry, const void* data, size_t bytes) {
  if (in_entry) {
    Entry& entry = EntryOf(rank_, call);
    if (bytes > 0) std::memcpy(entry.data, data, bytes);
    entry.word.store((call << 8) | bytes, std::memory_order_release);
  } else {
    Slot& slot = SlotOf(rank_, call);
    if (bytes > 0) std::memcpy(slot.data, data, bytes);
    slot.bytes = bytes;
    slot.data_call.store(call, std::memory_order_release);
  }
  PublishBegan(call, false);
}

Status NodeCollectives::Mismatch(const char* what, const std::string& who, uint64_t given,
                                 size_t expected) const {
  return Status(RFT_ERR_TRUNCATE, std::string(what) + " on " + comm_.name() + ": " + who +
                                      std::to_string(given) + " bytes where " +
                                      std::to_string(expected) +
                                      " were expected: the members' counts or types differ");
}

Status NodeCollectives::Barrier(Session& session, const char* what) {
  uint64_t call = 0;
  RFT_RETURN_IF_ERROR(Begin(session, what, false, false, &call));
  PublishBegan(call, true);
  for (Rank member = 0; member < size_; ++member) {
    if (member == rank_) continue;
    RFT_RETURN_IF_ERROR(Await(session, what, [&] { return PassedBarrier(member, call); }));
  }
  return Status::Ok();
}

Status NodeCollectives::Bcast(Session& session, const char* what, void* buffer, size_t bytes,
                              int root) {
  const auto from = static_cast<Rank>(root);
  const bool in_entry = bytes <= kEntryBytes;
  uint64_t call = 0;
  RFT_RETURN_IF_ERROR(Begin(session, what, from == rank_, in_entry, &call));
  if (from == rank_) {
    PublishData(call, in_entry, buffer, bytes);
    return Status::Ok();
  }
  PublishBegan(call, false);
  uint64_t sent = 0;
  const std::byte* data = nullptr;
  RFT_RETURN_IF_ERROR(
      Await(session, what, [&] { return HasData(from, call, in_entry, &sent, &data); }));
  if (sent != bytes) [[unlikely]]
    return Mismatch(what, "root " + std::to_string(root) + " sent ", sent, bytes);
  if (bytes > 0) std::memcpy(buffer, data, bytes);
  return Status::Ok();
}

Status NodeCollectives::Reduce(Session& session, const char* what, const void* send, void* receive,
                               size_t count, const ReduceOp& op, int root) {
  const size_t bytes = count * op.element_size;
  const bool gathers = root < 0 || static_cast<Rank>(root) == rank_;
  // A reduce pipelines (its others run ahead), an allreduce runs in lock step: the entries'
  // four calls to a line serve the first and would make the second's members take the line
  // they poll from each other.
  const bool in_entry = root >= 0 && bytes <= kEntryBytes;
  uint64_t call = 0;
  RFT_RETURN_IF_ERROR(Begin(session, what, true, in_entry, &call));
  PublishData(call, in_entry, send, bytes);
  if (!gathers) return Status::Ok();
  // Each member's contribution, as it published it (this member's own included).
  const std::byte* given[kMaxMembers];
  for (Rank member = 0; member < size_; ++member) {
    uint64_t length = 0;
    RFT_RETURN_IF_ERROR(Await(
        session, what, [&] { return HasData(member, call, in_entry, &length, &given[member]); }));
    if (length != bytes) [[unlikely]]
      return Mismatch(what, "member " + std::to_string(member) + " gave ", length, bytes);
  }
  // In member order, from the highest down: inout = in (op) inout with `in` the lower member's.
  if (bytes > 0) std::memcpy(receive, given[size_ - 1], bytes);
  for (Rank member = size_ - 1; member-- > 0;) op.combine(given[member], receive, count);
  return Status::Ok();
}

}  // namespace rft::api
