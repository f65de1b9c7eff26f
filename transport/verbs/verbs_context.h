// What one process opens on its port to talk RC verbs: the device, a protection domain, one
// completion queue shared by all its queue pairs, and one registered buffer that peers may
// write into. RcQp (rc_qp.h) is a queue pair on it.
#ifndef RFT_TRANSPORT_VERBS_VERBS_CONTEXT_H_
#define RFT_TRANSPORT_VERBS_VERBS_CONTEXT_H_

#include <infiniband/verbs.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "transport/verbs/async_event.h"
#include "transport/verbs/device.h"

namespace rft::verbs {

// Makes `fd` (one of libibverbs' event descriptors, named `what` in the error) non-blocking:
// the async event fd and completion channels are polled, never waited on in a read.
Status SetNonBlocking(int fd, const std::string& what);
// RFT_ERR_OTHER naming the verbs (or system) `call` that failed and `error`'s text: errno, or
// what a verbs call returned in its place.
Status CallFailed(const std::string& call, int error);

class VerbsContext {
 public:
  // Opens `endpoint` (from SelectPort) with a CQ of `cq_entries` and a zeroed buffer of
  // `buffer_size` bytes registered for local and remote writes. Errors name the call that
  // failed.
  static StatusOr<std::unique_ptr<VerbsContext>> Open(const Endpoint& endpoint, size_t buffer_size,
                                                      int cq_entries = 256);
  ~VerbsContext();
  VerbsContext(const VerbsContext&) = delete;
  VerbsContext& operator=(const VerbsContext&) = delete;

  const Endpoint& endpoint() const { return endpoint_; }
  uint8_t port_num() const { return static_cast<uint8_t>(endpoint_.port); }
  const ibv_port_attr& port_attr() const { return port_attr_; }
  // On RoCE (Ethernet) every packet carries a global route header built from GIDs.
  bool global() const { return endpoint_.link_layer == kEthernet; }
  const ibv_gid& gid() const { return gid_; }  // the selected GID; zero on InfiniBand
  ibv_pd* pd() const { return pd_; }
  ibv_cq* cq() const { return cq_; }
  ibv_mr* mr() const { return mr_; }
  std::span<std::byte> buffer() { return {buffer_, size_}; }

  // The completion of work request `wr_id`. Completions of other requests that arrive first
  // are kept for their own WaitFor, since every QP of this context shares the one CQ.
  // RFT_ERR_TIMEOUT when none comes within `limit`. The status of the completion is the
  // caller's to judge: an error completion is how a dead peer shows.
  StatusOr<ibv_wc> WaitFor(uint64_t wr_id, std::chrono::milliseconds limit);

  // The device's asynchronous events (async_event.h): each one pending is acknowledged and then
  // given to `handler`; returns how many. Never blocks: the fd is non-blocking, and readable
  // (poll) when an event is pending.
  int ReadAsyncEvents(const std::function<void(const AsyncEvent&)>& handler);
  int async_fd() const;

 private:
  VerbsContext() = default;

  Endpoint endpoint_;
  ibv_context* context_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_mr* mr_ = nullptr;
  std::byte* buffer_ = nullptr;
  size_t size_ = 0;
  ibv_port_attr port_attr_ = {};
  ibv_gid gid_ = {};
  std::vector<ibv_wc> pending_;  // polled, not yet asked for
};

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_VERBS_CONTEXT_H_
