"""The name-based mapping of a reference module onto an operator project's binding
(experiments.binding_args), on small reference modules and bindings written here."""

from __future__ import annotations

import torch
from torch import nn

from experiments.binding_args import (
    BOOL,
    FLOAT,
    INT,
    OPTIONAL_TENSOR,
    TENSOR,
    binding_params,
    match_score,
    named_arguments,
    named_values,
)
from experiments.calibrate_timing import _binding_signature, _candidates


def _binding(params: str, name: str = "fused_custom") -> str:
    return (
        f"at::Tensor {name}_impl_npu({params})\n{{\n    return x;\n}}\n"
        f'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{\n    m.def("{name}", &{name}_impl_npu, "doc");\n}}\n'
    )


def test_binding_parameters_are_read_with_names_and_kinds_past_comments() -> None:
    src = _binding(
        "const at::Tensor& x,            // [M,K] (row major)\n"
        "    const c10::optional<at::Tensor>& conv_bias_opt, /* [Cout] (maybe) */\n"
        "    double divisor, int64_t groups, bool training = false"
    )
    params = binding_params(src, "fused_custom")
    assert [(p.name, p.kind) for p in params] == [
        ("x", TENSOR),
        ("conv_bias_opt", OPTIONAL_TENSOR),
        ("divisor", FLOAT),
        ("groups", INT),
        ("training", BOOL),
    ]
    assert _binding_signature(src, "fused_custom") == ["tensor", "tensor", "scalar", "scalar", "scalar"]
    assert binding_params(src, "other_custom") is None


class _ConvScaleBias(nn.Module):
    """A conv, then a scale and a post-bias declared in the other order than the binding takes them."""

    def __init__(self, cin: int, cout: int, scale1: float, bias_shape: tuple[int, ...]) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3)
        self.scale1 = nn.Parameter(torch.tensor(scale1))
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv(x) * self.scale1 + self.bias


def test_parameters_go_by_name_not_by_declaration_order() -> None:
    model = _ConvScaleBias(3, 4, 0.5, (4, 1, 1))
    x = torch.randn(2, 3, 8, 8)
    src = _binding(
        "const at::Tensor& x, const at::Tensor& weight, const c10::optional<at::Tensor>& conv_bias_opt, "
        "const at::Tensor& bias, const at::Tensor& scale1"
    )
    params = binding_params(src, "fused_custom")
    label, args = named_arguments(params, [x], model, [3, 4, 0.5, (4, 1, 1)])[0]
    assert label == "by name"
    assert args[0] is x
    assert args[1] is not None and torch.equal(args[1], model.conv.weight)
    assert torch.equal(args[2], model.conv.bias)
    assert torch.equal(args[3], model.bias)  # the module's own bias, not the conv's
    assert torch.equal(args[4], model.scale1)
    # positional mapping (registration order: scale1, bias, conv.weight, conv.bias) gets this wrong
    positional = dict(_candidates(["tensor"] * 5, [x], model, [3, 4, 0.5, (4, 1, 1)]))["inputs+parameters"]
    assert torch.equal(positional[1], model.scale1)  # PyTorch registers own parameters first


class _GemmGroupNorm(nn.Module):
    def __init__(self, in_features: int, out_features: int, num_groups: int, divisor: float) -> None:
        super().__init__()
        self.gemm = nn.Linear(in_features, out_features)
        self.group_norm = nn.GroupNorm(num_groups, out_features)
        self.scale = nn.Parameter(torch.ones(out_features, 1, 1))
        self.divisor = divisor

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.group_norm(self.gemm(x)) / self.divisor


def test_synonyms_counts_as_int32_numbers_as_tensors_and_per_channel_flattening() -> None:
    model = _GemmGroupNorm(16, 8, 4, 2.5)
    x = torch.randn(3, 16)
    src = _binding(
        "const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const at::Tensor& gn_gamma, "
        "const at::Tensor& gn_beta, const at::Tensor& scale_1d, const at::Tensor& num_groups, "
        "const at::Tensor& eps, const at::Tensor& divisor"
    )
    cands = dict(named_arguments(binding_params(src, "fused_custom"), [x], model, [16, 8, 4, 2.5]))
    args = cands["by name"]
    assert torch.equal(args[1], model.gemm.weight) and torch.equal(args[2], model.gemm.bias)
    assert torch.equal(args[3], model.group_norm.weight) and torch.equal(args[4], model.group_norm.bias)
    assert args[5].shape == (8, 1, 1)
    assert args[6].dtype == torch.int32 and args[6].tolist() == [4]  # a count: int32
    assert args[7].dtype == torch.float32 and abs(float(args[7]) - 1e-5) < 1e-12
    assert args[8].dtype == torch.float32 and args[8].tolist() == [2.5]
    flat = cands["by name, per-channel flattened"]
    assert flat[5].shape == (8,) and flat[1].shape == (8, 16)  # only (C, 1, ..., 1) tensors
    as_float = cands["by name, counts as float"]
    assert as_float[6].dtype == torch.float32 and as_float[6].tolist() == [4.0]


def test_scalar_parameters_take_numbers_and_a_missing_name_gives_no_mapping() -> None:
    model = _GemmGroupNorm(16, 8, 4, 2.5)
    x = torch.randn(3, 16)
    ok = _binding("const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double divisor")
    (label, args), *_ = named_arguments(binding_params(ok, "fused_custom"), [x], model, [16, 8, 4, 2.5])
    assert args[3] == 2.5 and isinstance(args[3], float)
    missing = _binding("const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias, double temperature")
    assert named_arguments(binding_params(missing, "fused_custom"), [x], model, [16, 8, 4, 2.5]) == []


def test_an_optional_tensor_without_a_value_is_passed_as_none() -> None:
    model = nn.Sequential(nn.Conv2d(3, 4, 3, bias=False))
    x = torch.randn(1, 3, 5, 5)
    src = _binding("const at::Tensor& x, const at::Tensor& weight, const c10::optional<at::Tensor>& bias_opt")
    (_, args), *_ = named_arguments(binding_params(src, "fused_custom"), [x], model, [])
    assert torch.equal(args[1], model[0].weight) and args[2] is None


def test_named_values_order_and_scores() -> None:
    model = _GemmGroupNorm(16, 8, 4, 2.5)
    names = [n for n, _ in named_values(model, [16, 8, 4, 2.5])]
    # parameters first (registration order), then the __init__ arguments, then module attributes
    assert names[:5] == ["gemm.weight", "gemm.bias", "group_norm.weight", "group_norm.bias", "scale"]
    assert names.index("divisor") < names.index("group_norm.eps")
    assert "group_norm.training" not in names and "training" in names
    assert match_score("bias", "bias") > match_score("bias", "conv.bias") > 0
    assert match_score("conv_bias_opt", "conv_transpose.bias") > match_score("conv_bias_opt", "bias")
    assert match_score("gn_gamma", "group_norm.weight") > match_score("gn_gamma", "gemm.weight")
    # a bare gamma too: the norm's weight, not the transposed conv's declared before it
    assert match_score("gamma", "group_norm.weight") > match_score("gamma", "conv_transpose.weight") > 0
    assert match_score("beta", "group_norm.bias") > match_score("beta", "conv_transpose.bias") > 0
    assert match_score("temperature", "gemm.weight") == 0


class _ConvTransposeFlag(nn.Module):
    """A ``bias=True`` init flag beside the conv's bias tensor, as KernelBench level-2 modules have."""

    def __init__(self, cin: int, cout: int, bias: bool = True) -> None:
        super().__init__()
        self.conv_transpose = nn.ConvTranspose2d(cin, cout, 3, bias=bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.conv_transpose(x)


def test_a_tensor_parameter_takes_the_tensor_not_a_flag_of_its_name() -> None:
    model = _ConvTransposeFlag(3, 4)
    x = torch.randn(1, 3, 5, 5)
    src = _binding("const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias")
    (_, args), *_ = named_arguments(binding_params(src, "fused_custom"), [x], model, [3, 4])
    assert torch.equal(args[2], model.conv_transpose.bias)  # not tensor([1]) from the bias=True flag
    src = _binding("const at::Tensor& x, const at::Tensor& weight, bool bias")
    (_, args), *_ = named_arguments(binding_params(src, "fused_custom"), [x], model, [3, 4])
    assert args[2] is True  # a scalar parameter of that name does take the flag
