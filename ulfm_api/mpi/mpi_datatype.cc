// Datatypes: the predefined ones and the derived ones, flattened to byte blocks; packing.
#include <complex.h>
#include <stddef.h>
#include <string.h>

#include <algorithm>
#include <complex>
#include <string>
#include <vector>

#include "ulfm_api/mpi/mpi_internal.h"

namespace rft::mpi {
namespace {

// The predefined types, by their handle's low byte (MPICH's numbering of its builtins).
struct Builtin {
  MPI_Datatype handle;
  const char* name;
};
constexpr Builtin kBuiltins[] = {
    {MPI_CHAR, "MPI_CHAR"},
    {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR"},
    {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR"},
    {MPI_BYTE, "MPI_BYTE"},
    {MPI_WCHAR, "MPI_WCHAR"},
    {MPI_SHORT, "MPI_SHORT"},
    {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT"},
    {MPI_INT, "MPI_INT"},
    {MPI_UNSIGNED, "MPI_UNSIGNED"},
    {MPI_LONG, "MPI_LONG"},
    {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG"},
    {MPI_FLOAT, "MPI_FLOAT"},
    {MPI_DOUBLE, "MPI_DOUBLE"},
    {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE"},
    {MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT"},
    {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG"},
    {MPI_PACKED, "MPI_PACKED"},
    {MPI_2INT, "MPI_2INT"},
    {MPI_INT8_T, "MPI_INT8_T"},
    {MPI_INT16_T, "MPI_INT16_T"},
    {MPI_INT32_T, "MPI_INT32_T"},
    {MPI_INT64_T, "MPI_INT64_T"},
    {MPI_UINT8_T, "MPI_UINT8_T"},
    {MPI_UINT16_T, "MPI_UINT16_T"},
    {MPI_UINT32_T, "MPI_UINT32_T"},
    {MPI_UINT64_T, "MPI_UINT64_T"},
    {MPI_C_BOOL, "MPI_C_BOOL"},
    {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX"},
    {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX"},
    {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX"},
    {MPI_AINT, "MPI_AINT"},
    {MPI_OFFSET, "MPI_OFFSET"},
    {MPI_COUNT, "MPI_COUNT"},
    {MPI_CXX_BOOL, "MPI_CXX_BOOL"},
    {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX"},
    {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX"},
    {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX"},
};

struct BuiltinTable {
  Datatype types[256];
  bool valid[256] = {};
  Datatype pairs[5];  // MPI_FLOAT_INT ... MPI_LONG_DOUBLE_INT (0x8c000000 + i)
  BuiltinTable() {
    for (const Builtin& b : kBuiltins) {
      const int i = b.handle & 0xff;
      valid[i] = true;
      Datatype& t = types[i];
      t.size = SimpleBuiltinSize(b.handle);
      t.extent = t.true_extent = t.size;
      t.blocks = {{0, static_cast<MPI_Aint>(t.size)}};
      t.contiguous = t.committed = t.predefined = true;
      t.element = b.handle;
      t.name = b.name;
    }
    // The pair types of MINLOC and MAXLOC, {value; int} as C lays the struct out: the data
    // blocks (padding is not data, so it is not sent) and the struct's size as the extent.
    struct FloatInt {
      float v;
      int i;
    };
    struct DoubleInt {
      double v;
      int i;
    };
    struct LongInt {
      long v;
      int i;
    };
    struct ShortInt {
      short v;
      int i;
    };
    struct LongDoubleInt {
      long double v;
      int i;
    };
    auto pair = [&](int i, MPI_Aint value_size, MPI_Aint int_at, MPI_Aint extent,
                    const char* name) {
      Datatype& t = pairs[i];
      t.blocks = {{0, value_size}, {int_at, static_cast<MPI_Aint>(sizeof(int))}};
      if (int_at == value_size) t.blocks = {{0, value_size + static_cast<MPI_Aint>(sizeof(int))}};
      t.size = value_size + static_cast<MPI_Aint>(sizeof(int));
      t.extent = t.true_extent = extent;
      t.contiguous = t.blocks.size() == 1 && t.size == extent;
      t.committed = t.predefined = true;
      t.element = static_cast<MPI_Datatype>(0x8c000000 + i);
      t.name = name;
    };
    pair(0, sizeof(float), offsetof(FloatInt, i), sizeof(FloatInt), "MPI_FLOAT_INT");
    pair(1, sizeof(double), offsetof(DoubleInt, i), sizeof(DoubleInt), "MPI_DOUBLE_INT");
    pair(2, sizeof(long), offsetof(LongInt, i), sizeof(LongInt), "MPI_LONG_INT");
    pair(3, sizeof(short), offsetof(ShortInt, i), sizeof(ShortInt), "MPI_SHORT_INT");
    pair(4, sizeof(long double), offsetof(LongDoubleInt, i), sizeof(LongDoubleInt),
         "MPI_LONG_DOUBLE_INT");
  }
};

const BuiltinTable& Builtins() {
  static const BuiltinTable* table = new BuiltinTable();
  return *table;
}

// Appends `count` copies of `old` at `displacement` + i * `stride` bytes to `blocks`, merging a
// block that starts where the previous one ends.
void AppendBlocks(const Datatype& old, MPI_Aint displacement, MPI_Aint count, MPI_Aint stride,
                  std::vector<Block>* blocks) {
  for (MPI_Aint i = 0; i < count; ++i) {
    for (const Block& b : old.blocks) {
      const MPI_Aint at = displacement + i * stride + b.offset;
      if (!blocks->empty() && blocks->back().offset + blocks->back().length == at) {
        blocks->back().length += b.length;
      } else {
        blocks->push_back({at, b.length});
      }
    }
  }
}

// Finishes a derived type from its blocks and the bounds its constructor computed.
MPI_Datatype Finish(Datatype t, MPI_Aint lb, MPI_Aint ub, int combiner, MPI_Datatype element) {
  t.size = 0;
  MPI_Aint true_lb = 0, true_ub = 0;
  for (size_t i = 0; i < t.blocks.size(); ++i) {
    const Block& b = t.blocks[i];
    t.size += b.length;
    if (i == 0 || b.offset < true_lb) true_lb = b.offset;
    if (i == 0 || b.offset + b.length > true_ub) true_ub = b.offset + b.length;
  }
  t.true_lb = true_lb;
  t.true_extent = true_ub - true_lb;
  t.lb = lb;
  t.extent = ub - lb;
  t.contiguous =
      t.blocks.size() == 1 && t.blocks[0].offset == 0 && t.blocks[0].length == t.extent && lb == 0;
  if (t.blocks.empty()) t.contiguous = t.extent == 0;
  t.combiner = combiner;
  t.element = element;
  t.committed = false;
  return state().datatypes.Add(std::move(t));
}

int BadType(MPI_Datatype type, const char* function) {
  return Raise(MPI_COMM_WORLD, MPI_ERR_TYPE,
               std::string(function) + ": " +
                   (type == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL"
                                              : "invalid or freed datatype (a handle rft does not "
                                                "know, e.g. from another MPI's ABI)"));
}

// The element a derived type's parts all hold, or MPI_DATATYPE_NULL when they differ.
MPI_Datatype CommonElement(const Datatype& a, MPI_Datatype b) {
  return a.element == b ? b : MPI_DATATYPE_NULL;
}

}  // namespace

const Datatype* FindDatatype(MPI_Datatype handle) {
  const uint32_t h = static_cast<uint32_t>(handle);
  if ((h & 0xffff0000u) == 0x4c000000u) {
    return Builtins().valid[h & 0xff] && Builtins().types[h & 0xff].element == handle
               ? &Builtins().types[h & 0xff]
               : nullptr;
  }
  if (h >= 0x8c000000u && h <= 0x8c000004u) return &Builtins().pairs[h - 0x8c000000u];
  return state().datatypes.Find(handle);
}

int CheckDatatype(MPI_Datatype handle, const char* function, std::string* message) {
  const Datatype* t = FindDatatype(handle);
  if (t == nullptr) {
    *message = std::string(function) + ": " +
               (handle == MPI_DATATYPE_NULL ? "MPI_DATATYPE_NULL"
                                            : "invalid or freed datatype (a handle rft does not "
                                              "know, e.g. from another MPI's ABI)");
    return MPI_ERR_TYPE;
  }
  if (!t->committed) {
    *message = std::string(function) + ": datatype not committed (MPI_Type_commit)";
    return MPI_ERR_TYPE;
  }
  return MPI_SUCCESS;
}

void Pack(const Datatype& type, const void* buffer, size_t count, char* out) {
  const char* base = static_cast<const char*>(buffer);
  for (size_t i = 0; i < count; ++i) {
    const char* element = base + static_cast<MPI_Aint>(i) * type.extent;
    for (const Block& b : type.blocks) {
      memcpy(out, element + b.offset, static_cast<size_t>(b.length));
      out += b.length;
    }
  }
}

void Unpack(const Datatype& type, const char* in, size_t count, void* buffer) {
  char* base = static_cast<char*>(buffer);
  for (size_t i = 0; i < count; ++i) {
    char* element = base + static_cast<MPI_Aint>(i) * type.extent;
    for (const Block& b : type.blocks) {
      memcpy(element + b.offset, in, static_cast<size_t>(b.length));
      in += b.length;
    }
  }
}

}  // namespace rft::mpi

using namespace rft::mpi;

#define RFT_TYPE_OR_FAIL(var, handle, function) \
  const Datatype* var = FindDatatype(handle);   \
  if (var == nullptr) return BadType(handle, function);

extern "C" {

int PMPI_Type_size(MPI_Datatype datatype, int* size) {
  RFT_TYPE_OR_FAIL(t, datatype, "MPI_Type_size");
  *size = static_cast<int>(t->size);
  return MPI_SUCCESS;
}

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  RFT_TYPE_OR_FAIL(t, datatype, "MPI_Type_size_x");
  *size = t->size;
  return MPI_SUCCESS;
}

int PMPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  RFT_TYPE_OR_FAIL(t, datatype, "MPI_Type_get_extent");
  *lb = t->lb;
  *extent = t->extent;
  return MPI_SUCCESS;
}

int PMPI_Type_extent(MPI_Datatype datatype, MPI_Aint* extent) {
  MPI_Aint lb;
  return PMPI_Type_get_extent(datatype, &lb, extent);
}

int PMPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  RFT_TYPE_OR_FAIL(t, datatype, "MPI_Type_get_true_extent");
  *true_lb = t->true_lb;
  *true_extent = t->true_extent;
  return MPI_SUCCESS;
}

static int CheckCount(int count, const char* function) {
  if (count >= 0) return MPI_SUCCESS;
  return Raise(MPI_COMM_WORLD, MPI_ERR_COUNT,
               std::string(function) + ": count " + std::to_string(count) + ": expected >= 0");
}

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  RFT_TYPE_OR_FAIL(old, oldtype, "MPI_Type_create_hvector");
  if (int rc = CheckCount(count, "MPI_Type_create_hvector"); rc) return rc;
  if (int rc = CheckCount(blocklength, "MPI_Type_create_hvector"); rc) return rc;
  Datatype t;
  MPI_Aint lb = 0, ub = 0;
  for (int i = 0; i < count; ++i) {
    AppendBlocks(*old, i * stride, blocklength, old->extent, &t.blocks);
    const MPI_Aint block_lb = i * stride + old->lb;
    const MPI_Aint block_ub = block_lb + blocklength * old->extent;
    if (i == 0 || block_lb < lb) lb = block_lb;
    if (i == 0 || block_ub > ub) ub = block_ub;
  }
  const Datatype copy = *old;
  *newtype = Finish(std::move(t), lb, ub, MPI_COMBINER_HVECTOR, copy.element);
  return MPI_SUCCESS;
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype* newtype) {
  RFT_TYPE_OR_FAIL(old, oldtype, "MPI_Type_vector");
  const int rc =
      PMPI_Type_create_hvector(count, blocklength, stride * old->extent, oldtype, newtype);
  if (rc == MPI_SUCCESS) state().datatypes.Find(*newtype)->combiner = MPI_COMBINER_VECTOR;
  return rc;
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  RFT_TYPE_OR_FAIL(old, oldtype, "MPI_Type_contiguous");
  const int rc = PMPI_Type_create_hvector(1, count, old->extent, oldtype, newtype);
  if (rc == MPI_SUCCESS) state().datatypes.Find(*newtype)->combiner = MPI_COMBINER_CONTIGUOUS;
  return rc;
}

int PMPI_Type_create_hindexed(int count, const int lengths[], const MPI_Aint displacements[],
                              MPI_Datatype oldtype, MPI_Datatype* newtype) {
  RFT_TYPE_OR_FAIL(old, oldtype, "MPI_Type_create_hindexed");
  if (int rc = CheckCount(count, "MPI_Type_create_hindexed"); rc) return rc;
  Datatype t;
  MPI_Aint lb = 0, ub = 0;
  bool any = false;
  for (int i = 0; i < count; ++i) {
    if (int rc = CheckCount(lengths[i], "MPI_Type_create_hindexed"); rc) return rc;
    if (lengths[i] == 0) continue;
    AppendBlocks(*old, displacements[i], lengths[i], old->extent, &t.blocks);
    const MPI_Aint block_lb = displacements[i] + old->lb;
    const MPI_Aint block_ub = block_lb + lengths[i] * old->extent;
    if (!any || block_lb < lb) lb = block_lb;
    if (!any || block_ub > ub) ub = block_ub;
    any = true;
  }
  const MPI_Datatype element = old->element;
  *newtype = Finish(std::move(t), lb, ub, MPI_COMBINER_HINDEXED, element);
  return MPI_SUCCESS;
}

int PMPI_Type_indexed(int count, const int lengths[], const int displacements[],
                      MPI_Datatype oldtype, MPI_Datatype* newtype) {
  RFT_TYPE_OR_FAIL(old, oldtype, "MPI_Type_indexed");
  if (int rc = CheckCount(count, "MPI_Type_indexed"); rc) return rc;
  std::vector<MPI_Aint> bytes(static_cast<size_t>(count));
  for (int i = 0; i < count; ++i) bytes[i] = displacements[i] * old->extent;
  const int rc = PMPI_Type_create_hindexed(count, lengths, bytes.data(), oldtype, newtype);
  if (rc == MPI_SUCCESS) state().datatypes.Find(*newtype)->combiner = MPI_COMBINER_INDEXED;
  return rc;
}

int PMPI_Type_create_indexed_block(int count, int blocklength, const int displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (int rc = CheckCount(count, "MPI_Type_create_indexed_block"); rc) return rc;
  std::vector<int> lengths(static_cast<size_t>(count), blocklength);
  const int rc = PMPI_Type_indexed(count, lengths.data(), displacements, oldtype, newtype);
  if (rc == MPI_SUCCESS) state().datatypes.Find(*newtype)->combiner = MPI_COMBINER_INDEXED_BLOCK;
  return rc;
}

int PMPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displacements[],
                                    MPI_Datatype oldtype, MPI_Datatype* newtype) {
  if (int rc = CheckCount(count, "MPI_Type_create_hindexed_block"); rc) return rc;
  std::vector<int> lengths(static_cast<size_t>(count), blocklength);
  const int rc = PMPI_Type_create_hindexed(count, lengths.data(), displacements, oldtype, newtype);
  if (rc == MPI_SUCCESS) state().datatypes.Find(*newtype)->combiner = MPI_COMBINER_HINDEXED_BLOCK;
  return rc;
}

int PMPI_Type_create_struct(int count, const int lengths[], const MPI_Aint displacements[],
                            const MPI_Datatype types[], MPI_Datatype* newtype) {
  if (int rc = CheckCount(count, "MPI_Type_create_struct"); rc) return rc;
  Datatype t;
  MPI_Aint lb = 0, ub = 0;
  bool any = false;
  MPI_Datatype element = MPI_DATATYPE_NULL;
  for (int i = 0; i < count; ++i) {
    const Datatype* old = FindDatatype(types[i]);
    if (old == nullptr) return BadType(types[i], "MPI_Type_create_struct");
    if (int rc = CheckCount(lengths[i], "MPI_Type_create_struct"); rc) return rc;
    if (lengths[i] == 0) continue;
    AppendBlocks(*old, displacements[i], lengths[i], old->extent, &t.blocks);
    const MPI_Aint block_lb = displacements[i] + old->lb;
    const MPI_Aint block_ub = block_lb + lengths[i] * old->extent;
    if (!any || block_lb < lb) lb = block_lb;
    if (!any || block_ub > ub) ub = block_ub;
    element = !any ? old->element : CommonElement(*old, element);
    any = true;
  }
  *newtype = Finish(std::move(t), lb, ub, MPI_COMBINER_STRUCT, element);
  return MPI_SUCCESS;
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype* newtype) {
  RFT_TYPE_OR_FAIL(old, oldtype, "MPI_Type_create_resized");
  Datatype t;
  t.blocks = old->blocks;
  const MPI_Datatype element = old->element;
  *newtype = Finish(std::move(t), lb, lb + extent, MPI_COMBINER_RESIZED, element);
  return MPI_SUCCESS;
}

int PMPI_Type_create_subarray(int ndims, const int sizes[], const int subsizes[],
                              const int starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype* newtype) {
  RFT_TYPE_OR_FAIL(old, oldtype, "MPI_Type_create_subarray");
  if (ndims <= 0 || (order != MPI_ORDER_C && order != MPI_ORDER_FORTRAN)) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_ARG,
                 "MPI_Type_create_subarray: ndims " + std::to_string(ndims) + ", order " +
                     std::to_string(order) + ": expected ndims > 0 and MPI_ORDER_C or _FORTRAN");
  }
  for (int d = 0; d < ndims; ++d) {
    if (subsizes[d] < 1 || starts[d] < 0 || starts[d] + subsizes[d] > sizes[d]) {
      return Raise(MPI_COMM_WORLD, MPI_ERR_ARG,
                   "MPI_Type_create_subarray: dimension " + std::to_string(d) +
                       ": expected 1 <= subsize and start + subsize <= size");
    }
  }
  // The dimensions from the slowest to the fastest varying.
  std::vector<int> dim(ndims);
  for (int d = 0; d < ndims; ++d) dim[d] = order == MPI_ORDER_C ? d : ndims - 1 - d;
  std::vector<MPI_Aint> stride(ndims);
  MPI_Aint s = old->extent;
  for (int k = ndims - 1; k >= 0; --k) {
    stride[k] = s;
    s *= sizes[dim[k]];
  }
  const MPI_Aint total = s;
  Datatype t;
  std::vector<int> index(ndims, 0);
  while (true) {
    MPI_Aint at = 0;
    for (int k = 0; k < ndims - 1; ++k) at += (starts[dim[k]] + index[k]) * stride[k];
    at += starts[dim[ndims - 1]] * stride[ndims - 1];
    AppendBlocks(*old, at, subsizes[dim[ndims - 1]], old->extent, &t.blocks);
    int k = ndims - 2;
    for (; k >= 0; --k) {
      if (++index[k] < subsizes[dim[k]]) break;
      index[k] = 0;
    }
    if (k < 0) break;
  }
  const MPI_Datatype element = old->element;
  *newtype = Finish(std::move(t), 0, total, MPI_COMBINER_SUBARRAY, element);
  return MPI_SUCCESS;
}

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  RFT_TYPE_OR_FAIL(old, oldtype, "MPI_Type_dup");
  Datatype t = *old;
  t.predefined = false;
  t.combiner = MPI_COMBINER_DUP;
  *newtype = state().datatypes.Add(std::move(t));
  return MPI_SUCCESS;
}

int PMPI_Type_commit(MPI_Datatype* datatype) {
  RFT_TYPE_OR_FAIL(t, *datatype, "MPI_Type_commit");
  const_cast<Datatype*>(t)->committed = true;
  return MPI_SUCCESS;
}

int PMPI_Type_free(MPI_Datatype* datatype) {
  RFT_TYPE_OR_FAIL(t, *datatype, "MPI_Type_free");
  if (t->predefined && state().datatypes.Find(*datatype) == nullptr) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_TYPE, "MPI_Type_free: a predefined datatype stays");
  }
  // Operations in progress packed their data at the start (or keep their own unpack plan), so
  // the type may go now, as MPI allows.
  state().datatypes.Remove(*datatype);
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

int PMPI_Type_set_name(MPI_Datatype datatype, const char* name) {
  RFT_TYPE_OR_FAIL(t, datatype, "MPI_Type_set_name");
  const_cast<Datatype*>(t)->name.assign(name, strnlen(name, MPI_MAX_OBJECT_NAME - 1));
  return MPI_SUCCESS;
}

int PMPI_Type_get_name(MPI_Datatype datatype, char* name, int* resultlen) {
  RFT_TYPE_OR_FAIL(t, datatype, "MPI_Type_get_name");
  memcpy(name, t->name.c_str(), t->name.size() + 1);
  *resultlen = static_cast<int>(t->name.size());
  return MPI_SUCCESS;
}

int PMPI_Get_address(const void* location, MPI_Aint* address) {
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp) { return base + disp; }
MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) { return addr1 - addr2; }

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm, int* size) {
  RFT_TYPE_OR_FAIL(t, datatype, "MPI_Pack_size");
  if (int rc = CheckCount(incount, "MPI_Pack_size"); rc) return rc;
  *size = static_cast<int>(incount * t->size);
  return MPI_SUCCESS;
}

int PMPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
              int* position, MPI_Comm comm) {
  std::string message;
  if (int rc = CheckDatatype(datatype, "MPI_Pack", &message); rc) return Raise(comm, rc, message);
  if (int rc = CheckCount(incount, "MPI_Pack"); rc) return rc;
  const Datatype* t = FindDatatype(datatype);
  const MPI_Count bytes = incount * t->size;
  if (*position < 0 || *position + bytes > outsize) {
    return Raise(comm, MPI_ERR_TRUNCATE,
                 "MPI_Pack: " + std::to_string(bytes) + " bytes at position " +
                     std::to_string(*position) + " do not fit in " + std::to_string(outsize));
  }
  Pack(*t, inbuf, static_cast<size_t>(incount), static_cast<char*>(outbuf) + *position);
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}

int PMPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm) {
  std::string message;
  if (int rc = CheckDatatype(datatype, "MPI_Unpack", &message); rc) return Raise(comm, rc, message);
  if (int rc = CheckCount(outcount, "MPI_Unpack"); rc) return rc;
  const Datatype* t = FindDatatype(datatype);
  const MPI_Count bytes = outcount * t->size;
  if (*position < 0 || *position + bytes > insize) {
    return Raise(comm, MPI_ERR_TRUNCATE,
                 "MPI_Unpack: " + std::to_string(bytes) + " bytes at position " +
                     std::to_string(*position) + " run past the " + std::to_string(insize) +
                     " bytes given");
  }
  Unpack(*t, static_cast<const char*>(inbuf) + *position, static_cast<size_t>(outcount), outbuf);
  *position += static_cast<int>(bytes);
  return MPI_SUCCESS;
}

}  // extern "C"

RFT_MPI_ALIAS(Type_size)
RFT_MPI_ALIAS(Type_size_x)
RFT_MPI_ALIAS(Type_get_extent)
RFT_MPI_ALIAS(Type_extent)
RFT_MPI_ALIAS(Type_get_true_extent)
RFT_MPI_ALIAS(Type_contiguous)
RFT_MPI_ALIAS(Type_vector)
RFT_MPI_ALIAS(Type_create_hvector)
RFT_MPI_ALIAS(Type_indexed)
RFT_MPI_ALIAS(Type_create_hindexed)
RFT_MPI_ALIAS(Type_create_indexed_block)
RFT_MPI_ALIAS(Type_create_hindexed_block)
RFT_MPI_ALIAS(Type_create_struct)
RFT_MPI_ALIAS(Type_create_resized)
RFT_MPI_ALIAS(Type_create_subarray)
RFT_MPI_ALIAS(Type_dup)
RFT_MPI_ALIAS(Type_commit)
RFT_MPI_ALIAS(Type_free)
RFT_MPI_ALIAS(Type_set_name)
RFT_MPI_ALIAS(Type_get_name)
RFT_MPI_ALIAS(Get_address)
RFT_MPI_ALIAS(Aint_add)
RFT_MPI_ALIAS(Aint_diff)
RFT_MPI_ALIAS(Pack_size)
RFT_MPI_ALIAS(Pack)
RFT_MPI_ALIAS(Unpack)
