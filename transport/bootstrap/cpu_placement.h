// Whether the processes of one node must share cores: the question behind "may a progress loop
// spin?" (two busy-polling processes on one core cost 0.5–40 ms per message hop).
//
// Judged from every local rank's CPU affinity, not from the caller's alone: a launcher that
// binds each rank to a core of its own (Open MPI's mpirun, srun --cpu-bind) leaves each process
// a one-CPU mask, which says nothing about its neighbours.
#ifndef RFT_TRANSPORT_BOOTSTRAP_CPU_PLACEMENT_H_
#define RFT_TRANSPORT_BOOTSTRAP_CPU_PLACEMENT_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"

namespace rft::transport {

using CpuList = std::vector<uint16_t>;  // CPU numbers, ascending

// The CPUs this process may run on.
CpuList OwnCpus();

// True when the ranks cannot each have a CPU of their own within their masks (an empty mask
// counts as none). Greedy: ranks with the fewest CPUs choose first, each taking its lowest free
// CPU; exact for the placements launchers make (one CPU each, or all of a shared set).
bool MustShareCores(const std::vector<CpuList>& masks);

// Wire form for the PMIx exchange: u16 CPU numbers in host order (the ranks of one node).
std::vector<std::byte> EncodeCpuList(const CpuList& cpus);
// RFT_ERR_OTHER naming `rank` for an odd length.
StatusOr<CpuList> DecodeCpuList(std::span<const std::byte> bytes, uint32_t rank);

}  // namespace rft::transport

#endif  // RFT_TRANSPORT_BOOTSTRAP_CPU_PLACEMENT_H_
