// The data plane's set-up: its options from the configuration, the UCX worker, the exchange of
// every rank's record through the bootstrap, and the paths chosen per peer from it (UCX, a
// same-node ring, verbs; CMA for large same-node messages).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "base/config.h"
#include "base/log.h"
#include "transport/dataplane/cma/peer_process.h"
#include "transport/dataplane/data_plane.h"
#include "transport/dataplane/data_plane_internal.h"
#include "transport/dataplane/verbs_path.h"  // complete for the constructor (verbs_)

namespace rft::transport {

namespace {

// Reads one setting into `*into`, or returns the error config:: gave (it names the variable and
// the value).
template <class T, class Value>
Status ReadSetting(StatusOr<Value> got, T* into) {
  if (!got.ok()) return got.status();
  *into = static_cast<T>(*got);
  return Status::Ok();
}

}  // namespace

StatusOr<DataPlane::Options> DataPlane::OptionsFromConfig(const Bootstrap& job) {
  Options options;
  RFT_RETURN_IF_ERROR(ReadSetting(config::GetSize("RFT_EAGER_LIMIT"), &options.eager_limit));
  std::string progress, rendezvous, transport;
  RFT_RETURN_IF_ERROR(ReadSetting(config::GetString("RFT_PROGRESS"), &progress));
  if (progress == "poll") {
    options.progress = ProgressMode::kPoll;
  } else if (progress == "block") {
    options.progress = ProgressMode::kBlock;
  } else {
    options.progress = job.oversubscribed() ? ProgressMode::kBlock : ProgressMode::kPoll;
  }
  RFT_RETURN_IF_ERROR(ReadSetting(config::GetString("RFT_RENDEZVOUS"), &rendezvous));
  options.rendezvous = rendezvous == "cma"   ? RendezvousProtocol::kCma
                       : rendezvous == "ucx" ? RendezvousProtocol::kUcx
                                             : RendezvousProtocol::kAuto;
  RFT_RETURN_IF_ERROR(ReadSetting(config::GetBool("RFT_SHM_RINGS"), &options.shm_rings));
  RFT_RETURN_IF_ERROR(ReadSetting(config::GetString("RFT_TRANSPORT"), &transport));
  options.transport = transport == "ucx"     ? NetworkTransport::kUcx
                      : transport == "verbs" ? NetworkTransport::kVerbs
                                             : NetworkTransport::kAuto;
  RFT_RETURN_IF_ERROR(
      ReadSetting(config::GetSize("RFT_REGISTRATION_CACHE"), &options.registration_cache));
  RFT_RETURN_IF_ERROR(
      ReadSetting(config::GetSize("RFT_VERBS_READ_SIZE"), &options.verbs_read_size));
  RFT_RETURN_IF_ERROR(ReadSetting(config::GetInt("RFT_VERBS_PEERS"), &options.verbs_peers));
  RFT_RETURN_IF_ERROR(
      ReadSetting(config::GetBool("RFT_VERBS_CLOSE_IDLE"), &options.verbs_close_idle));
  RFT_RETURN_IF_ERROR(
      ReadSetting(config::GetInt("RFT_VERBS_RETURN_AFTER"), &options.verbs_return_after));
  RFT_RETURN_IF_ERROR(
      ReadSetting(config::GetDuration("RFT_VERBS_PLACE_WAIT"), &options.verbs_place_wait));
  return options;
}

DataPlane::DataPlane(Bootstrap* job, const Options& options)
    : job_(job),
      options_(options),
      rank_(job->rank()),
      size_(job->size()),
      job_token_(job->job_token()),
      peers_(job->rank()),
      buffers_(std::max<size_t>(options.eager_limit, 64)) {}

StatusOr<std::unique_ptr<DataPlane>> DataPlane::Create(Bootstrap* job, const Options& options) {
  if (options.max_contexts == 0) {
    return ArgError("data plane: max_contexts 0: expected at least 1 context");
  }
  std::unique_ptr<DataPlane> plane(new DataPlane(job, options));
  RFT_RETURN_IF_ERROR(plane->Start());
  return plane;
}

Status DataPlane::Start() {
  RFT_RETURN_IF_ERROR(reports_.Open());
  GrowPeers(size_);

  auto context = ucx::UcxContext::Create();
  if (!context.ok()) return context.status();
  ucx_context_ = std::move(*context);
  auto worker = ucx::UcxWorker::Create(*ucx_context_);
  if (!worker.ok()) return worker.status();
  worker_ = std::move(*worker);
  RFT_RETURN_IF_ERROR(CreateTruncatingDatatype());
  RFT_RETURN_IF_ERROR(worker_->SetActiveMessageHandler(internal::kDataAmId, &OnActiveMessage, this,
                                                       UCP_AM_FLAG_WHOLE_MSG));
  RFT_RETURN_IF_ERROR(OpenVerbs());
  return ExchangeAndConnect();
}

DataPlane::~DataPlane() {
  if (endpoints_ != nullptr) {
    ProcessNotices();
    // Operations still running reference requests and user buffers: cancel them and let UCX
    // call back before the endpoints go.
    for (Rank r = 0; r < size_; ++r) {
      const IntrusiveList<PeerLink>& pending = peers_[r].pending;
      for (PeerLink* link = pending.front(); link != nullptr; link = pending.next(link)) {
        if (link->request->ucx_request != nullptr) {
          ucp_request_cancel(worker_->get(), link->request->ucx_request);
        }
      }
    }
    worker_->Progress();
    closing_endpoints_ = true;
    endpoints_.reset();  // progresses UCX until the closes finish (bounded)
  }
  // Unexpected messages never received: give UCX back its buffers, ours to the pools.
  for (auto& context : contexts_) {
    if (context == nullptr) continue;
    context->queue.Purge(
        [this](UnexpectedMessage* node) {
          ReleaseUnexpected(static_cast<Unexpected*>(node->owner));
        },
        [](PostedReceive*) {});
  }
  // The worker goes first: destroying it completes what UCX still held, and those callbacks
  // hand their requests back to the pools (abandoning them before made the pools' counts
  // underflow and their check abort).
  worker_.reset();
  CloseVerbs();
  // Done messages UCX never sent (their peer failed and the close cancelled nothing).
  if (control_sends_.in_use() > 0) control_sends_.AbandonInUse();
  if (requests_.in_use() > 0) {
    RFT_LOG_WARN("data plane closed with %zu requests never completed by the caller",
                 requests_.in_use());
    requests_.AbandonInUse();
  }
  if (has_truncating_datatype_) ucp_dt_destroy(truncating_datatype_);
  rings_.Close();
  for (Peer& peer : peers_) {
    if (peer.pidfd >= 0) close(peer.pidfd);
  }
  ucx_context_.reset();
}

Status DataPlane::ExchangeAndConnect() {
  // What each rank publishes: its record (record.h), how each path reaches it.
  uint32_t flags = 0;
  if (options_.rendezvous != RendezvousProtocol::kUcx) {
    const StatusOr<bool> probe = cma::ProbeReading();
    if (!probe.ok() && options_.rendezvous == RendezvousProtocol::kCma) {
      return ArgError("RFT_RENDEZVOUS=cma: " + probe.status().message() +
                      "; expected auto or ucx here");
    }
    if (!probe.ok()) {
      RFT_LOG_INFO("same-node rendezvous off: %s", probe.status().message().c_str());
    } else {
      flags = DataPlaneRecord::kCmaUsable | (*probe ? DataPlaneRecord::kCmaParentOnly : 0);
    }
  }
  if ((flags & DataPlaneRecord::kCmaUsable) != 0 && options_.shm_rings) {
    // A quarter of a ring must take the largest record: an eager message with its header.
    rings_.Open(job_->local_peers(), rank_,
                kWireHeaderSize + std::max(options_.eager_limit, kInlinePayloadMax));
  }
  if (options_.progress == ProgressMode::kBlock) flags |= DataPlaneRecord::kBlocks;
  if (verbs_ != nullptr) flags |= DataPlaneRecord::kVerbs;
  own_record_ = {.pid = static_cast<uint32_t>(getpid()),
                 .flags = flags,
                 .parent = static_cast<uint32_t>(getppid()),
                 .ring_fd = rings_.offer().fd,
                 .ring_capacity = rings_.offer().capacity,
                 .wake_fd = reports_.fd(),
                 .verbs = OwnVerbsPart(),
                 .ucx_address = {}};
  const std::span<const std::byte> address = worker_->address();
  DataPlaneRecord mine = own_record_;
  mine.ucx_address.assign(address.begin(), address.end());
  auto published = job_->ExchangeLive("rft.dataplane", EncodeDataPlaneRecord(mine));
  if (!published.ok()) return published.status();

  std::vector<std::vector<std::byte>> addresses(size_);
  std::vector<DataPlaneRecord> records(size_);
  // A replacement reads its parents' records too, the dead ones' included: those it was told
  // of are failed like the ones that ended during start-up.
  for (Rank r : options_.failed_at_start) {
    if (r < size_ && r != rank_) published->missing.Insert(r);
  }
  const RankSet same_node = job_->node_peers();  // a replacement's parents among them
  for (Rank r = 0; r < size_; ++r) {
    if (published->missing.Contains(r)) continue;  // failed during start-up: reported below
    StatusOr<DataPlaneRecord> theirs = DecodeDataPlaneRecord(published->values[r], r);
    if (!theirs.ok()) return theirs.status();
    records[r] = std::move(*theirs);
    peers_[r].pid = static_cast<pid_t>(records[r].pid);
    DecideCma(r, records[r], same_node.Contains(r));
    addresses[r] = std::move(records[r].ucx_address);
  }
  ucx::EndpointTable::Options table_options;
  table_options.connect_all_max = options_.connect_all_max;
  table_options.failed = published->missing;
  table_options.owner = "data plane";
  // When verbs (or a same-node ring) reaches every live peer, UCX carries only what neither
  // takes: its endpoints are made on first use, not all at start-up, and are not flushed at the
  // end (a flush that took its whole 2 s bound in the soft-RoCE guest). Without verbs nothing
  // changes.
  bool all_without_ucx = verbs_ != nullptr;
  for (Rank r = 0; r < size_ && all_without_ucx; ++r) {
    if (r == rank_ || published->missing.Contains(r)) continue;
    all_without_ucx = peers_[r].same_node_pull || records[r].verbs.has_value();
  }
  if (all_without_ucx) table_options.connect_all_max = 0;
  auto table =
      ucx::EndpointTable::Create(worker_.get(), rank_, std::move(addresses), this, table_options);
  if (!table.ok()) return table.status();
  endpoints_ = std::move(*table);
  // Rings go one way each: this process writes into a peer's ring when it can map it, whatever
  // the peer does the other way (order is kept per direction).
  for (Rank r = 0; r < size_; ++r) {
    if (r == rank_ || !peers_[r].same_node_pull || published->missing.Contains(r)) continue;
    const DataPlaneRecord& offer = records[r];
    if (rings_.Attach(r, peers_[r].pidfd, {.fd = offer.ring_fd, .capacity = offer.ring_capacity},
                      offer.wake_fd, (offer.flags & DataPlaneRecord::kBlocks) != 0)) {
      SetPath(r, Path::kRing);
    }
  }
  // Verbs where both ends offer it, after the rings (a ring wins on one node).
  RFT_RETURN_IF_ERROR(ConnectVerbs(records, published->missing));
  // Both: this plane must fail them whether or not the registry already knew (then it would
  // not dispatch them again, and this plane may not be listening yet).
  for (Rank r : published->missing) {
    ReportPeerFailed(r);
    if (options_.report_failure) options_.report_failure(r);
  }
  return Status::Ok();
}

bool DataPlane::DecideCma(Rank peer, const DataPlaneRecord& record, bool same_node) {
  // Both ends must be able to use it and share a node (the launcher says which ranks do);
  // where Yama lets only a parent's descendants read, both must have the same parent.
  const uint32_t both = own_record_.flags & record.flags;
  const bool parent_only =
      ((own_record_.flags | record.flags) & DataPlaneRecord::kCmaParentOnly) != 0;
  Peer& entry = peers_[peer];
  entry.same_node_pull = (both & DataPlaneRecord::kCmaUsable) != 0 && same_node &&
                         (!parent_only || record.parent == own_record_.parent);
  if (!entry.same_node_pull) return false;
  entry.pidfd = cma::OpenPidfd(static_cast<pid_t>(record.pid));
  if (entry.pidfd < 0) {
    RFT_LOG_INFO("no same-node rendezvous with rank %u: pidfd_open(%u): %s", peer, record.pid,
                 std::strerror(errno));
    entry.same_node_pull = false;
  }
  return entry.same_node_pull;
}

}  // namespace rft::transport
