"""Builds one graph of the corpus twice from one description: as `.sir` text and as a
PyTorch twin (generated Python source, op by op, in the same order).

A builder calls `Graph.input / param / weight / op` (or the helpers `linear`, `conv`,
`conv_t` and the norms, which create an op's weights with PyTorch's init ranges); every op's
shape is inferred here with PyTorch's rules, so a graph knows its intermediates, its
anchors' multiply-adds (only the taps that meet real data) and its memory. `.sir` attributes
are written exactly as given; the twin passes them to the torch.nn.functional call that
IR.md names for the op.
"""
import keyword
import math

# The corpus: graph name -> builder(g, s), in the order the builders are defined (corpus.py,
# then the kernelbench_*.py files it imports).
ENTRIES = {}


def corpus(name):
    """Registers a builder under `name`."""
    def register(fn):
        assert name not in ENTRIES, name
        ENTRIES[name] = fn
        return fn
    return register

ANCHORS = ("conv", "conv_transpose", "linear", "matmul")
UNARY = ("relu", "sigmoid", "tanh", "silu", "hardswish", "hardsigmoid", "mish", "exp", "log",
         "abs", "neg", "sqrt", "rsqrt", "erf", "gelu", "hardtanh", "leaky_relu", "softplus",
         "elu", "clamp", "dropout")
BINARY = ("add", "sub", "mul", "div", "maximum", "minimum")
REDUCE = ("sum", "mean", "max", "min", "logsumexp")

# ----------------------------------------------------------------------------------------
# Shapes


def _spatial(v, d):
    if isinstance(v, (list, tuple)):
        assert len(v) in (1, d), f"spatial attribute {v} for {d} dims"
        return list(v) * d if len(v) == 1 else list(v)
    return [v] * d


def _broadcast(a, b):
    out = []
    for i in range(max(len(a), len(b))):
        x = a[len(a) - 1 - i] if i < len(a) else 1
        y = b[len(b) - 1 - i] if i < len(b) else 1
        assert x == y or x == 1 or y == 1, f"shapes {a} and {b} do not broadcast"
        out.append(max(x, y))
    return out[::-1]


def _pool_out(n, k, s, p, d, ceil):
    span = n + 2 * p - d * (k - 1) - 1
    o = (-(-span // s) if ceil else span // s) + 1
    if ceil and (o - 1) * s >= n + p:  # PyTorch: the last window must start inside
        o -= 1
    return o


def _taps(n_out, n_in, k, s, p, d):
    """(output, tap) pairs of a convolution dim whose input index is in range."""
    return sum(1 for o in range(n_out) for t in range(k) if 0 <= o * s - p + t * d < n_in)


def _taps_t(n_in, n_out, k, s, p, d):
    """(input, tap) pairs of a transposed convolution dim that land inside the output."""
    return sum(1 for i in range(n_in) for t in range(k) if 0 <= i * s - p + t * d < n_out)


def _infer(kind, shapes, attrs):
    """Output shape and multiply-adds of one op (PyTorch semantics, as IR.md states them)."""
    x = shapes[0]
    if kind in ("conv", "conv_transpose"):
        w = shapes[1]
        d = len(x) - 2
        s, p, dil = (_spatial(attrs.get(a, dflt), d) for a, dflt in
                     (("stride", 1), ("padding", 0), ("dilation", 1)))
        g = attrs.get("groups", 1)
        ks = w[2:]
        if kind == "conv":
            assert x[1] == w[1] * g and w[0] % g == 0, f"conv channels {x} {w} groups {g}"
            sp = [(x[2 + i] + 2 * p[i] - dil[i] * (ks[i] - 1) - 1) // s[i] + 1 for i in range(d)]
            macs = x[0] * w[0] * w[1]
            for i in range(d):
                macs *= _taps(sp[i], x[2 + i], ks[i], s[i], p[i], dil[i])
            cout = w[0]
        else:
            op = _spatial(attrs.get("output_padding", 0), d)
            assert x[1] == w[0] and x[1] % g == 0, f"conv_transpose channels {x} {w} groups {g}"
            assert all(op[i] < max(s[i], dil[i]) for i in range(d)), "output_padding too large"
            sp = [(x[2 + i] - 1) * s[i] - 2 * p[i] + dil[i] * (ks[i] - 1) + op[i] + 1
                  for i in range(d)]
            cout = w[1] * g
            macs = x[0] * x[1] * w[1]
            for i in range(d):
                macs *= _taps_t(x[2 + i], sp[i], ks[i], s[i], p[i], dil[i])
        assert min(sp) >= 1
        if len(shapes) > 2:
            assert shapes[2] == [cout]
        return [x[0], cout] + sp, macs
    if kind == "linear":
        w = shapes[1]
        assert x[-1] == w[1] and (len(shapes) < 3 or shapes[2] == [w[0]])
        return x[:-1] + [w[0]], math.prod(x[:-1]) * w[0] * w[1]
    if kind == "matmul":
        a, b = shapes
        assert len(a) >= 2 and len(b) >= 2 and a[-1] == b[-2]
        batch = _broadcast(a[:-2], b[:-2])
        return batch + [a[-2], b[-1]], math.prod(batch) * a[-2] * a[-1] * b[-1]
    if kind in UNARY:
        return list(x), 0
    if kind in BINARY:
        sh = [s for s in shapes if s is not None]
        return (_broadcast(sh[0], sh[1]) if len(sh) == 2 else list(sh[0])), 0
    if kind in REDUCE:
        dims = [dd % len(x) for dd in attrs["dims"]]
        keep = attrs.get("keepdim", False)
        return [1 if i in dims else n for i, n in enumerate(x) if keep or i not in dims], 0
    if kind in ("softmax", "log_softmax"):
        return list(x), 0
    if kind == "group_norm":
        assert x[1] % attrs["groups"] == 0, f"groups {attrs['groups']} do not divide {x[1]}"
        return list(x), 0
    if kind == "layer_norm":
        ns = attrs["normalized_shape"]
        assert x[len(x) - len(ns):] == ns
        return list(x), 0
    if kind in ("batch_norm", "instance_norm"):
        assert all(s == [x[1]] for s in shapes[1:]), f"{kind} stats/affine must be [C]"
        return list(x), 0
    if kind in ("max_pool", "avg_pool"):
        d = len(x) - 2
        k = _spatial(attrs["kernel_size"], d)
        s = _spatial(attrs.get("stride", attrs["kernel_size"]), d)
        p = _spatial(attrs.get("padding", 0), d)
        dil = _spatial(attrs.get("dilation", 1), d)
        ceil = attrs.get("ceil_mode", False)
        assert all(2 * p[i] <= k[i] for i in range(d)), "pad should be at most half the kernel"
        return x[:2] + [_pool_out(x[2 + i], k[i], s[i], p[i], dil[i], ceil) for i in range(d)], 0
    if kind == "reshape":
        shape = list(attrs["shape"])
        if -1 in shape:
            shape[shape.index(-1)] = math.prod(x) // -math.prod(shape)
        assert math.prod(shape) == math.prod(x)
        return shape, 0
    if kind == "flatten":
        a, b = attrs.get("start_dim", 0) % len(x), attrs.get("end_dim", -1) % len(x)
        return x[:a] + [math.prod(x[a:b + 1])] + x[b + 1:], 0
    raise AssertionError(f"unknown op {kind}")


# ----------------------------------------------------------------------------------------
# Graphs


def _num(v):
    """A float the way the .sir printer writes it: shortest round trip, always a float."""
    s = repr(float(v))
    if "e" in s:
        mant, exp = s.split("e")
        s = f"{mant}e{int(exp)}"
    return s


def _attr(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return _num(v)
    if isinstance(v, str):
        return f'"{v}"'
    return "[" + ", ".join(str(i) for i in v) + "]"


class Graph:
    """One corpus graph at one scale: arguments, ops in order, one returned value."""

    def __init__(self, name, scale):
        self.name, self.scale = name, scale
        self.doc = ""
        self.args = []  # (name, shape, "input" | "param", init)
        self.ops = []  # (out, kind, operands, attrs)
        self.shapes = {}
        self.macs = 0
        self.anchor_kinds = []
        self.out = None
        # Why the output is zero, for the few graphs whose math (or whose math with weights
        # drawn as PyTorch initialises them) makes it so: tests that need a nonzero output
        # to compare check that it is exactly zero instead.
        self.zero_output = None

    # arguments; init is ("randn",) or ("uniform", lo, hi)
    def _arg(self, name, shape, kind, init):
        assert name not in self.shapes, f"{self.name}: {name} defined twice"
        self.args.append((name, list(shape), kind, init))
        self.shapes[name] = list(shape)
        return name

    def input(self, name, shape, uniform=None):
        """A per-call input: N(0, 1), or U(lo, hi) with uniform=(lo, hi) (KernelBench's
        torch.rand inputs are U(0, 1))."""
        init = ("randn",) if uniform is None else ("uniform", uniform[0], uniform[1])
        return self._arg(name, shape, "input", init)

    def param(self, name, shape, lo, hi):
        return self._arg(name, shape, "param", ("uniform", lo, hi))

    def param_randn(self, name, shape):
        """A parameter drawn N(0, 1) (a module's nn.Parameter(torch.randn(shape)))."""
        return self._arg(name, shape, "param", ("randn",))

    def weight(self, name, shape, fan_in):
        k = 1.0 / math.sqrt(fan_in)
        return self.param(name, shape, -k, k)

    def op(self, out, kind, *operands, **attrs):
        assert out not in self.shapes, f"{self.name}: {out} defined twice"
        # the twin makes each value a Python local next to `tensors`, `torch` and `F`
        assert out.isidentifier() and not keyword.iskeyword(out) and \
            out not in ("tensors", "torch", "F"), f"{self.name}: bad value name {out}"
        shapes = [self.shapes[o] if isinstance(o, str) else None for o in operands]
        shape, macs = _infer(kind, shapes, attrs)
        self.ops.append((out, kind, list(operands), attrs))
        self.shapes[out] = shape
        self.macs += macs
        if kind in ANCHORS:
            self.anchor_kinds.append(kind)
        return out

    def ret(self, v):
        self.out = v

    # ---- derived facts
    @property
    def flops(self):
        return 2 * self.macs

    @property
    def math(self):
        """Math class of the floor: sinter's `auto` runs convolutions in TF32 and
        linear / matmul fp32-accurate (3xTF32, a third of the TF32 rate)."""
        return "tf32" if self.anchor_kinds[0] in ("conv", "conv_transpose") else "fp32"

    @property
    def out_shape(self):
        return self.shapes[self.out]

    def elements(self):
        return sum(math.prod(s) for s in self.shapes.values())

    def io_bytes(self):
        """Fewest bytes a run must move: inputs, params and the output, once each."""
        return 4 * (sum(math.prod(a[1]) for a in self.args) + math.prod(self.out_shape))

    def est_eager_ms(self):
        """A rough guess of PyTorch eager's time (only to keep sizes in range): each op
        moves its operands and result once at 3 TB/s; an fp32 GEMM runs at 45 TFLOP/s,
        a TF32 convolution at 150."""
        t = 0.0
        for out, kind, operands, attrs in self.ops:
            nbytes = 4 * (math.prod(self.shapes[out]) +
                          sum(math.prod(self.shapes[o]) for o in operands if isinstance(o, str)))
            t += nbytes / 3.0e12
            if kind in ANCHORS:
                _, macs = _infer(kind, [self.shapes[o] for o in operands], attrs)
                t += 2 * macs / (45e12 if kind in ("linear", "matmul") else 150e12)
        return t * 1e3

    # ---- text
    def sir(self):
        lines = [f"# {self.name}: {self.doc}   (corpus, {self.scale} scale)"]
        if self.zero_output:
            lines.append(f"# output zero: {self.zero_output}")
        args = []
        for name, shape, kind, _ in self.args:
            p = "param " if kind == "param" else ""
            args.append(f"%{name}: {p}f32[{','.join(map(str, shape))}]")
        head = f"graph {self.name}("
        cur, rows = head, []
        for i, a in enumerate(args):
            piece = a + ("," if i + 1 < len(args) else ") {")
            if len(cur) + len(piece) + 1 > 96 and cur.strip() and cur != head:
                rows.append(cur.rstrip())
                cur = " " * len(head)
            cur += piece + " "
        rows.append(cur.rstrip())
        lines += rows
        for out, kind, operands, attrs in self.ops:
            ops = ", ".join(f"%{o}" if isinstance(o, str) else _num(o) for o in operands)
            at = ""
            if attrs:
                at = " {" + ", ".join(f"{k} = {_attr(v)}" for k, v in attrs.items()) + "}"
            lines.append(f"  %{out} = {kind}({ops}){at}")
        lines.append(f"  return %{self.out}")
        lines.append("}")
        return "\n".join(lines) + "\n"

    def twin_source(self):
        """PyTorch source computing the graph from a dict of tensors, op by op."""
        ref = {a[0]: f'tensors["{a[0]}"]' for a in self.args}
        body = []
        for out, kind, operands, attrs in self.ops:
            o = [ref[v] if isinstance(v, str) else _num(v) for v in operands]
            # the first tensor operand's shape (a number may come first: 1.5 - x)
            x = next(v for v in operands if isinstance(v, str))
            body.append(f"    {out} = {_torch_expr(kind, o, attrs, self.shapes[x])}")
            ref[out] = out
        return (f"def twin(tensors):\n    # {self.name} ({self.scale}): {self.doc}\n"
                + "\n".join(body) + f"\n    return {ref[self.out]}\n")


def _kw(attrs, names):
    return "".join(f", {n}={attrs[n]!r}" for n in names if n in attrs)


def _torch_expr(kind, o, a, xshape):
    """One op as a PyTorch expression with the IR's semantics (IR.md's table)."""
    d = len(xshape) - 2
    if kind == "conv":
        return (f"F.conv{d}d({', '.join(o)}"
                + _kw(a, ("stride", "padding", "dilation", "groups")) + ")")
    if kind == "conv_transpose":
        return (f"F.conv_transpose{d}d({', '.join(o)}"
                + _kw(a, ("stride", "padding", "output_padding", "groups", "dilation")) + ")")
    if kind == "linear":
        return f"F.linear({', '.join(o)})"
    if kind == "matmul":
        return f"torch.matmul({o[0]}, {o[1]})"
    simple = {"relu": "torch.relu", "sigmoid": "torch.sigmoid", "tanh": "torch.tanh",
              "silu": "F.silu", "hardswish": "F.hardswish", "hardsigmoid": "F.hardsigmoid",
              "mish": "F.mish", "exp": "torch.exp", "log": "torch.log", "abs": "torch.abs",
              "neg": "torch.neg", "sqrt": "torch.sqrt", "rsqrt": "torch.rsqrt",
              "erf": "torch.erf"}
    if kind in simple:
        return f"{simple[kind]}({o[0]})"
    if kind == "gelu":
        return f"F.gelu({o[0]}" + _kw(a, ("approximate",)) + ")"
    if kind == "hardtanh":
        return f"F.hardtanh({o[0]}" + _kw(a, ("min_val", "max_val")) + ")"
    if kind == "leaky_relu":
        return f"F.leaky_relu({o[0]}" + _kw(a, ("negative_slope",)) + ")"
    if kind == "softplus":
        return f"F.softplus({o[0]}" + _kw(a, ("beta", "threshold")) + ")"
    if kind == "elu":
        return f"F.elu({o[0]}" + _kw(a, ("alpha",)) + ")"
    if kind == "clamp":
        return f"torch.clamp({o[0]}" + _kw(a, ("min", "max")) + ")"
    if kind == "dropout":
        return f"F.dropout({o[0]}" + _kw(a, ("p",)) + ", training=False)"
    if kind in ("add", "sub", "mul", "div"):
        sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[kind]
        return f"{o[0]} {sym} {o[1]}"
    if kind in ("maximum", "minimum"):
        # torch.maximum takes two tensors; with a number it is a one-sided clamp.
        tensors = [v for v in o if not _is_number(v)]
        nums = [v for v in o if _is_number(v)]
        if nums:
            side = "min" if kind == "maximum" else "max"
            return f"torch.clamp({tensors[0]}, {side}={nums[0]})"
        return f"torch.{kind}({o[0]}, {o[1]})"
    if kind in REDUCE:
        fn = {"sum": "torch.sum", "mean": "torch.mean", "max": "torch.amax",
              "min": "torch.amin", "logsumexp": "torch.logsumexp"}[kind]
        return f"{fn}({o[0]}, dim={tuple(a['dims'])!r}, keepdim={a.get('keepdim', False)!r})"
    if kind in ("softmax", "log_softmax"):
        return f"F.{kind}({o[0]}, dim={a['dim']!r})"
    eps = f", eps={a['eps']!r}" if "eps" in a else ""
    if kind == "group_norm":
        aff = f", {o[1]}, {o[2]}" if len(o) == 3 else ""
        return f"F.group_norm({o[0]}, {a['groups']!r}{aff}{eps})"
    if kind == "layer_norm":
        aff = f", {o[1]}, {o[2]}" if len(o) == 3 else ""
        return f"F.layer_norm({o[0]}, {tuple(a['normalized_shape'])!r}{aff}{eps})"
    if kind == "batch_norm":
        aff = f", weight={o[3]}, bias={o[4]}" if len(o) == 5 else ""
        return f"F.batch_norm({o[0]}, {o[1]}, {o[2]}{aff}, training=False{eps})"
    if kind == "instance_norm":
        aff = f", weight={o[1]}, bias={o[2]}" if len(o) == 3 else ""
        return f"F.instance_norm({o[0]}{aff}{eps})"
    if kind == "max_pool":
        return (f"F.max_pool{d}d({o[0]}, {a['kernel_size']!r}"
                + _kw(a, ("stride", "padding", "dilation", "ceil_mode")) + ")")
    if kind == "avg_pool":
        return (f"F.avg_pool{d}d({o[0]}, {a['kernel_size']!r}"
                + _kw(a, ("stride", "padding", "ceil_mode", "count_include_pad")) + ")")
    if kind == "reshape":
        return f"torch.reshape({o[0]}, {tuple(a['shape'])!r})"
    if kind == "flatten":
        return (f"torch.flatten({o[0]}, {a.get('start_dim', 0)!r}, "
                f"{a.get('end_dim', -1)!r})")
    raise AssertionError(f"no PyTorch twin for {kind}")


def _is_number(s):
    try:
        float(s)
        return True
    except ValueError:
        return False


# ---- helpers that create an anchor or a norm together with its params


def _only(**attrs):
    """Attributes that differ from the IR's defaults (only those are written)."""
    dflt = {"stride": 1, "padding": 0, "dilation": 1, "groups": 1, "output_padding": 0}
    return {k: v for k, v in attrs.items() if v != dflt.get(k, object())}


def linear(g, out, x, n, bias=True, w="w", b="b"):
    k = g.shapes[x][-1]
    ops = [x, g.weight(w, [n, k], k)]
    if bias:
        ops.append(g.weight(b, [n], k))
    return g.op(out, "linear", *ops)


def conv(g, out, x, cout, k, stride=1, padding=0, dilation=1, groups=1, bias=True, w="w",
         b="b"):
    cin, d = g.shapes[x][1], len(g.shapes[x]) - 2
    ks = _spatial(k, d)
    fan_in = cin // groups * math.prod(ks)
    ops = [x, g.weight(w, [cout, cin // groups] + ks, fan_in)]
    if bias:
        ops.append(g.weight(b, [cout], fan_in))
    return g.op(out, "conv", *ops, **_only(stride=stride, padding=padding, dilation=dilation,
                                          groups=groups))


def conv_t(g, out, x, cout, k, stride=1, padding=0, output_padding=0, dilation=1, groups=1,
           bias=True, w="w", b="b"):
    cin, d = g.shapes[x][1], len(g.shapes[x]) - 2
    ks = _spatial(k, d)
    fan_in = cout // groups * math.prod(ks)  # PyTorch's init: weight.size(1) * kernel
    ops = [x, g.weight(w, [cin, cout // groups] + ks, fan_in)]
    if bias:
        ops.append(g.weight(b, [cout], fan_in))
    return g.op(out, "conv_transpose", *ops,
                **_only(stride=stride, padding=padding, output_padding=output_padding,
                        dilation=dilation, groups=groups))


def _affine(g, shape, prefix):
    return [g.param(prefix + "gamma", shape, 0.5, 1.5), g.param(prefix + "beta", shape, -0.5, 0.5)]


def group_norm(g, out, x, groups, eps=1e-5, prefix=""):
    c = g.shapes[x][1]
    return g.op(out, "group_norm", x, *_affine(g, [c], prefix), groups=groups, eps=eps)


def layer_norm(g, out, x, ndims, eps=1e-5, prefix=""):
    ns = g.shapes[x][-ndims:]
    return g.op(out, "layer_norm", x, *_affine(g, ns, prefix), normalized_shape=ns, eps=eps)


def batch_norm(g, out, x, eps=1e-5, prefix=""):
    c = [g.shapes[x][1]]
    mean = g.param(prefix + "mean", c, -0.5, 0.5)
    var = g.param(prefix + "var", c, 0.5, 1.5)
    return g.op(out, "batch_norm", x, mean, var, *_affine(g, c, prefix), eps=eps)


def instance_norm(g, out, x, affine=True, eps=1e-5, prefix=""):
    aff = _affine(g, [g.shapes[x][1]], prefix) if affine else []
    return g.op(out, "instance_norm", x, *aff, eps=eps)
