// The link between the launchers of a job that spans nodes: one rftrun per node, each the PMIx
// server of its own processes. Node 0 (`--listen`) is the hub: every other node (`--join`) keeps
// one TCP connection to it, and the hub relays what one node says to the others. Over the link
// go what PMIx leaves to its host: the job's layout at start, the fences' data (an allgather of
// each node's opaque contribution), the data of one process asked for by another node (direct
// modex), terminations, kills, and the job's end.
//
// Frames are a 4-byte little-endian length, a 1-byte kind, and fields in little-endian order.
// A length beyond any real frame ends the connection (LinkConnection::Receive); a frame whose
// fields do not decode is dropped (the other side is a launcher of the same build, checked at
// join by the link version, so such a frame is a bug).
#ifndef RFT_TOOLS_RFTRUN_NODE_LINK_H_
#define RFT_TOOLS_RFTRUN_NODE_LINK_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "tools/rftrun/pmix_host.h"

namespace rft::rftrun {

enum class LinkKind : uint8_t {
  kJoin = 1,      // joiner -> hub: version, local process count, node name
  kJob,           // hub -> joiner: namespace, job token, node index, the layout
  kFence,         // node -> hub: fence signature, the node's contribution
  kFenceDone,     // hub -> node: fence signature, every involved node's contribution
  kModexRequest,  // requester -> hub -> owner: requester node, request id, rank
  kModexReply,    // owner -> hub -> requester: requester node, request id, status, data
  kTermination,   // node -> hub -> others: rank, PMIx status, exit code
  kKill,          // node -> hub -> owner: ranks to kill (a PMIx_Abort naming them)
  kEnd,           // node -> hub -> others: the job ends (origin node, exit status, why)
  kDone,          // node -> hub: the node's processes have all ended (exit status, summary)
  kFinish,        // hub -> node: every node is done (the job's exit status)
};

// The link protocol's version, sent in kJoin: launchers of different builds do not mix.
inline constexpr uint32_t kLinkVersion = 2;  // 2: kEnd names its origin node

// Builds a frame's body.
class FrameWriter {
 public:
  explicit FrameWriter(LinkKind kind);
  FrameWriter& U32(uint32_t value);
  FrameWriter& I32(int32_t value);
  FrameWriter& U64(uint64_t value);
  FrameWriter& Bytes(std::string_view bytes);  // length-prefixed
  // The whole frame, length prefix included.
  const std::string& frame();

 private:
  std::string frame_;
};

// One received frame.
struct Frame {
  LinkKind kind = LinkKind::kJoin;
  std::string body;
};

// A received frame encoded again, for node 0 to relay it.
std::string Reframe(const Frame& frame);

// Reads a frame's fields; any read past the end (or a length beyond it) sets !ok() and yields
// zeros, so a handler checks ok() once after reading everything.
class FrameReader {
 public:
  explicit FrameReader(const Frame& frame) : body_(frame.body) {}
  uint32_t U32();
  int32_t I32();
  uint64_t U64();
  std::string Bytes();
  bool ok() const { return ok_ && at_ == body_.size(); }  // all read, nothing left over
  bool more() const { return ok_ && at_ < body_.size(); }

 private:
  bool Take(size_t n, const char** out);
  std::string_view body_;
  size_t at_ = 0;
  bool ok_ = true;
};

// One TCP connection of the link, non-blocking both ways: what cannot be written at once waits
// in a buffer until poll says the socket is writable.
class LinkConnection {
 public:
  explicit LinkConnection(int fd);
  ~LinkConnection();
  LinkConnection(const LinkConnection&) = delete;
  LinkConnection& operator=(const LinkConnection&) = delete;

  int fd() const { return fd_; }
  bool open() const { return fd_ >= 0; }
  bool wants_write() const { return !out_.empty(); }
  // Queues `frame` and writes what the socket takes now. False: the connection broke.
  bool Send(const std::string& frame);
  bool Flush();
  // Reads what arrived; appends each whole frame to `frames`. False: closed or broken (frames
  // read before that are still appended).
  bool Receive(std::vector<Frame>* frames);
  // Waits until `deadline` for one whole frame (used while the job is assembled, before the
  // launcher's loop runs).
  StatusOr<Frame> ReceiveOne(const Deadline& deadline);
  void Close();

 private:
  int fd_;
  std::string in_;
  std::string out_;
};

// The job as the link assembled it.
struct JobLayout {
  std::string nspace;
  uint32_t job_token = 0;
  uint32_t node = 0;             // this launcher's index
  std::vector<NodeRanks> nodes;  // node i runs ranks [first, first + count)
  uint32_t size() const { return nodes.empty() ? 0 : nodes.back().first + nodes.back().count; }
  uint32_t NodeOf(uint32_t rank) const;  // nodes.size() when no node has it
};

// The hub's side of start-up: listens on `endpoint` and waits up to `bound` for `nodes - 1`
// joiners; gives them the layout (nodes in the order they joined, after the hub's own) and
// returns one connection per joiner (index i - 1 for node i).
StatusOr<std::vector<std::unique_ptr<LinkConnection>>> AssembleAsHub(
    const std::string& endpoint, uint32_t nodes, uint32_t local_count, const std::string& name,
    const std::string& nspace, uint32_t job_token, std::chrono::milliseconds bound,
    JobLayout* layout);

// A joiner's side: connects to the hub at `endpoint` (retrying until `bound`, as the hub may
// start later), sends its count and name, and receives the layout.
StatusOr<std::unique_ptr<LinkConnection>> AssembleAsJoiner(const std::string& endpoint,
                                                           uint32_t local_count,
                                                           const std::string& name,
                                                           std::chrono::milliseconds bound,
                                                           JobLayout* layout);

}  // namespace rft::rftrun

#endif  // RFT_TOOLS_RFTRUN_NODE_LINK_H_
