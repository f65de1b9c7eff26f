// verbs close: pairs of an eager channel closing their QPs by agreement and the place in the
// receive queue going to another pair (EagerChannel::Close; docs/verbs.md, "Closing a pair"),
// on a real device (a soft-RoCE guest). Run under a PMIx launcher:
//
//   rftrun -n 3 close_check [RFT_NET_DEVICE value]
//
// Every channel has one place (EagerConfig::max_places = 1) and makes QPs on demand. Every step
// waits on the check's own fences:
// 1. Ranks 0 and 1 open QPs for each other and connect; rank 0 is refused a QP for rank 2 (no
//    place left) and a close of a QP not yet connected.
// 2. They send each other 3 windows of messages (queued sends, explicit credits).
// 3. Both close: the close ends at each end without a failure reported, sends are refused while
//    it runs, and the place is free again.
// 4. Rank 0 opens a QP for rank 2 in that place (the closed QP, reset), and they exchange
//    3 windows.
// 5. Ranks 0 and 2 close; ranks 0 and 1 connect again, with new QPs and full windows, and
//    exchange 3 more windows, numbered on from the first ones: each pair's messages arrive in
//    order across its two connections.
// 6. Rank 1 closes first; rank 0 then posts SENDs and RDMA WRITEs that nothing acknowledges
//    and closes at once: every one of them completes as flushed, and no failure is reported.
// Exits 0 when every step passed, 1 when one failed, 77 without an RDMA device.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "base/byte_order.h"
#include "tests/verbs/device_check.h"
#include "transport/bootstrap/bootstrap.h"
#include "transport/verbs/eager_channel.h"
#include "transport/verbs/qp_address.h"
#include "transport/verbs/verbs_context.h"

namespace rft::verbs {
namespace {

using transport::Bootstrap;
using Clock = std::chrono::steady_clock;

constexpr auto kStepLimit = std::chrono::seconds(120);  // generous: an emulated guest stalls
constexpr uint32_t kBurstWindows = 3;
constexpr uint32_t kUnanswered = 8;  // sends outstanding when a QP closes (step 6)

Rank self = 0;

CheckVoice voice("close");

class CloseCheck {
 public:
  CloseCheck(Bootstrap& boot, VerbsContext& context) : boot_(boot), context_(context) {}

  Status Run() {
    EagerConfig config;
    config.qps_on_demand = true;
    config.max_places = 1;
    StatusOr<std::unique_ptr<EagerChannel>> created = EagerChannel::Create(
        context_, self, 3, config,
        [this](Rank from, std::span<const std::byte> payload) {
          arrivals_.OnMessage(from, payload);
        },
        [this](Rank peer, std::string_view status) {
          if (failure_.empty())
            failure_ = "rank " + std::to_string(peer) + ": " + std::string(status);
        });
    if (!created.ok()) return created.status();
    channel_ = std::move(*created);
    channel_->set_closed_callback([this](Rank peer) { ++closed_[peer]; });
    burst_ = kBurstWindows * channel_->credits();

    // Step 1.
    const Rank partner = self == 2 ? kInvalidRank : 1 - self;
    RFT_RETURN_IF_ERROR(ConnectPair(partner, "rft.close.first", [&] {
      if (self != 0) return Status::Ok();
      const Status refused = channel_->Open(2);
      if (refused.code() != RFT_ERR_ARG ||
          refused.message().find("no place") == std::string::npos) {
        return OtherError("opening a QP for rank 2 with the one place held: " + refused.ToString() +
                          ", expected RFT_ERR_ARG naming the place");
      }
      const Status early = channel_->Close(1);
      if (early.code() != RFT_ERR_ARG) {
        return OtherError("closing a QP not yet connected: " + early.ToString() +
                          ", expected RFT_ERR_ARG");
      }
      voice.Say("refused: " + refused.message() + "; " + early.message());
      return Status::Ok();
    }));
    // Step 2.
    RFT_RETURN_IF_ERROR(Traffic(partner));
    // Step 3.
    RFT_RETURN_IF_ERROR(ClosePair(partner));
    // Step 4.
    const Rank second = self == 1 ? kInvalidRank : 2 - self;  // 0 <-> 2
    RFT_RETURN_IF_ERROR(ConnectPair(second, "rft.close.second", [] { return Status::Ok(); }));
    RFT_RETURN_IF_ERROR(Traffic(second));
    // Step 5.
    RFT_RETURN_IF_ERROR(ClosePair(second));
    RFT_RETURN_IF_ERROR(ConnectPair(partner, "rft.close.third", [] { return Status::Ok(); }));
    RFT_RETURN_IF_ERROR(Traffic(partner));
    // Step 6.
    RFT_RETURN_IF_ERROR(CloseUnderTraffic(partner));
    if (!arrivals_.wrong().empty()) return OtherError(arrivals_.wrong());
    if (!failure_.empty()) return OtherError("a peer was reported failed: " + failure_);
    std::string counts;
    uint64_t flushed = 0;
    for (Rank p = 0; p < 3; ++p) {
      if (p == self || arrivals_.arrived(p) == 0) continue;
      counts += (counts.empty() ? "" : ", ") + std::to_string(arrivals_.arrived(p)) +
                " from rank " + std::to_string(p) + " over " +
                std::to_string(channel_->stats(p).closes) +
                (channel_->stats(p).closes == 1 ? " close" : " closes");
      flushed += channel_->stats(p).flushed;
    }
    voice.Say("close ok: " + counts + ", in order (" + std::to_string(flushed) +
              " requests flushed by the closes)");
    // The others may still wait for credits this rank owes them.
    return boot_.Fence(false);
  }

 private:
  // This rank and `peer` (kInvalidRank: this rank sits the step out, but takes part in its
  // fences) open QPs for each other, publish their addresses under `key` and connect; `before`
  // runs once the QP is open and before it is connected. No SEND before both ends are.
  template <typename Before>
  Status ConnectPair(Rank peer, const std::string& key, Before before) {
    std::vector<std::byte> mine;
    if (peer != kInvalidRank) {
      RFT_RETURN_IF_ERROR(channel_->Open(peer));
      RFT_RETURN_IF_ERROR(before());
      mine = EncodeSingleQpAddress(channel_->address(peer));
    }
    RFT_RETURN_IF_ERROR(boot_.Put(key, mine));
    RFT_RETURN_IF_ERROR(boot_.Commit());
    RFT_RETURN_IF_ERROR(boot_.Fence(true));
    if (peer != kInvalidRank) {
      StatusOr<std::vector<std::byte>> theirs = boot_.Get(peer, key);
      if (!theirs.ok()) return theirs.status();
      StatusOr<QpAddress> address = DecodeSingleQpAddress(*theirs);
      if (!address.ok()) return address.status();
      remote_[peer] = *address;
      RFT_RETURN_IF_ERROR(channel_->Connect(peer, *address));
    }
    return boot_.Fence(false);
  }

  // kBurstWindows windows of messages each way with `peer`, numbered on from the last ones,
  // sent as fast as the channel takes them; until every one arrived and nothing is owed.
  Status Traffic(Rank peer) {
    if (peer != kInvalidRank) {
      const uint32_t send_to = sent_[peer] + burst_;
      const uint32_t receive_to = arrivals_.arrived(peer) + burst_;
      const Clock::time_point limit = Clock::now() + kStepLimit;
      while (sent_[peer] < send_to || arrivals_.arrived(peer) < receive_to || !channel_->Idle()) {
        if (Clock::now() > limit) {
          return OtherError("traffic with rank " + std::to_string(peer) + ": sent " +
                            std::to_string(sent_[peer]) + "/" + std::to_string(send_to) +
                            ", received " + std::to_string(arrivals_.arrived(peer)) + "/" +
                            std::to_string(receive_to) + " after " +
                            std::to_string(kStepLimit.count()) + " s");
        }
        while (sent_[peer] < send_to) {
          StatusOr<SendResult> r = channel_->Send(peer, NumberedMessage(self, peer, sent_[peer]));
          if (!r.ok()) return r.status();
          if (*r == SendResult::kFull) break;
          ++sent_[peer];
        }
        RFT_RETURN_IF_ERROR(Poll());
      }
      if (channel_->stats(peer).queued == 0) {
        return OtherError("traffic with rank " + std::to_string(peer) + ": no send was queued");
      }
    }
    return boot_.Fence(false);
  }

  // Both ends of the pair close, after a fence that says neither sends any more.
  Status ClosePair(Rank peer) {
    RFT_RETURN_IF_ERROR(boot_.Fence(false));
    if (peer != kInvalidRank) RFT_RETURN_IF_ERROR(CloseOne(peer));
    // No QP is connected again before both ends closed.
    return boot_.Fence(false);
  }

  // Rank 1 closes first; then rank 0 posts kUnanswered SENDs and WRITEs, which nothing at rank
  // 1 will acknowledge, and closes at once: they are outstanding, and each completes as
  // flushed, with no failure reported.
  Status CloseUnderTraffic(Rank peer) {
    if (self == 1) RFT_RETURN_IF_ERROR(CloseOne(peer));
    RFT_RETURN_IF_ERROR(boot_.Fence(false));
    if (self == 0) {
      const uint64_t flushed_before = channel_->stats(peer).flushed;
      // SENDs as far as the credits allow (rank 1's last credit message may have been lost to
      // its close: a pair that closes needs no credits), then RDMA WRITEs, which take none.
      const std::vector<std::byte> message = NumberedMessage(self, peer, 0);
      uint32_t posted = 0;
      bool by_send = true;
      while (posted < kUnanswered) {
        if (by_send) {
          StatusOr<SendResult> r = channel_->SendNow(peer, message, {});
          if (!r.ok())
            return OtherError("a send to rank 1 before closing: " + r.status().ToString());
          by_send = *r == SendResult::kPosted;
          if (by_send) ++posted;
          continue;
        }
        StatusOr<bool> written = channel_->Write(peer, posted, remote_[peer].addr,
                                                 remote_[peer].rkey, /*signaled=*/false);
        if (!written.ok()) {
          return OtherError("a write to rank 1 before closing: " + written.status().ToString());
        }
        if (!*written) break;  // the send queue is full
        ++posted;
      }
      if (posted == 0) return OtherError("nothing could be posted to rank 1 before closing");
      RFT_RETURN_IF_ERROR(CloseOne(peer));
      const uint64_t flushed = channel_->stats(peer).flushed - flushed_before;
      if (flushed != posted) {
        return OtherError("closing with " + std::to_string(posted) + " sends outstanding: " +
                          std::to_string(flushed) + " completed as flushed");
      }
      voice.Say("closed with " + std::to_string(posted) + (posted == 1 ? " request" : " requests") +
                " outstanding: all flushed");
    }
    return boot_.Fence(false);
  }

  // Closes the QP of `peer` and waits until the close ended.
  Status CloseOne(Rank peer) {
    {
      const int before = closed_[peer];
      RFT_RETURN_IF_ERROR(channel_->Close(peer));
      StatusOr<SendResult> refused = channel_->Send(peer, NumberedMessage(self, peer, 0));
      if (refused.ok() || refused.status().code() != RFT_ERR_ARG) {
        return OtherError("a send to rank " + std::to_string(peer) + " while its QP closes: " +
                          (refused.ok() ? "taken" : refused.status().ToString()) +
                          ", expected RFT_ERR_ARG");
      }
      const Clock::time_point limit = Clock::now() + kStepLimit;
      while (closed_[peer] == before) {
        if (Clock::now() > limit) {
          return OtherError("the close of rank " + std::to_string(peer) + "'s QP did not end");
        }
        RFT_RETURN_IF_ERROR(Poll());
      }
      if (channel_->opened(peer) || channel_->closing(peer) || channel_->place_holders() != 0) {
        return OtherError("after closing rank " + std::to_string(peer) + "'s QP: opened " +
                          std::to_string(channel_->opened(peer)) + ", " +
                          std::to_string(channel_->place_holders()) + " places held");
      }
    }
    return Status::Ok();
  }

  Status Poll() {
    StatusOr<int> polled = channel_->Progress();
    if (!polled.ok()) return polled.status();
    if (!arrivals_.wrong().empty()) return OtherError(arrivals_.wrong());
    if (!failure_.empty()) return OtherError("a peer was reported failed: " + failure_);
    return Status::Ok();
  }

  Bootstrap& boot_;
  VerbsContext& context_;
  std::unique_ptr<EagerChannel> channel_;
  uint32_t burst_ = 0;
  std::vector<uint32_t> sent_ = std::vector<uint32_t>(3, 0);
  ArrivalCheck arrivals_{self, 3};  // `self` is set before the check is made
  std::vector<int> closed_ = std::vector<int>(3, 0);
  std::vector<QpAddress> remote_ = std::vector<QpAddress>(3);  // each peer's last record
  std::string failure_;
};

int Run(int argc, char** argv) {
  std::variant<JobCheckStart, int> check_start =
      StartJobCheck(voice, argc > 1 ? argv[1] : "", 3, 3);
  if (const int* status = std::get_if<int>(&check_start)) return *status;
  const Endpoint* endpoint = &std::get<JobCheckStart>(check_start).endpoint;
  Bootstrap& boot = *std::get<JobCheckStart>(check_start).job;
  self = boot.rank();
  StatusOr<std::unique_ptr<VerbsContext>> opened = VerbsContext::Open(*endpoint, 4096);
  if (!opened.ok()) return voice.Fail(opened.status().message());
  CloseCheck check(boot, **opened);
  if (Status s = check.Run(); !s.ok()) return voice.Fail(s.ToString());
  return 0;
}

}  // namespace
}  // namespace rft::verbs

int main(int argc, char** argv) { return rft::verbs::Run(argc, argv); }
