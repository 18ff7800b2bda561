"""Public members of CANN's host API (metadef's exe_graph/runtime and register headers) that
operator host code calls, checked against the behaviour CANN documents for them, written here from
those declarations and their comments: gert::Shape's GetDim past kMaxDimNum and GetShapeSize's
overflow, StorageFormat / ExpandDimsType, CompileTimeTensorDesc's and Tensor's formats and setters,
ContinuousVector's SetSize, RuntimeAttrs' typed pointers and list lists, TilingData's Append /
Expand / operator<<, the TilingContext outputs a tiling function sets and reads back (schedule mode,
atomic clean, AI CPU blocks, dynamic UB size, tiling condition, SIMT dimensions), the Required*
accessors of the three contexts, and the OpDef builder members (InitValue with ScalarVar,
ListListInt, AICPU / HostCPU, FormatMatchMode, ...) that must be accepted."""

from __future__ import annotations

import time
from pathlib import Path

from kernel_gym.native import NativeLibrary, compile_shared, parse_extern_c

INCLUDE = Path(__file__).resolve().parents[3] / "kernel_gym" / "ascendc" / "include"

SOURCE = r"""
#include "register/op_def_registry.h"
#include "exe_graph/runtime/tiling_context.h"
#include "exe_graph/runtime/infer_shape_context.h"
#include "exe_graph/runtime/infer_datatype_context.h"
#include "exe_graph/runtime/infer_shape_range_context.h"

// inputs: a required one (2 x 3), an optional one given or not, then a dynamic one of n_dyn tensors
static gert::KgsimOpIO make_io(bool optional_given, int n_dyn) {
    gert::KgsimOpIO io;
    io.name = "Probe";
    int n = 2 + n_dyn;
    for (int i = 0; i < n; ++i) {
        gert::StorageShape s;
        s.Set(gert::Shape{2, 3 + i});
        io.in_shapes.push_back(s);
        io.in_present.push_back(i != 1 || optional_given);
        gert::Tensor t;
        t.shape_ = s;
        t.dtype_ = i == 0 ? ge::DT_FLOAT16 : ge::DT_INT32;
        io.in_tensors.push_back(t);
        io.in_desc.emplace_back();
        io.in_desc.back().SetDataType(t.dtype_);
    }
    io.ir_first = {0, 1, 2};
    io.out_shapes.emplace_back();
    io.out_desc.emplace_back();
    return io;
}

// Shape: GetDim past kMaxDimNum is kInvalidDimValue; GetShapeSize overflowing is kInvalidDimValue
extern "C" int64_t shape_limits(int64_t big) {
    gert::Shape s{2, 3};
    if (s.GetDim(gert::Shape::kMaxDimNum) != gert::Shape::kInvalidDimValue) return -1;
    if (s.GetShapeSize() != 6) return -2;
    gert::Shape huge{big, big, big};
    return huge.GetShapeSize() == gert::Shape::kInvalidDimValue ? 1 : 0;
}

// ExpandDimsType "0110" pads [2, 5] to [2, 1, 1, 5]; the packed form (rank << 56 | bits) is the same rule
extern "C" int64_t expand_dims(int64_t a, int64_t b) {
    gert::ExpandDimsType rule("0110");
    gert::Shape out;
    if (rule.Expand(gert::Shape{a, b}, out) != ge::GRAPH_SUCCESS || rule.GetFullSize() != 4) return -1;
    if (!(gert::ExpandDimsType(int64_t((uint64_t(4) << 56) | 0x6)) == rule)) return -2;
    gert::Shape in_place{a, b};
    rule.Expand(in_place);
    if (in_place != out) return -3;
    gert::Shape bad{a};
    if (gert::ExpandDimsType("0001").Expand(bad, out) == ge::GRAPH_SUCCESS) return -4;
    int64_t r = 0;
    for (size_t i = 0; i < in_place.GetDimNum(); ++i) r = r * 10 + in_place.GetDim(i);
    return r;
}

// StorageFormat and the formats of a CompileTimeTensorDesc and a Tensor (ND until set)
extern "C" int64_t formats(int64_t origin, int64_t storage) {
    gert::StorageFormat f(ge::Format(origin), ge::Format(storage), gert::ExpandDimsType("10"));
    gert::StorageFormat g;
    if (g.GetOriginFormat() != ge::FORMAT_ND || g.GetStorageFormat() != ge::FORMAT_ND || f == g) return -1;
    g.SetOriginFormat(ge::Format(origin));
    g.SetStorageFormat(ge::Format(storage));
    g.MutableExpandDimsType() = gert::ExpandDimsType("10");
    if (f != g) return -2;
    gert::CompileTimeTensorDesc d;
    if (d.GetFormat().GetStorageFormat() != ge::FORMAT_ND || !d.IsExist()) return -3;
    d.SetOriginFormat(ge::Format(origin));
    d.SetStorageFormat(ge::Format(storage));
    d.SetExpandDimsType(gert::ExpandDimsType("10"));
    d.SetExist(false);
    if (d.GetFormat() != f || d.GetExpandDimsType().GetFullSize() != 2 || d.IsExist()) return -4;
    gert::Tensor t(gert::StorageShape({2, 3}, {2, 3}), f, ge::DT_FLOAT16);
    if (t.GetFormat() != f || t.GetDataType() != ge::DT_FLOAT16) return -5;
    t.SetDataType(ge::DT_INT8);
    t.SetStorageFormat(ge::FORMAT_ND);
    t.MutableFormat().SetOriginFormat(ge::FORMAT_NCHW);
    t.MutableStorageShape().SetDim(1, 7);
    t.MutableOriginShape().AppendDim(5);
    t.GetShape().MutableStorageShape().AppendDim(2);
    if (t.GetExpandDimsType().GetFullSize() != 2) return -6;
    return int64_t(t.GetDataType()) * 100000 + int64_t(t.GetStorageFormat()) * 10000 +
           int64_t(t.GetOriginFormat()) * 1000 + t.GetStorageShape().GetShapeSize() * 10 +
           int64_t(t.GetOriginShape().GetDimNum());
}

// a Tensor over data: GetAddr is the data, its size the element count times the dtype's size
extern "C" int64_t tensor_data(int64_t fill) {
    int32_t v[6] = {int32_t(fill), 1, 2, 3, 4, 5};
    gert::Tensor t(gert::StorageShape({2, 3}, {2, 3}), gert::StorageFormat(), gert::kOnHost, ge::DT_INT32, v);
    if (t.GetAddr() != v || t.GetPlacement() != gert::kOnHost) return -1;
    int64_t size = int64_t(t.GetSize());
    t.SetSize(8);
    t.SetPlacement(gert::kFollowing);
    if (t.GetSize() != 8 || t.GetPlacement() != gert::kFollowing) return -2;
    return size * 1000 + t.GetData<int32_t>()[0];
}

// ContinuousVector::SetSize: within the capacity, which does not grow; MutableData writes
extern "C" int64_t continuous_vector(int64_t n) {
    int64_t vals[4] = {1, 2, 3, 4};
    gert::TypedContinuousVector<int64_t> v;
    v.data_ = vals;
    v.size_ = 4;
    if (v.SetSize(size_t(n)) != ge::GRAPH_SUCCESS) return -1;
    if (v.SetSize(5) != ge::GRAPH_PARAM_OUT_OF_RANGE || v.GetCapacity() != 4) return -2;
    v.MutableData()[0] = 9;
    return int64_t(v.GetSize()) * 100 + v.GetData()[0] * 10 + int64_t(v.GetCapacity());
}

// RuntimeAttrs: GetAttrPointer<TypedContinuousVector<T>>, a ListListInt attribute, no Tensor attribute
extern "C" int64_t runtime_attrs(int64_t x) {
    gert::RuntimeAttrs attrs;
    gert::KgsimAttrValue li;
    li.type = 4;
    li.li = {x, 2};
    gert::KgsimAttrValue lli;
    lli.type = 7;
    lli.lli = {{1, 2, 3}, {x}};
    attrs.attrs_ = {li, lli};
    for (auto& a : attrs.attrs_) a.BindLists();
    const auto* typed = attrs.GetAttrPointer<gert::TypedContinuousVector<int64_t>>(0);
    const gert::ContinuousVectorVector* ll = attrs.GetListListInt(1);
    if (!typed || !ll || ll->GetSize() != 2 || attrs.GetTensor(0) != nullptr) return -1;
    if (ll->Get(2) != nullptr || attrs.GetListListFloat(1) != ll) return -2;
    const int64_t* second = static_cast<const int64_t*>(ll->Get(1)->GetData());
    return typed->GetData()[0] * 1000 + int64_t(ll->Get(0)->GetSize()) * 100 + second[0];
}

// TilingData: Append / Expand up to the capacity, operator<< ignores what does not fit; CreateCap
extern "C" int64_t tiling_data(int64_t a) {
    auto holder = gert::TilingData::CreateCap(12);
    auto* td = reinterpret_cast<gert::TilingData*>(holder.get());
    if (td->GetCapacity() != 12 || td->GetDataSize() != 0) return -1;
    if (td->Append(int32_t(a)) != ge::GRAPH_SUCCESS) return -2;
    int16_t pair[2] = {7, 8};
    if (td->Append(pair, 2) != ge::GRAPH_SUCCESS) return -3;
    *td << int32_t(5);
    *td << int64_t(99);  // past the capacity: ignored
    if (td->Expand(1) != nullptr || td->Append(int8_t(1)) != ge::GRAPH_FAILED) return -4;
    size_t total = 0;
    if (gert::TilingData::CalcTotalSize(12, total) != ge::GRAPH_SUCCESS || total != sizeof(gert::TilingData) + 12)
        return -5;
    const uint8_t* d = static_cast<const uint8_t*>(td->GetData());
    int32_t first, last;
    int16_t p1;
    std::memcpy(&first, d, 4);
    std::memcpy(&p1, d + 6, 2);
    std::memcpy(&last, d + 8, 4);
    return int64_t(td->GetDataSize()) * 100000 + first * 100 + p1 * 10 + last;
}

struct Big { char b[64]; };
struct Small { int32_t x; };

// what a tiling function sets on its context and reads back
extern "C" int64_t tiling_outputs(int64_t mode) {
    gert::KgsimOpIO io = make_io(true, 1);
    gert::TilingContext ctx(&io);
    uint8_t buf[16] = {};
    ctx.tiling_.data_ = buf;
    ctx.tiling_.cap_ = sizeof(buf);
    if (ctx.GetTilingData<Big>() != nullptr || ctx.GetTilingData<Small>() != reinterpret_cast<Small*>(buf)) return -1;
    if (ctx.GetTilingCond() != -1 || ctx.NeedAtomic() || ctx.GetScheduleMode() != 0) return -2;
    ctx.SetScheduleMode(uint32_t(mode));
    ctx.SetNeedAtomic(true);
    ctx.SetAicpuNumBlocks(3);
    ctx.SetDynUBufSize(4096);
    ctx.SetTilingCond(2);
    ctx.SetSimdNumBlocks(6);
    ctx.SetSimtGridDim(gert::Dim3(4, 2));
    ctx.SetSimtBlockDim(32);
    if (ctx.GetBlockDim() != 6 || ctx.GetAicpuBlockDim() != 3 || ctx.GetLocalMemorySize() != 4096) return -3;
    if (ctx.GetSimtGridDim()->y != 2 || ctx.GetSimtBlockDim()->x != 32 || ctx.GetSimtBlockDim()->z != 1) return -4;
    if (ctx.InputIsView(0) || ctx.GetInputOffset(0) != -1 || ctx.GetDeterministicLevel() != 0) return -5;
    // the workspace count follows the last GetWorkspaceSizes
    ctx.GetWorkspaceSizes(3)[2] = 5;
    ctx.GetWorkspaceSizes(1)[0] = 7;
    static_assert(gert::TilingContext::kOutputScheduleMode == 6 && gert::TilingContext::kOutputNum == 11);
    return int64_t(ctx.GetScheduleMode()) * 100000 + int64_t(ctx.NeedAtomic()) * 10000 +
           int64_t(ctx.GetAicpuNumBlocks()) * 1000 + int64_t(ctx.GetTilingCond()) * 100 +
           int64_t(ctx.GetWorkspaceNum()) * 10 + int64_t(ctx.GetSimdNumBlocks() == 6);
}

// the Required* accessors, the desc getters every context has, and the IR instance infos
extern "C" int64_t required_accessors(int64_t optional_given) {
    gert::KgsimOpIO io = make_io(optional_given != 0, 2);
    gert::TilingContext tiling(&io);
    gert::InferShapeContext shape(&io);
    gert::InferDataTypeContext dtype(&io);
    if (tiling.GetRequiredInputShape(0)->GetStorageShape().GetDim(1) != 3) return -1;
    if (tiling.GetRequiredInputTensor(0)->GetDataType() != ge::DT_FLOAT16) return -2;
    if (shape.GetRequiredInputShape(0)->GetDim(1) != 3 || shape.GetRequiredInputTensor(0) == nullptr) return -3;
    if (shape.GetDynamicInputTensor(2, 1)->GetStorageShape().GetDim(1) != 6) return -4;
    if (shape.GetDynamicInputTensor(2, 2) != nullptr) return -5;
    if (dtype.GetRequiredInputDataType(0) != ge::DT_FLOAT16 || dtype.GetRequiredInputDesc(0) == nullptr) return -6;
    if (dtype.GetOutputDesc(0) == nullptr || dtype.GetOutputDesc(1) != nullptr) return -7;
    if (dtype.SetOutputDataType(1, ge::DT_FLOAT) != ge::GRAPH_FAILED) return -8;
    const gert::AnchorInstanceInfo* dyn = dtype.GetIrInputInstanceInfo(2);
    const gert::AnchorInstanceInfo* out = tiling.GetIrOutputInstanceInfo(0);
    if (std::string(tiling.GetKernelType()) != "Probe" || tiling.GetComputeNodeInfo()->GetIrOutputsNum() != 1)
        return -9;
    return int64_t(dyn->GetInstanceStart()) * 1000 + int64_t(dyn->GetInstanceNum()) * 100 +
           int64_t(out->GetInstanceNum()) * 10 + int64_t(dtype.GetOptionalInputDesc(1) != nullptr);
}

BEGIN_TILING_DATA_DEF(ProbeTilingData)
TILING_DATA_FIELD_DEF(uint32_t, n);
END_TILING_DATA_DEF;

// TilingDef's GetTilingClassName
extern "C" int64_t tiling_class_name() {
    ProbeTilingData t;
    return std::string(t.GetTilingClassName()) == "ProbeTilingData" ? 1 : 0;
}

// the OpDef builder members: accepted, and what they record
class ProbeOp : public ops::OpDef {
public:
    explicit ProbeOp(const char* name) : ops::OpDef(name) {
        this->Input("x").ParamType(ops::REQUIRED).DataType({ge::DT_FLOAT}).DataTypeForBinQuery({ge::DT_FLOAT})
            .FormatForBinQuery({ge::FORMAT_ND}).Version(1);
        this->Output("y").ParamType(ops::REQUIRED).DataType({ge::DT_FLOAT}).InitValue(0);
        this->Output("z").ParamType(ops::REQUIRED).DataType({ge::DT_FLOAT})
            .InitValue({ops::ScalarType::FLOAT32, 1.5});
        this->Output("w").ParamType(ops::REQUIRED).DataType({ge::DT_INT32})
            .InitValue({{ops::ScalarType::INT32, 3}, {ops::ScalarType::FLOAT16, 2}});
        this->Attr("pads").AttrType(ops::REQUIRED).ListListInt({{1, 2}, {3}}).Version(1);
        this->Attr("axes").ListListInt();
        this->Comment(ops::CommentSection::BRIEF, "probe");
        this->FormatMatchMode(ops::FormatCheckOption::STRICT);
        this->AICore().LaunchWithZeroEleOutputTensors(true).AddConfig("ascend910b");
        this->AICPU().Engine("DNN_VM_AICPU").FlagPartial(false).KernelSo("libprobe.so").UserDefined(true);
        this->HostCPU().OpKernelLib("HostCPUKernel").FlagAsync(false);
        this->MC2().HcclServerType(ops::HcclServerType::AICORE, "ascend910_93");
    }
};

extern "C" int64_t op_def_members() {
    ProbeOp op("Probe");
    const ops::OpParamDef& y = op.outputs_[0];
    const ops::OpParamDef& z = op.outputs_[1];
    const ops::OpParamDef& w = op.outputs_[2];
    ops::OpAttrDef& pads = op.attrs_[0];
    if (y.init_values_.size() != 1 || y.init_values_[0].scalar_num.value_u64 != 0) return -1;
    if (z.init_values_[0].scalar_num.value_f32 != 1.5f) return -2;
    if (w.init_values_.size() != 2 || w.init_values_[0].scalar_num.value_i64 != 3) return -3;
    if (w.init_values_[1].scalar_num.value_f32 != 2.0f) return -4;
    if (!(ops::ScalarVar(ops::ScalarType::INT32, 3) == w.init_values_[0])) return -5;
    if (std::string(pads.GetName().GetString()) != "pads" || !pads.IsRequired() || op.attrs_[1].IsRequired()) return -6;
    if (op.AICore().GetTiling() != nullptr || op.GetInferShape() != nullptr || op.GetInferDataType() != nullptr)
        return -7;
    return int64_t(pads.lli_.size()) * 100 + int64_t(pads.lli_[1][0]) * 10 + int64_t(op.aicore_.zero_ele_launch_);
}
// shape ranges of a static-shape op: each input's and output's range is its one shape (min == max);
// an absent optional input has none; an InferShapeRange function written as CANN's library writes
// them (metadef's Range<Shape>) reads and sets them
static ge::graphStatus ProbeShapeRange(gert::InferShapeRangeContext* context) {
    const gert::Range<gert::Shape>* x = context->GetInputShapeRange(0);
    gert::Range<gert::Shape>* y = context->GetOutputShapeRange(0);
    if (x == nullptr || y == nullptr || y->GetMax() == nullptr) return ge::GRAPH_FAILED;
    *y->GetMin() = *x->GetMin();
    *y->GetMax() = *x->GetMax();
    return ge::GRAPH_SUCCESS;
}
extern "C" int64_t shape_ranges(int64_t optional_given) {
    gert::KgsimOpIO io = make_io(optional_given != 0, 2);
    gert::InferShapeRangeContext context(&io);
    if (ProbeShapeRange(&context) != ge::GRAPH_SUCCESS) return -1;
    const gert::Range<gert::Shape>* x = context.GetInputShapeRange(0);
    if (x->GetMin() != x->GetMax() || !(*x == *x)) return -2;
    const gert::Range<gert::Shape>* dyn = context.GetDynamicInputShapeRange(2, 1);
    const gert::Shape& y = io.out_shapes[0].GetStorageShape();
    return (context.GetOptionalInputShapeRange(1) != nullptr) * 1000 + dyn->GetMax()->GetDim(1) * 100 +
           y.GetDim(0) * 10 + y.GetDim(1);
}
"""


def _lib():
    probe = f"// host api members probe {time.time():f}\n"
    path = compile_shared(
        {"host_api_members.cpp": probe + SOURCE}, flags=["-O1", "-std=c++20", "-I", str(INCLUDE)], cache_subdir="test"
    )
    return NativeLibrary(path, parse_extern_c(SOURCE))


def test_shapes_formats_and_tensors():
    lib = _lib()
    assert lib.shape_limits(1 << 30) == 1
    assert lib.expand_dims(2, 5) == 2115
    assert lib.expand_dims(3, 4) == 3114
    # FORMAT_NCHW 0 origin, FORMAT_NHWC 1 storage; the tensor then INT8 (2), ND (2), NCHW (0), 2*7*2 elements
    assert lib.formats(0, 1) == 2 * 100000 + 2 * 10000 + 0 * 1000 + 28 * 10 + 3
    assert lib.formats(1, 0) == 2 * 100000 + 2 * 10000 + 0 * 1000 + 28 * 10 + 3
    assert lib.tensor_data(42) == 24 * 1000 + 42


def test_vectors_attrs_and_tiling_data():
    lib = _lib()
    assert lib.continuous_vector(2) == 2 * 100 + 90 + 4
    assert lib.continuous_vector(4) == 4 * 100 + 90 + 4
    assert lib.runtime_attrs(6) == 6 * 1000 + 300 + 6
    # 4 + 4 + 4 bytes: the int32, the int16 pair, the int32 operator<< appended
    assert lib.tiling_data(3) == 12 * 100000 + 3 * 100 + 8 * 10 + 5
    assert lib.tiling_class_name() == 1


def test_tiling_context_outputs_and_required_accessors():
    lib = _lib()
    assert lib.tiling_outputs(1) == 1 * 100000 + 10000 + 3 * 1000 + 2 * 100 + 1 * 10 + 1
    # dynamic IR input 2 starts at 2 with 2 instances; the optional input's desc only when given
    assert lib.required_accessors(1) == 2 * 1000 + 2 * 100 + 10 + 1
    assert lib.required_accessors(0) == 2 * 1000 + 2 * 100 + 10 + 0


def test_op_def_builder_members():
    lib = _lib()
    assert lib.op_def_members() == 2 * 100 + 3 * 10 + 1


def test_shape_range_context_gives_each_static_shape_as_its_range():
    lib = _lib()
    # dynamic IR input 2's second instance is compute-node input 3: [2, 6]; y takes x's [2, 3]
    assert lib.shape_ranges(1) == 1000 + 6 * 100 + 2 * 10 + 3
    assert lib.shape_ranges(0) == 6 * 100 + 2 * 10 + 3
