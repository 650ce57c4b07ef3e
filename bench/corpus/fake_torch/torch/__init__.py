"""A stand-in for torch over numpy, just enough to run bench/corpus_bench.py on a CPU.

Only for testing the benchmark script where there is no GPU and no torch:
  PYTHONPATH=bench/corpus/fake_torch SINTERC=build/tools/sinterc python3 bench/corpus_bench.py \
      --bench-bin bench/corpus/fake_torch/fake_sinter_bench.py --scale small --out /tmp/x
Tensors are numpy arrays (float32 for data, float64 for the reference); "CUDA" is the CPU;
torch.compile returns the function (FAKE_COMPILE_FAIL / FAKE_COMPILE_HANG = a substring of
a graph name make it fail or hang); the twins' ops come from ../npshim.py. Timings mean
nothing. torch.onnx.export stands in for the exporters with build/tests/frontend/sir2onnx
(for bench/onnx_device_check.py; see torch/onnx.py).
"""
import contextlib
import os
import sys
import time
import types

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
import npshim  # noqa: E402

__version__ = "0.0+numpy-stand-in"
float64, float32, uint8 = np.float64, np.float32, np.uint8


class Tensor(np.ndarray):
    def double(self):
        return self.astype(np.float64).view(Tensor)

    def cuda(self):
        return self

    def cpu(self):
        return self

    def contiguous(self):
        return self.copy(order="C").view(Tensor)  # keeps 0-d tensors 0-d

    def numel(self):
        return self.size

    def to(self, dtype):
        return self.astype(dtype).view(Tensor)

    def detach(self):
        return self

    def clone(self):
        return self.copy().view(Tensor)

    def copy_(self, other):
        self[...] = other
        return self


def as_tensor(a):
    return np.asarray(a).view(Tensor)


class Generator:
    def __init__(self, device=None):
        self.rng = np.random.default_rng(0)

    def manual_seed(self, seed):
        self.rng = np.random.default_rng(seed)
        return self


def _shape(dims):
    """torch.randn(2, 3) and torch.randn((2, 3)) alike."""
    return tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], int) else dims


def randn(*shape, generator=None, device=None):
    return as_tensor(generator.rng.standard_normal(_shape(shape)).astype(np.float32))


def rand(*shape, generator=None, device=None):
    return as_tensor(generator.rng.random(_shape(shape)).astype(np.float32))


def empty(n, dtype=None, device=None):
    return as_tensor(np.zeros(n, dtype=dtype))


def empty_like(a):
    return as_tensor(np.zeros_like(a))


def isfinite(a):
    return as_tensor(np.isfinite(a))


@contextlib.contextmanager
def no_grad():
    yield


def compile(f):
    name = f.__code__.co_filename
    if os.environ.get("FAKE_COMPILE_FAIL") and os.environ["FAKE_COMPILE_FAIL"] in name:
        raise RuntimeError("fake inductor failure\nsecond line")
    if os.environ.get("FAKE_COMPILE_HANG") and os.environ["FAKE_COMPILE_HANG"] in name:
        time.sleep(3600)
    return f


class _Event:
    def __init__(self, enable_timing=False):
        self.t = None

    def record(self):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return (other.t - self.t) * 1e3


class OutOfMemoryError(RuntimeError):
    pass


_dynamo = types.SimpleNamespace(reset=lambda: None)
linalg = types.SimpleNamespace(vector_norm=lambda a: as_tensor(np.linalg.norm(np.ravel(a))))
cuda = types.SimpleNamespace(Event=_Event, synchronize=lambda: None, empty_cache=lambda: None,
                             get_device_name=lambda: "CPU (numpy stand-in for torch)",
                             OutOfMemoryError=OutOfMemoryError, is_available=lambda: False)


def set_num_threads(n):
    pass
backends = types.SimpleNamespace(
    cudnn=types.SimpleNamespace(allow_tf32=True),
    cuda=types.SimpleNamespace(matmul=types.SimpleNamespace(allow_tf32=False)))


def _wrap(fn):
    return lambda *a, **k: as_tensor(fn(*a, **k))


for _name, _fn in vars(npshim.torch).items():
    globals()[_name] = _wrap(_fn)

from . import nn  # noqa: E402
from . import onnx  # noqa: E402

__all__ = ["nn", "onnx"]  # the submodules are part of the API (pyflakes: used)
