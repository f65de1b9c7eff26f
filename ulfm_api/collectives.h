// Collective operations on a communicator, over the data plane in the communicator's collective
// context (never confused with its point-to-point traffic).
//
// Algorithms: barrier by dissemination (ceil(log2 n) rounds, any n); bcast and reduce by a
// binomial tree rooted at `root`; allreduce by recursive doubling, the ranks beyond the largest
// power of two folded in first (every rank combines in rank order, so a floating-point
// allreduce gives the same bits everywhere); allgather by a ring.
//
// Failures (ULFM): a collective on a communicator with a known failed member returns
// RFT_ERR_PROC_FAILED at once; one that learns of a failure while it runs stops waiting and
// returns RFT_ERR_PROC_FAILED (the detector tells every survivor, so no member waits forever for
// a peer that gave up). The outcome may differ across members: one may finish before the
// failure is known. On a revoked communicator: RFT_ERR_REVOKED.
#ifndef RFT_ULFM_API_COLLECTIVES_H_
#define RFT_ULFM_API_COLLECTIVES_H_

#include <cstddef>

#include "base/status.h"
#include "ulfm_api/communicator.h"

namespace rft::api {

class Session;

// inout[i] = in[i] (op) inout[i] for `count` elements (MPI's user-function convention: `in` is
// the lower ranks' contribution).
struct ReduceOp {
  void (*combine)(const void* in, void* inout, size_t count) = nullptr;
  size_t element_size = 1;
};

Status Barrier(Session& session, Communicator& comm);
Status Bcast(Session& session, Communicator& comm, void* buffer, size_t bytes, int root);
// `send` may equal `receive` (in place). `count` elements of op.element_size bytes.
Status Allreduce(Session& session, Communicator& comm, const void* send, void* receive,
                 size_t count, const ReduceOp& op);
// `receive` is used at `root` only.
Status Reduce(Session& session, Communicator& comm, const void* send, void* receive, size_t count,
              const ReduceOp& op, int root);
// `receive` holds size() blocks of `bytes`, member r's at r * bytes.
Status Allgather(Session& session, Communicator& comm, const void* send, size_t bytes,
                 void* receive);

}  // namespace rft::api

#endif  // RFT_ULFM_API_COLLECTIVES_H_
