#include "tools/rftrun/node_link.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <span>
#include <thread>

#include "base/byte_order.h"
#include "base/clock.h"
#include "tools/rftrun/options.h"

namespace rft::rftrun {
namespace {

constexpr size_t kHeaderBytes = 5;  // length (of kind + body), kind
// A frame longer than this is garbage, not a fence's data (a million processes' addresses
// would fit).
constexpr uint32_t kMaxFrameBytes = 1u << 30;

// The fixed-width fields of a frame, in the byte codec of every rft encoding (base/byte_order.h).
template <class T>
void Append(std::string* out, T value) {
  const size_t at = out->size();
  out->resize(at + sizeof(T));
  StoreLittleEndian(std::as_writable_bytes(std::span<char>(*out)), at, value);
}

template <class T>
T Load(const char* in) {
  return LoadLittleEndian<T>(std::as_bytes(std::span<const char>(in, sizeof(T))), 0);
}

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

void SetNoDelay(int fd) {
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

StatusOr<sockaddr_in> Resolve(const std::string& endpoint) {
  auto parsed = ParseEndpoint(endpoint);
  if (!parsed.ok()) return parsed.status();
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int rc = getaddrinfo(parsed->first.c_str(), nullptr, &hints, &found);
  if (rc != 0 || found == nullptr) {
    return ArgError("\"" + endpoint + "\": cannot resolve \"" + parsed->first +
                    "\" to an IPv4 address (" + gai_strerror(rc) + ")");
  }
  sockaddr_in address;
  std::memcpy(&address, found->ai_addr, sizeof(address));
  freeaddrinfo(found);
  address.sin_port = htons(parsed->second);
  return address;
}

// Sends everything queued on `connection`, waiting for the socket up to `deadline`.
Status FlushUntil(LinkConnection* connection, const Deadline& deadline) {
  while (connection->wants_write()) {
    pollfd fd{connection->fd(), POLLOUT, 0};
    if (poll(&fd, 1, deadline.remaining_ms_for_poll()) == 0) {
      return OtherError("the other launcher read nothing within the bound");
    }
    if (!connection->Flush()) return OtherError("the link to the other launcher broke");
  }
  return Status::Ok();
}

}  // namespace

FrameWriter::FrameWriter(LinkKind kind) {
  frame_.resize(kHeaderBytes);
  frame_[4] = static_cast<char>(kind);
}

FrameWriter& FrameWriter::U32(uint32_t value) {
  Append(&frame_, value);
  return *this;
}

FrameWriter& FrameWriter::I32(int32_t value) { return U32(static_cast<uint32_t>(value)); }

FrameWriter& FrameWriter::U64(uint64_t value) {
  Append(&frame_, value);
  return *this;
}

FrameWriter& FrameWriter::Bytes(std::string_view bytes) {
  U32(static_cast<uint32_t>(bytes.size()));
  frame_.append(bytes);
  return *this;
}

const std::string& FrameWriter::frame() {
  StoreLittleEndian(std::as_writable_bytes(std::span<char>(frame_)), 0,
                    static_cast<uint32_t>(frame_.size() - 4));
  return frame_;
}

std::string Reframe(const Frame& frame) {
  std::string encoded;
  Append(&encoded, static_cast<uint32_t>(frame.body.size() + 1));
  encoded += static_cast<char>(frame.kind);
  return encoded + frame.body;
}

bool FrameReader::Take(size_t n, const char** out) {
  if (!ok_ || body_.size() - at_ < n) {
    ok_ = false;
    return false;
  }
  *out = body_.data() + at_;
  at_ += n;
  return true;
}

uint32_t FrameReader::U32() {
  const char* p;
  return Take(sizeof(uint32_t), &p) ? Load<uint32_t>(p) : 0;
}

int32_t FrameReader::I32() { return static_cast<int32_t>(U32()); }

uint64_t FrameReader::U64() {
  const char* p;
  return Take(sizeof(uint64_t), &p) ? Load<uint64_t>(p) : 0;
}

std::string FrameReader::Bytes() {
  const uint32_t n = U32();
  const char* p;
  if (!Take(n, &p)) return {};
  return std::string(p, n);
}

LinkConnection::LinkConnection(int fd) : fd_(fd) {}

LinkConnection::~LinkConnection() { Close(); }

void LinkConnection::Close() {
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
}

bool LinkConnection::Send(const std::string& frame) {
  if (fd_ < 0) return false;
  out_ += frame;
  return Flush();
}

bool LinkConnection::Flush() {
  while (fd_ >= 0 && !out_.empty()) {
    const ssize_t n = send(fd_, out_.data(), out_.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      return false;
    }
    out_.erase(0, static_cast<size_t>(n));
  }
  return fd_ >= 0;
}

bool LinkConnection::Receive(std::vector<Frame>* frames) {
  if (fd_ < 0) return false;
  bool open = true;
  char buffer[65536];
  for (;;) {
    const ssize_t n = recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n > 0) {
      in_.append(buffer, static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    open = false;  // 0: closed by the other side; < 0: broken
    break;
  }
  while (in_.size() >= kHeaderBytes) {
    const uint32_t length = Load<uint32_t>(in_.data());
    if (length < 1 || length > kMaxFrameBytes) return false;
    if (in_.size() < 4 + static_cast<size_t>(length)) break;
    Frame frame;
    frame.kind = static_cast<LinkKind>(in_[4]);
    frame.body = in_.substr(kHeaderBytes, length - 1);
    in_.erase(0, 4 + static_cast<size_t>(length));
    frames->push_back(std::move(frame));
  }
  return open;
}

StatusOr<Frame> LinkConnection::ReceiveOne(const Deadline& deadline) {
  std::vector<Frame> frames;
  for (;;) {
    const bool open = Receive(&frames);
    if (!frames.empty()) {
      if (frames.size() > 1) return OtherError("the other launcher sent more than expected");
      return std::move(frames.front());
    }
    if (!open) return OtherError("the other launcher closed the link");
    pollfd fd{fd_, POLLIN, 0};
    if (poll(&fd, 1, deadline.remaining_ms_for_poll()) == 0) {
      return OtherError("the other launcher sent nothing in time");
    }
  }
}

uint32_t JobLayout::NodeOf(uint32_t rank) const {
  for (uint32_t i = 0; i < nodes.size(); ++i) {
    if (rank >= nodes[i].first && rank - nodes[i].first < nodes[i].count) return i;
  }
  return static_cast<uint32_t>(nodes.size());
}

StatusOr<std::vector<std::unique_ptr<LinkConnection>>> AssembleAsHub(
    const std::string& endpoint, uint32_t nodes, uint32_t local_count, const std::string& name,
    const std::string& nspace, uint32_t job_token, std::chrono::milliseconds bound,
    JobLayout* layout) {
  auto address = Resolve(endpoint);
  if (!address.ok()) return address.status();
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return OtherError(Errno("socket"));
  const int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (bind(listener, reinterpret_cast<const sockaddr*>(&*address), sizeof(*address)) != 0 ||
      listen(listener, static_cast<int>(nodes)) != 0) {
    const Status error = OtherError(Errno("listening on " + endpoint));
    close(listener);
    return error;
  }
  sockaddr_in bound_address{};
  socklen_t length = sizeof(bound_address);
  getsockname(listener, reinterpret_cast<sockaddr*>(&bound_address), &length);
  char text[INET_ADDRSTRLEN] = "?";
  inet_ntop(AF_INET, &bound_address.sin_addr, text, sizeof(text));
  // Said always: with port 0 it is the only way the others learn where to join.
  const std::string line = "rftrun: node 0 of " + std::to_string(nodes) +
                           " waits for the others at " + text + ":" +
                           std::to_string(ntohs(bound_address.sin_port)) + "\n";
  (void)!write(2, line.data(), line.size());
  const Deadline deadline = Deadline::After(bound);
  layout->nspace = nspace;
  layout->job_token = job_token;
  layout->node = 0;
  layout->nodes = {NodeRanks{name, 0, local_count}};
  std::vector<std::unique_ptr<LinkConnection>> joiners;
  Status status = Status::Ok();
  while (status.ok() && joiners.size() + 1 < nodes) {
    pollfd fd{listener, POLLIN, 0};
    if (poll(&fd, 1, deadline.remaining_ms_for_poll()) == 0) {
      status = OtherError(std::to_string(joiners.size() + 1) + " of " + std::to_string(nodes) +
                          " nodes after " + std::to_string(bound.count() / 1000) +
                          " s: the others never joined at " + endpoint);
      break;
    }
    const int fd_joiner = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd_joiner < 0) continue;
    SetNoDelay(fd_joiner);
    auto connection = std::make_unique<LinkConnection>(fd_joiner);
    auto frame = connection->ReceiveOne(deadline);
    if (!frame.ok() || frame->kind != LinkKind::kJoin) continue;  // not a launcher: ignored
    FrameReader join(*frame);
    const uint32_t version = join.U32();
    const uint32_t count = join.U32();
    const std::string joiner_name = join.Bytes();
    if (!join.ok() || version != kLinkVersion) {
      status = OtherError("a launcher joined with link version " + std::to_string(version) +
                          ", expected " + std::to_string(kLinkVersion) +
                          ": run the same rftrun on every node");
      break;
    }
    for (const NodeRanks& span : layout->nodes) {
      if (span.name == joiner_name) {
        status = ArgError("two nodes are both named \"" + joiner_name +
                          "\": give each its own --node-name");
      }
    }
    const NodeRanks& last = layout->nodes.back();
    layout->nodes.push_back(NodeRanks{joiner_name, last.first + last.count, count});
    joiners.push_back(std::move(connection));
    // Whoever starts the nodes by hand sees them arrive (and which ranks each got).
    const NodeRanks& joined = layout->nodes.back();
    const std::string arrived = "rftrun: node " + std::to_string(joiners.size()) + " (" +
                                joined.name + ") joined: " + std::to_string(joined.count) +
                                " process(es), ranks " + std::to_string(joined.first) + ".." +
                                std::to_string(joined.first + joined.count - 1) + "\n";
    (void)!write(2, arrived.data(), arrived.size());
  }
  close(listener);
  if (status.ok() && layout->size() > 65536) {
    status = ArgError("a job of " + std::to_string(layout->size()) +
                      " processes: expected at most 65536");
  }
  if (!status.ok()) return status;
  for (uint32_t i = 1; i < nodes; ++i) {
    FrameWriter job(LinkKind::kJob);
    job.Bytes(layout->nspace).U32(layout->job_token).U32(i).U32(nodes);
    for (const NodeRanks& span : layout->nodes)
      job.Bytes(span.name).U32(span.first).U32(span.count);
    LinkConnection* connection = joiners[i - 1].get();
    if (!connection->Send(job.frame()))
      return OtherError("the link to node " + std::to_string(i) + " broke");
    RFT_RETURN_IF_ERROR(FlushUntil(connection, deadline));
  }
  return joiners;
}

StatusOr<std::unique_ptr<LinkConnection>> AssembleAsJoiner(const std::string& endpoint,
                                                           uint32_t local_count,
                                                           const std::string& name,
                                                           std::chrono::milliseconds bound,
                                                           JobLayout* layout) {
  auto address = Resolve(endpoint);
  if (!address.ok()) return address.status();
  const Deadline deadline = Deadline::After(bound);
  std::unique_ptr<LinkConnection> hub;
  std::string last_error;
  while (hub == nullptr) {
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return OtherError(Errno("socket"));
    if (connect(fd, reinterpret_cast<const sockaddr*>(&*address), sizeof(*address)) == 0) {
      SetNoDelay(fd);
      hub = std::make_unique<LinkConnection>(fd);
      break;
    }
    last_error = std::strerror(errno);
    close(fd);
    // The hub may not listen yet (its node still booting): ask again until the bound.
    if (deadline.expired()) {
      return OtherError("no launcher listening at " + endpoint + " within " +
                        std::to_string(bound.count() / 1000) + " s (last: " + last_error + ")");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  FrameWriter join(LinkKind::kJoin);
  join.U32(kLinkVersion).U32(local_count).Bytes(name);
  if (!hub->Send(join.frame())) return OtherError("the link to " + endpoint + " broke");
  RFT_RETURN_IF_ERROR(FlushUntil(hub.get(), deadline));
  auto frame = hub->ReceiveOne(deadline);
  if (!frame.ok()) {
    return OtherError("no job layout from " + endpoint + ": " + frame.status().message());
  }
  FrameReader job(*frame);
  layout->nspace = job.Bytes();
  layout->job_token = job.U32();
  layout->node = job.U32();
  const uint32_t nodes = job.U32();
  layout->nodes.clear();
  for (uint32_t i = 0; i < nodes && job.more(); ++i) {
    NodeRanks span;
    span.name = job.Bytes();
    span.first = job.U32();
    span.count = job.U32();
    layout->nodes.push_back(std::move(span));
  }
  if (frame->kind != LinkKind::kJob || !job.ok() || layout->nodes.size() != nodes ||
      layout->node >= nodes || layout->nodes[layout->node].count != local_count) {
    return OtherError("the launcher at " + endpoint + " sent a job layout that does not decode");
  }
  return hub;
}

}  // namespace rft::rftrun
