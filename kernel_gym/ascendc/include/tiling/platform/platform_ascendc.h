// platform_ascendc.h for the kernel-gym Ascend C simulator: host-side platform queries,
// answered from the SoC profile the module was loaded for.
#pragma once
#include <cstdint>
#include "kgsim/base.h"
#include "platform/soc_spec.h"

namespace fe {
enum class LocalMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, RESERVED };
// What TilingContext::GetPlatformInfo() points to: host code reads it through PlatformAscendC,
// and some directly (GetCoreNum: the vector cores an AI Core kernel runs on).
class PlatFormInfos {
public:
    uint32_t GetCoreNum() const { return uint32_t(kgsim::config_int("aiv_cores")); }
    // The per-core memory sizes, as PlatformAscendC::GetCoreMemSize answers them (UB: what a kernel
    // may allocate, so a tiling sized from it fits the simulator's budget)
    void GetLocalMemSize(const LocalMemType& memType, uint64_t& size) const {
        const char* key = nullptr;
        switch (memType) {
            case LocalMemType::UB: key = "usable_ub_bytes"; break;
            case LocalMemType::L1: key = "l1_bytes"; break;
            case LocalMemType::L0_A: key = "l0a_bytes"; break;
            case LocalMemType::L0_B: key = "l0b_bytes"; break;
            case LocalMemType::L0_C: key = "l0c_bytes"; break;
            case LocalMemType::L2: key = "l2_bytes"; break;
            case LocalMemType::HBM: key = "hbm_bytes"; break;
            default: break;
        }
        size = key ? uint64_t(kgsim::config_int(key)) : 0;
    }
    static PlatFormInfos* Instance() {
        static PlatFormInfos p;
        return &p;
    }
};
}  // namespace fe

namespace platform_ascendc {
enum class CoreMemType { L0_A = 0, L0_B = 1, L0_C = 2, L1 = 3, L2 = 4, UB = 5, HBM = 6, FB = 7, BT = 8, RESERVED };
enum class SocVersion {
    ASCEND910 = 0, ASCEND910B, ASCEND310P, ASCEND310B, ASCEND950, ASCEND910_55, ASCEND910_95 = ASCEND950, AS31XM1,
    ASCEND031, ASCEND035, ASCEND310, ASCEND610, ASCEND610Lite, ASCEND910_93, BS9SX1A, BS9SX2A, HI3796CV300CS,
    HI3796CV300ES, MC61AM21A, MC62, SD3403, KIRINX90, KIRIN9030, MC32DM11A, ASCEND350, RESERVED_VERSION = 99999
};
enum class ReservedSize { RESERVED_SIZE_8K, RESERVED_SIZE_16K, RESERVED_SIZE_32K };

class PlatformAscendC {
public:
    PlatformAscendC() : platformInfo_(nullptr) {}
    explicit PlatformAscendC(fe::PlatFormInfos* platformInfo) : platformInfo_(platformInfo) {}
    uint32_t GetCoreNum() const { return GetCoreNumAiv(); }
    uint32_t GetCoreNumAic() const { return uint32_t(kgsim::config_int("aic_cores")); }
    uint32_t GetCoreNumAiv() const { return uint32_t(kgsim::config_int("aiv_cores")); }
    uint32_t GetCoreNumVector() const { return 0; }
    uint32_t CalcTschBlockDim(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const {
        if (aicCoreNum == 0 || aivCoreNum == 0 || aicCoreNum > aivCoreNum) return sliceNum;
        uint32_t ratio = aivCoreNum / aicCoreNum;
        return (sliceNum + ratio - 1) / ratio;
    }
    uint32_t CalcTschNumBlocks(uint32_t sliceNum, uint32_t aicCoreNum, uint32_t aivCoreNum) const {
        return CalcTschBlockDim(sliceNum, aicCoreNum, aivCoreNum);
    }
    uint32_t GetLibApiWorkSpaceSize() const { return 16u * 1024u * 1024u; }
    // Enough for one GroupBarrier whose larger group spans every AIV core (512 B per index); CANN's
    // exact figure is not documented.
    uint32_t GetResGroupBarrierWorkSpaceSize() const { return uint32_t(kgsim::config_int("aiv_cores")) * 512u; }
    // UB and L1 as CANN's PlatformAscendC answers them on an Atlas A2 (ASCEND910B) part: 256 bytes
    // less than the memory (the "local reserved buffer for kfc" its implementation keeps back; an
    // op's tiling may add them back, as ops-math's do), UB also less ReserveLocalMemory's share.
    // fe::PlatFormInfos::GetLocalMemSize answers the whole memory.
    static constexpr uint64_t kLocalReservedBytes = 256;
    void GetCoreMemSize(const CoreMemType& memType, uint64_t& size) const {
        switch (memType) {
            case CoreMemType::UB: {
                int64_t ub = kgsim::config_int("usable_ub_bytes") - int64_t(kLocalReservedBytes) - int64_t(reserved_);
                size = ub > 0 ? uint64_t(ub) : 0;
                break;
            }
            case CoreMemType::L1: size = uint64_t(kgsim::config_int("l1_bytes")) - kLocalReservedBytes; break;
            case CoreMemType::L0_A: size = uint64_t(kgsim::config_int("l0a_bytes")); break;
            case CoreMemType::L0_B: size = uint64_t(kgsim::config_int("l0b_bytes")); break;
            case CoreMemType::L0_C: size = uint64_t(kgsim::config_int("l0c_bytes")); break;
            case CoreMemType::L2: size = uint64_t(kgsim::config_int("l2_bytes")); break;
            case CoreMemType::HBM: size = uint64_t(kgsim::config_int("hbm_bytes")); break;
            default: size = 0;
        }
    }
    void GetCoreMemBw(const CoreMemType& memType, uint64_t& bwSize) const {
        bwSize = memType == CoreMemType::HBM ? uint64_t(kgsim::config_int("hbm_bytes_per_s")) : 0;
    }
    void ReserveLocalMemory(ReservedSize size) {
        reserved_ = size == ReservedSize::RESERVED_SIZE_8K ? 8192u : size == ReservedSize::RESERVED_SIZE_16K ? 16384u : 32768u;
    }
    SocVersion GetSocVersion() const { return SocVersion::ASCEND910B; }
    NpuArch GetCurNpuArch() const { return NpuArch::DAV_2201; }  // the Atlas A2/A3 AI Core
    uint32_t GetVecRegLen() const { return 256; }

private:
    fe::PlatFormInfos* platformInfo_;
    uint32_t reserved_ = 0;
};

class PlatformAscendCManager {
public:
    static PlatformAscendC* GetInstance() {
        static PlatformAscendC instance;
        return &instance;
    }
    static PlatformAscendC* GetInstance(const char* /*customSocVersion*/) { return GetInstance(); }
};
}  // namespace platform_ascendc
