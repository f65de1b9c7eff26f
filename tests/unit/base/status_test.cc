#include "base/status.h"

#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace rft {
namespace {

TEST(StatusTest, DefaultIsOk) {
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), RFT_SUCCESS);
  EXPECT_EQ(s.message(), "");
  EXPECT_EQ(s.ToString(), "RFT_SUCCESS");
  EXPECT_EQ(Status::Ok(), s);
}

TEST(StatusTest, ErrorCarriesCodeAndMessage) {
  Status s(RFT_ERR_REVOKED, "communicator 7");
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), RFT_ERR_REVOKED);
  EXPECT_EQ(s.message(), "communicator 7");
  EXPECT_EQ(s.ToString(), "RFT_ERR_REVOKED: communicator 7");
  EXPECT_EQ(Status(RFT_ERR_OTHER, "").ToString(), "RFT_ERR_OTHER");
  EXPECT_FALSE(s == Status(RFT_ERR_REVOKED, "communicator 8"));
  EXPECT_FALSE(s == Status(RFT_ERR_OTHER, "communicator 7"));
}

TEST(StatusTest, Helpers) {
  EXPECT_EQ(ArgError("x").code(), RFT_ERR_ARG);
  EXPECT_EQ(ArgError("bad count -1").ToString(), "RFT_ERR_ARG: bad count -1");
  EXPECT_EQ(TimeoutError("x").code(), RFT_ERR_TIMEOUT);
  EXPECT_EQ(OtherError("x").code(), RFT_ERR_OTHER);
  EXPECT_EQ(ProcFailedError("x").code(), RFT_ERR_PROC_FAILED);
  EXPECT_EQ(RevokedError("x").code(), RFT_ERR_REVOKED);
  EXPECT_EQ(OtherError("why").message(), "why");
}

// The message lives on the heap now: copies and moves must keep it whole and independent.
TEST(StatusTest, CopiesAndMovesKeepTheMessage) {
  Status original(RFT_ERR_ARG, "rank 9: expected a rank below 4");
  Status copy = original;
  EXPECT_EQ(copy, original);
  Status assigned;
  assigned = copy;
  copy = Status::Ok();  // the copy lets go of its message; the others keep theirs
  EXPECT_TRUE(copy.ok());
  EXPECT_EQ(copy.message(), "");
  EXPECT_EQ(assigned.message(), "rank 9: expected a rank below 4");
  Status moved = std::move(assigned);
  EXPECT_EQ(moved, original);
  Status target(RFT_ERR_OTHER, "old");
  target = std::move(moved);
  EXPECT_EQ(target, original);
  const Status& same = target;
  target = same;  // self-assignment keeps the status
  EXPECT_EQ(target.ToString(), "RFT_ERR_ARG: rank 9: expected a rank below 4");
  EXPECT_EQ(Status(RFT_ERR_OTHER, std::string()).message(), "");
}

TEST(StatusTest, ColdErrorBuildsItsMessageOnce) {
  int builds = 0;
  const Status s = ColdError(RFT_ERR_OTHER, [&] {
    ++builds;
    return "ibv_poll_cq returned " + std::to_string(-5);
  });
  EXPECT_EQ(builds, 1);
  EXPECT_EQ(s.code(), RFT_ERR_OTHER);
  EXPECT_EQ(s.message(), "ibv_poll_cq returned -5");
}

Status FailsAt(int step, int fail_step, std::vector<int>* trace) {
  trace->push_back(step);
  return step == fail_step ? ArgError("step " + std::to_string(step)) : Status::Ok();
}

Status Pipeline(int fail_step, std::vector<int>* trace) {
  RFT_RETURN_IF_ERROR(FailsAt(1, fail_step, trace));
  RFT_RETURN_IF_ERROR(FailsAt(2, fail_step, trace));
  RFT_RETURN_IF_ERROR(FailsAt(3, fail_step, trace));
  return Status::Ok();
}

TEST(StatusTest, ReturnIfErrorStopsAtTheFirstError) {
  std::vector<int> trace;
  Status s = Pipeline(2, &trace);
  EXPECT_EQ(s, ArgError("step 2"));
  EXPECT_EQ(trace, (std::vector<int>{1, 2}));
  trace.clear();
  EXPECT_TRUE(Pipeline(0, &trace).ok());
  EXPECT_EQ(trace, (std::vector<int>{1, 2, 3}));
}

StatusOr<std::unique_ptr<int>> MakeAt(int step, int fail_step) {
  if (step == fail_step) return ArgError("step " + std::to_string(step));
  return std::make_unique<int>(step);
}

StatusOr<int> SumOfSteps(int fail_step) {
  RFT_ASSIGN_OR_RETURN(std::unique_ptr<int> first, MakeAt(1, fail_step));
  std::unique_ptr<int> second;
  RFT_ASSIGN_OR_RETURN(second, MakeAt(2, fail_step));  // into an existing variable
  RFT_ASSIGN_OR_RETURN(auto third, MakeAt(3, fail_step));
  return *first + *second + *third;
}

TEST(StatusTest, AssignOrReturnMovesTheValueOrReturnsTheError) {
  const StatusOr<int> all = SumOfSteps(0);
  ASSERT_TRUE(all.ok()) << all.status().ToString();
  EXPECT_EQ(*all, 6);
  for (int fail_step : {1, 2, 3}) {
    const StatusOr<int> failed = SumOfSteps(fail_step);
    EXPECT_EQ(failed.status(), ArgError("step " + std::to_string(fail_step)));
  }
}

TEST(StatusOrTest, HoldsAValue) {
  StatusOr<int> v = 42;
  ASSERT_TRUE(v.ok());
  EXPECT_TRUE(v.status().ok());
  EXPECT_EQ(v.value(), 42);
  EXPECT_EQ(*v, 42);
  *v = 7;
  EXPECT_EQ(v.value(), 7);
  EXPECT_EQ(v.value_or(3), 7);
}

TEST(StatusOrTest, HoldsAnError) {
  StatusOr<std::string> v = TimeoutError("fence");
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), RFT_ERR_TIMEOUT);
  EXPECT_EQ(v.status().message(), "fence");
  EXPECT_EQ(v.value_or("fallback"), "fallback");
}

TEST(StatusOrTest, ConvertsFromCompatibleTypes) {
  StatusOr<std::string> s = "literal";
  EXPECT_EQ(*s, "literal");
  EXPECT_EQ(s->size(), 7u);
  StatusOr<int64_t> wide = 5;
  EXPECT_EQ(*wide, 5);
}

TEST(StatusOrTest, OkStatusBecomesAnError) {
  StatusOr<int> v = Status::Ok();
  EXPECT_FALSE(v.ok());
  EXPECT_EQ(v.status().code(), RFT_ERR_OTHER);
}

TEST(StatusOrTest, MoveOnlyValues) {
  StatusOr<std::unique_ptr<int>> v = std::make_unique<int>(9);
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(**v, 9);
  std::unique_ptr<int> taken = std::move(v).value();
  EXPECT_EQ(*taken, 9);
  StatusOr<std::unique_ptr<int>> moved = std::move(v);
  EXPECT_TRUE(moved.ok());
}

struct NoDefault {
  explicit NoDefault(int x) : x(x) {}
  int x;
};

TEST(StatusOrTest, NeedsNoDefaultConstructor) {
  StatusOr<NoDefault> v = NoDefault(4);
  EXPECT_EQ(v->x, 4);
  StatusOr<NoDefault> e = ArgError("no");
  EXPECT_FALSE(e.ok());
}

// Counts live objects to check that StatusOr constructs and destroys exactly once.
struct Counted {
  static inline int live = 0;
  Counted() { ++live; }
  Counted(const Counted&) { ++live; }
  Counted(Counted&&) noexcept { ++live; }
  Counted& operator=(const Counted&) = default;
  ~Counted() { --live; }
};

TEST(StatusOrTest, LifetimesBalance) {
  {
    StatusOr<Counted> a = Counted();
    StatusOr<Counted> b = a;
    StatusOr<Counted> c = ArgError("x");
    EXPECT_EQ(Counted::live, 2);
    c = a;  // error -> value
    EXPECT_EQ(Counted::live, 3);
    EXPECT_TRUE(c.ok());
    b = StatusOr<Counted>(ArgError("y"));  // value -> error
    EXPECT_EQ(Counted::live, 2);
    EXPECT_FALSE(b.ok());
    EXPECT_EQ(b.status().message(), "y");
    a = std::move(c);
    EXPECT_TRUE(a.ok());
    StatusOr<Counted>& alias = a;
    a = alias;  // self-assignment keeps the value
    EXPECT_TRUE(a.ok());
  }
  EXPECT_EQ(Counted::live, 0);
}

TEST(StatusOrDeathTest, ValueOfAnErrorAborts) {
  StatusOr<int> v = ArgError("the bad thing");
  EXPECT_DEATH((void)v.value(), "the bad thing");
  EXPECT_DEATH((void)*v, "RFT_ERR_ARG");
}

}  // namespace
}  // namespace rft
