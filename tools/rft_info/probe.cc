#include "tools/rft_info/probe.h"

#include <hwloc.h>
#include <ucp/api/ucp.h>
#include <uct/api/uct.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "transport/verbs/device.h"

namespace rft::info {

namespace {

const char* DeviceTypeName(uct_device_type_t type) {
  switch (type) {
    case UCT_DEVICE_TYPE_NET:
      return "net";
    case UCT_DEVICE_TYPE_SHM:
      return "shm";
    case UCT_DEVICE_TYPE_ACC:
      return "acc";
    case UCT_DEVICE_TYPE_SELF:
      return "self";
    default:
      return "other";
  }
}

std::string UcsError(const char* call, ucs_status_t status) {
  return std::string(call) + ": " + ucs_status_string(status);
}

// The transports of one memory domain, appended to `out`.
void ListMdTransports(uct_component_h component, const char* md_name, UcxInfo* out) {
  uct_md_config_t* config = nullptr;
  ucs_status_t status = uct_md_config_read(component, nullptr, nullptr, &config);
  if (status != UCS_OK) {
    out->error = UcsError("uct_md_config_read", status);
    return;
  }
  uct_md_h md = nullptr;
  status = uct_md_open(component, md_name, config, &md);
  uct_config_release(config);
  if (status != UCS_OK) {
    // A memory domain whose hardware is absent may refuse to open; that is not a tool error.
    return;
  }
  uct_tl_resource_desc_t* resources = nullptr;
  unsigned count = 0;
  status = uct_md_query_tl_resources(md, &resources, &count);
  if (status == UCS_OK) {
    for (unsigned i = 0; i < count; ++i) {
      out->transports.push_back(UcxTransport{resources[i].tl_name, resources[i].dev_name,
                                             DeviceTypeName(resources[i].dev_type), md_name});
    }
    uct_release_tl_resource_list(resources);
  }
  uct_md_close(md);
}

int CountObjects(hwloc_topology_t topology, hwloc_obj_type_t type) {
  int n = hwloc_get_nbobjs_by_type(topology, type);
  return n < 0 ? 0 : n;  // -1 means "spread over several depths"; never for these types
}

}  // namespace

UcxInfo ProbeUcx() {
  UcxInfo out;
  out.version = ucp_get_version_string();
  uct_component_h* components = nullptr;
  unsigned num_components = 0;
  ucs_status_t status = uct_query_components(&components, &num_components);
  if (status != UCS_OK) {
    out.error = UcsError("uct_query_components", status);
    return out;
  }
  for (unsigned c = 0; c < num_components; ++c) {
    uct_component_attr_t attr;
    std::memset(&attr, 0, sizeof(attr));
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_NAME | UCT_COMPONENT_ATTR_FIELD_MD_RESOURCE_COUNT;
    status = uct_component_query(components[c], &attr);
    if (status != UCS_OK) {
      out.error = UcsError("uct_component_query", status);
      continue;
    }
    if (attr.md_resource_count == 0) continue;
    std::vector<uct_md_resource_desc_t> mds(attr.md_resource_count);
    attr.field_mask = UCT_COMPONENT_ATTR_FIELD_MD_RESOURCES;
    attr.md_resources = mds.data();
    status = uct_component_query(components[c], &attr);
    if (status != UCS_OK) {
      out.error = UcsError("uct_component_query", status);
      continue;
    }
    for (const uct_md_resource_desc_t& md : mds) ListMdTransports(components[c], md.md_name, &out);
  }
  uct_release_component_list(components);
  return out;
}

VerbsInfo ProbeVerbs() {
  VerbsInfo out;
  StatusOr<std::vector<verbs::VerbsDevice>> listed = verbs::ListDevices();
  if (listed.ok()) {
    out.devices = *std::move(listed);
  } else {
    out.error = listed.status().message();
  }
  return out;
}

TopologyInfo ProbeTopology() {
  TopologyInfo out;
  unsigned v = hwloc_get_api_version();
  out.api_version = std::to_string(v >> 16) + "." + std::to_string((v >> 8) & 0xff) + "." +
                    std::to_string(v & 0xff);
  hwloc_topology_t topology;
  if (hwloc_topology_init(&topology) != 0) {
    out.error = std::string("hwloc_topology_init: ") + std::strerror(errno);
    return out;
  }
  if (hwloc_topology_load(topology) != 0) {
    out.error = std::string("hwloc_topology_load: ") + std::strerror(errno);
  } else {
    out.packages = CountObjects(topology, HWLOC_OBJ_PACKAGE);
    out.cores = CountObjects(topology, HWLOC_OBJ_CORE);
    out.pus = CountObjects(topology, HWLOC_OBJ_PU);
    out.numa_nodes = CountObjects(topology, HWLOC_OBJ_NUMANODE);
  }
  hwloc_topology_destroy(topology);
  return out;
}

}  // namespace rft::info
