// kgsim: integer division by zero in simulated code. The AI Core's scalar unit raises no
// exception for it (CANN's own template library, catlass, computes `startTileIdx % kTileCountNext`
// with a zero count for a block that does not exist and never uses the result), nor does the
// aarch64 host of an Atlas server (udiv/sdiv by zero give 0; catlass's host code default-constructs
// a PaddingRowMajor, CeilDiv(0, 0)). On x86 the same `div` traps with SIGFPE and would kill the
// process. A SIGFPE raised by a div/idiv instruction while a launch runs, or in a module the
// simulator compiled (kernel and host code of a sample), is answered by skipping the instruction
// with quotient and remainder 0, as aarch64 gives (the NPU's value is not documented: code that
// uses it computes garbage on both). Anywhere else the signal keeps its previous action.
#include <dlfcn.h>
#include <signal.h>
#include <ucontext.h>

#include <cstdint>
#include <cstring>

#include "rt.h"

namespace kgsim {
namespace {

struct sigaction g_prev_fpe {};
bool g_fpe_installed = false;

// Length-decode an x86-64 `div`/`idiv` (F6 /6, F6 /7, F7 /6, F7 /7) at `p`; nullptr if it is not one.
const uint8_t* past_div(const uint8_t* p) {
    for (int i = 0; i < 4 && (*p == 0x66 || *p == 0x67 || *p == 0x2E || *p == 0x3E || *p == 0x26 || *p == 0x64 ||
                              *p == 0x65 || *p == 0x36 || *p == 0xF2 || *p == 0xF3);
         ++i)
        ++p;
    if ((*p & 0xF0) == 0x40) ++p;  // REX
    if (*p != 0xF6 && *p != 0xF7) return nullptr;
    ++p;
    const uint8_t modrm = *p++;
    const int mod = modrm >> 6, reg = (modrm >> 3) & 7, rm = modrm & 7;
    if (reg != 6 && reg != 7) return nullptr;
    if (mod != 3) {
        if (rm == 4) {
            const uint8_t sib = *p++;
            if ((sib & 7) == 5 && mod == 0) p += 4;
        } else if (rm == 5 && mod == 0) {
            p += 4;  // RIP-relative
        }
        if (mod == 1) p += 1;
        else if (mod == 2) p += 4;
    }
    return p;
}

// Code the simulator compiled: the modules of its build cache (kernel_gym/native: <cache>/ascendc/*.so).
bool simulated_code(const void* ip) {
    Dl_info d{};
    return dladdr(ip, &d) != 0 && d.dli_fname != nullptr && std::strstr(d.dli_fname, "/ascendc/") != nullptr;
}

void on_fpe(int sig, siginfo_t* info, void* uctx) {
    auto* uc = static_cast<ucontext_t*>(uctx);
    const auto* ip = reinterpret_cast<const uint8_t*>(uc->uc_mcontext.gregs[REG_RIP]);
    if (info && (info->si_code == FPE_INTDIV || info->si_code == FPE_INTOVF) && (hot.in_launch || simulated_code(ip))) {
        if (const uint8_t* next = past_div(ip)) {
            uc->uc_mcontext.gregs[REG_RIP] = reinterpret_cast<greg_t>(next);
            uc->uc_mcontext.gregs[REG_RAX] = 0;
            uc->uc_mcontext.gregs[REG_RDX] = 0;
            return;
        }
    }
    if (g_prev_fpe.sa_flags & SA_SIGINFO) {
        if (g_prev_fpe.sa_sigaction) return g_prev_fpe.sa_sigaction(sig, info, uctx);
    } else if (g_prev_fpe.sa_handler != SIG_DFL && g_prev_fpe.sa_handler != SIG_IGN) {
        return g_prev_fpe.sa_handler(sig);
    }
    signal(SIGFPE, SIG_DFL);  // returning re-runs the instruction, which now takes the default action
}

struct InstallFpe {
    InstallFpe() {
        if (g_fpe_installed) return;
        struct sigaction sa {};
        sa.sa_sigaction = on_fpe;
        sa.sa_flags = SA_SIGINFO;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGFPE, &sa, &g_prev_fpe);
        g_fpe_installed = true;
    }
} g_install_fpe;

}  // namespace
}  // namespace kgsim
