#!/usr/bin/env python3
"""GPU check of the generic kernels (elementwise, reduce, softmax, pool, channel stats, layer norm).

Runs on the GPU machine. Reads DIR/cases.json and the sm_90a cubins that
`generic_device_cases DIR` wrote (no NVRTC or sinter needed here), and for every case:
draws fresh random inputs with torch, NaN-poisons the outputs, launches the kernel twice through
the CUDA driver (ctypes; the one kernel argument is the 16-pointer sinter::Buffers struct), and
compares each run with the case's PyTorch float64 reference: relative L2 error within the case's
tolerance, NaN exactly where the reference has NaN (so unwritten outputs are caught). The second
run checks that split reductions leave their workspace ready for the next launch. Cases with a
`bench` expression are also timed (CUDA events, median of 50) against that PyTorch fp32 expression.

usage: gpu_check.py DIR [--out FILE]    exit 1 if any case fails
"""
import ctypes
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

CUDA = ctypes.CDLL("libcuda.so.1")
CUDA.cuModuleLoadData.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_char_p]
CUDA.cuModuleGetFunction.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                                     ctypes.c_char_p]
CUDA.cuLaunchKernel.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [
    ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p]


def check(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what} failed with CUDA error {rc}")


class Kernel:
    def __init__(self, cubin_path, name, grid, block, shared):
        self.module = ctypes.c_void_p()
        with open(cubin_path, "rb") as f:
            self.image = f.read()
        check(CUDA.cuModuleLoadData(ctypes.byref(self.module), self.image), "cuModuleLoadData")
        self.fn = ctypes.c_void_p()
        check(CUDA.cuModuleGetFunction(ctypes.byref(self.fn), self.module, name.encode()),
              "cuModuleGetFunction " + name)
        self.grid, self.block, self.shared = grid, block, shared

    def launch(self, slots):
        buffers = (ctypes.c_uint64 * 16)(*[slots.get(i, 0) for i in range(16)])
        params = (ctypes.c_void_p * 1)(ctypes.cast(ctypes.pointer(buffers), ctypes.c_void_p))
        stream = torch.cuda.current_stream().cuda_stream
        check(CUDA.cuLaunchKernel(self.fn, *self.grid, *self.block, self.shared, stream, params,
                                  None), "cuLaunchKernel")


DTYPES = {"f32": torch.float32, "f64": torch.float64, "u8": torch.uint8}


def make_buffer(buf, gen):
    shape, dtype, init = buf["shape"], DTYPES[buf["dtype"]], buf["init"]
    if init in ("randn", "randn_nan"):
        t = torch.randn(shape, generator=gen, device="cuda", dtype=torch.float64) * buf["scale"]
        if init == "randn_nan":
            flat = t.view(-1)
            idx = torch.randint(0, flat.numel(), (max(1, flat.numel() // 500),), generator=gen,
                                device="cuda")
            flat[idx] = float("nan")
        return t.to(dtype)
    if init == "rand":
        return (torch.rand(shape, generator=gen, device="cuda", dtype=torch.float64) *
                buf["scale"]).to(dtype)
    if init == "out":
        return torch.full(shape, float("nan"), device="cuda", dtype=dtype)
    return torch.zeros(shape, device="cuda", dtype=dtype)


def compare(out, ref):
    """(relative L2 error over the non-NaN reference entries, max abs error, NaN mismatches)."""
    out = out.double().reshape(-1)
    ref = ref.double().reshape(-1)
    if out.numel() != ref.numel():
        return math.inf, math.inf, -1
    ref_nan = torch.isnan(ref)
    nan_mismatch = int((torch.isnan(out) != ref_nan).sum())
    keep = ~ref_nan
    diff = (out[keep] - ref[keep])
    inf_ok = torch.isinf(ref[keep]) & (out[keep] == ref[keep])
    diff = torch.where(inf_ok, torch.zeros_like(diff), diff)
    norm = float(torch.linalg.vector_norm(torch.where(torch.isinf(ref[keep]),
                                                      torch.zeros_like(diff), ref[keep])))
    err = float(torch.linalg.vector_norm(diff))
    rel = err / norm if norm > 0 else err
    max_abs = float(diff.abs().max()) if diff.numel() else 0.0
    if math.isnan(rel):
        rel = math.inf
    return rel, max_abs, nan_mismatch


def time_ms(fn, reps=50):
    for _ in range(5):
        fn()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2]


def run_case(case, folder, gen):
    kernel = Kernel(os.path.join(folder, case["name"] + ".cubin"), case["name"], case["grid"],
                    case["block"], case["shared"])
    bufs = {b["slot"]: make_buffer(b, gen) for b in case["buffers"]}
    checked = [b for b in case["buffers"] if b["init"] in ("out", "zero_each")]
    env = {"torch": torch, "F": F}
    for slot, t in bufs.items():
        env[f"in{slot}"] = t.double()
    ref = eval(case["reference"], env)
    results = []
    for run in range(2):
        for b in case["buffers"]:
            if b["init"] == "out":
                bufs[b["slot"]].fill_(float("nan"))
            elif b["init"] == "zero_each":
                bufs[b["slot"]].zero_()
        kernel.launch({s: t.data_ptr() for s, t in bufs.items()})
        torch.cuda.synchronize()
        for b in checked:
            results.append(compare(bufs[b["slot"]], ref))
    rel = max(r[0] for r in results)
    max_abs = max(r[1] for r in results)
    nan_bad = max(r[2] for r in results)
    ok = rel <= case["tolerance"] and nan_bad == 0
    line = {"name": case["name"], "config": case["config"], "rel_l2": rel, "max_abs": max_abs,
            "nan_mismatch": nan_bad, "ok": ok}
    if case["bench"]:
        slots = {s: t.data_ptr() for s, t in bufs.items()}
        zero_each = [bufs[b["slot"]] for b in case["buffers"] if b["init"] == "zero_each"]

        def ours():
            for z in zero_each:
                z.zero_()
            kernel.launch(slots)
        tenv = {"torch": torch, "F": F}
        for slot, t in bufs.items():
            tenv[f"t{slot}"] = t
        line["ours_ms"] = time_ms(ours)
        line["torch_ms"] = time_ms(lambda: eval(case["bench"], tenv))
        line["ours_gbs"] = case["bytes"] / line["ours_ms"] / 1e6
    return line


def main():
    folder = sys.argv[1]
    out_file = sys.argv[sys.argv.index("--out") + 1] if "--out" in sys.argv else None
    with open(os.path.join(folder, "cases.json")) as f:
        cases = json.load(f)
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # makes the primary context current for the driver calls
    gen = torch.Generator(device="cuda")
    gen.manual_seed(int.from_bytes(os.urandom(4), "little"))
    lines, failed = [], 0
    for case in cases:
        try:
            line = run_case(case, folder, gen)
        except Exception as e:  # report and go on: one broken case must not hide the rest
            line = {"name": case["name"], "ok": False, "error": str(e)}
        failed += not line["ok"]
        lines.append(line)
        bench = ""
        if "ours_ms" in line:
            bench = (f"  ours {line['ours_ms']:.4f} ms ({line['ours_gbs']:.0f} GB/s)"
                     f"  torch {line['torch_ms']:.4f} ms")
        if "error" in line:
            print(f"FAIL {line['name']}: {line['error']}", flush=True)
        else:
            print(f"{'ok  ' if line['ok'] else 'FAIL'} {line['name']:<28} rel_l2 "
                  f"{line['rel_l2']:.2e} max_abs {line['max_abs']:.2e} "
                  f"nan_mismatch {line['nan_mismatch']}{bench}", flush=True)
    print(f"{len(cases) - failed}/{len(cases)} cases passed on {torch.cuda.get_device_name()}")
    if out_file:
        with open(out_file, "w") as f:
            json.dump(lines, f, indent=1)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
