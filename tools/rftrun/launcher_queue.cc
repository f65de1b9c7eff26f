// The PmixHandler side of the launcher: libpmix's progress thread calls these, and each only
// queues its work for the main loop (launcher.h, "Threads"), waking it through the eventfd.

#include <unistd.h>

#include "tools/rftrun/launcher.h"

namespace rft::rftrun {

void Launcher::Enqueue(Queued item) {
  std::lock_guard<std::mutex> lock(queue_mutex_);
  queue_.push_back(std::move(item));
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

void Launcher::OnClientConnected(const pmix_proc_t& proc) { Enqueue(ClientConnected{proc}); }

void Launcher::OnClientFinalized(const pmix_proc_t& proc) { Enqueue(ClientFinalized{proc}); }

void Launcher::OnAbort(AbortRequest request) { Enqueue(std::move(request)); }

void Launcher::OnSpawn(SpawnRequest request) { Enqueue(std::move(request)); }

void Launcher::OnListeningSocket(int fd) { Enqueue(ListeningSocket{fd}); }

void Launcher::OnFence(FenceRequest request) { Enqueue(std::move(request)); }

void Launcher::OnDirectModex(ModexRequest request) { Enqueue(request); }

void Launcher::OnModexData(uint64_t id, pmix_status_t status, std::string data) {
  Enqueue(ModexData{id, status, std::move(data)});
}

}  // namespace rft::rftrun
