// rftrun: starts a job of N processes on this node and serves PMIx to them.
// See Usage() in options.cc and docs/rftrun.md.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "base/config.h"
#include "base/log.h"
#include "tools/rftrun/launcher.h"
#include "tools/rftrun/options.h"

int main(int argc, char** argv) {
  rft::log::SetProgramName("rftrun");
  std::vector<std::string> args(argv + 1, argv + argc);
  auto options = rft::rftrun::ParseOptions(args);
  if (!options.ok()) {
    std::fprintf(stderr, "rftrun: %s\n\n%s", options.status().message().c_str(),
                 rft::rftrun::Usage());
    return 2;
  }
  if (options->help) {
    std::fputs(rft::rftrun::Usage(), stdout);
    return 0;
  }
  // Every process rftrun starts, those rft_comm_replace asks for later too, gets rftrun's
  // environment: the option overrides what it inherited.
  if (!options->initial_errhandler.empty()) {
    setenv("RFT_INITIAL_ERRHANDLER", options->initial_errhandler.c_str(), /*overwrite=*/1);
  }
  // The job inherits rftrun's environment: say once, up front, what each rank would reject.
  for (const rft::Status& problem :
       rft::config::EnvironmentProblems(rft::config::ProcessEnvironment())) {
    std::fprintf(stderr, "rftrun: warning: %s\n", problem.message().c_str());
  }
  rft::rftrun::Launcher launcher(std::move(*options));
  return launcher.Run();
}
