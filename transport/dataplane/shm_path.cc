// The data plane's same-node rings (docs/shm.md): to a peer of this node that uses the same-node
// rendezvous, every data-plane message (eager data, rendezvous request and done, revoke notice)
// is written into a ring that this process alone writes and that peer alone reads, instead of
// UCX's shared FIFO, which a writer killed mid-copy blocks for every peer. A message that finds
// its ring full waits in that peer's queue, in order; what follows it to that peer waits behind.
// That queue (the direct queue) serves the verbs path too (verbs_path.cc): DirectWrite writes
// on whichever of the two the peer takes.
//
// Each process's segment is a memfd: a control page (whether the process sleeps in Idle), then
// one incoming ring per rank of the node. Peers map it through pidfd_getfd on the descriptor
// number it published (the same permission as the same-node rendezvous's process_vm_readv, and
// nothing in the file system to leak when a process is killed). A peer that blocks (Idle
// sleeps) is woken through its data plane's eventfd, also taken with pidfd_getfd.
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "base/log.h"
#include "transport/dataplane/data_plane.h"
#include "transport/dataplane/data_plane_internal.h"

namespace rft::transport {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kMinRingCapacity = 64 * 1024;

// The control page's first line: written by its owner only.
struct RingSegmentControl {
  alignas(64) std::atomic<uint32_t> sleeping;
};

size_t RoundUpToPage(size_t n) { return (n + kPage - 1) / kPage * kPage; }

}  // namespace

Status DataPlane::CreateRingSegment() {
  const RankSet& local = job_->local_peers();
  if (!options_.shm_rings || local.size() < 2) return Status::Ok();
  // A quarter of the ring must take the largest message: an eager one with its header.
  size_t capacity = kMinRingCapacity;
  while (capacity / 4 < kWireHeaderSize + std::max(options_.eager_limit, kInlinePayloadMax)) {
    capacity *= 2;
  }
  if (!shm::CheckRingCapacity(capacity).ok()) {
    RFT_LOG_INFO("no same-node rings: RFT_EAGER_LIMIT of %zu bytes needs rings of %zu bytes",
                 options_.eager_limit, capacity);
    return Status::Ok();
  }
  const size_t stride = RoundUpToPage(shm::RingBytes(capacity));
  const size_t bytes = kPage + local.size() * stride;
  const int fd = static_cast<int>(syscall(SYS_memfd_create, "rft-rings", MFD_CLOEXEC));
  if (fd < 0) {
    RFT_LOG_INFO("no same-node rings: memfd_create: %s", std::strerror(errno));
    return Status::Ok();
  }
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    RFT_LOG_INFO("no same-node rings: ftruncate(%zu): %s", bytes, std::strerror(errno));
    close(fd);
    return Status::Ok();
  }
  void* segment = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (segment == MAP_FAILED) {
    RFT_LOG_INFO("no same-node rings: mmap of %zu bytes: %s", bytes, std::strerror(errno));
    close(fd);
    return Status::Ok();
  }
  ring_fd_ = fd;
  ring_segment_ = segment;
  ring_segment_bytes_ = bytes;
  ring_capacity_ = capacity;
  new (segment) RingSegmentControl{};
  // The kernel zeroed the file: every ring starts empty.
  for (Rank peer : local) {
    if (peer == rank_) continue;
    const size_t index = local.IndexOf(peer).value();
    rings_in_.emplace_back(static_cast<std::byte*>(segment) + kPage + index * stride, capacity);
    ring_in_ranks_.push_back(peer);
  }
  return Status::Ok();
}

bool DataPlane::AttachRingTo(Rank peer, int fd, uint32_t capacity, int wake_fd, bool blocks) {
  if (ring_segment_ == nullptr || fd < 0 || peers_[peer].pidfd < 0 ||
      !shm::CheckRingCapacity(capacity).ok() ||
      capacity / 4 < kWireHeaderSize + std::max(options_.eager_limit, kInlinePayloadMax)) {
    return false;
  }
  // The reader keeps one ring per rank of its own namespace's local peers, at the index of the
  // writer among them: only a peer of this process's namespace has one for it (a replacement
  // and its parents take the rendezvous, not the rings).
  const std::optional<size_t> index = job_->local_peers().IndexOf(rank_);
  if (!index.has_value() || !job_->local_peers().Contains(peer)) return false;
  const int mine = CopyPeerDescriptor(peer, fd);
  if (mine < 0) {
    RFT_LOG_INFO("no same-node ring to rank %u: pidfd_getfd: %s", peer, std::strerror(errno));
    return false;
  }
  const size_t stride = RoundUpToPage(shm::RingBytes(capacity));
  void* ring = mmap(nullptr, stride, PROT_READ | PROT_WRITE, MAP_SHARED, mine,
                    static_cast<off_t>(kPage + *index * stride));
  void* control =
      ring == MAP_FAILED ? MAP_FAILED : mmap(nullptr, kPage, PROT_READ, MAP_SHARED, mine, 0);
  close(mine);  // the mappings keep the file
  if (ring == MAP_FAILED || control == MAP_FAILED) {
    RFT_LOG_INFO("no same-node ring to rank %u: mmap: %s", peer, std::strerror(errno));
    if (ring != MAP_FAILED) munmap(ring, stride);
    return false;
  }
  auto out = std::make_unique<RingPeer>();
  out->writer = std::make_unique<shm::RingWriter>(ring, capacity);
  out->mapping = ring;
  out->mapping_bytes = stride;
  out->control_mapping = control;
  if (blocks) {
    out->wake_fd = CopyPeerDescriptor(peer, wake_fd);
    if (out->wake_fd < 0) {
      RFT_LOG_INFO("no same-node ring to rank %u: its wake-up fd: %s", peer, std::strerror(errno));
      munmap(ring, stride);
      munmap(control, kPage);
      return false;
    }
    out->sleeping = &static_cast<RingSegmentControl*>(control)->sleeping;
  }
  ring_out_[peer] = std::move(out);
  SetPath(peer, Path::kRing);
  return true;
}

bool DataPlane::RingWrite(Rank peer, std::span<const std::byte> first,
                          std::span<const std::byte> second) {
  RingPeer& out = *ring_out_[peer];
  if (!out.writer->TryWrite(first, second)) return false;
  if (out.sleeping != nullptr) {
    // Against the peer's Idle: it sets its flag and then looks at its rings; this published and
    // then looks at the flag. The fences make one of the two see the other.
    shm::StoreLoadFence();
    if (out.sleeping->load(std::memory_order_relaxed) != 0) {
      const uint64_t one = 1;
      [[maybe_unused]] const ssize_t n = write(out.wake_fd, &one, sizeof(one));
    }
  }
  return true;
}

bool DataPlane::DirectWriteSend(const Request& request) {
  // A rendezvous request is its header and descriptor; an eager message its header and the
  // caller's bytes.
  const std::span<const std::byte> header(
      request.header.data(),
      request.awaiting_pull_done ? kWireHeaderSize + kRendezvousDescriptorSize : kWireHeaderSize);
  if (request.awaiting_pull_done) return DirectWrite(request.peer, header, {});
  return DirectWrite(
      request.peer, header,
      std::span<const std::byte>(static_cast<const std::byte*>(request.buffer), request.capacity));
}

void DataPlane::DirectSend(Request* request) {
  const Rank peer = request->peer;
  if (peers_[peer].direct_queue.empty() && DirectWriteSend(*request)) [[likely]] {
    if (request->awaiting_pull_done) {
      LinkToPeer(request, peer);  // the receiver's done message completes it
    } else {
      request->complete = true;  // copied out, as UCX's inline sends
    }
    return;
  }
  if (peers_[peer].direct_queue.empty()) direct_backlog_.push_back(peer);
  request->ring_link.request = request;
  request->ring_link.control = nullptr;
  peers_[peer].direct_queue.push_back(&request->ring_link);
  LinkToPeer(request, peer);  // a failure of the peer completes it
}

StatusOr<ucp_ep_h> DataPlane::EndpointFor(Rank peer) {
  if (peer < size_ && peers_[peer].path != Path::kUcx) {
    if (endpoints_->failed(peer)) [[unlikely]] {
      return Status(RFT_ERR_PROC_FAILED, "rank " + std::to_string(peer) + " has failed");
    }
    return nullptr;
  }
  return endpoints_->Get(peer);
}

bool DataPlane::DirectSendControl(Rank peer, ControlSend* send, size_t bytes, Request* receive) {
  if (peer >= size_ || peers_[peer].path == Path::kUcx) return false;
  const std::span<const std::byte> message(send->bytes.data(), bytes);
  if (peers_[peer].direct_queue.empty() && DirectWrite(peer, message, {})) {
    send->receive = receive;
    FinishControlSend(send);
    return true;
  }
  if (peers_[peer].direct_queue.empty()) direct_backlog_.push_back(peer);
  if (receive != nullptr) {
    UnlinkFromPeer(receive);  // the done message owns it now, as when UCX queues it
    send->receive = receive;
  }
  send->length = bytes;
  send->ring_link.request = nullptr;
  send->ring_link.control = send;
  peers_[peer].direct_queue.push_back(&send->ring_link);
  return true;
}

void DataPlane::FinishControlSend(ControlSend* send) {
  if (send->receive != nullptr) Complete(send->receive, send->receive->status.error);
  control_sends_.Release(send);
}

DataPlane::ControlSend* DataPlane::NewControlSend(WireHeader header) {
  ControlSend* send = control_sends_.Acquire();
  send->plane = this;
  send->receive = nullptr;
  header.source = rank_;
  header.job_token = job_token_;
  EncodeHeader(header, std::span<std::byte, kWireHeaderSize>(send->bytes.data(), kWireHeaderSize));
  return send;
}

bool DataPlane::SendControlByUcx(ucp_ep_h ep, ControlSend* send, size_t length) {
  void* sending = SendOwnMessage(ep, send->bytes.data(), length, &OnControlSendDone, send);
  if (UCS_PTR_IS_PTR(sending) && sending != nullptr) return true;
  FinishControlSend(send);
  return false;
}

void DataPlane::FlushDirectQueues() {
  for (size_t i = 0; i < direct_backlog_.size();) {
    const Rank peer = direct_backlog_[i];
    IntrusiveList<RingLink>& queue = peers_[peer].direct_queue;
    while (RingLink* link = queue.front()) {
      if (link->control != nullptr) {
        auto* send = static_cast<ControlSend*>(link->control);
        if (!DirectWrite(peer, std::span<const std::byte>(send->bytes.data(), send->length), {})) {
          break;
        }
        queue.erase(link);
        FinishControlSend(send);
        continue;
      }
      Request* request = link->request;
      if (!DirectWriteSend(*request)) break;
      queue.erase(link);
      // The done message completes a rendezvous.
      if (!request->awaiting_pull_done) Complete(request, RFT_SUCCESS);
    }
    if (queue.empty()) {
      direct_backlog_[i] = direct_backlog_.back();
      direct_backlog_.pop_back();
    } else {
      ++i;
    }
  }
}

unsigned DataPlane::ProgressRings() {
  unsigned delivered = 0;
  for (size_t i = 0; i < rings_in_.size(); ++i) {
    shm::RingReader& ring = rings_in_[i];
    if (!ring.HasData()) [[likely]]
      continue;
    StatusOr<int> got = ring.Drain(64, [this](std::span<const std::byte> record) {
      // The record is what a UCX active message with the header first carries: the same
      // receive path (unexpected data is copied out, since the ring's space goes back).
      ucp_am_recv_param_t param{};
      param.recv_attr = 0;
      OnActiveMessage(this, nullptr, 0, const_cast<std::byte*>(record.data()), record.size(),
                      &param);
    });
    if (!got.ok()) {
      // Only a writer that broke the format gets here: nothing more is read from it, and it is
      // failed (fail-stop), as a peer whose connection broke.
      const Rank writer = ring_in_ranks_[i];
      RFT_LOG_ERROR("same-node ring from rank %u: %s; rank %u is reported failed", writer,
                    got.status().ToString().c_str(), writer);
      rings_in_.erase(rings_in_.begin() + static_cast<std::ptrdiff_t>(i));
      ring_in_ranks_.erase(ring_in_ranks_.begin() + static_cast<std::ptrdiff_t>(i));
      --i;
      Discovered(writer);
      continue;
    }
    delivered += static_cast<unsigned>(*got);
  }
  return delivered;
}

void DataPlane::DropDirectQueue(Rank peer) {
  if (!peers_.Contains(peer)) return;  // before Start, or a rank beyond the table
  IntrusiveList<RingLink>& queue = peers_[peer].direct_queue;
  while (RingLink* link = queue.front()) {
    queue.erase(link);
    // A send stays linked to the peer: FailPeer completes it.
    if (link->control != nullptr) FinishControlSend(static_cast<ControlSend*>(link->control));
  }
  std::erase(direct_backlog_, peer);
}

bool DataPlane::PrepareToSleep() {
  if (ring_segment_ == nullptr) return true;
  auto* control = static_cast<RingSegmentControl*>(ring_segment_);
  control->sleeping.store(1, std::memory_order_relaxed);
  shm::StoreLoadFence();  // against RingWrite's
  if (AnyRingHasData()) {
    control->sleeping.store(0, std::memory_order_relaxed);
    return false;
  }
  return true;
}

bool DataPlane::AnyRingHasData() {
  for (shm::RingReader& ring : rings_in_) {
    if (ring.HasData()) return true;
  }
  return false;
}

void DataPlane::Awake() {
  if (ring_segment_ != nullptr) {
    static_cast<RingSegmentControl*>(ring_segment_)->sleeping.store(0, std::memory_order_relaxed);
  }
}

void DataPlane::CloseRings() {
  for (auto& out : ring_out_) {
    if (out == nullptr) continue;
    out->writer.reset();
    munmap(out->mapping, out->mapping_bytes);
    munmap(out->control_mapping, kPage);
    if (out->wake_fd >= 0) close(out->wake_fd);
    out.reset();
  }
  rings_in_.clear();
  ring_in_ranks_.clear();
  if (ring_segment_ != nullptr) munmap(ring_segment_, ring_segment_bytes_);
  ring_segment_ = nullptr;
  if (ring_fd_ >= 0) close(ring_fd_);
  ring_fd_ = -1;
}

}  // namespace rft::transport
