#!/usr/bin/env python3
"""Stand-in for bench/sinter_bench on a CPU: `sinterc eval` ($SINTERC) on the inputs, timed.

Prints sinter_bench's JSON object so that bench/corpus_bench.py can be tested end to end
without a GPU (see torch/__init__.py here). FAKE_SINTER_FAIL = a substring of a graph's path
makes it fail like a broken sinter_bench.
"""
import argparse
import json
import os
import subprocess
import sys
import time

p = argparse.ArgumentParser()
p.add_argument("graph")
p.add_argument("--inputs", required=True)
p.add_argument("--output", required=True)
p.add_argument("--cache-dir", required=True)
p.add_argument("--iterations", type=int, default=50)
p.add_argument("--warmup", type=int, default=5)
a = p.parse_args()
if os.environ.get("FAKE_SINTER_FAIL") and os.environ["FAKE_SINTER_FAIL"] in a.graph:
    sys.exit(f"sinter_bench: fake failure for {a.graph}")
t0 = time.perf_counter()
r = subprocess.run([os.environ.get("SINTERC", "sinterc"), "eval", a.graph, "--inputs", a.inputs,
                    "-o", a.output], capture_output=True, text=True)
if r.returncode:
    sys.exit(r.stderr.strip())
ms = (time.perf_counter() - t0) * 1e3
print(json.dumps({"graph": os.path.basename(a.graph), "kernels": [
    {"name": "eval", "template": "cpu", "tile": "", "role": "reference", "flops": 0, "bytes": 0}],
    "launches": 1, "cold_compile_s": 0.0, "warm_load_s": 0.0, "ms_median": ms, "ms_min": ms,
    "ms_max": ms, "graph_ms_median": ms, "graph_ms_min": ms, "iterations": a.iterations}))
