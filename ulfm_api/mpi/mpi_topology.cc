// Cartesian topologies: a communicator with the grid's shape kept beside it (no reordering).
#include <string.h>

#include <algorithm>
#include <string>
#include <vector>

#include "ulfm_api/mpi/mpi_internal.h"

using namespace rft::mpi;

extern "C" {
int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
  if (nnodes <= 0 || ndims <= 0) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_DIMS,
                 "MPI_Dims_create: nnodes " + std::to_string(nnodes) + ", ndims " +
                     std::to_string(ndims) + ": expected both > 0");
  }
  int fixed = 1, free_dims = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] < 0) return Raise(MPI_COMM_WORLD, MPI_ERR_DIMS, "MPI_Dims_create: dims < 0");
    if (dims[i] > 0)
      fixed *= dims[i];
    else
      ++free_dims;
  }
  if (nnodes % fixed != 0) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_DIMS,
                 "MPI_Dims_create: " + std::to_string(nnodes) +
                     " is not a multiple of the fixed dimensions' product " +
                     std::to_string(fixed));
  }
  if (free_dims == 0) return MPI_SUCCESS;
  // Factor the rest and deal the prime factors, largest first, to the smallest dimension: the
  // dimensions come out as close to each other as the factors allow, in non-increasing order.
  int rest = nnodes / fixed;
  std::vector<int> factors;
  for (int f = 2; f * f <= rest; ++f) {
    while (rest % f == 0) {
      factors.push_back(f);
      rest /= f;
    }
  }
  if (rest > 1) factors.push_back(rest);
  std::sort(factors.rbegin(), factors.rend());
  std::vector<int> out(free_dims, 1);
  for (int f : factors) *std::min_element(out.begin(), out.end()) *= f;
  std::sort(out.rbegin(), out.rend());
  for (int i = 0, j = 0; i < ndims; ++i) {
    if (dims[i] == 0) dims[i] = out[j++];
  }
  return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[], int,
                     MPI_Comm* comm_cart) {
  Comm* c = FindComm(comm_old);
  if (c == nullptr) return BadComm(comm_old, "MPI_Cart_create");
  if (ndims < 0) return Raise(comm_old, MPI_ERR_DIMS, "MPI_Cart_create: ndims < 0");
  long cells = 1;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) return Raise(comm_old, MPI_ERR_DIMS, "MPI_Cart_create: a dimension <= 0");
    cells *= dims[i];
  }
  if (cells > c->size) {
    return Raise(comm_old, MPI_ERR_TOPOLOGY,
                 "MPI_Cart_create: the grid has " + std::to_string(cells) + " cells, comm only " +
                     std::to_string(c->size) + " members");
  }
  // No reordering: rank r of the old communicator is cell r (MPI allows it).
  const int rc = PMPI_Comm_split(comm_old, c->rank < cells ? 0 : MPI_UNDEFINED, c->rank, comm_cart);
  if (rc != MPI_SUCCESS || *comm_cart == MPI_COMM_NULL) return rc;
  Comm* cart = FindComm(*comm_cart);
  cart->has_cart = true;
  cart->cart.dims.assign(dims, dims + ndims);
  cart->cart.periods.assign(periods, periods + ndims);
  return MPI_SUCCESS;
}

static Comm* CartOf(MPI_Comm comm, const char* function, int* rc) {
  Comm* c = FindComm(comm);
  if (c == nullptr) {
    *rc = BadComm(comm, function);
    return nullptr;
  }
  if (!c->has_cart) {
    *rc = Raise(comm, MPI_ERR_TOPOLOGY, std::string(function) + ": no Cartesian topology");
    return nullptr;
  }
  return c;
}

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  int rc = MPI_SUCCESS;
  Comm* c = CartOf(comm, "MPI_Cart_coords", &rc);
  if (c == nullptr) return rc;
  const int n = static_cast<int>(c->cart.dims.size());
  if (rank < 0 || rank >= c->size) return CheckRankArg(*c, rank, false, "MPI_Cart_coords", comm);
  for (int i = n - 1; i >= 0; --i) {
    if (i < maxdims) coords[i] = rank % c->cart.dims[i];
    rank /= c->cart.dims[i];
  }
  return MPI_SUCCESS;
}

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  int rc = MPI_SUCCESS;
  Comm* c = CartOf(comm, "MPI_Cart_rank", &rc);
  if (c == nullptr) return rc;
  int r = 0;
  for (size_t i = 0; i < c->cart.dims.size(); ++i) {
    int x = coords[i];
    const int d = c->cart.dims[i];
    if (c->cart.periods[i]) {
      x = ((x % d) + d) % d;
    } else if (x < 0 || x >= d) {
      return Raise(comm, MPI_ERR_ARG,
                   "MPI_Cart_rank: coordinate " + std::to_string(x) + " of dimension " +
                       std::to_string(i) + ": expected 0.." + std::to_string(d - 1));
    }
    r = r * d + x;
  }
  *rank = r;
  return MPI_SUCCESS;
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  int rc = MPI_SUCCESS;
  Comm* c = CartOf(comm, "MPI_Cart_shift", &rc);
  if (c == nullptr) return rc;
  const int n = static_cast<int>(c->cart.dims.size());
  if (direction < 0 || direction >= n) {
    return Raise(comm, MPI_ERR_ARG,
                 "MPI_Cart_shift: direction " + std::to_string(direction) + ": expected 0.." +
                     std::to_string(n - 1));
  }
  std::vector<int> coords(n);
  PMPI_Cart_coords(comm, c->rank, n, coords.data());
  auto neighbour = [&](int offset) {
    std::vector<int> at = coords;
    at[direction] += offset;
    const int d = c->cart.dims[direction];
    if (!c->cart.periods[direction] && (at[direction] < 0 || at[direction] >= d)) {
      return MPI_PROC_NULL;
    }
    int r = 0;
    PMPI_Cart_rank(comm, at.data(), &r);
    return r;
  };
  *rank_source = neighbour(-disp);
  *rank_dest = neighbour(disp);
  return MPI_SUCCESS;
}

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  int rc = MPI_SUCCESS;
  Comm* c = CartOf(comm, "MPI_Cart_sub", &rc);
  if (c == nullptr) return rc;
  const int n = static_cast<int>(c->cart.dims.size());
  std::vector<int> coords(n);
  PMPI_Cart_coords(comm, c->rank, n, coords.data());
  // Members that share the dropped dimensions' coordinates form one sub-grid.
  int color = 0, key = 0;
  std::vector<int> dims, periods;
  for (int i = 0; i < n; ++i) {
    if (remain_dims[i]) {
      key = key * c->cart.dims[i] + coords[i];
      dims.push_back(c->cart.dims[i]);
      periods.push_back(c->cart.periods[i]);
    } else {
      color = color * c->cart.dims[i] + coords[i];
    }
  }
  CartTopology topology{dims, periods};
  rc = PMPI_Comm_split(comm, color, key, newcomm);
  if (rc != MPI_SUCCESS) return rc;
  Comm* sub = FindComm(*newcomm);
  sub->has_cart = true;
  sub->cart = topology;
  return MPI_SUCCESS;
}

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  int rc = MPI_SUCCESS;
  Comm* c = CartOf(comm, "MPI_Cart_get", &rc);
  if (c == nullptr) return rc;
  const int n = std::min(maxdims, static_cast<int>(c->cart.dims.size()));
  for (int i = 0; i < n; ++i) {
    dims[i] = c->cart.dims[i];
    periods[i] = c->cart.periods[i];
  }
  return PMPI_Cart_coords(comm, c->rank, maxdims, coords);
}

int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  int rc = MPI_SUCCESS;
  Comm* c = CartOf(comm, "MPI_Cartdim_get", &rc);
  if (c == nullptr) return rc;
  *ndims = static_cast<int>(c->cart.dims.size());
  return MPI_SUCCESS;
}

int PMPI_Topo_test(MPI_Comm comm, int* status) {
  Comm* c = FindComm(comm);
  if (c == nullptr) return BadComm(comm, "MPI_Topo_test");
  *status = c->has_cart ? MPI_CART : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

}  // extern "C"

RFT_MPI_ALIAS(Dims_create)
RFT_MPI_ALIAS(Cart_create)
RFT_MPI_ALIAS(Cart_coords)
RFT_MPI_ALIAS(Cart_rank)
RFT_MPI_ALIAS(Cart_shift)
RFT_MPI_ALIAS(Cart_sub)
RFT_MPI_ALIAS(Cart_get)
RFT_MPI_ALIAS(Cartdim_get)
RFT_MPI_ALIAS(Topo_test)
