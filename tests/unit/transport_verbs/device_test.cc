// SelectPort on synthetic device descriptions (no RDMA hardware needed), and ListDevices on
// this host, which has no device.
#include "transport/verbs/device.h"

#include <gtest/gtest.h>

#include <string>
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
