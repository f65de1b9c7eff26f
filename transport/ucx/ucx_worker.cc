#include "transport/ucx/ucx_worker.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string_view>

namespace rft::transport::ucx {

Status UcxError(const std::string& what, ucs_status_t status) {
  return OtherError(what + ": " + ucs_status_string(status) + " (UCS " +
                    std::to_string(static_cast<int>(status)) + ")");
}

bool TlsAllowSharedMemory(const char* tls) {
  if (tls == nullptr || *tls == '\0') return true;
  // A group names every shared-memory transport; a member names one, and excluding it leaves
  // the others.
  static constexpr std::string_view kGroups[] = {"all", "sm", "shm", "mm"};
  static constexpr std::string_view kMembers[] = {"posix", "sysv", "xpmem"};
  auto among = [](std::string_view name, std::span<const std::string_view> names) {
    return std::find(names.begin(), names.end(), name) != names.end();
  };
  std::string_view list(tls);
  const bool excluding = list.front() == '^';
  if (excluding) list.remove_prefix(1);
  bool named = false;  // the list names all of shared memory (excluding) or some (including)
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    name = name.substr(0, name.find(':'));  // "ud:aux": the transport's name
    named = named || among(name, kGroups) || (!excluding && among(name, kMembers));
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return excluding ? !named : named;
}

StatusOr<std::unique_ptr<UcxContext>> UcxContext::Create() {
  // Must precede ucp_config_read; an explicit user setting wins (overwrite = 0).
  if (TlsAllowSharedMemory(std::getenv("UCX_TLS"))) {
    setenv("UCX_MM_ERROR_HANDLING", "y", 0);
    // The shared-memory transports fault in their receive descriptors 512 at a time (4 MiB per
    // transport and worker): most of a worker's creation, and of a spawned process's start
    // (docs/recovery.md, "A faster spawn"). The pool grows on demand, 64 at a time.
    setenv("UCX_MM_RX_BUFS_GROW", "64", 0);
  }

  ucp_config_t* config = nullptr;
  ucs_status_t status = ucp_config_read(nullptr, nullptr, &config);
  if (status != UCS_OK) return UcxError("ucp_config_read", status);
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_AM | UCP_FEATURE_RMA | UCP_FEATURE_AMO64 | UCP_FEATURE_WAKEUP;
  params.mt_workers_shared = 0;
  ucp_context_h context = nullptr;
  status = ucp_init(&params, config, &context);
  ucp_config_release(config);
  if (status != UCS_OK) return UcxError("ucp_init", status);
  return std::unique_ptr<UcxContext>(new UcxContext(context));
}

UcxContext::~UcxContext() { ucp_cleanup(context_); }

StatusOr<std::unique_ptr<UcxWorker>> UcxWorker::Create(const UcxContext& context) {
  std::unique_ptr<UcxWorker> worker(new UcxWorker());
  ucp_worker_params_t params{};
  params.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
  params.thread_mode = UCS_THREAD_MODE_SINGLE;
  ucs_status_t status = ucp_worker_create(context.get(), &params, &worker->worker_);
  if (status != UCS_OK) return UcxError("ucp_worker_create", status);
  status = ucp_worker_get_address(worker->worker_, &worker->address_, &worker->address_length_);
  if (status != UCS_OK) return UcxError("ucp_worker_get_address", status);
  status = ucp_worker_get_efd(worker->worker_, &worker->event_fd_);
  if (status != UCS_OK) return UcxError("ucp_worker_get_efd", status);
  return worker;
}

UcxWorker::~UcxWorker() {
  if (address_ != nullptr) ucp_worker_release_address(worker_, address_);
  if (worker_ != nullptr) ucp_worker_destroy(worker_);
}

Status UcxWorker::SetActiveMessageHandler(unsigned id, ucp_am_recv_callback_t callback, void* arg,
                                          uint32_t flags) {
  ucp_am_handler_param_t param{};
  param.field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                     UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS;
  param.flags = flags;
  param.id = id;
  param.cb = callback;
  param.arg = arg;
  const ucs_status_t status = ucp_worker_set_am_recv_handler(worker_, &param);
  if (status != UCS_OK) {
    return UcxError("ucp_worker_set_am_recv_handler(" + std::to_string(id) + ")", status);
  }
  return Status::Ok();
}

unsigned UcxWorker::Progress() {
  unsigned total = 0;
  for (unsigned n; (n = ucp_worker_progress(worker_)) != 0;) total += n;
  return total;
}

Status UcxWorker::WaitForEvents(int timeout_ms, std::span<const int> wake_fds,
                                const std::function<bool()>& before_sleep) {
  if (wake_fds.size() > kMaxWakeFds) {
    return ArgError("UCX wait with " + std::to_string(wake_fds.size()) +
                    " descriptors to wake on: at most " + std::to_string(kMaxWakeFds));
  }
  // Arming fails with UCS_ERR_BUSY when events are pending: the caller progresses them.
  const ucs_status_t status = ucp_worker_arm(worker_);
  if (status == UCS_ERR_BUSY) return Status::Ok();
  if (status != UCS_OK) return UcxError("ucp_worker_arm", status);
  if (before_sleep && !before_sleep()) return Status::Ok();
  pollfd pfds[1 + kMaxWakeFds] = {{event_fd_, POLLIN, 0}};
  nfds_t count = 1;
  for (int fd : wake_fds) {
    if (fd >= 0) pfds[count++] = {fd, POLLIN, 0};
  }
  const int ready = poll(pfds, count, timeout_ms);
  if (ready < 0 && errno != EINTR) {
    return OtherError(std::string("poll on the UCX event fd: ") + std::strerror(errno));
  }
  return Status::Ok();
}

}  // namespace rft::transport::ucx
