// Scheduler state of another process's thread, read from /proc (not part of the interface).
//
// Lets an observer tell a peer that is delayed (one of its threads runnable, waiting for a core,
// or in an uninterruptible wait such as a page fault) from one that is hung (every thread
// stopped or asleep): only the second is a failure.
#ifndef RFT_DETECTOR_THREAD_STATE_H_
#define RFT_DETECTOR_THREAD_STATE_H_

#include <sys/types.h>

namespace rft::detector::internal {

// The state letter of thread `tid` of `pid` (R running or runnable, S sleeping, D disk wait,
// T stopped, t traced, Z zombie...), or '?' if it cannot be read (gone, other node).
char ThreadState(pid_t pid, pid_t tid);
// Whether some thread of `pid` is runnable (R) or in an uninterruptible wait (D); false if none
// is, or if /proc cannot be read (gone, other node).
bool AnyThreadRunnableOrInIo(pid_t pid);

}  // namespace rft::detector::internal

#endif  // RFT_DETECTOR_THREAD_STATE_H_
