// A job across nodes: one rftrun per node, joined by the node link (node_link.h). This part of
// the launcher does what PMIx leaves to its host between nodes: it gathers fences, fetches
// another node's process data, carries terminations, kills and the job's end, and waits for
// every node before rftrun exits.
//
// Node 0 is the hub and relays between the others; it runs on the main loop like everything
// else here. A node whose link breaks is lost with all its processes: with --ft they are
// reported to the survivors as failed, without it the job ends.

#include <signal.h>

#include <algorithm>
#include <cstring>

#include "base/clock.h"
#include "base/log.h"
#include "base/random.h"
#include "tools/rftrun/launcher.h"
#include "tools/rftrun/process_util.h"

namespace rft::rftrun {
namespace {

FrameWriter& WriteRanks(FrameWriter& writer, const std::vector<uint32_t>& ranks) {
  writer.U32(static_cast<uint32_t>(ranks.size()));
  for (uint32_t rank : ranks) writer.U32(rank);
  return writer;
}

std::string TerminationFrame(uint32_t rank, pmix_status_t code, int exit_code) {
  FrameWriter termination(LinkKind::kTermination);
  termination.U32(rank).I32(code).I32(exit_code);
  return termination.frame();
}

std::vector<uint32_t> ReadRanks(FrameReader& reader) {
  const uint32_t count = reader.U32();
  std::vector<uint32_t> ranks;
  for (uint32_t i = 0; i < count && reader.more(); ++i) ranks.push_back(reader.U32());
  return ranks;
}

}  // namespace

Status Launcher::AssembleNodes() {
  const std::string name = options_.node_name.empty() ? hostname_ : options_.node_name;
  if (!options_.listen.empty()) {
    auto token = SecureRandom64();
    if (!token.ok()) return token.status();
    auto joined = AssembleAsHub(options_.listen, options_.nodes, options_.nprocs, name, nspace_,
                                static_cast<uint32_t>(*token) | 1u, kAssembleBound, &layout_);
    if (!joined.ok()) return joined.status();
    links_ = std::move(*joined);
  } else {
    auto hub = AssembleAsJoiner(options_.join, options_.nprocs, name, kAssembleBound, &layout_);
    if (!hub.ok()) return hub.status();
    links_.push_back(std::move(*hub));
    nspace_ = layout_.nspace;  // every node's processes are one namespace
  }
  for (const Fault& fault : options_.faults) {
    if (fault.rank >= layout_.size()) {
      return ArgError(std::string(fault.signal == SIGKILL ? "--kill" : "--stop") + " rank " +
                      std::to_string(fault.rank) + ": no such rank in a job of " +
                      std::to_string(layout_.size()) + " processes");
    }
  }
  remote_failed_.assign(layout_.size(), false);
  node_status_.assign(layout_.nodes.size(), std::nullopt);
  pmix_->SpanNodes();
  const NodeRanks& here = layout_.nodes[layout_.node];
  Log("node %u of %zu (%s): ranks %u..%u of %u", layout_.node, layout_.nodes.size(),
      here.name.c_str(), here.first, here.first + here.count - 1, layout_.size());
  return Status::Ok();
}

Launcher::Process* Launcher::FindRank(uint32_t rank) {
  for (auto& p : processes_) {
    if (p->rank == rank && p->nspace == nspace_) return p.get();
  }
  return nullptr;
}

void Launcher::SendToNode(uint32_t node, const std::string& frame) {
  LinkConnection* link = layout_.node == 0 ? links_[node - 1].get() : links_[0].get();
  if (link->open() && !link->Send(frame)) {
    // Noticed again, and handled, when poll reports the socket closed.
    RFT_LOG_WARN("the link to node %u broke while sending", layout_.node == 0 ? node : 0);
  }
}

void Launcher::SendToOthers(const std::string& frame, uint32_t except) {
  if (layout_.node != 0) {
    SendToNode(0, frame);  // node 0 relays to the rest
    return;
  }
  for (uint32_t node = 1; node < layout_.nodes.size(); ++node) {
    if (node != except) SendToNode(node, frame);
  }
}

void Launcher::HandleLinks(const std::vector<pollfd>& fds, size_t first_link) {
  for (size_t i = 0; i < links_.size(); ++i) {
    const pollfd& fd = fds[first_link + i];
    LinkConnection* link = links_[i].get();
    if (fd.revents == 0 || !link->open()) continue;
    const uint32_t node = layout_.node == 0 ? static_cast<uint32_t>(i + 1) : 0;
    bool open = true;
    if (fd.revents & POLLOUT) open = link->Flush();
    std::vector<Frame> frames;
    if (open && (fd.revents & (POLLIN | POLLHUP | POLLERR))) open = link->Receive(&frames);
    for (const Frame& frame : frames) HandleFrame(node, frame);
    if (!open) {
      link->Close();
      LostNode(node);
    }
  }
}

void Launcher::HandleFrame(uint32_t from, const Frame& frame) {
  FrameReader reader(frame);
  const bool hub = layout_.node == 0;
  switch (frame.kind) {
    case LinkKind::kFence: {
      std::vector<uint32_t> ranks = ReadRanks(reader);
      std::string data = reader.Bytes();
      if (reader.ok() && hub) GatherFence(from, ranks, std::move(data));
      break;
    }
    case LinkKind::kFenceDone: {
      std::vector<uint32_t> ranks = ReadRanks(reader);
      const std::string data = reader.Bytes();
      if (reader.ok()) FinishFence(ranks, data);
      break;
    }
    case LinkKind::kModexRequest: {
      const uint32_t requester = reader.U32();
      const uint64_t id = reader.U64();
      const uint32_t rank = reader.U32();
      if (!reader.ok()) break;
      const uint32_t owner = layout_.NodeOf(rank);
      if (owner == layout_.node) {
        ServeModex(requester, id, rank);
      } else if (hub && owner < layout_.nodes.size()) {
        SendToNode(owner, Reframe(frame));
      }
      break;
    }
    case LinkKind::kModexReply: {
      const uint32_t requester = reader.U32();
      const uint64_t id = reader.U64();
      const pmix_status_t status = reader.I32();
      const std::string data = reader.Bytes();
      if (!reader.ok()) break;
      if (requester != layout_.node) {
        if (hub && requester < layout_.nodes.size()) SendToNode(requester, Reframe(frame));
        break;
      }
      auto it = modex_waiting_.find(id);
      if (it == modex_waiting_.end()) break;
      pmix_->CompleteModex(it->second, status, data);
      modex_waiting_.erase(it);
      break;
    }
    case LinkKind::kTermination: {
      const uint32_t rank = reader.U32();
      const pmix_status_t code = reader.I32();
      const int exit_code = reader.I32();
      if (!reader.ok() || rank >= layout_.size()) break;
      if (hub) SendToOthers(Reframe(frame), from);
      if (!ending_) NotifyRemoteTermination(rank, code, exit_code);
      break;
    }
    case LinkKind::kKill: {
      std::vector<uint32_t> ranks = ReadRanks(reader);
      if (!reader.ok()) break;
      if (hub) {
        for (uint32_t node = 1; node < layout_.nodes.size(); ++node) {
          if (node == from) continue;
          const bool theirs = std::any_of(ranks.begin(), ranks.end(),
                                          [&](uint32_t r) { return layout_.NodeOf(r) == node; });
          if (theirs) SendToNode(node, Reframe(frame));
        }
      }
      std::string killed;
      KillLocal(ranks, &killed);
      if (!killed.empty()) Log("node %u aborted rank(s) %s", from, killed.c_str());
      break;
    }
    case LinkKind::kEnd: {
      // The node where the job ended, not the hub that relayed it.
      const uint32_t origin = reader.U32();
      const int status = reader.I32();
      const std::string why = reader.Bytes();
      if (!reader.ok() || origin >= layout_.nodes.size()) break;
      if (hub) SendToOthers(Reframe(frame), from);
      if (ending_) break;
      verdict_.NodeEndedJob(layout_.nodes[origin].name, status, why);
      end_from_link_ = true;
      EndJob(SIGTERM);
      break;
    }
    case LinkKind::kDone: {
      const int status = reader.I32();
      const std::string summary = reader.Bytes();
      if (reader.ok() && hub) RecordNodeDone(from, status, summary);
      break;
    }
    case LinkKind::kFinish: {
      const int status = reader.I32();
      if (reader.ok() && !hub) job_status_ = status;
      break;
    }
    default:
      RFT_LOG_WARN("node %u sent a frame of unknown kind %d: ignored", from,
                   static_cast<int>(frame.kind));
  }
}

bool Launcher::NotifyRemoteTermination(uint32_t rank, pmix_status_t code, int exit_code) {
  if (remote_failed_[rank]) return false;
  remote_failed_[rank] = true;
  const uint32_t node = layout_.NodeOf(rank);
  // A node-down event names the node, as PRRTE's do. No fault time: the clocks of two nodes
  // are not comparable.
  const Status status =
      pmix_->NotifyTermination(nspace_, rank, code, exit_code, /*fault_ns=*/0,
                               code == PMIX_ERR_NODE_DOWN ? layout_.nodes[node].name : "");
  if (!status.ok()) RFT_LOG_WARN("event for rank %u not sent: %s", rank, status.ToString().c_str());
  Log("event %s sent for rank %u of node %u", PMIx_Error_string(code), rank, node);
  return true;
}

void Launcher::LostNode(uint32_t node) {
  if (job_status_ || (node < node_status_.size() && node_status_[node])) return;  // it had ended
  // A joiner that loses node 0 loses every other node with it.
  std::vector<uint32_t> lost_nodes;
  if (layout_.node == 0) {
    lost_nodes.push_back(node);
  } else {
    for (uint32_t n = 0; n < layout_.nodes.size(); ++n) {
      if (n != layout_.node) lost_nodes.push_back(n);
    }
  }
  std::string names;
  for (uint32_t n : lost_nodes) names += (names.empty() ? "" : ",") + layout_.nodes[n].name;
  WriteAll(2, "rftrun: lost the link to node(s) " + names + "\n");
  // Requests that node would have answered never will be.
  for (auto it = modex_waiting_.begin(); it != modex_waiting_.end();) {
    const uint32_t owner = layout_.NodeOf(it->second.rank);
    if (std::find(lost_nodes.begin(), lost_nodes.end(), owner) == lost_nodes.end()) {
      ++it;
      continue;
    }
    pmix_->CompleteModex(it->second, PMIX_ERR_UNREACH, std::string());
    it = modex_waiting_.erase(it);
  }
  if (verdict_.LostNodes(names, ending_)) {
    EndJob(SIGTERM);
  } else if (!ending_) {
    // With --ft the lost node's processes are failures like any other: every survivor hears.
    for (uint32_t n : lost_nodes) {
      const NodeRanks& span = layout_.nodes[n];
      for (uint32_t rank = span.first; rank < span.first + span.count; ++rank) {
        if (!NotifyRemoteTermination(rank, PMIX_ERR_NODE_DOWN, 1)) continue;
        if (layout_.node == 0) SendToOthers(TerminationFrame(rank, PMIX_ERR_NODE_DOWN, 1), n);
      }
      Log("reported the %u rank(s) of node %s as failed", span.count, span.name.c_str());
    }
  }
  if (layout_.node == 0) RecordNodeDone(node, 1, "lost");  // last: it may end the job
}

void Launcher::StartFence(FenceRequest request) {
  FrameWriter fence(LinkKind::kFence);
  WriteRanks(fence, request.ranks).Bytes(request.data);
  std::vector<uint32_t> ranks = request.ranks;
  std::string data = std::move(request.data);
  request.data.clear();
  local_fences_[ranks].push_back(std::move(request));
  if (layout_.node == 0) {
    GatherFence(0, ranks, std::move(data));
  } else {
    SendToNode(0, fence.frame());
  }
}

void Launcher::GatherFence(uint32_t from, const std::vector<uint32_t>& ranks, std::string data) {
  std::vector<bool> involved(layout_.nodes.size(), ranks.empty());
  for (uint32_t rank : ranks) {
    const uint32_t node = layout_.NodeOf(rank);
    if (node < involved.size()) involved[node] = true;
  }
  if (from >= involved.size() || !involved[from]) {
    RFT_LOG_WARN("node %u joined a fence it has no process in: ignored", from);
    return;
  }
  auto& contributions = gathering_[ranks];
  contributions.resize(layout_.nodes.size());
  contributions[from].push_back(std::move(data));
  for (uint32_t node = 0; node < involved.size(); ++node) {
    if (involved[node] && contributions[node].empty()) return;  // still waiting for it
  }
  // libpmix reads the result as its nodes' contributions one after another.
  std::string all;
  for (uint32_t node = 0; node < involved.size(); ++node) {
    if (!involved[node]) continue;
    all += contributions[node].front();
    contributions[node].pop_front();
  }
  FrameWriter done(LinkKind::kFenceDone);
  WriteRanks(done, ranks).Bytes(all);
  for (uint32_t node = 1; node < involved.size(); ++node) {
    if (involved[node]) SendToNode(node, done.frame());
  }
  if (involved[0]) FinishFence(ranks, all);
  if (std::all_of(contributions.begin(), contributions.end(),
                  [](const auto& queued) { return queued.empty(); })) {
    gathering_.erase(ranks);
  }
}

void Launcher::FinishFence(const std::vector<uint32_t>& ranks, const std::string& data) {
  auto it = local_fences_.find(ranks);
  if (it == local_fences_.end() || it->second.empty()) {
    RFT_LOG_WARN("a fence ended that no local process is in: ignored");
    return;
  }
  pmix_->CompleteFence(it->second.front(), PMIX_SUCCESS, data);
  it->second.pop_front();
  if (it->second.empty()) local_fences_.erase(it);
}

void Launcher::StartModex(ModexRequest request) {
  const uint32_t owner = layout_.NodeOf(request.rank);
  if (owner >= layout_.nodes.size() || owner == layout_.node ||
      (owner < node_status_.size() && node_status_[owner])) {
    pmix_->CompleteModex(request, PMIX_ERR_NOT_FOUND, std::string());
    return;
  }
  const uint64_t id = next_modex_id_++;
  FrameWriter ask(LinkKind::kModexRequest);
  ask.U32(layout_.node).U64(id).U32(request.rank);
  modex_waiting_[id] = request;
  SendToNode(owner, ask.frame());
  Log("asked node %u for the data of rank %u", owner, request.rank);
}

void Launcher::ServeModex(uint32_t requester, uint64_t id, uint32_t rank) {
  const uint64_t local_id = next_modex_id_++;
  modex_serving_[local_id] = ModexServed{requester, id};
  pmix_->RequestModex(nspace_, rank, local_id);
}

void Launcher::AnswerModex(uint64_t local_id, pmix_status_t status, const std::string& data) {
  auto it = modex_serving_.find(local_id);
  if (it == modex_serving_.end()) return;
  FrameWriter reply(LinkKind::kModexReply);
  reply.U32(it->second.requester).U64(it->second.id).I32(status).Bytes(data);
  SendToNode(it->second.requester, reply.frame());
  modex_serving_.erase(it);
}

void Launcher::AnnounceTermination(uint32_t rank, pmix_status_t code, int exit_code) {
  if (!SpansNodes()) return;
  SendToOthers(TerminationFrame(rank, code, exit_code), layout_.node);
}

void Launcher::AnnounceEnd() {
  if (!SpansNodes() || end_from_link_) return;
  FrameWriter end(LinkKind::kEnd);
  end.U32(layout_.node).I32(verdict_.ExitStatus()).Bytes(verdict_.summary());
  SendToOthers(end.frame(), layout_.node);
}

void Launcher::KillRemote(const std::vector<uint32_t>& ranks) {
  FrameWriter kill_frame(LinkKind::kKill);
  SendToOthers(WriteRanks(kill_frame, ranks).frame(), layout_.node);  // node 0 relays to owners
}

void Launcher::KillLocal(const std::vector<uint32_t>& ranks, std::string* killed) {
  for (uint32_t rank : ranks) {
    Process* p = FindRank(rank);
    if (p == nullptr || !AbortProcess(p)) continue;
    *killed += (killed->empty() ? "" : ",") + p->label;
  }
}

bool Launcher::NodesFinished() {
  if (!done_sent_) {
    done_sent_ = true;
    if (layout_.node == 0) {
      RecordNodeDone(0, verdict_.ExitStatus(), verdict_.summary());
    } else {
      // A job another node ended needs no summary from here: node 0 has the reason.
      FrameWriter done(LinkKind::kDone);
      done.I32(verdict_.ExitStatus()).Bytes(end_from_link_ ? std::string() : verdict_.summary());
      SendToNode(0, done.frame());
      Log("this node's processes have ended; waiting for node 0");
    }
  }
  if (layout_.node != 0 && !job_status_ && !links_[0]->open()) job_status_ = verdict_.ExitStatus();
  // After --timeout or a signal, a node that does not answer (hung, or its network gone) must
  // not hold this rftrun: it gets the grace a process gets after SIGTERM, and the drain's.
  if (!job_status_ && verdict_.stopped_from_outside()) {
    timers_.ArmOnce({TimerKind::kNodesGiveUp}, MonotonicNanos() + kTermGraceNs + kDrainGraceNs);
  }
  return job_status_.has_value();
}

void Launcher::RecordNodeDone(uint32_t node, int status, const std::string& summary) {
  if (node >= node_status_.size() || node_status_[node]) return;
  node_status_[node] = status;
  if (node != 0) {
    Log("node %u (%s) is done, status %d", node, layout_.nodes[node].name.c_str(), status);
    if (status != 0 && !summary.empty()) {
      WriteAll(2, "rftrun: node " + layout_.nodes[node].name + ": " + summary + "\n");
    }
  }
  if (!done_sent_) return;  // node 0's own processes still run
  if (!std::all_of(node_status_.begin(), node_status_.end(),
                   [](const auto& s) { return s.has_value(); })) {
    return;
  }
  std::vector<int> statuses;
  for (const auto& s : node_status_) statuses.push_back(*s);
  const int job = JobVerdict::CombineNodes(statuses);
  job_status_ = job;
  FrameWriter finish(LinkKind::kFinish);
  finish.I32(job);
  for (uint32_t n = 1; n < layout_.nodes.size(); ++n) SendToNode(n, finish.frame());
  Log("every node is done: the job's status is %d", job);
}

}  // namespace rft::rftrun
