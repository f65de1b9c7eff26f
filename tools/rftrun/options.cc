#include "tools/rftrun/options.h"

#include <cmath>
#include <csignal>
#include <cstdlib>

#include "base/config.h"

namespace rft::rftrun {
namespace {

// Seconds as a non-negative decimal ("0.5", "10").
bool ParseSeconds(const std::string& text, std::chrono::nanoseconds* out) {
  if (text.empty()) return false;
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(seconds) || seconds < 0 ||
      seconds > 1e6) {
    return false;
  }
  *out = std::chrono::nanoseconds(static_cast<int64_t>(std::llround(seconds * 1e9)));
  return true;
}

bool ParseUint(const std::string& text, uint64_t max, uint64_t* out) {
  if (text.empty() || text.size() > 10) return false;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value > max) return false;
  *out = value;
  return true;
}

// "RANK@SEC" for --kill and --stop.
StatusOr<Fault> ParseFault(const std::string& flag, const std::string& text, int signal) {
  const size_t at = text.find('@');
  uint64_t rank = 0;
  Fault fault;
  fault.signal = signal;
  if (at == std::string::npos || !ParseUint(text.substr(0, at), UINT32_MAX, &rank) ||
      !ParseSeconds(text.substr(at + 1), &fault.at)) {
    return ArgError(flag + " \"" + text + "\": expected RANK@SECONDS, e.g. 2@0.5");
  }
  fault.rank = static_cast<uint32_t>(rank);
  return fault;
}

}  // namespace

StatusOr<std::pair<std::string, uint16_t>> ParseEndpoint(const std::string& text) {
  const size_t colon = text.rfind(':');
  const auto bad = [&] {
    return ArgError("\"" + text + "\": expected ADDRESS:PORT with a port from 0 to 65535");
  };
  if (colon == std::string::npos || colon == 0 || colon + 1 == text.size()) return bad();
  uint32_t port = 0;
  for (size_t i = colon + 1; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9' || port > 65535) return bad();
    port = port * 10 + static_cast<uint32_t>(text[i] - '0');
  }
  if (port > 65535) return bad();
  return std::make_pair(text.substr(0, colon), static_cast<uint16_t>(port));
}

const char* Usage() {
  return "usage: rftrun -n N [--ft] [--timeout SEC [--get-stack-traces]] [--kill RANK@SEC]...\n"
         "              [--stop RANK@SEC]... [--initial-errhandler NAME] [--no-tag-output] [-v]\n"
         "              [--] PROGRAM [ARGS...]\n"
         "\n"
         "Starts N copies of PROGRAM on this node as one PMIx job (rftrun is their PMIx server);\n"
         "with --listen/--join, one rftrun per node runs a job across nodes.\n"
         "  -n, -np N          number of processes (ranks 0..N-1)\n"
         "  --ft               fault-tolerant job: a failed process is reported to the survivors\n"
         "                     as a PMIx event and the job goes on; exit status 0 when every\n"
         "                     survivor exits 0. Without --ft a failure ends the whole job.\n"
         "  --ft-deaths-ok     with --ft: a process killed by a signal does not make the exit\n"
         "                     status non-zero; the survivors' statuses decide (as Open MPI 5's\n"
         "                     mpirun --with-ft ulfm)\n"
         "  --timeout SEC      kill the whole job after SEC seconds (exit status 124)\n"
         "  --get-stack-traces with --timeout: first print the stack of every thread of each\n"
         "                     rank still running (needs gdb)\n"
         "  --kill RANK@SEC    send SIGKILL to RANK SEC seconds after launch, or once its PMIx\n"
         "                     handshake has ended if later (repeatable)\n"
         "  --stop RANK@SEC    send SIGSTOP to RANK SEC seconds after launch, or once its PMIx\n"
         "                     handshake has ended if later (repeatable); stopped ranks are\n"
         "                     killed once every other rank has exited\n"
         "  --initial-errhandler NAME\n"
         "                     MPI-4's mpi_initial_errhandler, the error handler COMM_WORLD and\n"
         "                     COMM_SELF start with: mpi_errors_are_fatal (the default),\n"
         "                     mpi_errors_abort or mpi_errors_return; set as\n"
         "                     RFT_INITIAL_ERRHANDLER for every process rftrun starts\n"
         "  --no-tag-output    do not prefix each output line with \"[RANK] \"\n"
         "  -v, --verbose      log launcher events (launch, deaths, events sent) on stderr\n"
         "  --nodes K --listen ADDR:PORT\n"
         "                     this rftrun is node 0 of a job on K nodes: it waits (up to 120 s)\n"
         "                     for K-1 others to --join at ADDR:PORT (port 0: any free port, "
         "which\n"
         "                     it prints); ranks are numbered node by node, node 0's first and\n"
         "                     then each joiner's in the order they joined\n"
         "  --join ADDR:PORT   run this node's -n N processes as part of node 0's job (retrying\n"
         "                     until node 0 listens, up to 120 s)\n"
         "  --node-name NAME   this node's name in the job (default: the host name)\n"
         "  --plain-pmix       give the job only standard PMIx information (no rft keys), as\n"
         "                     other launchers do; for testing that path\n"
         "  -h, --help         print this help\n";
}

StatusOr<Options> ParseOptions(const std::vector<std::string>& args) {
  Options options;
  bool have_n = false;
  size_t i = 0;
  auto value_of = [&](const std::string& flag) -> StatusOr<std::string> {
    if (i + 1 >= args.size()) return ArgError(flag + ": missing value");
    return args[++i];
  };
  for (; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") {
      ++i;
      break;
    }
    if (arg.empty() || arg[0] != '-') break;  // the program
    if (arg == "-h" || arg == "--help") {
      options.help = true;
      return options;
    } else if (arg == "-n" || arg == "-np") {
      auto value = value_of(arg);
      if (!value.ok()) return value.status();
      uint64_t n = 0;
      if (!ParseUint(*value, 4096, &n) || n < 1) {
        return ArgError(arg + " \"" + *value + "\": expected a process count from 1 to 4096");
      }
      options.nprocs = static_cast<uint32_t>(n);
      have_n = true;
    } else if (arg == "--ft") {
      options.fault_tolerant = true;
    } else if (arg == "--ft-deaths-ok") {
      options.deaths_ok = true;
    } else if (arg == "--timeout") {
      auto value = value_of(arg);
      if (!value.ok()) return value.status();
      if (!ParseSeconds(*value, &options.timeout) || options.timeout.count() == 0) {
        return ArgError("--timeout \"" + *value + "\": expected a positive number of seconds");
      }
    } else if (arg == "--get-stack-traces") {
      options.stack_traces = true;
    } else if (arg == "--kill" || arg == "--stop") {
      auto value = value_of(arg);
      if (!value.ok()) return value.status();
      auto fault = ParseFault(arg, *value, arg == "--kill" ? SIGKILL : SIGSTOP);
      if (!fault.ok()) return fault.status();
      options.faults.push_back(*fault);
    } else if (arg == "--initial-errhandler") {
      auto value = value_of(arg);
      if (!value.ok()) return value.status();
      // The setting's own parser decides, so rftrun accepts exactly what rft_init does.
      auto name =
          config::GetString("RFT_INITIAL_ERRHANDLER", [&](const char*) { return value->c_str(); });
      if (!name.ok()) {
        return ArgError("--initial-errhandler \"" + *value +
                        "\": expected mpi_errors_are_fatal, mpi_errors_abort or "
                        "mpi_errors_return");
      }
      options.initial_errhandler = *name;
    } else if (arg == "--no-tag-output") {
      options.tag_output = false;
    } else if (arg == "--tag-output") {
      options.tag_output = true;
    } else if (arg == "-v" || arg == "--verbose") {
      options.verbose = true;
    } else if (arg == "--nodes") {
      auto value = value_of(arg);
      if (!value.ok()) return value.status();
      uint64_t n = 0;
      if (!ParseUint(*value, 64, &n) || n < 2) {
        return ArgError("--nodes \"" + *value + "\": expected a node count from 2 to 64");
      }
      options.nodes = static_cast<uint32_t>(n);
    } else if (arg == "--listen" || arg == "--join" || arg == "--node-name") {
      auto value = value_of(arg);
      if (!value.ok()) return value.status();
      if (value->empty()) return ArgError(arg + ": expected a non-empty value");
      if (arg != "--node-name") {
        auto endpoint = ParseEndpoint(*value);
        if (!endpoint.ok()) return ArgError(arg + " " + endpoint.status().message());
      }
      (arg == "--listen" ? options.listen
       : arg == "--join" ? options.join
                         : options.node_name) = *value;
    } else if (arg == "--plain-pmix") {
      options.plain_pmix = true;
    } else {
      return ArgError("unknown option \"" + arg + "\"");
    }
  }
  options.argv.assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
  if (!have_n) return ArgError("missing -n N: the number of processes to start");
  if (options.deaths_ok && !options.fault_tolerant) {
    return ArgError("--ft-deaths-ok: only with --ft (without it any failure ends the job)");
  }
  if (options.argv.empty()) return ArgError("missing PROGRAM: nothing to run");
  if (options.stack_traces && options.timeout.count() == 0) {
    return ArgError("--get-stack-traces: takes effect only with --timeout SEC");
  }
  if (!options.listen.empty() && !options.join.empty()) {
    return ArgError("--listen and --join: a node either is node 0 (--listen) or joins it");
  }
  if (!options.listen.empty() && options.nodes < 2) {
    return ArgError("--listen " + options.listen + ": expected --nodes N (2 or more) with it");
  }
  if (options.listen.empty() && options.nodes >= 2) {
    return ArgError("--nodes " + std::to_string(options.nodes) +
                    ": expected --listen ADDR:PORT with it (this node is node 0)");
  }
  for (const Fault& fault : options.faults) {
    // Across nodes the job's size is known once every node has joined (Launcher checks then).
    if (options.spans_nodes()) break;
    if (fault.rank >= options.nprocs) {
      return ArgError(std::string(fault.signal == SIGKILL ? "--kill" : "--stop") + " rank " +
                      std::to_string(fault.rank) + ": no such rank in a job of " +
                      std::to_string(options.nprocs) + " processes (ranks 0.." +
                      std::to_string(options.nprocs - 1) + ")");
    }
  }
  return options;
}

}  // namespace rft::rftrun
