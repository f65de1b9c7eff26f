// Groups: ordered sets of processes, over rft's.
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ulfm_api/mpi/mpi_internal.h"

using namespace rft::mpi;

extern "C" {
#define RFT_GROUP_OR_FAIL(var, handle, function) \
  rft_group_t var = RftGroup(handle);            \
  if (var == RFT_GROUP_NULL) return BadGroup(handle, function);

// `made` is read after `rc` is computed: the caller passes the rft call's result first. An
// argument rft refuses is `arg_class` (incl and excl: a rank out of the group).
static int GroupResult(int rc, const rft_group_t* made, MPI_Group* out, const char* function,
                       int arg_class = MPI_ERR_ARG) {
  if (rc == RFT_ERR_ARG) {
    return Raise(MPI_COMM_WORLD, arg_class,
                 std::string(function) + ": " + rft_last_error_message());
  }
  if (rc != RFT_SUCCESS) return RaiseRft(MPI_COMM_WORLD, function, rc);
  *out = NewGroup(*made);
  return MPI_SUCCESS;
}

int PMPI_Group_size(MPI_Group group, int* size) {
  RFT_GROUP_OR_FAIL(g, group, "MPI_Group_size");
  return FromRft(rft_group_size(g, size));
}

int PMPI_Group_rank(MPI_Group group, int* rank) {
  RFT_GROUP_OR_FAIL(g, group, "MPI_Group_rank");
  const int rc = rft_group_rank(g, rank);
  if (*rank == RFT_UNDEFINED) *rank = MPI_UNDEFINED;
  return FromRft(rc);
}

int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[]) {
  RFT_GROUP_OR_FAIL(a, group1, "MPI_Group_translate_ranks");
  RFT_GROUP_OR_FAIL(b, group2, "MPI_Group_translate_ranks");
  // MPI_PROC_NULL translates to itself; rft knows only ranks.
  std::vector<int> in, where;
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
    } else {
      in.push_back(ranks1[i]);
      where.push_back(i);
    }
  }
  std::vector<int> out(in.size());
  const int rc =
      rft_group_translate_ranks(a, static_cast<int>(in.size()), in.data(), b, out.data());
  if (rc != RFT_SUCCESS) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_RANK,
                 std::string("MPI_Group_translate_ranks: ") + rft_last_error_message());
  }
  for (size_t i = 0; i < in.size(); ++i) {
    ranks2[where[i]] = out[i] == RFT_UNDEFINED ? MPI_UNDEFINED : out[i];
  }
  return MPI_SUCCESS;
}

int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  RFT_GROUP_OR_FAIL(a, group1, "MPI_Group_compare");
  RFT_GROUP_OR_FAIL(b, group2, "MPI_Group_compare");
  return FromRft(rft_group_compare(a, b, result));
}

int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  RFT_GROUP_OR_FAIL(a, group1, "MPI_Group_union");
  RFT_GROUP_OR_FAIL(b, group2, "MPI_Group_union");
  rft_group_t made = RFT_GROUP_NULL;
  return GroupResult(rft_group_union(a, b, &made), &made, newgroup, "MPI_Group_union");
}

int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  RFT_GROUP_OR_FAIL(a, group1, "MPI_Group_intersection");
  RFT_GROUP_OR_FAIL(b, group2, "MPI_Group_intersection");
  rft_group_t made = RFT_GROUP_NULL;
  return GroupResult(rft_group_intersection(a, b, &made), &made, newgroup,
                     "MPI_Group_intersection");
}

int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  RFT_GROUP_OR_FAIL(a, group1, "MPI_Group_difference");
  RFT_GROUP_OR_FAIL(b, group2, "MPI_Group_difference");
  rft_group_t made = RFT_GROUP_NULL;
  return GroupResult(rft_group_difference(a, b, &made), &made, newgroup, "MPI_Group_difference");
}

int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  RFT_GROUP_OR_FAIL(g, group, "MPI_Group_incl");
  rft_group_t made = RFT_GROUP_NULL;
  return GroupResult(rft_group_incl(g, n, ranks, &made), &made, newgroup, "MPI_Group_incl",
                     MPI_ERR_RANK);
}

int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  RFT_GROUP_OR_FAIL(g, group, "MPI_Group_excl");
  rft_group_t made = RFT_GROUP_NULL;
  return GroupResult(rft_group_excl(g, n, ranks, &made), &made, newgroup, "MPI_Group_excl",
                     MPI_ERR_RANK);
}

// The ranks the triplets (first, last, stride) name, in order; MPI_SUCCESS or the class.
static int ExpandRanges(int group_size, int n, int ranges[][3], std::vector<int>* ranks,
                        const char* function) {
  for (int i = 0; i < n; ++i) {
    const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0 || first < 0 || first >= group_size || last < 0 || last >= group_size ||
        (stride > 0 && first > last) || (stride < 0 && first < last)) {
      return Raise(MPI_COMM_WORLD, MPI_ERR_RANK,
                   std::string(function) + ": range " + std::to_string(i) + " (" +
                       std::to_string(first) + ", " + std::to_string(last) + ", " +
                       std::to_string(stride) + "): expected ranks 0.." +
                       std::to_string(group_size - 1) + " and a stride that reaches the last");
    }
    for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) ranks->push_back(r);
  }
  return MPI_SUCCESS;
}

int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  RFT_GROUP_OR_FAIL(g, group, "MPI_Group_range_incl");
  int size = 0;
  rft_group_size(g, &size);
  std::vector<int> ranks;
  const int rc = ExpandRanges(size, n, ranges, &ranks, "MPI_Group_range_incl");
  if (rc != MPI_SUCCESS) return rc;
  return PMPI_Group_incl(group, static_cast<int>(ranks.size()), ranks.data(), newgroup);
}

int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  RFT_GROUP_OR_FAIL(g, group, "MPI_Group_range_excl");
  int size = 0;
  rft_group_size(g, &size);
  std::vector<int> ranks;
  const int rc = ExpandRanges(size, n, ranges, &ranks, "MPI_Group_range_excl");
  if (rc != MPI_SUCCESS) return rc;
  return PMPI_Group_excl(group, static_cast<int>(ranks.size()), ranks.data(), newgroup);
}

int PMPI_Group_free(MPI_Group* group) {
  if (*group == MPI_GROUP_EMPTY) {
    *group = MPI_GROUP_NULL;  // predefined: it stays
    return MPI_SUCCESS;
  }
  Group* g = FindGroup(*group);
  if (g == nullptr) return BadGroup(*group, "MPI_Group_free");
  rft_group_free(&g->rft);
  state().groups.Remove(*group);
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"

RFT_MPI_ALIAS(Group_size)
RFT_MPI_ALIAS(Group_rank)
RFT_MPI_ALIAS(Group_translate_ranks)
RFT_MPI_ALIAS(Group_compare)
RFT_MPI_ALIAS(Group_union)
RFT_MPI_ALIAS(Group_intersection)
RFT_MPI_ALIAS(Group_difference)
RFT_MPI_ALIAS(Group_incl)
RFT_MPI_ALIAS(Group_excl)
RFT_MPI_ALIAS(Group_range_incl)
RFT_MPI_ALIAS(Group_range_excl)
RFT_MPI_ALIAS(Group_free)
