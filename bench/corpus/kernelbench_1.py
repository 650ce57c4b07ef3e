"""KernelBench level 2, problems 1 to 25, as corpus graphs.

Full scale is each problem's own batch, channels, spatial sizes and module arguments; small
scale keeps the ops and their attributes (kernels, strides, paddings, pools, norm groups) on
shapes the float64 CPU reference can run. Parameters a Model makes with torch.randn become
N(0, 1) params; layers and norms get their weights from the sirbuild helpers.
"""
from sirbuild import batch_norm, conv, conv_t, corpus, group_norm, instance_norm, layer_norm, linear


@corpus("conv2d_kb1_relu_bias")
def _(g, s):
    n, cin, cout, hw = s(128, 2), s(64, 16), s(128, 32), s(128, 18)
    g.doc = f"Conv2d({cin}->{cout}, k=3) -> ReLU -> + bias[{cout},1,1]"
    x = g.input("x", [n, cin, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, cout, 3)
    r = g.op("r", "relu", y)
    bias = g.param_randn("bias", [cout, 1, 1])
    g.ret(g.op("o", "add", r, bias))


@corpus("convt2d_kb2_bias_clamp_scale_clamp_div")
def _(g, s):
    n, c, hw = s(128, 2), s(64, 16), s(128, 8)
    g.doc = (f"ConvTranspose2d({c}->{c}, k=3, stride=2, pad=1, out_pad=1) -> + bias[{c},1,1] -> "
             f"clamp(0, 1) -> *2 -> clamp(0, 1) -> /2")
    x = g.input("x", [n, c, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, c, 3, stride=2, padding=1, output_padding=1)
    bias = g.param_randn("bias", [c, 1, 1])
    a = g.op("a", "add", y, bias)
    c1 = g.op("c1", "clamp", a, min=0.0, max=1.0)
    m = g.op("m", "mul", c1, 2.0)
    c2 = g.op("c2", "clamp", m, min=0.0, max=1.0)
    g.ret(g.op("o", "div", c2, 2.0))


@corpus("convt3d_kb3_add_ln_avgpool_gelu")
def _(g, s):
    n, cin, cout = s(32, 2), s(32, 8), s(64, 16)
    d, h, w = s(16, 2), s(32, 4), s(32, 8)
    g.doc = (f"ConvTranspose3d({cin}->{cout}, k=3, stride=2, pad=1, out_pad=1) -> + scalar "
             f"weight -> LayerNorm(({cout},)) over the last dim (W) -> AvgPool3d(2) -> GELU")
    x = g.input("x", [n, cin, d, h, w], uniform=(0, 1))
    y = conv_t(g, "y", x, cout, 3, stride=2, padding=1, output_padding=1)
    assert g.shapes[y][-1] == cout  # the Model's LayerNorm((out_channels,)) meets W
    sw = g.param("sum_weight", [], 0.5, 1.5)
    a = g.op("a", "add", y, sw)
    ln = layer_norm(g, "ln", a, 1)
    p = g.op("p", "avg_pool", ln, kernel_size=2)
    g.ret(g.op("o", "gelu", p))


@corpus("conv2d_kb4_mish_mish")
def _(g, s):
    n, cin, cout, hw = s(64, 2), s(64, 16), s(128, 32), s(256, 18)
    g.doc = f"Conv2d({cin}->{cout}, k=3) -> Mish -> Mish"
    x = g.input("x", [n, cin, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, cout, 3)
    m1 = g.op("m1", "mish", y)
    g.ret(g.op("o", "mish", m1))


@corpus("convt2d_kb5_sub_tanh")
def _(g, s):
    n, c, hw = s(32, 2), s(64, 16), s(256, 8)
    g.doc = (f"ConvTranspose2d({c}->{c}, k=4, stride=2, pad=1, out_pad=1) -> - bias[{c},1,1] "
             f"-> tanh")
    x = g.input("x", [n, c, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, c, 4, stride=2, padding=1, output_padding=1)
    bias = g.param_randn("bias", [c, 1, 1])
    d = g.op("d", "sub", y, bias)
    g.ret(g.op("o", "tanh", d))


@corpus("conv3d_kb6_softmax_maxpool_maxpool")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 10), s(32, 14)
    g.doc = "Conv3d(3->16, k=3) -> softmax over channels -> MaxPool3d(2) -> MaxPool3d(2)"
    x = g.input("x", [n, 3, d, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 16, 3)
    sm = g.op("sm", "softmax", y, dim=1)
    p1 = g.op("p1", "max_pool", sm, kernel_size=2)
    g.ret(g.op("o", "max_pool", p1, kernel_size=2))


@corpus("conv3d_kb7_relu_lrelu_gelu_sigmoid_bias")
def _(g, s):
    n, d, hw = s(64, 2), s(32, 8), s(64, 10)
    g.doc = ("Conv3d(8->32, k=3) -> ReLU -> LeakyReLU(0.01) -> GELU -> sigmoid -> "
             "+ bias[32,1,1,1]")
    x = g.input("x", [n, 8, d, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 32, 3)
    r = g.op("r", "relu", y)
    lr = g.op("lr", "leaky_relu", r, negative_slope=0.01)
    ge = g.op("ge", "gelu", lr)
    sg = g.op("sg", "sigmoid", ge)
    bias = g.param_randn("bias", [32, 1, 1, 1])
    g.ret(g.op("o", "add", sg, bias))


@corpus("conv3d_kb8_div_maxpool_gap_bias_sum")
def _(g, s):
    n, d, hw = s(128, 2), s(16, 8), s(64, 12)
    g.doc = ("Conv3d(8->16, k=3) -> /2 -> MaxPool3d(2) -> global average pool (keepdim) -> "
             "+ bias[16,1,1,1] -> sum over channels")
    x = g.input("x", [n, 8, d, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 16, 3)
    dv = g.op("dv", "div", y, 2.0)
    p = g.op("p", "max_pool", dv, kernel_size=2)
    gap = g.op("gap", "mean", p, dims=[2, 3, 4], keepdim=True)
    bias = g.param_randn("bias", [16, 1, 1, 1])
    a = g.op("a", "add", gap, bias)
    g.ret(g.op("o", "sum", a, dims=[1]))


@corpus("gemm_kb9_sub_mul_relu")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 256)
    g.doc = f"Linear({k}->{n}) -> -2 -> *1.5 -> ReLU"
    g.zero_output = "with PyTorch's init every y - 2 is negative, so ReLU gives zeros"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    d = g.op("d", "sub", y, 2.0)
    m1 = g.op("m1", "mul", d, 1.5)
    g.ret(g.op("o", "relu", m1))


@corpus("convt2d_kb10_maxpool_hardtanh_mean_tanh")
def _(g, s):
    n, c, hw = s(128, 2), s(64, 16), s(256, 12)
    g.doc = (f"ConvTranspose2d({c}->{c}, k=3, stride=1, pad=1) -> MaxPool2d(2, stride 2) -> "
             f"Hardtanh(-1, 1) -> mean over H, W (keepdim) -> tanh")
    x = g.input("x", [n, c, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, c, 3, padding=1)
    p = g.op("p", "max_pool", y, kernel_size=2, stride=2)
    ht = g.op("ht", "hardtanh", p, min_val=-1.0, max_val=1.0)
    mn = g.op("mn", "mean", ht, dims=[2, 3], keepdim=True)
    g.ret(g.op("o", "tanh", mn))


@corpus("convt2d_kb11_bn_tanh_maxpool_gn")
def _(g, s):
    n, cin, hw = s(512, 2), s(64, 8), s(32, 8)
    g.doc = (f"ConvTranspose2d({cin}->128, k=5, stride=1, pad=1) -> BatchNorm2d (running "
             f"stats) -> tanh -> MaxPool2d(2) -> GroupNorm(8, width 16)")
    x = g.input("x", [n, cin, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, 128, 5, padding=1)
    bn = batch_norm(g, "bn", y, prefix="bn_")
    t = g.op("t", "tanh", bn)
    p = g.op("p", "max_pool", t, kernel_size=2, stride=2)
    g.ret(group_norm(g, "o", p, 8, prefix="gn_"))


@corpus("gemm_kb12_mul_lrelu")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 256)
    g.doc = f"Linear({k}->{n}) -> *2 -> LeakyReLU(0.1)"
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    m1 = g.op("m1", "mul", y, 2.0)
    g.ret(g.op("o", "leaky_relu", m1, negative_slope=0.1))


@corpus("convt3d_kb13_mean_bias_softmax_tanh_scale")
def _(g, s):
    n, cin, cout, d, hw = s(16, 2), s(16, 8), s(64, 16), s(32, 4), s(128, 8)
    g.doc = (f"ConvTranspose3d({cin}->{cout}, k=3, stride=1, pad=1) -> mean over D (keepdim) -> "
             f"+ bias[1,{cout},1,1,1] -> softmax over channels -> tanh -> *2")
    x = g.input("x", [n, cin, d, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, cout, 3, padding=1)
    mn = g.op("mn", "mean", y, dims=[2], keepdim=True)
    bias = g.param_randn("bias", [1, cout, 1, 1, 1])
    a = g.op("a", "add", mn, bias)
    sm = g.op("sm", "softmax", a, dim=1)
    t = g.op("t", "tanh", sm)
    g.ret(g.op("o", "mul", t, 2.0))


@corpus("matmul_kb14_div_sum_scale")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 256)
    g.doc = (f"x[{m},{k}] @ W^T with W[{n},{k}] ~ N(0, 1), no bias -> /2 -> sum over features "
             f"(keepdim) -> *1.5")
    x = g.input("x", [m, k], uniform=(0, 1))
    w = g.param_randn("w", [n, k])
    y = g.op("y", "linear", x, w)  # F.linear(x, W) is x @ W^T
    d = g.op("d", "div", y, 2.0)
    sm = g.op("sm", "sum", d, dims=[1], keepdim=True)
    g.ret(g.op("o", "mul", sm, 1.5))


@corpus("convt3d_kb15_bn_mean_sub")
def _(g, s):
    n, cin, cout, d, hw = s(16, 2), s(16, 8), s(32, 16), s(16, 4), s(32, 6)
    g.doc = (f"ConvTranspose3d({cin}->{cout}, k=3, stride=2, pad=1) -> BatchNorm3d (running "
             f"stats) -> x - mean(x over D, H, W, keepdim)")
    x = g.input("x", [n, cin, d, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, cout, 3, stride=2, padding=1)
    bn = batch_norm(g, "bn", y)
    mn = g.op("mn", "mean", bn, dims=[2, 3, 4], keepdim=True)
    g.ret(g.op("o", "sub", bn, mn))


@corpus("convt2d_kb16_mish_add_hardtanh_scale")
def _(g, s):
    n, c, hw = s(128, 2), s(64, 16), s(128, 8)
    g.doc = (f"ConvTranspose2d({c}->{c}, k=3, stride=2, pad=1, out_pad=1) -> Mish -> +0.5 -> "
             f"Hardtanh(-1, 1) -> *2")
    x = g.input("x", [n, c, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, c, 3, stride=2, padding=1, output_padding=1)
    mi = g.op("mi", "mish", y)
    a = g.op("a", "add", mi, 0.5)
    ht = g.op("ht", "hardtanh", a, min_val=-1.0, max_val=1.0)
    g.ret(g.op("o", "mul", ht, 2.0))


@corpus("conv2d_kb17_in_div")
def _(g, s):
    n, cin, cout, hw = s(128, 2), s(64, 16), s(128, 32), s(128, 18)
    g.doc = f"Conv2d({cin}->{cout}, k=3) -> InstanceNorm2d (no affine) -> /2"
    x = g.input("x", [n, cin, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, cout, 3)
    h = instance_norm(g, "h", y, affine=False)
    g.ret(g.op("o", "div", h, 2.0))


@corpus("gemm_kb18_sum_max_mean_lse_lse")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 256)
    g.doc = (f"Linear({k}->{n}) -> sum over features (keepdim) -> max, mean, logsumexp, "
             f"logsumexp over that size-1 dim (keepdim)")
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    sm = g.op("sm", "sum", y, dims=[1], keepdim=True)
    mx = g.op("mx", "max", sm, dims=[1], keepdim=True)
    mn = g.op("mn", "mean", mx, dims=[1], keepdim=True)
    l1 = g.op("l1", "logsumexp", mn, dims=[1], keepdim=True)
    g.ret(g.op("o", "logsumexp", l1, dims=[1], keepdim=True))


@corpus("convt2d_kb19_gelu_gn")
def _(g, s):
    n, cin, hw = s(128, 2), s(64, 8), s(256, 8)
    g.doc = f"ConvTranspose2d({cin}->64, k=3, stride=1) -> GELU -> GroupNorm(8, width 8)"
    x = g.input("x", [n, cin, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, 64, 3)
    ge = g.op("ge", "gelu", y)
    g.ret(group_norm(g, "o", ge, 8))


@corpus("convt3d_kb20_bias_res_mul_res")
def _(g, s):
    n, cin, cout, d, hw = s(16, 2), s(32, 8), s(64, 16), s(16, 3), s(32, 4)
    g.doc = (f"y = ConvTranspose3d({cin}->{cout}, k=3, stride=2, pad=1, out_pad=1); "
             f"((y + bias[{cout},1,1,1]) + y) * y + y")
    x = g.input("x", [n, cin, d, hw, hw], uniform=(0, 1))
    y = conv_t(g, "y", x, cout, 3, stride=2, padding=1, output_padding=1)
    bias = g.param_randn("bias", [cout, 1, 1, 1])
    a = g.op("a", "add", y, bias)
    r1 = g.op("r1", "add", a, y)
    m = g.op("m", "mul", r1, y)
    g.ret(g.op("o", "add", m, y))


@corpus("conv2d_kb21_bias_scale_sigmoid_gn")
def _(g, s):
    n, hw = s(128, 2), s(256, 18)
    g.doc = ("Conv2d(8->32, k=3) -> + bias[32,1,1] -> * scale[32,1,1] -> sigmoid -> "
             "GroupNorm(8, width 4)")
    x = g.input("x", [n, 8, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 32, 3)
    bias = g.param_randn("bias", [32, 1, 1])
    scale = g.param_randn("scale", [32, 1, 1])
    a = g.op("a", "add", y, bias)
    m = g.op("m", "mul", a, scale)
    sg = g.op("sg", "sigmoid", m)
    g.ret(group_norm(g, "o", sg, 8))


@corpus("gemm_kb22_scale_res_clamp_lse_mish")
def _(g, s):
    m, k, n = s(1024, 4), s(8192, 64), s(8192, 256)
    g.doc = (f"Linear({k}->{n}) -> *2 -> z + z -> clamp(-10, 10) -> logsumexp over features "
             f"(keepdim) -> l * Mish(l)")
    x = g.input("x", [m, k], uniform=(0, 1))
    y = linear(g, "y", x, n)
    sc = g.op("sc", "mul", y, 2.0)
    r = g.op("r", "add", sc, sc)
    c = g.op("c", "clamp", r, min=-10.0, max=10.0)
    l = g.op("l", "logsumexp", c, dims=[1], keepdim=True)
    mi = g.op("mi", "mish", l)
    g.ret(g.op("o", "mul", l, mi))


@corpus("conv3d_kb23_gn_mean")
def _(g, s):
    n, d, hw = s(128, 2), s(24, 6), s(32, 10)
    g.doc = "Conv3d(3->24, k=3) -> GroupNorm(8, width 3) -> mean over C, D, H, W"
    x = g.input("x", [n, 3, d, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 24, 3)
    h = group_norm(g, "h", y, 8)
    g.ret(g.op("o", "mean", h, dims=[1, 2, 3, 4]))


@corpus("conv3d_kb24_min_softmax")
def _(g, s):
    n, d, hw = s(128, 2), s(24, 6), s(32, 10)
    g.doc = "Conv3d(3->24, k=3) -> min over D -> softmax over channels"
    x = g.input("x", [n, 3, d, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 24, 3)
    mn = g.op("mn", "min", y, dims=[2])
    g.ret(g.op("o", "softmax", mn, dim=1))


@corpus("conv2d_kb25_min_tanh_tanh")
def _(g, s):
    n, hw = s(128, 2), s(256, 18)
    g.doc = "Conv2d(16->64, k=3) -> min over channels (keepdim) -> tanh -> tanh"
    x = g.input("x", [n, 16, hw, hw], uniform=(0, 1))
    y = conv(g, "y", x, 64, 3)
    mn = g.op("mn", "min", y, dims=[1], keepdim=True)
    t = g.op("t", "tanh", mn)
    g.ret(g.op("o", "tanh", t))
