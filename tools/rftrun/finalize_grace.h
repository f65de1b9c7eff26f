// libpmix's client waits only 2 s for the answer to its PMIx_Finalize and then exits anyway, so
// on a loaded node a process's finalize notice can reach rftrun after its exit. FinalizeGrace
// holds such an exit's verdict open until the notice comes or the grace ends: a notice in time
// makes it the clean end it was; none makes it a failure (an exit without PMIx_Finalize).
// Pure: the launcher passes its clock's time, and the grace's end comes as a kFinalizeGrace
// timer of its heap, so the rule is tested with a clock the test turns
// (tests/unit/rftrun/finalize_grace_test.cc).
#ifndef RFT_TOOLS_RFTRUN_FINALIZE_GRACE_H_
#define RFT_TOOLS_RFTRUN_FINALIZE_GRACE_H_

#include <cstdint>
#include <vector>

#include "tools/rftrun/job_verdict.h"
#include "tools/rftrun/timer_heap.h"

namespace rft::rftrun {

class FinalizeGrace {
 public:
  FinalizeGrace(TimerHeap* timers, int64_t grace_ns) : timers_(timers), grace_ns_(grace_ns) {}

  // Process `index` ended so at `now_ns` (`ending`: rftrun is ending the job, which judges every
  // end at once). True when its verdict is held: an exit with status 0 of a process that
  // connected and whose notice has not come.
  bool HoldExit(uint32_t index, const ProcessEnd& end, bool ending, int64_t now_ns);
  // Its notice came: true when its exit was held (judge it now, as finalized).
  bool NoticeCame(uint32_t index);
  // The job is ending: every held exit, released (judge each as it is).
  std::vector<uint32_t> ReleaseAll() { return timers_->DisarmAll(TimerKind::kFinalizeGrace); }
  bool held(uint32_t index) const { return timers_->armed(TimerOf(index)); }

 private:
  static TimerId TimerOf(uint32_t index) { return {TimerKind::kFinalizeGrace, index}; }

  TimerHeap* timers_;  // an exit is held exactly while its grace's timer is armed
  int64_t grace_ns_;
};

}  // namespace rft::rftrun

#endif  // RFT_TOOLS_RFTRUN_FINALIZE_GRACE_H_
