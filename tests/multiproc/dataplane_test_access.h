// What the data-plane worker's checks do inside a DataPlane that no program may: kept here, a
// friend of the class, so that the library carries no test hooks.
#ifndef RFT_TESTS_MULTIPROC_DATAPLANE_TEST_ACCESS_H_
#define RFT_TESTS_MULTIPROC_DATAPLANE_TEST_ACCESS_H_

#include <sys/types.h>
#include <unistd.h>

#include <cstddef>
#include <span>

#include "transport/dataplane/data_plane.h"

namespace rft::testing {

class DataPlaneTestAccess {
 public:
  // Hands `header` and `payload` to the receive path as if UCX had delivered them eagerly: for
  // checks that feed malformed and foreign messages.
  static void Inject(transport::DataPlane& plane, std::span<const std::byte> header,
                     std::span<const std::byte> payload) {
    ucp_am_recv_param_t param{};
    param.recv_attr = 0;  // eager, not persistent: the receive path copies what it keeps
    transport::DataPlane::OnActiveMessage(&plane, header.data(), header.size(),
                                          const_cast<std::byte*>(payload.data()), payload.size(),
                                          &param);
  }

  // Makes `rank` look like process `pid` with `pidfd` (owned from now on) to the same-node
  // rendezvous, e.g. a pid reused after the peer behind `pidfd` died.
  static void ReplacePeerProcess(transport::DataPlane& plane, Rank rank, pid_t pid, int pidfd) {
    if (!plane.peers_.Contains(rank)) return;
    transport::Peer& peer = plane.peers_[rank];
    if (peer.pidfd >= 0) close(peer.pidfd);
    peer.pid = pid;
    peer.pidfd = pidfd;
  }
};

}  // namespace rft::testing

#endif  // RFT_TESTS_MULTIPROC_DATAPLANE_TEST_ACCESS_H_
