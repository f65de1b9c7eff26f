// Best-effort priority for the detector's threads (not part of the interface).
#ifndef RFT_DETECTOR_THREAD_PRIORITY_H_
#define RFT_DETECTOR_THREAD_PRIORITY_H_

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "base/log.h"

namespace rft::detector::internal {

// A heartbeat or a death notice must not wait behind the application's threads on a busy node:
// asks for a larger share of the CPU for the calling thread (nice -10; allowed with
// CAP_SYS_NICE or a raised RLIMIT_NICE). Without it the thread keeps the default, which a node
// loaded beyond its cores may not serve within the heartbeat timeout (docs/detector.md).
inline void RaiseThreadPriority(const char* thread) {
  if (setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), -10) != 0) {
    RFT_LOG_INFO("%s thread keeps the default priority (setpriority: %s)", thread,
                 std::strerror(errno));
  }
}

}  // namespace rft::detector::internal

#endif  // RFT_DETECTOR_THREAD_PRIORITY_H_
