// One UCP context and one worker: the data plane's (or, later, the control plane's) handle on
// UCX.
//
// Shared memory stays in use with peer error handling: UCX drops its shared-memory transports
// for endpoints in UCP_ERR_HANDLING_MODE_PEER unless UCX_MM_ERROR_HANDLING=y, and then falls
// back to TCP over loopback (8 us instead of 0.5 us; NOTES.md). Create() sets it unless the
// user chose otherwise, or chose transports without shared memory (UCX_TLS=rc: UCX would warn,
// in every process, that the variable is unused).
//
// Progress: Progress() polls; WaitForEvents() arms the worker and sleeps on its event fd, for
// processes that share cores (8 ranks on 2 cores must not spin).
#ifndef RFT_TRANSPORT_UCX_UCX_WORKER_H_
#define RFT_TRANSPORT_UCX_UCX_WORKER_H_

#include <ucp/api/ucp.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace rft::transport::ucx {

// An error status for a failed UCX call: "ucp_init: Input/output error (UCS -3)".
Status UcxError(const std::string& what, ucs_status_t status);

// Whether UCX_TLS's value `tls` (nullptr: unset) lets UCX open its shared-memory transports:
// unset, empty, "all", or a list naming sm, shm, mm, posix, sysv or xpmem ("rc,sm",
// "ud:aux,shm"), or an exclusion list ("^tcp") that names none of sm, shm, mm.
bool TlsAllowSharedMemory(const char* tls);

class UcxContext {
 public:
  // Features: active messages, RMA and 64-bit atomics (one-sided heartbeats and revoke
  // tables), and wakeup (blocking progress).
  static StatusOr<std::unique_ptr<UcxContext>> Create();
  ~UcxContext();
  UcxContext(const UcxContext&) = delete;
  UcxContext& operator=(const UcxContext&) = delete;

  ucp_context_h get() const { return context_; }

 private:
  explicit UcxContext(ucp_context_h context) : context_(context) {}
  ucp_context_h context_;
};

class UcxWorker {
 public:
  // A single-threaded worker (no lock inside UCX): one thread drives it.
  static StatusOr<std::unique_ptr<UcxWorker>> Create(const UcxContext& context);
  ~UcxWorker();
  UcxWorker(const UcxWorker&) = delete;
  UcxWorker& operator=(const UcxWorker&) = delete;

  ucp_worker_h get() const { return worker_; }
  // This worker's address, to publish through the bootstrap.
  std::span<const std::byte> address() const {
    return {reinterpret_cast<const std::byte*>(address_), address_length_};
  }

  // Routes active messages with `id` to `callback(arg, ...)`, which UCX calls from inside
  // Progress(). Replaces an earlier handler for the same id. `flags`: ucp_am_cb_flags.
  Status SetActiveMessageHandler(unsigned id, ucp_am_recv_callback_t callback, void* arg,
                                 uint32_t flags = 0);

  // The worker's event fd (readable when armed and something arrived): for callers that wait
  // on more descriptors than WaitForEvents takes. Arm with ucp_worker_arm first.
  int event_fd() const { return event_fd_; }

  // Runs UCX progress until nothing more is pending; returns the number of events handled.
  unsigned Progress();
  // Sleeps until the worker has something to progress or `timeout_ms` passed (-1: no limit).
  // Returns at once when events are already pending. RFT_ERR_OTHER on a UCX failure.
  // `wake_fds` (at most kMaxWakeFds) are polled too, so that another thread or another
  // transport can interrupt the sleep (the data plane's failure news, the verbs completion
  // channel); the caller drains them. `before_sleep` (optional) runs once the worker is armed,
  // just before the sleep; false skips the sleep (the caller has work).
  static constexpr size_t kMaxWakeFds = 3;
  Status WaitForEvents(int timeout_ms, std::span<const int> wake_fds = {},
                       const std::function<bool()>& before_sleep = nullptr);

 private:
  UcxWorker() = default;
  ucp_worker_h worker_ = nullptr;
  ucp_address_t* address_ = nullptr;
  size_t address_length_ = 0;
  int event_fd_ = -1;
};

}  // namespace rft::transport::ucx

#endif  // RFT_TRANSPORT_UCX_UCX_WORKER_H_
