// kgsim operator-project shim: the op-impl registry (IMPL_OP_OPTILING, IMPL_OP_INFERSHAPE, IMPL_OP).
// CANN registers an op's tiling and shape/dtype inference either through its OpDef (SetTiling,
// SetInferShape) or through these chains by op type; both reach the same functions. The entry
// points (kgsim_gen_op_def) fill in what the OpDef leaves unset from this registry.
#pragma once
#include <initializer_list>
#include <functional>
#include <map>
#include <tuple>
#include <string>
#include <type_traits>
#include <utility>

#include "register/op_def_registry.h"

namespace kgsim {
struct OpImplFns {
    std::function<const void*()> compile_info;  // runs TilingParse once, gives its compile info
    ::ops::TilingFn tiling = nullptr;
    ::ops::InferShapeFn infer_shape = nullptr;
    ::ops::InferDataTypeFn infer_dtype = nullptr;
};
inline std::map<std::string, OpImplFns>& op_impl_registry() {
    static std::map<std::string, OpImplFns> r;
    return r;
}
struct OpImplRegistrar {
    std::string op;
    explicit OpImplRegistrar(const char* name = "") : op(name) {}
    template <class F, class... R> OpImplRegistrar& Tiling(F f, R&&...) {
        if constexpr (std::is_convertible_v<F, ::ops::TilingFn>) op_impl_registry()[op].tiling = f;
        return *this;
    }
    template <class F> OpImplRegistrar& InferShape(F f) {
        if constexpr (std::is_convertible_v<F, ::ops::InferShapeFn>) op_impl_registry()[op].infer_shape = f;
        return *this;
    }
    template <class F> OpImplRegistrar& InferDataType(F f) {
        if constexpr (std::is_convertible_v<F, ::ops::InferDataTypeFn>) op_impl_registry()[op].infer_dtype = f;
        return *this;
    }
    // the output dtype follows input 0's (what an aclnn caller's output tensor gives anyway)
    OpImplRegistrar& InferOutDataTypeSameWithFirstInput() { return *this; }
    // `.TilingParse<CompileInfo>(fn)`: fn fills a CompileInfo from the platform; TilingContext's
    // GetCompileInfo gives it to the tiling function
    template <class... C, class F> OpImplRegistrar& TilingParse(F f) {
        if constexpr (sizeof...(C) == 1 && std::is_convertible_v<F, ::ge::graphStatus (*)(::gert::TilingParseContext*)>) {
            ::ge::graphStatus (*fn)(::gert::TilingParseContext*) = f;
            op_impl_registry()[op].compile_info = [fn]() -> const void* {
                static std::tuple<C...> info{};
                static bool done = false;
                if (!done) {
                    ::gert::TilingParseContext ctx(&std::get<0>(info));
                    fn(&ctx);
                    done = true;
                }
                return &std::get<0>(info);
            };
        }
        return *this;
    }
    template <class F> OpImplRegistrar& InferShapeRange(F&&) { return *this; }
    template <class F> OpImplRegistrar& TilingInputsDataDependency(F&&) { return *this; }
    // the documented form takes the input indices as a braced list: `.TilingInputsDataDependency({2, 3})`
    OpImplRegistrar& TilingInputsDataDependency(std::initializer_list<int32_t>) { return *this; }
    template <class P> OpImplRegistrar& TilingInputsDataDependency(std::initializer_list<int32_t>, P&&) { return *this; }
    template <class... A> OpImplRegistrar& InputsDataDependency(A&&...) { return *this; }
    OpImplRegistrar& InputsDataDependency(std::initializer_list<int32_t>) { return *this; }
    template <class... A> OpImplRegistrar& PrivateAttr(A&&...) { return *this; }
    template <class... A> OpImplRegistrar& OutputShapeDependOnCompute(A&&...) { return *this; }
};
using OpTilingImplRegistrar = OpImplRegistrar;
// The OpDef's own functions win; the registry fills the rest.
inline const void* op_compile_info(const std::string& op) {
    auto it = op_impl_registry().find(op);
    return it != op_impl_registry().end() && it->second.compile_info ? it->second.compile_info() : nullptr;
}
inline ::ops::OpDef* apply_op_impl(::ops::OpDef* def) {
    if (!def) return def;
    auto it = op_impl_registry().find(def->name_);
    if (it == op_impl_registry().end()) return def;
    if (!def->aicore_.tiling_) def->aicore_.tiling_ = it->second.tiling;
    if (!def->infer_shape_) def->infer_shape_ = it->second.infer_shape;
    if (!def->infer_dtype_) def->infer_dtype_ = it->second.infer_dtype;
    return def;
}
}  // namespace kgsim
// What the generated entry points call (a kgsim_gen_ name: generated code may use it).
inline ::ops::OpDef* kgsim_gen_apply_op_impl(::ops::OpDef* def) { return ::kgsim::apply_op_impl(def); }
#ifndef IMPL_OP_OPTILING
#define IMPL_OP_OPTILING(op) static ::kgsim::OpImplRegistrar g_kgsim_optiling_##op = ::kgsim::OpImplRegistrar(#op)
#endif
#ifndef IMPL_OP_INFERSHAPE
#define IMPL_OP_INFERSHAPE(op) \
    static ::kgsim::OpImplRegistrar g_kgsim_infershape_##op = ::kgsim::OpImplRegistrar(#op)
#endif
#ifndef IMPL_OP
#define IMPL_OP(op) static ::kgsim::OpImplRegistrar g_kgsim_opimpl_##op = ::kgsim::OpImplRegistrar(#op)
#endif
