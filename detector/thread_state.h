// Scheduler state of another process's thread, read from /proc (not part of the interface).
//
// Lets an observer tell a peer that is starved of CPU (its control thread runnable, waiting for
// a core) from one that is hung (stopped, or blocked): only the second is a failure.
#ifndef RFT_DETECTOR_THREAD_STATE_H_
#define RFT_DETECTOR_THREAD_STATE_H_

#include <sys/types.h>

namespace rft::detector::internal {

// The thread of process `pid` whose name (comm) is `name`, or 0 if none (or no access).
pid_t FindThread(pid_t pid, const char* name);
// The state letter of thread `tid` of `pid` (R running or runnable, S sleeping, D disk wait,
// T stopped, t traced, Z zombie...), or '?' if it cannot be read (gone, other node).
char ThreadState(pid_t pid, pid_t tid);

}  // namespace rft::detector::internal

#endif  // RFT_DETECTOR_THREAD_STATE_H_
