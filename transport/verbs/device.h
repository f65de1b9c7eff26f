// The verbs devices of this host as plain data, and the choice of the port rft uses.
//
// ListDevices() and QueryLocality() are the only functions here that talk to libibverbs and hwloc;
// SelectPort() is a pure function of their description, so the selection rules are tested without
// RDMA hardware.
#ifndef RFT_TRANSPORT_VERBS_DEVICE_H_
#define RFT_TRANSPORT_VERBS_DEVICE_H_

#include <optional>
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

// Where a device sits relative to the CPUs this process may run on, from hwloc: the CPUs of the
// device's first non-I/O ancestor (its package or NUMA node) against the process's binding.
enum class Locality {
  kUnknown,  // hwloc has no OS device for it: soft devices such as rxe have no PCI parent
  kFar,      // none of the process's CPUs is near it
  kPartial,  // some of them are
  kNear,     // all of them are
};

// "unknown", "far", "partial", "near".
const char* LocalityName(Locality locality);

struct DeviceLocality {
  Locality locality = Locality::kUnknown;
  std::string near_cpus;  // hwloc's list syntax, "0-3,8"; empty when unknown
};

struct VerbsDevice {
  std::string name;       // "mlx5_0", "rxe0"
  std::string node_guid;  // "0002:c903:0042:a3f0"
  std::string transport;  // "InfiniBand" (RoCE too), "iWARP", "usNIC", ...
  std::vector<Port> ports;
  // The device's limits that bound how many peers a process connects at once (docs/verbs.md,
  // "A working set of peers"): QPs, receives in one shared receive queue, entries in one CQ.
  int max_qp = 0;
  int max_srq_wr = 0;
  int max_cqe = 0;
  std::string error;  // set when the device could not be opened or queried; it has no ports then
  DeviceLocality locality;
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

// Every verbs device with its ports, GIDs and locality. A host without RDMA (no device, or a
// kernel without RDMA support) gives an empty list, not an error; a device that cannot be opened
// is listed with its `error` set. When hwloc cannot answer, every locality stays kUnknown (logged
// at info level): locality only orders the choice, it never makes a device unusable.
StatusOr<std::vector<VerbsDevice>> ListDevices();

// hwloc's locality of each named verbs device (HWLOC_OBJ_OSDEV_OPENFABRICS of that name, in a
// topology with the important I/O devices), one entry per name in order, relative to the CPUs
// this process may run on (hwloc_get_cpubind). A name hwloc has no OS device for is kUnknown.
// Errors only when the topology or the binding cannot be read.
StatusOr<std::vector<DeviceLocality>> QueryLocality(const std::vector<std::string>& names);

// Picks the port named by `requested`, the value of RFT_NET_DEVICE: "" for any, "rxe0" for
// that device's first usable port, "rxe0:1" for that port. A usable port is active, on
// InfiniBand (GID index 0) or on Ethernet with a RoCE GID (an IPv4-mapped RoCE v2 GID first,
// then any RoCE v2, then RoCE v1: v2 is routable and the IPv4 one is what the peers' IP
// addresses name). Errors name the value and what was expected.
//
// With no request, devices are tried nearest first: kNear, then kPartial, then the rest (kFar and
// kUnknown alike, so a device hwloc knows nothing about is never put behind one it knows to be
// far); within a rank, in the order listed. A request always wins over locality.
StatusOr<Endpoint> SelectPort(const std::vector<VerbsDevice>& devices, std::string_view requested);

// ListDevices and SelectPort with RFT_NET_DEVICE's value: the port the data plane and the control
// plane open. No endpoint, with the reason in `why_not`, when this host has none to offer (no
// device, a requested one that is not there, no usable port); an error only when the setting
// cannot be read. Chosen on the first call, which later calls return (thread-safe): a process
// lists its devices once, and RFT_NET_DEVICE is read then.
StatusOr<std::optional<Endpoint>> SelectConfiguredPort(std::string* why_not);

}  // namespace rft::verbs

#endif  // RFT_TRANSPORT_VERBS_DEVICE_H_
