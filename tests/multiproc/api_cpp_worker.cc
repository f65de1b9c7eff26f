// A C++17 program over rft.hpp alone (built with -std=c++17): RAII handles and errors as
// exceptions, with the last rank killing itself at an agreed point and the survivors replacing
// it (Replace; the replacement finds them with GetParent); then all of them spawn a child (Spawn)
// and send it a task across the intercommunicator. Prints "cpp ok rank=R", "cpp replacement ok"
// and, in the child, "cpp spawned ok".
#include <signal.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "ulfm_api/rft.hpp"

#define EXPECT(cond, what)                                              \
  do {                                                                  \
    if (!(cond)) {                                                      \
      std::printf("FAILED: %s:%d: %s: %s\n", __FILE__, __LINE__, #cond, \
                  std::string(what).c_str());                           \
      std::fflush(stdout);                                              \
      std::exit(3);                                                     \
    }                                                                   \
  } while (0)

// Every member of `comm` (which holds every live process): one child through Spawn, a bcast to
// it across the intercommunicator; both sides disconnect it.
void SpawnAChild(const rft::Comm& comm, const char* program) {
  std::vector<int> codes;
  rft::Comm child = comm.Spawn(program, {"spawned"}, 1, 0, &codes);
  EXPECT(child.IsInter() && child.RemoteSize() == 1 && child.Size() == comm.Size(), "shape");
  EXPECT(comm.Rank() != 0 || (codes.size() == 1 && codes[0] == RFT_SUCCESS), "errcodes");
  int task = 4242;
  child.Bcast(&task, 1, comm.Rank() == 0 ? RFT_ROOT : RFT_PROC_NULL);
  child.Disconnect();
  EXPECT(child.null(), "a disconnected Comm keeps its handle");
}

// The replacement of the dead rank: it takes its rank in the communicator its spawners built.
int Replacement(int expected_rank, const char* program) {
  rft::Environment env(RFT_FT_NOTIFY);
  rft::Comm parent = rft::Comm::GetParent();
  EXPECT(!parent.null(), "a replacement without a parent");
  EXPECT(parent.Rank() == expected_rank, std::to_string(parent.Rank()));
  int one = 1;
  parent.Allreduce(&one, 1, RFT_SUM);
  EXPECT(one == parent.Size(), std::to_string(one));
  SpawnAChild(parent, program);
  std::printf("cpp replacement ok\n");
  std::fflush(stdout);
  return 0;
}

// The child of SpawnAChild: its parent is the intercommunicator, the task comes across it.
int Spawned() {
  rft::Environment env(RFT_FT_NOTIFY);
  rft::Comm parent = rft::Comm::GetParent();
  EXPECT(!parent.null() && parent.IsInter() && parent.Size() == 1, "no parent intercommunicator");
  int task = 0;
  parent.Bcast(&task, 1, 0);
  EXPECT(task == 4242, std::to_string(task));
  parent.Disconnect();
  EXPECT(parent.null() && rft::Comm::GetParent().null(), "the parent outlived its disconnect");
  std::printf("cpp spawned ok\n");
  std::fflush(stdout);
  return 0;
}

int main(int argc, char** argv) {
  static_assert(__cplusplus == 201703L, "this program checks that rft.hpp is C++17");
  if (argc > 2 && std::string(argv[1]) == "replacement") {
    return Replacement(std::atoi(argv[2]), argv[0]);
  }
  if (argc > 1 && std::string(argv[1]) == "spawned") return Spawned();
  rft::Environment env(RFT_FT_NOTIFY);
  EXPECT(rft::Comm::GetParent().null(), "a parent in a process rftrun started");
  const rft::Comm world = rft::Comm::World();
  const int rank = world.Rank();
  const int size = world.Size();
  EXPECT(size >= 3, "needs 3 ranks or more");

  std::vector<long> values(4, rank);
  world.Allreduce(values.data(), values.size(), RFT_SUM);
  EXPECT(values[3] == static_cast<long>(size) * (size - 1) / 2, std::to_string(values[3]));
  rft::Comm dup = world.Dup();
  dup.Barrier();
  long one = 1;
  rft::Request pending = dup.Iallreduce(&one, 1, RFT_SUM);
  pending.Wait();
  EXPECT(pending.done() && one == size, std::to_string(one));
  std::vector<int> ranks(static_cast<size_t>(size), -1);
  dup.Gather(&rank, 1, ranks.data(), 0);
  EXPECT(rank != 0 || ranks[static_cast<size_t>(size) - 1] == size - 1, "gather");
  {
    rft::Comm half = world.Split(rank % 2, rank);  // freed at the end of the block
    EXPECT(half.Size() == (size - rank % 2 + 1) / 2, std::to_string(half.Size()));
    // The even and odd halves joined; their leaders are world ranks 0 and 1.
    const rft::Comm inter = half.IntercommCreate(0, world, 1 - rank % 2, 3);
    EXPECT(inter.IsInter() && inter.Size() == half.Size() &&
               inter.RemoteSize() == size - half.Size() &&
               inter.RemoteGroup().Size() == inter.RemoteSize(),
           std::to_string(inter.RemoteSize()));
    const rft::Comm merged = inter.IntercommMerge(rank % 2 == 1);  // evens first
    EXPECT(!merged.IsInter() && merged.Size() == size &&
               merged.Rank() == (rank % 2 == 0 ? rank / 2 : (size + 1) / 2 + rank / 2),
           std::to_string(merged.Rank()));
  }

  {
    // Only the first two ranks call: a communicator of theirs, in reverse order.
    if (rank < 2) {
      const int members[2] = {1, 0};
      rft_group_t pair = RFT_GROUP_NULL;
      rft::Check(rft_group_incl(world.GetGroup().get(), 2, members, &pair));
      const rft::Comm two = world.CreateGroup(rft::Group(pair), 5);
      EXPECT(two.Size() == 2 && two.Rank() == 1 - rank, std::to_string(two.Rank()));
    }
    // A freed send still arrives.
    const int next = (rank + 1) % size, previous = (rank + size - 1) % size;
    rft::Request send = world.Isend(&rank, 1, next, 88);
    send.Free();
    EXPECT(send.done(), "a freed request is not done()");
    int from = -1;
    world.Recv(&from, 1, previous, 88);
    EXPECT(from == previous, std::to_string(from));
  }

  // A bad argument is an exception naming it.
  try {
    world.Send(&rank, 1, size, 0);
    EXPECT(false, "a send to rank " + std::to_string(size) + " did not throw");
  } catch (const rft::Error& e) {
    EXPECT(e.code() == RFT_ERR_ARG, rft_error_name(e.code()));
    EXPECT(std::string(e.what()).find("rank " + std::to_string(size)) != std::string::npos,
           e.what());
  }

  // The last rank dies once every other rank told it that it is past the collectives above (a
  // collective it finished while another was still in it could fail there); the others' next
  // barrier throws PROC_FAILED.
  world.Barrier();
  int token = 0;
  if (rank == size - 1) {
    for (int r = 0; r < size - 1; ++r) world.Recv(&token, 1, r, 77);
    raise(SIGKILL);
  }
  world.Send(&token, 1, size - 1, 77);
  try {
    world.Barrier();
    EXPECT(false, "a barrier with a dead member returned");
  } catch (const rft::Error& e) {
    EXPECT(e.code() == RFT_ERR_PROC_FAILED, rft_error_name(e.code()));
  }
  const rft::Group failed = world.GetFailed();
  const std::vector<int> in_world = failed.TranslateAll(world.GetGroup());
  EXPECT(in_world.size() == 1 && in_world[0] == size - 1,
         "failed: " + std::to_string(in_world.size()));
  EXPECT(world.AckFailed(1) == 1, "ack");

  // Revoke the duplicate (its failure acknowledged): the others' receive throws REVOKED.
  EXPECT(dup.AckFailed(1) == 1, "ack on the duplicate");
  if (rank == 0) {
    dup.Revoke();
    // Stays until every survivor saw it (world has a dead member: no barrier).
    for (int r = 1; r < size - 1; ++r) world.Recv(&values[0], 1, r, 9);
  } else {
    try {
      int value = 0;
      dup.Recv(&value, 1, RFT_ANY_SOURCE, 0);
      EXPECT(false, "a receive on a revoked communicator returned");
    } catch (const rft::Error& e) {
      EXPECT(e.code() == RFT_ERR_REVOKED, rft_error_name(e.code()));
    }
    world.Send(&values[0], 1, 0, 9);
  }
  EXPECT(dup.IsRevoked(), "not revoked");

  // The dead rank replaced: the new process takes its rank.
  const rft::Comm full = world.Replace({argv[0], "replacement", std::to_string(size - 1)});
  EXPECT(full.Size() == size && full.Rank() == rank, std::to_string(full.Rank()));
  int members = 1;
  full.Allreduce(&members, 1, RFT_SUM);
  EXPECT(members == size, std::to_string(members));
  SpawnAChild(full, argv[0]);
  std::printf("cpp ok rank=%d\n", rank);
  std::fflush(stdout);
  return 0;
}
