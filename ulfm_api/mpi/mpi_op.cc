// Reduction operators: the predefined ones applied here (the reductions rft's collectives
// have no native form for are folded with these), which ones rft reduces natively, and user
// operators.
#include <stdint.h>
#include <string.h>

#include <algorithm>
#include <complex>
#include <string>

#include "ulfm_api/mpi/mpi_internal.h"

namespace rft::mpi {
namespace {

// SUM and PROD: every arithmetic type, complex ones included.
template <typename T>
bool SumOrProduct(MPI_Op op, const T* in, T* io, int n) {
  switch (op) {
    case MPI_SUM:
      for (int i = 0; i < n; ++i) io[i] = in[i] + io[i];
      return true;
    case MPI_PROD:
      for (int i = 0; i < n; ++i) io[i] = in[i] * io[i];
      return true;
    default:
      return false;
  }
}

// And MAX and MIN, for the ordered (real and integer) types.
template <typename T>
bool Arithmetic(MPI_Op op, const T* in, T* io, int n) {
  if (SumOrProduct(op, in, io, n)) return true;
  switch (op) {
    case MPI_MAX:
      for (int i = 0; i < n; ++i) io[i] = std::max(in[i], io[i]);
      return true;
    case MPI_MIN:
      for (int i = 0; i < n; ++i) io[i] = std::min(in[i], io[i]);
      return true;
    default:
      return false;
  }
}

template <typename T>
bool Integer(MPI_Op op, const T* in, T* io, int n) {
  if (Arithmetic(op, in, io, n)) return true;
  switch (op) {
    case MPI_LAND:
      for (int i = 0; i < n; ++i) io[i] = in[i] && io[i];
      return true;
    case MPI_LOR:
      for (int i = 0; i < n; ++i) io[i] = in[i] || io[i];
      return true;
    case MPI_LXOR:
      for (int i = 0; i < n; ++i) io[i] = !in[i] != !io[i];
      return true;
    case MPI_BAND:
      for (int i = 0; i < n; ++i) io[i] = in[i] & io[i];
      return true;
    case MPI_BOR:
      for (int i = 0; i < n; ++i) io[i] = in[i] | io[i];
      return true;
    case MPI_BXOR:
      for (int i = 0; i < n; ++i) io[i] = in[i] ^ io[i];
      return true;
    default:
      return false;
  }
}

bool Logical(MPI_Op op, const bool* in, bool* io, int n) {
  switch (op) {
    case MPI_LAND:
      for (int i = 0; i < n; ++i) io[i] = in[i] && io[i];
      return true;
    case MPI_LOR:
      for (int i = 0; i < n; ++i) io[i] = in[i] || io[i];
      return true;
    case MPI_LXOR:
      for (int i = 0; i < n; ++i) io[i] = in[i] != io[i];
      return true;
    default:
      return false;
  }
}

// MINLOC/MAXLOC on {value; int index}: the extreme value, the lowest index among ties.
template <typename V>
bool Location(MPI_Op op, const void* in_bytes, void* io_bytes, int n) {
  struct Pair {
    V v;
    int i;
  };
  const Pair* in = static_cast<const Pair*>(in_bytes);
  Pair* io = static_cast<Pair*>(io_bytes);
  if (op != MPI_MINLOC && op != MPI_MAXLOC) return false;
  for (int k = 0; k < n; ++k) {
    const bool better = op == MPI_MINLOC ? in[k].v < io[k].v : in[k].v > io[k].v;
    if (better || (in[k].v == io[k].v && in[k].i < io[k].i)) io[k] = in[k];
  }
  return true;
}

bool ApplyPredefined(MPI_Op op, MPI_Datatype type, const void* in, void* io, int n) {
#define RFT_INT_CASE(handle, T) \
  case handle:                  \
    return Integer(op, static_cast<const T*>(in), static_cast<T*>(io), n);
  switch (type) {
    RFT_INT_CASE(MPI_CHAR, signed char)
    RFT_INT_CASE(MPI_SIGNED_CHAR, signed char)
    RFT_INT_CASE(MPI_INT8_T, int8_t)
    RFT_INT_CASE(MPI_UNSIGNED_CHAR, unsigned char)
    RFT_INT_CASE(MPI_UINT8_T, uint8_t)
    RFT_INT_CASE(MPI_SHORT, short)
    RFT_INT_CASE(MPI_INT16_T, int16_t)
    RFT_INT_CASE(MPI_UNSIGNED_SHORT, unsigned short)
    RFT_INT_CASE(MPI_UINT16_T, uint16_t)
    RFT_INT_CASE(MPI_INT, int)
    RFT_INT_CASE(MPI_INT32_T, int32_t)
    RFT_INT_CASE(MPI_WCHAR, wchar_t)
    RFT_INT_CASE(MPI_UNSIGNED, unsigned)
    RFT_INT_CASE(MPI_UINT32_T, uint32_t)
    RFT_INT_CASE(MPI_LONG, long)
    RFT_INT_CASE(MPI_AINT, long)
    RFT_INT_CASE(MPI_OFFSET, long)
    RFT_INT_CASE(MPI_COUNT, long)
    RFT_INT_CASE(MPI_UNSIGNED_LONG, unsigned long)
    RFT_INT_CASE(MPI_LONG_LONG_INT, long long)
    RFT_INT_CASE(MPI_INT64_T, int64_t)
    RFT_INT_CASE(MPI_UNSIGNED_LONG_LONG, unsigned long long)
    RFT_INT_CASE(MPI_UINT64_T, uint64_t)
#undef RFT_INT_CASE
    case MPI_BYTE: {  // MPI: only the bitwise operators apply to bytes
      if (op != MPI_BAND && op != MPI_BOR && op != MPI_BXOR) return false;
      return Integer(op, static_cast<const uint8_t*>(in), static_cast<uint8_t*>(io), n);
    }
    case MPI_FLOAT:
      return Arithmetic(op, static_cast<const float*>(in), static_cast<float*>(io), n);
    case MPI_DOUBLE:
      return Arithmetic(op, static_cast<const double*>(in), static_cast<double*>(io), n);
    case MPI_LONG_DOUBLE:
      return Arithmetic(op, static_cast<const long double*>(in), static_cast<long double*>(io), n);
    case MPI_C_BOOL:
    case MPI_CXX_BOOL:
      return Logical(op, static_cast<const bool*>(in), static_cast<bool*>(io), n);
    case MPI_C_FLOAT_COMPLEX:
    case MPI_CXX_FLOAT_COMPLEX:
      return SumOrProduct(op, static_cast<const std::complex<float>*>(in),
                          static_cast<std::complex<float>*>(io), n);
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_CXX_DOUBLE_COMPLEX:
      return SumOrProduct(op, static_cast<const std::complex<double>*>(in),
                          static_cast<std::complex<double>*>(io), n);
    case MPI_C_LONG_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX:
      return SumOrProduct(op, static_cast<const std::complex<long double>*>(in),
                          static_cast<std::complex<long double>*>(io), n);
    case MPI_2INT:
      return Location<int>(op, in, io, n);
    case MPI_FLOAT_INT:
      return Location<float>(op, in, io, n);
    case MPI_DOUBLE_INT:
      return Location<double>(op, in, io, n);
    case MPI_LONG_INT:
      return Location<long>(op, in, io, n);
    case MPI_SHORT_INT:
      return Location<short>(op, in, io, n);
    case MPI_LONG_DOUBLE_INT:
      return Location<long double>(op, in, io, n);
    default:
      return false;
  }
}

}  // namespace

int ApplyOp(MPI_Op op, MPI_Datatype type, const void* in, void* inout, int count) {
  if (Op* user = state().ops.Find(op); user != nullptr) {
    MPI_Datatype t = type;
    int n = count;
    user->function(const_cast<void*>(in), inout, &n, &t);
    return MPI_SUCCESS;
  }
  if (op == MPI_REPLACE) {
    const Datatype* t = FindDatatype(type);
    memcpy(inout, in, static_cast<size_t>(t->extent) * static_cast<size_t>(count));
    return MPI_SUCCESS;
  }
  if (op == MPI_NO_OP) return MPI_SUCCESS;
  return ApplyPredefined(op, type, in, inout, count) ? MPI_SUCCESS : MPI_ERR_OP;
}

bool RftReduction(MPI_Op op, MPI_Datatype type, rft_op_t* rft_op, rft_datatype_t* rft_type) {
  switch (op) {
    case MPI_SUM:
      *rft_op = RFT_SUM;
      break;
    case MPI_PROD:
      *rft_op = RFT_PROD;
      break;
    case MPI_MIN:
      *rft_op = RFT_MIN;
      break;
    case MPI_MAX:
      *rft_op = RFT_MAX;
      break;
    case MPI_LAND:
      *rft_op = RFT_LAND;
      break;
    case MPI_LOR:
      *rft_op = RFT_LOR;
      break;
    case MPI_BAND:
      *rft_op = RFT_BAND;
      break;
    case MPI_BOR:
      *rft_op = RFT_BOR;
      break;
    case MPI_BXOR:
      *rft_op = RFT_BXOR;
      break;
    default:
      return false;
  }
  const bool bitwise = op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR;
  const bool logical = op == MPI_LAND || op == MPI_LOR;
  switch (type) {
    case MPI_CHAR:
    case MPI_SIGNED_CHAR:
    case MPI_INT8_T:
      *rft_type = RFT_INT8;
      break;
    case MPI_UNSIGNED_CHAR:
    case MPI_UINT8_T:
      *rft_type = RFT_UINT8;
      break;
    case MPI_SHORT:
    case MPI_INT16_T:
      *rft_type = RFT_INT16;
      break;
    case MPI_UNSIGNED_SHORT:
    case MPI_UINT16_T:
      *rft_type = RFT_UINT16;
      break;
    case MPI_INT:
    case MPI_INT32_T:
    case MPI_WCHAR:
      *rft_type = RFT_INT32;
      break;
    case MPI_UNSIGNED:
    case MPI_UINT32_T:
      *rft_type = RFT_UINT32;
      break;
    case MPI_LONG:
    case MPI_LONG_LONG_INT:
    case MPI_INT64_T:
    case MPI_AINT:
    case MPI_OFFSET:
    case MPI_COUNT:
      *rft_type = RFT_INT64;
      break;
    case MPI_UNSIGNED_LONG:
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_UINT64_T:
      *rft_type = RFT_UINT64;
      break;
    case MPI_FLOAT:
      if (bitwise || logical) return false;
      *rft_type = RFT_FLOAT;
      break;
    case MPI_DOUBLE:
      if (bitwise || logical) return false;
      *rft_type = RFT_DOUBLE;
      break;
    case MPI_BYTE:
      if (!bitwise) return false;
      *rft_type = RFT_UINT8;
      break;
    default:
      return false;
  }
  return true;
}

int CheckOp(MPI_Op op, MPI_Datatype type, std::string* message) {
  if (state().ops.Find(op) != nullptr) return MPI_SUCCESS;
  if (op == MPI_REPLACE || op == MPI_NO_OP) return MPI_SUCCESS;
  const uint32_t h = static_cast<uint32_t>(op);
  if (h < 0x58000001u || h > 0x5800000cu) {
    *message = op == MPI_OP_NULL ? "MPI_OP_NULL" : "invalid or freed operator";
    return MPI_ERR_OP;
  }
  // Does it apply? Try it on one zeroed element (predefined types are at most 32 bytes).
  alignas(16) char a[64] = {0}, b[64] = {0};
  if (FindDatatype(type) == nullptr || !FindDatatype(type)->predefined ||
      !ApplyPredefined(op, type, a, b, 1)) {
    const Datatype* t = FindDatatype(type);
    *message = std::string("operator does not apply to datatype ") +
               (t != nullptr && !t->name.empty() ? t->name : "(derived)");
    return MPI_ERR_OP;
  }
  return MPI_SUCCESS;
}

bool OpIsCommutative(MPI_Op op) {
  if (Op* user = state().ops.Find(op); user != nullptr) return user->commutative;
  return true;
}

}  // namespace rft::mpi

using namespace rft::mpi;

extern "C" {

int PMPI_Op_create(MPI_User_function* user_fn, int commute, MPI_Op* op) {
  if (user_fn == nullptr) return Raise(MPI_COMM_WORLD, MPI_ERR_ARG, "MPI_Op_create: NULL function");
  *op = state().ops.Add(Op{user_fn, commute != 0});
  return MPI_SUCCESS;
}

int PMPI_Op_free(MPI_Op* op) {
  if (state().ops.Find(*op) == nullptr) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_free: not a user operator (or freed)");
  }
  state().ops.Remove(*op);
  *op = MPI_OP_NULL;
  return MPI_SUCCESS;
}

int PMPI_Op_commutative(MPI_Op op, int* commute) {
  std::string message;
  if (state().ops.Find(op) == nullptr && (op < MPI_MAX || op > MPI_NO_OP)) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_OP, "MPI_Op_commutative: invalid operator");
  }
  *commute = OpIsCommutative(op);
  return MPI_SUCCESS;
}

}  // extern "C"

RFT_MPI_ALIAS(Op_create)
RFT_MPI_ALIAS(Op_free)
RFT_MPI_ALIAS(Op_commutative)
