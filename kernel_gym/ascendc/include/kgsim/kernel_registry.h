// kgsim: the kernels of a direct-launch sample by name. On the NPU aclrtBinaryLoadFromFile loads
// the kernels' .o and aclrtBinaryGetFunction finds one by name; here the kernels are compiled
// into the sample's own program, and sample.py registers each one it finds (launch.h,
// register_kernel), so the ACL shim (acl/acl.h) looks them up in this table instead.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace kgsim {

struct RegisteredKernel;
// A kernel's parameters as the host appended them: each one's bytes, in order.
using PackedArgs = std::vector<std::vector<uint8_t>>;
// Runs the launch; false, with the reason, when the arguments do not fit the kernel's parameters.
using PackedLaunch = bool (*)(const RegisteredKernel& kernel, uint32_t num_blocks, const PackedArgs& args,
                              std::string& why);

struct RegisteredKernel {
    std::string name;
    void (*fn)() = nullptr;  // the kernel, its type erased; `launch` knows the real one
    PackedLaunch launch = nullptr;
};

// One table per program: an inline function's static is shared by every unit that includes this.
inline std::map<std::string, RegisteredKernel>& kernel_registry() {
    static std::map<std::string, RegisteredKernel> table;
    return table;
}

}  // namespace kgsim
