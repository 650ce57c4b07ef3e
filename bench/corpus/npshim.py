"""The few torch / torch.nn.functional calls the corpus twins make, written in numpy.

Only for checking the twins without torch (eval_small.py --check-twin): a generated twin
runs here unchanged, on float64 numpy arrays, and its output is compared with sinterc's
float64 reference. Keyword names and defaults follow PyTorch's signatures, so a twin that
passes a wrong keyword fails here as it would on the GPU. Straightforward loops over kernel
taps: fine for the small scale, far too slow for the full one.
"""
import itertools
import math
import types

import numpy as np

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _tup(v, d):
    return tuple(v) * (d if len(v) == 1 else 1) if isinstance(v, (list, tuple)) else (v,) * d


def _axes(dim, nd):
    dims = dim if isinstance(dim, (list, tuple)) else (dim,)
    return tuple(x % nd for x in dims)


# ---- convolutions


def _conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    d = x.ndim - 2
    s, p, dil = _tup(stride, d), _tup(padding, d), _tup(dilation, d)
    ks = w.shape[2:]
    xp = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p])
    out = [(x.shape[2 + i] + 2 * p[i] - dil[i] * (ks[i] - 1) - 1) // s[i] + 1 for i in range(d)]
    cin_g, cout_g = w.shape[1], w.shape[0] // groups
    y = np.zeros((x.shape[0], w.shape[0], *out))
    for taps in itertools.product(*(range(k) for k in ks)):
        sl = tuple(slice(t * dl, t * dl + st * (o - 1) + 1, st)
                   for t, dl, st, o in zip(taps, dil, s, out))
        patch = xp[(slice(None), slice(None)) + sl]
        for g in range(groups):
            wt = w[(slice(g * cout_g, (g + 1) * cout_g), slice(None)) + taps]
            y[:, g * cout_g:(g + 1) * cout_g] += np.einsum(
                "nc...,oc->no...", patch[:, g * cin_g:(g + 1) * cin_g], wt)
    if b is not None:
        y += b.reshape((1, -1) + (1,) * d)
    return y


def _conv_t(x, w, b=None, stride=1, padding=0, output_padding=0, groups=1, dilation=1):
    d = x.ndim - 2
    s, p, op, dil = (_tup(v, d) for v in (stride, padding, output_padding, dilation))
    ks, inn = w.shape[2:], x.shape[2:]
    full = [(inn[i] - 1) * s[i] + dil[i] * (ks[i] - 1) + 1 + op[i] for i in range(d)]
    cin_g, cout_g = x.shape[1] // groups, w.shape[1]
    y = np.zeros((x.shape[0], cout_g * groups, *full))
    for taps in itertools.product(*(range(k) for k in ks)):
        sl = tuple(slice(t * dl, t * dl + st * (n - 1) + 1, st)
                   for t, dl, st, n in zip(taps, dil, s, inn))
        for g in range(groups):
            wt = w[(slice(g * cin_g, (g + 1) * cin_g), slice(None)) + taps]
            y[(slice(None), slice(g * cout_g, (g + 1) * cout_g)) + sl] += np.einsum(
                "nc...,co->no...", x[:, g * cin_g:(g + 1) * cin_g], wt)
    crop = tuple(slice(p[i], full[i] - p[i]) for i in range(d))
    y = y[(slice(None), slice(None)) + crop]
    if b is not None:
        y = y + b.reshape((1, -1) + (1,) * d)
    return y


# ---- pools


def _pool(x, kernel_size, stride, padding, dilation, ceil_mode, kind, count_include_pad=True):
    d = x.ndim - 2
    k = _tup(kernel_size, d)
    s = _tup(stride if stride is not None and stride != [] else kernel_size, d)
    p, dil = _tup(padding, d), _tup(dilation, d)
    inn = x.shape[2:]
    out = []
    for i in range(d):
        span = inn[i] + 2 * p[i] - dil[i] * (k[i] - 1) - 1
        o = (-(-span // s[i]) if ceil_mode else span // s[i]) + 1
        if ceil_mode and (o - 1) * s[i] >= inn[i] + p[i]:
            o -= 1
        out.append(o)
    # right padding large enough for every window (ceil mode may run past the pad)
    extra = [max(0, (out[i] - 1) * s[i] + dil[i] * (k[i] - 1) + 1 - (inn[i] + 2 * p[i]))
             for i in range(d)]
    widths = [(0, 0), (0, 0)] + [(p[i], p[i] + extra[i]) for i in range(d)]
    if kind == "max":
        xp = np.pad(x, widths, constant_values=-np.inf)
        y = np.full(x.shape[:2] + tuple(out), -np.inf)
    else:
        xp = np.pad(x, widths)
        y = np.zeros(x.shape[:2] + tuple(out))
        # divisor: window cells inside the input (+ its padding when count_include_pad)
        ones = np.ones(inn)
        if count_include_pad:
            ones = np.pad(ones, [(p[i], p[i]) for i in range(d)])
            cnt = np.pad(ones, [(0, extra[i]) for i in range(d)])
        else:
            cnt = np.pad(ones, [(p[i], p[i] + extra[i]) for i in range(d)])
        div = np.zeros(tuple(out))
    for taps in itertools.product(*(range(kk) for kk in k)):
        sl = tuple(slice(t * dl, t * dl + st * (o - 1) + 1, st)
                   for t, dl, st, o in zip(taps, dil, s, out))
        patch = xp[(slice(None), slice(None)) + sl]
        if kind == "max":
            y = np.maximum(y, patch)
        else:
            y += patch
            div += cnt[sl]
    return y if kind == "max" else y / div


def _max_pool(x, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
    return _pool(x, kernel_size, stride, padding, dilation, ceil_mode, "max")


def _avg_pool(x, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
    return _pool(x, kernel_size, stride, padding, 1, ceil_mode, "avg", count_include_pad)


# ---- norms


def _bcast_c(v, nd):
    return v.reshape((1, -1) + (1,) * (nd - 2))


def _group_norm(x, num_groups, weight=None, bias=None, eps=1e-5):
    xs = x.reshape(x.shape[0], num_groups, -1)
    m, v = xs.mean(-1, keepdims=True), xs.var(-1, keepdims=True)
    y = ((xs - m) / np.sqrt(v + eps)).reshape(x.shape)
    if weight is not None:
        y = y * _bcast_c(weight, x.ndim) + _bcast_c(bias, x.ndim)
    return y


def _layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    ax = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    m, v = x.mean(ax, keepdims=True), x.var(ax, keepdims=True)
    y = (x - m) / np.sqrt(v + eps)
    return y * weight + bias if weight is not None else y


def _batch_norm(x, running_mean, running_var, weight=None, bias=None, training=False,
                momentum=0.1, eps=1e-5):
    assert not training
    y = (x - _bcast_c(running_mean, x.ndim)) / np.sqrt(_bcast_c(running_var, x.ndim) + eps)
    if weight is not None:
        y = y * _bcast_c(weight, x.ndim) + _bcast_c(bias, x.ndim)
    return y


def _instance_norm(x, running_mean=None, running_var=None, weight=None, bias=None,
                   use_input_stats=True, momentum=0.1, eps=1e-5):
    ax = tuple(range(2, x.ndim))
    m, v = x.mean(ax, keepdims=True), x.var(ax, keepdims=True)
    y = (x - m) / np.sqrt(v + eps)
    if weight is not None:
        y = y * _bcast_c(weight, x.ndim) + _bcast_c(bias, x.ndim)
    return y


# ---- elementwise and reductions


def _softplus(x, beta=1.0, threshold=20.0):
    soft = np.log1p(np.exp(np.minimum(x * beta, threshold))) / beta
    return np.where(x * beta > threshold, x, soft)


def _gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + _erf(x / math.sqrt(2)))


def _relu6(x):
    return np.clip(x, 0, 6)


def _logsumexp(x, dim, keepdim=False):
    ax = _axes(dim, x.ndim)
    m = x.max(axis=ax, keepdims=True)
    y = np.log(np.exp(x - m).sum(axis=ax, keepdims=True)) + m
    return y if keepdim else np.squeeze(y, axis=ax)


def _softmax(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def _clamp(x, min=None, max=None):
    if min is not None:
        x = np.maximum(x, min)
    if max is not None:
        x = np.minimum(x, max)
    return x


def _reduce(fn):
    return lambda x, dim, keepdim=False: fn(x, axis=_axes(dim, x.ndim), keepdims=keepdim)


def _flatten(x, start_dim=0, end_dim=-1):
    a, b = start_dim % x.ndim, end_dim % x.ndim
    return x.reshape(x.shape[:a] + (-1,) + x.shape[b + 1:])


torch = types.SimpleNamespace(
    relu=lambda x: np.maximum(x, 0), sigmoid=lambda x: 1 / (1 + np.exp(-x)), tanh=np.tanh,
    exp=np.exp, log=np.log, abs=np.abs, neg=np.negative, sqrt=np.sqrt,
    rsqrt=lambda x: 1 / np.sqrt(x), erf=_erf, clamp=_clamp, maximum=np.maximum,
    minimum=np.minimum, matmul=np.matmul, sum=_reduce(np.sum), mean=_reduce(np.mean),
    amax=_reduce(np.max), amin=_reduce(np.min), logsumexp=_logsumexp,
    reshape=np.reshape, flatten=_flatten)

F = types.SimpleNamespace(
    conv1d=_conv, conv2d=_conv, conv3d=_conv,
    conv_transpose1d=_conv_t, conv_transpose2d=_conv_t, conv_transpose3d=_conv_t,
    linear=lambda x, w, b=None: x @ w.T + (0 if b is None else b),
    silu=lambda x: x / (1 + np.exp(-x)), hardswish=lambda x: x * _relu6(x + 3) / 6,
    hardsigmoid=lambda x: _relu6(x + 3) / 6, mish=lambda x: x * np.tanh(_softplus(x)),
    gelu=_gelu, hardtanh=lambda x, min_val=-1.0, max_val=1.0: np.clip(x, min_val, max_val),
    leaky_relu=lambda x, negative_slope=0.01: np.where(x > 0, x, negative_slope * x),
    softplus=_softplus, elu=lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(x)),
    dropout=lambda x, p=0.5, training=True: x,
    softmax=_softmax, log_softmax=lambda x, dim: np.log(_softmax(x, dim)),
    group_norm=_group_norm, layer_norm=_layer_norm, batch_norm=_batch_norm,
    instance_norm=_instance_norm,
    max_pool1d=_max_pool, max_pool2d=_max_pool, max_pool3d=_max_pool,
    avg_pool1d=_avg_pool, avg_pool2d=_avg_pool, avg_pool3d=_avg_pool)


def run_twin(g, tensors):
    """Runs graph g's generated PyTorch twin on float64 numpy arrays."""
    ns = {"torch": torch, "F": F}
    exec(compile(g.twin_source(), f"<numpy twin {g.name}>", "exec"), ns)
    return ns["twin"](tensors)
