"""save_file / load_file over eval_small.py's plain safetensors reader and writer."""
import numpy as np
from eval_small import read_safetensors, write_safetensors
from torch import as_tensor


def save_file(tensors, path):
    write_safetensors(path, {k: np.asarray(v) for k, v in tensors.items()})


def load_file(path):
    return {k: as_tensor(np.array(v)) for k, v in read_safetensors(path).items()}
