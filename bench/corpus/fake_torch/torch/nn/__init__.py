"""torch.nn of the numpy stand-in: `functional`, and Module and Parameter just enough to
wrap a twin (bench/onnx_device_check.py)."""
from . import functional

__all__ = ["functional", "Module", "Parameter"]


def Parameter(data, requires_grad=True):
    return data


class Module:
    def __init__(self):
        self._parameters = {}

    def register_parameter(self, name, value):
        self._parameters[name] = value
        setattr(self, name, value)

    def named_parameters(self):
        return list(self._parameters.items())

    def eval(self):
        return self

    def __call__(self, *args):
        return self.forward(*args)
