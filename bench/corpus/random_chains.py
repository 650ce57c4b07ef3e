#!/usr/bin/env python3
"""Random KernelBench-level-2-like chains: graphs nobody wrote by hand, drawn from a seed.

The corpus (corpus.py) holds graphs chosen one by one. A user's graph is rarely one of them,
so this module draws more: an anchor (linear, batched matmul, or a 1-D/2-D/3-D convolution
or transposed convolution with random channels, kernel, stride, padding, output padding,
dilation and groups) at a realistic size, then a tail of one to four ops drawn from what
KernelBench's chains use after it (activations, scalar and per-channel ops, residual adds of
an earlier value or of a second input, group / instance / layer / batch norm, softmax and
log_softmax, max and average pools, reductions over the channels or the positions, math ops,
maximum / minimum, views such as `flatten(2).mean(2)`). Every
graph is a `sirbuild.Graph`, so it has a .sir, tensors and a PyTorch twin like any corpus
graph, and `bench/corpus_bench.py --random COUNT[:SEED]` times and checks it the same way.

Graph i of seed S is always the same graph for one version of this file (its name carries
both: `<family>_r<S>n<i>_...`), so a graph that fails can be drawn again by name; a change to
the draws changes the graphs, so results name the commit that drew them. Sizes are those of the full corpus
(fp32 tensors under FULL_MAX_BYTES, estimated eager time 0.1-25 ms); the "small" scale
shrinks batch and positions only, and may not meet the small corpus's limits.

  python3 bench/corpus/random_chains.py --count 50 --seed 1 --list
  python3 bench/corpus/random_chains.py --count 50 --seed 1 --write DIR   # DIR/<name>.sir
  python3 bench/corpus/random_chains.py --count 24 --seed 7 \
      --compile build/tools/sinterc --arch sm_90a --arch sm_80   # exit 1 if any fails

--compile runs `sinterc compile` on every graph for every arch (no GPU needed) and prints
each failure's message: a graph PyTorch runs that sinter cannot compile is a gap.
"""
import argparse
import math
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus  # noqa: E402
from sirbuild import (ENTRIES, Graph, batch_norm, conv, conv_t, group_norm,  # noqa: E402
                      instance_norm, layer_norm, linear)

ACTIVATIONS = [
    ("relu", {}), ("gelu", {}), ("silu", {}), ("tanh", {}), ("sigmoid", {}),
    ("hardswish", {}), ("hardsigmoid", {}), ("mish", {}), ("leaky_relu", {"negative_slope": 0.1}),
    ("softplus", {}), ("elu", {"alpha": 1.0}), ("hardtanh", {"min_val": -1.0, "max_val": 1.0}),
    ("clamp", {"min": -0.5, "max": 0.5}), ("gelu", {"approximate": "tanh"}),
]
ABBREV = {"group_norm": "gn", "instance_norm": "in", "layer_norm": "ln", "batch_norm": "bn",
          "softmax": "sm", "log_softmax": "lsm", "max_pool": "maxpool", "avg_pool": "avgpool",
          "logsumexp": "lse", "leaky_relu": "lrelu", "hardswish": "hswish",
          "hardsigmoid": "hsig", "hardtanh": "htanh", "softplus": "splus"}

NORMS = ("group_norm", "instance_norm", "layer_norm")
POSITIVE = ("sigmoid", "softplus", "exp", "softmax")
BOUNDED = ("tanh", "sigmoid", "hardtanh", "clamp", "hardsigmoid", "softmax", "log_softmax",
           "group_norm", "instance_norm", "layer_norm", "batch_norm", "erf")

# Sizes of the anchors at the full scale (channels and attributes are kept at both scales).
CHANNELS = [3, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256]
TRIES = 400  # draws of one graph that may fail the size limits before draw() gives up


class _Reject(Exception):
    pass


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def _pick(r, items, weights=None):
    return r.choices(items, weights=weights)[0]


def _anchor(g, s, r):
    """Draws the anchor; returns (value, family, doc)."""
    fam = _pick(r, ["gemm", "matmul", "conv1d", "conv2d", "conv3d", "convt1d", "convt2d",
                    "convt3d"], [4, 1, 2, 5, 3, 1, 4, 3])
    if fam == "gemm":
        m = _pick(r, [128, 256, 512, 1024, 2048, 4096, 8192])
        k = _pick(r, [256, 512, 1024, 2048, 4096, 8192])
        n = _pick(r, [256, 512, 768, 1024, 2048, 4096, 8192])
        bias = r.random() < 0.8
        if r.random() < 0.2:  # a sequence batch, as an ONNX export or a transformer has it
            b = _pick(r, [4, 8, 16])
            x = g.input("x", [s(b, 2), s(max(m // b, 16), 4), s(k, 32)])
            return linear(g, "y", x, n, bias=bias), fam, f"Linear({k}->{n}) on [B, T, K]"
        x = g.input("x", [s(m, 4), s(k, 32)])
        return linear(g, "y", x, n, bias=bias), fam, f"Linear({k}->{n})"
    if fam == "matmul":
        b = _pick(r, [4, 8, 16, 32, 64])
        m = _pick(r, [128, 256, 512, 1024])
        k = _pick(r, [64, 128, 256, 512])
        n = _pick(r, [128, 256, 512, 1024])
        a = g.input("a", [s(b, 2), s(m, 8), s(k, 16)])
        if r.random() < 0.3:  # one [K, N] matrix for every batch
            w = g.weight("bm", [s(k, 16), s(n, 8)], k)
            return g.op("y", "matmul", a, w), fam, f"[{b}, {m}, {k}] @ [{k}, {n}]"
        w = g.input("bm", [s(b, 2), s(k, 16), s(n, 8)])
        return g.op("y", "matmul", a, w), fam, f"bmm[{b}]({m}x{k} @ {k}x{n})"
    d = int(fam[-2])
    transposed = fam.startswith("convt")
    cin = _pick(r, CHANNELS, [2, 2, 4, 1, 4, 1, 4, 1, 3, 1, 1])
    cout = _pick(r, CHANNELS[1:], [2, 4, 1, 4, 1, 4, 1, 3, 1, 1])
    groups = 1
    if r.random() < 0.25:
        groups = _pick(r, [gg for gg in _divisors(math.gcd(cin, cout)) if gg > 1] or [1])
    k = _pick(r, [1, 2, 3, 3, 3, 4, 5] if d < 3 else [1, 2, 3, 3, 3])
    stride = _pick(r, [1, 1, 2] if not transposed else [1, 2, 2, 3])
    dil = 2 if r.random() < 0.15 and k > 1 else 1
    pad = _pick(r, [0, (k - 1) * dil // 2, min(1, (k - 1) * dil // 2)])
    opad = 0
    if transposed and max(stride, dil) > 1 and r.random() < 0.4:
        opad = r.randrange(max(stride, dil))
    batch = {1: [16, 32, 64, 128], 2: [8, 16, 32, 64, 128], 3: [2, 4, 8, 16, 32]}[d]
    space = {1: [64, 128, 255, 512, 1024, 4096], 2: [14, 16, 28, 32, 33, 56, 64, 96, 128, 256],
             3: [8, 12, 16, 24, 32, 48, 64]}[d]
    n = _pick(r, batch)
    sp = [_pick(r, space)]
    if d > 1:
        sp += [sp[0] if r.random() < 0.7 else _pick(r, space) for _ in range(d - 1)]
    small = {1: 12, 2: 7, 3: 5}[d]
    x = g.input("x", [s(n, 2), cin] + [s(v, small) for v in sp])
    bias = r.random() < 0.75
    if transposed:
        y = conv_t(g, "y", x, cout, k, stride=stride, padding=pad, output_padding=opad,
                   dilation=dil, groups=groups, bias=bias)
    else:
        y = conv(g, "y", x, cout, k, stride=stride, padding=pad, dilation=dil, groups=groups,
                 bias=bias)
    name = ("ConvTranspose" if transposed else "Conv") + f"{d}d"
    attrs = [f"k={k}"] + [f"{a}={v}" for a, v, dflt in
                          (("stride", stride, 1), ("pad", pad, 0), ("opad", opad, 0),
                           ("dil", dil, 1), ("groups", groups, 1)) if v != dflt]
    return y, fam, f"{name}({cin}->{cout}, {', '.join(attrs)})"


def _tail_step(g, r, v, state):
    """Appends one op to the chain at `v`; returns (value, short tag, doc) or None."""
    sh = g.shapes[v]
    rank, c = len(sh), sh[1] if len(sh) > 1 else 1
    i = state["i"]
    state["i"] += 1
    out = f"t{i}"
    spatial = rank >= 3 and not state["reduced"]
    kinds = ["act", "act", "act", "scalar", "chan", "residual", "input", "gn", "ln", "bn",
             "softmax", "reduce_c"]
    weights = [4, 3, 2, 3, 2, 1, 1, 3, 2, 2, 2, 2]
    if spatial:
        kinds += ["in", "pool", "reduce_hw"]
        weights += [2, 3, 2]
    kinds += ["math", "minmax", "rsub", "dropout"]
    weights += [2, 1, 1, 1]
    if spatial:
        kinds += ["view_gap", "view_softmax"]
        weights += [1, 1]
    if state["reduced"]:  # after a reduction only pointwise ops follow
        kinds, weights = ["act", "scalar", "math"], [3, 2, 1]
    kind = _pick(r, kinds, weights)
    if kind == "math":
        # log, sqrt and rsqrt only of values that are positive; exp of bounded ones
        if state["last"] in POSITIVE:
            op = _pick(r, ["log", "sqrt", "rsqrt", "exp", "abs", "erf"])
        elif state["last"] in BOUNDED:
            op = _pick(r, ["exp", "abs", "neg", "erf"])
        else:
            op = _pick(r, ["abs", "neg", "erf"])
        return g.op(out, op, v), op, op
    if kind == "minmax":
        op = _pick(r, ["maximum", "minimum"])
        if r.random() < 0.5 and not state["second_input"]:
            state["second_input"] = True
            return g.op(out, op, v, g.input("skip", sh)), op[:3] + "in", f"{op} with an input"
        val = round(r.uniform(-0.5, 0.5), 3)
        return g.op(out, op, v, val), op[:3], f"{op} {val}"
    if kind == "rsub":
        val = round(r.uniform(0.5, 2.0), 3)
        return g.op(out, "sub", val, v), "rsub", f"{val} - x"
    if kind == "dropout":
        return g.op(out, "dropout", v, p=0.2), "drop", "dropout (inference)"
    if kind == "view_gap":  # x.flatten(2).mean(2): a global average pool through a view
        if state["last"] in NORMS:  # a constant, as for a mean straight after a norm (below)
            return None
        f = g.op(f"f{i}", "flatten", v, start_dim=2)
        state["reduced"] = True
        return g.op(out, "mean", f, dims=[2]), "gapview", "flatten(2).mean(2)"
    if kind == "view_softmax":  # a softmax over the positions of an [N, C, H*W] view
        f = g.op(f"f{i}", "reshape", v, shape=[sh[0], sh[1], -1])
        s = g.op(f"s{i}", _pick(r, ["softmax", "log_softmax"]), f, dim=_pick(r, [1, -1]))
        return g.op(out, "reshape", s, shape=list(sh)), "smview", "softmax of a [N, C, L] view"
    if kind == "act":
        op, attrs = _pick(r, ACTIVATIONS)
        return g.op(out, op, v, **attrs), ABBREV.get(op, op), op
    if kind == "scalar":
        op = _pick(r, ["mul", "add", "sub", "div"])
        val = round(r.uniform(0.5, 2.0), 3)
        return g.op(out, op, v, val), op, f"{op} {val}"
    if kind == "chan":
        op = _pick(r, ["add", "mul"])
        shape = [c] + [1] * (rank - 2)
        p = g.param(f"p{i}", shape, 0.5, 1.5) if op == "mul" else \
            g.param(f"p{i}", shape, -0.5, 0.5)
        return g.op(out, op, v, p), f"{op}c", f"{op} param{shape}"
    if kind == "residual":
        prev = [u for u in state["values"] if g.shapes[u] == sh and u != v]
        if not prev:
            return None
        u = _pick(r, prev)
        return g.op(out, "add", v, u), "res", f"+ {u}"
    if kind == "input":
        if state["second_input"]:
            return None
        state["second_input"] = True
        sk = g.input("skip", sh)
        op = _pick(r, ["add", "mul"])
        return g.op(out, op, v, sk), f"{op}in", f"{op} a second input"
    if kind == "gn":
        if state["norms"] >= 2:
            return None
        state["norms"] += 1
        gs = [d for d in _divisors(c) if d <= 512 and (d > 1 or c > 1)]
        groups = _pick(r, gs)
        return group_norm(g, out, v, groups, prefix=f"n{i}"), f"gn{groups}", \
            f"GroupNorm({groups})"
    if kind == "in":
        if state["norms"] >= 2:
            return None
        state["norms"] += 1
        return instance_norm(g, out, v, affine=r.random() < 0.5, prefix=f"n{i}"), "in", \
            "InstanceNorm"
    if kind == "ln":
        if state["norms"] >= 2:
            return None
        state["norms"] += 1
        nd = 1 if rank == 2 else _pick(r, [1, rank - 2, rank - 1])
        return layer_norm(g, out, v, nd, prefix=f"n{i}"), f"ln{nd}", \
            f"LayerNorm(last {nd} dims)"
    if kind == "bn":
        return batch_norm(g, out, v, prefix=f"n{i}"), "bn", "BatchNorm (inference)"
    if kind == "softmax":
        op = _pick(r, ["softmax", "softmax", "log_softmax"])
        dim = _pick(r, [1, -1]) if rank > 2 else 1
        return g.op(out, op, v, dim=dim), ABBREV[op] + ("c" if dim == 1 else "l"), \
            f"{op}(dim={dim})"
    if kind == "pool":
        d = rank - 2
        op = _pick(r, ["max_pool", "avg_pool"])
        k = _pick(r, [2, 2, 3])
        stride = _pick(r, [k, 2, 1]) if k == 3 else _pick(r, [2, 2, 1])
        pad = 1 if k == 3 and r.random() < 0.3 else 0
        attrs = {"kernel_size": k}
        if stride != k:
            attrs["stride"] = stride
        if pad:
            attrs["padding"] = pad
        if r.random() < 0.2:
            attrs["ceil_mode"] = True
        if op == "avg_pool" and pad and r.random() < 0.5:
            attrs["count_include_pad"] = False
        if op == "max_pool" and k == 3 and not pad and r.random() < 0.2:
            attrs["dilation"] = 2
        if min(sh[2:]) < k + 1:
            return None
        return g.op(out, op, v, **attrs), ABBREV[op] + str(k), f"{op}{d}d(k={k}, s={stride})"
    # A sum or mean straight after a norm adds up values whose mean the norm made beta (0
    # without affine): the output is a constant that checks nothing (fp32 noise against a
    # float64 zero).
    if kind in ("reduce_c", "reduce_hw"):
        over_c = kind == "reduce_c"
        op = _pick(r, ["sum", "mean", "max", "min", "logsumexp"] if over_c else
                   ["mean", "mean", "sum", "max", "min"])
        if op in ("sum", "mean") and state["last"] in NORMS:
            return None
        keep = r.random() < (0.7 if over_c else 0.6)
        state["reduced"] = True
        dims, tag, where = ([1], "c", "dim 1") if over_c else \
            (list(range(2, rank)), "hw", "the positions")
        return g.op(out, op, v, dims=dims, keepdim=keep), ABBREV.get(op, op) + tag, \
            f"{op} over {where}"
    raise AssertionError(kind)


def _build(g, s, seed, index):
    r = random.Random(f"{seed}:{index}")
    state = {"i": 0, "values": [], "second_input": False, "norms": 0, "reduced": False,
             "last": None}
    y, fam, doc = _anchor(g, s, r)
    state["values"].append(y)
    docs, tags, v = [doc], [], y
    steps = _pick(r, [1, 2, 3, 4], [2, 4, 3, 2])
    while len(tags) < steps:
        got = _tail_step(g, r, v, state)
        if got is None:
            continue
        v, tag, d = got
        state["last"] = g.ops[-1][1]
        state["values"].append(v)
        tags.append(tag)
        docs.append(d)
    g.doc = " -> ".join(docs)
    g.ret(v)
    return fam, tags


def draw(seed, index):
    """Registers graph `index` of `seed` in sirbuild.ENTRIES; returns its name."""
    for attempt in range(TRIES):
        key = f"{index}.{attempt}"
        try:
            probe = Graph("rnd_probe", "full")
            fam, tags = _build(probe, lambda full, small: full, seed, key)
            if corpus.check_limits(probe) or 4 * probe.elements() > 3.0e9:
                raise _Reject()
        except (AssertionError, _Reject):
            continue
        name = f"{fam}_r{seed}n{index}_" + "_".join(tags)
        name = re.sub(r"[^A-Za-z0-9_]", "", name)

        def builder(g, s, key=key):
            _build(g, s, seed, key)
        ENTRIES[name] = builder
        return name
    raise RuntimeError(f"random_chains: no graph fits for seed {seed} index {index}")


def register(count, seed):
    """Registers `count` graphs of `seed`; returns their names in order."""
    return [draw(seed, i) for i in range(count)]


def parse_spec(spec):
    """'COUNT' or 'COUNT:SEED' -> (count, seed)."""
    count, _, seed = spec.partition(":")
    return int(count), int(seed or 1)


def compile_all(names, sinterc, archs):
    """`sinterc compile` of every graph for every arch, in a scratch directory with its own
    kernel cache; 1 when any fails."""
    import subprocess
    import tempfile
    failed = 0
    with tempfile.TemporaryDirectory(prefix="random_chains_") as tmp:
        env = dict(os.environ, SINTER_CACHE_DIR=os.path.join(tmp, "cache"))
        for name in names:
            sir = os.path.join(tmp, name + ".sir")
            with open(sir, "w") as fh:
                fh.write(corpus.build(name, "full").sir())
            for arch in archs:
                cmd = [sinterc, "compile", sir, "--arch", arch, "-o", os.path.join(tmp, "out")]
                p = subprocess.run(cmd, capture_output=True, text=True, env=env)
                ok = p.returncode == 0
                failed += not ok
                msg = "" if ok else ": " + (p.stderr.strip() or f"exit {p.returncode}")
                print(f"{'ok  ' if ok else 'FAIL'} {arch} {name}{msg}", flush=True)
    print(f"{len(names) * len(archs) - failed}/{len(names) * len(archs)} compiled")
    return 1 if failed else 0


def check_twins(names):
    """Builds every graph's PyTorch twin and compiles its source (no torch needed); 1 when
    any fails."""
    failed = 0
    for name in names:
        try:
            compile(corpus.build(name, "full").twin_source(), name, "exec")
        except Exception as e:  # noqa: BLE001 - every failure is reported by name
            failed += 1
            print(f"FAIL {name}: {e!r}", flush=True)
    print(f"{len(names) - failed}/{len(names)} twins built")
    return 1 if failed else 0


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--list", action="store_true", help="names, sizes and chains")
    p.add_argument("--write", metavar="DIR", help="write DIR/<name>.sir at the full scale")
    p.add_argument("--compile", metavar="SINTERC", help="compile every graph with this sinterc")
    p.add_argument("--arch", action="append", help="--compile: target (repeatable; sm_90a)")
    p.add_argument("--check-twins", action="store_true",
                   help="build every graph's PyTorch twin source and compile it")
    args = p.parse_args(argv)
    names = register(args.count, args.seed)
    if args.check_twins:
        return check_twins(names)
    if args.compile:
        return compile_all(names, args.compile, args.arch or ["sm_90a"])
    if args.write:
        os.makedirs(args.write, exist_ok=True)
    for name in names:
        g = corpus.build(name, "full")
        if args.list:
            print(f"{name:48s} {g.flops / 1e9:8.2f} GFLOP {4 * g.elements() / 1e6:8.1f} MB "
                  f"est eager {g.est_eager_ms():6.2f} ms  {g.doc}")
        if args.write:
            with open(os.path.join(args.write, name + ".sir"), "w") as fh:
                fh.write(g.sir())
    return 0


if __name__ == "__main__":
    sys.exit(main())
