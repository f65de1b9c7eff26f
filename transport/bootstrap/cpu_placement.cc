#include "transport/bootstrap/cpu_placement.h"

#include <sched.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

namespace rft::transport {

CpuList OwnCpus() {
  CpuList cpus;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &set)) cpus.push_back(static_cast<uint16_t>(cpu));
  }
  return cpus;
}

bool MustShareCores(const std::vector<CpuList>& masks) {
  std::vector<size_t> order(masks.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return masks[a].size() < masks[b].size(); });
  std::vector<bool> taken;
  for (size_t index : order) {
    bool placed = false;
    for (uint16_t cpu : masks[index]) {
      if (cpu >= taken.size()) taken.resize(cpu + 1u, false);
      if (!taken[cpu]) {
        taken[cpu] = true;
        placed = true;
        break;
      }
    }
    if (!placed) return true;
  }
  return false;
}

std::vector<std::byte> EncodeCpuList(const CpuList& cpus) {
  std::vector<std::byte> bytes(cpus.size() * 2);
  if (!cpus.empty()) std::memcpy(bytes.data(), cpus.data(), bytes.size());
  return bytes;
}

StatusOr<CpuList> DecodeCpuList(std::span<const std::byte> bytes, uint32_t rank) {
  if (bytes.size() % 2 != 0) {
    return OtherError("rank " + std::to_string(rank) + " published a CPU list of " +
                      std::to_string(bytes.size()) + " bytes: expected 2 bytes per CPU");
  }
  CpuList cpus(bytes.size() / 2);
  if (!cpus.empty()) std::memcpy(cpus.data(), bytes.data(), bytes.size());
  return cpus;
}

}  // namespace rft::transport
