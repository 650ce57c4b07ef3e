#!/usr/bin/env python3
"""sinter vs PyTorch eager vs torch.compile on the five workloads, in one run on one GPU.

For each workload: random inputs and weights (never zeros; random GroupNorm gamma/beta),
saved as safetensors; sinter_bench (bench/sinter_bench.cpp) compiles the .sir graph, times
it with CUDA events (outputs poisoned before each run, median of many after warm-up) and
writes its outputs; PyTorch eager and torch.compile run the same graph on the same data,
timed the same way; a float64 PyTorch run on the GPU is the reference all three outputs are
compared with (relative L2). The roofline floor is max(FLOPs / peak, bytes / bandwidth) with
the fewest bytes (inputs, weights and outputs each moved once), the copy bandwidth measured
here, and the datasheet math rate of the precision sinter's policy allows (TF32 tensor cores
for convolutions; for linear, fp32 accuracy at 3xTF32's third of the TF32 rate).

Usage (on the GPU machine):
  python3 bench/side_by_side.py --bench-bin PATH/sinter_bench --workloads DIR --out DIR
"""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import (copy_bandwidth, floor_ms, load_tensors, rel_l2,  # noqa: E402
                          run_sinter_bench, save_tensors, time_torch, uniform, weight)


def make_workloads(gen):
    """name -> (sir file, tensors dict, torch function(t) -> output, flops, math)."""
    w = {}

    def s0():
        t = {"x": torch.randn(16, 64, 32, 32, 32, generator=gen, device="cuda"),
             "w": weight((64, 128, 3, 3, 3), 128 * 27, gen),
             "gamma": uniform((128,), 0.5, 1.5, gen), "beta": uniform((128,), -0.5, 0.5, gen)}
        f = lambda t: F.group_norm(F.relu(F.conv_transpose3d(t["x"], t["w"])), 8, t["gamma"],
                                   t["beta"], 1e-5)
        flops = 2 * 16 * 128 * 34 ** 3 * 64 * 27
        return "s0_convt3d_relu_gn.sir", t, f, flops, "tf32"

    def s1():
        t = {"x": torch.randn(128, 3, 24, 32, 32, generator=gen, device="cuda"),
             "w": weight((24, 3, 3, 3, 3), 81, gen), "b": weight((24,), 81, gen),
             "gamma": uniform((24,), 0.5, 1.5, gen), "beta": uniform((24,), -0.5, 0.5, gen)}
        f = lambda t: F.group_norm(F.conv3d(t["x"], t["w"], t["b"]), 8, t["gamma"], t["beta"],
                                   1e-5).mean(dim=[1, 2, 3, 4])
        flops = 2 * 128 * 24 * 22 * 30 * 30 * 81
        return "s1_conv3d_gn_mean.sir", t, f, flops, "tf32"

    def s2():
        t = {"x": torch.randn(128, 64, 256, 256, generator=gen, device="cuda"),
             "w": weight((64, 8, 3, 3), 8 * 9, gen), "b": weight((64,), 8 * 9, gen),
             "gamma": uniform((64,), 0.5, 1.5, gen), "beta": uniform((64,), -0.5, 0.5, gen)}
        f = lambda t: F.group_norm(F.gelu(F.conv_transpose2d(t["x"], t["w"], t["b"], groups=8)),
                                   8, t["gamma"], t["beta"], 1e-5)
        flops = 2 * 128 * 64 * 258 * 258 * 8 * 9
        return "s2_convt2d_gelu_gn.sir", t, f, flops, "tf32"

    def s3():
        t = {"x": torch.randn(1024, 8192, generator=gen, device="cuda"),
             "w": weight((8192, 8192), 8192, gen), "b": weight((8192,), 8192, gen),
             "gamma": uniform((8192,), 0.5, 1.5, gen), "beta": uniform((8192,), -0.5, 0.5, gen),
             "bias": torch.randn(1, 8192, 1, 1, generator=gen, device="cuda")}
        f = lambda t: torch.amin(F.group_norm(F.linear(t["x"], t["w"], t["b"]), 512, t["gamma"],
                                              t["beta"], 1e-5), dim=1, keepdim=True) + t["bias"]
        flops = 2 * 1024 * 8192 * 8192
        return "s3_gemm_gn_min_bias.sir", t, f, flops, "fp32"

    def s4():
        t = {"x": torch.randn(4, 32, 32, 64, 128, generator=gen, device="cuda"),
             "w": weight((32, 8, 3, 3, 3), 8 * 27, gen)}
        f = lambda t: F.conv_transpose3d(t["x"], t["w"], stride=2, padding=1, groups=4)
        flops = 2 * 4 * 32 * 63 * 127 * 255 * 8 * 27 / 8  # only taps that hit real inputs
        return "s4_convt3d_grouped.sir", t, f, flops, "tf32"

    for name, fn in [("s0", s0), ("s1", s1), ("s2", s2), ("s3", s3), ("s4", s4)]:
        w[name] = fn
    return w


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench-bin", required=True)
    p.add_argument("--workloads", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--only", default="s0,s1,s2,s3,s4")
    p.add_argument("--iterations", type=int, default=30)
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    scratch = os.environ.get("TMPDIR", "/tmp")
    bw = copy_bandwidth()
    print(f"device {torch.cuda.get_device_name()}, copy bandwidth {bw / 1e12:.2f} TB/s",
          flush=True)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(2026)
    makers = make_workloads(gen)
    rows = []
    for name in args.only.split(","):
        sir, t, f, flops, math_mode = makers[name]()
        sir = os.path.join(args.workloads, sir)
        inputs = os.path.join(scratch, f"{name}_in.safetensors")
        outputs = os.path.join(scratch, f"{name}_sinter.safetensors")
        save_tensors(t, inputs)
        sb, err = run_sinter_bench(args.bench_bin, sir, inputs, outputs,
                                   os.path.join(scratch, f"cache_{name}"), args.iterations)
        if err is not None:
            print(f"{name}: sinter_bench failed: {err}", flush=True)
            rows.append({"name": name, "error": err})
            continue
        got = next(iter(load_tensors(outputs).values())).cuda()
        with torch.no_grad():
            ref = f({k: v.double() for k, v in t.items()})
            eager_out, eager_ms = time_torch(f, t, args.iterations, 3)
            row = {"name": name, "sinter_ms": sb["ms_median"], "sinter_min": sb["ms_min"],
                   "sinter_graph_ms": sb["graph_ms_median"],
                   "sinter_max": sb["ms_max"], "eager_ms": eager_ms,
                   "sinter_err": rel_l2(got, ref), "eager_err": rel_l2(eager_out, ref),
                   "cold_s": sb["cold_compile_s"], "warm_s": sb["warm_load_s"],
                   "launches": sb["launches"], "kernels": sb["kernels"]}
            del eager_out
            if not args.no_compile:
                cf = torch.compile(f)
                comp_out, comp_ms = time_torch(cf, t, args.iterations, 3)
                row["compile_ms"] = comp_ms
                row["compile_err"] = rel_l2(comp_out, ref)
                del comp_out
        in_bytes = sum(v.numel() * 4 for v in t.values())
        out_bytes = got.numel() * 4
        row["floor_ms"], row["floor_kind"] = floor_ms(flops, math_mode, in_bytes + out_bytes, bw)
        rows.append(row)
        print(json.dumps(row), flush=True)
        del t, ref, got
        torch.cuda.empty_cache()

    lines = ["| graph | sinter ms | sinter ms (CUDA graph) | eager ms | compile ms | vs eager "
             "| vs compile | floor ms | sinter err | eager err | compile err | cold s | warm |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['name']} | failed: {r['error'][:60]} |")
            continue
        cm = r.get("compile_ms", float("nan"))
        ce = r.get("compile_err", float("nan"))
        lines.append(
            f"| {r['name']} | {r['sinter_ms']:.3f} | {r['sinter_graph_ms']:.3f} | "
            f"{r['eager_ms']:.3f} | {cm:.3f} | "
            f"{r['eager_ms'] / r['sinter_ms']:.2f}x | {cm / r['sinter_ms']:.2f}x | "
            f"{r['floor_ms']:.3f} ({r['floor_kind']}) | {r['sinter_err']:.1e} | "
            f"{r['eager_err']:.1e} | {ce:.1e} | {r['cold_s']:.2f} | {r['warm_s'] * 1e3:.0f} ms |")
    table = "\n".join(lines)
    print(table)
    with open(os.path.join(args.out, "side_by_side.md"), "w") as fh:
        fh.write(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
                 f"copy bandwidth {bw / 1e12:.2f} TB/s\n\n{table}\n")
    with open(os.path.join(args.out, "side_by_side.json"), "w") as fh:
        json.dump(rows, fh, indent=1)


if __name__ == "__main__":
    main()
