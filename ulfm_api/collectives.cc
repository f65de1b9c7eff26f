#include "ulfm_api/collectives.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>
#include <utility>

namespace rft::api {

namespace {

Rank Relative(Rank rank, Rank root, uint32_t size) { return (rank + size - root) % size; }
Rank Absolute(Rank relative, Rank root, uint32_t size) { return (relative + root) % size; }

std::byte* At(void* buffer, size_t offset) { return static_cast<std::byte*>(buffer) + offset; }
const std::byte* At(const void* buffer, size_t offset) {
  return static_cast<const std::byte*>(buffer) + offset;
}

// In a binomial tree over relative ranks 0..n-1 rooted at 0: how many ranks the subtree of
// `relative` spans (itself and its descendants, relative .. relative + span - 1), and the
// distance to its parent (0 for the root).
struct TreeNode {
  uint32_t span;
  uint32_t parent_distance;
};
TreeNode NodeOf(Rank relative, uint32_t n) {
  if (relative == 0) return {n, 0};
  const uint32_t low_bit = relative & (~relative + 1);
  return {std::min(low_bit, n - relative), low_bit};
}

// The recursive-doubling allreduce: latency-bound sizes.
void RecursiveDoubling(Schedule& s, void* receive, size_t count, const ReduceOp& op) {
  const uint32_t n = s.size();
  const Rank me = s.rank();
  const size_t bytes = count * op.element_size;
  std::byte* other = s.Scratch(bytes);
  // Fold the ranks beyond the largest power of two: of ranks 2i and 2i+1 (i < extra), the odd
  // one takes part for both, holding (2i) (op) (2i+1).
  const uint32_t power = std::bit_floor(n);
  const uint32_t extra = n - power;
  Rank virtual_rank;
  if (me < 2 * extra) {
    if (me % 2 == 0) {
      s.Send(receive, bytes, me + 1);
      s.EndRound();
      s.Receive(receive, bytes, me + 1);  // the result, from the partner
      return;
    }
    s.Receive(other, bytes, me - 1);
    s.Combine(op, other, receive, count);  // lower rank first
    virtual_rank = me / 2;
  } else {
    virtual_rank = me - extra;
  }
  const auto real = [extra](Rank v) { return v < extra ? 2 * v + 1 : v + extra; };
  for (uint32_t mask = 1; mask < power; mask <<= 1) {
    const Rank partner = real(virtual_rank ^ mask);
    s.Receive(other, bytes, partner);
    s.Send(receive, bytes, partner);
    if (partner < me) {
      s.Combine(op, other, receive, count);
    } else {
      s.Combine(op, receive, other, count);
      s.Copy(other, receive, bytes);
    }
  }
  if (me < 2 * extra) s.Send(receive, bytes, me - 1);  // an odd folding rank hands the result on
}

// The ring allreduce: bandwidth-bound sizes, count >= n. Piece i of the vector is
// base (+1 for the first `longer` pieces) elements.
void Ring(Schedule& s, void* receive, size_t count, const ReduceOp& op) {
  const uint32_t n = s.size();
  const Rank me = s.rank();
  const size_t size = op.element_size;
  const size_t base = count / n;
  const size_t longer = count % n;
  const auto offset = [&](Rank piece) { return (piece * base + std::min<size_t>(piece, longer)); };
  const auto length = [&](Rank piece) { return base + (piece < longer ? 1 : 0); };
  const Rank left = (me + n - 1) % n;
  const Rank right = (me + 1) % n;
  std::byte* incoming = s.Scratch((base + 1) * size);
  // Reduce-scatter: after step k, piece (me - k - 1) holds the contributions of k + 2 members;
  // after n - 1 steps member r holds piece (r + 1) complete.
  for (uint32_t step = 0; step + 1 < n; ++step) {
    const Rank out = (me + n - step) % n;
    const Rank in = (me + 2 * n - step - 1) % n;
    s.Receive(incoming, length(in) * size, left);
    s.Send(At(receive, offset(out) * size), length(out) * size, right);
    s.Combine(op, incoming, At(receive, offset(in) * size), length(in));
  }
  // Allgather of the complete pieces.
  for (uint32_t step = 0; step + 1 < n; ++step) {
    const Rank out = (me + 1 + n - step) % n;
    const Rank in = (me + n - step) % n;
    s.Receive(At(receive, offset(in) * size), length(in) * size, left);
    s.Send(At(receive, offset(out) * size), length(out) * size, right);
    s.EndRound();
  }
}

// A ring over blocks: at step k, pass on the block of member (me - k), receive that of
// (me - k - 1). Block r is `length(r)` bytes at `place(r)`.
template <class Place, class Length>
void RingAllgather(Schedule& s, Place place, Length length) {
  const uint32_t n = s.size();
  const Rank me = s.rank();
  for (uint32_t step = 0; step + 1 < n; ++step) {
    const Rank out = (me + n - step) % n;
    const Rank in = (me + 2 * n - step - 1) % n;
    s.Receive(place(in), length(in), (me + n - 1) % n);
    s.Send(place(out), length(out), (me + 1) % n);
    s.EndRound();
  }
}

}  // namespace

Status BuildBarrier(Schedule& s) {
  const uint32_t n = s.size();
  const Rank me = s.rank();
  for (uint32_t distance = 1; distance < n; distance <<= 1) {
    s.Receive(nullptr, 0, (me + n - distance) % n);
    s.Send(nullptr, 0, (me + distance) % n);
    s.EndRound();
  }
  return Status::Ok();
}

Status BuildBcast(Schedule& s, void* buffer, size_t bytes, int root) {
  RFT_RETURN_IF_ERROR(s.CheckRoot("bcast root", root));
  const uint32_t n = s.size();
  const Rank relative = Relative(s.rank(), static_cast<Rank>(root), n);
  const TreeNode node = NodeOf(relative, n);
  if (node.parent_distance != 0) {
    s.Receive(buffer, bytes, Absolute(relative - node.parent_distance, root, n));
    s.EndRound();
  }
  // Every child at once, the largest subtree first.
  for (uint32_t mask = std::bit_floor(std::max<uint32_t>(node.span - 1, 1)); mask > 0; mask >>= 1) {
    if (mask < node.span) s.Send(buffer, bytes, Absolute(relative + mask, root, n));
  }
  return Status::Ok();
}

Status BuildAllreduce(Schedule& s, const void* send, void* receive, size_t count,
                      const ReduceOp& op) {
  const size_t bytes = count * op.element_size;
  s.Copy(send, receive, bytes);
  const uint32_t n = s.size();
  if (n == 1) return Status::Ok();
  if (bytes > kRingAllreduceBytes && count >= n) {
    Ring(s, receive, count, op);
  } else {
    RecursiveDoubling(s, receive, count, op);
  }
  return Status::Ok();
}

Status BuildReduce(Schedule& s, const void* send, void* receive, size_t count, const ReduceOp& op,
                   int root) {
  RFT_RETURN_IF_ERROR(s.CheckRoot("reduce root", root));
  const size_t bytes = count * op.element_size;
  const uint32_t n = s.size();
  const Rank relative = Relative(s.rank(), static_cast<Rank>(root), n);
  std::byte* accumulated = s.Scratch(bytes);
  std::byte* other = s.Scratch(bytes);
  s.Copy(send, accumulated, bytes);
  for (uint32_t mask = 1; mask < n; mask <<= 1) {
    if (relative & mask) {
      s.Send(accumulated, bytes, Absolute(relative - mask, root, n));
      return Status::Ok();
    }
    if (relative + mask < n) {
      s.Receive(other, bytes, Absolute(relative + mask, root, n));
      s.Combine(op, accumulated, other, count);  // lower relative ranks first
      std::swap(accumulated, other);
    }
  }
  s.Copy(accumulated, receive, bytes);
  return Status::Ok();
}

Status BuildAllgather(Schedule& s, const void* send, size_t bytes, void* receive) {
  s.Copy(send, At(receive, s.rank() * bytes), bytes);
  RingAllgather(
      s, [&](Rank r) { return At(receive, r * bytes); }, [&](Rank) { return bytes; });
  return Status::Ok();
}

Status BuildAllgatherv(Schedule& s, const void* send, void* receive, const BlockLayout& layout) {
  const auto place = [&](Rank r) {
    return At(receive, layout.displacements[r] * layout.element_size);
  };
  const auto length = [&](Rank r) { return layout.counts[r] * layout.element_size; };
  const Rank me = s.rank();
  s.Copy(send, place(me), length(me));
  RingAllgather(s, place, length);
  return Status::Ok();
}

Status BuildGather(Schedule& s, const void* send, size_t bytes, void* receive, int root) {
  RFT_RETURN_IF_ERROR(s.CheckRoot("gather root", root));
  const uint32_t n = s.size();
  const Rank relative = Relative(s.rank(), static_cast<Rank>(root), n);
  const TreeNode node = NodeOf(relative, n);
  // The subtree's blocks in relative order: at the root of a tree rooted at 0, the user's
  // buffer itself; a leaf sends its own block as it is.
  const void* gathered = send;
  if (node.span > 1 || node.parent_distance == 0) {
    std::byte* blocks =
        (relative == 0 && root == 0) ? At(receive, 0) : s.Scratch(node.span * bytes);
    s.Copy(send, blocks, bytes);
    for (uint32_t mask = 1; mask < node.span; mask <<= 1) {
      s.Receive(blocks + mask * bytes, std::min(mask, node.span - mask) * bytes,
                Absolute(relative + mask, root, n));
    }
    s.EndRound();
    gathered = blocks;
  }
  if (node.parent_distance != 0) {
    s.Send(gathered, node.span * bytes, Absolute(relative - node.parent_distance, root, n));
  } else if (root != 0) {  // relative order to member order
    const auto r = static_cast<size_t>(root);
    s.Copy(gathered, At(receive, r * bytes), (n - r) * bytes);
    s.Copy(At(gathered, (n - r) * bytes), receive, r * bytes);
  }
  return Status::Ok();
}

Status BuildGatherv(Schedule& s, const void* send, size_t send_bytes, void* receive,
                    const BlockLayout& layout, int root) {
  RFT_RETURN_IF_ERROR(s.CheckRoot("gatherv root", root));
  const Rank me = s.rank();
  if (me != static_cast<Rank>(root)) {
    s.Send(send, send_bytes, static_cast<Rank>(root));
    return Status::Ok();
  }
  const size_t size = layout.element_size;
  s.Copy(send, At(receive, layout.displacements[me] * size), send_bytes);
  for (Rank r = 0; r < s.size(); ++r) {
    if (r != me) s.Receive(At(receive, layout.displacements[r] * size), layout.counts[r] * size, r);
  }
  return Status::Ok();
}

Status BuildScatter(Schedule& s, const void* send, void* receive, size_t bytes, int root) {
  RFT_RETURN_IF_ERROR(s.CheckRoot("scatter root", root));
  const uint32_t n = s.size();
  const Rank relative = Relative(s.rank(), static_cast<Rank>(root), n);
  const TreeNode node = NodeOf(relative, n);
  // The subtree's blocks in relative order.
  const void* blocks = send;
  if (relative == 0) {
    if (root != 0) {  // member order to relative order
      const auto r = static_cast<size_t>(root);
      std::byte* rotated = s.Scratch(n * bytes);
      s.Copy(At(send, r * bytes), rotated, (n - r) * bytes);
      s.Copy(send, rotated + (n - r) * bytes, r * bytes);
      blocks = rotated;
    }
  } else if (node.span == 1) {
    s.Receive(receive, bytes, Absolute(relative - node.parent_distance, root, n));
    return Status::Ok();
  } else {
    std::byte* mine = s.Scratch(node.span * bytes);
    s.Receive(mine, node.span * bytes, Absolute(relative - node.parent_distance, root, n));
    s.EndRound();
    blocks = mine;
  }
  for (uint32_t mask = std::bit_floor(node.span - 1); mask > 0; mask >>= 1) {
    s.Send(At(blocks, mask * bytes), std::min(mask, node.span - mask) * bytes,
           Absolute(relative + mask, root, n));
  }
  s.Copy(blocks, receive, bytes);
  return Status::Ok();
}

Status BuildScatterv(Schedule& s, const void* send, const BlockLayout& layout, void* receive,
                     size_t receive_bytes, int root) {
  RFT_RETURN_IF_ERROR(s.CheckRoot("scatterv root", root));
  const Rank me = s.rank();
  if (me != static_cast<Rank>(root)) {
    s.Receive(receive, receive_bytes, static_cast<Rank>(root));
    return Status::Ok();
  }
  const size_t size = layout.element_size;
  for (Rank r = 0; r < s.size(); ++r) {
    if (r != me) s.Send(At(send, layout.displacements[r] * size), layout.counts[r] * size, r);
  }
  s.Copy(At(send, layout.displacements[me] * size), receive, layout.counts[me] * size);
  return Status::Ok();
}

Status BuildAlltoall(Schedule& s, const void* send, size_t bytes, void* receive) {
  const uint32_t n = s.size();
  const Rank me = s.rank();
  s.Copy(At(send, me * bytes), At(receive, me * bytes), bytes);
  // Receives before sends, each member starting with its right neighbour so that not every
  // member sends to the same one first.
  for (uint32_t k = 1; k < n; ++k) {
    const Rank from = (me + n - k) % n;
    s.Receive(At(receive, from * bytes), bytes, from);
  }
  for (uint32_t k = 1; k < n; ++k) {
    const Rank to = (me + k) % n;
    s.Send(At(send, to * bytes), bytes, to);
  }
  return Status::Ok();
}

Status BuildAlltoallv(Schedule& s, const void* send, const BlockLayout& send_layout, void* receive,
                      const BlockLayout& receive_layout) {
  const uint32_t n = s.size();
  const Rank me = s.rank();
  const auto out = [&](Rank r) {
    return At(send, send_layout.displacements[r] * send_layout.element_size);
  };
  const auto out_bytes = [&](Rank r) { return send_layout.counts[r] * send_layout.element_size; };
  const auto in = [&](Rank r) {
    return At(receive, receive_layout.displacements[r] * receive_layout.element_size);
  };
  const auto in_bytes = [&](Rank r) {
    return receive_layout.counts[r] * receive_layout.element_size;
  };
  if (out_bytes(me) != in_bytes(me)) {
    return ArgError("alltoallv on " + s.comm().name() + ": member " + std::to_string(me) +
                    " sends " + std::to_string(out_bytes(me)) + " bytes to itself but expects " +
                    std::to_string(in_bytes(me)));
  }
  s.Copy(out(me), in(me), in_bytes(me));
  for (uint32_t k = 1; k < n; ++k) {
    const Rank from = (me + n - k) % n;
    s.Receive(in(from), in_bytes(from), from);
  }
  for (uint32_t k = 1; k < n; ++k) {
    const Rank to = (me + k) % n;
    s.Send(out(to), out_bytes(to), to);
  }
  return Status::Ok();
}

}  // namespace rft::api
