// The collectives on intercommunicators whose pieces differ in size (MPI-4.1 §6.2.2): the "v"
// and "w" forms, and allgather or all-to-all whose two groups send blocks of different sizes.
// rft's intercommunicator collectives move blocks of one size, so each piece travels in a frame
// of one size for the whole call: its true length (8 bytes), then its packed data, padded. The
// frame size comes first from the side that knows it: a rooted call's root broadcasts its
// largest piece; an all-to-all or allgather takes the maximum over the remote group of every
// member's largest piece (each member's largest covers what it sends and what it receives, so
// the remote group's maximum covers all traffic both ways). A receiver checks each frame's
// length against the count it was given: a mismatch is MPI_ERR_TRUNCATE naming the member. A
// member whose own arguments are bad (MPI_IN_PLACE, which an intercommunicator has no meaning
// for) still takes part, sending frames that say so, and fails after the call: its partners fail
// too, naming it, where a member that left at once would leave them waiting.
//
// Also here: reductions on an intercommunicator that rft has no native form for (user
// operators, derived types), folded in the remote group's rank order after a gather.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "ulfm_api/mpi/mpi_coll_inter.h"
#include "ulfm_api/mpi/mpi_coll_internal.h"

namespace rft::mpi::coll {

namespace {

constexpr size_t kLength = sizeof(uint64_t);
// The length of a frame from a member that refused its own arguments.
constexpr uint64_t kRefused = ~uint64_t{0};

int Done(MPI_Comm comm, const char* function, int rc) {
  return rc == RFT_SUCCESS ? MPI_SUCCESS : RaiseRft(comm, function, rc);
}

size_t Largest(const std::vector<Piece>& pieces) {
  size_t largest = 0;
  for (const Piece& p : pieces) largest = std::max(largest, p.bytes);
  return largest;
}

// Writes `piece` of `buffer` as a frame of `payload` data bytes (cut short when it is longer:
// the length still says how long, and the receiver refuses it).
void WriteFrame(const Piece& piece, const void* buffer, size_t payload, char* frame) {
  const uint64_t length = piece.bytes;
  std::memcpy(frame, &length, kLength);
  if (piece.bytes == 0) return;
  const char* at = static_cast<const char*>(buffer) + piece.at;
  if (piece.bytes <= payload) {
    Pack(*piece.type, at, static_cast<size_t>(piece.count), frame + kLength);
    return;
  }
  std::vector<char> packed(piece.bytes);
  Pack(*piece.type, at, static_cast<size_t>(piece.count), packed.data());
  std::memcpy(frame + kLength, packed.data(), payload);
}

void WriteRefusal(char* frame) { std::memcpy(frame, &kRefused, kLength); }

int ReadFrame(const Piece& piece, const char* frame, void* buffer, int member, MPI_Comm comm,
              const char* function) {
  uint64_t length = 0;
  std::memcpy(&length, frame, kLength);
  if (length == kRefused) {
    return Raise(comm, MPI_ERR_ARG,
                 std::string(function) + " on an intercommunicator: remote member " +
                     std::to_string(member) + " refused its own arguments (its error says why)");
  }
  if (length != piece.bytes) {
    return Raise(comm, MPI_ERR_TRUNCATE,
                 std::string(function) + " on an intercommunicator: remote member " +
                     std::to_string(member) + " sent " + std::to_string(length) +
                     " bytes, the receive count and type here say " + std::to_string(piece.bytes));
  }
  if (piece.bytes > 0) {
    Unpack(*piece.type, frame + kLength, static_cast<size_t>(piece.count),
           static_cast<char*>(buffer) + piece.at);
  }
  return MPI_SUCCESS;
}

int ReadFrames(const std::vector<Piece>& pieces, const std::vector<char>& frames, size_t frame,
               void* buffer, MPI_Comm comm, const char* function) {
  for (size_t j = 0; j < pieces.size(); ++j) {
    const int rc = ReadFrame(pieces[j], frames.data() + frame * j, buffer, static_cast<int>(j),
                             comm, function);
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

// The frame's data size over both groups: the remote group's maximum of `mine`.
int AgreePayload(Comm& c, size_t mine, MPI_Comm comm, const char* function, size_t* payload) {
  const uint64_t in = mine;
  uint64_t out = 0;
  const int rc = rft_allreduce(&in, &out, 1, RFT_UINT64, RFT_MAX, c.rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
  *payload = static_cast<size_t>(out);
  return MPI_SUCCESS;
}

// The root's largest piece, at every member that sends to it or receives from it.
int RootPayload(Comm& c, int rft_root, size_t largest, MPI_Comm comm, const char* function,
                size_t* payload) {
  uint64_t value = largest;
  const int rc = rft_root == RFT_PROC_NULL
                     ? rft_bcast(nullptr, 0, RFT_BYTE, rft_root, c.rft)
                     : rft_bcast(&value, sizeof value, RFT_BYTE, rft_root, c.rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
  *payload = static_cast<size_t>(value);
  return MPI_SUCCESS;
}

}  // namespace

int MakePieces(const Comm& c, const Datatype& t, const int counts[], const int displs[],
               MPI_Comm comm, const char* function, std::vector<Piece>* out) {
  out->assign(static_cast<size_t>(c.remote_size), Piece{});
  for (int j = 0; j < c.remote_size; ++j) {
    if (counts[j] < 0) {
      return Raise(comm, MPI_ERR_COUNT,
                   std::string(function) + ": remote member " + std::to_string(j) + "'s count " +
                       std::to_string(counts[j]) + ": expected >= 0");
    }
    const MPI_Aint at = displs != nullptr ? static_cast<MPI_Aint>(displs[j]) * t.extent
                                          : static_cast<MPI_Aint>(j) * counts[j] * t.extent;
    (*out)[static_cast<size_t>(j)] = Piece{&t, counts[j], at, Bytes(t, counts[j])};
  }
  return MPI_SUCCESS;
}

int InterGatherv(Comm& c, const void* send, const Piece& mine, void* recv,
                 const std::vector<Piece>& theirs, int rft_root, bool all, MPI_Comm comm,
                 const char* function) {
  const auto [sends, receives] = GatherRolesOf(rft_root, all);
  const bool refused = sends && send == MPI_IN_PLACE;
  size_t payload = 0;
  const int agreed =
      all ? AgreePayload(c, std::max(mine.bytes, Largest(theirs)), comm, function, &payload)
          : RootPayload(c, rft_root, receives ? Largest(theirs) : 0, comm, function, &payload);
  if (agreed != MPI_SUCCESS) return agreed;
  const size_t frame = kLength + payload;
  std::vector<char> own(sends ? frame : 0);
  if (refused) {
    WriteRefusal(own.data());
  } else if (sends) {
    WriteFrame(mine, send, payload, own.data());
  }
  std::vector<char> frames(receives ? frame * static_cast<size_t>(c.remote_size) : 0);
  const size_t block = sends || receives ? frame : 0;
  const int rc = all ? rft_allgather(own.data(), block, RFT_BYTE, frames.data(), c.rft)
                     : rft_gather(own.data(), block, RFT_BYTE, frames.data(), rft_root, c.rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
  if (refused) return RefuseInPlace(comm, function);
  return receives ? ReadFrames(theirs, frames, frame, recv, comm, function) : MPI_SUCCESS;
}

int InterScatterv(Comm& c, const void* send, const std::vector<Piece>& theirs, void* recv,
                  const Piece& mine, int rft_root, MPI_Comm comm, const char* function) {
  const bool sends = rft_root == RFT_ROOT;
  const bool receives = rft_root >= 0;
  const bool refused = receives && recv == MPI_IN_PLACE;
  size_t payload = 0;
  if (int rc = RootPayload(c, rft_root, sends ? Largest(theirs) : 0, comm, function, &payload);
      rc != MPI_SUCCESS) {
    return rc;
  }
  const size_t frame = kLength + payload;
  std::vector<char> frames(sends ? frame * theirs.size() : 0);
  for (size_t j = 0; sends && j < theirs.size(); ++j) {
    WriteFrame(theirs[j], send, payload, frames.data() + frame * j);
  }
  std::vector<char> own(receives ? frame : 0);
  const int rc = rft_scatter(frames.data(), own.data(), sends || receives ? frame : 0, RFT_BYTE,
                             rft_root, c.rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
  if (refused) return RefuseInPlace(comm, function);
  return receives ? ReadFrame(mine, own.data(), recv, 0, comm, function) : MPI_SUCCESS;
}

int InterAlltoallw(Comm& c, const void* send, const std::vector<Piece>& to, void* recv,
                   const std::vector<Piece>& from, MPI_Comm comm, const char* function) {
  const bool refused = send == MPI_IN_PLACE;  // `to` is empty then
  size_t payload = 0;
  if (int rc = AgreePayload(c, std::max(Largest(to), Largest(from)), comm, function, &payload);
      rc != MPI_SUCCESS) {
    return rc;
  }
  const size_t frame = kLength + payload;
  std::vector<char> out(frame * from.size()), in(frame * from.size());
  for (size_t j = 0; j < from.size(); ++j) {
    if (refused) {
      WriteRefusal(out.data() + frame * j);
    } else {
      WriteFrame(to[j], send, payload, out.data() + frame * j);
    }
  }
  const int rc = rft_alltoall(out.data(), frame, RFT_BYTE, in.data(), c.rft);
  if (rc != RFT_SUCCESS) return RaiseRft(comm, function, rc);
  if (refused) return RefuseInPlace(comm, function);
  return ReadFrames(from, in, frame, recv, comm, function);
}

int InterFoldedReduce(Comm& c, const void* send, void* recv, int count, MPI_Datatype type,
                      const Datatype& t, MPI_Op op, int rft_root, bool all, MPI_Comm comm,
                      const char* function) {
  const auto [sends, receives] = GatherRolesOf(rft_root, all);
  const size_t bytes = Bytes(t, count);
  std::vector<char> scratch;
  const void* mine = sends ? Packed(t, send, count, &scratch) : nullptr;
  std::vector<char> blocks(receives ? bytes * static_cast<size_t>(c.remote_size) : 0);
  const size_t block = sends || receives ? bytes : 0;
  const int rc = all ? rft_allgather(mine, block, RFT_BYTE, blocks.data(), c.rft)
                     : rft_gather(mine, block, RFT_BYTE, blocks.data(), rft_root, c.rft);
  if (rc != RFT_SUCCESS) return Done(comm, function, rc);
  if (!receives || count == 0 || c.remote_size == 0) return MPI_SUCCESS;
  const int folded = Fold(op, type, t, count, blocks.data(), bytes, 0, c.remote_size - 1, recv);
  return folded == MPI_SUCCESS ? MPI_SUCCESS
                               : Raise(comm, folded, std::string(function) + ": op failed");
}

}  // namespace rft::mpi::coll
