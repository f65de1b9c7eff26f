// Info objects, and MPI_INFO_ENV.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "ulfm_api/mpi/mpi_internal.h"

using namespace rft::mpi;

extern "C" {

static Info* FindInfo(MPI_Info handle) {
  if (handle == MPI_INFO_ENV) return &state().env_info;
  return state().infos.Find(handle);
}

static int BadInfo(const char* function) {
  return Raise(MPI_COMM_WORLD, MPI_ERR_INFO, std::string(function) + ": invalid info handle");
}

int PMPI_Info_create(MPI_Info* info) {
  *info = state().infos.Add(Info{});
  return MPI_SUCCESS;
}

int PMPI_Info_set(MPI_Info info, const char* key, const char* value) {
  Info* i = state().infos.Find(info);
  if (i == nullptr) return BadInfo("MPI_Info_set");
  if (key == nullptr || *key == '\0' || strlen(key) > MPI_MAX_INFO_KEY) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_INFO_KEY, "MPI_Info_set: empty or too long key");
  }
  if (value == nullptr || strlen(value) > MPI_MAX_INFO_VAL) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_INFO_VALUE, "MPI_Info_set: NULL or too long value");
  }
  for (auto& [k, v] : i->entries) {
    if (k == key) {
      v = value;
      return MPI_SUCCESS;
    }
  }
  i->entries.emplace_back(key, value);
  return MPI_SUCCESS;
}

static const std::string* InfoValue(Info* i, const char* key) {
  for (auto& [k, v] : i->entries) {
    if (k == key) return &v;
  }
  return nullptr;
}

int PMPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  Info* i = FindInfo(info);
  if (i == nullptr) return BadInfo("MPI_Info_get");
  const std::string* v = InfoValue(i, key);
  *flag = v != nullptr;
  if (v != nullptr) CopyString(*v, value, valuelen + 1, nullptr);
  return MPI_SUCCESS;
}

int PMPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  Info* i = FindInfo(info);
  if (i == nullptr) return BadInfo("MPI_Info_get_valuelen");
  const std::string* v = InfoValue(i, key);
  *flag = v != nullptr;
  if (v != nullptr) *valuelen = static_cast<int>(v->size());
  return MPI_SUCCESS;
}

int PMPI_Info_get_string(MPI_Info info, const char* key, int* buflen, char* value, int* flag) {
  Info* i = FindInfo(info);
  if (i == nullptr) return BadInfo("MPI_Info_get_string");
  const std::string* v = InfoValue(i, key);
  *flag = v != nullptr;
  if (v == nullptr) return MPI_SUCCESS;
  const int capacity = *buflen;
  *buflen = static_cast<int>(v->size()) + 1;
  if (capacity > 0) CopyString(*v, value, capacity, nullptr);
  return MPI_SUCCESS;
}

int PMPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  Info* i = FindInfo(info);
  if (i == nullptr) return BadInfo("MPI_Info_get_nkeys");
  *nkeys = static_cast<int>(i->entries.size());
  return MPI_SUCCESS;
}

int PMPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  Info* i = FindInfo(info);
  if (i == nullptr) return BadInfo("MPI_Info_get_nthkey");
  if (n < 0 || n >= static_cast<int>(i->entries.size())) {
    return Raise(MPI_COMM_WORLD, MPI_ERR_ARG,
                 "MPI_Info_get_nthkey: n " + std::to_string(n) + ": expected 0.." +
                     std::to_string(static_cast<int>(i->entries.size()) - 1));
  }
  CopyString(i->entries[n].first, key, MPI_MAX_INFO_KEY + 1, nullptr);
  return MPI_SUCCESS;
}

int PMPI_Info_delete(MPI_Info info, const char* key) {
  Info* i = state().infos.Find(info);
  if (i == nullptr) return BadInfo("MPI_Info_delete");
  for (auto it = i->entries.begin(); it != i->entries.end(); ++it) {
    if (it->first == key) {
      i->entries.erase(it);
      return MPI_SUCCESS;
    }
  }
  return Raise(MPI_COMM_WORLD, MPI_ERR_INFO_NOKEY,
               std::string("MPI_Info_delete: no key \"") + key + "\"");
}

int PMPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  Info* i = FindInfo(info);
  if (i == nullptr) return BadInfo("MPI_Info_dup");
  *newinfo = state().infos.Add(*i);
  return MPI_SUCCESS;
}

int PMPI_Info_free(MPI_Info* info) {
  if (state().infos.Find(*info) == nullptr) return BadInfo("MPI_Info_free");
  state().infos.Remove(*info);
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"

RFT_MPI_ALIAS(Info_create)
RFT_MPI_ALIAS(Info_set)
RFT_MPI_ALIAS(Info_get)
RFT_MPI_ALIAS(Info_get_valuelen)
RFT_MPI_ALIAS(Info_get_string)
RFT_MPI_ALIAS(Info_get_nkeys)
RFT_MPI_ALIAS(Info_get_nthkey)
RFT_MPI_ALIAS(Info_delete)
RFT_MPI_ALIAS(Info_dup)
RFT_MPI_ALIAS(Info_free)
