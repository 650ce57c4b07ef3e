"""KernelBench level 2, problems 26 to 50, as corpus graphs.

One builder per problem. At full scale a graph has the problem's own sizes (its module-level
batch, channel, spatial and feature sizes and the constructor arguments its Model really
passes on); at small scale it keeps the same ops and attributes on shapes the float64 CPU
reference can run. A Model's float constants become numbers in the ops, its nn.Parameter
tensors become random params, its torch.rand inputs are drawn U(0, 1).
"""
from sirbuild import batch_norm, conv, conv_t, corpus, group_norm, instance_norm, layer_norm, \
    linear


@corpus("convt3d_kb26_add_hswish_mul")
def _(g, s):
    n, cin, cout, d = s(128, 1), s(32, 4), s(64, 8), s(16, 6)
    g.doc = (f"ConvTranspose3d({cin}->{cout}, k=3, stride=2, pad=1, output_padding=1) -> "
             f"+ add_input -> y * HardSwish(y)")
    x = g.input("x", [n, cin, d, d, d], uniform=(0, 1))
    add_input = g.input("add_input", [n, cout, 2 * d, 2 * d, 2 * d], uniform=(0, 1))
    y = conv_t(g, "y", x, cout, 3, stride=2, padding=1, output_padding=1)
    a = g.op("a", "add", y, add_input)
    h = g.op("h", "hardswish", a)
    g.ret(g.op("o", "mul", a, h))


@corpus("conv3d_kb27_hswish_gn_mean")
def _(g, s):
    n, d, hw = s(1024, 2), s(16, 6), s(32, 8)
    g.doc = "Conv3d(3->16, k=4) -> HardSwish -> GroupNorm(4) -> mean over D, H, W"
    x = g.input("x", [n, 3, d, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 16, 4)
    a = g.op("a", "hardswish", y)
    h = group_norm(g, "n", a, 4)
    g.ret(g.op("o", "mean", h, dims=[2, 3, 4]))


@corpus("gemm_kb28_in_add_mul")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 96)
    g.doc = (f"Linear({k}->{n}) -> InstanceNorm2d (no affine) of the rows as [M,1,1,{n}] -> "
             f"+ y -> * y")
    x = g.input("x", [m, k], uniform=(0, 1))
    y_in = g.input("y_in", [m, n], uniform=(0, 1))
    y = linear(g, "y", x, n)
    u = g.op("u", "reshape", y, shape=[m, 1, 1, n])
    h = instance_norm(g, "h", u, affine=False)
    q = g.op("q", "reshape", h, shape=[m, n])
    a = g.op("a", "add", q, y_in)
    g.ret(g.op("o", "mul", a, y_in))


@corpus("gemm_kb29_mish_mish")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 64)
    g.doc = f"Linear({k}->{n}) -> Mish -> Mish"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    a = g.op("a", "mish", y)
    g.ret(g.op("o", "mish", a))


@corpus("gemm_kb30_gn_hardtanh")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 16), 8192
    g.doc = f"Linear({k}->{n}) -> GroupNorm(16, width {n // 16}) -> Hardtanh(-2, 2)"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    h = group_norm(g, "n", y, 16)
    g.ret(g.op("o", "hardtanh", h, min_val=-2.0, max_val=2.0))


@corpus("conv2d_kb31_min_bias_scale")
def _(g, s):
    n, cin, cout, hw = s(128, 2), s(64, 8), s(128, 16), s(128, 16)
    g.doc = (f"Conv2d({cin}->{cout}, k=3) -> minimum with 0.5 -> + bias[{cout},1,1] -> * 2")
    x = g.input("x", [n, cin, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, cout, 3)
    mn = g.op("mn", "minimum", y, 0.5)
    bias = g.param_randn("bias", [cout, 1, 1])
    a = g.op("a", "add", mn, bias)
    g.ret(g.op("o", "mul", a, 2.0))


@corpus("conv2d_kb32_scale_min_c")
def _(g, s):
    n, cin, cout, hw = s(64, 2), s(64, 8), s(128, 16), s(256, 16)
    g.doc = f"Conv2d({cin}->{cout}, k=3) -> * 2 -> min over channels (keepdim)"
    x = g.input("x", [n, cin, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, cout, 3)
    sc = g.op("sc", "mul", y, 2.0)
    g.ret(g.op("o", "min", sc, dims=[1], keepdim=True))


def _gemm_scale_bn(g, m, k, n):
    """Problems 33 and 39 are the same model at two sizes."""
    g.doc = f"Linear({k}->{n}) -> * scale[{n}] -> BatchNorm1d (inference)"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    scale = g.param_randn("scale", [n])
    sc = g.op("sc", "mul", y, scale)
    g.ret(batch_norm(g, "o", sc))


@corpus("gemm_kb33_scale_bn")
def _(g, s):
    _gemm_scale_bn(g, s(1024, 8), s(8192, 64), s(8192, 64))


@corpus("convt3d_kb34_ln_gelu_scale")
def _(g, s):
    n, cin, cout = s(32, 1), s(32, 8), 64
    d, h, w = s(16, 2), s(32, 4), 32
    g.doc = (f"ConvTranspose3d({cin}->{cout}, k=4, stride=2, pad=1) -> LayerNorm({cout}) over "
             f"the last dim (W = {2 * w}) -> GELU -> * 1")
    x = g.input("x", [n, cin, d, h, w], uniform=(0, 1))
    y = conv_t(g, "y", x, cout, 4, stride=2, padding=1)
    ln = layer_norm(g, "n", y, 1)
    a = g.op("a", "gelu", ln)
    g.ret(g.op("o", "mul", a, 1.0))


@corpus("conv2d_kb35_sub_hswish_maxpool_mish")
def _(g, s):
    n, cin, cout, hw = s(128, 2), s(64, 8), s(128, 16), s(128, 18)
    g.doc = f"Conv2d({cin}->{cout}, k=3) -> -0.5 -> HardSwish -> MaxPool2d(2) -> Mish"
    x = g.input("x", [n, cin, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, cout, 3)
    sb = g.op("sb", "sub", y, 0.5)
    h = g.op("h", "hardswish", sb)
    p = g.op("p", "max_pool", h, kernel_size=2)
    g.ret(g.op("o", "mish", p))


@corpus("convt2d_kb36_min_c_sum_h_gelu_bias")
def _(g, s):
    n, cin, cout, hw = s(16, 1), s(64, 8), s(128, 16), s(128, 16)
    g.doc = (f"ConvTranspose2d({cin}->{cout}, k=3, stride=2, pad=1, output_padding=1) -> "
             f"min over channels (keepdim) -> sum over H (keepdim) -> GELU -> + bias[1,1,1]")
    x = g.input("x", [n, cin, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, cout, 3, stride=2, padding=1, output_padding=1)
    mn = g.op("mn", "min", y, dims=[1], keepdim=True)
    sm = g.op("sm", "sum", mn, dims=[2], keepdim=True)
    a = g.op("a", "gelu", sm)
    bias = g.param_randn("bias", [1, 1, 1])
    g.ret(g.op("o", "add", a, bias))


@corpus("gemm_kb37_swish_bias_gn")
def _(g, s):
    m, k, n = s(32768, 4), s(1024, 32), 4096
    g.doc = (f"Linear({k}->{n}) -> sigmoid(y) * y -> + bias[{n}] -> "
             f"GroupNorm(64, width {n // 64})")
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    sg = g.op("sg", "sigmoid", y)
    sw = g.op("sw", "mul", sg, y)
    bias = g.param_randn("bias", [n])
    a = g.op("a", "add", sw, bias)
    g.ret(group_norm(g, "o", a, 64))


@corpus("convt3d_kb38_avgpool_clamp_softmax_scale")
def _(g, s):
    n, cin, cout = s(32, 1), s(32, 4), s(64, 8)
    d, hw = s(32, 8), s(64, 16)
    g.doc = (f"AvgPool3d(2) on the input -> ConvTranspose3d({cin}->{cout}, k=3, stride=2, pad=1, "
             f"output_padding=1) -> clamp(0, 1) -> softmax over the flattened D*H*W -> "
             f"* scale[1,{cout},1,1,1]")
    x = g.input("x", [n, cin, d, hw, hw], uniform=(0, 1))
    p = g.op("p", "avg_pool", x, kernel_size=2)
    y = conv_t(g, "y", p, cout, 3, stride=2, padding=1, output_padding=1)
    c = g.op("c", "clamp", y, min=0.0, max=1.0)
    od, ohw = g.shapes[c][2], g.shapes[c][3]
    f = g.op("f", "reshape", c, shape=[n, cout, -1])
    sm = g.op("sm", "softmax", f, dim=2)
    r = g.op("r", "reshape", sm, shape=[n, cout, od, ohw, ohw])
    scale = g.param("scale", [1, cout, 1, 1, 1], 0.5, 1.5)
    g.ret(g.op("o", "mul", r, scale))


@corpus("gemm_kb39_scale_bn")
def _(g, s):
    _gemm_scale_bn(g, s(16384, 16), s(4096, 64), s(4096, 64))


@corpus("gemm_kb40_scale_res")
def _(g, s):
    m, k, n = s(16384, 16), s(4096, 64), s(4096, 64)
    g.doc = f"y = Linear({k}->{n}); y * 0.5 + y"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    sc = g.op("sc", "mul", y, 0.5)
    g.ret(g.op("o", "add", sc, y))


@corpus("gemm_kb41_bn_gelu_relu")
def _(g, s):
    m, k, n = s(16384, 16), s(4096, 64), s(4096, 64)
    g.doc = f"Linear({k}->{n}) -> BatchNorm1d (inference) -> GELU -> ReLU"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    h = batch_norm(g, "n", y)
    a = g.op("a", "gelu", h)
    g.ret(g.op("o", "relu", a))


@corpus("convt2d_kb42_gap_bias_lse_sum_scale")
def _(g, s):
    n, cin, cout, hw = s(16, 2), s(64, 8), s(128, 16), s(512, 12)
    g.doc = (f"ConvTranspose2d({cin}->{cout}, k=3) -> mean over H, W (keepdim) -> "
             f"+ bias[{cout},1,1] -> logsumexp over channels (keepdim) -> sum over H, W -> * 10")
    x = g.input("x", [n, cin, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, cout, 3)
    m = g.op("m", "mean", y, dims=[2, 3], keepdim=True)
    bias = g.param_randn("bias", [cout, 1, 1])
    a = g.op("a", "add", m, bias)
    l = g.op("l", "logsumexp", a, dims=[1], keepdim=True)
    t = g.op("t", "sum", l, dims=[2, 3])
    g.ret(g.op("o", "mul", t, 10.0))


@corpus("conv3d_kb43_maxpool_lse_c_relu")
def _(g, s):
    n, cin, cout, d, hw = s(4, 1), s(32, 8), s(64, 16), s(32, 4), s(128, 8)
    g.doc = (f"Conv3d({cin}->{cout}, k=3, pad=1) -> MaxPool3d(2) -> logsumexp over channels "
             f"(keepdim) -> ReLU")
    x = g.input("x", [n, cin, d, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, cout, 3, padding=1)
    p = g.op("p", "max_pool", y, kernel_size=2, stride=2)
    l = g.op("l", "logsumexp", p, dims=[1], keepdim=True)
    g.ret(g.op("o", "relu", l))


@corpus("convt2d_kb44_scale_gap_gap")
def _(g, s):
    n, cin, cout, hw = s(16, 2), s(64, 8), s(128, 16), s(128, 12)
    g.doc = (f"ConvTranspose2d({cin}->{cout}, k=3, stride=2, pad=1, output_padding=1) -> * 0.5 -> "
             f"mean over H, W (keepdim) -> mean over H, W (keepdim) again")
    x = g.input("x", [n, cin, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, cout, 3, stride=2, padding=1, output_padding=1)
    sc = g.op("sc", "mul", y, 0.5)
    m1 = g.op("m1", "mean", sc, dims=[2, 3], keepdim=True)
    g.ret(g.op("o", "mean", m1, dims=[2, 3], keepdim=True))


@corpus("gemm_kb45_sigmoid_gemm_lse")
def _(g, s):
    m, k, h, n = s(16384, 8), s(2048, 64), s(4096, 96), s(1024, 48)
    g.doc = f"Linear({k}->{h}) -> sigmoid -> Linear({h}->{n}) -> logsumexp over features"
    x = g.input("x", [m, k], uniform=(0, 1))
    y1 = linear(g, "y1", x, h, w="w1", b="b1")
    a = g.op("a", "sigmoid", y1)
    y2 = linear(g, "y2", a, n, w="w2", b="b2")
    g.ret(g.op("o", "logsumexp", y2, dims=[1]))


@corpus("conv2d_kb46_sub_tanh_sub_avgpool")
def _(g, s):
    n, cin, cout, hw = s(128, 2), s(64, 8), s(128, 16), s(128, 18)
    g.doc = f"Conv2d({cin}->{cout}, k=3) -> -0.5 -> tanh -> -0.2 -> AvgPool2d(2)"
    x = g.input("x", [n, cin, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, cout, 3)
    s1 = g.op("s1", "sub", y, 0.5)
    t = g.op("t", "tanh", s1)
    s2 = g.op("s2", "sub", t, 0.2)
    g.ret(g.op("o", "avg_pool", s2, kernel_size=2))


@corpus("conv3d_kb47_mish_tanh")
def _(g, s):
    n, cin, cout, d, hw = s(16, 1), s(32, 8), s(64, 16), s(32, 6), s(64, 10)
    g.doc = f"Conv3d({cin}->{cout}, k=3) -> Mish -> tanh"
    x = g.input("x", [n, cin, d, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, cout, 3)
    a = g.op("a", "mish", y)
    g.ret(g.op("o", "tanh", a))


@corpus("conv3d_kb48_scale_tanh_mul_sigmoid")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 5), s(64, 10)
    g.doc = ("Conv3d(3->16, k=3) -> * scaling_factor[16,1,1,1] -> tanh -> * bias[16,1,1,1] -> "
             "sigmoid")
    x = g.input("x", [n, 3, d, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 16, 3)
    scale = g.param_randn("scale", [16, 1, 1, 1])
    sc = g.op("sc", "mul", y, scale)
    t = g.op("t", "tanh", sc)
    bias = g.param_randn("bias", [16, 1, 1, 1])
    m = g.op("m", "mul", t, bias)
    g.ret(g.op("o", "sigmoid", m))


@corpus("convt3d_kb49_softmax_sigmoid")
def _(g, s):
    n, cin, cout, d, hw = s(16, 1), s(32, 4), s(64, 8), s(16, 4), s(32, 6)
    g.doc = (f"ConvTranspose3d({cin}->{cout}, k=3, stride=2, pad=1, output_padding=1) -> "
             f"softmax over channels -> sigmoid")
    x = g.input("x", [n, cin, d, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, cout, 3, stride=2, padding=1, output_padding=1)
    p = g.op("p", "softmax", y, dim=1)
    g.ret(g.op("o", "sigmoid", p))


@corpus("convt3d_kb50_scale_avgpool_bias_scale")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 4), s(32, 6)
    g.doc = ("ConvTranspose3d(3->16, k=3, stride=2, pad=1) -> * scale1 (scalar param) -> "
             "AvgPool3d(2) -> + bias[16,1,1,1] -> * scale2 (scalar param)")
    x = g.input("x", [n, 3, d, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, 16, 3, stride=2, padding=1)
    scale1 = g.param("scale1", [], 0.25, 0.75)
    a = g.op("a", "mul", y, scale1)
    p = g.op("p", "avg_pool", a, kernel_size=2)
    bias = g.param_randn("bias", [16, 1, 1, 1])
    b = g.op("bb", "add", p, bias)
    scale2 = g.param("scale2", [], 0.5, 1.5)
    g.ret(g.op("o", "mul", b, scale2))
