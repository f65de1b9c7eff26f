// Stack traces of a job's processes, taken by gdb when --timeout ends a hung job
// (--get-stack-traces), so a hang seen once on a loaded machine says where each rank waited.
#ifndef RFT_TOOLS_RFTRUN_STACK_TRACES_H_
#define RFT_TOOLS_RFTRUN_STACK_TRACES_H_

#include <sys/types.h>

#include <chrono>
#include <string>

#include "base/status.h"

namespace rft::rftrun {

// Every thread's backtrace of process `pid` (gdb -batch, attached and detached again: the
// process goes on as before). gdb gets at most `bound`; then it is killed and what it printed
// so far is returned with a line saying so. An error when gdb is not installed or cannot start.
StatusOr<std::string> CollectStackTraces(pid_t pid, std::chrono::milliseconds bound);

}  // namespace rft::rftrun

#endif  // RFT_TOOLS_RFTRUN_STACK_TRACES_H_
