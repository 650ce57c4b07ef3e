"""KernelBench level 2, problems 76 to 100, as corpus graphs.

Each builder restates one problem's op chain in the IR at the problem's own sizes (full
scale) and on a few small shapes with the same ops and attributes (small scale, for the
float64 CPU reference). nn.Linear layers are `gemm` graphs whatever the problem's file is
called; BatchNorm is the IR's inference batch_norm; parameters created with torch.ones are
drawn from U(0.5, 1.5) rather than held constant.
"""
from sirbuild import batch_norm, conv, conv_t, corpus, group_norm, instance_norm, linear


@corpus("gemm_kb76_bias_relu")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 96)
    g.doc = f"Linear({k}->{n}, no bias) -> + bias[{n}] -> ReLU"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n, bias=False)
    bias = g.param_randn("bias", [n])
    a = g.op("a", "add", y, bias)
    g.ret(g.op("o", "relu", a))


@corpus("convt3d_kb77_scale_bn_gap")
def _(g, s):
    n, cin, cout = s(16, 2), s(64, 8), s(128, 16)
    d, hw = s(16, 3), s(32, 5)
    g.doc = (f"ConvTranspose3d({cin}->{cout}, k=5) -> * 2 -> BatchNorm (inference) -> "
             f"global average pool (mean over D, H, W, keepdim)")
    x = g.input("x", [n, cin, d, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, cout, 5)
    sc = g.op("sc", "mul", y, 2.0)
    bn = batch_norm(g, "bn", sc)
    g.ret(g.op("o", "mean", bn, dims=[2, 3, 4], keepdim=True))


@corpus("convt3d_kb78_maxpool_maxpool_sum")
def _(g, s):
    n, cin, cout, sp = s(16, 2), s(32, 8), s(64, 16), s(32, 8)
    g.doc = (f"ConvTranspose3d({cin}->{cout}, k=5, stride=2, pad=2) -> MaxPool3d(2) -> "
             f"MaxPool3d(3) -> sum over channels (keepdim)")
    x = g.input("x", [n, cin, sp, sp, sp], uniform=(0, 1))
    y = conv_t(g, "y", x, cout, 5, stride=2, padding=2)
    p1 = g.op("p1", "max_pool", y, kernel_size=2)
    p2 = g.op("p2", "max_pool", p1, kernel_size=3)
    g.ret(g.op("o", "sum", p2, dims=[1], keepdim=True))


@corpus("conv3d_kb79_mul_in_clamp_mul_max")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 6), s(32, 10)
    g.doc = ("Conv3d(3->16, k=3) -> * multiplier[16,1,1,1] -> InstanceNorm3d (no affine) -> "
             "clamp(-1, 1) -> * multiplier -> max over channels")
    x = g.input("x", [n, 3, d, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 16, 3)
    mult = g.param_randn("multiplier", [16, 1, 1, 1])
    m1 = g.op("m1", "mul", y, mult)
    h = instance_norm(g, "h", m1, affine=False)
    c = g.op("c", "clamp", h, min=-1.0, max=1.0)
    m2 = g.op("m2", "mul", c, mult)
    g.ret(g.op("o", "max", m2, dims=[1]))


@corpus("gemm_kb80_max_mean_sub_gelu")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 96)
    g.doc = (f"Linear({k}->{n}) -> max over features (keepdim) -> minus its mean over dim 1 "
             f"(keepdim) -> GELU")
    g.zero_output = "the mean over a dim of size 1 is the value itself"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    mx = g.op("mx", "max", y, dims=[1], keepdim=True)
    mu = g.op("mu", "mean", mx, dims=[1], keepdim=True)
    d = g.op("d", "sub", mx, mu)
    g.ret(g.op("o", "gelu", d))


@corpus("gemm_kb81_swish_div_clamp_tanh_clamp")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 96)
    g.doc = (f"Linear({k}->{n}) -> x * sigmoid(x) -> / 2 -> clamp(-1, 1) -> tanh -> "
             f"clamp(-1, 1)")
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    sg = g.op("sg", "sigmoid", y)
    sw = g.op("sw", "mul", y, sg)
    dv = g.op("dv", "div", sw, 2.0)
    c1 = g.op("c1", "clamp", dv, min=-1.0, max=1.0)
    t = g.op("t", "tanh", c1)
    g.ret(g.op("o", "clamp", t, min=-1.0, max=1.0))


@corpus("conv2d_kb82_tanh_scale_bias_maxpool")
def _(g, s):
    n, hw = s(128, 2), s(256, 18)
    g.doc = "Conv2d(8->64, k=3) -> tanh -> * 2 -> + bias[64,1,1] -> MaxPool2d(4)"
    x = g.input("x", [n, 8, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 64, 3)
    t = g.op("t", "tanh", y)
    sc = g.op("sc", "mul", t, 2.0)
    bias = g.param_randn("bias", [64, 1, 1])
    a = g.op("a", "add", sc, bias)
    g.ret(g.op("o", "max_pool", a, kernel_size=4))


@corpus("conv3d_kb83_gn_min_clamp_dropout")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 6), s(64, 12)
    g.doc = ("Conv3d(3->16, k=3) -> GroupNorm(8) -> minimum with 0 -> clamp(0, 1) -> "
             "Dropout(0.2)")
    g.zero_output = "minimum with 0, then clamp to [0, 1]"
    x = g.input("x", [n, 3, d, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 16, 3)
    h = group_norm(g, "h", y, 8)
    mn = g.op("mn", "minimum", h, 0.0)
    c = g.op("c", "clamp", mn, min=0.0, max=1.0)
    g.ret(g.op("o", "dropout", c, p=0.2))


@corpus("gemm_kb84_bn_scale_softmax")
def _(g, s):
    m, k, n = s(1024, 8), s(8192, 64), s(8192, 96)
    g.doc = f"Linear({k}->{n}) -> BatchNorm1d (inference) -> scale[1] * x -> softmax over features"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    bn = batch_norm(g, "bn", y)
    scale = g.param("scale", [1], 0.5, 1.5)
    sc = g.op("sc", "mul", scale, bn)
    g.ret(g.op("o", "softmax", sc, dim=1))


@corpus("conv2d_kb85_gn_scale_maxpool_clamp")
def _(g, s):
    n, hw = s(128, 2), s(128, 18)
    g.doc = ("Conv2d(8->64, k=3) -> GroupNorm(16) -> * scale[64,1,1] -> MaxPool2d(4) -> "
             "clamp(0, 1)")
    x = g.input("x", [n, 8, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 64, 3)
    h = group_norm(g, "h", y, 16)
    scale = g.param("scale", [64, 1, 1], 0.5, 1.5)
    sc = g.op("sc", "mul", h, scale)
    p = g.op("p", "max_pool", sc, kernel_size=4)
    g.ret(g.op("o", "clamp", p, min=0.0, max=1.0))


@corpus("gemm_kb86_div_gelu")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 96)
    g.doc = f"Linear({k}->{n}) -> / 10 -> GELU"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    d = g.op("d", "div", y, 10.0)
    g.ret(g.op("o", "gelu", d))


@corpus("conv2d_kb87_sub_sub_mish")
def _(g, s):
    n, hw = s(128, 2), s(256, 18)
    g.doc = "Conv2d(8->64, k=3) -> - 0.5 -> - 0.2 -> Mish"
    x = g.input("x", [n, 8, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 64, 3)
    s1 = g.op("s1", "sub", y, 0.5)
    s2 = g.op("s2", "sub", s1, 0.2)
    g.ret(g.op("o", "mish", s2))


@corpus("gemm_kb88_gn_swish_mul_swish")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 32), 8192
    g.doc = (f"Linear({k}->{n}) -> GroupNorm(256, width {n // 256}) -> x * sigmoid(x) -> "
             f"* weight[{n}] -> x * sigmoid(x)")
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    h = group_norm(g, "h", y, 256)
    sg1 = g.op("sg1", "sigmoid", h)
    sw1 = g.op("sw1", "mul", h, sg1)
    mw = g.param_randn("multiply_weight", [n])
    mu = g.op("mu", "mul", sw1, mw)
    sg2 = g.op("sg2", "sigmoid", mu)
    g.ret(g.op("o", "mul", mu, sg2))


@corpus("convt3d_kb89_maxpool_softmax_sub_swish_max")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 4), s(32, 6)
    g.doc = ("ConvTranspose3d(3->16, k=3, stride=2, pad=1, out_pad=1) -> MaxPool3d(2, stride 2) "
             "-> softmax over channels -> - subtract[1,16,1,1,1] -> sigmoid(x) * x -> "
             "max over channels")
    x = g.input("x", [n, 3, d, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, 16, 3, stride=2, padding=1, output_padding=1)
    p = g.op("p", "max_pool", y, kernel_size=2, stride=2)
    sm = g.op("sm", "softmax", p, dim=1)
    sub = g.param_randn("subtract", [1, 16, 1, 1, 1])  # the [16] parameter as viewed
    d_ = g.op("d", "sub", sm, sub)
    sg = g.op("sg", "sigmoid", d_)
    sw = g.op("sw", "mul", sg, d_)
    g.ret(g.op("o", "max", sw, dims=[1]))


@corpus("conv3d_kb90_lrelu_add_clamp_gelu")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 5), s(64, 8)
    g.doc = ("Conv3d(8->64, k=3) -> LeakyReLU(0.2) -> + sum_tensor[64,1,1,1] -> clamp(-1, 1) -> "
             "GELU")
    x = g.input("x", [n, 8, d, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 64, 3)
    lr = g.op("lr", "leaky_relu", y, negative_slope=0.2)
    st = g.param_randn("sum_tensor", [64, 1, 1, 1])
    a = g.op("a", "add", lr, st)
    c = g.op("c", "clamp", a, min=-1.0, max=1.0)
    g.ret(g.op("o", "gelu", c))


@corpus("convt2d_kb91_softmax_bias_scale_sigmoid")
def _(g, s):
    n, hw = s(128, 2), s(64, 6)
    g.doc = ("ConvTranspose2d(64->128, k=4, stride=2, pad=1, out_pad=1) -> softmax over channels "
             "-> + bias[128,1,1] -> * 2 -> sigmoid")
    x = g.input("x", [n, 64, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, 128, 4, stride=2, padding=1, output_padding=1)
    sm = g.op("sm", "softmax", y, dim=1)
    bias = g.param_randn("bias", [128, 1, 1])
    a = g.op("a", "add", sm, bias)
    sc = g.op("sc", "mul", a, 2.0)
    g.ret(g.op("o", "sigmoid", sc))


@corpus("conv2d_kb92_gn_tanh_hswish_res_lse")
def _(g, s):
    n, hw = s(128, 2), s(128, 18)
    g.doc = ("y = Conv2d(8->64, k=3); logsumexp over channels (keepdim) of "
             "y + HardSwish(tanh(GroupNorm(16)(y)))")
    x = g.input("x", [n, 8, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 64, 3)
    h = group_norm(g, "h", y, 16, eps=1e-5)
    t = g.op("t", "tanh", h)
    hs = g.op("hs", "hardswish", t)
    r = g.op("r", "add", y, hs)
    g.ret(g.op("o", "logsumexp", r, dims=[1], keepdim=True))


@corpus("convt2d_kb93_add_min_gelu_mul")
def _(g, s):
    n, hw = s(128, 2), s(64, 6)
    g.doc = ("ConvTranspose2d(64->128, k=4, stride=2) -> + 0.5 -> minimum with 0 -> GELU -> "
             "* 2")
    x = g.input("x", [n, 64, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, 128, 4, stride=2)
    a = g.op("a", "add", y, 0.5)
    mn = g.op("mn", "minimum", a, 0.0)
    ge = g.op("ge", "gelu", mn)
    g.ret(g.op("o", "mul", ge, 2.0))


@corpus("gemm_kb94_bias_hardtanh_mish_gn")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 32), 8192
    g.doc = (f"Linear({k}->{n}) -> + bias[{n}] -> Hardtanh -> Mish -> "
             f"GroupNorm(256, width {n // 256})")
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    bias = g.param_randn("bias", [n])
    a = g.op("a", "add", y, bias)
    h = g.op("h", "hardtanh", a)
    mi = g.op("mi", "mish", h)
    g.ret(group_norm(g, "o", mi, 256))


@corpus("gemm_kb95_add_swish_tanh_gelu_hardtanh")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 96)
    g.doc = (f"Linear({k}->{n}) -> + add_value[{n}] -> sigmoid(x) * x -> tanh -> GELU -> "
             f"Hardtanh(-1, 1)")
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    av = g.param_randn("add_value", [n])
    a = g.op("a", "add", y, av)
    sg = g.op("sg", "sigmoid", a)
    sw = g.op("sw", "mul", sg, a)
    t = g.op("t", "tanh", sw)
    ge = g.op("ge", "gelu", t)
    g.ret(g.op("o", "hardtanh", ge, min_val=-1.0, max_val=1.0))


@corpus("convt3d_kb96_scale_maxpool_gap_clamp")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 4), s(32, 6)
    g.doc = ("ConvTranspose3d(3->16, k=3, stride=2, pad=1) -> * 0.5 -> MaxPool3d(2) -> "
             "global average pool (mean over D, H, W, keepdim) -> clamp(0, 1)")
    x = g.input("x", [n, 3, d, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, 16, 3, stride=2, padding=1)
    sc = g.op("sc", "mul", y, 0.5)
    p = g.op("p", "max_pool", sc, kernel_size=2)
    m = g.op("m", "mean", p, dims=[2, 3, 4], keepdim=True)
    g.ret(g.op("o", "clamp", m, min=0.0, max=1.0))


@corpus("gemm_kb97_bn_bias_div_swish")
def _(g, s):
    m, k, n = s(1024, 8), s(8192, 64), s(8192, 96)
    g.doc = (f"Linear({k}->{n}) -> BatchNorm1d (inference) -> + bias[1] -> / 1 -> "
             f"x * sigmoid(x)")
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    bn = batch_norm(g, "bn", y)
    bias = g.param_randn("bias", [1])
    a = g.op("a", "add", bn, bias)
    dv = g.op("dv", "div", a, 1.0)
    sg = g.op("sg", "sigmoid", dv)
    g.ret(g.op("o", "mul", dv, sg))


@corpus("gemm_kb98_avgpool_gelu_scale_max")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 128)
    g.doc = (f"Linear({k}->{n}) -> AvgPool1d(16) over the features (as [M,1,{n}]) -> GELU -> "
             f"* 2 -> max over features")
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    u = g.op("u", "reshape", y, shape=[m, 1, n])
    p = g.op("p", "avg_pool", u, kernel_size=16)
    q = g.op("q", "reshape", p, shape=[m, n // 16])
    ge = g.op("ge", "gelu", q)
    sc = g.op("sc", "mul", ge, 2.0)
    g.ret(g.op("o", "max", sc, dims=[1]))


@corpus("gemm_kb99_gelu_softmax")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 96)
    g.doc = f"Linear({k}->{n}) -> GELU -> softmax over features"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    ge = g.op("ge", "gelu", y)
    g.ret(g.op("o", "softmax", ge, dim=1))


@corpus("convt3d_kb100_clamp_div")
def _(g, s):
    n, d, hw = s(16, 1), s(24, 3), s(48, 4)
    g.doc = "ConvTranspose3d(64->128, k=3, stride=2, pad=1) -> clamp(min=-1) -> / 2"
    x = g.input("x", [n, 64, d, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, 128, 3, stride=2, padding=1)
    c = g.op("c", "clamp", y, min=-1.0)
    g.ret(g.op("o", "div", c, 2.0))
