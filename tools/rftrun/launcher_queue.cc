// The PmixHandler side of the launcher: libpmix's progress thread calls these, and each only
// queues its work for the main loop (launcher.h, "Threads"), waking it through the eventfd.

#include <unistd.h>

#include <thread>

#include "tools/rftrun/launcher.h"

namespace rft::rftrun {

void Launcher::Enqueue(Queued item) {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  queue_.push_back(std::move(item));
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

void Launcher::OnClientConnected(const pmix_proc_t& proc) {
  Enqueue({.kind = Queued::Kind::kConnected, .proc = proc});
}

void Launcher::OnClientFinalized(const pmix_proc_t& proc) {
  // On the PMIx server's thread, which then answers the client: a delay here is a slow server.
  if (finalize_notice_delay_.count() > 0) std::this_thread::sleep_for(finalize_notice_delay_);
  Enqueue({.kind = Queued::Kind::kFinalized, .proc = proc});
}

void Launcher::OnAbort(AbortRequest request) {
  Enqueue({.kind = Queued::Kind::kAbort, .abort = std::move(request)});
}

void Launcher::OnSpawn(SpawnRequest request) {
  Enqueue({.kind = Queued::Kind::kSpawn, .spawn = std::move(request)});
}

void Launcher::OnListeningSocket(int fd) { Enqueue({.kind = Queued::Kind::kListener, .fd = fd}); }

void Launcher::OnFence(FenceRequest request) {
  Enqueue({.kind = Queued::Kind::kFence, .fence = std::move(request)});
}

void Launcher::OnDirectModex(ModexRequest request) {
  Enqueue({.kind = Queued::Kind::kDirectModex, .modex = request});
}

void Launcher::OnModexData(uint64_t id, pmix_status_t status, std::string data) {
  Enqueue({.kind = Queued::Kind::kModexData,
           .modex_id = id,
           .modex_status = status,
           .modex_data = std::move(data)});
}

}  // namespace rft::rftrun
