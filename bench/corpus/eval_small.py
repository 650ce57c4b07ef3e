#!/usr/bin/env python3
"""Runs the float64 CPU reference (`sinterc eval`) on every small graph of the corpus.

For each graph: random inputs and params drawn with numpy the way the benchmark draws them
(corpus.make_tensors' distributions), written as safetensors; `sinterc eval` run on them and
timed; its output checked for shape and finiteness. No GPU, no torch. With --check-twin the
output is also compared with the graph's PyTorch twin run on numpy (npshim.py: the
torch.nn.functional calls the twins use, written in numpy float64).

  python3 bench/corpus/eval_small.py --sinterc build/tools/sinterc [--only a,b] [--check-twin]
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import corpus  # noqa: E402


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        b = np.ascontiguousarray(a, dtype="<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(b)]}
        blobs.append(b)
        offset += len(b)
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as fh:
        fh.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def read_safetensors(path):
    with open(path, "rb") as fh:
        data = fh.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        a, b = meta["data_offsets"]
        assert meta["dtype"] == "F32", meta
        out[name] = np.frombuffer(data[8 + n + a:8 + n + b], dtype="<f4").reshape(meta["shape"])
    return out


def draw(g, rng):
    """numpy twin of corpus.make_tensors (same distributions, not the same numbers)."""
    t = {}
    for name, shape, _, init in g.args:
        if init[0] == "randn":
            t[name] = rng.standard_normal(shape).astype(np.float32)
        else:
            t[name] = rng.uniform(init[1], init[2], shape).astype(np.float32)
    return t


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sinterc", required=True, help="path of the sinterc binary")
    p.add_argument("--only", help="comma-separated graph names")
    p.add_argument("--scale", default="small", choices=corpus.SCALES)
    p.add_argument("--threads", type=int, default=0, help="sinterc eval --threads (0: all)")
    p.add_argument("--check-twin", action="store_true",
                   help="compare with the PyTorch twin run on numpy (npshim.py)")
    args = p.parse_args()
    names = args.only.split(",") if args.only else list(corpus.ENTRIES)
    rng = np.random.default_rng(2026)
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            g = corpus.build(name, args.scale)
            t = draw(g, rng)
            inputs, params, out = (os.path.join(tmp, f) for f in
                                   ("in.safetensors", "params.safetensors", "out.safetensors"))
            write_safetensors(inputs, {a[0]: t[a[0]] for a in g.args if a[2] == "input"})
            write_safetensors(params, {a[0]: t[a[0]] for a in g.args if a[2] == "param"})
            cmd = [args.sinterc, "eval", corpus.path_of(name, args.scale), "--inputs", inputs,
                   "--params", params, "--output", out]
            if args.threads:
                cmd += ["--threads", str(args.threads)]
            t0 = time.perf_counter()
            res = subprocess.run(cmd, capture_output=True, text=True)
            secs = time.perf_counter() - t0
            if res.returncode != 0:
                print(f"{name:40s} FAILED ({secs:.2f} s): {res.stderr.strip()}", flush=True)
                failed += 1
                continue
            got = read_safetensors(out)[g.out]
            note = ""
            if list(got.shape) != g.out_shape:
                note, failed = f"shape {list(got.shape)} != {g.out_shape}", failed + 1
            elif not np.isfinite(got).all():
                note, failed = "non-finite output", failed + 1
            elif args.check_twin:
                import npshim
                ref = npshim.run_twin(g, {k: v.astype(np.float64) for k, v in t.items()})
                err = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300))
                note = f"twin rel L2 {err:.1e}"
                if not err < 1e-5:
                    note, failed = note + " MISMATCH", failed + 1
            print(f"{name:40s} {secs:6.3f} s  out {g.out_shape}  {note}", flush=True)
    print(f"{len(names) - failed}/{len(names)} ok")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
