// Collective operations on a communicator: each Build* function writes one collective's
// algorithm into a Schedule (schedule.h), which a blocking call runs to the end and a
// non-blocking one hands to the session (Session::StartCollective). The messages travel in the
// communicator's collective context, never confused with its point-to-point traffic.
//
// Algorithms (docs/api.md, "Collectives"):
// - barrier: dissemination, ceil(log2 n) rounds, any n.
// - bcast, reduce: binomial trees rooted at `root`.
// - allreduce: up to kRingAllreduceBytes, recursive doubling, the ranks beyond the largest power
//   of two folded in first; every rank combines in rank order, so a floating-point allreduce gives
//   the same bits everywhere. Above it (and when every member gets a piece), a ring
//   reduce-scatter then a ring allgather: each member sends and receives 2 (n-1)/n of the data
//   instead of log2 n times all of it; each piece is combined once, by one member, and copied
//   to the others, so all still get the same bits.
// - allgather, allgatherv: a ring.
// - gather, scatter: binomial trees (the root's blocks rotated so every subtree's are
//   contiguous); gatherv, scatterv: the root exchanges with every member at once.
// - alltoall, alltoallv: every member posts all its receives and sends at once.
//
// Buffers are bytes here: the C binding turns counts of elements into bytes. The "v" forms take
// per-member counts and displacements in elements of `element_size` bytes, as the C API does.
// A collective's receive buffer may equal its send block (in place), as each one says.
//
// Failures (ULFM): Session and the binding refuse to start a collective on a communicator with a
// known failed member (RFT_ERR_PROC_FAILED) or a revoked one (RFT_ERR_REVOKED); one that learns of
// a failure while it runs returns RFT_ERR_PROC_FAILED (the detector tells every survivor, so no
// member waits forever for a peer that gave up). The outcome may differ across members: one may
// finish before the failure is known.
#ifndef RFT_ULFM_API_COLLECTIVES_H_
#define RFT_ULFM_API_COLLECTIVES_H_

#include <cstddef>

#include "base/status.h"
#include "ulfm_api/communicator.h"
#include "ulfm_api/schedule.h"

namespace rft::api {

// Above this many bytes an allreduce uses the ring (when count >= members).
inline constexpr size_t kRingAllreduceBytes = 64 * 1024;

// Per-member layout of a "v" collective's buffer: member r's block is counts[r] elements at
// element displacements[r].
struct BlockLayout {
  const size_t* counts = nullptr;
  const size_t* displacements = nullptr;
  size_t element_size = 1;
};

Status BuildBarrier(Schedule& schedule);
Status BuildBcast(Schedule& schedule, void* buffer, size_t bytes, int root);
// `send` may equal `receive` (in place). `count` elements of op.element_size bytes.
Status BuildAllreduce(Schedule& schedule, const void* send, void* receive, size_t count,
                      const ReduceOp& op);
// `receive` is used at `root` only.
Status BuildReduce(Schedule& schedule, const void* send, void* receive, size_t count,
                   const ReduceOp& op, int root);
// `receive` holds size() blocks of `bytes`, member r's at r * bytes. In place: `send` is the
// caller's own block of `receive`.
Status BuildAllgather(Schedule& schedule, const void* send, size_t bytes, void* receive);
// Member r's block is `layout`'s; `send` holds counts[rank()] elements (in place: it is the
// caller's block of `receive`).
Status BuildAllgatherv(Schedule& schedule, const void* send, void* receive,
                       const BlockLayout& layout);
// At `root`, `receive` holds size() blocks of `bytes` (in place: `send` is the root's block).
Status BuildGather(Schedule& schedule, const void* send, size_t bytes, void* receive, int root);
// `send_bytes` from each member; at `root`, `layout` places them in `receive`.
Status BuildGatherv(Schedule& schedule, const void* send, size_t send_bytes, void* receive,
                    const BlockLayout& layout, int root);
// At `root`, `send` holds size() blocks of `bytes`; every member's block lands in `receive`
// (in place at the root: `receive` is the root's block of `send`).
Status BuildScatter(Schedule& schedule, const void* send, void* receive, size_t bytes, int root);
// At `root`, `layout` says where each member's block is in `send`; `receive_bytes` arrive.
Status BuildScatterv(Schedule& schedule, const void* send, const BlockLayout& layout, void* receive,
                     size_t receive_bytes, int root);
// Block r of `send` (of `bytes`) goes to member r; block r of `receive` comes from it.
Status BuildAlltoall(Schedule& schedule, const void* send, size_t bytes, void* receive);
Status BuildAlltoallv(Schedule& schedule, const void* send, const BlockLayout& send_layout,
                      void* receive, const BlockLayout& receive_layout);

}  // namespace rft::api

#endif  // RFT_ULFM_API_COLLECTIVES_H_
