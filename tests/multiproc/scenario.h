// Runs a multi-process scenario under rftrun from a GoogleTest test: the job's merged output
// is captured, and the whole process group is killed if it outlives its time limit, so a
// hang fails fast with the output so far instead of eating the CI budget.
#ifndef RFT_TESTS_MULTIPROC_SCENARIO_H_
#define RFT_TESTS_MULTIPROC_SCENARIO_H_

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace rft::testing {

struct ScenarioResult {
  int exit_status = -1;    // rftrun's exit status; 128+N when killed by signal N
  bool timed_out = false;  // killed by the harness at its time limit
  double seconds = 0;
  std::string output;  // stdout and stderr, merged
  std::string command;

  // For assertion messages.
  std::string Report() const;
};

// Path of a file built into the test's runfiles, e.g. "tools/rftrun/rftrun".
std::string Runfile(const std::string& workspace_relative);

// Runs `program args...` (program is a runfile path or absolute) with `extra_env` added.
ScenarioResult RunCommand(const std::string& program, const std::vector<std::string>& args,
                          std::chrono::milliseconds limit,
                          const std::vector<std::string>& extra_env = {});

// Starts `program args...` in a process group of its own with stdout and stderr on a pipe
// (`*output_fd`, close-on-exec). Returns the pid, or -1 with errno set.
pid_t StartCommand(const std::string& program, const std::vector<std::string>& args,
                   const std::vector<std::string>& extra_env, int* output_fd, std::string* command);

// Runs rftrun with `args`.
ScenarioResult RunRftrun(const std::vector<std::string>& args,
                         std::chrono::milliseconds limit = std::chrono::seconds(60));

// CPUs this test process may run on: the ranks rftrun starts inherit this mask, so a job of
// more ranks than this is oversubscribed (rather than assuming the 2 cores of CI machines).
int UsableCpus();

// The environment of scenarios that check rft's defaults in the plain build: none there; under
// ASan or TSan (processes several times slower on 2 shared cores, where a 20 ms heartbeat
// timeout declares starved ones dead) a 10 ms period and a 1 s timeout.
const std::vector<std::string>& DefaultsUnlessSanitized();

// The heartbeat settings of scenarios that run under load (sanitizers, tests side by side on 2
// shared cores, where the default 20 ms timeout declares starved processes dead): a 10 ms
// period and a 1 s timeout.
const std::vector<std::string>& TolerantHeartbeats();

// Whether this test, and so every program it starts from its runfiles, is built with
// AddressSanitizer or ThreadSanitizer (2–15× slower processes on 2 shared cores).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizedBuild = true;
#else
inline constexpr bool kSanitizedBuild = false;
#endif
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kThreadSanitizerBuild = true;
#else
inline constexpr bool kThreadSanitizerBuild = false;
#endif

// Number of lines of `output` containing `text`.
int CountLines(const std::string& output, const std::string& text);

}  // namespace rft::testing

#endif  // RFT_TESTS_MULTIPROC_SCENARIO_H_
