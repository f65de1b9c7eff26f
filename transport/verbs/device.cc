#include "transport/verbs/device.h"

#include <arpa/inet.h>
#include <endian.h>
#include <hwloc.h>
#include <hwloc/openfabrics-verbs.h>
#include <infiniband/verbs.h>
#include <netinet/in.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "base/clock.h"
#include "base/config.h"
#include "base/log.h"

namespace rft::verbs {

namespace {

std::string LinkLayerName(uint8_t link_layer) {
  switch (link_layer) {
    case IBV_LINK_LAYER_INFINIBAND:
      return std::string(kInfiniBand);
    case IBV_LINK_LAYER_ETHERNET:
      return std::string(kEthernet);
    default:
      return "unknown";
  }
}

std::string TransportName(ibv_transport_type type) {
  switch (type) {
    case IBV_TRANSPORT_IB:
      return "InfiniBand";
    case IBV_TRANSPORT_IWARP:
      return "iWARP";
    case IBV_TRANSPORT_USNIC:
    case IBV_TRANSPORT_USNIC_UDP:
      return "usNIC";
    case IBV_TRANSPORT_UNSPECIFIED:
      return "unspecified";
    default:
      return "unknown";
  }
}

std::string Guid(__be64 guid_be) {
  const uint64_t guid = be64toh(guid_be);
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:%04x:%04x:%04x", static_cast<unsigned>(guid >> 48),
                static_cast<unsigned>((guid >> 32) & 0xffff),
                static_cast<unsigned>((guid >> 16) & 0xffff), static_cast<unsigned>(guid & 0xffff));
  return text;
}

std::string GidTypeName(uint32_t type) {
  switch (type) {
    case IBV_GID_TYPE_IB:
      return std::string(kGidIb);
    case IBV_GID_TYPE_ROCE_V1:
      return std::string(kGidRoceV1);
    case IBV_GID_TYPE_ROCE_V2:
      return std::string(kGidRoceV2);
    default:
      return "unknown";
  }
}

std::string GidText(const ibv_gid& gid) {
  char text[INET6_ADDRSTRLEN];
  if (inet_ntop(AF_INET6, gid.raw, text, sizeof(text)) == nullptr) return "?";
  return text;
}

Gid MakeGid(const ibv_gid_entry& entry) {
  return Gid{static_cast<int>(entry.gid_index), GidTypeName(entry.gid_type), GidText(entry.gid)};
}

bool IsZero(const ibv_gid& gid) {
  for (uint8_t byte : gid.raw) {
    if (byte != 0) return false;
  }
  return true;
}

// The valid GIDs of one port, one entry at a time: the fallback when the kernel cannot hand
// over the whole table (ibv_query_gid_table needs the ioctl interface). Empty slots answer
// with an error (ENODATA) or a zero GID, and are skipped.
std::vector<Gid> QueryGidsOneByOne(ibv_context* context, int port, int table_length) {
  std::vector<Gid> gids;
  for (int index = 0; index < table_length; ++index) {
    ibv_gid_entry entry;
    if (ibv_query_gid_ex(context, static_cast<uint32_t>(port), static_cast<uint32_t>(index), &entry,
                         0) != 0) {
      continue;
    }
    if (!IsZero(entry.gid)) gids.push_back(MakeGid(entry));
  }
  return gids;
}

VerbsDevice Describe(ibv_device* device) {
  VerbsDevice out;
  out.name = ibv_get_device_name(device);
  out.node_guid = Guid(ibv_get_device_guid(device));
  out.transport = TransportName(device->transport_type);
  ibv_context* context = ibv_open_device(device);
  if (context == nullptr) {
    out.error = std::string("ibv_open_device: ") + std::strerror(errno);
    return out;
  }
  ibv_device_attr attr;
  int rc = ibv_query_device(context, &attr);
  if (rc != 0) {
    out.error = std::string("ibv_query_device: ") + std::strerror(rc);
    ibv_close_device(context);
    return out;
  }
  out.max_qp = attr.max_qp;
  out.max_srq_wr = attr.max_srq_wr;
  out.max_cqe = attr.max_cqe;
  size_t table_total = 0;
  std::vector<int> table_lengths;
  for (int number = 1; number <= attr.phys_port_cnt; ++number) {
    ibv_port_attr port_attr;
    rc = ibv_query_port(context, static_cast<uint8_t>(number), &port_attr);
    if (rc != 0) {
      out.error = "ibv_query_port " + std::to_string(number) + ": " + std::strerror(rc);
      continue;
    }
    Port port;
    port.number = number;
    port.state = ibv_port_state_str(port_attr.state);
    port.link_layer = LinkLayerName(port_attr.link_layer);
    // enum ibv_mtu: 1 is 256 bytes, each step doubles.
    port.active_mtu = port_attr.active_mtu >= IBV_MTU_256 ? 128 << port_attr.active_mtu : 0;
    port.lid = port_attr.lid;
    out.ports.push_back(std::move(port));
    table_lengths.push_back(port_attr.gid_tbl_len);
    table_total += static_cast<size_t>(port_attr.gid_tbl_len);
  }
  // One call for every port's table (it lists only valid entries, with their types), so a
  // device with a 1024-entry table costs one ioctl, not a thousand.
  std::vector<ibv_gid_entry> entries(table_total);
  ssize_t count =
      entries.empty() ? 0 : ibv_query_gid_table(context, entries.data(), entries.size(), 0);
  if (count >= 0) {
    for (ssize_t i = 0; i < count; ++i) {
      for (Port& port : out.ports) {
        if (static_cast<uint32_t>(port.number) == entries[i].port_num) {
          port.gids.push_back(MakeGid(entries[i]));
        }
      }
    }
  } else {
    for (size_t i = 0; i < out.ports.size(); ++i) {
      out.ports[i].gids = QueryGidsOneByOne(context, out.ports[i].number, table_lengths[i]);
    }
  }
  ibv_close_device(context);
  return out;
}

// ---- Locality ----

// hwloc's topology and the bitmaps it hands out, released on every path.
class Topology {
 public:
  Topology() = default;
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;
  ~Topology() {
    if (process_cpus_ != nullptr) hwloc_bitmap_free(process_cpus_);
    if (loaded_) hwloc_topology_destroy(topology_);
  }

  Status Load() {
    if (hwloc_topology_init(&topology_) != 0) {
      return OtherError(std::string("hwloc_topology_init: ") + std::strerror(errno));
    }
    loaded_ = true;
    // I/O objects are filtered out by default; the OpenFabrics OS devices and the PCI devices
    // that place them are "important" ones.
    if (hwloc_topology_set_io_types_filter(topology_, HWLOC_TYPE_FILTER_KEEP_IMPORTANT) != 0) {
      return OtherError(std::string("hwloc_topology_set_io_types_filter: ") + std::strerror(errno));
    }
    if (hwloc_topology_load(topology_) != 0) {
      return OtherError(std::string("hwloc_topology_load: ") + std::strerror(errno));
    }
    process_cpus_ = hwloc_bitmap_alloc();
    if (process_cpus_ == nullptr) return OtherError("hwloc_bitmap_alloc: out of memory");
    // The whole process, not the calling thread: every thread's CPUs are where it may run.
    if (hwloc_get_cpubind(topology_, process_cpus_, HWLOC_CPUBIND_PROCESS) != 0) {
      return OtherError(std::string("hwloc_get_cpubind: ") + std::strerror(errno));
    }
    return Status::Ok();
  }

  DeviceLocality Of(const std::string& name) const {
    DeviceLocality out;
    hwloc_obj_t osdev = hwloc_ibv_get_device_osdev_by_name(topology_, name.c_str());
    if (osdev == nullptr) return out;
    hwloc_obj_t ancestor = hwloc_get_non_io_ancestor_obj(topology_, osdev);
    if (ancestor == nullptr || ancestor->cpuset == nullptr) return out;
    char* text = nullptr;
    if (hwloc_bitmap_list_asprintf(&text, ancestor->cpuset) >= 0 && text != nullptr) {
      out.near_cpus = text;
    }
    std::free(text);
    if (hwloc_bitmap_isincluded(process_cpus_, ancestor->cpuset)) {
      out.locality = Locality::kNear;
    } else if (hwloc_bitmap_intersects(process_cpus_, ancestor->cpuset)) {
      out.locality = Locality::kPartial;
    } else {
      out.locality = Locality::kFar;
    }
    return out;
  }

 private:
  hwloc_topology_t topology_ = nullptr;
  bool loaded_ = false;
  hwloc_bitmap_t process_cpus_ = nullptr;
};

// ---- Selection ----

bool IsIpv4Mapped(const std::string& address) {
  in6_addr parsed;
  return inet_pton(AF_INET6, address.c_str(), &parsed) == 1 && IN6_IS_ADDR_V4MAPPED(&parsed);
}

// The GID to use on `port`, or nullopt when it has none rft can use (or its link layer is
// neither InfiniBand nor Ethernet). `why` says what is missing.
std::optional<Endpoint> Usable(const VerbsDevice& device, const Port& port, std::string* why) {
  if (port.state != kPortActive) {
    *why = "port " + std::to_string(port.number) + " of " + device.name + " is " + port.state +
           ", not " + std::string(kPortActive);
    return std::nullopt;
  }
  Endpoint out;
  out.device = device.name;
  out.port = port.number;
  out.link_layer = port.link_layer;
  out.lid = port.lid;
  out.active_mtu = port.active_mtu;
  if (port.link_layer == kInfiniBand) {
    // GID 0 holds the port GID (subnet prefix + port GUID) on every IB port.
    out.gid_index = 0;
    for (const Gid& gid : port.gids) {
      if (gid.index == 0) {
        out.gid_type = gid.type;
        out.gid_address = gid.address;
      }
    }
    return out;
  }
  if (port.link_layer != kEthernet) {
    *why = "port " + std::to_string(port.number) + " of " + device.name + " has link layer " +
           port.link_layer + "; expected InfiniBand or Ethernet (RoCE)";
    return std::nullopt;
  }
  const Gid* best = nullptr;
  int best_rank = 0;
  for (const Gid& gid : port.gids) {
    int rank = 0;
    if (gid.type == kGidRoceV2) {
      rank = IsIpv4Mapped(gid.address) ? 3 : 2;
    } else if (gid.type == kGidRoceV1) {
      rank = 1;
    }
    if (rank > best_rank) {
      best = &gid;
      best_rank = rank;
    }
  }
  if (best == nullptr) {
    *why = "port " + std::to_string(port.number) + " of " + device.name +
           " is Ethernet but has no RoCE GID (is its network interface up with an address?)";
    return std::nullopt;
  }
  out.gid_index = best->index;
  out.gid_type = best->type;
  out.gid_address = best->address;
  return out;
}

std::string Names(const std::vector<VerbsDevice>& devices) {
  std::string out;
  for (const VerbsDevice& device : devices) out += (out.empty() ? "" : ", ") + device.name;
  return out;
}

std::string PortNumbers(const VerbsDevice& device) {
  std::string out;
  for (const Port& port : device.ports)
    out += (out.empty() ? "" : ", ") + std::to_string(port.number);
  return out.empty() ? "none" : out;
}

// The first usable port of `device`; `reasons` collects why the others are not.
std::optional<Endpoint> FirstUsable(const VerbsDevice& device, std::string* reasons) {
  auto add = [reasons](const std::string& reason) {
    *reasons += (reasons->empty() ? "" : "; ") + reason;
  };
  if (!device.error.empty()) add(device.name + ": " + device.error);
  if (device.ports.empty() && device.error.empty()) add(device.name + " has no ports");
  for (const Port& port : device.ports) {
    std::string why;
    if (std::optional<Endpoint> endpoint = Usable(device, port, &why)) return endpoint;
    add(why);
  }
  return std::nullopt;
}

// Lower is tried first. kFar and kUnknown share a rank: for a device hwloc cannot place (rxe on
// a virtual netdev), "far" would be a guess.
int LocalityRank(Locality locality) {
  switch (locality) {
    case Locality::kNear:
      return 0;
    case Locality::kPartial:
      return 1;
    case Locality::kFar:
    case Locality::kUnknown:
      break;
  }
  return 2;
}

}  // namespace

const char* LocalityName(Locality locality) {
  switch (locality) {
    case Locality::kUnknown:
      return "unknown";
    case Locality::kFar:
      return "far";
    case Locality::kPartial:
      return "partial";
    case Locality::kNear:
      return "near";
  }
  return "unknown";
}

StatusOr<std::vector<DeviceLocality>> QueryLocality(const std::vector<std::string>& names) {
  Topology topology;
  if (Status loaded = topology.Load(); !loaded.ok()) return loaded;
  std::vector<DeviceLocality> out;
  out.reserve(names.size());
  for (const std::string& name : names) out.push_back(topology.Of(name));
  return out;
}

StatusOr<std::vector<VerbsDevice>> ListDevices() {
  std::vector<VerbsDevice> out;
  int count = 0;
  errno = 0;
  ibv_device** list = ibv_get_device_list(&count);
  if (list == nullptr) {
    // ENOSYS: the kernel has no RDMA at all, which means no devices rather than a failure.
    if (errno == ENOSYS || errno == 0) return out;
    return OtherError(std::string("ibv_get_device_list: ") + std::strerror(errno));
  }
  for (int i = 0; i < count; ++i) out.push_back(Describe(list[i]));
  ibv_free_device_list(list);
  if (out.empty()) return out;
  std::vector<std::string> names;
  for (const VerbsDevice& device : out) names.push_back(device.name);
  StatusOr<std::vector<DeviceLocality>> localities = QueryLocality(names);
  if (!localities.ok()) {
    RFT_LOG_INFO("verbs: device locality unknown (%s); devices are tried in the order listed",
                 localities.status().message().c_str());
    return out;
  }
  for (size_t i = 0; i < out.size(); ++i) out[i].locality = (*localities)[i];
  return out;
}

StatusOr<Endpoint> SelectPort(const std::vector<VerbsDevice>& devices, std::string_view requested) {
  const std::string value = "RFT_NET_DEVICE=" + std::string(requested);
  if (devices.empty()) {
    if (requested.empty()) return OtherError("no RDMA device on this host");
    return ArgError(value + ": no RDMA device on this host");
  }
  if (requested.empty()) {
    std::vector<const VerbsDevice*> order;
    for (const VerbsDevice& device : devices) order.push_back(&device);
    std::stable_sort(order.begin(), order.end(), [](const VerbsDevice* a, const VerbsDevice* b) {
      return LocalityRank(a->locality.locality) < LocalityRank(b->locality.locality);
    });
    std::string reasons;
    for (const VerbsDevice* device : order) {
      if (std::optional<Endpoint> endpoint = FirstUsable(*device, &reasons)) return *endpoint;
    }
    return OtherError("no usable RDMA port on this host: " + reasons);
  }

  std::string_view name = requested;
  int port_number = 0;  // 0: any port of the device
  if (size_t colon = requested.find(':'); colon != std::string_view::npos) {
    name = requested.substr(0, colon);
    std::string_view digits = requested.substr(colon + 1);
    bool valid = !name.empty() && !digits.empty() && digits.size() <= 3;
    for (char c : digits) valid = valid && c >= '0' && c <= '9';
    if (valid) port_number = std::stoi(std::string(digits));
    if (!valid || port_number == 0) {
      return ArgError(value + ": expected DEVICE or DEVICE:PORT, such as rxe0 or mlx5_0:1");
    }
  }
  const VerbsDevice* device = nullptr;
  for (const VerbsDevice& candidate : devices) {
    if (candidate.name == name) device = &candidate;
  }
  if (device == nullptr) {
    return ArgError(value + ": no such device; devices here: " + Names(devices));
  }
  if (port_number == 0) {
    std::string reasons;
    if (std::optional<Endpoint> endpoint = FirstUsable(*device, &reasons)) return *endpoint;
    return ArgError(value + ": no usable port on " + device->name + ": " + reasons);
  }
  for (const Port& port : device->ports) {
    if (port.number != port_number) continue;
    std::string why;
    if (std::optional<Endpoint> endpoint = Usable(*device, port, &why)) return *endpoint;
    return ArgError(value + ": " + why);
  }
  return ArgError(value + ": " + device->name + " has no port " + std::to_string(port_number) +
                  "; its ports: " + PortNumbers(*device));
}

namespace {

struct Selection {
  StatusOr<std::optional<Endpoint>> endpoint = std::optional<Endpoint>();
  std::string why_not;
};

Selection SelectOnce() {
  Selection selection;
  const int64_t start = MonotonicNanos();
  StatusOr<std::vector<VerbsDevice>> devices = ListDevices();
  RFT_LOG_INFO("verbs: %zu device(s) listed in %.1f ms", devices.ok() ? devices->size() : 0,
               static_cast<double>(MonotonicNanos() - start) / 1e6);
  if (!devices.ok() || devices->empty()) {
    selection.why_not = devices.ok() ? "no verbs device on this host" : devices.status().message();
    return selection;
  }
  StatusOr<std::string> requested = config::GetString("RFT_NET_DEVICE");
  if (!requested.ok()) {
    selection.endpoint = requested.status();
    return selection;
  }
  StatusOr<Endpoint> endpoint = SelectPort(*devices, *requested);
  if (!endpoint.ok()) {
    selection.why_not = endpoint.status().message();
    return selection;
  }
  selection.endpoint = std::optional<Endpoint>(std::move(*endpoint));
  return selection;
}

}  // namespace

StatusOr<std::optional<Endpoint>> SelectConfiguredPort(std::string* why_not) {
  // The data plane and the control plane both ask. Listing opens every device, reads its GID
  // tables and loads hwloc's topology with the PCI devices (tens of milliseconds on a large
  // node, hundreds in an emulated guest): done once per process, and both planes get the same
  // port by construction. Never freed: it outlives every plane.
  static const Selection* const selection = new Selection(SelectOnce());
  *why_not = selection->why_not;
  return selection->endpoint;
}

}  // namespace rft::verbs
