#include "transport/verbs/verbs_context.h"

#include <fcntl.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace rft::verbs {
namespace {

ibv_context* OpenByName(const std::string& name) {
  int count = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr) return nullptr;
  ibv_context* context = nullptr;
  for (int i = 0; i < count && context == nullptr; ++i) {
    if (name == ibv_get_device_name(list[i])) context = ibv_open_device(list[i]);
  }
  ibv_free_device_list(list);
  return context;
}

}  // namespace

Status CallFailed(const std::string& call, int error) {
  return OtherError(call + ": " + std::strerror(error));
}

Status SetNonBlocking(int fd, const std::string& what) {
  const int flags = fcntl(fd, F_GETFL);
  if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    return CallFailed("fcntl(O_NONBLOCK) on " + what, errno);
  }
  return Status::Ok();
}

StatusOr<std::unique_ptr<VerbsContext>> VerbsContext::Open(const Endpoint& endpoint,
                                                           size_t buffer_size, int cq_entries) {
  std::unique_ptr<VerbsContext> c(new VerbsContext());
  c->endpoint_ = endpoint;
  c->context_ = OpenByName(endpoint.device);
  if (c->context_ == nullptr) return OtherError("cannot open RDMA device " + endpoint.device);
  // Asynchronous events are read by polling (ReadAsyncEvents), never waited for.
  RFT_RETURN_IF_ERROR(SetNonBlocking(c->context_->async_fd, "the async event fd"));
  if (int rc = ibv_query_port(c->context_, c->port_num(), &c->port_attr_); rc != 0) {
    return CallFailed("ibv_query_port", rc);
  }
  if (c->global() && ibv_query_gid(c->context_, c->port_num(), endpoint.gid_index, &c->gid_) != 0) {
    return CallFailed("ibv_query_gid", errno);
  }
  c->pd_ = ibv_alloc_pd(c->context_);
  if (c->pd_ == nullptr) return CallFailed("ibv_alloc_pd", errno);
  c->cq_ = ibv_create_cq(c->context_, cq_entries, nullptr, nullptr, 0);
  if (c->cq_ == nullptr) return CallFailed("ibv_create_cq", errno);
  // Page-aligned: registration pins whole pages, and nothing else should share them.
  const size_t page = 4096;
  c->size_ = buffer_size;
  c->buffer_ =
      static_cast<std::byte*>(std::aligned_alloc(page, (buffer_size + page - 1) / page * page));
  if (c->buffer_ == nullptr) return OtherError("cannot allocate the registered buffer");
  std::memset(c->buffer_, 0, buffer_size);
  c->mr_ =
      ibv_reg_mr(c->pd_, c->buffer_, buffer_size, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
  if (c->mr_ == nullptr) return CallFailed("ibv_reg_mr", errno);
  return c;
}

VerbsContext::~VerbsContext() {
  // Queue pairs (RcQp) are destroyed by their owners first: a CQ or PD in use cannot go.
  if (mr_ != nullptr) ibv_dereg_mr(mr_);
  if (cq_ != nullptr) ibv_destroy_cq(cq_);
  if (pd_ != nullptr) ibv_dealloc_pd(pd_);
  if (context_ != nullptr) ibv_close_device(context_);
  std::free(buffer_);
}

int VerbsContext::async_fd() const { return context_->async_fd; }

int VerbsContext::ReadAsyncEvents(const std::function<void(const AsyncEvent&)>& handler) {
  int count = 0;
  ibv_async_event event;
  // Non-blocking: -1 with EAGAIN once none is left.
  while (ibv_get_async_event(context_, &event) == 0) {
    AsyncEvent copy{.type = event.event_type};
    switch (event.event_type) {
      case IBV_EVENT_QP_FATAL:
      case IBV_EVENT_QP_REQ_ERR:
      case IBV_EVENT_QP_ACCESS_ERR:
      case IBV_EVENT_COMM_EST:
      case IBV_EVENT_SQ_DRAINED:
      case IBV_EVENT_PATH_MIG:
      case IBV_EVENT_PATH_MIG_ERR:
      case IBV_EVENT_QP_LAST_WQE_REACHED:
        copy.qp_num = event.element.qp->qp_num;
        break;
      case IBV_EVENT_PORT_ACTIVE:
      case IBV_EVENT_PORT_ERR:
      case IBV_EVENT_LID_CHANGE:
      case IBV_EVENT_PKEY_CHANGE:
      case IBV_EVENT_SM_CHANGE:
      case IBV_EVENT_CLIENT_REREGISTER:
      case IBV_EVENT_GID_CHANGE:
        copy.port_num = static_cast<uint8_t>(event.element.port_num);
        break;
      default:
        break;
    }
    // Acknowledged before the handler runs: destroying a QP waits for its events' acks.
    ibv_ack_async_event(&event);
    ++count;
    handler(copy);
  }
  return count;
}

StatusOr<ibv_wc> VerbsContext::WaitFor(uint64_t wr_id, std::chrono::milliseconds limit) {
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    if (it->wr_id == wr_id) {
      ibv_wc wc = *it;
      pending_.erase(it);
      return wc;
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    ibv_wc wc;
    const int n = ibv_poll_cq(cq_, 1, &wc);
    if (n < 0) return OtherError("ibv_poll_cq failed");
    if (n == 1) {
      if (wc.wr_id == wr_id) return wc;
      pending_.push_back(wc);
      continue;
    }
    // rxe does its work in kernel threads on the same (possibly emulated) CPUs: leave them room.
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  return TimeoutError("no completion for work request " + std::to_string(wr_id) + " within " +
                      std::to_string(limit.count()) + " ms");
}

}  // namespace rft::verbs
