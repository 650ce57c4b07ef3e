#!/usr/bin/env python3
"""GPU check and timing of the tensor-core kernels (conv_igemm, gemm) on the device machine.

Reads the cases written by `SINTER_TC_DUMP=<dir> kernels_tc_tests --gtest_filter=Dump.*`
(<dir>/cases.json plus one .cu per kernel, compiled to <name>.cubin beforehand; a case may
have several kernels, launched in order: the output phases of a strided transposed conv),
launches each kernel through the CUDA driver API (ctypes) with torch tensors bound to the
sinter::Buffers slots, and compares against a float64 torch reference on fresh random data:
relative L2 error of y / C, of the per-(n,c) statistics and of the row reduction. Outputs
are poisoned with NaN before every launch. Workspace slots a kernel declares are filled as
the planner's fill steps do (zeros for the persistent GEMM's stream-K slots) before every
launch. Persistent kernels run on min(tiles, SM count) blocks, as the runtime launches them,
and persistent GEMMs are checked again on forced block counts (--grids for small cases,
--bench-grids for benchmarked ones), so that their tails split in many ways. Cases marked
`bench` are timed with CUDA events (median of many launches after warm-up) next to PyTorch
doing the same graph; --ab times GEMM cases of one shape in alternating rounds on the same
data (e.g. a committed baseline's cubins from --extra-dir against the new ones), with
--ab-torch PyTorch's F.linear in the case's precision (cuBLAS) as one more member of each
round: GEMMs at full tensor-core rate are held by the card's power and clock state, which
moves between rounds, so a comparison with cuBLAS is only fair within a round; --ab-power
samples the SM clock and board power (NVML) during each timing and reports each member's
TFLOP/s per GHz of the clock it ran at and its joules per PFLOP.

usage: tc_check.py DIR [--extra-dir DIR2] [--reps N] [--only SUBSTR[,SUBSTR...]]
                   [--kind conv|gemm] [--grids N,N,...] [--bench-grids N,...]
                   [--ab CASE,CASE,...[;CASE,...]] [--rounds R] [--ab-only] [--ab-torch]
                   [--ab-power]
"""
import argparse, ctypes, json, os, sys, math, threading, time
import torch
import torch.nn.functional as F

TOL = {"tf32": 2e-3, "tf32x3": 1e-5, "ffma": 1e-5}

cuda = ctypes.CDLL("libcuda.so.1")


def ck(r, what):
    if r != 0:
        name = ctypes.c_char_p()
        cuda.cuGetErrorName(r, ctypes.byref(name))
        raise RuntimeError(f"{what}: {name.value.decode() if name.value else r}")


def encode_tensor_map(dst, tensor, m):
    """cuTensorMapEncodeTiled into the 128 bytes at dst: fp32, no interleave, the 128-byte
    swizzle or none, L2 promotion 256 B, zeros outside (the runtime's choices)."""
    rank = len(m["dims"])
    dims = (ctypes.c_uint64 * rank)(*m["dims"])
    strides = (ctypes.c_uint64 * max(rank - 1, 1))(*(m["strides"] or [0]))
    box = (ctypes.c_uint32 * rank)(*m["box"])
    ones = (ctypes.c_uint32 * rank)(*([1] * rank))
    ck(cuda.cuTensorMapEncodeTiled(ctypes.c_void_p(dst), 7, rank, ctypes.c_void_p(tensor.data_ptr()),
                                   dims, strides, box, ones, 0, 3 if m["swizzle128"] else 0,
                                   int(os.environ.get("TC_L2_PROMOTION", "3")), 0),
       "cuTensorMapEncodeTiled")


class Kernel:
    def __init__(self, cubin, name, smem):
        self.mod = ctypes.c_void_p()
        data = open(cubin, "rb").read()
        ck(cuda.cuModuleLoadData(ctypes.byref(self.mod), data), f"load {cubin}")
        self.fn = ctypes.c_void_p()
        ck(cuda.cuModuleGetFunction(ctypes.byref(self.fn), self.mod, name.encode()), f"get {name}")
        ck(cuda.cuFuncSetAttribute(self.fn, 8, ctypes.c_int(smem)), f"smem {name}")  # MAX_DYNAMIC_SHARED
        regs = ctypes.c_int()
        cuda.cuFuncGetAttribute(ctypes.byref(regs), 4, self.fn)  # NUM_REGS
        self.regs = regs.value
        self.smem = smem

    def launch(self, grid, block, slots, tensor_maps=()):
        buf = (ctypes.c_uint64 * 16)(*[(t.data_ptr() if t is not None else 0) for t in slots])
        # The second argument of kernels that copy through TMA (kernel-abi.md): four 128-byte
        # maps, 64-byte aligned, encoded as the runtime does.
        maps = ctypes.create_string_buffer(4 * 128 + 64)
        base = (ctypes.addressof(maps) + 63) // 64 * 64
        for i, m in enumerate(tensor_maps):
            encode_tensor_map(base + 128 * i, slots[m["slot"]], m)
        params = (ctypes.c_void_p * 2)(ctypes.addressof(buf), base)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        ck(cuda.cuLaunchKernel(self.fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                               self.smem, stream, params, None), "launch")


SMS = None


def sm_count():
    global SMS
    if SMS is None:
        SMS = torch.cuda.get_device_properties(0).multi_processor_count
    return SMS


class Launches:
    """The kernels of one case, launched in order on the same buffers (a strided transposed
    convolution runs as one kernel per output phase)."""

    def __init__(self, d, case):
        self.ks = [(Kernel(os.path.join(d, kk["name"] + ".cubin"), kk["name"], kk["smem"]), kk)
                   for kk in case["kernels"]]
        self.regs = max(k.regs for k, _ in self.ks)
        # Workspace the kernels share by slot (e.g. the weight rows a conv's pack kernel
        # writes for the kernels after it), and the fill the planner gives it before a launch.
        sizes, self.fills = {}, {}
        for _, kk in self.ks:
            for need in kk.get("workspace", []):
                sizes[need["slot"]] = max(sizes.get(need["slot"], 0), need["bytes"])
                self.fills[need["slot"]] = need.get("fill", "none")
        self.workspace = {slot: torch.empty(n, dtype=torch.uint8, device="cuda")
                          for slot, n in sizes.items()}
        self.persistent = any(kk.get("persistent") for _, kk in self.ks)
        self.tiles = max((kk["grid"][0] for _, kk in self.ks if kk.get("persistent")), default=0)

    def launch(self, slots, blocks=None):
        """blocks: the block count of persistent kernels (default min(tiles, SM count x their
        blocks per SM), as the runtime launches them)."""
        slots = list(slots)
        for slot, t in self.workspace.items():
            if slots[slot] is None:
                slots[slot] = t
        for slot, fill in self.fills.items():
            t = self.workspace[slot]
            if fill == "zero":
                t.zero_()
            elif fill in ("+inf", "-inf"):
                t.view(torch.float32).fill_(float(fill + "inity"))
        for k, kk in self.ks:
            grid = list(kk["grid"])
            if kk.get("persistent"):
                per_sm = kk.get("persistent_per_sm", 1)
                grid[0] = min(grid[0], sm_count() * per_sm) if blocks is None else blocks
            k.launch(grid, kk["block"], slots, kk.get("tensor_maps", ()))


def epi(name, v):
    if name == "identity":
        return v
    if name == "relu":
        return torch.relu(v)
    if name == "affine":
        return v * 0.5 + 0.25
    raise ValueError(name)


def rel(a, ref):
    a = a.double()
    if torch.isnan(a).any():
        return float("nan")
    return ((a - ref).norm() / ref.norm().clamp_min(1e-300)).item()


class PowerSampler:
    """SM clock (MHz) and board power (W) of GPU 0, sampled every 10 ms through NVML by a
    background thread; window() gives the means over the samples taken since mark()."""

    def __init__(self):
        self.nvml = ctypes.CDLL("libnvidia-ml.so.1")
        self.dev = ctypes.c_void_p()
        for r, what in ((self.nvml.nvmlInit_v2(), "nvmlInit_v2"),
                        (self.nvml.nvmlDeviceGetHandleByIndex_v2(0, ctypes.byref(self.dev)),
                         "nvmlDeviceGetHandleByIndex_v2")):
            if r != 0:
                raise RuntimeError(f"{what}: NVML error {r}")
        self.samples, self.start = [], 0
        threading.Thread(target=self.run, daemon=True).start()  # ends with the process

    def run(self):
        mhz, mw = ctypes.c_uint(), ctypes.c_uint()
        while True:
            if (self.nvml.nvmlDeviceGetClockInfo(self.dev, 1, ctypes.byref(mhz)) == 0 and  # SM
                    self.nvml.nvmlDeviceGetPowerUsage(self.dev, ctypes.byref(mw)) == 0):
                self.samples.append((mhz.value, mw.value / 1000.0))
            time.sleep(0.01)

    def mark(self):
        self.start = len(self.samples)

    def window(self):
        w = self.samples[self.start:]
        if not w:
            return float("nan"), float("nan")
        return sum(x[0] for x in w) / len(w), sum(x[1] for x in w) / len(w)


def time_ms(fn, reps):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record(); fn(); e.record(); e.synchronize()
        ts.append(s.elapsed_time(e))
    ts.sort()
    return ts[len(ts) // 2]


def run_conv(c, k, reps, rows):
    dev = "cuda"
    N, Cin, Cout, G = c["N"], c["Cin"], c["Cout"], c["groups"]
    x = torch.randn(N, Cin, *c["in"], device=dev)
    wshape = [Cin, Cout // G, *c["kernel"]] if c["transposed"] else [Cout, Cin // G, *c["kernel"]]
    fan = (Cin // G) * math.prod(c["kernel"])
    w = torch.randn(*wshape, device=dev) / math.sqrt(fan)
    bias = torch.randn(Cout, device=dev) if c["bias"] else None
    y = torch.full((N, Cout, *c["out"]), float("nan"), device=dev)
    stats = torch.zeros(N * Cout * 2, device=dev, dtype=torch.float64)
    slots = [x, w, bias, y, stats] + [None] * 11
    k.launch(slots)
    torch.cuda.synchronize()
    # float64 reference
    xd, wd = x.double(), w.double()
    bd = bias.double() if bias is not None else None
    outpad = None
    if c["transposed"]:
        outpad = [c["out"][d] - ((c["in"][d] - 1) * c["stride"][d] - 2 * c["padding"][d] +
                                 c["dilation"][d] * (c["kernel"][d] - 1) + 1) for d in range(3)]
        ref = F.conv_transpose3d(xd, wd, bd, stride=c["stride"], padding=c["padding"],
                                 output_padding=outpad, groups=G, dilation=c["dilation"])
    else:
        ref = F.conv3d(xd, wd, bd, stride=c["stride"], padding=c["padding"],
                       dilation=c["dilation"], groups=G)
    ref = epi(c["epilogue"], ref)
    err = {}
    if c["store"]:
        err["y"] = rel(y, ref)
    if c["stats"]:
        r2 = ref.reshape(N, Cout, -1)
        st = stats.view(N, Cout, 2)
        err["sum"] = rel(st[..., 0], r2.sum(-1))
        err["sumsq"] = rel(st[..., 1], (r2 * r2).sum(-1))
    tol = TOL[c["math"]]
    ok = all(v < tol for v in err.values())
    line = {"case": c["name"], "ok": ok, "tol": tol, "regs": k.regs, "tile": c["tile"], **err}
    if c["bench"]:
        def go():
            stats.zero_()
            k.launch(slots)
        ms = time_ms(go, reps)
        line.update(ms=ms, tflops=c["flops"] / ms / 1e9)
        if not c["name"].rsplit("_v", 1)[-1].isdigit():
            torch.backends.cudnn.allow_tf32 = True
            gam = torch.randn(Cout, device=dev); bet = torch.randn(Cout, device=dev)
            def torch_conv():
                # The case's own convolution, as cuDNN runs it in fp32 with TF32 allowed.
                if c["transposed"]:
                    return F.conv_transpose3d(x, w, bias, stride=c["stride"],
                                              padding=c["padding"], output_padding=outpad,
                                              groups=G, dilation=c["dilation"])
                return F.conv3d(x, w, bias, stride=c["stride"], padding=c["padding"],
                                dilation=c["dilation"], groups=G)
            if c["stats"]:
                def torch_graph():  # S0's graph: the conv, ReLU, group norm
                    return F.group_norm(torch.relu(torch_conv()), 8, gam, bet)
                line["torch_graph_ms"] = time_ms(torch_graph, reps)
            line["torch_conv_ms"] = time_ms(torch_conv, reps)
            # What cuDNN's TF32 conv gets against the same float64 reference (y only).
            line["torch_conv_err"] = rel(epi(c["epilogue"], torch_conv()), ref)
    rows.append(line)
    del xd, wd, ref


def run_gemm(c, k, reps, rows, grids=(), bench_grids=()):
    dev = "cuda"
    M, N, K = c["M"], c["N"], c["K"]
    bs = c["batchShape"]
    nb = math.prod(bs) if bs else 1
    # Dense operands with the given batch strides: build full tensors, broadcast by stride 0.
    def operand(rows_, cols_, strides):
        shape = [bs[d] if strides[d] != 0 else 1 for d in range(len(bs))]
        return torch.randn(*shape, rows_, cols_, device=dev)
    A = operand(M, K, c["batchStrideA"]) if bs else torch.randn(M, K, device=dev)
    if c["bTransposed"]:
        B = (operand(N, K, c["batchStrideB"]) if bs else torch.randn(N, K, device=dev)) / math.sqrt(K)
    else:
        B = (operand(K, N, c["batchStrideB"]) if bs else torch.randn(K, N, device=dev)) / math.sqrt(K)
    bias = torch.randn(N, device=dev) if c["bias"] else None
    gamma = torch.randn(N, device=dev)
    beta = torch.randn(N, device=dev)
    C = torch.full((*bs, M, N), float("nan"), device=dev) if c["store"] else None
    red = None
    rr = c["rowReduce"]
    if rr:
        init = {1: float("inf"), 2: float("-inf"), 3: 0.0}[rr]
        red = torch.full((nb * M,), init, device=dev)
    slots = [A, B, bias, C, red, None, gamma, beta] + [None] * 8
    Ad, Bd = A.double(), B.double()
    ref = Ad @ (Bd.transpose(-1, -2) if c["bTransposed"] else Bd)
    ref = ref.expand(*bs, M, N) if bs else ref
    if bias is not None:
        ref = ref + bias.double()
    ref = epi(c["epilogue"], ref)
    G = c["normCols"]
    if G:
        r = ref.reshape(*ref.shape[:-1], N // G, G)
        mean = r.mean(-1, keepdim=True)
        var = ((r - mean) ** 2).mean(-1, keepdim=True)
        ref = ((r - mean) / torch.sqrt(var + c["eps"])).reshape(ref.shape)
        if c["affine"]:
            ref = ref * gamma.double() + beta.double()
        ref = epi(c["postNorm"], ref)
    want = None
    if rr:
        flat = ref.reshape(-1, N)
        want = {1: lambda t: t.min(-1).values, 2: lambda t: t.max(-1).values,
                3: lambda t: t.sum(-1)}[rr](flat)

    def check(blocks=None):
        """Poisons the outputs, launches on `blocks` blocks (persistent kernels; None: as the
        runtime does) and returns the errors against the float64 reference."""
        if C is not None:
            C.fill_(float("nan"))
        if red is not None:
            red.fill_(init)
        k.launch(slots, blocks)
        torch.cuda.synchronize()
        e = {}
        if c["store"]:
            e["C"] = rel(C, ref)
        if rr:
            e["rowred"] = rel(red, want)
        return e

    err = check()
    # The persistent kernel on other block counts: tails split in other places, a tile among
    # two blocks at other k tiles, more blocks than the workspace holds (every tile whole),
    # more blocks than tiles (idle blocks).
    grid_errs = {}
    if k.persistent:
        T = k.tiles
        forced = list(bench_grids) if c["bench"] else list(grids) + [T - 1, T + 3]
        for g in sorted({g for g in forced if 0 < g and g != min(T, sm_count())}):
            e = check(g)
            grid_errs[g] = max(e.values(), key=lambda v: (math.isnan(v), v))
    tol = TOL[c["math"]]
    ok = all(v < tol for v in list(err.values()) + list(grid_errs.values()))
    line = {"case": c["name"], "ok": ok, "tol": tol, "regs": k.regs, "tile": c["tile"], **err}
    if grid_errs:
        line["grids"] = {str(g): v for g, v in grid_errs.items()}
    if c["bench"]:
        def go():
            if red is not None:
                red.fill_(init)
            k.launch(slots)
        ms = time_ms(go, reps)
        line.update(ms=ms, tflops=c["flops"] / ms / 1e9)
        if not c["name"].rsplit("_v", 1)[-1].isdigit() and c["bTransposed"] and not bs:
            # PyTorch in the case's precision: cuBLAS TF32 for tf32, fp32 otherwise.
            torch.backends.cuda.matmul.allow_tf32 = c["math"] == "tf32"
            if G and rr == 1:
                add = torch.randn(1, N, 1, 1, device=dev)
                def torch_graph():
                    y = F.linear(A, B, bias)
                    n = F.group_norm(y, N // G, gamma, beta)
                    return n.min(1, keepdim=True).values + add
                line["torch_graph_ms"] = time_ms(torch_graph, reps)
            line["torch_linear_ms"] = time_ms(lambda: F.linear(A, B, bias), reps)
            # What PyTorch's own linear gets against the same float64 reference.
            ty = F.linear(A, B, bias).double()
            want = Ad @ Bd.transpose(-1, -2)
            line["torch_linear_err"] = rel(ty, want + bias.double() if bias is not None else want)
            torch.backends.cuda.matmul.allow_tf32 = False
    rows.append(line)
    del Ad, Bd


def gemm_inputs(c):
    """Random operands of a GEMM case for timing (no reference): the slots and the row
    reduction's buffer and identity."""
    M, N, K = c["M"], c["N"], c["K"]
    assert not c["batchShape"] and c["bTransposed"], "--ab times unbatched linear layers"
    A = torch.randn(M, K, device="cuda")
    B = torch.randn(N, K, device="cuda") / math.sqrt(K)
    bias = torch.randn(N, device="cuda") if c["bias"] else None
    C = torch.empty(M, N, device="cuda") if c["store"] else None
    rr = c["rowReduce"]
    init = {0: 0.0, 1: float("inf"), 2: float("-inf"), 3: 0.0}[rr]
    red = torch.full((M,), init, device="cuda") if rr else None
    gamma, beta = torch.randn(N, device="cuda"), torch.randn(N, device="cuda")
    return [A, B, bias, C, red, None, gamma, beta] + [None] * 8, red, init


def ab_timing(cases, groups, rounds, reps, with_torch=False, power=None):
    """Times each group of GEMM cases of one shape in `rounds` alternating rounds on the same
    data (the card's clocks and power state move between calls, less within a round); with
    `with_torch`, PyTorch's F.linear on the same operands (cuBLAS; TF32 for tf32 cases, else
    fp32) is timed in each round after the group's kernels, under the name "torch". With
    `power` (a PowerSampler), each timing's mean SM clock and board power are kept too."""
    out = []
    for group in groups:
        names = [n for n in group.split(",") if n]
        missing = [n for n in names if n not in cases]
        if missing:
            print("ab: no case", missing, flush=True)
            continue
        cs = [cases[n] for n in names]
        keys = ("M", "N", "K", "bias", "store", "rowReduce", "normCols", "math")
        if any(tuple(x[k] for k in keys) != tuple(cs[0][k] for k in keys) for x in cs):
            print("ab: cases of different shapes:", names, flush=True)
            continue
        slots, red, init = gemm_inputs(cs[0])
        ks = [Launches(x["_dir"], x) for x in cs]
        times = {n: [] for n in names + ["torch"]}
        clocks = {n: [] for n in names + ["torch"]}
        tf32 = cs[0]["math"] == "tf32"

        def timed(n, fn):
            if power:
                power.mark()
            times[n].append(time_ms(fn, reps))
            if power:
                clocks[n].append(power.window())
        for _ in range(rounds):
            for n, k in zip(names, ks):
                def go():
                    if red is not None:
                        red.fill_(init)
                    k.launch(slots)
                timed(n, go)
            if with_torch:
                torch.backends.cuda.matmul.allow_tf32 = tf32
                timed("torch", lambda: F.linear(slots[0], slots[1], slots[2]))
                torch.backends.cuda.matmul.allow_tf32 = False
        members = list(zip(names, cs))
        if with_torch:
            members.append(("torch", dict(cs[0], tile="PyTorch F.linear, cuBLAS " +
                                          ("TF32" if tf32 else "fp32"))))
        for n, x in members:
            ts = times[n]
            line = {"ab": n, "tile": x["tile"], "ms": ts,
                    "tflops": [x["flops"] / t / 1e9 for t in ts]}
            if power:
                line["mhz"] = [c[0] for c in clocks[n]]
                line["watts"] = [c[1] for c in clocks[n]]
            out.append(line)
            print(json.dumps(line), flush=True)
        torch.cuda.empty_cache()
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--extra-dir", action="append", default=[],
                    help="another dump's folder (its cases.json and cubins), e.g. a baseline's")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--only", default="", help="cases whose name contains any of these "
                    "comma-separated substrings")
    ap.add_argument("--kind", default="", help="conv or gemm: only cases of that kind")
    ap.add_argument("--grids", default="1,2,3,5,7,11,31,64,100,131,132,133",
                    help="block counts every small persistent GEMM is checked on as well")
    ap.add_argument("--bench-grids", default="97,131",
                    help="block counts benchmarked persistent GEMMs are checked on as well")
    ap.add_argument("--ab", default="", help="groups (';'-separated) of GEMM cases of one "
                    "shape (','-separated) timed in alternating rounds")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ab-only", action="store_true", help="only the --ab timings")
    ap.add_argument("--ab-torch", action="store_true",
                    help="time PyTorch's F.linear in every --ab round too")
    ap.add_argument("--ab-power", action="store_true",
                    help="sample the SM clock and board power (NVML) during every --ab timing")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    torch.manual_seed(1234)
    torch.zeros(1, device="cuda")  # the primary context becomes current
    print(json.dumps({"device": torch.cuda.get_device_name(0), "sms": sm_count()}), flush=True)
    cases = []
    for d in [a.dir] + a.extra_dir:
        for c in json.load(open(os.path.join(d, "cases.json"))):
            c["_dir"] = d
            cases.append(c)
    grids = [int(g) for g in a.grids.split(",") if g]
    bench_grids = [int(g) for g in a.bench_grids.split(",") if g]
    rows = []
    for c in cases if not a.ab_only else []:
        if (a.only and not any(o in c["name"] for o in a.only.split(","))) or (
                a.kind and c["kind"] != a.kind):
            continue
        try:
            k = Launches(c["_dir"], c)
            if c["kind"] == "conv":
                run_conv(c, k, a.reps, rows)
            else:
                run_gemm(c, k, a.reps, rows, grids, bench_grids)
        except Exception as e:  # report and go on with the next case
            rows.append({"case": c["name"], "ok": False, "error": str(e)[:300]})
            torch.cuda.synchronize()
        print(json.dumps(rows[-1]), flush=True)
        torch.cuda.empty_cache()
    ab = ab_timing({c["name"]: c for c in cases}, [g for g in a.ab.split(";") if g], a.rounds,
                   a.reps, a.ab_torch, PowerSampler() if a.ab_power else None) if a.ab else []
    if a.out:
        json.dump({"rows": rows, "ab": ab}, open(a.out, "w"), indent=1)
    print("\n%-28s %-5s %-10s %-10s %-10s %5s %8s %7s" % ("case", "ok", "err1", "err2", "err3", "regs", "ms", "TF/s"))
    for r in rows:
        errs = [v for kk, v in r.items() if kk in ("y", "C", "sum", "sumsq", "rowred")]
        errs += [None] * (3 - len(errs))
        f = lambda v: "-" if v is None else "%.2e" % v
        print("%-28s %-5s %-10s %-10s %-10s %5s %8s %7s" % (
            r["case"][:28], r["ok"], f(errs[0]), f(errs[1]), f(errs[2]), r.get("regs", "-"),
            "%.3f" % r["ms"] if "ms" in r else "-", "%.1f" % r["tflops"] if "tflops" in r else "-"))
        if "grids" in r:
            worst = max(r["grids"].items(), key=lambda kv: (math.isnan(kv[1]), kv[1]))
            print("    %d forced block counts, worst %s: %.2e" % (len(r["grids"]), worst[0], worst[1]))
        for kk in ("torch_graph_ms", "torch_conv_ms", "torch_conv_err", "torch_linear_ms",
                   "torch_linear_err"):
            if kk in r:
                print("    %s = %.3g" % (kk, r[kk]))
        if "error" in r:
            print("    error:", r["error"])
    for r in ab:
        print("%-28s %s ms  %s TF/s  (%s)" % (r["ab"][:28], " ".join("%.3f" % t for t in r["ms"]),
                                           " ".join("%.1f" % t for t in r["tflops"]), r["tile"]))
        if "mhz" in r:
            # TFLOP/s per GHz of the clock held while it ran: the kernel's rate at a given
            # clock; and joules per PFLOP: what the card's power limit trades against the clock.
            med = lambda v: sorted(v)[len(v) // 2]
            print("    %-24s clock %s MHz  power %s W  |  median %.1f TF/s at %.0f MHz: %.1f TF/s "
                  "per GHz, %.0f J/PFLOP" % (
                      "", " ".join("%.0f" % m for m in r["mhz"]),
                      " ".join("%.0f" % w for w in r["watts"]), med(r["tflops"]), med(r["mhz"]),
                      med([t / m * 1000 for t, m in zip(r["tflops"], r["mhz"])]),
                      med([w / t * 1000 for w, t in zip(r["watts"], r["tflops"])])))
    sys.exit(0 if all(r["ok"] for r in rows) else 1)


if __name__ == "__main__":
    main()
