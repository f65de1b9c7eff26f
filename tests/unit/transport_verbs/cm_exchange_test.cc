// The text a user gives to connect two processes by IP address (cm_exchange.h): parsed, or
// refused naming it and what was expected. The exchange itself needs a device: the soft-RoCE
// guest's verbs-cm checks run it.
#include "transport/verbs/cm_exchange.h"

#include <gtest/gtest.h>

namespace rft::verbs {
namespace {

TEST(CmExchangeTest, ParsesHostAndPort) {
  StatusOr<CmPeer> peer = ParseCmPeer("192.0.2.1:7471", /*listen=*/false);
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  EXPECT_EQ(peer->host, "192.0.2.1");
  EXPECT_EQ(peer->port, 7471);
  EXPECT_FALSE(peer->listen);
  // The last colon separates the port, so an IPv6 address keeps its own.
  peer = ParseCmPeer("fe80::1:18515", false);
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  EXPECT_EQ(peer->host, "fe80::1");
  EXPECT_EQ(peer->port, 18515);
}

TEST(CmExchangeTest, AListenerMayGiveThePortAlone) {
  StatusOr<CmPeer> peer = ParseCmPeer("7471", /*listen=*/true);
  ASSERT_TRUE(peer.ok()) << peer.status().ToString();
  EXPECT_EQ(peer->host, "");
  EXPECT_EQ(peer->port, 7471);
  EXPECT_TRUE(peer->listen);
}

TEST(CmExchangeTest, BadTextIsRefusedByName) {
  struct Case {
    const char* text;
    bool listen;
    const char* expected;
  };
  for (const Case& c :
       {Case{"7471", false, "expected HOST:PORT"}, Case{"host:", false, "expected HOST:PORT"},
        Case{"host:0", false, "expected HOST:PORT"},
        Case{"host:65536", false, "expected HOST:PORT"},
        Case{"host:74x", false, "expected HOST:PORT"}, Case{"", true, "expected [HOST:]PORT"}}) {
    StatusOr<CmPeer> peer = ParseCmPeer(c.text, c.listen);
    ASSERT_FALSE(peer.ok()) << c.text;
    EXPECT_EQ(peer.status().code(), RFT_ERR_ARG) << c.text;
    EXPECT_NE(peer.status().message().find("\"" + std::string(c.text) + "\""), std::string::npos)
        << peer.status().message();
    EXPECT_NE(peer.status().message().find(c.expected), std::string::npos)
        << peer.status().message();
  }
}

}  // namespace
}  // namespace rft::verbs
