// Another process of this node, reached directly: its memory read with process_vm_readv
// (cross-memory attach, "CMA": the same-node pull rendezvous), its descriptors copied through
// its pidfd (the same-node rings' segments, the API's node-shared areas), and whether it has
// ended. Linux system calls and the Yama rules around them, nothing of rft's protocols.
#ifndef RFT_TRANSPORT_DATAPLANE_CMA_PEER_PROCESS_H_
#define RFT_TRANSPORT_DATAPLANE_CMA_PEER_PROCESS_H_

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "base/status.h"

namespace rft::transport::cma {

// Whether this process may read its peers' memory: false when the usual same-user rules apply;
// true when Yama (ptrace_scope 1) lets only a parent's descendants read, after declaring this
// process's parent, the launcher, its tracer (so the ranks it started may read this one, and no
// other process of the user may); an error naming the cause when process_vm_readv is not
// usable at all (compiled out, filtered by seccomp, Yama scope 2 or 3).
StatusOr<bool> ProbeReading();

// Reads `length` bytes at address `remote` of process `pid` into `local`, retrying short reads;
// 0, or the errno that stopped it (EFAULT when the remote range ends early). A pid may name
// another process once its own ended: ask Ended() after a read whose source may have died.
int Read(pid_t pid, void* local, uint64_t remote, size_t length);

// A pidfd for `pid`, or -1 with errno set.
int OpenPidfd(pid_t pid);
// A copy in this process of the descriptor `fd` of the process `pidfd` names (pidfd_getfd:
// ptrace permission over it), or -1 with errno set.
int CopyDescriptor(int pidfd, int fd);
// Whether the process `pidfd` names has ended (its pidfd polls readable).
bool Ended(int pidfd);

}  // namespace rft::transport::cma

#endif  // RFT_TRANSPORT_DATAPLANE_CMA_PEER_PROCESS_H_
