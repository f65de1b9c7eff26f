#include "ulfm_api/node_collectives.h"

#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

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
      slots_(static_cast<Slot*>(mapping)),
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
  const size_t bytes = kSlots * sizeof(Slot) * comm.size();

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

bool NodeCollectives::Published(Rank member, uint64_t call) {
  if (seen_[member] >= call) return true;
  const uint64_t now = SlotOf(member, call).call.load(std::memory_order_acquire);
  if (now < call) return false;
  seen_[member] = now;
  return true;
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

Status NodeCollectives::AwaitAll(Session& session, const char* what, uint64_t call) {
  for (Rank member = 0; member < size_; ++member) {
    if (member == rank_) continue;
    RFT_RETURN_IF_ERROR(Await(session, what, [&] { return Published(member, call); }));
  }
  return Status::Ok();
}

Status NodeCollectives::Begin(Session& session, const char* what, bool writes, uint64_t* call) {
  RFT_RETURN_IF_ERROR(Schedule::CheckCanRun(comm_, what));
  *call = ++calls_;
  // The slot this call writes was read at call - kSlots; a member that published the call after
  // that one is past it.
  if (writes && *call >= kSlots) return AwaitAll(session, what, *call - kSlots + 1);
  return Status::Ok();
}

void NodeCollectives::Publish(uint64_t call) {
  // Only the number: a member still in call - kSlots may be reading what the slot held then
  // (only a call that writes data waited for everyone to be past it).
  SlotOf(rank_, call).call.store(call, std::memory_order_release);
  seen_[rank_] = call;
}

void NodeCollectives::Publish(uint64_t call, const void* data, size_t bytes) {
  Slot& slot = SlotOf(rank_, call);
  if (bytes > 0) std::memcpy(slot.data, data, bytes);
  slot.bytes = bytes;
  Publish(call);
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
  RFT_RETURN_IF_ERROR(Begin(session, what, false, &call));
  Publish(call);
  return AwaitAll(session, what, call);
}

Status NodeCollectives::Bcast(Session& session, const char* what, void* buffer, size_t bytes,
                              int root) {
  const auto from = static_cast<Rank>(root);
  uint64_t call = 0;
  RFT_RETURN_IF_ERROR(Begin(session, what, from == rank_, &call));
  if (from == rank_) {
    Publish(call, buffer, bytes);
    return Status::Ok();
  }
  Publish(call);
  RFT_RETURN_IF_ERROR(Await(session, what, [&] { return Published(from, call); }));
  const Slot& slot = SlotOf(from, call);
  if (slot.bytes != bytes) [[unlikely]]
    return Mismatch(what, "root " + std::to_string(root) + " sent ", slot.bytes, bytes);
  std::memcpy(buffer, slot.data, bytes);
  return Status::Ok();
}

Status NodeCollectives::Reduce(Session& session, const char* what, const void* send, void* receive,
                               size_t count, const ReduceOp& op, int root) {
  const size_t bytes = count * op.element_size;
  const bool gathers = root < 0 || static_cast<Rank>(root) == rank_;
  uint64_t call = 0;
  RFT_RETURN_IF_ERROR(Begin(session, what, true, &call));
  Publish(call, send, bytes);
  if (!gathers) return Status::Ok();
  RFT_RETURN_IF_ERROR(AwaitAll(session, what, call));
  for (Rank member = 0; member < size_; ++member) {
    if (SlotOf(member, call).bytes != bytes) [[unlikely]] {
      return Mismatch(what, "member " + std::to_string(member) + " gave ",
                      SlotOf(member, call).bytes, bytes);
    }
  }
  // In member order, from the highest down: inout = in (op) inout with `in` the lower member's.
  std::memcpy(receive, SlotOf(size_ - 1, call).data, bytes);
  for (Rank member = size_ - 1; member-- > 0;) {
    op.combine(SlotOf(member, call).data, receive, count);
  }
  return Status::Ok();
}

}  // namespace rft::api
