"""What the device benchmarks share: timing, errors, bandwidth, peaks, floors, sinter_bench.

bench/side_by_side.py (the five workloads) and bench/corpus_bench.py (the corpus) measure the
same way: CUDA events around each run after warm-up, the median; relative L2 against a
float64 PyTorch run on the GPU; a roofline floor of max(FLOPs / datasheet peak of the math
sinter's `auto` precision allows, fewest bytes / copy bandwidth measured in the run); the
sinter half timed by bench/sinter_bench in its own process. torch and safetensors are
imported inside the functions that need them, so that the scripts' CPU-only paths (argument
parsing, listings, reports from stored results) run without them.
"""
import json
import math
import subprocess

# Datasheet dense rates, TFLOP/s (H100 SXM / H200): the floors use them as ceilings. An
# fp32-accurate product runs fastest as 3xTF32 (three tensor-core products), a third of TF32.
PEAK_TF32 = 494.7
PEAK_FP32 = max(66.9, PEAK_TF32 / 3)


def uniform(shape, lo, hi, gen):
    import torch
    return torch.rand(shape, generator=gen, device="cuda") * (hi - lo) + lo


def weight(shape, fan_in, gen):
    k = 1.0 / math.sqrt(fan_in)
    return uniform(shape, -k, k, gen)


def time_torch(f, t, iters, warmup):
    """(last output, median ms) of f(t) over `iters` runs after `warmup` untimed ones."""
    import torch
    out = None
    for _ in range(warmup):
        out = f(t)
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ms = []
    for _ in range(iters):
        start.record()
        out = f(t)
        stop.record()
        stop.synchronize()
        ms.append(start.elapsed_time(stop))
    ms.sort()
    return out, ms[len(ms) // 2]


def rel_l2(got, ref):
    """||got - ref|| / ||ref|| in float64; NaN when got has a non-finite value; for a reference
    of zeros, 0 when got is zero too, else inf."""
    import torch
    got = got.double().reshape(ref.shape)
    if not torch.isfinite(got).all():
        return float("nan")
    den = torch.linalg.vector_norm(ref)
    if den == 0:  # a reference of zeros (a graph zero by construction): exact or infinitely off
        return 0.0 if torch.count_nonzero(got).item() == 0 else float("inf")
    return (torch.linalg.vector_norm(got - ref) / den).item()


def copy_bandwidth():
    """Bytes per second read plus written by a 1 GiB device-to-device copy."""
    import torch
    a = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(10):
        b.copy_(a)
    stop.record()
    stop.synchronize()
    return 2 * 10 * a.numel() / (start.elapsed_time(stop) / 1e3)


def peak_tflops(math_mode):
    """Datasheet rate of the math sinter's `auto` precision allows: "tf32" or "fp32"."""
    return PEAK_TF32 if math_mode == "tf32" else PEAK_FP32


def floor_ms(flops, math_mode, nbytes, bandwidth):
    """(roofline floor in ms, "math" or "memory"): max(FLOPs / peak, bytes / bandwidth)."""
    math_s = flops / (peak_tflops(math_mode) * 1e12)
    mem_s = nbytes / bandwidth
    return max(math_s, mem_s) * 1e3, "math" if math_s > mem_s else "memory"


def save_tensors(t, path):
    """A dict of CUDA tensors as a safetensors file (what sinter_bench reads)."""
    from safetensors.torch import save_file
    save_file({k: v.contiguous().cpu() for k, v in t.items()}, path)


def load_tensors(path):
    from safetensors.torch import load_file
    return load_file(path)


def run_sinter_bench(bench_bin, sir, inputs, outputs, cache_dir, iterations, warmup=None,
                     timeout=None):
    """Runs bench/sinter_bench on one graph: (its JSON object, None) or (None, the error)."""
    cmd = [bench_bin, sir, "--inputs", inputs, "--output", outputs, "--cache-dir", cache_dir,
           "--iterations", str(iterations)]
    if warmup is not None:
        cmd += ["--warmup", str(warmup)]
    try:
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s"
    if res.returncode != 0:
        return None, res.stderr.strip() or f"exit status {res.returncode}"
    try:
        return json.loads(res.stdout), None
    except json.JSONDecodeError as e:
        return None, f"unreadable output ({e}): {res.stdout[:200]}"
