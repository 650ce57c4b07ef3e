#!/usr/bin/env python3
"""The benchmark corpus: KernelBench-level-2-like graphs, each written once, here.

Every graph is a chain in the style of KernelBench level 2 (a convolution, transposed
convolution, linear or matmul, then activations, norms, pools, reductions, softmax, residual
adds and scalar ops) at realistic sizes. One builder per graph describes it once, with every
size picked from a scale: "full" (what the device benchmark times: fp32 memory of all
tensors under ~6 GB, PyTorch time ~0.2-20 ms) or "small" (the same structure and attributes
on shapes small enough for the float64 CPU reference, `sinterc eval`, in well under a
second). From that one description come the `.sir` text, the tensors and how to draw them,
a PyTorch twin (generated Python source calling torch.nn.functional op by op, in the same
order), the anchor FLOPs and the math class of the roofline floor. The machinery (shape
inference, the .sir printer, the twin generator, helpers that create an op's weights) is
sirbuild.py; this file holds the graphs, the torch-side helpers and the command line.

  python3 bench/corpus/corpus.py --write      # bench/corpus/{full,small}/<name>.sir
  python3 bench/corpus/corpus.py --check      # exit 1 if the committed files are stale
  python3 bench/corpus/corpus.py --list [-v]  # names (with sizes, FLOPs, memory)
  python3 bench/corpus/corpus.py --twin NAME  # the PyTorch twin's source

Plain python3 is enough for all of the above; torch is imported only by make_tensors() and
twin(), which bench/corpus_bench.py calls on the GPU machine.
"""
import argparse
import glob
import importlib
import os
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from sirbuild import (ENTRIES, Graph, batch_norm, conv, conv_t, corpus,  # noqa: E402
                      group_norm, instance_norm, layer_norm, linear)
SCALES = ("full", "small")

# Limits each graph is held to (checked by --write and --check).
FULL_MAX_BYTES = 6.0e9  # fp32 inputs + params + every intermediate + outputs
# The KernelBench translations (kernelbench_*.py, names `<family>_kb<N>_...`) keep the
# problems' own sizes, some of which are larger or faster than the corpus's own range.
KB_MAX_BYTES = 24.0e9
KB_EAGER_MS = (0.005, 100.0)
SMALL_MAX_MACS = 2.0e7  # the float64 CPU reference stays well under a second
SMALL_MAX_ELEMENTS = 1.0e6  # every tensor of the graph together

# ----------------------------------------------------------------------------------------
# The corpus. Each builder takes the graph and `s(full, small)`, which picks a size; the
# `corpus` decorator (sirbuild.py) registers it in ENTRIES.


def build(name, scale):
    g = Graph(name, scale)
    ENTRIES[name](g, lambda full, small: full if scale == "full" else small)
    assert g.out is not None and g.doc and g.anchor_kinds, name
    return g


def family(name):
    return name.split("_")[0]


def is_kb(name):
    """A translation of a KernelBench level-2 problem (kernelbench_*.py)."""
    return name.split("_")[1].startswith("kb") and name.split("_")[1][2:].isdigit()


# ---- linear -> group norm, groups 1..512, group widths 8..8192


@corpus("gemm_gn16_gelu_scale")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), 8192
    g.doc = f"Linear({k}->{n}) -> GroupNorm(16, width {n // 16}) -> GELU -> *1.702 -> +0.25"
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    h = group_norm(g, "n", y, 16)
    a = g.op("a", "gelu", h)
    sc = g.op("sc", "mul", a, 1.702)
    g.ret(g.op("o", "add", sc, 0.25))


@corpus("gemm_gn1_hardswish_sum")
def _(g, s):
    m, k, n = s(2048, 4), s(4096, 64), 8192
    g.doc = f"Linear({k}->{n}) -> GroupNorm(1, width {n}) -> HardSwish -> sum over features"
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    h = group_norm(g, "n", y, 1)
    a = g.op("a", "hardswish", h)
    g.ret(g.op("o", "sum", a, dims=[1]))


@corpus("gemm_gn64_tanh_max")
def _(g, s):
    m, k, n = s(4096, 8), s(4096, 64), 4096
    g.doc = (f"Linear({k}->{n}) -> GroupNorm(64, width {n // 64}) -> tanh -> "
             f"max over features (keepdim)")
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    h = group_norm(g, "n", y, 64)
    a = g.op("a", "tanh", h)
    g.ret(g.op("o", "max", a, dims=[1], keepdim=True))


@corpus("gemm_gn256_lrelu_mean")
def _(g, s):
    m, k, n = s(512, 4), s(8192, 64), 8192
    g.doc = (f"Linear({k}->{n}, no bias) -> GroupNorm(256, width {n // 256}) -> "
             f"LeakyReLU(0.2) -> mean over features")
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n, bias=False)
    h = group_norm(g, "n", y, 256)
    a = g.op("a", "leaky_relu", h, negative_slope=0.2)
    g.ret(g.op("o", "mean", a, dims=[1]))


@corpus("gemm_gn512_sigmoid_lse")
def _(g, s):
    m, k, n = s(4096, 8), s(2048, 64), 4096
    g.doc = (f"Linear({k}->{n}) -> GroupNorm(512, width {n // 512}) -> sigmoid -> "
             f"logsumexp over features (keepdim)")
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    h = group_norm(g, "n", y, 512, eps=1e-6)
    a = g.op("a", "sigmoid", h)
    g.ret(g.op("o", "logsumexp", a, dims=[1], keepdim=True))


@corpus("gemm_gn4_relu_lse")
def _(g, s):
    m, k, n = s(32768, 16), s(1024, 64), 1024
    g.doc = (f"Linear({k}->{n}) -> GroupNorm(4, width {n // 4}) -> ReLU -> +0.5 -> "
             f"logsumexp over features")
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    h = group_norm(g, "n", y, 4)
    a = g.op("a", "relu", h)
    c = g.op("c", "add", a, 0.5)
    g.ret(g.op("o", "logsumexp", c, dims=[1]))


@corpus("gemm_gn32_silu_res")
def _(g, s):
    m, k, n = s(8192, 8), s(2048, 64), 2048
    g.doc = (f"y = Linear({k}->{n}); SiLU(GroupNorm(32, width {n // 32})(y)) + y "
             f"(residual of the GEMM output)")
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    h = group_norm(g, "n", y, 32)
    a = g.op("a", "silu", h)
    g.ret(g.op("o", "add", a, y))


@corpus("gemm_gn8_elu_sum")
def _(g, s):
    m, k, n = s(16384, 8), s(1024, 64), 2048
    g.doc = (f"Linear({k}->{n}) -> GroupNorm(8, width {n // 8}) -> ELU(0.5) -> "
             f"sum over features (keepdim)")
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    h = group_norm(g, "n", y, 8)
    a = g.op("a", "elu", h, alpha=0.5)
    g.ret(g.op("o", "sum", a, dims=[1], keepdim=True))


@corpus("gemm_bias_hardtanh_mish_gn128")
def _(g, s):
    m, k, n = s(8192, 8), s(2048, 64), 4096
    g.doc = (f"Linear({k}->{n}) -> + bias[{n}] -> Hardtanh -> Mish -> "
             f"GroupNorm(128, width {n // 128})")
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    bias = g.param("bias", [n], -0.5, 0.5)
    a = g.op("a", "add", y, bias)
    h = g.op("h", "hardtanh", a)
    mi = g.op("mi", "mish", h)
    g.ret(group_norm(g, "o", mi, 128))


# ---- linear -> other norms, softmax, logsumexp, activations


@corpus("gemm_ln_gelu_tanh")
def _(g, s):
    m, k, n = s(8192, 8), s(4096, 64), 4096
    g.doc = f"Linear({k}->{n}) -> LayerNorm({n}) -> GELU(tanh)"
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    h = layer_norm(g, "n", y, 1)
    g.ret(g.op("o", "gelu", h, approximate="tanh"))


@corpus("gemm_scale_bn_relu")
def _(g, s):
    m, k, n = s(16384, 16), s(1024, 64), 2048
    g.doc = f"Linear({k}->{n}) -> * scale[{n}] -> BatchNorm (inference) -> ReLU"
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    scale = g.param("scale", [n], 0.5, 1.5)
    sc = g.op("sc", "mul", y, scale)
    h = batch_norm(g, "n", sc)
    g.ret(g.op("o", "relu", h))


@corpus("gemm_softmax_temp_dropout")
def _(g, s):
    m, k, n = s(4096, 8), s(4096, 64), 4096
    g.doc = f"Linear({k}->{n}) -> /0.5 -> softmax over features -> Dropout(0.1) (identity)"
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    t = g.op("t", "div", y, 0.5)
    p = g.op("p", "softmax", t, dim=1)
    g.ret(g.op("o", "dropout", p, p=0.1))


@corpus("gemm_lse_lrelu_gelu")
def _(g, s):
    m, k, n = s(8192, 8), s(2048, 64), 4096
    g.doc = (f"Linear({k}->{n}) -> logsumexp over features (keepdim) -> LeakyReLU x2 -> "
             f"GELU x2")
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    l = g.op("l", "logsumexp", y, dims=[1], keepdim=True)
    a = g.op("a", "leaky_relu", l)
    a2 = g.op("a2", "leaky_relu", a)
    c = g.op("c", "gelu", a2)
    g.ret(g.op("o", "gelu", c))


@corpus("gemm_swish_reuse")
def _(g, s):
    m, k, n = s(32768, 16), s(1024, 64), 1024
    g.doc = f"y = Linear({k}->{n}); y * sigmoid(y) + y (y used three times)"
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    sg = g.op("sg", "sigmoid", y)
    sw = g.op("sw", "mul", y, sg)
    g.ret(g.op("o", "add", sw, y))


@corpus("gemm_relu_gemm")
def _(g, s):
    m, k, h, n = s(8192, 8), s(2048, 64), s(4096, 256), 1024
    g.doc = f"MLP: Linear({k}->{h}) -> ReLU -> Linear({h}->{n})"
    x = g.input("x", [m, k])
    y = linear(g, "y", x, h, w="w1", b="b1")
    r = g.op("r", "relu", y)
    g.ret(linear(g, "o", r, n, w="w2", b="b2"))


@corpus("gemm_softplus_tanh_clamp")
def _(g, s):
    m, k, n = s(4096, 8), s(8192, 64), 2048
    g.doc = (f"y = Linear({k}->{n}); clamp(y * tanh(Softplus(beta=2, threshold=10)(y)), "
             f"-1, 1)")
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    sp = g.op("sp", "softplus", y, beta=2.0, threshold=10.0)
    t = g.op("t", "tanh", sp)
    mu = g.op("mu", "mul", y, t)
    g.ret(g.op("o", "clamp", mu, min=-1.0, max=1.0))


@corpus("gemm_unary_mix")
def _(g, s):
    m, k, n = s(8192, 8), s(1024, 64), 4096
    g.doc = (f"y = Linear({k}->{n}); a = |y|; "
             f"max(sqrt(a + 1e-3) * erf(y), log(a + 1)) - exp(-a)")
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    a = g.op("a", "abs", y)
    a1 = g.op("a1", "add", a, 1e-3)
    sq = g.op("sq", "sqrt", a1)
    e = g.op("e", "erf", y)
    p = g.op("p", "mul", sq, e)
    a2 = g.op("a2", "add", a, 1.0)
    lg = g.op("lg", "log", a2)
    mx = g.op("mx", "maximum", p, lg)
    ng = g.op("ng", "neg", a)
    ex = g.op("ex", "exp", ng)
    g.ret(g.op("o", "sub", mx, ex))


@corpus("gemm_rmsnorm_rsqrt")
def _(g, s):
    m, k, n = s(16384, 16), s(2048, 64), 2048
    g.doc = (f"y = Linear({k}->{n}); RMSNorm by hand: y * rsqrt(mean(y*y over features) "
             f"+ 1e-6) * gamma")
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    sq = g.op("sq", "mul", y, y)
    ms = g.op("ms", "mean", sq, dims=[-1], keepdim=True)
    eps = g.op("ms_eps", "add", ms, 1e-6)
    r = g.op("r", "rsqrt", eps)
    h = g.op("h", "mul", y, r)
    gamma = g.param("gamma", [n], 0.5, 1.5)
    g.ret(g.op("o", "mul", h, gamma))


@corpus("gemm_sub_mean_lse_gelu_res")
def _(g, s):
    m, n = s(16384, 16), s(2048, 256)
    g.doc = (f"Linear({n}->{n}) -> - sub[{n}] -> mean over features (keepdim) -> "
             f"logsumexp (keepdim) -> GELU -> + x (residual, broadcast)")
    x = g.input("x", [m, n])
    y = linear(g, "y", x, n)
    sub = g.param("sub", [n], -0.5, 0.5)
    d = g.op("d", "sub", y, sub)
    mn = g.op("mn", "mean", d, dims=[1], keepdim=True)
    l = g.op("l", "logsumexp", mn, dims=[1], keepdim=True)
    ge = g.op("ge", "gelu", l)
    g.ret(g.op("o", "add", ge, x))


@corpus("gemm_flatten_log_softmax")
def _(g, s):
    n, c, hw, k = s(2048, 4), s(512, 16), s(4, 2), 1000
    g.doc = (f"classifier head: flatten([{n},{c},{hw},{hw}] from dim 1) -> "
             f"Linear({c * hw * hw}->{k}) -> log_softmax over classes")
    x = g.input("x", [n, c, hw, hw])
    f = g.op("f", "flatten", x, start_dim=1)
    y = linear(g, "y", f, k)
    g.ret(g.op("o", "log_softmax", y, dim=1))


@corpus("gemm_reshape_head_softmax")
def _(g, s):
    m, k, heads, d = s(4096, 8), s(2048, 64), 16, s(128, 32)
    n = heads * d
    g.doc = (f"y = Linear({k}->{n}); softmax of y viewed as [{m},{heads},{d}] over dim 2, "
             f"viewed back, * y * scale (a f32[] param)")
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    r = g.op("r", "reshape", y, shape=[m, heads, d])
    p = g.op("p", "softmax", r, dim=2)
    b = g.op("pb", "reshape", p, shape=[m, -1])
    py = g.op("py", "mul", b, y)
    scale = g.param("scale", [], 0.5, 1.5)
    g.ret(g.op("o", "mul", py, scale))


# ---- matmul / bmm


@corpus("matmul_gn32_gelu_mean")
def _(g, s):
    m, k, n = s(4096, 8), s(4096, 64), 2048
    g.doc = (f"matmul([{m},{k}] x weight [{k},{n}]) -> GroupNorm(32, width {n // 32}) -> "
             f"GELU(tanh) -> mean over features")
    a = g.input("a", [m, k])
    b = g.weight("b", [k, n], k)
    y = g.op("y", "matmul", a, b)
    h = group_norm(g, "n", y, 32)
    ge = g.op("ge", "gelu", h, approximate="tanh")
    g.ret(g.op("o", "mean", ge, dims=[1]))


@corpus("bmm_attention")
def _(g, s):
    b, l, d = s(256, 2), s(512, 96), 64
    g.doc = (f"attention: softmax(q[{b},{l},{d}] x k^T[{b},{d},{l}] * 0.125, dim 2) x "
             f"v[{b},{l},{d}] (two batched GEMMs)")
    q = g.input("q", [b, l, d])
    kt = g.input("kt", [b, d, l])
    v = g.input("v", [b, l, d])
    sc = g.op("sc", "matmul", q, kt)
    z = g.op("z", "mul", sc, 0.125)
    p = g.op("p", "softmax", z, dim=2)
    g.ret(g.op("o", "matmul", p, v))


@corpus("matmul_bcast_relu_ln")
def _(g, s):
    b0, b1, m, k, n = s(16, 2), s(8, 3), s(512, 16), s(256, 64), 512
    g.doc = (f"matmul(x[{b0},{b1},{m},{k}], weight [{b1},{k},{n}], batch broadcast) -> ReLU -> "
             f"LayerNorm({n})")
    x = g.input("x", [b0, b1, m, k])
    w = g.weight("w", [b1, k, n], k)
    y = g.op("y", "matmul", x, w)
    r = g.op("r", "relu", y)
    g.ret(layer_norm(g, "o", r, 1))


@corpus("bmm_lse_softplus")
def _(g, s):
    b, m, k, n = s(64, 2), s(1024, 96), s(512, 64), s(1024, 80)
    g.doc = (f"bmm([{b},{m},{k}] x [{b},{k},{n}]) -> logsumexp over dim 1 (rows) -> "
             f"Softplus")
    a = g.input("a", [b, m, k])
    bb = g.input("b", [b, k, n])
    y = g.op("y", "matmul", a, bb)
    l = g.op("l", "logsumexp", y, dims=[1])
    g.ret(g.op("o", "softplus", l))


# ---- conv 1-D


@corpus("conv1d_bn_relu_maxpool")
def _(g, s):
    n, l = s(128, 2), s(4096, 200)
    g.doc = "Conv1d(64->128, k=5, pad=2) -> BatchNorm -> ReLU -> MaxPool1d(2)"
    x = g.input("x", [n, 64, l])
    y = conv(g, "y", x, 128, 5, padding=2)
    h = batch_norm(g, "n", y)
    r = g.op("r", "relu", h)
    g.ret(g.op("o", "max_pool", r, kernel_size=2))


@corpus("conv1d_c4_gelu_avgpool3_ceil")
def _(g, s):
    n, l = s(128, 2), s(16383, 401)
    g.doc = ("Conv1d(4->16, k=5, pad=2) on odd lengths -> GELU -> AvgPool1d(3, ceil_mode) -> "
             "mul 2")
    x = g.input("x", [n, 4, l])
    y = conv(g, "y", x, 16, 5, padding=2)
    a = g.op("a", "gelu", y)
    p = g.op("p", "avg_pool", a, kernel_size=3, ceil_mode=True)
    g.ret(g.op("o", "mul", p, 2.0))


@corpus("conv1d_dil_s2_gn_gelu_avgpool")
def _(g, s):
    n, l = s(128, 2), s(8191, 401)
    g.doc = ("Conv1d(32->64, k=3, stride=2, pad=2, dilation=2, groups=4) -> GroupNorm(8) -> "
             "GELU -> AvgPool1d(3, stride 2, pad 1, count_include_pad=false)")
    x = g.input("x", [n, 32, l])
    y = conv(g, "y", x, 64, 3, stride=2, padding=2, dilation=2, groups=4)
    h = group_norm(g, "n", y, 8)
    a = g.op("a", "gelu", h)
    g.ret(g.op("o", "avg_pool", a, kernel_size=3, stride=2, padding=1,
               count_include_pad=False))


@corpus("conv1d_softmax_c_min")
def _(g, s):
    n, l = s(128, 2), s(16383, 301)
    g.doc = "Conv1d(16->32, k=7, pad=3) -> softmax over channels -> min over length"
    x = g.input("x", [n, 16, l])
    y = conv(g, "y", x, 32, 7, padding=3)
    p = g.op("p", "softmax", y, dim=1)
    g.ret(g.op("o", "min", p, dims=[2]))


# ---- conv 2-D


@corpus("conv2d_wide_relu_gn")
def _(g, s):
    n, hw = s(16, 2), s(128, 7)
    g.doc = "Conv2d(128->128, k=3, pad=1) -> ReLU -> GroupNorm(8)"
    x = g.input("x", [n, 128, hw, hw])
    y = conv(g, "y", x, 128, 3, padding=1)
    r = g.op("r", "relu", y)
    g.ret(group_norm(g, "o", r, 8))


@corpus("conv2d_g12_bn_relu")
def _(g, s):
    # Groups of 12 channels: not whole k8 steps of conv_mma, whose per-lane offsets then
    # spilled at 4 m16 tiles a warp (compiler/kernels/ConvMma.cpp, maxTilesPerWarp).
    n, hw = s(128, 2), s(64, 12)
    g.doc = "Conv2d(96->96, k=3, pad=1, groups=8) -> BatchNorm -> ReLU"
    x = g.input("x", [n, 96, hw, hw])
    y = conv(g, "y", x, 96, 3, padding=1, groups=8)
    h = batch_norm(g, "n", y)
    g.ret(g.op("o", "relu", h))


@corpus("conv2d_g20_relu")
def _(g, s):
    # Groups of 20 channels: 23 k8 steps that mix taps (see conv2d_g12_bn_relu).
    n, hw = s(128, 2), s(64, 12)
    g.doc = "Conv2d(160->128, k=3, pad=1, groups=8) -> ReLU"
    x = g.input("x", [n, 160, hw, hw])
    y = conv(g, "y", x, 128, 3, padding=1, groups=8)
    g.ret(g.op("o", "relu", y))


@corpus("convt2d_g12_gelu_gn")
def _(g, s):
    # S2's chain on groups of 12 channels (and norm groups of 6).
    n, hw = s(64, 2), s(126, 10)
    g.doc = "ConvTranspose2d(96->96, k=3, groups=8) -> GELU -> GroupNorm(16)"
    x = g.input("x", [n, 96, hw, hw])
    y = conv_t(g, "y", x, 96, 3, groups=8)
    h = g.op("h", "gelu", y)
    g.ret(group_norm(g, "o", h, 16))


@corpus("conv2d_grouped_gn_silu_large")
def _(g, s):
    # Large images in few-channel groups: 256 tiles of 8 x 32 per (sample, conv group), where
    # conv_mma finishes the group norm in its own kernel (docs/kernels-direct.md).
    n, hw = s(64, 2), s(256, 12)
    g.doc = "Conv2d(32->32, k=3, pad=1, groups=4) on 256x256 -> GroupNorm(8) -> SiLU"
    x = g.input("x", [n, 32, hw, hw])
    y = conv(g, "y", x, 32, 3, padding=1, groups=4)
    h = group_norm(g, "n", y, 8)
    g.ret(g.op("o", "silu", h))


@corpus("conv2d_gn_tanh_hswish_res_lse")
def _(g, s):
    n, hw = s(128, 2), s(128, 20)
    g.doc = ("y = Conv2d(8->64, k=3, pad=1); logsumexp over channels (keepdim) of "
             "HardSwish(tanh(GroupNorm(16)(y))) + y")
    x = g.input("x", [n, 8, hw, hw])
    y = conv(g, "y", x, 64, 3, padding=1)
    h = group_norm(g, "n", y, 16)
    t = g.op("t", "tanh", h)
    hs = g.op("hs", "hardswish", t)
    r = g.op("r", "add", hs, y)
    g.ret(g.op("o", "logsumexp", r, dims=[1], keepdim=True))


@corpus("conv2d_min_tanh_tanh")
def _(g, s):
    n, hw = s(128, 2), s(128, 24)
    g.doc = "Conv2d(16->64, k=3) -> min over channels (keepdim) -> tanh -> tanh"
    x = g.input("x", [n, 16, hw, hw])
    y = conv(g, "y", x, 64, 3)
    m = g.op("m", "min", y, dims=[1], keepdim=True)
    t = g.op("t", "tanh", m)
    g.ret(g.op("o", "tanh", t))


@corpus("conv2d_in_div")
def _(g, s):
    n, hw = s(128, 2), s(256, 40)
    g.doc = "Conv2d(3->16, k=3) -> InstanceNorm (affine) -> /2"
    x = g.input("x", [n, 3, hw, hw])
    y = conv(g, "y", x, 16, 3)
    h = instance_norm(g, "n", y)
    g.ret(g.op("o", "div", h, 2.0))


@corpus("conv2d_bn_silu_avgpool")
def _(g, s):
    n, hw = s(128, 2), s(128, 16)
    g.doc = "Conv2d(32->64, k=3, pad=1, no bias) -> BatchNorm -> SiLU -> AvgPool2d(2)"
    x = g.input("x", [n, 32, hw, hw])
    y = conv(g, "y", x, 64, 3, padding=1, bias=False)
    h = batch_norm(g, "n", y)
    a = g.op("a", "silu", h)
    g.ret(g.op("o", "avg_pool", a, kernel_size=2))


@corpus("conv2d_s2_hsig_sum_hw")
def _(g, s):
    n, hw = s(128, 2), s(255, 41)
    g.doc = "Conv2d(3->32, k=5, stride=2, pad=2) on odd 255x255 -> HardSigmoid -> sum over H, W"
    x = g.input("x", [n, 3, hw, hw])
    y = conv(g, "y", x, 32, 5, stride=2, padding=2)
    a = g.op("a", "hardsigmoid", y)
    g.ret(g.op("o", "sum", a, dims=[2, 3]))


@corpus("conv2d_grouped_dil_ln_relu")
def _(g, s):
    n, hw = s(128, 2), s(64, 18)
    g.doc = ("Conv2d(64->64, k=3, pad=2, dilation=2, groups=8) -> LayerNorm over W -> ReLU")
    x = g.input("x", [n, 64, hw, hw])
    y = conv(g, "y", x, 64, 3, padding=2, dilation=2, groups=8)
    h = layer_norm(g, "n", y, 1)
    g.ret(g.op("o", "relu", h))


@corpus("conv2d_softmax_c_maxpool")
def _(g, s):
    n, hw = s(128, 2), s(255, 45)
    g.doc = ("Conv2d(3->32, k=3, pad=1) on odd 255x255 -> softmax over channels -> "
             "MaxPool2d(3, stride 2, pad 1)")
    x = g.input("x", [n, 3, hw, hw])
    y = conv(g, "y", x, 32, 3, padding=1)
    p = g.op("p", "softmax", y, dim=1)
    g.ret(g.op("o", "max_pool", p, kernel_size=3, stride=2, padding=1))


@corpus("conv2d_c3_relu_maxpool_sigmoid")
def _(g, s):
    n, hw = s(128, 2), s(256, 34)
    g.doc = "Conv2d(3->32, k=3, pad=1) -> ReLU -> MaxPool2d(2) -> sigmoid"
    x = g.input("x", [n, 3, hw, hw])
    y = conv(g, "y", x, 32, 3, padding=1)
    r = g.op("r", "relu", y)
    p = g.op("p", "max_pool", r, kernel_size=2)
    g.ret(g.op("o", "sigmoid", p))


@corpus("conv2d_c3_logsoftmax_c_avgpool")
def _(g, s):
    n, hw = s(128, 2), s(192, 22)
    g.doc = "Conv2d(3->16, k=3, pad=1) -> log_softmax over channels -> AvgPool2d(2) -> mul 0.5"
    x = g.input("x", [n, 3, hw, hw])
    y = conv(g, "y", x, 16, 3, padding=1)
    p = g.op("p", "log_softmax", y, dim=1)
    a = g.op("a", "avg_pool", p, kernel_size=2)
    g.ret(g.op("o", "mul", a, 0.5))


@corpus("conv2d_maxpool_mean_c")
def _(g, s):
    n, hw = s(128, 2), s(128, 32)
    g.doc = "Conv2d(16->32, k=3, pad=1) -> MaxPool2d(2) -> mean over channels"
    x = g.input("x", [n, 16, hw, hw])
    y = conv(g, "y", x, 32, 3, padding=1)
    p = g.op("p", "max_pool", y, kernel_size=2)
    g.ret(g.op("o", "mean", p, dims=[1]))


@corpus("conv2d_s2_in_lrelu_max_hw")
def _(g, s):
    n, hw = s(128, 2), s(128, 30)
    g.doc = ("Conv2d(32->64, k=4, stride=2, pad=1, no bias) -> InstanceNorm (no affine) -> "
             "LeakyReLU(0.2) -> max over H, W")
    x = g.input("x", [n, 32, hw, hw])
    y = conv(g, "y", x, 64, 4, stride=2, padding=1, bias=False)
    h = instance_norm(g, "n", y, affine=False)
    a = g.op("a", "leaky_relu", h, negative_slope=0.2)
    g.ret(g.op("o", "max", a, dims=[2, 3]))


@corpus("conv2d_rect_maxpool_ceil_gn")
def _(g, s):
    n, h, w = s(128, 2), s(96, 18), s(160, 30)
    g.doc = ("Conv2d(16->32, k=(3,5), stride=(1,2), pad=(1,2)) on 96x160 -> "
             "MaxPool2d(3, stride 2, ceil_mode) -> GroupNorm(8) -> ReLU")
    x = g.input("x", [n, 16, h, w])
    y = conv(g, "y", x, 32, [3, 5], stride=[1, 2], padding=[1, 2])
    p = g.op("p", "max_pool", y, kernel_size=3, stride=2, ceil_mode=True)
    h = group_norm(g, "n", p, 8)
    g.ret(g.op("o", "relu", h))


# ---- conv 3-D


@corpus("conv3d_gn_minimum_clamp_dropout")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 8), s(32, 12)
    g.doc = ("Conv3d(3->16, k=3) -> GroupNorm(8) -> minimum(., 0.5) -> clamp(-0.5, 1) -> "
             "Dropout(0.2) (identity)")
    x = g.input("x", [n, 3, d, hw, hw])
    y = conv(g, "y", x, 16, 3)
    h = group_norm(g, "n", y, 8)
    m = g.op("m", "minimum", h, 0.5)
    c = g.op("c", "clamp", m, min=-0.5, max=1.0)
    g.ret(g.op("o", "dropout", c, p=0.2))


@corpus("conv3d_softmax_maxpool_maxpool")
def _(g, s):
    n, d, hw = s(128, 2), s(32, 10), s(64, 14)
    g.doc = "Conv3d(3->16, k=3) -> softmax over channels -> MaxPool3d(2) -> MaxPool3d(2)"
    x = g.input("x", [n, 3, d, hw, hw])
    y = conv(g, "y", x, 16, 3)
    p = g.op("p", "softmax", y, dim=1)
    m1 = g.op("m1", "max_pool", p, kernel_size=2)
    g.ret(g.op("o", "max_pool", m1, kernel_size=2))


@corpus("conv3d_in_relu_mean")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 6), s(32, 10)
    g.doc = "Conv3d(16->32, k=3, pad=1) -> InstanceNorm (affine) -> ReLU -> mean over D, H, W"
    x = g.input("x", [n, 16, d, hw, hw])
    y = conv(g, "y", x, 32, 3, padding=1)
    h = instance_norm(g, "n", y)
    r = g.op("r", "relu", h)
    g.ret(g.op("o", "mean", r, dims=[2, 3, 4]))


@corpus("conv3d_s2_ln_hswish")
def _(g, s):
    n, d, hw = s(128, 2), s(32, 8), s(64, 16)
    g.doc = "Conv3d(8->32, k=3, stride=2, pad=1) -> LayerNorm over W -> HardSwish"
    x = g.input("x", [n, 8, d, hw, hw])
    y = conv(g, "y", x, 32, 3, stride=2, padding=1)
    h = layer_norm(g, "n", y, 1)
    g.ret(g.op("o", "hardswish", h))


@corpus("conv3d_mul_in_clamp_mul_max")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 8), s(32, 12)
    g.doc = ("Conv3d(3->16, k=3) -> * m1[16,1,1,1] -> InstanceNorm (no affine) -> "
             "clamp(-1, 1) -> * m2[16,1,1,1] -> max over channels")
    x = g.input("x", [n, 3, d, hw, hw])
    y = conv(g, "y", x, 16, 3)
    m1 = g.param("m1", [16, 1, 1, 1], 0.5, 1.5)
    a = g.op("a", "mul", y, m1)
    h = instance_norm(g, "n", a, affine=False)
    c = g.op("c", "clamp", h, min=-1.0, max=1.0)
    m2 = g.param("m2", [16, 1, 1, 1], 0.5, 1.5)
    mm = g.op("mm", "mul", c, m2)
    g.ret(g.op("o", "max", mm, dims=[1]))


@corpus("conv3d_div_maxpool_mean_bias_sum")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 10), s(32, 14)
    g.doc = ("Conv3d(8->16, k=3) -> /2 -> MaxPool3d(2) -> mean over D, H, W (keepdim) -> "
             "+ bias[16,1,1,1] -> sum over channels")
    x = g.input("x", [n, 8, d, hw, hw])
    y = conv(g, "y", x, 16, 3)
    dv = g.op("dv", "div", y, 2.0)
    p = g.op("p", "max_pool", dv, kernel_size=2)
    m = g.op("m", "mean", p, dims=[2, 3, 4], keepdim=True)
    bias = g.param("bias", [16, 1, 1, 1], -0.5, 0.5)
    a = g.op("a", "add", m, bias)
    g.ret(g.op("o", "sum", a, dims=[1]))


@corpus("conv3d_grouped_dil_lse_relu")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 8), s(32, 10)
    g.doc = ("Conv3d(32->64, k=3, pad=2, dilation=2, groups=4) -> logsumexp over channels "
             "(keepdim) -> ReLU")
    x = g.input("x", [n, 32, d, hw, hw])
    y = conv(g, "y", x, 64, 3, padding=2, dilation=2, groups=4)
    l = g.op("l", "logsumexp", y, dims=[1], keepdim=True)
    g.ret(g.op("o", "relu", l))


# ---- conv_transpose 1-D


@corpus("convt1d_s2_op_gn_tanh")
def _(g, s):
    n, l = s(128, 2), s(4095, 201)
    g.doc = ("ConvTranspose1d(64->32, k=4, stride=2, pad=1, output_padding=1) -> GroupNorm(16) -> "
             "tanh")
    x = g.input("x", [n, 64, l])
    y = conv_t(g, "y", x, 32, 4, stride=2, padding=1, output_padding=1)
    h = group_norm(g, "n", y, 16)
    g.ret(g.op("o", "tanh", h))


@corpus("convt1d_s2_g16_tanh")
def _(g, s):
    n, l = s(128, 2), s(2048, 101)
    g.doc = ("ConvTranspose1d(128->256, k=3, stride=2, pad=1, output_padding=1, groups=8) -> "
             "tanh")
    x = g.input("x", [n, 128, l])
    y = conv_t(g, "y", x, 256, 3, stride=2, padding=1, output_padding=1, groups=8)
    g.ret(g.op("o", "tanh", y))


@corpus("convt1d_dil_grouped_sum_c_sigmoid")
def _(g, s):
    n, l = s(128, 2), s(8192, 101)
    g.doc = ("ConvTranspose1d(128->64, k=3, pad=2, dilation=2, groups=2) -> sum over channels -> "
             "sigmoid")
    x = g.input("x", [n, 128, l])
    y = conv_t(g, "y", x, 64, 3, padding=2, dilation=2, groups=2)
    sm = g.op("sm", "sum", y, dims=[1])
    g.ret(g.op("o", "sigmoid", sm))


# ---- conv_transpose 2-D


@corpus("convt2d_bn_tanh_maxpool_gn")
def _(g, s):
    n, hw = s(128, 2), s(32, 8)
    g.doc = ("ConvTranspose2d(64->128, k=4, stride=2, pad=1) -> BatchNorm -> tanh -> "
             "MaxPool2d(2) -> GroupNorm(4)")
    x = g.input("x", [n, 64, hw, hw])
    y = conv_t(g, "y", x, 128, 4, stride=2, padding=1)
    h = batch_norm(g, "bn", y, prefix="bn_")
    t = g.op("t", "tanh", h)
    p = g.op("p", "max_pool", t, kernel_size=2)
    g.ret(group_norm(g, "o", p, 4, prefix="gn_"))


@corpus("convt2d_s2_g8_gn_relu")
def _(g, s):
    n, hw = s(128, 2), s(64, 10)
    g.doc = ("ConvTranspose2d(64->64, k=4, stride=2, pad=1, groups=8) -> GroupNorm(8) -> ReLU")
    x = g.input("x", [n, 64, hw, hw])
    y = conv_t(g, "y", x, 64, 4, stride=2, padding=1, groups=8)
    h = group_norm(g, "n", y, 8)
    g.ret(g.op("o", "relu", h))


@corpus("convt2d_s2_ln_gelu")
def _(g, s):
    n, hw = s(128, 2), s(64, 12)
    g.doc = ("ConvTranspose2d(32->32, k=3, stride=2, pad=1, output_padding=1) -> "
             "LayerNorm over W -> GELU")
    x = g.input("x", [n, 32, hw, hw])
    y = conv_t(g, "y", x, 32, 3, stride=2, padding=1, output_padding=1)
    h = layer_norm(g, "n", y, 1)
    g.ret(g.op("o", "gelu", h))


@corpus("convt2d_softmax_c_scale")
def _(g, s):
    n, hw = s(128, 2), s(128, 20)
    g.doc = "ConvTranspose2d(16->32, k=3) -> softmax over channels -> *2"
    x = g.input("x", [n, 16, hw, hw])
    y = conv_t(g, "y", x, 32, 3)
    p = g.op("p", "softmax", y, dim=1)
    g.ret(g.op("o", "mul", p, 2.0))


@corpus("convt2d_mish_add_hardtanh_scale")
def _(g, s):
    n, hw = s(128, 2), s(32, 10)
    g.doc = ("ConvTranspose2d(32->64, k=3, stride=2, pad=1, output_padding=1) -> Mish -> +0.5 -> "
             "Hardtanh(-1, 1) -> *2")
    x = g.input("x", [n, 32, hw, hw])
    y = conv_t(g, "y", x, 64, 3, stride=2, padding=1, output_padding=1)
    m = g.op("m", "mish", y)
    a = g.op("a", "add", m, 0.5)
    h = g.op("h", "hardtanh", a, min_val=-1.0, max_val=1.0)
    g.ret(g.op("o", "mul", h, 2.0))


@corpus("convt2d_maxpool_hardtanh_mean_tanh")
def _(g, s):
    n, hw = s(128, 2), s(64, 10)
    g.doc = ("ConvTranspose2d(32->64, k=4, stride=2, pad=1) -> MaxPool2d(2) -> "
             "Hardtanh(-1, 1) -> mean over H, W (keepdim) -> tanh")
    x = g.input("x", [n, 32, hw, hw])
    y = conv_t(g, "y", x, 64, 4, stride=2, padding=1)
    p = g.op("p", "max_pool", y, kernel_size=2)
    h = g.op("h", "hardtanh", p)
    m = g.op("m", "mean", h, dims=[2, 3], keepdim=True)
    g.ret(g.op("o", "tanh", m))


@corpus("convt2d_grouped_dil_in_relu")
def _(g, s):
    n, hw = s(128, 2), s(63, 15)
    g.doc = ("ConvTranspose2d(64->64, k=3, dilation=2, groups=4) on odd 63x63 -> "
             "InstanceNorm (affine) -> ReLU")
    x = g.input("x", [n, 64, hw, hw])
    y = conv_t(g, "y", x, 64, 3, dilation=2, groups=4)
    h = instance_norm(g, "n", y)
    g.ret(g.op("o", "relu", h))


@corpus("convt2d_grouped_in_tanh_large")
def _(g, s):
    # 400 tiles of 8 x 32 per (sample, conv group) of 320x320 outputs: the norm is finished in
    # conv_mma's kernel.
    n, hw = s(32, 2), s(318, 10)
    g.doc = "ConvTranspose2d(16->16, k=3, groups=2) on 318x318 -> InstanceNorm (affine) -> Tanh"
    x = g.input("x", [n, 16, hw, hw])
    y = conv_t(g, "y", x, 16, 3, groups=2)
    h = instance_norm(g, "n", y)
    g.ret(g.op("o", "tanh", h))


# ---- conv_transpose 3-D


@corpus("convt3d_wide_bn_silu")
def _(g, s):
    n, c, d = s(16, 2), s(64, 32), s(24, 2)
    g.doc = "ConvTranspose3d(64->96, k=3) -> BatchNorm -> SiLU"
    x = g.input("x", [n, c, d, d, d])
    y = conv_t(g, "y", x, 96, 3)
    h = batch_norm(g, "n", y)
    g.ret(g.op("o", "silu", h))


@corpus("convt3d_s2_ln_gelu_scale")
def _(g, s):
    n, d = s(64, 2), s(16, 4)
    g.doc = ("ConvTranspose3d(32->64, k=4, stride=2, pad=1) -> LayerNorm over W -> GELU -> "
             "*0.5")
    x = g.input("x", [n, 32, d, d, d])
    y = conv_t(g, "y", x, 64, 4, stride=2, padding=1)
    h = layer_norm(g, "n", y, 1)
    ge = g.op("ge", "gelu", h)
    g.ret(g.op("o", "mul", ge, 0.5))


@corpus("convt3d_bn_avgpool_avgpool")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 6), s(32, 10)
    g.doc = ("ConvTranspose3d(3->16, k=3, stride=2, pad=1) -> BatchNorm -> "
             "AvgPool3d(2, ceil_mode) on odd sizes -> AvgPool3d(2)")
    x = g.input("x", [n, 3, d, hw, hw])
    y = conv_t(g, "y", x, 16, 3, stride=2, padding=1)
    h = batch_norm(g, "n", y)
    p = g.op("p", "avg_pool", h, kernel_size=2, ceil_mode=True)
    g.ret(g.op("o", "avg_pool", p, kernel_size=2))


@corpus("convt2d_c3_s2_maxpool_tanh")
def _(g, s):
    n, hw = s(128, 2), s(96, 15)
    g.doc = ("ConvTranspose2d(3->16, k=4, stride=2, pad=1) -> MaxPool2d(2) -> tanh "
             "(the patches start at output phase 1)")
    x = g.input("x", [n, 3, hw, hw])
    y = conv_t(g, "y", x, 16, 4, stride=2, padding=1)
    p = g.op("p", "max_pool", y, kernel_size=2)
    g.ret(g.op("o", "tanh", p))


@corpus("conv3d_g2_bn_avgpool_ceil_relu")
def _(g, s):
    n, d, hw = s(64, 2), s(17, 5), s(63, 11)
    g.doc = ("Conv3d(4->16, k=3, pad=1, groups=2) on odd sizes -> BatchNorm -> "
             "AvgPool3d(2, ceil_mode) -> ReLU")
    x = g.input("x", [n, 4, d, hw, hw])
    y = conv(g, "y", x, 16, 3, padding=1, groups=2)
    h = batch_norm(g, "n", y)
    p = g.op("p", "avg_pool", h, kernel_size=2, ceil_mode=True)
    g.ret(g.op("o", "relu", p))


@corpus("convt3d_softmax_sigmoid")
def _(g, s):
    n, d = s(64, 2), s(16, 5)
    g.doc = ("ConvTranspose3d(16->32, k=3, stride=2, pad=1, output_padding=1) -> "
             "softmax over channels -> sigmoid")
    x = g.input("x", [n, 16, d, d, d])
    y = conv_t(g, "y", x, 32, 3, stride=2, padding=1, output_padding=1)
    p = g.op("p", "softmax", y, dim=1)
    g.ret(g.op("o", "sigmoid", p))


@corpus("convt3d_add_ln2_avgpool_gelu")
def _(g, s):
    n, d, hw = s(64, 2), s(8, 4), s(16, 6)
    g.doc = ("ConvTranspose3d(32->32, k=3, stride=2, pad=1, output_padding=1) -> +1 -> "
             "LayerNorm over H, W -> AvgPool3d(2) -> GELU")
    x = g.input("x", [n, 32, d, hw, hw])
    y = conv_t(g, "y", x, 32, 3, stride=2, padding=1, output_padding=1)
    a = g.op("a", "add", y, 1.0)
    h = layer_norm(g, "n", a, 2)
    p = g.op("p", "avg_pool", h, kernel_size=2)
    g.ret(g.op("o", "gelu", p))


@corpus("convt3d_maxpool_maxpool_sum_c")
def _(g, s):
    n, d, hw = s(64, 2), s(16, 6), s(32, 9)
    g.doc = ("ConvTranspose3d(16->32, k=3, stride=2, pad=1) -> MaxPool3d(2) -> MaxPool3d(3) -> "
             "sum over channels (keepdim)")
    x = g.input("x", [n, 16, d, hw, hw])
    y = conv_t(g, "y", x, 32, 3, stride=2, padding=1)
    p1 = g.op("p1", "max_pool", y, kernel_size=2)
    p2 = g.op("p2", "max_pool", p1, kernel_size=3)
    g.ret(g.op("o", "sum", p2, dims=[1], keepdim=True))


@corpus("convt3d_lse_hswish_sub_clamp")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 6), s(32, 10)
    g.doc = ("ConvTranspose3d(16->16, k=3, pad=1) -> logsumexp over channels (keepdim) -> "
             "HardSwish -> -0.5 -> clamp(min=-1)")
    x = g.input("x", [n, 16, d, hw, hw])
    y = conv_t(g, "y", x, 16, 3, padding=1)
    l = g.op("l", "logsumexp", y, dims=[1], keepdim=True)
    h = g.op("h", "hardswish", l)
    sb = g.op("sb", "sub", h, 0.5)
    g.ret(g.op("o", "clamp", sb, min=-1.0))


@corpus("conv2d_lse_c_relu")
def _(g, s):
    n, hw = s(64, 2), s(128, 20)
    g.doc = "Conv2d(32->64, k=3, pad=1) -> logsumexp over channels (keepdim) -> ReLU"
    x = g.input("x", [n, 32, hw, hw])
    y = conv(g, "y", x, 64, 3, padding=1)
    l = g.op("l", "logsumexp", y, dims=[1], keepdim=True)
    g.ret(g.op("o", "relu", l))


@corpus("conv3d_mean_c_tanh")
def _(g, s):
    n, d, hw = s(16, 2), s(16, 5), s(64, 9)
    g.doc = "Conv3d(16->32, k=3, pad=1) -> mean over channels -> tanh"
    x = g.input("x", [n, 16, d, hw, hw])
    y = conv(g, "y", x, 32, 3, padding=1)
    m = g.op("m", "mean", y, dims=[1])
    g.ret(g.op("o", "tanh", m))


@corpus("convt2d_sum_c_gelu")
def _(g, s):
    n, hw = s(64, 2), s(128, 17)
    g.doc = "ConvTranspose2d(32->48, k=3, pad=1) -> sum over channels (keepdim) -> GELU -> +0.1"
    x = g.input("x", [n, 32, hw, hw])
    y = conv_t(g, "y", x, 48, 3, padding=1)
    m = g.op("m", "sum", y, dims=[1], keepdim=True)
    ge = g.op("ge", "gelu", m)
    g.ret(g.op("o", "add", ge, 0.1))


@corpus("conv1d_max_c_sigmoid")
def _(g, s):
    n, length = s(64, 2), s(4096, 75)
    g.doc = "Conv1d(32->128, k=5, pad=2) -> max over channels -> sigmoid"
    x = g.input("x", [n, 32, length])
    y = conv(g, "y", x, 128, 5, padding=2)
    m = g.op("m", "max", y, dims=[1])
    g.ret(g.op("o", "sigmoid", m))


@corpus("conv3d_c3_lse_c_relu")
def _(g, s):
    n, d, hw = s(64, 2), s(16, 5), s(64, 11)
    g.doc = "Conv3d(3->16, k=3, pad=1) -> logsumexp over channels (keepdim) -> ReLU"
    x = g.input("x", [n, 3, d, hw, hw])
    y = conv(g, "y", x, 16, 3, padding=1)
    l = g.op("l", "logsumexp", y, dims=[1], keepdim=True)
    g.ret(g.op("o", "relu", l))


@corpus("convt2d_gn_gelu_res_max_c")
def _(g, s):
    n, hw = s(64, 2), s(128, 13)
    g.doc = ("y = ConvTranspose2d(32->32, k=3, pad=1); max over channels of GELU(GroupNorm(8)(y)) "
             "+ y")
    x = g.input("x", [n, 32, hw, hw])
    y = conv_t(g, "y", x, 32, 3, padding=1)
    h = group_norm(g, "n", y, 8)
    ge = g.op("ge", "gelu", h)
    r = g.op("r", "add", ge, y)
    g.ret(g.op("o", "max", r, dims=[1]))


@corpus("conv2d_res_relu")
def _(g, s):
    n, hw = s(32, 2), s(128, 10)
    g.doc = "ReLU(Conv2d(64->64, k=3, pad=1)(x) + x) (a residual block's tail: the input read again)"
    x = g.input("x", [n, 64, hw, hw])
    y = conv(g, "y", x, 64, 3, padding=1)
    a = g.op("a", "add", y, x)
    g.ret(g.op("o", "relu", a))


@corpus("convt2d_s2_skip_add_relu")
def _(g, s):
    n, hw = s(16, 2), s(64, 6)
    g.doc = ("ReLU(ConvTranspose2d(128->64, k=3, stride=2, pad=1, output_padding=1)(x) + skip) "
             "(a U-Net decoder step: the skip connection is a second input)")
    x = g.input("x", [n, 128, hw, hw])
    skip = g.input("skip", [n, 64, 2 * hw, 2 * hw])
    y = conv_t(g, "y", x, 64, 3, stride=2, padding=1, output_padding=1)
    a = g.op("a", "add", y, skip)
    g.ret(g.op("o", "relu", a))


@corpus("convt3d_s2_skip_mul_tanh")
def _(g, s):
    n, d = s(16, 1), s(16, 5)
    g.doc = ("tanh(ConvTranspose3d(64->32, k=3, stride=2, pad=1, output_padding=1)(x) * gate) "
             "(a gate of the output's full shape)")
    x = g.input("x", [n, 64, d, d, d])
    gate = g.input("gate", [n, 32, 2 * d, 2 * d, 2 * d])
    y = conv_t(g, "y", x, 32, 3, stride=2, padding=1, output_padding=1)
    a = g.op("a", "mul", y, gate)
    g.ret(g.op("o", "tanh", a))


@corpus("convt2d_s1_258px_relu_bias")
def _(g, s):
    n, hw = s(16, 1), s(256, 9)
    g.doc = ("ReLU(ConvTranspose2d(64->128, k=3)(x)) + bias[128,1,1] (258-wide output rows: a "
             "128-position tile spans two rows)")
    x = g.input("x", [n, 64, hw, hw])
    y = conv_t(g, "y", x, 128, 3)
    r = g.op("r", "relu", y)
    bias = g.param("bias", [128, 1, 1], -0.5, 0.5)
    g.ret(g.op("o", "add", r, bias))


@corpus("convt2d_s1_130px_gelu")
def _(g, s):
    n, hw = s(64, 1), s(128, 9)
    g.doc = "GELU(ConvTranspose2d(64->64, k=3)(x)) (130-wide output rows)"
    x = g.input("x", [n, 64, hw, hw])
    y = conv_t(g, "y", x, 64, 3)
    g.ret(g.op("o", "gelu", y))


@corpus("conv3d_c64_pad_gelu_bn")
def _(g, s):
    n, d, hw = s(8, 1), s(32, 4), s(64, 6)
    g.doc = "BatchNorm3d(GELU(Conv3d(64->64, k=3, pad=1)(x))) (a deep, 64-channel 3-D convolution)"
    x = g.input("x", [n, 64, d, hw, hw])
    y = conv(g, "y", x, 64, 3, padding=1)
    ge = g.op("ge", "gelu", y)
    g.ret(batch_norm(g, "bn", ge))


@corpus("conv2d_gelu_flatten_mean")
def _(g, s):
    n, hw = s(64, 2), s(128, 10)
    g.doc = ("GELU(Conv2d(16->64, k=3, pad=1)(x)).flatten(2).mean(2) (a global average pool "
             "written through a view, as PyTorch code often does)")
    x = g.input("x", [n, 16, hw, hw])
    y = conv(g, "y", x, 64, 3, padding=1)
    a = g.op("a", "gelu", y)
    f = g.op("f", "flatten", a, start_dim=2)
    g.ret(g.op("o", "mean", f, dims=[2]))


@corpus("conv2d_spatial_softmax_res")
def _(g, s):
    n, hw = s(64, 2), s(64, 8)
    g.doc = ("y = Conv2d(64->128, k=3, pad=1)(x); softmax of y viewed as [N, 128, H*W] over the "
             "positions, viewed back, * scale[1,128,1,1] + y (spatial attention through views)")
    x = g.input("x", [n, 64, hw, hw])
    y = conv(g, "y", x, 128, 3, padding=1)
    f = g.op("f", "flatten", y, start_dim=2)
    p = g.op("p", "softmax", f, dim=2)
    v = g.op("v", "reshape", p, shape=[n, 128, hw, hw])
    scale = g.param("scale", [1, 128, 1, 1], 0.5, 1.5)
    m = g.op("m", "mul", v, scale)
    g.ret(g.op("o", "add", m, y))


@corpus("conv2d_view_softmax_c_mul")
def _(g, s):
    n, hw = s(64, 2), s(64, 8)
    g.doc = ("Conv2d(32->64, k=3, pad=1)(x) viewed as [N, 64, H*W], softmax over the channels, "
             "viewed back, * gate (a second input of the output's shape)")
    x = g.input("x", [n, 32, hw, hw])
    gate = g.input("gate", [n, 64, hw, hw])
    y = conv(g, "y", x, 64, 3, padding=1)
    f = g.op("f", "flatten", y, start_dim=2)
    p = g.op("p", "softmax", f, dim=1)
    v = g.op("v", "reshape", p, shape=[n, 64, hw, hw])
    g.ret(g.op("o", "mul", v, gate))


@corpus("gemm_res_gelu")
def _(g, s):
    m, k = s(8192, 8), s(2048, 64)
    g.doc = f"GELU(Linear({k}->{k})(x) + r) (a residual stream r of the output's shape)"
    x = g.input("x", [m, k])
    r = g.input("r", [m, k])
    y = linear(g, "y", x, k)
    a = g.op("a", "add", y, r)
    g.ret(g.op("o", "gelu", a))


@corpus("matmul_3d_weight_bias_gelu")
def _(g, s):
    b, l, k, n = s(32, 2), s(512, 9), s(1024, 64), s(4096, 96)
    g.doc = (f"x[{b},{l},{k}] @ W[{k},{n}] + bias -> GELU (a linear layer as an ONNX export "
             f"writes it: MatMul on the transposed weight, then Add)")
    x = g.input("x", [b, l, k])
    w = g.weight("w", [k, n], k)
    bias = g.weight("bias", [n], k)
    y = g.op("y", "matmul", x, w)
    a = g.op("a", "add", y, bias)
    g.ret(g.op("o", "gelu", a))


@corpus("convt2d_gap_bias_lse_sum_mul")
def _(g, s):
    n, hw = s(128, 2), s(64, 11)
    g.doc = ("ConvTranspose2d(64->128, k=3) -> global average pool (mean over H, W, keepdim) -> "
             "+ bias[128,1,1] -> logsumexp over channels (keepdim) -> sum over H, W -> * 10")
    x = g.input("x", [n, 64, hw, hw])
    y = conv_t(g, "y", x, 128, 3)
    m = g.op("m", "mean", y, dims=[2, 3], keepdim=True)
    bias = g.param("bias", [128, 1, 1], -0.5, 0.5)
    a = g.op("a", "add", m, bias)
    l = g.op("l", "logsumexp", a, dims=[1], keepdim=True)
    t = g.op("t", "sum", l, dims=[2, 3])
    g.ret(g.op("o", "mul", t, 10.0))


@corpus("conv3d_gelu_gap")
def _(g, s):
    n, d, hw = s(64, 2), s(16, 5), s(48, 10)
    g.doc = "Conv3d(24->64, k=3) -> GELU -> mean over D, H, W"
    x = g.input("x", [n, 24, d, hw, hw])
    y = conv(g, "y", x, 64, 3)
    a = g.op("a", "gelu", y)
    g.ret(g.op("o", "mean", a, dims=[2, 3, 4]))


@corpus("gemm_div_sum_scale")
def _(g, s):
    m, k, n = s(16384, 64), s(4096, 96), s(4096, 80)
    g.doc = (f"x @ W.T for W[{n},{k}] (no bias) -> / 2 -> sum over features (keepdim) -> * 1.5")
    x = g.input("x", [m, k])
    w = g.weight("w", [n, k], k)
    y = g.op("y", "linear", x, w)
    d = g.op("d", "div", y, 2.0)
    t = g.op("t", "sum", d, dims=[1], keepdim=True)
    g.ret(g.op("o", "mul", t, 1.5))


@corpus("gemm_sigmoid_sum_lse")
def _(g, s):
    m, k, n = s(16384, 64), s(2048, 96), s(4096, 80)
    g.doc = (f"Linear({k}->{n}) -> sigmoid -> sum over the features -> logsumexp over the batch")
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    a = g.op("a", "sigmoid", y)
    t = g.op("t", "sum", a, dims=[1])
    g.ret(g.op("o", "logsumexp", t, dims=[0]))


@corpus("gemm_gelu_max_tanh")
def _(g, s):
    m, k, n = s(8192, 48), s(4096, 64), s(4096, 72)
    g.doc = f"Linear({k}->{n}) -> GELU -> max over the features (keepdim) -> tanh"
    x = g.input("x", [m, k])
    y = linear(g, "y", x, n)
    a = g.op("a", "gelu", y)
    t = g.op("t", "max", a, dims=[1], keepdim=True)
    g.ret(g.op("o", "tanh", t))


# ---- KernelBench level 2 at the problems' own sizes: kernelbench_*.py, in name order

for _path in sorted(glob.glob(os.path.join(HERE, "kernelbench_*.py"))):
    importlib.import_module(os.path.basename(_path)[:-3])


# ----------------------------------------------------------------------------------------
# Torch side (imported lazily: only the GPU benchmark needs it)


def seed_of(name):
    """Per-graph seed, so that any subset of the corpus draws the same data."""
    return zlib.crc32(name.encode()) & 0x7FFFFFFF


def make_tensors(g, gen, device="cuda", dtype=None):
    """The graph's arguments, drawn in order from `gen`: inputs N(0, 1); weights and biases
    U(+-1/sqrt(fan_in)); norm gamma U(0.5, 1.5), beta U(-0.5, 0.5); running mean
    U(-0.5, 0.5), running var U(0.5, 1.5)."""
    import torch
    t = {}
    for name, shape, _, init in g.args:
        if init[0] == "randn":
            t[name] = torch.randn(shape, generator=gen, device=device)
        else:
            lo, hi = init[1], init[2]
            t[name] = torch.rand(shape, generator=gen, device=device) * (hi - lo) + lo
        if dtype is not None:
            t[name] = t[name].to(dtype)
    return t


def twin(g):
    """The PyTorch function of the graph: twin(tensors dict) -> output tensor."""
    import linecache
    import torch
    import torch.nn.functional as F
    src = g.twin_source()
    filename = f"<corpus twin {g.name} {g.scale}>"
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    ns = {"torch": torch, "F": F}
    exec(compile(src, filename, "exec"), ns)
    return ns["twin"]


# ----------------------------------------------------------------------------------------
# Command line


def check_limits(g):
    """Problems with a graph's size for its scale (empty when it fits)."""
    bad = []
    if g.scale == "full":
        kb = is_kb(g.name)
        max_bytes, (lo, hi) = (KB_MAX_BYTES, KB_EAGER_MS) if kb else (FULL_MAX_BYTES, (0.1, 25))
        mem = 4 * g.elements()
        if mem > max_bytes:
            bad.append(f"{mem / 1e9:.2f} GB of fp32 tensors > {max_bytes / 1e9:.0f} GB")
        est = g.est_eager_ms()
        if not lo <= est <= hi:
            bad.append(f"estimated eager time {est:.2f} ms out of range")
    else:
        if g.macs > SMALL_MAX_MACS:
            bad.append(f"{g.macs:.3g} multiply-adds > {SMALL_MAX_MACS:.0e}")
        if g.elements() > SMALL_MAX_ELEMENTS:
            bad.append(f"{g.elements():.3g} elements > {SMALL_MAX_ELEMENTS:.0e}")
    return bad


def path_of(name, scale):
    return os.path.join(HERE, scale, name + ".sir")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    act = p.add_mutually_exclusive_group(required=True)
    act.add_argument("--write", action="store_true", help="write full/ and small/ .sir files")
    act.add_argument("--check", action="store_true",
                     help="exit 1 when the committed .sir files differ from the generator")
    act.add_argument("--list", action="store_true", help="print the graph names")
    act.add_argument("--twin", metavar="NAME", help="print a graph's PyTorch twin")
    p.add_argument("-v", "--verbose", action="store_true", help="--list: sizes and FLOPs too")
    p.add_argument("--scale", choices=SCALES, default="full", help="--list / --twin scale")
    args = p.parse_args(argv)

    if args.twin:
        if args.twin not in ENTRIES:
            p.error(f"no graph named {args.twin}")
        print(build(args.twin, args.scale).twin_source(), end="")
        return 0
    if args.list:
        for name in ENTRIES:
            if not args.verbose:
                print(name)
                continue
            g = build(name, args.scale)
            print(f"{name:40s} {g.math:4s} {g.flops / 1e9:8.2f} GFLOP "
                  f"{4 * g.elements() / 1e6:9.1f} MB  est eager {g.est_eager_ms():7.3f} ms  "
                  f"macs {g.macs:.2e}  out {g.out_shape}")
        return 0

    problems, stale = [], []
    for scale in SCALES:
        want = {}
        for name in ENTRIES:
            g = build(name, scale)
            problems += [f"{name} ({scale}): {b}" for b in check_limits(g)]
            want[path_of(name, scale)] = g.sir()
        folder = os.path.join(HERE, scale)
        have = {os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".sir")} \
            if os.path.isdir(folder) else set()
        for path in sorted(have - set(want)):
            if args.write:
                os.remove(path)
            else:
                stale.append(f"{path}: not in the corpus")
        for path, text in want.items():
            old = open(path).read() if os.path.exists(path) else None
            if old == text:
                continue
            if args.write:
                os.makedirs(folder, exist_ok=True)
                with open(path, "w") as fh:
                    fh.write(text)
            else:
                stale.append(f"{path}: " + ("missing" if old is None else "differs"))
    for msg in problems:
        print(f"corpus: {msg}", file=sys.stderr)
    for msg in stale:
        print(f"corpus: {msg} (run corpus.py --write)", file=sys.stderr)
    if args.write:
        print(f"wrote {len(ENTRIES)} graphs x {len(SCALES)} scales under {HERE}")
    return 1 if problems or stale else 0


if __name__ == "__main__":
    sys.exit(main())
