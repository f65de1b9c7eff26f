// SelectPort on synthetic device descriptions (no RDMA hardware needed), its locality order on
// synthetic localities, and ListDevices and QueryLocality on this host, which has no device.
#include "transport/verbs/device.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace rft::verbs {
namespace {

Port RocePort(int number, std::string state, std::vector<Gid> gids) {
  return Port{number, std::move(state), "Ethernet", 1024, 0, std::move(gids)};
}

// What rxe shows: GID 0 the IPv6 link-local address (RoCE v1 and v2), then the IPv4-mapped one.
std::vector<Gid> RxeGids() {
  return {{0, "RoCE v1", "fe80::5054:ff:fe12:3456"},
          {1, "RoCE v2", "fe80::5054:ff:fe12:3456"},
          {2, "RoCE v1", "::ffff:192.0.2.1"},
          {3, "RoCE v2", "::ffff:192.0.2.1"}};
}

Port IbPort(int number, std::string state) {
  return Port{
      number, std::move(state), "InfiniBand", 4096, 17, {{0, "IB", "fe80::2:c903:42:a3f1"}}};
}

VerbsDevice Device(std::string name, std::vector<Port> ports, std::string error = "") {
  VerbsDevice device;
  device.name = std::move(name);
  device.ports = std::move(ports);
  device.error = std::move(error);
  return device;
}

VerbsDevice Located(VerbsDevice device, Locality locality, std::string near_cpus = "0-1") {
  device.locality.locality = locality;
  device.locality.near_cpus = locality == Locality::kUnknown ? "" : std::move(near_cpus);
  return device;
}

std::string Error(const StatusOr<Endpoint>& selected) {
  EXPECT_FALSE(selected.ok());
  return selected.ok() ? "" : selected.status().message();
}

TEST(SelectPortTest, DefaultPicksTheFirstActivePort) {
  std::vector<VerbsDevice> devices = {Device("mlx5_0", {IbPort(1, "down"), IbPort(2, "active")}),
                                      Device("rxe0", {RocePort(1, "active", RxeGids())})};
  StatusOr<Endpoint> selected = SelectPort(devices, "");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->device, "mlx5_0");
  EXPECT_EQ(selected->port, 2);
}

TEST(SelectPortTest, ByName) {
  std::vector<VerbsDevice> devices = {Device("mlx5_0", {IbPort(1, "active")}),
                                      Device("rxe0", {RocePort(1, "active", RxeGids())})};
  StatusOr<Endpoint> selected = SelectPort(devices, "rxe0");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->device, "rxe0");
  EXPECT_EQ(selected->port, 1);
  EXPECT_EQ(selected->link_layer, "Ethernet");
}

TEST(SelectPortTest, ByNameAndPort) {
  std::vector<VerbsDevice> devices = {Device("mlx5_0", {IbPort(1, "active"), IbPort(2, "active")})};
  StatusOr<Endpoint> selected = SelectPort(devices, "mlx5_0:2");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->device, "mlx5_0");
  EXPECT_EQ(selected->port, 2);
}

TEST(SelectPortTest, RocePrefersV2WithAnIpv4Address) {
  std::vector<VerbsDevice> devices = {Device("rxe0", {RocePort(1, "active", RxeGids())})};
  StatusOr<Endpoint> selected = SelectPort(devices, "");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->gid_index, 3);
  EXPECT_EQ(selected->gid_type, "RoCE v2");
  EXPECT_EQ(selected->gid_address, "::ffff:192.0.2.1");
}

TEST(SelectPortTest, RoceFallsBackToV2ThenV1) {
  std::vector<VerbsDevice> v2_ipv6 = {
      Device("rxe0", {RocePort(1, "active",
                               {{0, "RoCE v1", "fe80::1"},
                                {1, "RoCE v2", "fe80::1"},
                                {2, "RoCE v1", "::ffff:192.0.2.1"}})})};
  StatusOr<Endpoint> selected = SelectPort(v2_ipv6, "");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->gid_index, 1);

  std::vector<VerbsDevice> v1_only = {
      Device("rxe0", {RocePort(1, "active", {{4, "RoCE v1", "fe80::1"}})})};
  selected = SelectPort(v1_only, "");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->gid_index, 4);
  EXPECT_EQ(selected->gid_type, "RoCE v1");
}

TEST(SelectPortTest, InfiniBandUsesGidIndexZero) {
  std::vector<VerbsDevice> devices = {Device("mlx5_0", {IbPort(1, "active")})};
  StatusOr<Endpoint> selected = SelectPort(devices, "mlx5_0:1");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->link_layer, "InfiniBand");
  EXPECT_EQ(selected->gid_index, 0);
  EXPECT_EQ(selected->lid, 17);
  EXPECT_EQ(selected->active_mtu, 4096);
}

TEST(SelectPortTest, SkipsADownPortAndADeviceThatFailed) {
  std::vector<VerbsDevice> devices = {
      Device("bad0", {}, "ibv_open_device: Permission denied"),
      Device("rxe0", {RocePort(1, "down", RxeGids()), RocePort(2, "active", RxeGids())})};
  StatusOr<Endpoint> selected = SelectPort(devices, "");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->device, "rxe0");
  EXPECT_EQ(selected->port, 2);
  selected = SelectPort(devices, "rxe0");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->port, 2);
}

TEST(SelectPortTest, NoDevice) {
  EXPECT_EQ(Error(SelectPort({}, "")), "no RDMA device on this host");
  EXPECT_EQ(Error(SelectPort({}, "rxe0")), "RFT_NET_DEVICE=rxe0: no RDMA device on this host");
}

TEST(SelectPortTest, NoSuchDevice) {
  std::vector<VerbsDevice> devices = {Device("rxe0", {RocePort(1, "active", RxeGids())}),
                                      Device("mlx5_0", {IbPort(1, "active")})};
  EXPECT_EQ(Error(SelectPort(devices, "mlx5_9")),
            "RFT_NET_DEVICE=mlx5_9: no such device; devices here: rxe0, mlx5_0");
  EXPECT_EQ(Error(SelectPort(devices, "mlx5_9:1")),
            "RFT_NET_DEVICE=mlx5_9:1: no such device; devices here: rxe0, mlx5_0");
}

TEST(SelectPortTest, NoSuchPort) {
  std::vector<VerbsDevice> devices = {Device("rxe0", {RocePort(1, "active", RxeGids())})};
  EXPECT_EQ(Error(SelectPort(devices, "rxe0:2")),
            "RFT_NET_DEVICE=rxe0:2: rxe0 has no port 2; its ports: 1");
}

TEST(SelectPortTest, MalformedValue) {
  std::vector<VerbsDevice> devices = {Device("rxe0", {RocePort(1, "active", RxeGids())})};
  const std::string expected = ": expected DEVICE or DEVICE:PORT, such as rxe0 or mlx5_0:1";
  for (const char* value : {"rxe0:", "rxe0:x", "rxe0:0", ":1", "rxe0:1:1", "rxe0:99999"}) {
    EXPECT_EQ(Error(SelectPort(devices, value)), "RFT_NET_DEVICE=" + std::string(value) + expected)
        << value;
  }
}

TEST(SelectPortTest, RequestedPortDown) {
  std::vector<VerbsDevice> devices = {Device("rxe0", {RocePort(1, "down", RxeGids())})};
  EXPECT_EQ(Error(SelectPort(devices, "rxe0:1")),
            "RFT_NET_DEVICE=rxe0:1: port 1 of rxe0 is down, not active");
  EXPECT_EQ(Error(SelectPort(devices, "rxe0")),
            "RFT_NET_DEVICE=rxe0: no usable port on rxe0: port 1 of rxe0 is down, not active");
  EXPECT_EQ(Error(SelectPort(devices, "")),
            "no usable RDMA port on this host: port 1 of rxe0 is down, not active");
}

TEST(SelectPortTest, RoceWithoutGid) {
  std::vector<VerbsDevice> devices = {Device("rxe0", {RocePort(1, "active", {})})};
  EXPECT_EQ(Error(SelectPort(devices, "rxe0:1")),
            "RFT_NET_DEVICE=rxe0:1: port 1 of rxe0 is Ethernet but has no RoCE GID (is its "
            "network interface up with an address?)");
}

TEST(SelectPortTest, UnknownLinkLayer) {
  std::vector<VerbsDevice> devices = {Device("iw0", {Port{1, "active", "unknown", 1024, 0, {}}})};
  EXPECT_EQ(Error(SelectPort(devices, "")),
            "no usable RDMA port on this host: port 1 of iw0 has link layer unknown; expected "
            "InfiniBand or Ethernet (RoCE)");
}

TEST(SelectPortTest, DeviceThatFailedIsNamed) {
  std::vector<VerbsDevice> devices = {Device("bad0", {}, "ibv_open_device: Permission denied")};
  EXPECT_EQ(Error(SelectPort(devices, "bad0")),
            "RFT_NET_DEVICE=bad0: no usable port on bad0: bad0: ibv_open_device: Permission "
            "denied");
}

TEST(SelectPortLocalityTest, NearestFirst) {
  std::vector<VerbsDevice> devices = {
      Located(Device("mlx5_0", {IbPort(1, "active")}), Locality::kFar, "2-3"),
      Located(Device("mlx5_1", {IbPort(1, "active")}), Locality::kPartial, "1-2"),
      Located(Device("mlx5_2", {IbPort(1, "active")}), Locality::kNear, "0-1")};
  StatusOr<Endpoint> selected = SelectPort(devices, "");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->device, "mlx5_2");

  devices[2].ports[0].state = "down";
  selected = SelectPort(devices, "");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->device, "mlx5_1") << "partly near comes before far";

  devices[1].ports[0].state = "down";
  selected = SelectPort(devices, "");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->device, "mlx5_0") << "a far device is still used when nothing nearer is";
}

TEST(SelectPortLocalityTest, LocalityDoesNotOverrideUsability) {
  // The near device's port is down: the usable far one wins, and the reasons follow the order
  // the devices were tried in.
  std::vector<VerbsDevice> devices = {
      Located(Device("rxe0", {RocePort(1, "active", RxeGids())}), Locality::kFar),
      Located(Device("mlx5_0", {IbPort(1, "down")}), Locality::kNear)};
  StatusOr<Endpoint> selected = SelectPort(devices, "");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->device, "rxe0");
  EXPECT_EQ(selected->gid_index, 3) << "the GID rules are unchanged";

  devices[0].ports[0].state = "down";
  EXPECT_EQ(Error(SelectPort(devices, "")),
            "no usable RDMA port on this host: port 1 of mlx5_0 is down, not active; port 1 of "
            "rxe0 is down, not active");
}

TEST(SelectPortLocalityTest, TiesKeepTheListedOrder) {
  std::vector<VerbsDevice> near = {
      Located(Device("mlx5_0", {IbPort(1, "active")}), Locality::kNear),
      Located(Device("mlx5_1", {IbPort(1, "active")}), Locality::kNear)};
  EXPECT_EQ(SelectPort(near, "")->device, "mlx5_0");

  // Far and unknown rank alike: hwloc cannot place a soft device, which is no reason to put it
  // behind one it knows to be far.
  std::vector<VerbsDevice> far_and_unknown = {
      Located(Device("rxe0", {RocePort(1, "active", RxeGids())}), Locality::kUnknown),
      Located(Device("mlx5_0", {IbPort(1, "active")}), Locality::kFar)};
  EXPECT_EQ(SelectPort(far_and_unknown, "")->device, "rxe0");
  std::swap(far_and_unknown[0], far_and_unknown[1]);
  EXPECT_EQ(SelectPort(far_and_unknown, "")->device, "mlx5_0");
}

TEST(SelectPortLocalityTest, NoLocalityInformationChangesNothing) {
  // What soft devices give: no OS device in hwloc's topology, so every locality is unknown.
  std::vector<VerbsDevice> devices = {Device("rxe1", {RocePort(1, "down", RxeGids())}),
                                      Device("rxe0", {RocePort(1, "active", RxeGids())}),
                                      Device("rxe2", {RocePort(1, "active", RxeGids())})};
  for (const VerbsDevice& device : devices) {
    EXPECT_EQ(device.locality.locality, Locality::kUnknown) << "the default";
  }
  StatusOr<Endpoint> selected = SelectPort(devices, "");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->device, "rxe0");
}

TEST(SelectPortLocalityTest, RequestWinsOverLocality) {
  std::vector<VerbsDevice> devices = {
      Located(Device("mlx5_0", {IbPort(1, "active"), IbPort(2, "active")}), Locality::kNear),
      Located(Device("mlx5_1", {IbPort(1, "active")}), Locality::kFar, "2-3")};
  EXPECT_EQ(SelectPort(devices, "")->device, "mlx5_0");
  EXPECT_EQ(SelectPort(devices, "mlx5_1")->device, "mlx5_1");
  StatusOr<Endpoint> selected = SelectPort(devices, "mlx5_0:2");
  ASSERT_TRUE(selected.ok()) << selected.status().ToString();
  EXPECT_EQ(selected->device, "mlx5_0");
  EXPECT_EQ(selected->port, 2);
  // A far device that is down is refused by name, not replaced by the near one.
  devices[1].ports[0].state = "down";
  EXPECT_EQ(Error(SelectPort(devices, "mlx5_1")),
            "RFT_NET_DEVICE=mlx5_1: no usable port on mlx5_1: port 1 of mlx5_1 is down, not "
            "active");
}

TEST(LocalityTest, Names) {
  EXPECT_STREQ(LocalityName(Locality::kUnknown), "unknown");
  EXPECT_STREQ(LocalityName(Locality::kFar), "far");
  EXPECT_STREQ(LocalityName(Locality::kPartial), "partial");
  EXPECT_STREQ(LocalityName(Locality::kNear), "near");
}

// hwloc loads this host's topology; a name that is no verbs device here has no OS device.
TEST(QueryLocalityTest, UnknownNameIsUnknown) {
  StatusOr<std::vector<DeviceLocality>> localities = QueryLocality({"nosuch0", "nosuch1"});
  ASSERT_TRUE(localities.ok()) << localities.status().ToString();
  ASSERT_EQ(localities->size(), 2u);
  for (const DeviceLocality& locality : *localities) {
    EXPECT_EQ(locality.locality, Locality::kUnknown);
    EXPECT_EQ(locality.near_cpus, "");
  }
  localities = QueryLocality({});
  ASSERT_TRUE(localities.ok()) << localities.status().ToString();
  EXPECT_TRUE(localities->empty());
}

// Two packages of two CPUs, mlx5_0 on package 0's PCI bus and mlx5_1 on package 1's: the
// cluster node this host is not, as hwloc would export it.
constexpr char kTwoPackageTopology[] = R"(<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE topology SYSTEM "hwloc2.dtd">
<topology version="2.0">
 <object type="Machine" os_index="0" cpuset="0xf" complete_cpuset="0xf" allowed_cpuset="0xf"
   nodeset="0x3" complete_nodeset="0x3" allowed_nodeset="0x3" gp_index="1">
  <object type="Package" os_index="0" cpuset="0x3" complete_cpuset="0x3" nodeset="0x1"
    complete_nodeset="0x1" gp_index="2">
   <object type="NUMANode" os_index="0" cpuset="0x3" complete_cpuset="0x3" nodeset="0x1"
     complete_nodeset="0x1" gp_index="3" local_memory="1073741824"/>
   <object type="PU" os_index="0" cpuset="0x1" complete_cpuset="0x1" nodeset="0x1"
     complete_nodeset="0x1" gp_index="4"/>
   <object type="PU" os_index="1" cpuset="0x2" complete_cpuset="0x2" nodeset="0x1"
     complete_nodeset="0x1" gp_index="5"/>
   <object type="PCIDev" gp_index="6" pci_busid="0000:01:00.0"
     pci_type="0207 [15b3:1017] [15b3:0020] 00" pci_link_speed="0.000000">
    <object type="OSDev" gp_index="7" name="mlx5_0" subtype="OpenFabrics" osdev_type="3"/>
   </object>
  </object>
  <object type="Package" os_index="1" cpuset="0xc" complete_cpuset="0xc" nodeset="0x2"
    complete_nodeset="0x2" gp_index="8">
   <object type="NUMANode" os_index="1" cpuset="0xc" complete_cpuset="0xc" nodeset="0x2"
     complete_nodeset="0x2" gp_index="9" local_memory="1073741824"/>
   <object type="PU" os_index="2" cpuset="0x4" complete_cpuset="0x4" nodeset="0x2"
     complete_nodeset="0x2" gp_index="10"/>
   <object type="PU" os_index="3" cpuset="0x8" complete_cpuset="0x8" nodeset="0x2"
     complete_nodeset="0x2" gp_index="11"/>
   <object type="PCIDev" gp_index="12" pci_busid="0000:81:00.0"
     pci_type="0207 [15b3:1017] [15b3:0020] 00" pci_link_speed="0.000000">
    <object type="OSDev" gp_index="13" name="mlx5_1" subtype="OpenFabrics" osdev_type="3"/>
   </object>
  </object>
 </object>
</topology>
)";

// The hwloc side of locality without RDMA hardware: hwloc reads the topology above
// (HWLOC_XMLFILE) while the binding is this process's real one (HWLOC_THISSYSTEM), pinned to
// CPU 0 for the test.
TEST(QueryLocalityTest, DevicesOfAnExportedTopology) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof(saved), &saved), 0) << std::strerror(errno);
  if (!CPU_ISSET(0, &saved)) GTEST_SKIP() << "CPU 0 is not available to this test";
  const char* tmpdir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(tmpdir != nullptr ? tmpdir : "/tmp") + "/two_packages.xml";
  {
    std::ofstream file(path);
    file << kTwoPackageTopology;
    ASSERT_TRUE(file.good()) << path;
  }
  cpu_set_t cpu0;
  CPU_ZERO(&cpu0);
  CPU_SET(0, &cpu0);
  ASSERT_EQ(sched_setaffinity(0, sizeof(cpu0), &cpu0), 0) << std::strerror(errno);
  // The sanitizer builds' tests run with HWLOC_COMPONENTS=-pci (.bazelrc), which also drops the
  // PCI objects of an XML topology, and with them the devices: the file alone must decide.
  const char* components = std::getenv("HWLOC_COMPONENTS");
  const std::string saved_components = components != nullptr ? components : "";
  unsetenv("HWLOC_COMPONENTS");
  setenv("HWLOC_XMLFILE", path.c_str(), 1);
  setenv("HWLOC_THISSYSTEM", "1", 1);
  StatusOr<std::vector<DeviceLocality>> localities = QueryLocality({"mlx5_1", "rxe0", "mlx5_0"});
  unsetenv("HWLOC_XMLFILE");
  unsetenv("HWLOC_THISSYSTEM");
  if (components != nullptr) setenv("HWLOC_COMPONENTS", saved_components.c_str(), 1);
  ASSERT_EQ(sched_setaffinity(0, sizeof(saved), &saved), 0) << std::strerror(errno);

  ASSERT_TRUE(localities.ok()) << localities.status().ToString();
  ASSERT_EQ(localities->size(), 3u);
  EXPECT_EQ((*localities)[0].locality, Locality::kFar);
  EXPECT_EQ((*localities)[0].near_cpus, "2-3");
  EXPECT_EQ((*localities)[1].locality, Locality::kUnknown) << "no OS device of that name";
  EXPECT_EQ((*localities)[1].near_cpus, "");
  EXPECT_EQ((*localities)[2].locality, Locality::kNear);
  EXPECT_EQ((*localities)[2].near_cpus, "0-1");
}

// This host has no RDMA device (and its kernel no RDMA): the listing is empty or a clear error,
// and nothing crashes.
TEST(ListDevicesTest, OnThisHostEmptyOrAClearError) {
  StatusOr<std::vector<VerbsDevice>> devices = ListDevices();
  if (devices.ok()) {
    for (const VerbsDevice& device : *devices) EXPECT_FALSE(device.name.empty());
    if (devices->empty()) {
      EXPECT_EQ(SelectPort(*devices, "").status().message(), "no RDMA device on this host");
    }
  } else {
    EXPECT_NE(devices.status().message().find("ibv_get_device_list"), std::string::npos)
        << devices.status().message();
  }
}

}  // namespace
}  // namespace rft::verbs
