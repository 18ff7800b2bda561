// Operator-project entry points in the runtime library (src/rt_ophost.cpp), for the unit that
// kernel_gym/ascendc/op_project.py generates per project: the op's metadata as JSON, and its
// InferShape and TilingFunc driven from flat arrays (25 dims per shape).
#pragma once
#include <cstdint>
#include <string>

#include "register/op_def_registry.h"

namespace kgsim_gen_host {
// op_infer / op_tiling: the op's host code crashed (a signal; last_host_crash() says what and the fix)
constexpr int64_t kHostCrashed = -100;
// in_data (may be null): per input, the address of its values, read by the host where the OpDef
// declares the input ValueDepend (GetData); 0 for the others, whose GetData is nullptr as in CANN.
int64_t op_meta(::ops::OpDef* def, uint8_t* buf, int64_t cap);
int64_t op_infer(::ops::OpDef* def, const int64_t* in_dims, const int64_t* in_ndims, const int64_t* in_dtypes,
                 int64_t n_in, const int64_t* attr_i, const double* attr_f, const uint8_t* attr_s, int64_t n_attr,
                 int64_t* out_dims, int64_t* out_ndims, int64_t* out_dtypes, int64_t n_out,
                 const int64_t* in_data = nullptr);
int64_t op_tiling(::ops::OpDef* def, const int64_t* in_dims, const int64_t* in_ndims, const int64_t* in_dtypes,
                  int64_t n_in, const int64_t* attr_i, const double* attr_f, const uint8_t* attr_s, int64_t n_attr,
                  const int64_t* out_dims, const int64_t* out_ndims, const int64_t* out_dtypes, int64_t n_out,
                  int64_t* info, uint8_t* tiling_buf, int64_t tiling_cap, const int64_t* in_data = nullptr);
const std::string& last_host_crash();
}  // namespace kgsim_gen_host
