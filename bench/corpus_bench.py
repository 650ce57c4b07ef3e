#!/usr/bin/env python3
"""sinter vs PyTorch eager vs torch.compile on every graph of the corpus, in one run on one GPU.

The corpus (bench/corpus/corpus.py) gives each graph its .sir, its tensors, a PyTorch twin,
its FLOPs and the math class of its floor. For each graph: the tensors are drawn on the GPU
from a per-graph seed and saved as safetensors; bench/sinter_bench compiles and times the
.sir (outputs poisoned before every run, median after warm-up) and writes its outputs; the
twin runs in float64 on the GPU as the reference; PyTorch eager and torch.compile run the
twin on the same data, timed the same way (bench/bench_common.py); every output gets its
relative L2 error against the reference; the floor is max(FLOPs / peak, bytes of inputs,
params and outputs / measured copy bandwidth), peaks as in bench/side_by_side.py.

torch.compile of ~50 graphs is made cheap by warming Inductor's on-disk caches first: a pool
of worker processes (one fresh interpreter per graph, --compile-workers at a time, each with
a timeout) compiles and runs every twin once, in parallel; the timing loop's torch.compile
then loads from the caches. A graph whose warm-up failed or timed out is not compiled again
(its error is recorded). --compile-from takes compile_ms / compile_err from an earlier
result file instead; --no-compile skips torch.compile.

Every graph's result is appended to DIR/corpus.jsonl as soon as it is measured (so a run cut
short keeps what it measured); at the end DIR/corpus.json and DIR/corpus.md are written and
the table is printed last. A failure of one graph (sinter_bench error, OOM, ...) is recorded
and the run goes on.

Usage (on the GPU machine, from the repository root):
  python3 bench/corpus_bench.py --bench-bin build/bench/sinter_bench --out /tmp/corpus \\
      [--only NAME,FAMILY,...] [--scale full] [--iterations 20] \\
      [--compile-from OLD.json | --no-compile] [--extra-bench-bin base=OLD/sinter_bench]
  python3 bench/corpus_bench.py --list                      # no GPU needed
  python3 bench/corpus_bench.py --report-from DIR/corpus.jsonl --out DIR   # no GPU needed
"""
import argparse
import gc
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor, as_completed

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "corpus"))
import bench_common  # noqa: E402
import corpus  # noqa: E402

# Relative L2 a sinter output may have (as `sinterc check`): fp32-accurate graphs 1e-5,
# graphs whose convolution may run in TF32 2e-3. Over it, the report marks the error.
TOLERANCE = {"fp32": 1e-5, "tf32": 2e-3}


# ----------------------------------------------------------------------------------------
# Selection and data


def select(only, random_names=()):
    """Graph names from a comma-separated list of names and family tags (gemm, conv2d...);
    'random' stands for the random chains registered by --random."""
    names = list(corpus.ENTRIES)
    if not only:
        return names
    picked = []
    for item in only.split(","):
        item = item.strip()
        if item in corpus.ENTRIES:
            hits = [item]
        elif item == "random":
            hits = list(random_names)
        else:
            hits = [n for n in names if corpus.family(n) == item]
        if not hits:
            raise SystemExit(f"corpus_bench: '{item}' is neither a graph nor a family "
                             f"(families: {', '.join(sorted({corpus.family(n) for n in names}))})")
        picked += [n for n in hits if n not in picked]
    return picked


def graph_seed(name, base):
    return (base * 1000003 + corpus.seed_of(name)) % (1 << 62)


def draw(g, base_seed):
    import torch
    gen = torch.Generator(device="cuda")
    gen.manual_seed(graph_seed(g.name, base_seed))
    return corpus.make_tensors(g, gen, "cuda")


def sir_path(g, scratch):
    """The committed .sir when it is what the generator writes, else a fresh copy."""
    path = corpus.path_of(g.name, g.scale)
    text = g.sir()
    if os.path.exists(path) and open(path).read() == text:
        return path
    path = os.path.join(scratch, f"{g.name}_{g.scale}.sir")
    with open(path, "w") as fh:
        fh.write(text)
    return path


# ----------------------------------------------------------------------------------------
# torch.compile warm-up: one fresh interpreter per graph, several at a time


def compile_worker(name, scale, seed):
    """Compiles and runs one twin once (warming Inductor's caches); prints one JSON line."""
    res = {"name": name}
    try:
        import torch
        g = corpus.build(name, scale)
        t = draw(g, seed)
        f = torch.compile(corpus.twin(g))
        t0 = time.perf_counter()
        with torch.no_grad():
            f(t)
        torch.cuda.synchronize()
        res.update(ok=True, seconds=time.perf_counter() - t0)
    except Exception as e:  # noqa: BLE001 - any failure is a result to report
        res.update(ok=False, error=short_error(e))
    print(json.dumps(res), flush=True)
    return 0


def warm_compiles(names, args):
    """name -> {"ok", "seconds" | "error"}: torch.compile of every graph, in parallel."""
    env = dict(os.environ, TORCHINDUCTOR_COMPILE_THREADS="1")  # not part of the cache key
    deadline = time.monotonic() + args.compile_budget
    me = os.path.abspath(__file__)

    def one(name):
        remaining = deadline - time.monotonic()
        if remaining < 10:
            return {"ok": False, "error": "the warm-up's time budget was spent"}
        timeout = min(args.compile_timeout, remaining)
        cmd = [sys.executable, me, "--compile-worker", name, "--scale", args.scale,
               "--seed", str(args.seed)] + (["--random", args.random] if args.random else [])
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
            return {"ok": False, "error": f"warm-up timed out after {timeout:.0f} s"}
        lines = [line for line in out.splitlines() if line.startswith("{")]
        if lines:
            res = json.loads(lines[-1])
        else:
            tail = err.strip().splitlines()[-1:] or [f"exit status {p.returncode}"]
            res = {"ok": False, "error": f"worker died: {tail[0][:300]}"}
        res["wall_s"] = time.monotonic() - t0
        return res

    results = {}
    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=args.compile_workers) as pool:
        futures = {pool.submit(one, n): n for n in names}
        for fut in as_completed(futures):
            name = futures[fut]
            try:
                results[name] = fut.result()
            except Exception as e:  # noqa: BLE001
                results[name] = {"ok": False, "error": f"{type(e).__name__}: {e}"}
            r = results[name]
            state = f"{r['seconds']:.1f} s" if r.get("ok") else f"FAILED: {r.get('error')}"
            print(f"[warm-up {len(results)}/{len(names)}] {name}: {state}", flush=True)
    print(f"torch.compile warm-up: {sum(r.get('ok', False) for r in results.values())}/"
          f"{len(names)} graphs in {time.monotonic() - t0:.0f} s", flush=True)
    return results


# ----------------------------------------------------------------------------------------
# One graph


def short_error(e):
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0][:300]}" if msg else type(e).__name__


def error_vs(got, ref, row, key):
    """Relative L2 of one output (NaN without a reference; a failure is recorded)."""
    if ref is None:
        return math.nan
    try:
        return bench_common.rel_l2(got, ref)
    except Exception as e:  # noqa: BLE001 - e.g. a wrong shape
        row[f"{key}_error"] = f"comparing with the reference: {short_error(e)}"
        return math.nan


def bench_graph(name, args, bw, bins, warm, stored):
    """All measurements of one graph as a flat dict (errors recorded, never raised)."""
    import torch
    g = corpus.build(name, args.scale)
    row = {"name": name, "family": corpus.family(name), "scale": args.scale, "math": g.math,
           "flops": g.flops, "io_bytes": g.io_bytes(), "out_shape": g.out_shape}
    row["floor_ms"], row["floor_kind"] = bench_common.floor_ms(g.flops, g.math, g.io_bytes(),
                                                               bw)
    scratch = os.path.join(args.scratch, f"corpus_{os.getpid()}_{name}")
    os.makedirs(scratch, exist_ok=True)
    t = ref = None
    try:
        t = draw(g, args.seed)
        sir = sir_path(g, scratch)
        inputs = os.path.join(scratch, "in.safetensors")
        bench_common.save_tensors(t, inputs)
        outs = {}  # label -> CPU tensor
        for key, path in bins:
            out_file = os.path.join(scratch, f"out_{key}.safetensors")
            sb, err = bench_common.run_sinter_bench(
                path, sir, inputs, out_file, os.path.join(scratch, f"cache_{key}"),
                args.iterations, args.warmup, args.sinter_timeout)
            if err is not None:
                row[f"{key}_error"] = err
                continue
            row.update({f"{key}_ms": sb["ms_median"], f"{key}_min": sb["ms_min"],
                        f"{key}_max": sb["ms_max"], f"{key}_graph_ms": sb["graph_ms_median"],
                        f"{key}_cold_s": sb["cold_compile_s"],
                        f"{key}_warm_s": sb["warm_load_s"],
                        f"{key}_launches": sb["launches"]})
            if key == "sinter":
                row["kernels"] = [{k: v for k, v in kk.items() if k in ("name", "template",
                                                                         "tile", "role")}
                                  for kk in sb.get("kernels", [])]
            try:
                got = bench_common.load_tensors(out_file)
                outs[key] = got[g.out] if g.out in got or len(got) != 1 else \
                    next(iter(got.values()))
                del got
            except Exception as e:  # noqa: BLE001
                row[f"{key}_error"] = f"output not readable: {short_error(e)}"
            os.remove(out_file)
        os.remove(inputs)

        f = corpus.twin(g)
        with torch.no_grad():
            try:
                td = {k: v.double() for k, v in t.items()}
                ref = f(td)
                del td
            except Exception as e:  # noqa: BLE001 - e.g. out of memory in float64
                row["ref_error"] = short_error(e)
                ref = None
            for key, got in outs.items():
                row[f"{key}_err"] = error_vs(got.cuda(), ref, row, key)
            del outs
            try:
                out, row["eager_ms"] = bench_common.time_torch(f, t, args.iterations,
                                                               args.warmup)
                row["eager_err"] = error_vs(out, ref, row, "eager")
                del out
            except Exception as e:  # noqa: BLE001
                row["eager_error"] = short_error(e)
            torch.cuda.empty_cache()
            if stored is not None:
                old = stored.get(name, {})
                for k in ("compile_ms", "compile_err", "compile_error", "compile_first_s"):
                    if k in old:
                        row[k] = old[k]
                if not old:
                    row["compile_error"] = "not in the --compile-from file"
            elif warm is not None:
                w = warm.get(name, {"ok": False, "error": "no warm-up"})
                row["compile_warmup_s"] = w.get("seconds", w.get("wall_s"))
                if not w.get("ok"):
                    row["compile_error"] = f"warm-up: {w.get('error')}"
                else:
                    try:
                        cf = torch.compile(f)
                        t0 = time.perf_counter()
                        cf(t)
                        torch.cuda.synchronize()
                        row["compile_first_s"] = time.perf_counter() - t0
                        out, row["compile_ms"] = bench_common.time_torch(
                            cf, t, args.iterations, args.warmup)
                        row["compile_err"] = error_vs(out, ref, row, "compile")
                        del out
                    except Exception as e:  # noqa: BLE001
                        row["compile_error"] = short_error(e)
    except Exception as e:  # noqa: BLE001 - anything else: record it, go on with the next
        row["error"] = short_error(e)
    finally:
        del t, ref
        shutil.rmtree(scratch, ignore_errors=True)
        gc.collect()
        try:
            torch._dynamo.reset()
        except Exception:  # noqa: BLE001
            pass
        torch.cuda.empty_cache()
    return row


# ----------------------------------------------------------------------------------------
# Report (plain Python: also runs from a stored result file, without a GPU)


def _f(v, fmt):
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else format(v, fmt)


def _ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


def geomean(xs):
    xs = [x for x in xs if x is not None and x > 0 and math.isfinite(x)]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def _err_cell(err, math_mode):
    if err is None:
        return "—"
    if isinstance(err, float) and math.isnan(err):
        return "NaN !"
    return f"{err:.1e}" + (" !" if err > TOLERANCE.get(math_mode, 2e-3) else "")


def _x(ratio):
    return "—" if ratio is None else f"{ratio:.2f}x"


def format_report(rows, meta):
    """corpus.md: the table, then the summary (geomeans, graphs slower than eager...)."""
    labels = list(meta.get("extra_bins") or {})
    head = ["graph", "family", "sinter ms", "eager ms", "compile ms", "vs eager", "vs compile",
            "floor ms (kind)", "sinter err", "eager err", "kernels"]
    for lb in labels:
        head += [f"{lb} ms", f"speedup vs {lb}"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        s = r.get("sinter_ms")
        sinter = _f(s, ".3f") if s is not None else \
            "failed" if ("sinter_error" in r or "error" in r) else "—"
        cells = [r["name"], r.get("family", ""), sinter,
                 _f(r.get("eager_ms"), ".3f") if "eager_error" not in r else "failed",
                 _f(r.get("compile_ms"), ".3f") if "compile_ms" in r else
                 ("failed" if "compile_error" in r else "—"),
                 _x(_ratio(r.get("eager_ms"), s)), _x(_ratio(r.get("compile_ms"), s)),
                 f"{_f(r.get('floor_ms'), '.3f')} ({r.get('floor_kind', '?')})",
                 _err_cell(r.get("sinter_err"), r.get("math")),
                 _err_cell(r.get("eager_err"), "tf32"), _f(r.get("sinter_launches"), "d")]
        for lb in labels:
            b = r.get(f"{lb}_ms")
            cells += ["failed" if b is None and f"{lb}_error" in r else _f(b, ".3f"),
                      _x(_ratio(b, s))]
        lines.append("| " + " | ".join(str(c) for c in cells) + " |")
    table = "\n".join(lines)

    timed = [r for r in rows if r.get("sinter_ms") and r.get("eager_ms")]
    vs_eager = {r["name"]: r["eager_ms"] / r["sinter_ms"] for r in timed}
    vs_comp = {r["name"]: r["compile_ms"] / r["sinter_ms"] for r in rows
               if r.get("sinter_ms") and r.get("compile_ms")}
    summary = []
    ge, gc_ = geomean(vs_eager.values()), geomean(vs_comp.values())
    summary.append(f"- geomean speedup of sinter vs eager: {_x(ge)} over "
                   f"{len(vs_eager)} graphs; vs torch.compile: {_x(gc_)} over "
                   f"{len(vs_comp)} graphs")
    slow = sorted((v, n) for n, v in vs_eager.items() if v < 1.0)
    summary.append(f"- below 1.0x eager: {len(slow)} of {len(vs_eager)}" +
                   (": " + ", ".join(f"{n} ({v:.2f}x)" for v, n in slow) if slow else ""))
    slow_c = sorted((v, n) for n, v in vs_comp.items() if v < 1.0)
    summary.append(f"- below 1.0x torch.compile: {len(slow_c)} of {len(vs_comp)}" +
                   (": " + ", ".join(f"{n} ({v:.2f}x)" for v, n in slow_c) if slow_c else ""))
    if vs_eager:
        v, n = min((v, n) for n, v in vs_eager.items())
        summary.append(f"- worst vs eager: {n} ({v:.2f}x)")
    to_floor = {r["name"]: r["sinter_ms"] / r["floor_ms"] for r in rows
                if r.get("sinter_ms") and r.get("floor_ms")}
    if to_floor:
        v, n = max((v, n) for n, v in to_floor.items())
        summary.append(f"- farthest from its floor: {n} ({v:.1f}x the floor); geomean "
                       f"sinter / floor {geomean(to_floor.values()):.2f}x")
    over = [r["name"] for r in rows if r.get("sinter_err") is not None and
            not (r["sinter_err"] <= TOLERANCE.get(r.get("math"), 2e-3))]
    summary.append(f"- sinter errors over tolerance (1e-5 fp32 graphs, 2e-3 tf32 graphs, "
                   f"NaN): {len(over)}" + (": " + ", ".join(over) if over else ""))
    for lb in labels:
        sp = {r["name"]: r[f"{lb}_ms"] / r["sinter_ms"] for r in rows
              if r.get("sinter_ms") and r.get(f"{lb}_ms")}
        worse = sorted((v, n) for n, v in sp.items() if v < 1.0)
        summary.append(f"- vs {lb}: geomean speedup {_x(geomean(sp.values()))} over "
                       f"{len(sp)} graphs; slower than {lb} on {len(worse)}" +
                       (": " + ", ".join(f"{n} ({v:.2f}x)" for v, n in worse) if worse else ""))
    failed = [(r["name"], k, r[k]) for r in rows for k in sorted(r) if k.endswith("error")]
    if failed:
        summary.append(f"- failures ({len(failed)}):")
        summary += [f"  - {n}: {k[:-6] if k != 'error' else 'run'}: {str(e)[:200]}"
                    for n, k, e in failed]
    skipped = meta.get("skipped") or []
    if skipped:
        summary.append(f"- not run (time limit): {', '.join(skipped)}")

    m = meta
    header = (f"device: {m.get('device', '?')}, torch {m.get('torch', '?')}, copy bandwidth "
              f"{_f(m.get('bandwidth_tbs'), '.2f')} TB/s, scale {m.get('scale', '?')}, "
              f"{m.get('iterations', '?')} iterations (median), {len(rows)} graphs" +
              (f", torch.compile times from {m['compile_from']}" if m.get("compile_from") else
               ", no torch.compile" if m.get("no_compile") else "") + "\n"
              f"sinter: {m.get('bench_bin', '?')}" +
              "".join(f"; {lb}: {p}" for lb, p in (m.get("extra_bins") or {}).items()) +
              f"\nvs eager / vs compile = their time / sinter's; floor = max(FLOPs / peak, "
              f"bytes / bandwidth) with TF32 {bench_common.PEAK_TF32} TFLOP/s for conv graphs, "
              f"fp32-accurate {bench_common.PEAK_FP32:.1f} for GEMM graphs; "
              f"errors are relative L2 vs float64 (! = over tolerance)\n")
    return header + "\n" + table + "\n\n" + "\n".join(summary) + "\n"


def read_rows(path):
    """Rows from corpus.json ({"meta", "rows"} or a list) or corpus.jsonl (one per line)."""
    with open(path) as fh:
        text = fh.read()
    try:
        data = json.loads(text)
        if isinstance(data, dict):
            return data.get("rows", []), data.get("meta", {})
        return data, {}
    except json.JSONDecodeError:
        lines = [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]
        meta = next((x["meta"] for x in lines if "meta" in x and "name" not in x), {})
        return [x for x in lines if "name" in x], meta


def write_report(rows, meta, out):
    os.makedirs(out, exist_ok=True)
    md = format_report(rows, meta)
    with open(os.path.join(out, "corpus.md"), "w") as fh:
        fh.write(md)
    with open(os.path.join(out, "corpus.json"), "w") as fh:
        json.dump({"meta": meta, "rows": rows}, fh, indent=1)
    return md


# ----------------------------------------------------------------------------------------
# Command line


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bench-bin", help="bench/sinter_bench of the sinter to measure")
    p.add_argument("--out", help="directory for corpus.jsonl, corpus.json and corpus.md")
    p.add_argument("--only", help="comma-separated graph names or families (gemm, conv2d...)")
    p.add_argument("--scale", choices=corpus.SCALES, default="full")
    p.add_argument("--iterations", type=int, default=20, help="timed runs (median)")
    p.add_argument("--warmup", type=int, default=3, help="untimed runs first")
    comp = p.add_mutually_exclusive_group()
    comp.add_argument("--compile-from", metavar="JSON",
                      help="take compile_ms / compile_err from an earlier corpus.json(l)")
    comp.add_argument("--no-compile", action="store_true", help="skip torch.compile")
    p.add_argument("--extra-bench-bin", action="append", default=[], metavar="NAME=PATH",
                   help="another sinter_bench timed on the same inputs (e.g. base=OLD/bin)")
    p.add_argument("--compile-workers", type=int, default=12,
                   help="parallel torch.compile warm-up processes")
    p.add_argument("--compile-timeout", type=float, default=300,
                   help="seconds one graph's warm-up may take")
    p.add_argument("--compile-budget", type=float, default=240,
                   help="seconds the whole warm-up may take")
    p.add_argument("--sinter-timeout", type=float, default=180,
                   help="seconds one sinter_bench run may take")
    p.add_argument("--time-limit", type=float, default=0,
                   help="stop starting graphs after this many seconds (0: no limit), so the "
                        "report is written before an outside limit kills the run")
    p.add_argument("--seed", type=int, default=2026, help="base of the per-graph seeds")
    p.add_argument("--scratch", default=os.environ.get("TMPDIR", "/tmp"),
                   help="where inputs, outputs and kernel caches go while a graph runs")
    p.add_argument("--random", metavar="COUNT[:SEED][,COUNT:SEED...]",
                   help="also run COUNT random chains of SEED (default 1) from "
                        "corpus/random_chains.py, for each comma-separated spec; --only then "
                        "selects among all graphs, 'random' among the random ones")
    p.add_argument("--list", action="store_true", help="list the graphs and exit")
    p.add_argument("--report-from", metavar="JSON",
                   help="write corpus.md (to --out, else stdout) from stored results and exit")
    p.add_argument("--compile-worker", metavar="NAME", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    args.random_names = []
    if args.random:
        import random_chains
        for spec in args.random.split(","):
            try:
                count, seed = random_chains.parse_spec(spec)
            except ValueError:
                p.error(f"--random wants COUNT or COUNT:SEED (comma-separated), got '{spec}'")
            args.random_names += random_chains.register(count, seed)
    if not (args.list or args.report_from or args.compile_worker):
        if not args.bench_bin or not args.out:
            p.error("--bench-bin and --out are required to run the benchmark")
    extras = []
    for item in args.extra_bench_bin:
        label, sep, path = item.partition("=")
        if not sep or not label.isidentifier() or not path:
            p.error(f"--extra-bench-bin wants NAME=PATH, got '{item}'")
        if label in ("sinter", "eager", "compile", "floor", "ref") or \
                label in [e[0] for e in extras]:
            p.error(f"--extra-bench-bin: the name '{label}' is taken")
        extras.append((label, path))
    args.extras = extras
    if args.iterations < 1 or args.warmup < 0 or args.compile_workers < 1:
        p.error("--iterations and --compile-workers must be positive, --warmup not negative")
    return args


def main(argv=None):
    args = parse_args(argv)
    if args.compile_worker:
        return compile_worker(args.compile_worker, args.scale, args.seed)
    if args.list:
        for name in select(args.only, args.random_names):
            g = corpus.build(name, args.scale)
            print(f"{name:40s} {corpus.family(name):8s} {g.math:4s} {g.flops / 1e9:9.2f} GFLOP "
                  f"{g.io_bytes() / 1e6:9.1f} MB in+out  {4 * g.elements() / 1e6:9.1f} MB all")
        return 0
    if args.report_from:
        rows, meta = read_rows(args.report_from)
        if args.only:
            keep = set(select(args.only, args.random_names))
            rows = [r for r in rows if r["name"] in keep]
        md = write_report(rows, meta, args.out) if args.out else format_report(rows, meta)
        print(md)
        return 0

    t_start = time.monotonic()
    names = select(args.only, args.random_names)
    for label, path in [("sinter", args.bench_bin)] + args.extras:
        if not os.access(path, os.X_OK):
            raise SystemExit(f"corpus_bench: {label} binary '{path}' is not executable")
    os.makedirs(args.out, exist_ok=True)
    stored = warm = None
    if args.compile_from:
        old, _ = read_rows(args.compile_from)
        stored = {r["name"]: r for r in old}
    elif not args.no_compile:
        warm = warm_compiles(names, args)

    import torch
    bw = bench_common.copy_bandwidth()
    meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
            "bandwidth_tbs": bw / 1e12, "scale": args.scale, "iterations": args.iterations,
            "warmup": args.warmup, "seed": args.seed, "bench_bin": args.bench_bin,
            "extra_bins": dict(args.extras), "compile_from": args.compile_from,
            "no_compile": args.no_compile,
            "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
            "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
            "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    print(f"device {meta['device']}, torch {meta['torch']}, copy bandwidth {bw / 1e12:.2f} TB/s, "
          f"{len(names)} graphs", flush=True)
    bins = [("sinter", args.bench_bin)] + args.extras
    rows, skipped = [], []
    jsonl = os.path.join(args.out, "corpus.jsonl")
    with open(jsonl, "w") as fh:
        fh.write(json.dumps({"meta": meta}) + "\n")
        fh.flush()
        for i, name in enumerate(names):
            if args.time_limit and time.monotonic() - t_start > args.time_limit:
                skipped = names[i:]
                print(f"time limit reached: {len(skipped)} graphs not run", flush=True)
                break
            t0 = time.monotonic()
            row = bench_graph(name, args, bw, bins, warm, stored)
            row["wall_s"] = time.monotonic() - t0
            rows.append(row)
            fh.write(json.dumps(row) + "\n")
            fh.flush()
            errs = [k for k in row if k.endswith("error")]
            print(f"[{i + 1}/{len(names)}] {name}: sinter {_f(row.get('sinter_ms'), '.3f')} ms, "
                  f"eager {_f(row.get('eager_ms'), '.3f')} ms, compile "
                  f"{_f(row.get('compile_ms'), '.3f')} ms, err {_f(row.get('sinter_err'), '.1e')}"
                  f" ({row['wall_s']:.1f} s)" + (f" errors: {', '.join(errs)}" if errs else ""),
                  flush=True)
    meta["skipped"] = skipped
    meta["wall_s"] = time.monotonic() - t_start
    print(write_report(rows, meta, args.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
