#include "tools/rftrun/node_link.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

namespace rft::rftrun {
namespace {

Frame Body(const std::string& frame) {
  // A whole frame as FrameWriter makes it: 4 bytes of length, the kind, the body.
  Frame out;
  out.kind = static_cast<LinkKind>(frame[4]);
  out.body = frame.substr(5);
  return out;
}

TEST(NodeLinkTest, FieldsComeBackAsWritten) {
  FrameWriter writer(LinkKind::kModexReply);
  writer.U32(7).U64(0x0123456789abcdefull).I32(-31).Bytes("data\0more");
  const Frame frame = Body(writer.frame());
  EXPECT_EQ(frame.kind, LinkKind::kModexReply);
  FrameReader reader(frame);
  EXPECT_EQ(reader.U32(), 7u);
  EXPECT_EQ(reader.U64(), 0x0123456789abcdefull);
  EXPECT_EQ(reader.I32(), -31);
  EXPECT_EQ(reader.Bytes(), "data");  // a C string literal: up to its NUL
  EXPECT_TRUE(reader.ok());
  EXPECT_EQ(Reframe(frame), writer.frame());
}

TEST(NodeLinkTest, ATruncatedOrLongerFrameDoesNotDecode) {
  FrameWriter writer(LinkKind::kFence);
  writer.U32(2).Bytes("abc");
  Frame frame = Body(writer.frame());
  for (size_t cut = 0; cut < frame.body.size(); ++cut) {
    Frame truncated = frame;
    truncated.body.resize(cut);
    FrameReader reader(truncated);
    reader.U32();
    reader.Bytes();
    EXPECT_FALSE(reader.ok()) << "cut at " << cut;
  }
  frame.body += "x";  // left over after the last field
  FrameReader reader(frame);
  reader.U32();
  reader.Bytes();
  EXPECT_FALSE(reader.ok());
  // A length beyond the body is refused, not read past the end.
  Frame lying;
  lying.body = std::string("\xff\xff\xff\x7f", 4) + "ab";
  FrameReader liar(lying);
  EXPECT_EQ(liar.Bytes(), "");
  EXPECT_FALSE(liar.ok());
}

TEST(NodeLinkTest, FramesCrossASocketWholeAndInOrder) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  LinkConnection sender(fds[0]);
  LinkConnection receiver(fds[1]);
  const std::string big(200000, 'z');  // more than one read
  ASSERT_TRUE(sender.Send(FrameWriter(LinkKind::kEnd).I32(3).Bytes("why").frame()));
  ASSERT_TRUE(sender.Send(FrameWriter(LinkKind::kFenceDone).U32(0).Bytes(big).frame()));
  std::vector<Frame> frames;
  for (int i = 0; i < 1000 && frames.size() < 2; ++i) {
    ASSERT_TRUE(sender.Flush());
    ASSERT_TRUE(receiver.Receive(&frames));
  }
  ASSERT_EQ(frames.size(), 2u);
  EXPECT_EQ(frames[0].kind, LinkKind::kEnd);
  EXPECT_EQ(frames[1].kind, LinkKind::kFenceDone);
  FrameReader second(frames[1]);
  EXPECT_EQ(second.U32(), 0u);
  EXPECT_EQ(second.Bytes(), big);
  EXPECT_TRUE(second.ok());
  sender.Close();
  EXPECT_FALSE(receiver.Receive(&frames));  // closed by the other side
}

TEST(NodeLinkTest, AGarbageLengthEndsTheConnection) {
  int fds[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  LinkConnection receiver(fds[1]);
  const char garbage[] = "\xff\xff\xff\xff\x01";
  ASSERT_EQ(write(fds[0], garbage, 5), 5);
  std::vector<Frame> frames;
  EXPECT_FALSE(receiver.Receive(&frames));
  EXPECT_TRUE(frames.empty());
  close(fds[0]);
}

TEST(NodeLinkTest, TheLayoutFindsEachRanksNode) {
  JobLayout layout;
  layout.nodes = {{"a", 0, 2}, {"b", 2, 3}};
  EXPECT_EQ(layout.size(), 5u);
  EXPECT_EQ(layout.NodeOf(0), 0u);
  EXPECT_EQ(layout.NodeOf(1), 0u);
  EXPECT_EQ(layout.NodeOf(2), 1u);
  EXPECT_EQ(layout.NodeOf(4), 1u);
  EXPECT_EQ(layout.NodeOf(5), 2u);  // no such rank: nodes.size()
}

}  // namespace
}  // namespace rft::rftrun
