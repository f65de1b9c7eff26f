// ControlPlane's services: hosting other protocols beside the detector (revoke, agreement),
// control messages by service id, reliable broadcasts of their kinds, timers, and work posted to
// the control thread from other threads.
#include <algorithm>
#include <cstring>
#include <future>
#include <string>
#include <utility>

#include "base/check.h"
#include "base/clock.h"
#include "base/log.h"
#include "detector/control_plane.h"
#include "detector/control_subtype.h"

namespace rft::detector {
namespace {

using internal::kControlAmId;
using internal::kDetectorService;
using internal::ServiceOfBroadcast;
using transport::ControlService;
using transport::kWireHeaderSize;
using transport::MessageType;
using transport::WireHeader;

// A control message in flight: UCX 1.13 does not copy what it sends, so the bytes live here
// until UCX calls back. Control messages are rare (failures, ring repairs, revocations): a heap
// block each.
struct ControlSend {
  std::vector<std::byte> bytes;
};

void OnControlSent(void* request, ucs_status_t, void* user_data) {
  ucp_request_free(request);
  delete static_cast<ControlSend*>(user_data);
}

bool Later(const auto& a, const auto& b) {
  return a.at_ns != b.at_ns ? a.at_ns > b.at_ns : a.sequence > b.sequence;
}

}  // namespace

HostedService& HostedService::operator=(HostedService&& other) noexcept {
  if (this != &other) {
    Reset();
    plane_ = std::exchange(other.plane_, nullptr);
    service_ = other.service_;
  }
  return *this;
}

void HostedService::Reset() {
  if (plane_ == nullptr) return;
  std::exchange(plane_, nullptr)->Unhost(service_);
}

StatusOr<HostedService> ControlPlane::Host(ControlService service, ControlServiceHandler* handler) {
  if (service == kDetectorService || handler == nullptr) {
    return ArgError("control plane Host: service " + std::to_string(static_cast<int>(service)) +
                    (handler == nullptr ? " with a null handler"
                                        : " is the detector's own; expected another service"));
  }
  {
    std::lock_guard<std::mutex> lock(post_mutex_);
    if (posts_closed_) return OtherError("control plane Host: the control thread has ended");
  }
  Status result = Status::Ok();
  RunOnControlThreadAndWait([&] {
    ControlServiceHandler* expected = nullptr;
    if (!handlers_[static_cast<size_t>(service)].compare_exchange_strong(
            expected, handler, std::memory_order_acq_rel)) {
      result = ArgError("control plane Host: service " + std::to_string(static_cast<int>(service)) +
                        " is already hosted");
      return;
    }
    // What it missed (in key order), before anything new can reach it. Failures map to the
    // detector's own id, which is never hosted.
    for (const BroadcastMessage& message : node_.broadcast().log()) {
      if (ServiceOfBroadcast(message.kind) == service) {
        handler->OnBroadcastDelivered(message);
      }
    }
    // Then its messages that came before it was hosted, in arrival order.
    hosted_once_[static_cast<size_t>(service)] = true;
    std::vector<KeptMessage> kept;
    for (auto it = kept_.begin(); it != kept_.end();) {
      if (it->service == service) {
        kept_bytes_ -= it->payload.size();
        kept.push_back(std::move(*it));
        it = kept_.erase(it);
      } else {
        ++it;
      }
    }
    for (const KeptMessage& message : kept) {
      handler->OnControlMessage(message.from, message.kind, message.payload);
    }
  });
  RFT_RETURN_IF_ERROR(result);
  return HostedService(this, service);
}

void ControlPlane::KeepForService(ControlService service, Rank from, uint8_t kind,
                                  std::span<const std::byte> payload) {
  // A peer that finished starting up may use a service before this process has hosted it; a
  // service that was hosted and is gone (the process is ending) gets nothing more.
  if (hosted_once_[static_cast<size_t>(service)] || kept_bytes_ + payload.size() > kMaxKeptBytes) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  kept_bytes_ += payload.size();
  kept_.push_back(KeptMessage{service, from, kind, {payload.begin(), payload.end()}});
}

void ControlPlane::NotifyServices(Rank rank) {
  for (const auto& slot : handlers_) {
    if (ControlServiceHandler* handler = slot.load(std::memory_order_acquire)) {
      handler->OnPeerFailed(rank);
    }
  }
}

void ControlPlane::Unhost(ControlService service) {
  RunOnControlThreadAndWait(
      [&] { handlers_[static_cast<size_t>(service)].store(nullptr, std::memory_order_release); });
  // Whether it ran there or inline: the control thread has passed any callback in progress.
}

bool ControlPlane::OnControlThread() const {
  return !options_.progress_thread ||
         std::this_thread::get_id() == control_thread_.load(std::memory_order_acquire);
}

bool ControlPlane::Post(std::function<void()> task) {
  std::lock_guard<std::mutex> lock(post_mutex_);
  if (posts_closed_) return false;
  pending_.Push(std::move(task));
  return true;
}

bool ControlPlane::PostSoon(std::function<void()> task) {
  {
    std::lock_guard<std::mutex> lock(post_mutex_);
    if (posts_closed_) return false;
    pending_.PushWithoutWake(std::move(task));
  }
  // Paired with Step (seq_cst on both flags; TSan refuses fences): either Step sees the task
  // before a sleep without timeout, or this sees that sleep coming and wakes it.
  if (!sleep_has_timeout_.load(std::memory_order_seq_cst)) pending_.Wake();
  return true;
}

void ControlPlane::RunOnControlThreadAndWait(const std::function<void()>& fn) {
  if (OnControlThread()) {
    fn();
    return;
  }
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  if (!Post([&fn, &done] {
        fn();
        done.set_value();
      })) {
    // Ended: nothing runs on the control thread any more, and ClosePosts ran what it had.
    fn();
    return;
  }
  finished.wait();
}

void ControlPlane::ClosePosts() {
  {
    std::lock_guard<std::mutex> lock(post_mutex_);
    posts_closed_ = true;
  }
  // Tasks posted before the close still run (a waiting Host or Unhost returns); with the worker
  // gone, what they send goes nowhere.
  while (pending_.HasItems()) HandleWork();
}

void ControlPlane::Send(Rank to, ControlService service, uint8_t kind,
                        std::span<const std::byte> payload) {
  RFT_DCHECK(OnControlThread(), "ControlPlane::Send: from the control thread only");
  if (endpoints_ == nullptr || tearing_down_) return;
  WireHeader header;
  header.type = MessageType::kControl;
  header.flags = transport::ControlFlags(service, kind);
  header.source = self_;
  header.length = payload.size();
  header.job_token = job_token_;
  std::array<std::byte, kWireHeaderSize> encoded;
  transport::EncodeHeader(header, encoded);
  if (local_ != nullptr && local_->Reaches(to)) {
    if (endpoints_->failed_ranks().Contains(to)) return;  // failed: nothing to tell it
    if (SendLocal(to, encoded, payload)) return;
  }
  if (SendVerbs(to, encoded, payload)) return;
  OfferVerbs(to);  // a peer outside the static neighbours: its QP is made now, for what follows
  auto ep = endpoints_->Get(to);
  if (!ep.ok()) return;  // failed: nothing to tell it
  auto* send = new ControlSend();
  // One resize and two copies: GCC 12 at -O2 reports a false -Warray-bounds inside
  // vector::insert of the payload after the header.
  send->bytes.resize(encoded.size() + payload.size());
  std::memcpy(send->bytes.data(), encoded.data(), encoded.size());
  if (!payload.empty()) {
    std::memcpy(send->bytes.data() + encoded.size(), payload.data(), payload.size());
  }
  ucp_request_param_t param;
  param.op_attr_mask =
      UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA | UCP_OP_ATTR_FIELD_FLAGS;
  param.flags = UCP_AM_SEND_FLAG_EAGER;
  param.cb.send = &OnControlSent;
  param.user_data = send;
  messages_sent_by_ucx_.fetch_add(1, std::memory_order_relaxed);
  RFT_LOG_DEBUG("control message (service %u, kind %u, %zu bytes) to rank %u through UCX",
                static_cast<unsigned>(service), static_cast<unsigned>(kind), payload.size(), to);
  void* request = ucp_am_send_nbx(*ep, kControlAmId, nullptr, 0, send->bytes.data(),
                                  send->bytes.size(), &param);
  if (!UCS_PTR_IS_PTR(request) || request == nullptr) delete send;  // done, or failed at once
}

bool ControlPlane::Broadcast(const BroadcastMessage& message) {
  RFT_CHECK(OnControlThread(), "ControlPlane::Broadcast: from the control thread only");
  if (message.kind == BroadcastKind::kFailure || tearing_down_) return false;
  const size_t start = actions_.size();
  const bool started = node_.Broadcast(message, &actions_);
  Execute(start);
  return started;
}

void ControlPlane::RunAt(int64_t at_ns, std::function<void()> task) {
  RFT_CHECK(OnControlThread(), "ControlPlane::RunAt: from the control thread only");
  timers_.push_back(Timer{at_ns, timer_sequence_++, std::move(task)});
  std::push_heap(timers_.begin(), timers_.end(),
                 [](const Timer& a, const Timer& b) { return Later(a, b); });
}

int64_t ControlPlane::RunDueTimers() {
  const auto later = [](const Timer& a, const Timer& b) { return Later(a, b); };
  while (!timers_.empty() && timers_.front().at_ns <= MonotonicNanos()) {
    std::pop_heap(timers_.begin(), timers_.end(), later);
    std::function<void()> task = std::move(timers_.back().task);
    timers_.pop_back();
    task();  // may set new timers
  }
  return timers_.empty() ? HeartbeatRing::kNoTimer : timers_.front().at_ns;
}

}  // namespace rft::detector
