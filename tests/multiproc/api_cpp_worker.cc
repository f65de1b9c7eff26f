// A C++17 program over rft.hpp alone (built with -std=c++17): RAII handles and errors as
// exceptions, with the last rank killing itself at an agreed point. Prints "cpp ok rank=R".
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

int main() {
  static_assert(__cplusplus == 201703L, "this program checks that rft.hpp is C++17");
  rft::Environment env(RFT_FT_NOTIFY);
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
  std::printf("cpp ok rank=%d\n", rank);
  std::fflush(stdout);
  return 0;
}
