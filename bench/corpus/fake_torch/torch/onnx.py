"""torch.onnx of the numpy stand-in: export() writes the model with sir2onnx.

There is no graph to trace here: export() takes the .sir written next to the model's path
(bench/onnx_device_check.py writes NAME.sir beside NAME.onnx), the module's parameters as
the weights, and has build/tests/frontend/sir2onnx (or $SIR2ONNX) write what the dynamo or
TorchScript exporter would. Only for testing the script's plumbing without PyTorch.
"""
import os
import subprocess
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def export(module, args, f, dynamo=True, input_names=None, output_names=None, **kwargs):
    from safetensors.torch import save_file
    tool = os.environ.get("SIR2ONNX", os.path.join(HERE, "..", "..", "..", "..", "build",
                                                   "tests", "frontend", "sir2onnx"))
    sir = os.path.splitext(f)[0] + ".sir"
    if not os.path.exists(sir):
        raise RuntimeError(f"fake torch.onnx.export needs {sir} beside the model")
    with tempfile.TemporaryDirectory() as tmp:
        params = os.path.join(tmp, "params.safetensors")
        save_file({k: np.asarray(v, dtype=np.float32) for k, v in module.named_parameters()},
                  params)
        cmd = [tool, sir, params, f] + ([] if dynamo else ["--torchscript"])
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(r.stderr.strip())
