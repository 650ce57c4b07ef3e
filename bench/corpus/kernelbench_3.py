"""KernelBench level 2, problems 51 to 75, as corpus graphs.

Each builder computes what the problem's Model computes, op for op, at the problem's own sizes
(full scale) and at a reduced size with the same ops and attributes (small scale). Python
constants of a Model become numbers in the ops; its nn.Parameter tensors become random params.
"""
from sirbuild import batch_norm, conv, conv_t, corpus, group_norm, linear


@corpus("gemm_kb51_sub_mean_lse_gelu_res")
def _(g, s):
    m, k, n = s(2048, 4), s(8192, 64), s(8192, 64)
    g.doc = (f"Linear({k}->{n}) -> - p[{n}] -> mean over features (keepdim) -> "
             f"logsumexp over dim 1 (keepdim) -> GELU -> + the input x")
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    p = g.param_randn("subtract", [n])
    d = g.op("d", "sub", y, p)
    mu = g.op("mu", "mean", d, dims=[1], keepdim=True)
    l = g.op("l", "logsumexp", mu, dims=[1], keepdim=True)
    a = g.op("a", "gelu", l)
    g.ret(g.op("o", "add", a, x))


@corpus("conv2d_kb52_softplus_tanh_mul_bn")
def _(g, s):
    n, hw = s(64, 2), s(128, 12)
    g.doc = "Conv2d(64->128, k=3) -> tanh(softplus(y)) * y -> BatchNorm2d (inference)"
    x = g.input("x", [n, 64, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 128, 3)
    sp = g.op("sp", "softplus", y)
    t = g.op("t", "tanh", sp)
    m = g.op("m", "mul", t, y)
    g.ret(batch_norm(g, "o", m))


@corpus("gemm_kb53_scale_hardtanh_gelu")
def _(g, s):
    m, k, n = s(2048, 4), s(8192, 64), s(8192, 64)
    g.doc = f"Linear({k}->{n}) -> *0.5 -> Hardtanh(-2, 2) -> GELU"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    sc = g.op("sc", "mul", y, 0.5)
    h = g.op("h", "hardtanh", sc, min_val=-2.0, max_val=2.0)
    g.ret(g.op("o", "gelu", h))


@corpus("conv2d_kb54_mul_lrelu_gelu")
def _(g, s):
    n, hw = s(64, 2), s(256, 16)
    g.doc = "Conv2d(64->64, k=3) -> * multiplier[64,1,1] -> LeakyReLU(0.01) -> GELU"
    x = g.input("x", [n, 64, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 64, 3)
    mul = g.param_randn("multiplier", [64, 1, 1])
    m = g.op("m", "mul", y, mul)
    a = g.op("a", "leaky_relu", m, negative_slope=0.01)
    g.ret(g.op("o", "gelu", a))


@corpus("gemm_kb55_maxpool_sum_scale")
def _(g, s):
    m, k, n = s(128, 4), s(32768, 64), s(32768, 64)
    g.doc = (f"Linear({k}->{n}) -> MaxPool1d(2) over features (as [M,1,{n}]) -> "
             f"sum over features -> *0.5")
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    u = g.op("u", "reshape", y, shape=[m, 1, n])
    p = g.op("p", "max_pool", u, kernel_size=2)
    q = g.op("q", "reshape", p, shape=[m, n // 2])
    r = g.op("r", "sum", q, dims=[1])
    g.ret(g.op("o", "mul", r, 0.5))


@corpus("gemm_kb56_sigmoid_sum")
def _(g, s):
    m, k, n = s(128, 4), s(32768, 64), s(32768, 64)
    g.doc = f"Linear({k}->{n}) -> sigmoid -> sum over features (keepdim)"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    a = g.op("a", "sigmoid", y)
    g.ret(g.op("o", "sum", a, dims=[1], keepdim=True))


@corpus("conv2d_kb57_relu_hswish")
def _(g, s):
    n, hw = s(128, 2), s(128, 24)
    g.doc = "Conv2d(8->64, k=3) -> ReLU -> r * clamp((r + 3) / 6, 0, 1)"
    x = g.input("x", [n, 8, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 64, 3)
    r = g.op("r", "relu", y)
    a3 = g.op("a3", "add", r, 3.0)
    d6 = g.op("d6", "div", a3, 6.0)
    c = g.op("c", "clamp", d6, min=0.0, max=1.0)
    g.ret(g.op("o", "mul", r, c))


@corpus("convt3d_kb58_lse_hswish_sub_clamp")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 4), s(32, 8)
    g.doc = ("ConvTranspose3d(3->16, k=3, stride=2, pad=1) -> logsumexp over channels "
             "(keepdim) -> l * sigmoid(l + 3) / 6 -> - bias[1,1,1,1] -> clamp(-1, 1)")
    x = g.input("x", [n, 3, d, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, 16, 3, stride=2, padding=1)
    l = g.op("l", "logsumexp", y, dims=[1], keepdim=True)
    a3 = g.op("a3", "add", l, 3.0)
    sg = g.op("sg", "sigmoid", a3)
    m = g.op("m", "mul", l, sg)
    d6 = g.op("d6", "div", m, 6.0)
    bias = g.param_randn("bias", [1, 1, 1, 1])
    sb = g.op("sb", "sub", d6, bias)
    g.ret(g.op("o", "clamp", sb, min=-1.0, max=1.0))


@corpus("gemm_kb59_swish_scale")
def _(g, s):
    m, k, n = s(128, 4), s(32768, 64), s(32768, 64)
    g.doc = f"Linear({k}->{n}) -> y * sigmoid(y) -> *2.0"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    sg = g.op("sg", "sigmoid", y)
    w = g.op("sw", "mul", y, sg)
    g.ret(g.op("o", "mul", w, 2.0))


@corpus("convt3d_kb60_swish_gn_hswish")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 4), s(32, 8)
    g.doc = ("ConvTranspose3d(3->16, k=3, stride=2, pad=1) -> sigmoid(y) * y -> "
             "GroupNorm(4) -> HardSwish")
    x = g.input("x", [n, 3, d, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, 16, 3, stride=2, padding=1)
    sg = g.op("sg", "sigmoid", y)
    w = g.op("sw", "mul", sg, y)
    h = group_norm(g, "n", w, 4, eps=1e-5)
    g.ret(g.op("o", "hardswish", h))


@corpus("convt3d_kb61_relu_gn")
def _(g, s):
    n, dhw = s(16, 1), s(32, 4)
    g.doc = "ConvTranspose3d(64->128, k=3, no bias) -> ReLU -> GroupNorm(8)"
    x = g.input("x", [n, 64, dhw, dhw, dhw], uniform=(0, 1))
    y = conv_t(g, "y", x, 128, 3, bias=False)
    r = g.op("r", "relu", y)
    g.ret(group_norm(g, "o", r, 8))


@corpus("gemm_kb62_gn_lrelu_add")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 32), 8192
    g.doc = (f"Linear({k}->{n}) -> GroupNorm(512, width {n // 512}) -> LeakyReLU(0.01) -> "
             f"a + a")
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    h = group_norm(g, "n", y, 512, eps=1e-5)
    a = g.op("a", "leaky_relu", h, negative_slope=0.01)
    g.ret(g.op("o", "add", a, a))


@corpus("gemm_kb63_relu_div")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 64)
    g.doc = f"Linear({k}->{n}) -> ReLU -> / 2.0"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    r = g.op("r", "relu", y)
    g.ret(g.op("o", "div", r, 2.0))


@corpus("gemm_kb64_lse_lrelu_lrelu_gelu_gelu")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 64)
    g.doc = (f"Linear({k}->{n}) -> logsumexp over features (keepdim) -> LeakyReLU(0.01) x2 "
             f"-> GELU x2")
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    l = g.op("l", "logsumexp", y, dims=[1], keepdim=True)
    a1 = g.op("a1", "leaky_relu", l, negative_slope=0.01)
    a2 = g.op("a2", "leaky_relu", a1, negative_slope=0.01)
    g1 = g.op("g1", "gelu", a2)
    g.ret(g.op("o", "gelu", g1))


@corpus("conv2d_kb65_avgpool_sigmoid_sum")
def _(g, s):
    n, hw = s(128, 2), s(384, 26)
    g.doc = "Conv2d(8->64, k=3) -> AvgPool2d(4) -> sigmoid -> sum over C, H, W"
    x = g.input("x", [n, 8, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 64, 3)
    p = g.op("p", "avg_pool", y, kernel_size=4)
    a = g.op("a", "sigmoid", p)
    g.ret(g.op("o", "sum", a, dims=[1, 2, 3]))


@corpus("gemm_kb66_dropout_softmax")
def _(g, s):
    m, k, n = s(128, 4), s(16384, 64), s(16384, 64)
    g.doc = f"Linear({k}->{n}) -> Dropout(0.2) (identity) -> softmax over features"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    dr = g.op("dr", "dropout", y, p=0.2)
    g.ret(g.op("o", "softmax", dr, dim=1))


@corpus("conv2d_kb67_gelu_gap")
def _(g, s):
    n, hw = s(128, 2), s(256, 24)
    g.doc = "Conv2d(8->64, k=3) -> GELU -> adaptive average pool to 1x1 -> [N, 64]"
    x = g.input("x", [n, 8, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 64, 3)
    a = g.op("a", "gelu", y)
    p = g.op("p", "mean", a, dims=[2, 3], keepdim=True)
    g.ret(g.op("o", "reshape", p, shape=[n, 64]))


@corpus("gemm_kb68_minimum_sub")
def _(g, s):
    m, k, n = s(128, 4), s(16384, 64), s(16384, 64)
    g.doc = f"Linear({k}->{n}) -> minimum(., 2.0) -> - 2.0"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    mn = g.op("mn", "minimum", y, 2.0)
    g.ret(g.op("o", "sub", mn, 2.0))


@corpus("conv2d_kb69_hswish_relu")
def _(g, s):
    n, hw = s(128, 2), s(128, 24)
    g.doc = "Conv2d(8->64, k=3) -> HardSwish -> ReLU"
    x = g.input("x", [n, 8, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 64, 3)
    h = g.op("h", "hardswish", y)
    g.ret(g.op("o", "relu", h))


@corpus("gemm_kb70_sigmoid_scale_res")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 64)
    g.doc = f"y = Linear({k}->{n}); sigmoid(y) * 2.0 + y"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    sg = g.op("sg", "sigmoid", y)
    sc = g.op("sc", "mul", sg, 2.0)
    g.ret(g.op("o", "add", sc, y))


@corpus("conv2d_kb71_div_lrelu")
def _(g, s):
    n, hw = s(128, 2), s(128, 24)
    g.doc = "Conv2d(8->64, k=3) -> / 2 -> LeakyReLU(0.01)"
    x = g.input("x", [n, 8, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 64, 3)
    dv = g.op("dv", "div", y, 2.0)
    g.ret(g.op("o", "leaky_relu", dv, negative_slope=0.01))


@corpus("convt3d_kb72_bn_avgpool_avgpool")
def _(g, s):
    n, dhw = s(64, 2), s(32, 8)
    g.doc = ("ConvTranspose3d(3->16, k=3, stride=2, pad=1) -> BatchNorm3d (inference) -> "
             "AvgPool3d(2) -> AvgPool3d(2)")
    x = g.input("x", [n, 3, dhw, dhw, dhw], uniform=(0, 1))
    y = conv_t(g, "y", x, 16, 3, stride=2, padding=1)
    b = batch_norm(g, "bn", y)
    p1 = g.op("p1", "avg_pool", b, kernel_size=2)
    g.ret(g.op("o", "avg_pool", p1, kernel_size=2))


@corpus("conv2d_kb73_bn_scale")
def _(g, s):
    n, hw = s(128, 2), s(128, 24)
    g.doc = "Conv2d(8->64, k=3) -> BatchNorm2d (inference) -> *2.0"
    x = g.input("x", [n, 8, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 64, 3)
    b = batch_norm(g, "bn", y)
    g.ret(g.op("o", "mul", b, 2.0))


@corpus("convt3d_kb74_lrelu_mul_lrelu_maxpool")
def _(g, s):
    n, d, hw = s(16, 1), s(16, 4), s(32, 6)
    g.doc = ("ConvTranspose3d(16->32, k=3, stride=2, pad=1, out_pad=1) -> LeakyReLU(0.2) -> "
             "* multiplier[32,1,1,1] -> LeakyReLU(0.2) -> MaxPool3d(2)")
    x = g.input("x", [n, 16, d, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, 32, 3, stride=2, padding=1, output_padding=1)
    a1 = g.op("a1", "leaky_relu", y, negative_slope=0.2)
    mul = g.param_randn("multiplier", [32, 1, 1, 1])
    m = g.op("m", "mul", a1, mul)
    a2 = g.op("a2", "leaky_relu", m, negative_slope=0.2)
    g.ret(g.op("o", "max_pool", a2, kernel_size=2))


@corpus("gemm_kb75_gn_min_bias")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 32), 8192
    g.doc = (f"Linear({k}->{n}) -> GroupNorm(512, width {n // 512}) -> min over features "
             f"(keepdim, [M,1]) -> + bias[1,{n},1,1] (broadcasts to [1,{n},M,1])")
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    h = group_norm(g, "n", y, 512)
    mn = g.op("mn", "min", h, dims=[1], keepdim=True)
    bias = g.param_randn("bias", [1, n, 1, 1])
    g.ret(g.op("o", "add", mn, bias))
