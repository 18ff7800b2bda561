// kgsim operator-project shim: ge status codes.
#pragma once
#include <cstdint>
namespace ge {
using graphStatus = uint32_t;
constexpr graphStatus GRAPH_SUCCESS = 0;
constexpr graphStatus GRAPH_FAILED = 0xFFFFFFFFu;
constexpr graphStatus GRAPH_NOT_CHANGED = 1343242304u;
constexpr graphStatus GRAPH_PARAM_INVALID = 50331649u;
constexpr graphStatus GRAPH_NODE_WITHOUT_CONST_INPUT = 50331648u;
constexpr graphStatus GRAPH_PARAM_OUT_OF_RANGE = 50331644u;
constexpr graphStatus GRAPH_ADD_OVERFLOW = 50331428u;
constexpr graphStatus GRAPH_MUL_OVERFLOW = 50331427u;
}  // namespace ge
