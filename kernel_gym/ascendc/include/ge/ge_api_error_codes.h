// kgsim operator-project shim: CANN's ge/ge_api_error_codes.h general status codes (ge::Status,
// ge::SUCCESS = 0, ge::FAILED = every bit set), which host tiling code compares against. A program
// that #defines SUCCESS / FAILED itself (the examples' main.cpp do) keeps its macro.
#pragma once
#include <cstdint>
namespace ge {
using Status = uint32_t;
#ifndef SUCCESS
constexpr Status SUCCESS = 0;
#endif
#ifndef FAILED
constexpr Status FAILED = 0xFFFFFFFFu;
#endif
}  // namespace ge
