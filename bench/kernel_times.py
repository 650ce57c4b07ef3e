#!/usr/bin/env python3
"""Where the time goes in a few corpus graphs: per-kernel GPU times of sinter, eager and torch.compile.

For each graph: PyTorch eager and torch.compile run the twin under torch.profiler, and the
kernels' CUDA times (median over the profiled runs) are listed; sinter runs the same graph
under `ncu --metrics gpu__time_duration.sum` (sinterc run --bench, random data), and each
kernel's duration is listed. Nothing here checks results: bench/corpus_bench.py does that.

Usage (GPU machine): python3 bench/kernel_times.py --sinterc PATH --names a,b [--scale full]
"""
import argparse
import collections
import csv
import io
import os
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus"))
import corpus  # noqa: E402


def torch_kernels(fn, t, runs=5):
    import torch
    for _ in range(3):
        fn(t)
    torch.cuda.synchronize()
    acts = [torch.profiler.ProfilerActivity.CUDA]
    with torch.profiler.profile(activities=acts) as prof:
        for _ in range(runs):
            fn(t)
        torch.cuda.synchronize()
    per = collections.defaultdict(list)
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            us = getattr(e, "device_time_total", None)
            per[e.name].append((us if us is not None else e.cuda_time_total) / 1e3)
    rows = [(sum(v) / runs, len(v) // runs, k) for k, v in per.items()]
    rows.sort(reverse=True)
    return rows


def sinter_kernels(sinterc, sir):
    cmd = ["ncu", "--clock-control", "none", "--metrics", "gpu__time_duration.sum", "--csv",
           sinterc, "run", sir, "--bench", "3"]
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=240)
    text = res.stdout[res.stdout.find('"ID"'):]
    per = collections.defaultdict(list)
    for r in csv.DictReader(io.StringIO(text)):
        if r.get("Metric Name") == "gpu__time_duration.sum":
            v = float(r["Metric Value"].replace(",", ""))
            unit = r.get("Metric Unit", "")
            scale = {"ns": 1e-6, "nsecond": 1e-6, "us": 1e-3, "usecond": 1e-3, "ms": 1.0,
                     "msecond": 1.0}.get(unit)
            if scale is None:  # ncu prints no unit column with --csv: nanoseconds
                scale = 1e-6
            per[r["Kernel Name"]].append(v * scale)
    if not per:
        print(res.stdout[-2000:], res.stderr[-2000:])
    return [(statistics.median(v), k) for k, v in per.items()]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sinterc", required=True)
    p.add_argument("--names", required=True)
    p.add_argument("--scale", default="full")
    args = p.parse_args()
    import torch
    for name in args.names.split(","):
        g = corpus.build(name, args.scale)
        gen = torch.Generator(device="cuda")
        gen.manual_seed(1)
        t = corpus.make_tensors(g, gen, "cuda")
        print(f"==== {name}")
        with torch.no_grad():
            for label, fn in (("eager", corpus.twin(g)), ("compile", torch.compile(corpus.twin(g)))):
                rows = torch_kernels(fn, t)
                print(f"-- {label}: {sum(r[0] for r in rows):.3f} ms in kernels")
                for ms, n, k in rows[:8]:
                    print(f"   {ms:8.3f} ms x{n}  {k[:110]}")
        rows = sinter_kernels(args.sinterc, corpus.path_of(name, args.scale))
        print(f"-- sinter: {sum(r[0] for r in rows):.3f} ms in kernels")
        for ms, k in rows:
            print(f"   {ms:8.3f} ms  {k[:110]}")
        del t
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
