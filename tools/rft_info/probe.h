// What rft_info finds on this machine: UCX transports, verbs devices, hardware topology.
//
// Each probe fills a plain struct and never fails the tool: a library that cannot answer leaves
// its `error` set and the rest of the report still prints.
#ifndef RFT_TOOLS_RFT_INFO_PROBE_H_
#define RFT_TOOLS_RFT_INFO_PROBE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "transport/verbs/device.h"

namespace rft::info {

struct UcxTransport {
  std::string transport;    // "tcp"
  std::string device;       // "eth0"
  std::string device_type;  // "net", "shm", "acc", "self"
  std::string md;           // the memory domain that offers it, "tcp"
};

struct UcxInfo {
  std::string version;  // ucp_get_version_string()
  std::vector<UcxTransport> transports;
  std::string error;  // empty when the listing worked
};

// The verbs backend's own listing (transport/verbs/device.h), so that rft_info shows exactly
// what the backend chooses from.
using VerbsGid = verbs::Gid;
using VerbsPort = verbs::Port;
using VerbsDevice = verbs::VerbsDevice;

struct VerbsInfo {
  std::vector<VerbsDevice> devices;
  std::string error;  // ibv_get_device_list failed (no devices is not an error)
};

struct TopologyInfo {
  std::string api_version;  // hwloc API of the library in use, "2.8.0" (hwloc 2.9 has API 2.8)
  int packages = 0;
  int cores = 0;
  int pus = 0;
  int numa_nodes = 0;
  std::string error;
};

UcxInfo ProbeUcx();
VerbsInfo ProbeVerbs();
TopologyInfo ProbeTopology();

}  // namespace rft::info

#endif  // RFT_TOOLS_RFT_INFO_PROBE_H_
