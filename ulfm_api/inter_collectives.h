// Collective operations on an intercommunicator, with MPI's meanings (MPI-4.1 §6.2.2,
// "Intercommunicator collective operations"): data moves between the two groups, never within
// one. Each Build* writes its algorithm into a Schedule over all members of both groups (one tag,
// one call of the intercommunicator's collective counter at every member of both groups); the
// steps inside one group run the intracommunicator algorithms of collectives.h on a restricted
// view of the schedule (Schedule::Restrict).
//
// Roots: a rooted operation's `root` is kRootHere at the root, kRootNone at the other members of
// the root's group, and the root's rank in its group at the members of the other group (RFT_ROOT
// and RFT_PROC_NULL in rft.h, MPI_ROOT and MPI_PROC_NULL in MPI).
//
// Algorithms (docs/api.md, "Intercommunicators"):
// - bcast, scatter: the root sends to the other group's rank 0, which spreads over its group
//   (binomial tree); gather, reduce: the other group gathers (reduces) to its rank 0, which sends
//   to the root. The root group's other members take no part.
// - allreduce, allgather: each group reduces (gathers) to its rank 0, the two exchange, and each
//   spreads what it received over its group.
// - alltoall: every member posts all its transfers with the other group at once.
// - the "v" forms (gatherv, scatterv, allgatherv, alltoallv): every transfer goes straight between
//   the two members it concerns (a member knows only the other group's counts, so no group can
//   combine its own members' blocks): the root exchanges with every member of the other group,
//   and in allgatherv and alltoallv every member with every member of the other group.
// - barrier: BuildBarrier over all members of both groups.
//
// Failures: as collectives.h (a failed member of either group fails the operation).
#ifndef RFT_ULFM_API_INTER_COLLECTIVES_H_
#define RFT_ULFM_API_INTER_COLLECTIVES_H_

#include <cstddef>

#include "base/status.h"
#include "ulfm_api/collectives.h"
#include "ulfm_api/schedule.h"

namespace rft::api {

inline constexpr int kRootHere = -3;
inline constexpr int kRootNone = -2;

// `buffer` holds `bytes`: sent at the root, received in the other group.
Status BuildInterBcast(Schedule& schedule, void* buffer, size_t bytes, int root);
// The other group's `send`s reduced (in their rank order) into the root's `receive`.
Status BuildInterReduce(Schedule& schedule, const void* send, void* receive, size_t count,
                        const ReduceOp& op, int root);
// `receive` gets the reduction of the other group's `send`s (in their rank order).
Status BuildInterAllreduce(Schedule& schedule, const void* send, void* receive, size_t count,
                           const ReduceOp& op);
// `receive` gets the other group's blocks of `bytes`, in its rank order.
Status BuildInterAllgather(Schedule& schedule, const void* send, size_t bytes, void* receive);
// At the root, `receive` gets the other group's blocks of `bytes`, in its rank order.
Status BuildInterGather(Schedule& schedule, const void* send, size_t bytes, void* receive,
                        int root);
// At the root, `send` holds one block of `bytes` per member of the other group, which each get
// theirs in `receive`.
Status BuildInterScatter(Schedule& schedule, const void* send, void* receive, size_t bytes,
                         int root);
// Block j of `send` goes to the other group's rank j; block j of `receive` comes from it.
Status BuildInterAlltoall(Schedule& schedule, const void* send, size_t bytes, void* receive);

// The "v" forms: a layout's entries are the other group's members, in its rank order.
// At the root, `layout` places the other group's blocks in `receive`; they send `send_bytes`.
Status BuildInterGatherv(Schedule& schedule, const void* send, size_t send_bytes, void* receive,
                         const BlockLayout& layout, int root);
// At the root, `layout` says where each member of the other group finds its block in `send`;
// they receive `receive_bytes`.
Status BuildInterScatterv(Schedule& schedule, const void* send, const BlockLayout& layout,
                          void* receive, size_t receive_bytes, int root);
// `send_bytes` go to every member of the other group; `layout` places theirs in `receive`.
Status BuildInterAllgatherv(Schedule& schedule, const void* send, size_t send_bytes, void* receive,
                            const BlockLayout& layout);
// Block j of `send_layout` goes to the other group's rank j; block j of `receive_layout` comes
// from it.
Status BuildInterAlltoallv(Schedule& schedule, const void* send, const BlockLayout& send_layout,
                           void* receive, const BlockLayout& receive_layout);

}  // namespace rft::api

#endif  // RFT_ULFM_API_INTER_COLLECTIVES_H_
