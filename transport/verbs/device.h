// The verbs devices of this host as plain data, and the choice of the port rft uses.
//
// ListDevices() is the only function here that talks to libibverbs; SelectPort() is a pure
// function of its description, so the selection rules are tested without RDMA hardware.
#ifndef RFT_TRANSPORT_VERBS_DEVICE_H_
#define RFT_TRANSPORT_VERBS_DEVICE_H_

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace rft::verbs {

// Gid::type values, as rdma-core's sysfs and ibv_devinfo spell them.
inline constexpr std::string_view kGidIb = "IB";
inline constexpr std::string_view kGidRoceV1 = "RoCE v1";
inline constexpr std::string_view kGidRoceV2 = "RoCE v2";

// Port::state of a usable port, as ibv_port_state_str spells it (rdma-core 44: "down", "init",
// "armed", "active", ...), and the link layers rft speaks.
inline constexpr std::string_view kPortActive = "active";
inline constexpr std::string_view kInfiniBand = "InfiniBand";
inline constexpr std::string_view kEthernet = "Ethernet";

struct Gid {
  int index = 0;
  std::string type;     // kGidIb, kGidRoceV1 or kGidRoceV2
  std::string address;  // IPv6 text: "fe80::...", or "::ffff:192.0.2.1" for an IPv4 RoCE v2 GID
};

struct Port {
  int number = 0;          // from 1
  std::string state;       // ibv_port_state_str: "active", "down", ...
  std::string link_layer;  // kInfiniBand, kEthernet or "unknown"
  int active_mtu = 0;      // bytes
  int lid = 0;             // InfiniBand only; 0 on Ethernet
  std::vector<Gid> gids;   // the valid entries of the GID table, by index
};

struct VerbsDevice {
  std::string name;       // "mlx5_0", "rxe0"
  std::string node_guid;  // "0002:c903:0042:a3f0"
  std::string transport;  // "InfiniBand" (RoCE too), "iWARP", "usNIC", ...
  std::vector<Port> ports;
  std::string error;  // set when the device could not be opened or queried; it has no ports then
};

// The port rft talks through, and how it addresses it.
struct Endpoint {
  std::string device;
  int port = 0;
  std::string link_layer;
  int gid_index = 0;
  std::string gid_type;     // empty on InfiniBand when the GID table was not listed
  std::string gid_address;  // likewise
  int lid = 0;
  int active_mtu = 0;
};

// Every verbs device with its ports and GIDs. A host without RDMA (no device, or a kernel without
// RDMA support) gives an empty list, not an error; a device that cannot be opened is listed with
// its `error` set.
StatusOr<std::vector<VerbsDevice>> ListDevices();

// Picks the port named by `requested`, the value of RFT_NET_DEVICE: "" for any, "rxe0" for
// that device's first usable port, "rxe0:1" for that port. A usable port is active, on
// InfiniBand (GID index 0) or on Ethernet with a RoCE GID (an IPv4-mapped RoCE v2 GID first,
// then any RoCE v2, then RoCE v1: v2 is routable and the IPv4 one is what the peers' IP
// addresses name). Errors name the value and what was expected.
//
// With several usable ports and no request the first one listed wins; choosing the one closest
// to the calling process (hwloc) is the next step.
StatusOr<Endpoint> SelectPort(const std::vector<VerbsDevice>& devices, std::string_view requested);

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_DEVICE_H_
