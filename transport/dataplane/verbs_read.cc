// The verbs rendezvous (docs/verbs.md): a message above the eager limit travels as the
// rendezvous request of pull_rendezvous.cc with an rkey in its descriptor, and the receiver reads
// the data with RDMA READs straight into the matched receive buffer, in pieces of at most
// RFT_VERBS_READ_SIZE, then answers with the done message, which completes the send. Both
// buffers' registrations stay in the registration cache (registration_cache.h) for the next
// transfers, until their memory is unmapped: UCX's memory hook reports it.
#include <ucm/api/ucm.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "base/log.h"
#include "transport/dataplane/data_plane.h"
#include "transport/dataplane/data_plane_internal.h"
#include "transport/dataplane/verbs_path.h"

namespace rft::transport {
namespace {

// UCX's memory hook: called in the unmapping thread, before the memory goes.
void OnUnmapped(ucm_event_type_t, ucm_event_t* event, void* cache) {
  static_cast<verbs::RegistrationCache*>(cache)->Unmapped(event->vm_unmapped.address,
                                                          event->vm_unmapped.size);
}
// After UCX's own handlers (its registration caches use 1000): the order does not matter here.
constexpr int kUnmapHookPriority = 1001;

StatusOr<verbs::RegistrationCache::Registration> RegisterMemory(ibv_pd* pd, void* address,
                                                                size_t length, int access) {
  ibv_mr* mr = ibv_reg_mr(pd, address, length, access);
  if (mr == nullptr) {
    return OtherError("ibv_reg_mr of " + std::to_string(length) + " bytes failed (" +
                      std::strerror(errno) + ")");
  }
  return verbs::RegistrationCache::Registration{mr, mr->lkey, mr->rkey};
}

}  // namespace

void DataPlane::OpenRegistrationCache(VerbsPath& path) {
  ibv_pd* pd = path.context->pd();
  auto make = [pd](size_t bytes) {
    return std::make_unique<verbs::RegistrationCache>(
        bytes,
        [pd](void* address, size_t length, int access) {
          return RegisterMemory(pd, address, length, access);
        },
        [](void* handle) { ibv_dereg_mr(static_cast<ibv_mr*>(handle)); });
  };
  path.registrations = make(options_.registration_cache);
  if (options_.registration_cache == 0) return;
  // Caching is safe only while every unmap is reported: without the hook, nothing is kept.
  const ucs_status_t hooked = ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, kUnmapHookPriority,
                                                    OnUnmapped, path.registrations.get());
  if (hooked == UCS_OK) {
    path.unmap_hook = true;
    return;
  }
  RFT_LOG_INFO("verbs: no registration cache: UCX's memory hooks are off (%s)",
               ucs_status_string(hooked));
  path.registrations = make(0);
}

void DataPlane::CloseRegistrationCache(VerbsPath& path) {
  if (path.unmap_hook) {
    // ucm removes a handler under the write side of the lock its dispatch reads under: no
    // other thread is inside OnUnmapped with this cache once this returns.
    ucm_unset_event_handler(UCM_EVENT_VM_UNMAPPED, OnUnmapped, path.registrations.get());
    path.unmap_hook = false;
  }
  path.registrations.reset();  // deregisters what it kept
}

DataPlane::RegistrationCounts DataPlane::registration_counts() const {
  if (verbs_ == nullptr) return {};
  const verbs::RegistrationCache::Stats stats = verbs_->registrations->stats();
  return {.hits = stats.hits, .misses = stats.misses, .invalidations = stats.invalidations};
}

bool DataPlane::EncodeVerbsRequest(Request* request) {
  // Read-only access for the peer's READ: no write permission is asked of the caller's pages.
  StatusOr<verbs::RegistrationCache::Lease> lease =
      verbs_->registrations->Acquire(request->buffer, request->capacity, IBV_ACCESS_REMOTE_READ);
  if (!lease.ok()) {
    RFT_LOG_ERROR("send of %zu bytes to rank %u: %s; the send fails with RFT_ERR_OTHER",
                  request->capacity, request->peer, lease.status().message().c_str());
    return false;
  }
  request->verbs_mr = lease->registration.handle;
  request->verbs_mr_entry = lease->entry;
  EncodePullRequest(request, lease->registration.rkey);
  return true;
}

void DataPlane::ReleaseVerbsRegistration(Request* request) {
  verbs_->registrations->Release(
      {.registration = {.handle = request->verbs_mr}, .entry = request->verbs_mr_entry});
  request->verbs_mr = nullptr;
  request->verbs_mr_entry = verbs::RegistrationCache::kUncached;
}

void DataPlane::ReadVerbs(Request* request, Rank source, int32_t tag,
                          const RendezvousDescriptor& descriptor) {
  // PullMessage set the counts and failed the receive if the sender is known failed.
  const uint64_t count = request->status.count;
  request->status.source = source;
  request->status.tag = tag;
  if (verbs_ == nullptr || source >= verbs_->channel_size) {
    CompleteReceive(request, source, tag, RFT_ERR_PROC_FAILED);
    return;
  }
  auto read_failed = [&](const std::string& why) {
    RFT_LOG_ERROR("receive of %llu bytes from rank %u: %s; both ends get RFT_ERR_OTHER",
                  static_cast<unsigned long long>(descriptor.length), source, why.c_str());
    request->status.count = 0;
    CompleteReceive(request, source, tag, RFT_ERR_OTHER);
    SendPullDone(source, descriptor, kRendezvousReadFailed);
  };
  request->status.error = descriptor.length > request->capacity ? RFT_ERR_TRUNCATE : RFT_SUCCESS;
  if (count == 0) return SendPullDone(source, descriptor, 0, request);
  StatusOr<verbs::RegistrationCache::Lease> lease =
      verbs_->registrations->Acquire(request->buffer, count, IBV_ACCESS_LOCAL_WRITE);
  if (!lease.ok()) return read_failed("the receive buffer: " + lease.status().message());
  if (verbs_->free_reads.empty()) {
    verbs_->free_reads.push_back(static_cast<uint32_t>(verbs_->reads.size()));
    verbs_->reads.emplace_back();
  }
  const uint32_t token = verbs_->free_reads.back();
  verbs_->free_reads.pop_back();
  VerbsRead& read = verbs_->reads[token];
  read = VerbsRead{.request = request,
                   .lease = *lease,
                   .source = source,
                   .tag = tag,
                   .descriptor = descriptor,
                   .length = count,
                   .in_use = true};
  request->verbs_reading = true;
  request->verbs_read = token;
  if (!request->peer_link.linked()) {
    request->peer = source;  // a wildcard receive now depends on this sender
    LinkToPeer(request, source);
  }
  ContinueVerbsRead(token);
}

void DataPlane::ContinueVerbsRead(uint32_t token) {
  VerbsRead& read = verbs_->reads[token];
  // Abandoned or failed: nothing more is posted, and the end waits for what is in flight.
  const bool stopped = read.request == nullptr || read.failed;
  while (!stopped && read.posted < read.length) {
    const uint64_t piece = std::min(verbs_->read_size, read.length - read.posted);
    StatusOr<bool> posted = verbs_->channel->Read(
        read.source, static_cast<std::byte*>(read.request->buffer) + read.posted,
        read.lease.registration.lkey, read.descriptor.address + read.posted, read.descriptor.rkey,
        static_cast<uint32_t>(piece), token);
    if (!posted.ok()) {
      const Rank source = read.source;
      if (posted.status().code() != RFT_ERR_PROC_FAILED) {
        RFT_LOG_ERROR("receive from rank %u: %s; it is reported failed", source,
                      posted.status().ToString().c_str());
      }
      read.failed = true;
      if (read.in_flight == 0) FinishVerbsRead(token, false);
      Discovered(source);  // its QP is flushed: the READs in flight end as failed
      return;
    }
    if (!*posted) {
      // The send queue is full: ProgressVerbs goes on with it.
      if (!read.waiting) verbs_->read_backlog.push_back(token);
      verbs_->chores = true;
      read.waiting = true;
      return;
    }
    read.posted += piece;
    ++read.in_flight;
  }
  if (read.in_flight == 0) FinishVerbsRead(token, !read.failed && read.request != nullptr);
}

void DataPlane::OnVerbsRead(uint32_t token, bool ok) {
  if (verbs_ == nullptr || token >= verbs_->reads.size() || !verbs_->reads[token].in_use ||
      verbs_->reads[token].in_flight == 0) {
    return;  // not one of ours: the channel checked the QP, so this cannot happen
  }
  VerbsRead& read = verbs_->reads[token];
  --read.in_flight;
  if (!ok) read.failed = true;
  ContinueVerbsRead(token);
}

void DataPlane::FinishVerbsRead(uint32_t token, bool ok) {
  VerbsRead& read = verbs_->reads[token];
  if (read.waiting) std::erase(verbs_->read_backlog, token);  // ended by a failed READ
  verbs_->registrations->Release(read.lease);
  Request* request = read.request;
  const Rank source = read.source;
  const int32_t tag = read.tag;
  const RendezvousDescriptor descriptor = read.descriptor;
  read = VerbsRead{};
  verbs_->free_reads.push_back(token);
  if (request == nullptr) return;  // abandoned: its receive completed already
  request->verbs_reading = false;
  if (!ok) {
    // The QP failed (the peer died, or was failed here and its QP flushed): the data is lost.
    CompleteReceive(request, source, tag, RFT_ERR_PROC_FAILED);
    return;
  }
  SendPullDone(source, descriptor, 0, request);
}

void DataPlane::AbandonVerbsRead(Request* request) {
  if (verbs_ == nullptr || !request->verbs_reading) return;
  // The registration stays until the read's completion, which may still come.
  verbs_->reads[request->verbs_read].request = nullptr;
  request->verbs_reading = false;
}

}  // namespace rft::transport
