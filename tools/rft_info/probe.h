// What rft_info finds on this machine: UCX transports, verbs devices, hardware topology.
//
// Each probe fills a plain struct and never fails the tool: a library that cannot answer leaves
// its `error` set and the rest of the report still prints.
#ifndef RFT_TOOLS_RFT_INFO_PROBE_H_
#define RFT_TOOLS_RFT_INFO_PROBE_H_

#include <cstdint>
#include <string>
#include <vector>

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

struct VerbsGid {
  int index = 0;
  std::string type;     // "IB", "RoCE v1", "RoCE v2"
  std::string address;  // IPv6 text; "::ffff:192.0.2.1" for an IPv4 RoCE v2 GID
};

struct VerbsPort {
  int number = 0;
  std::string state;       // "PORT_ACTIVE", as ibv_port_state_str prints it
  std::string link_layer;  // "InfiniBand", "Ethernet", "unknown"
  int active_mtu = 0;      // bytes
  int lid = 0;
  std::vector<VerbsGid> gids;  // the valid GID table entries (transport/verbs:device lists them)
};

struct VerbsDevice {
  std::string name;       // "mlx5_0", "rxe0"
  std::string node_guid;  // "0002:c903:0042:a3f0"
  std::string transport;  // "InfiniBand", "iWARP", ...
  std::vector<VerbsPort> ports;
  std::string error;  // when the device could not be opened or queried
};

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
