// The C API (rft.h): groups.
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "ulfm_api/binding.h"

using rft::ArgError;
using rft::Rank;
using rft::Status;
using rft::api::Group;
using rft::api::binding::CheckGroup;
using rft::api::binding::NewGroup;
using rft::api::binding::Raise;
using rft::api::binding::Success;

namespace {

int ToCRank(Rank rank) {
  return rank == Group::kUndefined ? RFT_UNDEFINED : static_cast<int>(rank);
}

// Ranks from the caller: RFT_ERR_ARG for a negative count or rank, or a NULL array.
Status ReadRanks(const char* what, int n, const int* ranks, std::vector<Rank>* out) {
  if (n < 0)
    return ArgError(std::string(what) + ": count " + std::to_string(n) + ": expected >= 0");
  if (n > 0 && ranks == nullptr) return ArgError(std::string(what) + ": the rank array is NULL");
  out->clear();
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0) {
      return ArgError(std::string(what) + ": rank " + std::to_string(ranks[i]) + " at [" +
                      std::to_string(i) + "]: expected a rank >= 0");
    }
    out->push_back(static_cast<Rank>(ranks[i]));
  }
  return Status::Ok();
}

int Result(rft::StatusOr<Group> group, rft_group_t* result) {
  if (!group.ok()) return Raise(nullptr, group.status());
  *result = NewGroup(std::move(*group));
  return Success();
}

template <class Op>
int SetOperation(const char* what, rft_group_t a, rft_group_t b, rft_group_t* result, Op op) {
  if (Status s = CheckGroup(a, what); !s.ok()) return Raise(nullptr, s);
  if (Status s = CheckGroup(b, what); !s.ok()) return Raise(nullptr, s);
  if (result == nullptr) return Raise(nullptr, ArgError(std::string(what) + ": result is NULL"));
  *result = NewGroup(op(a->group, b->group));
  return Success();
}

}  // namespace

extern "C" int rft_group_size(rft_group_t group, int* size) {
  if (Status s = CheckGroup(group, "rft_group_size"); !s.ok()) return Raise(nullptr, s);
  if (size == nullptr) return Raise(nullptr, ArgError("rft_group_size: size is NULL"));
  *size = static_cast<int>(group->group.size());
  return Success();
}

extern "C" int rft_group_rank(rft_group_t group, int* rank) {
  if (Status s = CheckGroup(group, "rft_group_rank"); !s.ok()) return Raise(nullptr, s);
  if (rank == nullptr) return Raise(nullptr, ArgError("rft_group_rank: rank is NULL"));
  rft::api::Session* session = rft::api::binding::session();
  if (session == nullptr) {
    return Raise(nullptr, rft::OtherError("rft_group_rank: rft is not initialised"));
  }
  *rank = ToCRank(group->group.RankOf(session->plane().rank()));
  return Success();
}

extern "C" int rft_group_translate_ranks(rft_group_t a, int n, const int* ranks_a, rft_group_t b,
                                         int* ranks_b) {
  constexpr const char* kWhat = "rft_group_translate_ranks";
  if (Status s = CheckGroup(a, kWhat); !s.ok()) return Raise(nullptr, s);
  if (Status s = CheckGroup(b, kWhat); !s.ok()) return Raise(nullptr, s);
  std::vector<Rank> in;
  if (Status s = ReadRanks(kWhat, n, ranks_a, &in); !s.ok()) return Raise(nullptr, s);
  if (n > 0 && ranks_b == nullptr)
    return Raise(nullptr, ArgError("rft_group_translate_ranks: ranks_b is NULL"));
  std::vector<Rank> out;
  if (Status s = a->group.TranslateRanks(in, b->group, &out); !s.ok()) return Raise(nullptr, s);
  for (int i = 0; i < n; ++i) ranks_b[i] = ToCRank(out[i]);
  return Success();
}

extern "C" int rft_group_union(rft_group_t a, rft_group_t b, rft_group_t* result) {
  return SetOperation("rft_group_union", a, b, result, Group::Union);
}

extern "C" int rft_group_intersection(rft_group_t a, rft_group_t b, rft_group_t* result) {
  return SetOperation("rft_group_intersection", a, b, result, Group::Intersection);
}

extern "C" int rft_group_difference(rft_group_t a, rft_group_t b, rft_group_t* result) {
  return SetOperation("rft_group_difference", a, b, result, Group::Difference);
}

extern "C" int rft_group_incl(rft_group_t group, int n, const int* ranks, rft_group_t* result) {
  if (Status s = CheckGroup(group, "rft_group_incl"); !s.ok()) return Raise(nullptr, s);
  if (result == nullptr) return Raise(nullptr, ArgError("rft_group_incl: result is NULL"));
  std::vector<Rank> in;
  if (Status s = ReadRanks("rft_group_incl", n, ranks, &in); !s.ok()) return Raise(nullptr, s);
  return Result(group->group.Incl(in), result);
}

extern "C" int rft_group_excl(rft_group_t group, int n, const int* ranks, rft_group_t* result) {
  if (Status s = CheckGroup(group, "rft_group_excl"); !s.ok()) return Raise(nullptr, s);
  if (result == nullptr) return Raise(nullptr, ArgError("rft_group_excl: result is NULL"));
  std::vector<Rank> in;
  if (Status s = ReadRanks("rft_group_excl", n, ranks, &in); !s.ok()) return Raise(nullptr, s);
  return Result(group->group.Excl(in), result);
}

namespace {

// MPI's (first, last, stride) triplets as ranks of `group`.
Status ExpandRanges(const char* what, const Group& group, int n, const int ranges[][3],
                    std::vector<Rank>* out) {
  if (n < 0)
    return ArgError(std::string(what) + ": count " + std::to_string(n) + ": expected >= 0");
  if (n > 0 && ranges == nullptr) return ArgError(std::string(what) + ": the range array is NULL");
  const int64_t size = group.size();
  out->clear();
  for (int i = 0; i < n; ++i) {
    const int64_t first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    const std::string where = std::string(what) + ": range " + std::to_string(i) + " (" +
                              std::to_string(first) + ", " + std::to_string(last) + ", " +
                              std::to_string(stride) + ")";
    if (stride == 0) return ArgError(where + ": the stride is 0");
    if (first < 0 || first >= size || last < 0 || last >= size) {
      return ArgError(where + ": expected first and last in 0.." + std::to_string(size - 1));
    }
    // first + k * stride for k = 0 .. (last - first) / stride, which must not be negative (as
    // MPICH checks: a stride pointing away from `last` names no rank and is an error).
    if ((last - first) / stride < 0) {
      return ArgError(where + ": the stride leads away from last");
    }
    for (int64_t r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      out->push_back(static_cast<Rank>(r));
    }
  }
  return Status::Ok();
}

// range_incl and range_excl: the ranges expanded, then Incl or Excl.
int RangeGroup(const char* what, rft_group_t group, int n, const int ranges[][3],
               rft_group_t* result,
               rft::StatusOr<Group> (Group::*select)(std::span<const Rank>) const) {
  if (Status s = CheckGroup(group, what); !s.ok()) return Raise(nullptr, s);
  if (result == nullptr) return Raise(nullptr, ArgError(std::string(what) + ": result is NULL"));
  std::vector<Rank> ranks;
  if (Status s = ExpandRanges(what, group->group, n, ranges, &ranks); !s.ok()) {
    return Raise(nullptr, s);
  }
  return Result((group->group.*select)(ranks), result);
}

}  // namespace

extern "C" int rft_group_range_incl(rft_group_t group, int n, const int ranges[][3],
                                    rft_group_t* result) {
  return RangeGroup("rft_group_range_incl", group, n, ranges, result, &Group::Incl);
}

extern "C" int rft_group_range_excl(rft_group_t group, int n, const int ranges[][3],
                                    rft_group_t* result) {
  return RangeGroup("rft_group_range_excl", group, n, ranges, result, &Group::Excl);
}

extern "C" int rft_group_compare(rft_group_t a, rft_group_t b, int* result) {
  if (Status s = CheckGroup(a, "rft_group_compare"); !s.ok()) return Raise(nullptr, s);
  if (Status s = CheckGroup(b, "rft_group_compare"); !s.ok()) return Raise(nullptr, s);
  if (result == nullptr) return Raise(nullptr, ArgError("rft_group_compare: result is NULL"));
  *result = rft::api::binding::ToComparison(Group::Compare(a->group, b->group));
  return Success();
}

extern "C" int rft_group_free(rft_group_t* group) {
  if (group == nullptr) return Raise(nullptr, ArgError("rft_group_free: group is NULL"));
  if (Status s = CheckGroup(*group, "rft_group_free"); !s.ok()) return Raise(nullptr, s);
  if (*group == RFT_GROUP_EMPTY) {
    return Raise(nullptr,
                 ArgError("rft_group_free: RFT_GROUP_EMPTY is predefined and never freed"));
  }
  rft::api::binding::RetireGroup(*group);
  *group = RFT_GROUP_NULL;
  return Success();
}
