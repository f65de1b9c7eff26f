#include "tools/rftrun/options.h"

#include <gtest/gtest.h>

#include <csignal>

namespace rft::rftrun {
namespace {

TEST(OptionsTest, ParsesEverything) {
  auto options = ParseOptions({"-n", "4", "--ft", "--timeout", "2.5", "--kill", "2@0.5", "--stop",
                               "1@1", "--no-tag-output", "-v", "prog", "--ft", "x"});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->nprocs, 4u);
  EXPECT_TRUE(options->fault_tolerant);
  EXPECT_EQ(options->timeout, std::chrono::milliseconds(2500));
  ASSERT_EQ(options->faults.size(), 2u);
  EXPECT_EQ(options->faults[0].rank, 2u);
  EXPECT_EQ(options->faults[0].signal, SIGKILL);
  EXPECT_EQ(options->faults[0].at, std::chrono::milliseconds(500));
  EXPECT_EQ(options->faults[1].signal, SIGSTOP);
  EXPECT_FALSE(options->tag_output);
  EXPECT_TRUE(options->verbose);
  // Options after the program belong to the program.
  EXPECT_EQ(options->argv, (std::vector<std::string>{"prog", "--ft", "x"}));
}

// Open MPI 5's verdict for mpiexec --with-ft ulfm: only with --ft, where it means something.
TEST(OptionsTest, DeathsOkOnlyWithFaultTolerance) {
  auto options = ParseOptions({"-n", "2", "--ft", "--ft-deaths-ok", "prog"});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_TRUE(options->deaths_ok);
  EXPECT_FALSE(ParseOptions({"-n", "2", "prog"})->deaths_ok);
  auto refused = ParseOptions({"-n", "2", "--ft-deaths-ok", "prog"});
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("--ft-deaths-ok: only with --ft"), std::string::npos)
      << refused.status().ToString();
}

// MPI-4's names, as RFT_INITIAL_ERRHANDLER takes them (and in its canonical lower case).
TEST(OptionsTest, InitialErrhandlerTakesMpisNames) {
  EXPECT_EQ(ParseOptions({"-n", "2", "prog"})->initial_errhandler, "");
  for (const char* name : {"mpi_errors_are_fatal", "mpi_errors_abort", "mpi_errors_return"}) {
    auto options = ParseOptions({"-n", "2", "--initial-errhandler", name, "prog"});
    ASSERT_TRUE(options.ok()) << options.status().ToString();
    EXPECT_EQ(options->initial_errhandler, name);
  }
  auto upper = ParseOptions({"-n", "2", "--initial-errhandler", "MPI_ERRORS_RETURN", "prog"});
  ASSERT_TRUE(upper.ok()) << upper.status().ToString();
  EXPECT_EQ(upper->initial_errhandler, "mpi_errors_return");
}

TEST(OptionsTest, DoubleDashEndsOptions) {
  auto options = ParseOptions({"-np", "2", "--", "-prog-with-dash"});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_EQ(options->nprocs, 2u);
  EXPECT_EQ(options->argv, (std::vector<std::string>{"-prog-with-dash"}));
  EXPECT_FALSE(options->fault_tolerant);
  EXPECT_TRUE(options->tag_output);
}

TEST(OptionsTest, HelpNeedsNothingElse) {
  auto options = ParseOptions({"--help"});
  ASSERT_TRUE(options.ok());
  EXPECT_TRUE(options->help);
}

TEST(OptionsTest, AcrossNodesTheFaultsNameJobRanks) {
  // The job's size is known once the nodes have joined: a rank beyond this node's -n is fine.
  auto options = ParseOptions(
      {"-n", "2", "--join", "10.0.0.1:7000", "--node-name", "b", "--kill", "5@1", "prog"});
  ASSERT_TRUE(options.ok()) << options.status().ToString();
  EXPECT_TRUE(options->spans_nodes());
  EXPECT_EQ(options->join, "10.0.0.1:7000");
  EXPECT_EQ(options->node_name, "b");
  auto hub = ParseOptions({"-n", "1", "--nodes", "3", "--listen", "0.0.0.0:0", "prog"});
  ASSERT_TRUE(hub.ok()) << hub.status().ToString();
  EXPECT_EQ(hub->nodes, 3u);
  EXPECT_EQ(hub->listen, "0.0.0.0:0");
}

TEST(OptionsTest, EndpointsAreParsed) {
  auto endpoint = ParseEndpoint("192.0.2.1:7000");
  ASSERT_TRUE(endpoint.ok());
  EXPECT_EQ(endpoint->first, "192.0.2.1");
  EXPECT_EQ(endpoint->second, 7000);
  EXPECT_FALSE(ParseEndpoint("192.0.2.1").ok());
  EXPECT_FALSE(ParseEndpoint("192.0.2.1:").ok());
  EXPECT_FALSE(ParseEndpoint("a:99999").ok());
  EXPECT_FALSE(ParseEndpoint("a:1x").ok());
}

TEST(OptionsTest, BadInputNamesTheBadValue) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"-n", "2"}, "missing PROGRAM: nothing to run"},
      {{"prog"}, "missing -n N: the number of processes to start"},
      {{"-n"}, "-n: missing value"},
      {{"-n", "0", "p"}, "-n \"0\": expected a process count from 1 to 4096"},
      {{"-n", "-3", "p"}, "-n \"-3\": expected a process count from 1 to 4096"},
      {{"-n", "5000", "p"}, "-n \"5000\": expected a process count from 1 to 4096"},
      {{"-n", "2x", "p"}, "-n \"2x\": expected a process count from 1 to 4096"},
      {{"-n", "2", "--timeout", "0", "p"},
       "--timeout \"0\": expected a positive number of seconds"},
      {{"-n", "2", "--timeout", "-1", "p"},
       "--timeout \"-1\": expected a positive number of seconds"},
      {{"-n", "2", "--kill", "1", "p"}, "--kill \"1\": expected RANK@SECONDS, e.g. 2@0.5"},
      {{"-n", "2", "--kill", "a@1", "p"}, "--kill \"a@1\": expected RANK@SECONDS, e.g. 2@0.5"},
      {{"-n", "2", "--stop", "1@", "p"}, "--stop \"1@\": expected RANK@SECONDS, e.g. 2@0.5"},
      {{"-n", "2", "--kill", "2@1", "p"},
       "--kill rank 2: no such rank in a job of 2 processes (ranks 0..1)"},
      {{"-n", "2", "--bogus", "p"}, "unknown option \"--bogus\""},
      {{"-n", "2", "--nodes", "1", "p"}, "--nodes \"1\": expected a node count from 2 to 64"},
      {{"-n", "2", "--nodes", "65", "p"}, "--nodes \"65\": expected a node count from 2 to 64"},
      {{"-n", "2", "--listen", "1.2.3.4:7", "p"},
       "--listen 1.2.3.4:7: expected --nodes N (2 or more) with it"},
      {{"-n", "2", "--nodes", "2", "p"},
       "--nodes 2: expected --listen ADDR:PORT with it (this node is node 0)"},
      {{"-n", "2", "--join", "host", "p"},
       "--join \"host\": expected ADDRESS:PORT with a port from 0 to 65535"},
      {{"-n", "2", "--join", "host:70000", "p"},
       "--join \"host:70000\": expected ADDRESS:PORT with a port from 0 to 65535"},
      {{"-n", "2", "--join", ":7", "p"},
       "--join \":7\": expected ADDRESS:PORT with a port from 0 to 65535"},
      {{"-n", "2", "--nodes", "2", "--listen", "a:1", "--join", "b:2", "p"},
       "--listen and --join: a node either is node 0 (--listen) or joins it"},
      {{"-n", "2", "--node-name", "", "p"}, "--node-name: expected a non-empty value"},
      {{"-n", "2", "--initial-errhandler", "errors_return", "p"},
       "--initial-errhandler \"errors_return\": expected mpi_errors_are_fatal, mpi_errors_abort "
       "or mpi_errors_return"},
      {{"-n", "2", "--initial-errhandler", "", "p"},
       "--initial-errhandler \"\": expected mpi_errors_are_fatal, mpi_errors_abort or "
       "mpi_errors_return"},
      {{"-n", "2", "--initial-errhandler"}, "--initial-errhandler: missing value"},
  };
  for (const Case& c : cases) {
    auto options = ParseOptions(c.args);
    ASSERT_FALSE(options.ok()) << c.message;
    EXPECT_EQ(options.status().code(), RFT_ERR_ARG);
    EXPECT_EQ(options.status().message(), c.message);
  }
}

}  // namespace
}  // namespace rft::rftrun
