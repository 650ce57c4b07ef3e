#!/usr/bin/env python3
"""Builds or settings of sinter against each other on workloads, in one run on one GPU.

For before/after measurements of one change: every variant is a sinter_bench binary plus
environment settings (the emitters' knobs, say), timed in alternating rounds on the same
random inputs, each output checked against one float64 PyTorch reference (relative L2), so
that the card's power state moves all variants alike. Workloads are side_by_side.py's.

Usage (on the GPU machine):
  python3 bench/variants.py --workloads DIR --only s2 --rounds 3 \
      --variant base=.carry/base/sinter_bench --variant new=.carry/run/sinter_bench \
      --variant tl2=.carry/run/sinter_bench:SINTER_EXP_X=2
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_common import load_tensors, rel_l2, run_sinter_bench, save_tensors  # noqa: E402
from side_by_side import make_workloads  # noqa: E402


def parse_variant(text):
    """NAME=BIN[:KEY=VALUE[,KEY=VALUE...]] -> (name, bin, env dict)."""
    name, rest = text.split("=", 1)
    binary, _, settings = rest.partition(":")
    env = {}
    for kv in filter(None, settings.split(",")):
        k, v = kv.split("=", 1)
        env[k] = v
    return name, binary, env


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workloads", required=True)
    p.add_argument("--only", default="s2")
    p.add_argument("--variant", action="append", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--iterations", type=int, default=20)
    p.add_argument("--out", default=None)
    args = p.parse_args()
    variants = [parse_variant(v) for v in args.variant]
    scratch = os.environ.get("TMPDIR", "/tmp")
    print(f"device {torch.cuda.get_device_name()}", flush=True)
    gen = torch.Generator(device="cuda")
    gen.manual_seed(2026)
    makers = make_workloads(gen)
    results = []
    for name in args.only.split(","):
        sir, t, f, flops, _ = makers[name]()
        sir = os.path.join(args.workloads, sir)
        inputs = os.path.join(scratch, f"{name}_in.safetensors")
        save_tensors(t, inputs)
        with torch.no_grad():
            ref = f({k: v.double() for k, v in t.items()})
        del t
        torch.cuda.empty_cache()
        for rnd in range(args.rounds):
            for vname, binary, env in variants:
                old = {k: os.environ.get(k) for k in env}
                os.environ.update(env)
                outputs = os.path.join(scratch, f"{name}_{vname}.safetensors")
                sb, err = run_sinter_bench(binary, sir, inputs, outputs,
                                           os.path.join(scratch, f"cache_{vname}"),
                                           args.iterations, timeout=600)
                for k, v in old.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
                row = {"workload": name, "variant": vname, "round": rnd}
                if err is not None:
                    row["error"] = err[-400:]
                else:
                    got = next(iter(load_tensors(outputs).values())).cuda()
                    row.update(ms=sb["ms_median"], graph_ms=sb["graph_ms_median"],
                               err=rel_l2(got, ref), tflops=flops / sb["ms_median"] / 1e9)
                    del got
                results.append(row)
                print(json.dumps(row), flush=True)
        del ref
        torch.cuda.empty_cache()
    print("| workload | variant | ms by round | CUDA graph ms by round | rel. L2 |")
    print("|---|---|---|---|---|")
    for name in args.only.split(","):
        for vname, _, _ in variants:
            rows = [r for r in results if r["workload"] == name and r["variant"] == vname]
            if any("error" in r for r in rows):
                print(f"| {name} | {vname} | failed: {rows[0].get('error', '')[:80]} | | |")
                continue
            ms = " ".join(f"{r['ms']:.3f}" for r in rows)
            gms = " ".join(f"{r['graph_ms']:.3f}" for r in rows)
            print(f"| {name} | {vname} | {ms} | {gms} | {max(r['err'] for r in rows):.1e} |")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "variants.json"), "w") as fh:
            json.dump(results, fh, indent=1)


if __name__ == "__main__":
    main()
