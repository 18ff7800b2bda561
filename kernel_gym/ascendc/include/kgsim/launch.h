// kgsim: launching kernels. The Python loader rewrites `k<<<n, l2ctrl, stream>>>(args)` into
// `::kgsim::launch_at(__FILE__, __LINE__, "k", n, k, args)`; host code generated elsewhere
// (operator projects) calls `kgsim::launch(n, k, args...)` directly.
#pragma once
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>
#include "kgsim/base.h"
#include "kgsim/kernel_registry.h"

namespace kgsim {

// Run every block of a kernel launch on the CPU, one after the other (SyncAll, cross-core flags
// and IBWait suspend a block until what it waits for has happened: see run_blocks). A fault in a
// block is recorded (never propagated):
// the remaining blocks are skipped and the Python wrapper raises.
// The simulator's own code: uninstrumented, so its bookkeeping is neither charged nor bounds-checked.
template <class... P, class... A>
KGSIM_UNINSTRUMENTED void launch_at(const char* file, int line, const char* name, int64_t num_blocks, void (*fn)(P...), A&&... args) {
    static_assert(sizeof...(P) == sizeof...(A), "kernel launched with the wrong number of arguments");
    if (!launch_begin(name, num_blocks, file, line)) return;
    auto body = [&]() {
        try {
            fn(args...);
        } catch (const KernelTypeRestart&) {  // run_blocks starts the launch again on the declared cores
        } catch (const Fault&) {
        } catch (const std::exception& e) {
            block_exception(e.what());
        } catch (...) {
            block_exception("unknown C++ exception");
        }
    };
    const void* kernel = reinterpret_cast<const void*>(fn);
    run_blocks(num_blocks, [](void* c) { (*static_cast<decltype(body)*>(c))(); }, &body, kernel,
               launch_kernel_type(kernel, module_kernel_type));
    launch_end();
}

template <class... P, class... A>
KGSIM_UNINSTRUMENTED void launch(int64_t num_blocks, void (*fn)(P...), A&&... args) {
    launch_at("<host>", 0, "kernel", num_blocks, fn, std::forward<A>(args)...);
}

template <class... P, class... A>
KGSIM_UNINSTRUMENTED void launch_named(const char* name, int64_t num_blocks, void (*fn)(P...), A&&... args) {
    launch_at("<host>", 0, name, num_blocks, fn, std::forward<A>(args)...);
}

// Guard for the extern "C" host functions that Python calls: no exception crosses ctypes.
template <class F>
auto guard_call(F&& f) -> decltype(f()) {
    using R = decltype(f());
    try {
        return f();
    } catch (const Fault&) {
    } catch (const std::exception& e) {
        host_exception(e.what());
    } catch (...) {
        host_exception("unknown C++ exception");
    }
    if constexpr (!std::is_void_v<R>) return R{};
}

// The generated aclrtlaunch_<k> functions take `void*` for each GM_ADDR parameter, so device
// buffers from aclrtMalloc pass without a cast, and a pointer for each parameter passed by value
// (a tiling struct), whose pointee they copy; other arguments pass as they are.
template <class P, class A>
KGSIM_UNINSTRUMENTED decltype(auto) launch_param(A&& a) {
    using D = std::decay_t<A>;
    if constexpr (std::is_pointer_v<P> && std::is_same_v<D, void*>) {
        return static_cast<P>(a);
    } else if constexpr (std::is_class_v<P> && std::is_pointer_v<D> &&
                         std::is_same_v<std::remove_cv_t<std::remove_pointer_t<D>>, P>) {
        return *a;
    } else {
        return std::forward<A>(a);
    }
}

// `ACLRT_LAUNCH_KERNEL(k)(blockDim, stream, args...)` as generated for CANN kernel projects.
template <class... P>
struct LaunchProxy {
    const char* name;
    void (*fn)(P...);
    template <class... A>
    KGSIM_UNINSTRUMENTED int operator()(uint32_t block_dim, void* /*stream*/, A&&... args) const {
        static_assert(sizeof...(P) == sizeof...(A), "kernel launched with the wrong number of arguments");
        launch_at("<host>", 0, name, block_dim, fn, launch_param<P>(std::forward<A>(args))...);
        return 0;
    }
};
template <class... P>
LaunchProxy<P...> make_launch_proxy(const char* name, void (*fn)(P...)) { return LaunchProxy<P...>{name, fn}; }

// aclrtLaunchKernelWithConfig's path: the parameters arrive as bytes (aclrtKernelArgsAppend), one
// block of bytes per parameter, each the size of that parameter, and are copied into their types.
template <class... P>
struct PackedLauncher {
    template <class T>
    static T unpack(const std::vector<uint8_t>& bytes) {
        T value{};
        std::memcpy(static_cast<void*>(&value), bytes.data(), sizeof(T));
        return value;
    }
    template <size_t... I>
    static void call(const RegisteredKernel& k, uint32_t num_blocks, const PackedArgs& args, std::index_sequence<I...>) {
        auto fn = reinterpret_cast<void (*)(P...)>(k.fn);
        launch_at("<host>", 0, k.name.c_str(), num_blocks, fn, unpack<std::decay_t<P>>(args[I])...);
    }
    KGSIM_UNINSTRUMENTED static bool run(const RegisteredKernel& k, uint32_t num_blocks, const PackedArgs& args,
                                         std::string& why) {
        constexpr std::array<size_t, sizeof...(P)> sizes{sizeof(std::decay_t<P>)...};
        if (args.size() != sizes.size()) {
            why = "kernel " + k.name + " takes " + std::to_string(sizes.size()) + " parameters, but " +
                  std::to_string(args.size()) + " were appended with aclrtKernelArgsAppend";
            return false;
        }
        for (size_t i = 0; i < sizes.size(); ++i)
            if (args[i].size() != sizes[i]) {
                why = "parameter " + std::to_string(i) + " of kernel " + k.name + " has " + std::to_string(sizes[i]) +
                      " bytes, but " + std::to_string(args[i].size()) + " were appended for it";
                return false;
            }
        call(k, num_blocks, args, std::index_sequence_for<P...>{});
        return true;
    }
};

// Makes a kernel findable by name (aclrtBinaryGetFunction); sample.py emits one call per kernel.
template <class... P>
bool register_kernel(const char* name, void (*fn)(P...)) {
    static_assert((std::is_trivially_copyable_v<std::decay_t<P>> && ...),
                  "a kernel launched by name takes GM pointers and values that can be copied as bytes");
    kernel_registry()[name] = RegisteredKernel{name, reinterpret_cast<void (*)()>(fn), &PackedLauncher<P...>::run};
    return true;
}

}  // namespace kgsim

#define ACLRT_LAUNCH_KERNEL(kname) ::kgsim::make_launch_proxy(#kname, kname)
