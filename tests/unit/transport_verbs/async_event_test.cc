// What each asynchronous event of a verbs device means for the peers (no device needed).
#include "transport/verbs/async_event.h"

#include <gtest/gtest.h>

#include <string>

namespace rft::verbs {
namespace {

TEST(AsyncEventTest, EventsThatBreakAQpFailItsPeer) {
  for (ibv_event_type type : {IBV_EVENT_QP_FATAL, IBV_EVENT_QP_REQ_ERR, IBV_EVENT_QP_ACCESS_ERR}) {
    EXPECT_EQ(ClassifyAsyncEvent(type), AsyncEffect::kQpFailed) << AsyncEventName(type);
  }
}

// The last receive of a QP in the error state: it follows a failure reported otherwise, or a
// close (EagerChannel::Close), and may come after that QP was reset for another peer.
TEST(AsyncEventTest, LastWqeOfAQpInErrorFailsNobody) {
  EXPECT_EQ(ClassifyAsyncEvent(IBV_EVENT_QP_LAST_WQE_REACHED), AsyncEffect::kNone);
}

TEST(AsyncEventTest, PortAndDeviceEventsAreTheirOwn) {
  EXPECT_EQ(ClassifyAsyncEvent(IBV_EVENT_PORT_ERR), AsyncEffect::kPortDown);
  EXPECT_EQ(ClassifyAsyncEvent(IBV_EVENT_PORT_ACTIVE), AsyncEffect::kPortUp);
  EXPECT_EQ(ClassifyAsyncEvent(IBV_EVENT_DEVICE_FATAL), AsyncEffect::kDeviceFatal);
}

// Informative events change nothing: failing a peer for them would be a false failure.
TEST(AsyncEventTest, InformativeEventsChangeNothing) {
  for (ibv_event_type type :
       {IBV_EVENT_COMM_EST, IBV_EVENT_SQ_DRAINED, IBV_EVENT_PATH_MIG, IBV_EVENT_PATH_MIG_ERR,
        IBV_EVENT_CQ_ERR, IBV_EVENT_SRQ_ERR, IBV_EVENT_SRQ_LIMIT_REACHED, IBV_EVENT_LID_CHANGE,
        IBV_EVENT_PKEY_CHANGE, IBV_EVENT_SM_CHANGE, IBV_EVENT_CLIENT_REREGISTER,
        IBV_EVENT_GID_CHANGE, IBV_EVENT_WQ_FATAL}) {
    EXPECT_EQ(ClassifyAsyncEvent(type), AsyncEffect::kNone) << AsyncEventName(type);
  }
}

TEST(AsyncEventTest, NamesComeFromLibibverbs) {
  EXPECT_EQ(std::string(AsyncEventName(IBV_EVENT_PORT_ERR)), "port error");
  EXPECT_EQ(std::string(AsyncEventName(IBV_EVENT_QP_FATAL)), "local work queue catastrophic error");
  EXPECT_EQ(std::string(AsyncEventName(static_cast<ibv_event_type>(999))), "unknown");
}

}  // namespace
}  // namespace rft::verbs
