#include "tools/rftrun/finalize_grace.h"

#include <sys/wait.h>

namespace rft::rftrun {

bool FinalizeGrace::HoldExit(uint32_t index, const ProcessEnd& end, bool ending, int64_t now_ns) {
  const bool clean_exit = WIFEXITED(end.wait_status) && WEXITSTATUS(end.wait_status) == 0;
  if (!clean_exit || !end.connected || end.finalized || ending) return false;
  timers_->Arm(TimerOf(index), now_ns + grace_ns_);
  return true;
}

bool FinalizeGrace::NoticeCame(uint32_t index) {
  if (!held(index)) return false;
  timers_->Disarm(TimerOf(index));
  return true;
}

}  // namespace rft::rftrun
