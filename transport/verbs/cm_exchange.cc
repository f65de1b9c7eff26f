#include "transport/verbs/cm_exchange.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <vector>

#include "base/log.h"

namespace rft::verbs {
namespace {

// The private data a connection request may carry over InfiniBand and RoCE (its reply may carry
// more): one QP address fits.
constexpr size_t kRequestPrivateData = 56;
static_assert(kSingleQpAddressSize <= kRequestPrivateData);

// How long a listener that is not up yet is waited for between attempts.
constexpr int kRetryMs = 100;
constexpr int kResolveMs = 2000;
// The reason of a rejection made by the program (rdma_reject), as the IB connection manager
// reports it (IB_CM_REJ_CONSUMER_DEFINED); a missing listener is reason 8 (invalid service).
constexpr int kConsumerReject = 28;

struct ChannelDeleter {
  void operator()(rdma_event_channel* channel) const { rdma_destroy_event_channel(channel); }
};
struct IdDeleter {
  void operator()(rdma_cm_id* id) const { rdma_destroy_id(id); }
};
using EventChannel = std::unique_ptr<rdma_event_channel, ChannelDeleter>;
using CmId = std::unique_ptr<rdma_cm_id, IdDeleter>;

// A host that does not answer address resolution yet (it may still be starting): tried again.
bool NotThereYet(int status) {
  return status == -ETIMEDOUT || status == -EHOSTUNREACH || status == -ENETUNREACH;
}

std::string Where(const CmPeer& peer) {
  return (peer.host.empty() ? std::string("*") : peer.host) + ":" + std::to_string(peer.port);
}

Status Errno(const std::string& what) { return OtherError(what + ": " + std::strerror(errno)); }

// What an event told, copied out before it is acknowledged.
struct Event {
  rdma_cm_event_type type;
  int status = 0;
  rdma_cm_id* id = nullptr;  // a new id for a connection request
  std::vector<std::byte> private_data;
  // A rejection by the peer's program (else its connection manager rejected: nobody listens
  // there yet).
  bool by_consumer = false;
};

StatusOr<Event> NextEvent(rdma_event_channel* channel, Deadline deadline, const std::string& step) {
  for (;;) {
    rdma_cm_event* raw = nullptr;
    if (rdma_get_cm_event(channel, &raw) == 0) {
      Event event{raw->event, raw->status, raw->id, {}, false};
      if (raw->event == RDMA_CM_EVENT_CONNECT_REQUEST ||
          raw->event == RDMA_CM_EVENT_CONNECT_RESPONSE || raw->event == RDMA_CM_EVENT_REJECTED) {
        const auto* bytes = static_cast<const std::byte*>(raw->param.conn.private_data);
        if (bytes != nullptr) {
          event.private_data.assign(bytes, bytes + raw->param.conn.private_data_len);
        }
      }
      // InfiniBand's and RoCE's reason codes; librdmacm here has no rdma_is_consumer_reject.
      event.by_consumer = raw->event == RDMA_CM_EVENT_REJECTED && raw->status == kConsumerReject;
      rdma_ack_cm_event(raw);
      return event;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) return Errno(step + ": rdma_get_cm_event");
    pollfd fd = {channel->fd, POLLIN, 0};
    const int ready = poll(&fd, 1, deadline.remaining_ms_for_poll());
    if (ready < 0 && errno != EINTR) return Errno(step + ": poll");
    if (ready == 0) return TimeoutError(step + ": no answer before the deadline");
  }
}

StatusOr<EventChannel> MakeChannel() {
  EventChannel channel(rdma_create_event_channel());
  if (channel == nullptr) {
    return Errno(
        "the RDMA connection manager (/dev/infiniband/rdma_cm: no RDMA device, or the rdma_ucm "
        "module not loaded)");
  }
  const int flags = fcntl(channel->fd, F_GETFL);
  if (flags < 0 || fcntl(channel->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return Errno("the connection manager's event channel");
  }
  return channel;
}

StatusOr<CmId> MakeId(rdma_event_channel* channel) {
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(channel, &id, nullptr, RDMA_PS_TCP) != 0) return Errno("rdma_create_id");
  return CmId(id);
}

// The first IPv4 or IPv6 address of `host` (nullptr: the wildcard, for a listener).
StatusOr<std::vector<std::byte>> Resolve(const std::string& host, uint16_t port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  const int rc =
      getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) {
    return ArgError("connection manager: cannot resolve host \"" + host +
                    "\": " + gai_strerror(rc));
  }
  const auto* bytes = reinterpret_cast<const std::byte*>(found->ai_addr);
  std::vector<std::byte> address(bytes, bytes + found->ai_addrlen);
  freeaddrinfo(found);
  return address;
}

sockaddr* AsSockaddr(std::vector<std::byte>& bytes) {
  return reinterpret_cast<sockaddr*>(bytes.data());
}

Status CheckDevice(const rdma_cm_id* id, std::string_view device, const std::string& where) {
  if (id->verbs == nullptr) return OtherError(where + " is not reached through an RDMA device");
  const std::string reached = ibv_get_device_name(id->verbs->device);
  if (reached != device) {
    return ArgError(where + " is reached through device " + reached + ", not " +
                    std::string(device) + " where the QP is (RFT_NET_DEVICE names the device)");
  }
  return Status::Ok();
}

rdma_conn_param ConnParam(const std::vector<std::byte>& mine, uint32_t qpn) {
  rdma_conn_param param{};
  param.private_data = mine.data();
  param.private_data_len = static_cast<uint8_t>(mine.size());
  param.qp_num = qpn;
  param.responder_resources = 1;
  param.initiator_depth = 1;
  param.retry_count = 7;
  param.rnr_retry_count = 7;
  return param;
}

StatusOr<QpAddress> PeerAddress(const Event& event, const std::string& from) {
  if (event.private_data.size() < kSingleQpAddressSize) {
    return ArgError(from + " sent " + std::to_string(event.private_data.size()) +
                    " bytes of private data, fewer than a QP address's " +
                    std::to_string(kSingleQpAddressSize) + " (not an rft process?)");
  }
  StatusOr<QpAddress> address =
      DecodeSingleQpAddress(std::span(event.private_data).first(kSingleQpAddressSize));
  if (!address.ok()) return ArgError(from + "'s QP address: " + address.status().message());
  return address;
}

// Connects the QP to the address in `event`'s private data; on failure the request or reply is
// rejected, so the peer's connection manager hears of it instead of waiting out its deadline.
Status ConnectOrReject(rdma_cm_id* id, const Event& event, const std::string& from,
                       const std::function<Status(const QpAddress&)>& connect) {
  StatusOr<QpAddress> theirs = PeerAddress(event, from);
  Status status = theirs.ok() ? connect(*theirs) : theirs.status();
  if (!status.ok()) rdma_reject(id, nullptr, 0);
  return status;
}

Status Listen(const CmPeer& peer, std::string_view device, const std::vector<std::byte>& mine,
              uint32_t qpn, const std::function<Status(const QpAddress&)>& connect,
              Deadline deadline) {
  const std::string where = "listening on " + Where(peer);
  RFT_ASSIGN_OR_RETURN(EventChannel channel, MakeChannel());
  RFT_ASSIGN_OR_RETURN(CmId listener, MakeId(channel.get()));
  RFT_ASSIGN_OR_RETURN(std::vector<std::byte> address, Resolve(peer.host, peer.port, true));
  if (rdma_bind_addr(listener.get(), AsSockaddr(address)) != 0) {
    return Errno("connection manager: " + where);
  }
  if (rdma_listen(listener.get(), 1) != 0) return Errno("connection manager: " + where);
  RFT_LOG_INFO("connection manager: %s", where.c_str());
  RFT_ASSIGN_OR_RETURN(Event request, NextEvent(channel.get(), deadline, where));
  if (request.type != RDMA_CM_EVENT_CONNECT_REQUEST) {
    return OtherError(where + ": event " + rdma_event_str(request.type) +
                      " instead of a connection request");
  }
  CmId accepted(request.id);
  const std::string from = "the peer connecting to " + Where(peer);
  if (Status status = CheckDevice(accepted.get(), device, from); !status.ok()) {
    rdma_reject(accepted.get(), nullptr, 0);
    return status;
  }
  RFT_RETURN_IF_ERROR(ConnectOrReject(accepted.get(), request, from, connect));
  rdma_conn_param param = ConnParam(mine, qpn);
  if (rdma_accept(accepted.get(), &param) != 0) return Errno("connection manager: rdma_accept");
  // The peer confirms once its QP is connected. The QPs themselves carry on from here (the
  // eager channel's greeting), so a confirmation lost with the peer's end is no error.
  RFT_ASSIGN_OR_RETURN(Event established, NextEvent(channel.get(), deadline, where));
  if (established.type != RDMA_CM_EVENT_ESTABLISHED &&
      established.type != RDMA_CM_EVENT_DISCONNECTED) {
    return OtherError(where + ": event " + rdma_event_str(established.type) + " (status " +
                      std::to_string(established.status) + ") after accepting " + from);
  }
  return Status::Ok();
}

// One attempt to connect: true once connected; false when the listener is not there yet, so
// the caller tries again: its address or route does not resolve yet (timed out, host or network
// unreachable), or its connection manager rejected the request (nobody listening on the port) or
// found it unreachable.
StatusOr<bool> TryConnect(const CmPeer& peer, std::string_view device,
                          const std::vector<std::byte>& mine, uint32_t qpn,
                          const std::function<Status(const QpAddress&)>& connect,
                          Deadline deadline) {
  const std::string where = Where(peer);
  RFT_ASSIGN_OR_RETURN(EventChannel channel, MakeChannel());
  RFT_ASSIGN_OR_RETURN(CmId id, MakeId(channel.get()));
  RFT_ASSIGN_OR_RETURN(std::vector<std::byte> address, Resolve(peer.host, peer.port, false));
  if (rdma_resolve_addr(id.get(), nullptr, AsSockaddr(address), kResolveMs) != 0) {
    return Errno("connection manager: resolving " + where);
  }
  RFT_ASSIGN_OR_RETURN(Event resolved, NextEvent(channel.get(), deadline, "resolving " + where));
  if (resolved.type == RDMA_CM_EVENT_ADDR_ERROR && NotThereYet(resolved.status)) return false;
  if (resolved.type != RDMA_CM_EVENT_ADDR_RESOLVED) {
    return ArgError("connection manager: " + where + " is not reached through an RDMA device (" +
                    rdma_event_str(resolved.type) + ", " + std::strerror(-resolved.status) + ")");
  }
  RFT_RETURN_IF_ERROR(CheckDevice(id.get(), device, where));
  if (rdma_resolve_route(id.get(), kResolveMs) != 0) {
    return Errno("connection manager: the route to " + where);
  }
  RFT_ASSIGN_OR_RETURN(Event routed, NextEvent(channel.get(), deadline, "the route to " + where));
  if (routed.type == RDMA_CM_EVENT_ROUTE_ERROR && NotThereYet(routed.status)) return false;
  if (routed.type != RDMA_CM_EVENT_ROUTE_RESOLVED) {
    return OtherError("connection manager: no route to " + where + " (" +
                      rdma_event_str(routed.type) + ")");
  }
  rdma_conn_param param = ConnParam(mine, qpn);
  if (rdma_connect(id.get(), &param) != 0) return Errno("connection manager: connecting " + where);
  RFT_ASSIGN_OR_RETURN(Event answer, NextEvent(channel.get(), deadline, "connecting " + where));
  if (answer.type == RDMA_CM_EVENT_UNREACHABLE ||
      (answer.type == RDMA_CM_EVENT_REJECTED && !answer.by_consumer)) {
    return false;
  }
  if (answer.type == RDMA_CM_EVENT_REJECTED) {
    return OtherError("connection manager: " + where +
                      " rejected the connection: its own output says why");
  }
  if (answer.type != RDMA_CM_EVENT_CONNECT_RESPONSE) {
    return OtherError("connection manager: " + where + " answered " + rdma_event_str(answer.type) +
                      " (status " + std::to_string(answer.status) + ")");
  }
  RFT_RETURN_IF_ERROR(ConnectOrReject(id.get(), answer, where, connect));
  if (rdma_establish(id.get()) != 0) return Errno("connection manager: confirming to " + where);
  return true;
}

}  // namespace

StatusOr<CmPeer> ParseCmPeer(std::string_view text, bool listen) {
  CmPeer peer;
  peer.listen = listen;
  const size_t colon = text.rfind(':');
  std::string_view port_text = text;
  if (colon != std::string_view::npos) {
    peer.host = std::string(text.substr(0, colon));
    port_text = text.substr(colon + 1);
  }
  unsigned port = 0;
  const auto [end, error] =
      std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  const bool bad_port = error != std::errc() || end != port_text.data() + port_text.size() ||
                        port == 0 || port > 65535;
  if (bad_port || (!listen && peer.host.empty())) {
    return ArgError("\"" + std::string(text) + "\": expected " +
                    (listen ? "[HOST:]PORT" : "HOST:PORT") + " with a port from 1 to 65535");
  }
  peer.port = static_cast<uint16_t>(port);
  return peer;
}

Status ExchangeByCm(const CmPeer& peer, std::string_view device, const QpAddress& mine,
                    const std::function<Status(const QpAddress&)>& connect, Deadline deadline) {
  const std::vector<std::byte> encoded = EncodeSingleQpAddress(mine);
  if (peer.listen) return Listen(peer, device, encoded, mine.qpn, connect, deadline);
  for (;;) {
    RFT_ASSIGN_OR_RETURN(bool connected,
                         TryConnect(peer, device, encoded, mine.qpn, connect, deadline));
    if (connected) return Status::Ok();
    if (deadline.expired()) {
      return TimeoutError("connection manager: no answer from " + Where(peer) +
                          " before the deadline (nobody listening there, or the host unreachable)");
    }
    usleep(kRetryMs * 1000);
  }
}

}  // namespace rft::verbs
