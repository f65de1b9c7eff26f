#include "transport/datagram/local_datagram.h"

#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>

namespace rft::transport {
namespace {

// An abstract address: a leading NUL, then the name (no terminator; the length says where it
// ends).
bool AbstractAddress(const std::string& name, sockaddr_un* address, socklen_t* length) {
  if (name.empty() || name.size() + 1 > sizeof(address->sun_path)) return false;
  std::memset(address, 0, sizeof(*address));
  address->sun_family = AF_UNIX;
  std::memcpy(address->sun_path + 1, name.data(), name.size());
  *length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return true;
}

std::string Errno(const std::string& call) { return call + ": " + std::strerror(errno); }

}  // namespace

StatusOr<std::unique_ptr<LocalDatagramChannel>> LocalDatagramChannel::Open(uint32_t job_tag,
                                                                           uint32_t job_token,
                                                                           Rank self,
                                                                           uint32_t size) {
  if (self >= size) {
    return ArgError("local datagram channel for rank " + std::to_string(self) + " of a job of " +
                    std::to_string(size) + " ranks");
  }
  char name[64];
  std::snprintf(name, sizeof(name), "rft.%08x%08x.%u", job_tag, job_token, self);
  sockaddr_un address;
  socklen_t length = 0;
  AbstractAddress(name, &address, &length);
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return OtherError(Errno("socket(AF_UNIX, SOCK_DGRAM)"));
  // Abstract names have no file permissions: anyone on the node may send here. The kernel
  // attaches each sender's credentials, and only this user's datagrams are taken (Receive).
  const int on = 1;
  if (setsockopt(fd, SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0) {
    const Status error = OtherError(Errno("setsockopt(SO_PASSCRED)"));
    close(fd);
    return error;
  }
  if (bind(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    const Status error = OtherError(Errno(std::string("bind to \\0") + name));
    close(fd);
    return error;
  }
  return std::unique_ptr<LocalDatagramChannel>(new LocalDatagramChannel(name, fd, size));
}

LocalDatagramChannel::~LocalDatagramChannel() {
  for (Peer& peer : peers_) {
    if (peer.fd >= 0) close(peer.fd);
  }
  if (fd_ >= 0) close(fd_);
}

bool LocalDatagramChannel::Connect(Rank peer, const std::string& name) {
  // Only a name of this job's form: a record is data from another process.
  const std::string prefix = name_.substr(0, name_.rfind('.') + 1);
  if (peer >= peers_.size() || peers_[peer].fd >= 0 || name.rfind(prefix, 0) != 0 ||
      name != prefix + std::to_string(peer)) {
    return false;
  }
  sockaddr_un address;
  socklen_t length = 0;
  if (!AbstractAddress(name, &address, &length)) return false;
  const int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  // Fails when nobody is bound to the name here (another network namespace, or the peer ended).
  if (connect(fd, reinterpret_cast<const sockaddr*>(&address), length) != 0) {
    close(fd);
    return false;
  }
  peers_[peer].fd = fd;
  return true;
}

StatusOr<LocalDatagramChannel::Outcome> LocalDatagramChannel::SendNow(
    Rank peer, std::span<const std::span<const std::byte>> parts) {
  iovec iov[2];
  size_t count = 0;
  for (const auto& part : parts) {
    if (part.empty() || count == 2) continue;
    iov[count].iov_base = const_cast<std::byte*>(part.data());
    iov[count].iov_len = part.size();
    ++count;
  }
  msghdr message{};
  message.msg_iov = iov;
  message.msg_iovlen = count;
  for (;;) {
    if (sendmsg(peers_[peer].fd, &message, MSG_DONTWAIT | MSG_NOSIGNAL) >= 0) {
      return Outcome::kSent;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS) return Outcome::kQueued;
    if (errno == ECONNREFUSED || errno == ENOTCONN || errno == ECONNRESET || errno == EPIPE) {
      return Outcome::kGone;
    }
    return OtherError(Errno("sendmsg to rank " + std::to_string(peer)));
  }
}

void LocalDatagramChannel::Keep(Rank peer, std::span<const std::byte> header,
                                std::span<const std::byte> payload) {
  Peer& p = peers_[peer];
  if (p.queued.empty()) ++queued_peers_;
  std::vector<std::byte>& kept = p.queued.emplace_back();
  kept.reserve(header.size() + payload.size());
  kept.insert(kept.end(), header.begin(), header.end());
  kept.insert(kept.end(), payload.begin(), payload.end());
}

StatusOr<LocalDatagramChannel::Outcome> LocalDatagramChannel::Send(
    Rank peer, std::span<const std::byte> header, std::span<const std::byte> payload) {
  if (!Reaches(peer)) {
    return ArgError("local datagram to rank " + std::to_string(peer) + ": not connected");
  }
  if (header.size() + payload.size() > kMaxMessage) {
    return ArgError("local datagram to rank " + std::to_string(peer) + ": " +
                    std::to_string(header.size() + payload.size()) + " bytes, at most " +
                    std::to_string(kMaxMessage));
  }
  Peer& p = peers_[peer];
  if (!p.queued.empty()) {  // behind what waits already: order is kept
    if (p.queued.size() >= kMaxQueued) {
      ++dropped_;
      return OtherError("local datagram to rank " + std::to_string(peer) + ": " +
                        std::to_string(p.queued.size()) + " messages wait for it already; dropped");
    }
    Keep(peer, header, payload);
    return Outcome::kQueued;
  }
  const std::span<const std::byte> parts[2] = {header, payload};
  auto outcome = SendNow(peer, parts);
  if (outcome.ok() && *outcome == Outcome::kQueued) Keep(peer, header, payload);
  return outcome;
}

void LocalDatagramChannel::Flush(const std::function<void(Rank)>& gone) {
  if (queued_peers_ == 0) return;
  for (Rank peer = 0; peer < peers_.size(); ++peer) {
    Peer& p = peers_[peer];
    while (!p.queued.empty()) {
      const std::span<const std::byte> parts[1] = {p.queued.front()};
      auto outcome = SendNow(peer, parts);
      if (outcome.ok() && *outcome == Outcome::kQueued) break;  // still full
      if (outcome.ok() && *outcome == Outcome::kGone) {
        Forget(peer);
        gone(peer);
        break;
      }
      if (!outcome.ok()) ++dropped_;  // refused by the system: counted, never retried for ever
      p.queued.pop_front();
      if (p.queued.empty()) --queued_peers_;
    }
  }
}

void LocalDatagramChannel::Forget(Rank peer) {
  if (peer >= peers_.size()) return;
  Peer& p = peers_[peer];
  if (!p.queued.empty()) {
    dropped_ += p.queued.size();
    p.queued.clear();
    --queued_peers_;
  }
  if (p.fd >= 0) close(p.fd);
  p.fd = -1;
}

void LocalDatagramChannel::AddPollFds(std::vector<pollfd>* fds) const {
  fds->push_back({fd_, POLLIN, 0});
  if (queued_peers_ == 0) return;
  for (const Peer& p : peers_) {
    if (!p.queued.empty()) fds->push_back({p.fd, POLLOUT, 0});
  }
}

size_t LocalDatagramChannel::Receive(const std::function<void(std::span<const std::byte>)>& deliver,
                                     size_t max) {
  size_t received = 0;
  while (received < max) {
    iovec iov{buffer_.data(), buffer_.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(ucred))];
    msghdr message{};
    message.msg_iov = &iov;
    message.msg_iovlen = 1;
    message.msg_control = control;
    message.msg_controllen = sizeof(control);
    const ssize_t length = recvmsg(fd_, &message, MSG_DONTWAIT | MSG_TRUNC);
    if (length < 0) {
      if (errno == EINTR) continue;
      break;  // EAGAIN: nothing more waits
    }
    ++received;
    const cmsghdr* header = CMSG_FIRSTHDR(&message);
    ucred sender{};
    const bool credentials = header != nullptr && header->cmsg_level == SOL_SOCKET &&
                             header->cmsg_type == SCM_CREDENTIALS &&
                             header->cmsg_len >= CMSG_LEN(sizeof(ucred));
    if (credentials) std::memcpy(&sender, CMSG_DATA(header), sizeof(sender));
    if (!credentials || sender.uid != accepted_uid_ ||
        static_cast<size_t>(length) > buffer_.size()) {
      ++dropped_;  // another user's, or longer than any sender of this job sends: not ours
      continue;
    }
    deliver(std::span<const std::byte>(buffer_.data(), static_cast<size_t>(length)));
  }
  return received;
}

}  // namespace rft::transport
