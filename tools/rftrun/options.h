// Command line of rftrun, the PMIx launcher (one node, or one rftrun per node).
#ifndef RFT_TOOLS_RFTRUN_OPTIONS_H_
#define RFT_TOOLS_RFTRUN_OPTIONS_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"

namespace rft::rftrun {

// A fault to inject: a signal sent to one rank of the launched job at a time after launch.
struct Fault {
  uint32_t rank = 0;
  std::chrono::nanoseconds at{0};
  int signal = 0;  // SIGKILL (--kill) or SIGSTOP (--stop)
};

struct Options {
  uint32_t nprocs = 0;
  bool fault_tolerant = false;  // --ft: a failed process does not end the job
  // --ft-deaths-ok: with --ft, a process killed by a signal does not make the exit status
  // non-zero; the survivors' own statuses decide it (Open MPI 5's mpirun --with-ft ulfm does
  // so; mpiexec passes it).
  bool deaths_ok = false;
  std::chrono::nanoseconds timeout{0};  // 0: none
  // --get-stack-traces: when --timeout ends the job, print every live rank's threads' stacks
  // (by gdb) before killing them.
  bool stack_traces = false;
  std::vector<Fault> faults;
  bool tag_output = true;  // prefix each output line with "[rank] "
  // --initial-errhandler: MPI-4's mpi_initial_errhandler, canonical (lower case), handed to every
  // process rftrun starts as RFT_INITIAL_ERRHANDLER. Empty: the processes inherit rftrun's.
  std::string initial_errhandler;
  bool verbose = false;
  // --plain-pmix: register only standard PMIx job information (no job token, no
  // PMIX_NODE_OVERSUBSCRIBED), as many launchers do, so tests exercise that path.
  bool plain_pmix = false;
  // A job across nodes, one rftrun per node: node 0 listens (--listen ADDR:PORT --nodes N),
  // the others join it (--join ADDR:PORT). Ranks are numbered node by node, in join order.
  uint32_t nodes = 1;
  std::string listen;     // ADDR:PORT, on node 0
  std::string join;       // ADDR:PORT of node 0, on the others
  std::string node_name;  // --node-name; empty: the host name
  bool spans_nodes() const { return !listen.empty() || !join.empty(); }
  bool help = false;
  std::vector<std::string> argv;  // program and its arguments
};

// Parses rftrun's arguments (argv[0] excluded). Errors name the bad argument and say what was
// expected; rftrun prints them with the usage and exits 2.
StatusOr<Options> ParseOptions(const std::vector<std::string>& args);

const char* Usage();

// Parses "ADDRESS:PORT" as --listen and --join take it (the address is resolved later, when
// the link is made).
StatusOr<std::pair<std::string, uint16_t>> ParseEndpoint(const std::string& text);

}  // namespace rft::rftrun

#endif  // RFT_TOOLS_RFTRUN_OPTIONS_H_
