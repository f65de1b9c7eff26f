// THE list of rft settings. Add new ones here, grouped by layer, and describe them in
// docs/configuration.md. Doc strings are full sentences; say what the setting bounds or enables
// and what happens at the limit.
#include "base/settings.h"

namespace rft::config::internal {

namespace {

constexpr int64_t kMillisecond = 1000000;
// PMIx takes a timeout as an int of seconds; a day fits with room, and no start-up waits that
// long on purpose.
constexpr int64_t kDay = int64_t{86400} * 1000 * kMillisecond;

constexpr SettingSpec kSettings[] = {
    // base: logging.
    {
        .name = "RFT_LOG_LEVEL",
        .kind = Kind::kEnum,
        .default_text = "warn",
        .doc = "Verbosity of rft's diagnostic log on stderr.",
        .choices = "error|warn|info|debug|trace",
    },
    {
        .name = "RFT_LOG_PREFIX_RANK",
        .kind = Kind::kBool,
        .default_text = "y",
        .doc = "Prefix each log line with the process's rank.",
    },
    // base: tests.
    {
        .name = "RFT_FAULT_INJECT",
        .kind = Kind::kString,
        .default_text = "",
        .doc = "For tests: named points of the recovery paths where the given job rank ends "
               "itself with SIGKILL, as <point>@<job rank>[,...] (base/fault_injection.h lists "
               "the points). Empty: none.",
    },
    // base: the failure timeline.
    {
        .name = "RFT_TIMELINE",
        .kind = Kind::kString,
        .default_text = "",
        .doc = "A directory (made if missing) where each process writes its failure events "
               "(suspected, failed and by what source, broadcast, revoked, agreed, shrunk, "
               "spawned, ...) as JSON lines, rank-<job rank>-<pid>.jsonl; tools/rft_timeline "
               "merges a job's files into one ordered table and a picture. Empty: none, at no "
               "cost.",
    },
    // transport/bootstrap.
    {
        .name = "RFT_PMIX_TIMEOUT",
        .kind = Kind::kDuration,
        .default_text = "10s",
        .doc = "Upper bound on each PMIx lookup (PMIx_Get) and fence during bootstrap; a peer "
               "that never published its address fails the lookup instead of hanging. PMIx "
               "counts whole seconds (rounded up), up to a day.",
        .min = kMillisecond,
        .max = kDay,
    },
    // transport: data plane.
    {
        .name = "RFT_EAGER_LIMIT",
        .kind = Kind::kSize,
        .default_text = "8k",
        .doc = "Largest message sent eagerly (copied through the transport's buffers); larger "
               "messages use the zero-copy rendezvous, fetched straight into the receive buffer.",
        .min = 0,
        .max = int64_t{1} << 30,
    },
    {
        .name = "RFT_PROGRESS",
        .kind = Kind::kEnum,
        .default_text = "auto",
        .doc = "How waits make progress: poll spins on the network, block sleeps on the "
               "transport's event descriptor. auto blocks when the node runs more processes than "
               "it has cores (spinning processes sharing a core cost milliseconds per message) "
               "and polls otherwise.",
        .choices = "auto|poll|block",
    },
    {
        .name = "RFT_RENDEZVOUS",
        .kind = Kind::kEnum,
        .default_text = "auto",
        .doc = "How messages above RFT_EAGER_LIMIT travel. cma: between processes of one node, "
               "the receiver copies the data straight from the sender's memory with "
               "process_vm_readv (one copy, no UCX rendezvous); start-up fails if the system "
               "forbids it. ucx: UCX's rendezvous. auto: cma where the system allows it, else "
               "ucx; processes on other nodes always use ucx.",
        .choices = "auto|cma|ucx",
    },
    {
        .name = "RFT_SHM_RINGS",
        .kind = Kind::kBool,
        .default_text = "y",
        .doc = "Between processes of one node that use the same-node rendezvous, send every "
               "data-plane message through a ring per ordered pair in shared memory (a sender "
               "killed while writing cannot block its receiver, and 8-byte messages take about "
               "half UCX's time). n: through UCX's shared-memory transports.",
    },
    {
        .name = "RFT_NODE_COLLECTIVES",
        .kind = Kind::kBool,
        .default_text = "y",
        .doc = "On a communicator whose members all run on this node and poll (RFT_PROGRESS), "
               "run blocking barrier, bcast, reduce and allreduce of up to 1 KiB through a "
               "shared-memory area of the communicator (flags and data in cache lines) instead "
               "of messages; the members decide together at the communicator's first such "
               "call. n: always through messages.",
    },
    {
        .name = "RFT_TRANSPORT",
        .kind = Kind::kEnum,
        .default_text = "auto",
        .doc = "Which path carries the data plane's messages between processes that no "
               "same-node ring joins. verbs: the verbs backend (RDMA SEND for eager messages, "
               "RDMA READ for the rendezvous) with every peer; start-up fails naming a rank "
               "without a usable port (RFT_NET_DEVICE). ucx: UCX's active messages. auto: verbs "
               "with each peer that found a usable port as this process did, UCX with the "
               "others. Replacements always use UCX.",
        .choices = "auto|ucx|verbs",
    },
    // transport/verbs.
    {
        .name = "RFT_NET_DEVICE",
        .kind = Kind::kString,
        .default_text = "",
        .doc = "The RDMA port the verbs backend uses: a device (mlx5_0, its first usable port) or "
               "a device and port (mlx5_0:1); a name that is not there, or a port that is down, "
               "fails start-up naming it. Empty: the first usable port, trying first the devices "
               "near the CPUs the process may run on (hwloc), then the rest, each in the order "
               "libibverbs lists them.",
    },
    {
        .name = "RFT_VERBS_READ_SIZE",
        .kind = Kind::kSize,
        .default_text = "1g",
        .doc = "Largest RDMA READ the verbs rendezvous posts (the port's largest message bounds "
               "it too); a longer message is read in pieces of this size, up to 4 in flight.",
        .min = 4096,
        .max = int64_t{1} << 31,
    },
    {
        .name = "RFT_VERBS_PEERS",
        .kind = Kind::kInt,
        .default_text = "0",
        .doc = "The most peers a process talks to through verbs at once (each holds C + 2 "
               "receives of the shared receive queue, and a QP); a pair beyond it, at either "
               "end, talks through UCX. 0: every peer, as far as the device's shared receive "
               "queue and completion queue reach.",
        .min = 0,
        .max = int64_t{1} << 30,
    },
    {
        .name = "RFT_VERBS_CLOSE_IDLE",
        .kind = Kind::kBool,
        .default_text = "y",
        .doc = "When a pair needs a place for verbs and none is free (RFT_VERBS_PEERS), the "
               "least recently used idle pair closes its QPs, with both ends agreeing, and "
               "talks through UCX from then on: its place goes to the new pair. n: the new "
               "pair talks through UCX instead.",
    },
    {
        .name = "RFT_VERBS_PLACE_WAIT",
        .kind = Kind::kDuration,
        .default_text = "5ms",
        .doc = "How long a pair that needs a place for verbs waits for the idle pair asked to "
               "close (RFT_VERBS_CLOSE_IDLE) to give one back. The asked process answers only "
               "while it calls into rft; past this, the waiting pair talks through UCX (and "
               "comes back later: RFT_VERBS_RETURN_AFTER), so its messages never wait for a "
               "third process.",
        .min = 0,
        .max = int64_t{600} * 1000 * kMillisecond,
    },
    {
        .name = "RFT_VERBS_RETURN_AFTER",
        .kind = Kind::kInt,
        .default_text = "1024",
        .doc = "A pair that talks through UCX after it was refused a place or closed its QPs "
               "tries verbs again once one end sent it this many messages through UCX: it "
               "connects if a place is free at both ends, or an idle pair there gives one back "
               "(RFT_VERBS_CLOSE_IDLE), its messages in order. 0: such a pair stays on UCX.",
        .min = 0,
        .max = int64_t{1} << 30,
    },
    {
        .name = "RFT_REGISTRATION_CACHE",
        .kind = Kind::kSize,
        .default_text = "1g",
        .doc = "Memory the verbs rendezvous keeps registered between transfers, so that a "
               "buffer sent from or received into again is not registered again (up to 64 "
               "ranges; the least recently used goes first). A range is dropped when its "
               "memory is unmapped (UCX's memory hooks). 0: every transfer registers its "
               "buffer and deregisters it after.",
        .min = 0,
        .max = int64_t{1} << 40,
    },
    // detector.
    {
        .name = "RFT_HEARTBEAT_PERIOD",
        .kind = Kind::kDuration,
        .default_text = "4ms",
        .doc = "How often each process puts a heartbeat into its observer's memory (η). Shorter "
               "finds hung processes sooner and costs more control-thread wake-ups (about 20 us "
               "of CPU each on this VM: 4 ms keeps the detector under 1% of a core).",
        .min = 100000,
        .max = int64_t{10} * 1000 * kMillisecond,
    },
    {
        .name = "RFT_HEARTBEAT_TIMEOUT",
        .kind = Kind::kDuration,
        .default_text = "20ms",
        .doc = "Silence after which an observer suspects the process it observes (δ); the "
               "suspect is declared failed and killed (fail-stop). Must exceed twice the "
               "period; too short on a loaded node declares slow processes dead.",
        .min = kMillisecond,
        .max = int64_t{600} * 1000 * kMillisecond,
    },
    {
        .name = "RFT_PROGRESS_THREAD",
        .kind = Kind::kBool,
        .default_text = "y",
        .doc = "Run the control plane (heartbeats, failure propagation) in its own thread. n: "
               "it runs only when the program calls the detector's Poll, so a process busy "
               "elsewhere for longer than RFT_HEARTBEAT_TIMEOUT is declared failed.",
    },
    {
        .name = "RFT_CONTROL_SOCKETS",
        .kind = Kind::kBool,
        .default_text = "y",
        .doc = "Send the control messages between processes of one node through a datagram "
               "socket per process. n: they go as those to other nodes do (verbs SENDs where "
               "there is a verbs port, else UCX active messages), to test that path on one "
               "node.",
    },
    // ---- API (ulfm_api) ----
    {
        .name = "RFT_FINALIZE_WARNINGS",
        .kind = Kind::kBool,
        .default_text = "y",
        .doc = "At rft_finalize, gather the warnings the ranks raised (rft_warning) and have the "
               "lowest live rank print one line per rank that raised any. n: finalize does not "
               "wait for the other processes.",
    },
    {
        .name = "RFT_INITIAL_ERRHANDLER",
        .kind = Kind::kEnum,
        .default_text = "mpi_errors_are_fatal",
        .doc = "MPI-4's mpi_initial_errhandler: the error handler COMM_WORLD, COMM_SELF and a "
               "replacement's parent communicator start with at rft_init (RFT_ERRORS_ARE_FATAL, "
               "RFT_ERRORS_ABORT or RFT_ERRORS_RETURN), and MPI_COMM_WORLD and MPI_COMM_SELF at "
               "MPI_Init (rftrun and mpiexec --initial-errhandler set it).",
        .choices = "mpi_errors_are_fatal|mpi_errors_abort|mpi_errors_return",
    },
    // ---- MPI layer (ulfm_api/mpi; mpiexec sets these) ----
    {
        .name = "RFT_MPI_FT",
        .kind = Kind::kEnum,
        .default_text = "ulfm",
        .doc = "Fault tolerance of an MPI program on rft: ulfm, a failed process is an error "
               "the survivors see (MPIX_ERR_PROC_FAILED) and they go on; no, a failure ends the "
               "job (mpiexec --with-ft no, its default, sets it).",
        .choices = "ulfm|no",
    },
};

std::span<const SettingSpec> g_table_for_testing;

}  // namespace

std::span<const SettingSpec> SettingTable() {
  return g_table_for_testing.empty() ? std::span<const SettingSpec>(kSettings)
                                     : g_table_for_testing;
}

void SetSettingTableForTesting(std::span<const SettingSpec> table) { g_table_for_testing = table; }

}  // namespace rft::config::internal
