#!/usr/bin/env python3
"""Cross-check of sinter's float64 CPU reference (`sinterc eval`) against PyTorch.

For every op and attribute combination that matters (conv / conv_transpose with stride,
padding, output_padding, dilation and groups in 1-, 2- and 3-D, every norm, pools with
padding, dilation, ceil_mode and count_include_pad, every unary op with its parameters,
every binary op with broadcasting and scalars, reductions with negative dims and keepdim,
softmax, matmul broadcasting, linear, views) and for the five workloads at reduced batch,
this script writes a .sir graph and random f32 tensors (safetensors), runs PyTorch in
float64 on the same f32 values, runs `sinterc eval`, and compares: relative L2 and max
absolute error. Both sides compute in float64; sinterc rounds its result to f32, so
agreement is at f32 rounding (relative L2 around 1e-8; a case fails above 1e-6).

Runs where torch is installed (the GPU machine: torch float64 runs on CUDA when present):

    python3 tests/torch/crosscheck.py --sinterc build/tools/sinterc --out DIR [--full]

Prints a table, writes DIR/crosscheck.txt and DIR/crosscheck.json, exits 1 if any case fails.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

class _Missing:
    """Stands in for torch where it is not installed, so --dump-sir still works."""

    def __getattr__(self, name):
        return self

    def __call__(self, *args, **kwargs):
        raise RuntimeError("torch is not installed")


try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = F = _Missing()

DEV = "cuda" if not isinstance(torch, _Missing) and torch.cuda.is_available() else "cpu"
TOL = 1e-6

CASES = []


def case(name, sir, fn, positive=(), nonzero=()):
    """Registers a case: `sir` is the graph text, `fn(t)` the PyTorch float64 version taking
    and returning dicts of tensors by name; args in `positive` are drawn from U(0.5, 2)."""
    CASES.append(dict(name=name, sir=sir, fn=fn, positive=set(positive)))


def args_of(sir):
    """[(name, is_param, shape)] of the graph's arguments, from its header."""
    header = sir[sir.index("(") + 1: sir.index("{")]
    out = []
    for m in re.finditer(r"%([\w.]+)\s*:\s*(param\s+)?f32\[([\d,\s]*)\]", header):
        shape = [int(d) for d in m.group(3).split(",") if d.strip()]
        out.append((m.group(1), bool(m.group(2)), shape))
    return out


def draw(name, is_param, shape, positive, gen):
    if name in positive:
        return torch.rand(shape, generator=gen) * 1.5 + 0.5
    if is_param and len(shape) >= 2:
        fan_in = max(1, math.prod(shape[1:]))
        return (torch.rand(shape, generator=gen) * 2 - 1) / math.sqrt(fan_in)
    if is_param:  # gamma, beta, bias, running stats: O(1), away from zero for variances
        return torch.rand(shape, generator=gen) + 0.5
    return torch.randn(shape, generator=gen)


# ----------------------------------------------------------------------------- op cases

def conv_case(name, transposed, xs, ws, bias, **attrs):
    spatial = len(xs) - 2
    op = "conv_transpose" if transposed else "conv"
    attr_text = ", ".join(
        f"{k} = {v if isinstance(v, int) else '[' + ', '.join(map(str, v)) + ']'}"
        for k, v in attrs.items())
    b_arg = f", %b: param f32[{ws[1] * attrs.get('groups', 1) if transposed else ws[0]}]" if bias else ""
    sir = (f"graph {name}(%x: f32[{','.join(map(str, xs))}], %w: param f32[{','.join(map(str, ws))}]"
           f"{b_arg}) {{\n  %y = {op}(%x, %w{', %b' if bias else ''}) {{{attr_text}}}\n  return %y\n}}\n")
    fn_name = f"conv_transpose{spatial}d" if transposed else f"conv{spatial}d"
    torch_fn = getattr(F, fn_name)

    def fn(t):
        return {"y": torch_fn(t["x"], t["w"], t.get("b"), **attrs)}
    case(name, sir, fn)


conv_case("convT1d_s2_p1_op1", True, [2, 4, 7], [4, 3, 3], True, stride=2, padding=1, output_padding=1)
conv_case("convT1d_g2_s3_p2_op2_d2", True, [2, 4, 9], [4, 2, 3], False, stride=3, padding=2,
          output_padding=2, dilation=2, groups=2)
conv_case("convT2d_g3_mixed", True, [2, 6, 5, 7], [6, 2, 3, 2], True, stride=[2, 1], padding=[1, 0],
          output_padding=[1, 0], dilation=[1, 2], groups=3)
conv_case("convT2d_s2_p0", True, [1, 3, 4, 4], [3, 5, 2, 2], False, stride=2)
conv_case("convT3d_g2_mixed", True, [2, 4, 3, 4, 5], [4, 3, 2, 3, 3], True, stride=[1, 2, 3],
          padding=[0, 1, 1], output_padding=[0, 1, 2], dilation=[2, 1, 1], groups=2)
conv_case("convT3d_s4like", True, [1, 8, 4, 5, 6], [8, 2, 3, 3, 3], False, stride=2, padding=1, groups=4)
conv_case("conv1d_s2_p1_d2_bias", False, [2, 3, 11], [5, 3, 3], True, stride=2, padding=1, dilation=2)
conv_case("conv2d_g2_mixed", False, [2, 4, 9, 8], [6, 2, 3, 3], False, stride=[2, 1], padding=[1, 2],
          dilation=[1, 2], groups=2)
conv_case("conv2d_depthwise", False, [1, 4, 6, 6], [4, 1, 3, 3], True, padding=1, groups=4)
conv_case("conv3d_pad_bias", False, [2, 3, 5, 6, 7], [4, 3, 3, 2, 3], True, padding=[1, 0, 1])
conv_case("conv3d_s2_d2_g3", False, [1, 6, 9, 8, 9], [3, 2, 3, 3, 2], False, stride=2, dilation=[2, 1, 2],
          groups=3)

case("linear_bias_3d", """graph l(%x: f32[3,5,7], %w: param f32[4,7], %b: param f32[4]) {
  %y = linear(%x, %w, %b)
  return %y
}""", lambda t: {"y": F.linear(t["x"], t["w"], t["b"])})
case("linear_nobias_odd", """graph l(%x: f32[67,301], %w: param f32[70,301]) {
  %y = linear(%x, %w)
  return %y
}""", lambda t: {"y": F.linear(t["x"], t["w"])})
case("matmul_broadcast", """graph m(%a: f32[2,1,3,5], %b: f32[4,5,2], %v: f32[5], %c: f32[3,5],
                                   %u: f32[5]) {
  %y = matmul(%a, %b)
  %z = matmul(%v, %b)
  %s = matmul(%c, %u)
  %d = matmul(%u, %v)
  return %y, %z, %s, %d
}""", lambda t: {"y": t["a"] @ t["b"], "z": t["v"] @ t["b"], "s": t["c"] @ t["u"],
                 "d": t["u"] @ t["v"]})

UNARY = {
    "relu": ("", F.relu), "sigmoid": ("", torch.sigmoid), "tanh": ("", torch.tanh),
    "silu": ("", F.silu), "hardswish": ("", F.hardswish), "hardsigmoid": ("", F.hardsigmoid),
    "mish": ("", F.mish), "exp": ("", torch.exp), "abs": ("", torch.abs), "neg": ("", torch.neg),
    "erf": ("", torch.erf), "gelu": ("", F.gelu),
    "gelu_tanh": ('{approximate = "tanh"}', lambda x: F.gelu(x, approximate="tanh")),
    "hardtanh": ("{min_val = -0.5, max_val = 1.5}", lambda x: F.hardtanh(x, -0.5, 1.5)),
    "leaky_relu": ("{negative_slope = 0.2}", lambda x: F.leaky_relu(x, 0.2)),
    "softplus": ("", F.softplus),
    "softplus_b2_t1": ("{beta = 2.0, threshold = 1.0}", lambda x: F.softplus(x, 2.0, 1.0)),
    "elu": ("{alpha = 0.7}", lambda x: F.elu(x, 0.7)),
    "clamp_min": ("{min = -0.3}", lambda x: torch.clamp(x, min=-0.3)),
    "clamp_max": ("{max = 0.4}", lambda x: torch.clamp(x, max=0.4)),
    "clamp_both": ("{min = -0.3, max = 0.4}", lambda x: torch.clamp(x, -0.3, 0.4)),
}
for key, (attrs, fn) in UNARY.items():
    op = key.split("_")[0] if key.startswith(("gelu", "clamp", "softplus")) else key
    case(f"unary_{key}", f"graph u(%x: f32[3,17,5]) {{\n  %y = {op}(%x) {attrs}\n  return %y\n}}",
         lambda t, fn=fn: {"y": fn(t["x"])})
for key, fn in {"log": torch.log, "sqrt": torch.sqrt, "rsqrt": torch.rsqrt}.items():
    case(f"unary_{key}", f"graph u(%x: f32[3,17,5]) {{\n  %y = {key}(%x)\n  return %y\n}}",
         lambda t, fn=fn: {"y": fn(t["x"])}, positive=["x"])

BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
          "maximum": torch.maximum, "minimum": torch.minimum}
for key, fn in BINARY.items():
    case(f"binary_{key}_broadcast", f"""graph b(%a: f32[4,1,5], %c: f32[3,1], %s: f32[]) {{
  %y = {key}(%a, %c)
  %l = {key}(1.5, %c)
  %r = {key}(%a, -0.25)
  %z = {key}(%s, %a)
  return %y, %l, %r, %z
}}""", lambda t, fn=fn: {"y": fn(t["a"], t["c"]), "l": fn(torch.tensor(1.5, dtype=t["c"].dtype,
                                                                                  device=t["c"].device), t["c"]),
                         "r": fn(t["a"], torch.tensor(-0.25, dtype=t["a"].dtype, device=t["a"].device)),
                         "z": fn(t["s"], t["a"])})
case("binary_add_s3_broadcast", """graph b(%m: f32[1024,1], %bias: param f32[1,8192,1,1]) {
  %o = add(%m, %bias)
  return %o
}""", lambda t: {"o": t["m"] + t["bias"]})

RED = {"sum": lambda x, d, k: torch.sum(x, d, keepdim=k), "mean": lambda x, d, k: torch.mean(x, d, keepdim=k),
       "max": lambda x, d, k: torch.amax(x, d, keepdim=k), "min": lambda x, d, k: torch.amin(x, d, keepdim=k),
       "logsumexp": lambda x, d, k: torch.logsumexp(x, d, keepdim=k)}
for key, fn in RED.items():
    case(f"reduce_{key}", f"""graph r(%x: f32[3,4,5,6]) {{
  %a = {key}(%x) {{dims = [-1]}}
  %b = {key}(%x) {{dims = [0, 2], keepdim = true}}
  %c = {key}(%x) {{dims = [1, -1, 0]}}
  %d = {key}(%x) {{dims = [0, 1, 2, 3], keepdim = true}}
  return %a, %b, %c, %d
}}""", lambda t, fn=fn: {"a": fn(t["x"], [-1], False), "b": fn(t["x"], [0, 2], True),
                         "c": fn(t["x"], [1, -1, 0], False), "d": fn(t["x"], [0, 1, 2, 3], True)})
case("softmax_log_softmax", """graph s(%x: f32[3,4,5]) {
  %a = softmax(%x) {dim = 1}
  %b = softmax(%x) {dim = -1}
  %c = log_softmax(%x) {dim = 0}
  %d = log_softmax(%x) {dim = -2}
  return %a, %b, %c, %d
}""", lambda t: {"a": F.softmax(t["x"], 1), "b": F.softmax(t["x"], -1), "c": F.log_softmax(t["x"], 0),
                 "d": F.log_softmax(t["x"], -2)})

case("group_norm", """graph g(%x: f32[2,6,5,4], %g: param f32[6], %b: param f32[6], %x2: f32[4,32],
                             %g2: param f32[32], %b2: param f32[32], %x3: f32[3,4,7]) {
  %y = group_norm(%x, %g, %b) {groups = 3}
  %z = group_norm(%x2, %g2, %b2) {groups = 8, eps = 1e-3}
  %w = group_norm(%x3) {groups = 2}
  return %y, %z, %w
}""", lambda t: {"y": F.group_norm(t["x"], 3, t["g"], t["b"]),
                 "z": F.group_norm(t["x2"], 8, t["g2"], t["b2"], 1e-3),
                 "w": F.group_norm(t["x3"], 2)})
case("layer_norm", """graph l(%x: f32[3,4,5,4], %g: param f32[5,4], %b: param f32[5,4]) {
  %y = layer_norm(%x, %g, %b) {normalized_shape = [5, 4]}
  %z = layer_norm(%x) {normalized_shape = [4], eps = 0.1}
  return %y, %z
}""", lambda t: {"y": F.layer_norm(t["x"], [5, 4], t["g"], t["b"]),
                 "z": F.layer_norm(t["x"], [4], eps=0.1)})
case("batch_norm", """graph n(%x: f32[3,4,5,2], %m: param f32[4], %v: param f32[4], %g: param f32[4],
                             %b: param f32[4], %x2: f32[6,4]) {
  %y = batch_norm(%x, %m, %v, %g, %b)
  %z = batch_norm(%x2, %m, %v) {eps = 0.01}
  return %y, %z
}""", lambda t: {"y": F.batch_norm(t["x"], t["m"], t["v"], t["g"], t["b"], False),
                 "z": F.batch_norm(t["x2"], t["m"], t["v"], eps=0.01)})
case("instance_norm", """graph i(%x: f32[2,3,5,6], %g: param f32[3], %b: param f32[3], %x3: f32[2,3,3,4,5]) {
  %y = instance_norm(%x, %g, %b)
  %z = instance_norm(%x3) {eps = 0.01}
  return %y, %z
}""", lambda t: {"y": F.instance_norm(t["x"], weight=t["g"], bias=t["b"]),
                 "z": F.instance_norm(t["x3"], eps=0.01)})

case("max_pool", """graph p(%x1: f32[2,3,11], %x2: f32[2,3,9,10], %x3: f32[1,2,7,8,9]) {
  %a = max_pool(%x1) {kernel_size = 3, stride = 2, padding = 1, ceil_mode = true}
  %b = max_pool(%x2) {kernel_size = [3, 2], stride = [2, 3], padding = [1, 1], dilation = [2, 1]}
  %c = max_pool(%x2) {kernel_size = 2, ceil_mode = true}
  %d = max_pool(%x3) {kernel_size = [2, 3, 2], stride = 2, padding = [1, 1, 0], ceil_mode = true}
  return %a, %b, %c, %d
}""", lambda t: {"a": F.max_pool1d(t["x1"], 3, 2, 1, ceil_mode=True),
                 "b": F.max_pool2d(t["x2"], [3, 2], [2, 3], [1, 1], [2, 1]),
                 "c": F.max_pool2d(t["x2"], 2, ceil_mode=True),
                 "d": F.max_pool3d(t["x3"], [2, 3, 2], 2, [1, 1, 0], ceil_mode=True)})
case("avg_pool", """graph p(%x1: f32[2,3,6], %x2: f32[2,3,9,10], %x3: f32[1,2,7,8,9]) {
  %a = avg_pool(%x1) {kernel_size = 3, stride = 2, padding = 1, ceil_mode = true}
  %e = avg_pool(%x1) {kernel_size = 3, stride = 2, padding = 1, ceil_mode = true, count_include_pad = false}
  %b = avg_pool(%x2) {kernel_size = [3, 2], stride = [2, 3], padding = [1, 1]}
  %f = avg_pool(%x2) {kernel_size = [3, 4], stride = 2, padding = [1, 2], ceil_mode = true,
                      count_include_pad = false}
  %c = avg_pool(%x2) {kernel_size = 2}
  %d = avg_pool(%x3) {kernel_size = [2, 3, 2], stride = 2, padding = 1, ceil_mode = true}
  return %a, %e, %b, %f, %c, %d
}""", lambda t: {"a": F.avg_pool1d(t["x1"], 3, 2, 1, ceil_mode=True),
                 "e": F.avg_pool1d(t["x1"], 3, 2, 1, ceil_mode=True, count_include_pad=False),
                 "b": F.avg_pool2d(t["x2"], [3, 2], [2, 3], [1, 1]),
                 "f": F.avg_pool2d(t["x2"], [3, 4], 2, [1, 2], ceil_mode=True, count_include_pad=False),
                 "c": F.avg_pool2d(t["x2"], 2),
                 "d": F.avg_pool3d(t["x3"], [2, 3, 2], 2, 1, ceil_mode=True)})
case("views", """graph v(%x: f32[2,3,4,5]) {
  %r = reshape(%x) {shape = [6, -1, 2]}
  %f = flatten(%x) {start_dim = 1, end_dim = 2}
  %d = dropout(%f) {p = 0.2}
  %e = exp(%r)
  return %e, %d
}""", lambda t: {"e": torch.exp(t["x"].reshape(6, -1, 2)), "d": torch.flatten(t["x"], 1, 2)})

# ------------------------------------------------------------------------ the workloads

def workload(path, name, shrink, full_name=None):
    with open(path) as f:
        text = f.read()
    for old, new in shrink.items():
        assert old in text, (path, old)
        text = text.replace(old, new)
    return text


def wl_fns():
    return {
        "s0": lambda t: {"o": F.group_norm(F.relu(F.conv_transpose3d(t["x"], t["w"])), 8, t["gamma"], t["beta"])},
        "s1": lambda t: {"o": F.group_norm(F.conv3d(t["x"], t["w"], t["b"]), 8, t["gamma"], t["beta"])
                         .mean(dim=[1, 2, 3, 4])},
        "s2": lambda t: {"o": F.group_norm(F.gelu(F.conv_transpose2d(t["x"], t["w"], t["b"], groups=8)), 8,
                                           t["gamma"], t["beta"])},
        "s3": lambda t: {"o": torch.amin(F.group_norm(F.linear(t["x"], t["w"], t["b"]), 512, t["gamma"],
                                                      t["beta"]), 1, keepdim=True) + t["bias"]},
        "s4": lambda t: {"y": F.conv_transpose3d(t["x"], t["w"], stride=2, padding=1, groups=4)},
    }


def add_workloads(wdir, full):
    files = {"s0": "s0_convt3d_relu_gn.sir", "s1": "s1_conv3d_gn_mean.sir", "s2": "s2_convt2d_gelu_gn.sir",
             "s3": "s3_gemm_gn_min_bias.sir", "s4": "s4_convt3d_grouped.sir"}
    shrink = {"s0": {"f32[16,64,32,32,32]": "f32[2,64,32,32,32]"},
              "s1": {"f32[128,3,24,32,32]": "f32[8,3,24,32,32]"},
              "s2": {"f32[128,64,256,256]": "f32[2,64,256,256]"},
              "s3": {"f32[1024,8192]": "f32[64,8192]"},
              "s4": {"f32[4,32,32,64,128]": "f32[1,32,32,64,128]"}}
    fns = wl_fns()
    for key in ["s1", "s2", "s4", "s3", "s0"]:
        path = os.path.join(wdir, files[key])
        case(f"workload_{key}_reduced", workload(path, key, shrink[key]), fns[key])
    if full:
        for key in ["s1", "s4"]:
            path = os.path.join(wdir, files[key])
            case(f"workload_{key}_full", workload(path, key, {}), fns[key])


# ---------------------------------------------------------------------------- the driver

def run_case(c, sinterc, tmp, seed, threads):
    from safetensors.torch import load_file, save_file
    gen = torch.Generator().manual_seed(seed)
    args = args_of(c["sir"])
    inputs, params = {}, {}
    for name, is_param, shape in args:
        (params if is_param else inputs)[name] = draw(name, is_param, shape, c["positive"], gen).float().contiguous()
    sir = os.path.join(tmp, "g.sir")
    with open(sir, "w") as f:
        f.write(c["sir"])
    fi, fp, fo = (os.path.join(tmp, n) for n in ("in.safetensors", "p.safetensors", "out.safetensors"))
    save_file(inputs, fi)
    save_file(params, fp)
    t0 = time.time()
    cmd = [sinterc, "eval", sir, "--inputs", fi, "--params", fp, "--output", fo]
    if threads:
        cmd += ["--threads", str(threads)]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    t_ref = time.time() - t0
    if proc.returncode != 0:
        return dict(name=c["name"], ok=False, error=proc.stderr.strip(), secs=t_ref)
    got = load_file(fo)
    t64 = {k: v.double().to(DEV) for k, v in {**inputs, **params}.items()}
    with torch.no_grad():
        want = c["fn"](t64)
    worst_rel, worst_abs, outs = 0.0, 0.0, []
    for name, w in want.items():
        w = w.detach().double().cpu()
        if name not in got:
            return dict(name=c["name"], ok=False, error=f"sinterc returned no '{name}'", secs=t_ref)
        g = got[name].double()
        if tuple(g.shape) != tuple(w.shape):
            return dict(name=c["name"], ok=False, error=f"'{name}': shape {list(g.shape)} vs torch {list(w.shape)}",
                        secs=t_ref)
        diff = (g - w)
        max_abs = diff.abs().max().item() if diff.numel() else 0.0
        norm = w.norm().item()
        rel = diff.norm().item() / norm if norm > 0 else max_abs
        worst_rel, worst_abs = max(worst_rel, rel), max(worst_abs, max_abs)
        outs.append(f"{name}{list(w.shape)}")
    ok = worst_rel <= TOL and math.isfinite(worst_rel)
    return dict(name=c["name"], ok=ok, rel_l2=worst_rel, max_abs=worst_abs, outputs=outs, secs=t_ref)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sinterc", required=True, help="path to the sinterc binary")
    ap.add_argument("--out", default=".", help="directory for crosscheck.txt / crosscheck.json")
    ap.add_argument("--workloads", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                        "../../../shared/workloads"))
    ap.add_argument("--full", action="store_true", help="also S1 and S4 at full size")
    ap.add_argument("--no-workloads", action="store_true")
    ap.add_argument("--only", default="", help="regex: run only matching cases")
    ap.add_argument("--threads", type=int, default=0)
    ap.add_argument("--dump-sir", default="", help="only write each case's graph to DIR/<case>.sir")
    ap.add_argument("--budget", type=float, default=1e9, help="seconds; later cases are skipped after it")
    args = ap.parse_args()
    if not args.no_workloads:
        add_workloads(args.workloads, args.full)
    if args.dump_sir:
        os.makedirs(args.dump_sir, exist_ok=True)
        for c in CASES:
            with open(os.path.join(args.dump_sir, c["name"] + ".sir"), "w") as f:
                f.write(c["sir"])
        return 0
    os.makedirs(args.out, exist_ok=True)
    start = time.time()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, c in enumerate(CASES):
            if args.only and not re.search(args.only, c["name"]):
                continue
            if time.time() - start > args.budget:
                results.append(dict(name=c["name"], ok=None, error="skipped (time budget)"))
                continue
            try:
                r = run_case(c, args.sinterc, tmp, 1000 + i, args.threads)
            except Exception as e:  # a broken case is reported, not fatal
                r = dict(name=c["name"], ok=False, error=f"{type(e).__name__}: {e}")
            results.append(r)
            line = (f"{r['name']:<32} {'ok' if r['ok'] else ('SKIP' if r['ok'] is None else 'FAIL'):<4} "
                    + (f"rel_l2={r['rel_l2']:.2e} max_abs={r['max_abs']:.2e} eval={r['secs']:.2f}s "
                       f"{' '.join(r['outputs'])}" if "rel_l2" in r else r.get("error", "")))
            print(line, flush=True)
    failed = [r for r in results if r["ok"] is False]
    summary = (f"{len(results) - len(failed)} of {len(results)} cases agree (rel L2 <= {TOL:g}); "
               f"torch {torch.__version__} on {DEV}; {time.time() - start:.1f}s")
    print(summary)
    with open(os.path.join(args.out, "crosscheck.json"), "w") as f:
        json.dump(dict(summary=summary, device=torch.cuda.get_device_name(0) if DEV == "cuda" else "cpu",
                       results=results), f, indent=1)
    with open(os.path.join(args.out, "crosscheck.txt"), "w") as f:
        for r in results:
            f.write(json.dumps(r) + "\n")
        f.write(summary + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
