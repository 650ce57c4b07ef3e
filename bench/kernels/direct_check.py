#!/usr/bin/env python3
"""GPU check and timing of the conv_direct and norm kernels (run on the GPU machine).

Reads DIR/cases.json and DIR/<kernel>.cubin written by tests/kernels_direct/tools/DirectDump
(+ nvcc -cubin, see bench/kernels/direct_prepare.sh), launches each kernel through the CUDA
Driver API (ctypes) on PyTorch tensors, and compares with PyTorch in float64: relative L2
error must be under 1e-5. Outputs are NaN-poisoned and surrounded by guard zones that must
stay untouched. conv_mma kernels (cases with "math": "tf32", named <case>__mma...) are TF32
and checked against 2e-3, like every TF32 result of sinter. The workloads (S1, S2 both passes, S4) are chained as the planner will
chain them and timed with CUDA events (median after warm-up).
Usage: direct_check.py DIR [--no-time]
"""
import ctypes
import json
import math
import sys

import torch
import torch.nn.functional as F

TOL = 1e-5
TOL_TF32 = 2e-3
GUARD = 1024
cuda = ctypes.CDLL("libcuda.so.1")
cuda.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
cuda.cuModuleLoadData.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]
cuda.cuModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                                     ctypes.c_char_p]
cuda.cuFuncSetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
failures = []
results = []


def ck(r, what):
    if r != 0:
        s = ctypes.c_char_p()
        cuda.cuGetErrorName(r, ctypes.byref(s))
        raise RuntimeError(f"{what}: {s.value}")


class Kernel:
    def __init__(self, d, case):
        self.case = case
        self.mod = ctypes.c_void_p()
        data = open(f"{d}/{case['name']}.cubin", "rb").read()
        ck(cuda.cuModuleLoadData(ctypes.byref(self.mod), data), "load " + case["name"])
        self.fn = ctypes.c_void_p()
        ck(cuda.cuModuleGetFunction(ctypes.byref(self.fn), self.mod, case["name"].encode()),
           "function " + case["name"])
        self.shared = case.get("shared", 0)
        if self.shared > 48 * 1024:
            ck(cuda.cuFuncSetAttribute(self.fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                       self.shared), "shared memory of " + case["name"])

    def __call__(self, slots):
        ptrs = [0] * 16
        for k, t in slots.items():
            ptrs[k] = t.data_ptr() if t is not None else 0
        buf = (ctypes.c_uint64 * 16)(*ptrs)
        params = (ctypes.c_void_p * 1)(ctypes.addressof(buf))
        g, b = self.case["grid"], self.case["block"]
        stream = torch.cuda.current_stream().cuda_stream
        ck(cuda.cuLaunchKernel(self.fn, g[0], g[1], g[2], b[0], b[1], b[2], self.shared,
                               ctypes.c_void_p(stream), params, None), "launch")


def guarded(numel, dtype=torch.float32):
    """A NaN-poisoned tensor of numel elements with guard zones on both sides."""
    full = torch.full((numel + 2 * GUARD,), float("nan"), dtype=dtype, device="cuda")
    return full, full[GUARD:GUARD + numel]


def guards_ok(full, numel):
    return bool(torch.isnan(full[:GUARD]).all() and torch.isnan(full[GUARD + numel:]).all())


def rel_l2(out, ref):
    out, ref = out.double(), ref.double()
    if torch.isnan(out).any():
        return float("nan")
    return float((out - ref).norm() / ref.norm().clamp_min(1e-300))


def report(name, what, err, extra="", tol=TOL):
    ok = err == err and err < tol
    results.append((name, what, err, ok, extra))
    if not ok:
        failures.append(f"{name} {what}: {err}")


def epi64(tag, v, ss=None):
    if tag == "relu":
        return torch.relu(v)
    if tag in ("gelu", "gelu_ss"):
        v = 0.5 * v * (1 + torch.erf(v / math.sqrt(2)))
        if tag == "gelu_ss":
            v = v * ss[..., 0][..., None, None] + ss[..., 1][..., None, None]
        return v
    return v


def conv_ref(c, x, w, b, n_slice=None):
    dims, tr = c["dims"], c["transposed"]
    sl = slice(3 - dims, 3)
    stride, pad, dil = c["stride"][sl], c["padding"][sl], c["dilation"][sl]
    xs = x if n_slice is None else x[:n_slice]
    xs, w64 = xs.double(), w.double()
    b64 = b.double() if b is not None else None
    if tr:
        base = [(c["in"][d] - 1) * c["stride"][d] - 2 * c["padding"][d] +
                c["dilation"][d] * (c["kernel"][d] - 1) + 1 for d in range(3)]
        op = [c["out"][d] - base[d] for d in range(3)][sl]
        fn = [F.conv_transpose1d, F.conv_transpose2d, F.conv_transpose3d][dims - 1]
        return fn(xs, w64, b64, stride=stride, padding=pad, output_padding=op,
                  groups=c["groups"], dilation=dil)
    fn = [F.conv1d, F.conv2d, F.conv3d][dims - 1]
    return fn(xs, w64, b64, stride=stride, padding=pad, dilation=dil, groups=c["groups"])


def conv_inputs(c):
    dims = c["dims"]
    sp = c["in"][3 - dims:]
    x = torch.randn([c["N"], c["Cin"]] + sp, device="cuda")
    k = c["kernel"][3 - dims:]
    if c["transposed"]:
        w = torch.randn([c["Cin"], c["Cout"] // c["groups"]] + k, device="cuda")
    else:
        w = torch.randn([c["Cout"], c["Cin"] // c["groups"]] + k, device="cuda")
    w /= math.sqrt(w[0].numel())
    b = torch.randn(c["Cout"], device="cuda") * 0.3 if c["bias"] else None
    return x, w, b


def out_shape(c):
    return [c["N"], c["Cout"]] + c["out"][3 - c["dims"]:]


def check_small_conv(d, c, timing=False, times=None):
    k = Kernel(d, c)
    tol = TOL_TF32 if c.get("math") == "tf32" else TOL
    x, w, b = conv_inputs(c)
    shape = out_shape(c)
    numel = math.prod(shape)
    full, y = guarded(numel)
    stats = torch.zeros(c["N"] * c["Cout"] * 2, dtype=torch.float64, device="cuda")
    # gelu_ss reads a per-(n, c) scale and shift from slot 5.
    ss = torch.randn(c["N"], c["Cout"], 2, device="cuda") * 0.5 + 1
    slots = {0: x, 1: w, 2: b, 3: y, 4: stats, 5: ss}
    k(slots)
    torch.cuda.synchronize()
    ref = epi64(c["epilogue"], conv_ref(c, x, w, b), ss.double())
    if c["store"]:
        report(c["name"], "y", rel_l2(y.view(shape), ref), tol=tol)
    if not guards_ok(full, numel) or (not c["store"] and not torch.isnan(y).all()):
        failures.append(c["name"] + ": wrote outside its output")
    if c["stats"]:
        r = ref.flatten(2)
        st = stats.view(c["N"], c["Cout"], 2)
        report(c["name"], "sum", rel_l2(st[..., 0], r.sum(-1)), tol=tol)
        report(c["name"], "sumsq", rel_l2(st[..., 1], (r * r).sum(-1)), tol=tol)
    del ref
    if timing and c.get("time"):
        def run():
            stats.zero_()
            k(slots)
        times.append((c["name"], time_ms(run), c["flops"], c["bytes"]))


def norm_ref(x64, groups, eps, gamma, beta):
    return F.group_norm(x64, groups, gamma.double() if gamma is not None else None,
                        beta.double() if beta is not None else None, eps)


def check_norm(d, c):
    k = Kernel(d, c)
    N, C, L, G = c["N"], c["C"], c["L"], c["groups"]
    n_ref = min(N, 4)
    x = torch.randn(N, C, L, device="cuda") * 1.7 + 0.4
    x += torch.randn(N, C, 1, device="cuda")
    gamma = torch.randn(C, device="cuda") if c["affine"] else None
    beta = torch.randn(C, device="cuda") if c["affine"] else None
    x64 = x.double()
    stats = torch.stack([x64.sum(-1), (x64 * x64).sum(-1)], -1).contiguous()
    del x64
    kind = c["kind"]
    if kind == "norm_apply":
        full, y = guarded(N * C * L)
        k({0: x, 3: y, 4: stats, 6: gamma, 7: beta})
        torch.cuda.synchronize()
        ref = norm_ref(x[:n_ref].double(), G, c["eps"], gamma, beta)
        if c["post"] == "relu":
            ref = torch.relu(ref)
        report(c["name"], "y", rel_l2(y.view(N, C, L)[:n_ref], ref))
        if not guards_ok(full, N * C * L):
            failures.append(c["name"] + ": wrote outside its output")
        return k, {0: x, 3: y, 4: stats, 6: gamma, 7: beta}
    if kind == "norm_scale_shift":
        full, ss = guarded(N * C * 2)
        k({4: stats, 5: ss, 6: gamma, 7: beta})
        torch.cuda.synchronize()
        st = stats.view(N, G, C // G, 2).sum(2)
        cnt = C // G * L
        mean = st[..., 0] / cnt
        rstd = 1 / torch.sqrt(st[..., 1] / cnt - mean * mean + c["eps"])
        mean = mean.repeat_interleave(C // G, 1)
        rstd = rstd.repeat_interleave(C // G, 1)
        scale = gamma.double() * rstd
        shift = beta.double() - mean * scale
        ss2 = ss.view(N, C, 2)
        report(c["name"], "scale", rel_l2(ss2[..., 0], scale))
        report(c["name"], "shift", rel_l2(ss2[..., 1], shift))
        return None
    outn = N if c["over_channels"] else N * C
    full, out = guarded(outn)
    k({3: out, 4: stats, 6: gamma, 7: beta})
    torch.cuda.synchronize()
    ref = norm_ref(x.double(), G, c["eps"], gamma, beta) if c.get("normalised", True) \
        else x.double()
    ref = ref.mean(-1) if c["mean"] else ref.sum(-1)
    if c["over_channels"]:
        ref = ref.mean(-1) if c["mean"] else ref.sum(-1)
    if c["post"] == "relu":
        ref = torch.relu(ref)
    report(c["name"], "out", rel_l2(out.view(ref.shape), ref))
    return None


def time_ms(fn, reps=20, warm=3):
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        ts.append(a.elapsed_time(b))
    ts.sort()
    return ts[len(ts) // 2]


def run_variants(d, cases, base, timing, times, slots, out_key, reference):
    """Times the other blockings of `base`; each must reproduce the default's `out_key` slot."""
    for v in cases:
        if v.get("variant_of") != base:
            continue
        k = Kernel(d, v)
        out = slots[out_key]
        out.fill_(0 if out.dtype == torch.float64 else float("nan"))
        k(slots)
        torch.cuda.synchronize()
        report(v["name"], "same as default", rel_l2(out, reference))
        if timing:
            times.append((v["name"], time_ms(lambda: k(slots)), v["flops"], v["bytes"]))


def workloads(d, cases, timing):
    by = {c["name"]: c for c in cases}
    torch.manual_seed(1)
    times = []
    # S1: conv3d stats -> mean of group_norm from the stats alone.
    c1, r1 = by["s1_conv3d_stats"], by["s1_gn_mean_all"]
    k1, kr = Kernel(d, c1), Kernel(d, r1)
    x, w, b = conv_inputs(c1)
    gamma, beta = torch.randn(24, device="cuda"), torch.randn(24, device="cuda")
    stats = torch.zeros(128 * 24 * 2, dtype=torch.float64, device="cuda")
    full, out = guarded(128)
    k1({0: x, 1: w, 2: b, 4: stats})
    kr({3: out, 4: stats, 6: gamma, 7: beta})
    torch.cuda.synchronize()
    y64 = conv_ref(c1, x, w, b)
    r = y64.flatten(2)
    st = stats.view(128, 24, 2)
    report("S1", "conv sum", rel_l2(st[..., 0], r.sum(-1)))
    report("S1", "conv sumsq", rel_l2(st[..., 1], (r * r).sum(-1)))
    ref = norm_ref(y64, 8, 1e-5, gamma, beta).mean(dim=[1, 2, 3, 4])
    report("S1", "mean(group_norm)", rel_l2(out, ref))
    del y64, r
    if timing:
        t_conv = time_ms(lambda: k1({0: x, 1: w, 2: b, 4: stats}))
        t_red = time_ms(lambda: kr({3: out, 4: stats, 6: gamma, 7: beta}))

        def s1_all():
            stats.zero_()
            k1({0: x, 1: w, 2: b, 4: stats})
            kr({3: out, 4: stats, 6: gamma, 7: beta})
        t_all = time_ms(s1_all)
        t_torch = time_ms(lambda: F.conv3d(x, w, b), reps=10)
        times.append(("S1 conv+stats", t_conv, c1["flops"], c1["bytes"]))
        times.append(("S1 mean from stats", t_red, r1["flops"], r1["bytes"]))
        times.append(("S1 whole (memset+conv+reduce)", t_all, 0, 0))
        times.append(("S1 torch F.conv3d alone", t_torch, 0, 0))
    ref_stats = stats.clone()
    stats.zero_()
    k1({0: x, 1: w, 2: b, 4: stats})
    ref_stats.copy_(stats)
    run_variants(d, cases, "s1_conv3d_stats", timing, times, {0: x, 1: w, 2: b, 4: stats}, 4,
                 ref_stats)
    del x

    # S2: pass 1 stats -> scale/shift -> pass 2 recompute with gelu + affine, stored.
    ca, cb, cs = by["s2_convt2d_gelu_stats"], by["s2_convt2d_gelu_norm"], by["s2_gn_scale_shift"]
    ka, kb, ks = Kernel(d, ca), Kernel(d, cb), Kernel(d, cs)
    x, w, b = conv_inputs(ca)
    gamma, beta = torch.randn(64, device="cuda"), torch.randn(64, device="cuda")
    stats = torch.zeros(128 * 64 * 2, dtype=torch.float64, device="cuda")
    ss = torch.empty(128 * 64 * 2, device="cuda")
    numel = 128 * 64 * 258 * 258
    full, y = guarded(numel)
    ka({0: x, 1: w, 2: b, 4: stats})
    ks({4: stats, 5: ss, 6: gamma, 7: beta})
    kb({0: x, 1: w, 2: b, 3: y, 5: ss})
    torch.cuda.synchronize()
    nr = 4
    g64 = epi64("gelu", conv_ref(ca, x, w, b, n_slice=nr))
    r = g64.flatten(2)
    st = stats.view(128, 64, 2)[:nr]
    report("S2", "pass1 sum", rel_l2(st[..., 0], r.sum(-1)))
    report("S2", "pass1 sumsq", rel_l2(st[..., 1], (r * r).sum(-1)))
    ref = norm_ref(g64, 8, 1e-5, gamma, beta)
    report("S2", "group_norm(gelu(convT)) n<4", rel_l2(y.view(128, 64, 258, 258)[:nr], ref))
    if not guards_ok(full, numel) or torch.isnan(y).any():
        failures.append("S2: output not fully written or guard overwritten")
    del g64, r, ref
    if timing:
        ta = time_ms(lambda: ka({0: x, 1: w, 2: b, 4: stats}))
        ts_ = time_ms(lambda: ks({4: stats, 5: ss, 6: gamma, 7: beta}))
        tb = time_ms(lambda: kb({0: x, 1: w, 2: b, 3: y, 5: ss}))
        t_torch = time_ms(lambda: F.conv_transpose2d(x, w, b, groups=8), reps=5)
        times.append(("S2 pass 1 (stats)", ta, ca["flops"], ca["bytes"]))
        times.append(("S2 scale/shift", ts_, cs["flops"], cs["bytes"]))
        times.append(("S2 pass 2 (recompute+norm+store)", tb, cb["flops"], cb["bytes"]))
        times.append(("S2 torch F.conv_transpose2d alone", t_torch, 0, 0))
    stats.zero_()
    ka({0: x, 1: w, 2: b, 4: stats})
    ref_stats = stats.clone()
    run_variants(d, cases, "s2_convt2d_gelu_stats", timing, times, {0: x, 1: w, 2: b, 4: stats},
                 4, ref_stats)
    del x, y, full

    # S4: strided grouped conv_transpose3d.
    c4 = by["s4_convt3d_grouped"]
    k4 = Kernel(d, c4)
    x, w, _ = conv_inputs(c4)
    numel = 4 * 32 * 63 * 127 * 255
    full, y = guarded(numel)
    k4({0: x, 1: w, 3: y})
    torch.cuda.synchronize()
    ref = conv_ref(c4, x, w, None)
    report("S4", "y", rel_l2(y.view(ref.shape), ref))
    if not guards_ok(full, numel) or torch.isnan(y).any():
        failures.append("S4: output not fully written or guard overwritten")
    del ref
    if timing:
        t4 = time_ms(lambda: k4({0: x, 1: w, 3: y}))
        t_torch = time_ms(lambda: F.conv_transpose3d(x, w, stride=2, padding=1, groups=4),
                          reps=5)
        times.append(("S4 convT3d", t4, c4["flops"], c4["bytes"]))
        times.append(("S4 torch F.conv_transpose3d", t_torch, 0, 0))
    ref_y = y.clone()
    run_variants(d, cases, "s4_convt3d_grouped", timing, times, {0: x, 1: w, 3: y}, 3, ref_y)
    del ref_y
    del x, y, full
    return times


def main():
    d = sys.argv[1]
    timing = "--no-time" not in sys.argv
    cases = json.load(open(d + "/cases.json"))
    torch.manual_seed(0)
    torch.zeros(1, device="cuda")
    print(torch.cuda.get_device_name(), flush=True)
    times = []
    for c in cases:
        if c["kind"] == "conv_variant":
            continue
        if c["kind"] == "conv" and not c["workload"]:
            check_small_conv(d, c, timing, times)
            torch.cuda.empty_cache()
        elif c["kind"] != "conv" and not c["name"].startswith(("s1_", "s2_gn_scale")):
            r = check_norm(d, c)
            if r and timing and c["name"] == "s2_gn_apply":
                k, slots = r
                t = time_ms(lambda: k(slots))
                times.append(("S2-size norm apply", t, c["flops"], c["bytes"]))
            torch.cuda.empty_cache()
    if timing:
        src = torch.empty(512 * 2**20, device="cuda")
        dst = torch.empty_like(src)
        t = time_ms(lambda: dst.copy_(src))
        times.append(("device copy 2 GiB (r+w)", t, 0, 2 * src.numel() * 4))
        del src, dst
    times += workloads(d, cases, timing)
    print("\n%-34s %-28s %10s %s" % ("kernel", "check", "rel L2", "ok"))
    for name, what, err, ok, _ in results:
        print("%-34s %-28s %10.3e %s" % (name, what, err, "ok" if ok else "FAIL"))
    if times:
        print("\n%-40s %9s %9s %9s" % ("timing (median)", "ms", "TFLOP/s", "GB/s"))
        for name, t, fl, by in times:
            print("%-40s %9.4f %9.2f %9.1f" % (name, t, fl / t / 1e9, by / t / 1e6))
    print("\nFAILURES: %d" % len(failures))
    for f in failures:
        print("  " + f)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
