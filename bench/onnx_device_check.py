#!/usr/bin/env python3
"""The ONNX frontend against PyTorch's exporters, on the GPU machine (issue 9).

For every graph, a torch.nn.Module whose parameters are the graph's params is exported with
both exporters (torch.onnx.export with dynamo=True, the default, and dynamo=False), then:

  workloads (../shared/workloads, full size, on the GPU):
    - `sinterc explain` of the .onnx and of the .sir: the fusion groups (pattern and op
      kinds) and the kernels (template, role) must be the same, kernel count first;
    - `sinterc run model.onnx` with only the input given (the weights come from the model)
      against PyTorch on the same data: relative L2 to a float64 PyTorch run, within the
      tolerance `sinterc check` uses (2e-3 for TF32 convolutions, 1e-5 fp32-accurate);
    - `sinterc run G.sir` with the same input and PyTorch's weights: the two outputs must
      match bit for bit (same kernels, same data);
  corpus graphs (bench/corpus, small scale, on the CPU, in parallel worker processes):
    - the same plan comparison;
    - `sinterc eval model.onnx` (the float64 reference on the imported graph with the
      model's weights) against the PyTorch twin run in float64 (relative L2 <= 1e-5).

Every graph is tried on its own: an export failure, an import error or a crash is recorded
and the run goes on. Results: DIR/onnx.json (everything), DIR/onnx.md (the tables), and the
exported models' explain outputs under DIR/explain/. A time budget (--budget, default 270 s)
skips what is left when it runs out, so that the run ends in under five minutes.

Usage (from the repository root; bench/device_run.sh runs it as STEPS=onnx):
  python3 bench/onnx_device_check.py --sinterc PATH/sinterc --workloads DIR --out DIR \\
      [--only s0,s3,gemm_...] [--no-corpus] [--no-workloads] [--budget SECONDS] [--jobs N]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "corpus"))

EXPORTERS = ("dynamo", "torchscript")
WORKLOAD_FILES = {"s0": "s0_convt3d_relu_gn.sir", "s1": "s1_conv3d_gn_mean.sir",
                  "s2": "s2_convt2d_gelu_gn.sir", "s3": "s3_gemm_gn_min_bias.sir",
                  "s4": "s4_convt3d_grouped.sir"}
TOLERANCE = {"tf32": 2e-3, "fp32": 1e-5}
EVAL_TOLERANCE = 1e-5

# ----------------------------------------------------------------------------------------
# .sir facts and sinterc


def sir_signature(path):
    """(graph name, [(arg name, shape, is_param)], [returned names]) of a one-graph .sir."""
    text = open(path).read()
    text = re.sub(r"#[^\n]*", "", text)
    name = re.search(r"graph\s+(\w+)\s*\(", text).group(1)
    head = text[text.index("(") + 1:text.index("{")]
    args = [(m.group(1), [int(d) for d in m.group(3).split(",") if d], bool(m.group(2)))
            for m in re.finditer(r"%([A-Za-z0-9_.]+)\s*:\s*(param\s+)?f32\[([0-9,]*)\]", head)]
    ret = re.search(r"return\s+([^}]*)", text).group(1)
    return name, args, [r.strip().lstrip("%") for r in ret.split(",") if r.strip()]


def sinterc(binary, args, timeout=600):
    """(exit status, stdout, stderr) of one sinterc call."""
    try:
        r = subprocess.run([binary] + args, capture_output=True, text=True, timeout=timeout)
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return 124, "", f"timed out after {timeout} s"


def strip_returned_dropout(sir_text):
    """The .sir without a dropout whose result is returned (exporters drop dropout at
    inference; the .sir keeps a returned one as a copy kernel). Its name goes to its input."""
    ret = re.search(r"return\s+%([A-Za-z0-9_.]+)\s*\n", sir_text)
    if not ret:
        return sir_text
    out = ret.group(1)
    d = re.search(r"^[ \t]*%" + re.escape(out) + r"\s*=\s*dropout\(%([A-Za-z0-9_.]+)\)[^\n]*\n",
                  sir_text, re.M)
    if not d:
        return sir_text
    text = sir_text.replace(d.group(0), "")
    return re.sub(r"%" + re.escape(d.group(1)) + r"(?![A-Za-z0-9_.])", "%" + out, text)


# ONNX has one op for these pairs of the catalog: Clip (hardtanh, clamp), Reshape (flatten).
SAME_OP = {"hardtanh": "clamp", "flatten": "reshape"}


def plan_of(explain_text):
    """The comparable part of `sinterc explain`: kernel count, each group's pattern and op
    kinds, each kernel's template and role (names of values and kernels left out)."""
    m = re.search(r"-> (\d+) fusion groups -> (\d+) kernels", explain_text)
    kernels = int(m.group(2)) if m else -1
    groups, current, ops = [], None, []
    section = None
    for line in explain_text.splitlines():
        if line.startswith("fusion groups"):
            section = "groups"
            continue
        if line.startswith("kernels (launch order)"):
            section = "kernels"
            continue
        if line.startswith("baked shapes"):
            section = None
        if section == "groups":
            g = re.match(r"\s+group \d+: (.*)$", line)
            if g:
                if current is not None:
                    groups.append(current + " [" + " ".join(ops) + "]")
                current, ops = g.group(1), []
                continue
            o = re.match(r"\s+%\S+ = (\w+)\(", line)
            if o:
                ops.append(SAME_OP.get(o.group(1), o.group(1)))
    if current is not None:
        groups.append(current + " [" + " ".join(ops) + "]")
    templates = re.findall(r"^\s+\d+\s+\d+\s+\S+\s+(\S+\.cuh)", explain_text, re.M)
    return {"kernels": kernels, "groups": groups, "templates": templates}


def compare_plans(onnx_plan, sir_plan):
    """'' when the plans agree, else what differs first."""
    if onnx_plan["kernels"] != sir_plan["kernels"]:
        return f"{onnx_plan['kernels']} kernels vs the .sir's {sir_plan['kernels']}"
    if onnx_plan["groups"] != sir_plan["groups"]:
        for a, b in zip(onnx_plan["groups"] + ["-"], sir_plan["groups"] + ["-"]):
            if a != b:
                return f"group {a} vs the .sir's {b}"
    if onnx_plan["templates"] != sir_plan["templates"]:
        return f"templates {onnx_plan['templates']} vs {sir_plan['templates']}"
    return ""


def short(text, n=300):
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[:n] + "..."


# ----------------------------------------------------------------------------------------
# Modules and export (torch imported lazily: the report paths run without it)


def make_module(fn, params, input_names):
    import torch

    class Graph(torch.nn.Module):
        def __init__(self):
            super().__init__()
            for k, v in params.items():
                self.register_parameter(k, torch.nn.Parameter(v.detach().clone(),
                                                              requires_grad=False))
            self.pnames = list(params)

        def run(self, xs):
            t = {k: getattr(self, k) for k in self.pnames}
            t.update(zip(input_names, xs))
            return fn(t)

    # forward(self, x, ...) with the inputs' own names (the exporters name graph inputs
    # after them, and tracing is simplest with plain positional arguments).
    args = ", ".join(input_names)
    ns = {}
    exec(f"def forward(self, {args}):\n    return self.run(({args},))\n", ns)
    Graph.forward = ns["forward"]
    return Graph().eval()


def export(module, inputs, path, exporter, input_names, output_names):
    """Writes `path` (and for dynamo its .data file); returns the export's seconds."""
    import torch
    os.makedirs(os.path.dirname(path), exist_ok=True)
    start = time.time()
    with torch.no_grad():
        torch.onnx.export(module, tuple(inputs), path, dynamo=(exporter == "dynamo"),
                          input_names=input_names, output_names=output_names)
    return time.time() - start


def onnx_summary(path):
    """Opset and op types of an exported model (with the onnx package when present)."""
    try:
        import onnx
        m = onnx.load(path, load_external_data=False)
        ops = sorted({n.op_type for n in m.graph.node})
        opset = max((o.version for o in m.opset_import if o.domain in ("", "ai.onnx")), default=0)
        return {"opset": opset, "ops": ops,
                "external_data": os.path.exists(path + ".data")}
    except Exception as e:  # noqa: BLE001 - only informative
        return {"error": short(e, 120)}


# ----------------------------------------------------------------------------------------
# Workloads on the GPU


def workload_tensors():
    """name -> (sir file, tensors on the GPU, torch function of tensors, math)."""
    import torch
    import side_by_side
    gen = torch.Generator(device="cuda")
    gen.manual_seed(9)
    out = {}
    for name, fn in side_by_side.make_workloads(gen).items():
        sir, t, f, _, math_mode = fn()
        out[name] = (sir, t, f, math_mode)
    return out


def check_workload(name, item, args, work, deadline):
    import torch
    from bench_common import load_tensors, rel_l2, save_tensors
    sir_file, tensors, f, math_mode = item
    sir = os.path.join(args.workloads, sir_file)
    gname, sig, rets = sir_signature(sir)
    inputs = [a[0] for a in sig if not a[2]]
    params = {a[0]: tensors[a[0]] for a in sig if a[2]}
    rows = []
    wdir = os.path.join(work, name)
    os.makedirs(wdir, exist_ok=True)
    x_file, all_file = os.path.join(wdir, "inputs.safetensors"), os.path.join(wdir, "all.safetensors")
    save_tensors({k: tensors[k] for k in inputs}, x_file)
    save_tensors(tensors, all_file)
    rc, sir_explain, err = sinterc(args.sinterc, ["explain", sir])
    sir_plan = plan_of(sir_explain) if rc == 0 else None
    with torch.no_grad():
        ref = f({k: v.double() for k, v in tensors.items()})
    # The .sir run with the same data: the ONNX runs must give the same bits.
    sir_out_file = os.path.join(wdir, "sir_out.safetensors")
    rc_sir, _, err_sir = sinterc(args.sinterc, ["run", sir, "--inputs", all_file, "-o", sir_out_file])
    sir_out = load_tensors(sir_out_file)[rets[0]].cuda() if rc_sir == 0 else None
    module = make_module(f, params, inputs)
    for exporter in EXPORTERS:
        row = {"graph": name, "exporter": exporter, "kind": "workload", "math": math_mode}
        rows.append(row)
        if time.time() > deadline:
            row["status"] = "skipped (time budget)"
            continue
        try:
            path = os.path.join(wdir, exporter, gname + ".onnx")
            row["export_s"] = round(export(module, [tensors[k] for k in inputs], path, exporter,
                                           inputs, rets), 1)
            row.update(onnx_summary(path))
            rc, out, err = sinterc(args.sinterc, ["explain", path])
            if rc != 0:
                row["status"] = "import/explain error: " + short(err)
                continue
            with open(os.path.join(args.out, "explain", f"{name}_{exporter}.txt"), "w") as fh:
                fh.write(out)
            plan = plan_of(out)
            row["kernels"] = plan["kernels"]
            row["sir_kernels"] = sir_plan["kernels"] if sir_plan else None
            row["plan_diff"] = compare_plans(plan, sir_plan) if sir_plan else "no .sir plan: " + short(err)
            out_file = os.path.join(wdir, exporter + "_out.safetensors")
            rc, _, err = sinterc(args.sinterc, ["run", path, "--inputs", x_file, "-o", out_file])
            if rc != 0:
                row["status"] = "run error: " + short(err)
                continue
            got = load_tensors(out_file)[rets[0]].cuda()
            os.remove(out_file)
            row["rel_l2"] = rel_l2(got, ref)
            with torch.no_grad():
                eager = f(tensors)
            row["torch_rel_l2"] = rel_l2(eager, ref)
            if sir_out is not None:
                row["max_abs_vs_sir"] = (got - sir_out).abs().max().item()
            else:
                row["max_abs_vs_sir"] = None
                row["sir_run_error"] = short(err_sir)
            # Bit-identical to the .sir's run is expected (same kernels, same data) but
            # reported, not required: the tolerance and the plan are what must hold.
            ok = row["rel_l2"] <= TOLERANCE[math_mode] and not row["plan_diff"]
            row["status"] = "ok" if ok else "MISMATCH"
        except Exception as e:  # noqa: BLE001 - recorded, the run goes on
            row["status"] = "exception: " + short(e)
            row["traceback"] = traceback.format_exc()[-2000:]
        finally:
            torch.cuda.empty_cache()
    for p in (x_file, all_file, sir_out_file):
        if os.path.exists(p):
            os.remove(p)
    return rows


# ----------------------------------------------------------------------------------------
# Corpus graphs on the CPU (worker processes)


def corpus_one(task):
    """Exports one corpus graph (small scale) with one exporter and checks it; a row."""
    name, exporter, sinterc_bin, work, explain_dir = task
    row = {"graph": name, "exporter": exporter, "kind": "corpus"}
    try:
        import torch
        import corpus
        from bench_common import rel_l2
        from safetensors.torch import load_file, save_file
        torch.set_num_threads(1)
        g = corpus.build(name, "small")
        gen = torch.Generator(device="cpu")
        gen.manual_seed(corpus.seed_of(name))
        t = corpus.make_tensors(g, gen, device="cpu")
        twin = corpus.twin(g)
        inputs = [a[0] for a in g.args if a[2] == "input"]
        params = {a[0]: t[a[0]] for a in g.args if a[2] == "param"}
        gdir = os.path.join(work, "corpus", exporter, name)
        os.makedirs(gdir, exist_ok=True)
        sir = os.path.join(gdir, name + ".sir")
        with open(sir, "w") as fh:
            fh.write(strip_returned_dropout(g.sir()))
        path = os.path.join(gdir, name + ".onnx")
        module = make_module(twin, params, inputs)
        row["export_s"] = round(export(module, [t[k] for k in inputs], path, exporter, inputs,
                                       [g.out]), 1)
        row.update(onnx_summary(path))
        rc, sir_explain, err = sinterc(sinterc_bin, ["explain", sir])
        if rc != 0:
            row["status"] = "sir explain error: " + short(err)
            return row
        rc, out, err = sinterc(sinterc_bin, ["explain", path])
        if rc != 0:
            row["status"] = "import/explain error: " + short(err)
            return row
        with open(os.path.join(explain_dir, f"{name}_{exporter}.txt"), "w") as fh:
            fh.write(out)
        plan, sir_plan = plan_of(out), plan_of(sir_explain)
        row["kernels"], row["sir_kernels"] = plan["kernels"], sir_plan["kernels"]
        row["plan_diff"] = compare_plans(plan, sir_plan)
        x_file = os.path.join(gdir, "inputs.safetensors")
        save_file({k: t[k].contiguous() for k in inputs}, x_file)
        out_file = os.path.join(gdir, "out.safetensors")
        rc, _, err = sinterc(sinterc_bin, ["eval", path, "--inputs", x_file, "-o", out_file,
                                           "--threads", "1"])
        if rc != 0:
            row["status"] = "eval error: " + short(err)
            return row
        got = load_file(out_file)[g.out]
        with torch.no_grad():
            ref = twin({k: v.double() for k, v in t.items()})
        row["rel_l2"] = rel_l2(got, ref)
        ok = row["rel_l2"] <= EVAL_TOLERANCE and not row["plan_diff"]
        row["status"] = "ok" if ok else "MISMATCH"
    except Exception as e:  # noqa: BLE001 - recorded, the run goes on
        row["status"] = "exception: " + short(e)
        row["traceback"] = traceback.format_exc()[-2000:]
    return row


def run_corpus(names, args, work, deadline):
    from concurrent.futures import ProcessPoolExecutor, TimeoutError, as_completed
    import multiprocessing
    tasks = [(n, e, args.sinterc, work, os.path.join(args.out, "explain"))
             for n in names for e in EXPORTERS]
    rows = []
    # Fresh interpreters (spawn): the parent owns the GPU; the workers need only the CPU.
    pool = ProcessPoolExecutor(max_workers=args.jobs,
                               mp_context=multiprocessing.get_context("spawn"))
    futures = {pool.submit(corpus_one, t): t for t in tasks}
    try:
        for fut in as_completed(futures, timeout=max(1.0, deadline - time.time())):
            name, exporter = futures[fut][:2]
            try:
                row = fut.result()
            except Exception as e:  # noqa: BLE001 - a worker died
                row = {"graph": name, "exporter": exporter, "kind": "corpus",
                       "status": "no result: " + short(e)}
            rows.append(row)
            print(f"  {row['graph']:40s} {row['exporter']:11s} {row['status'][:90]}", flush=True)
    except TimeoutError:
        print("  corpus: time budget spent; the rest is skipped", flush=True)
    finally:
        # Workers still busy when the budget ran out are stopped, not waited for.
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for proc in procs:
            if proc.is_alive():
                proc.terminate()
    done = {(r["graph"], r["exporter"]) for r in rows}
    for n, e, *_ in tasks:
        if (n, e) not in done:
            rows.append({"graph": n, "exporter": e, "kind": "corpus",
                         "status": "skipped (time budget)"})
    return rows


# ----------------------------------------------------------------------------------------
# Report


def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def report(rows, meta):
    lines = [f"# ONNX frontend vs PyTorch's exporters ({meta['when']}, {meta['device']})", "",
             f"torch {meta['torch']}, onnx {meta['onnx']}; {meta['seconds']:.0f} s. A row is ok "
             "when the imported model fuses into the .sir's groups and kernels and its result "
             "is within tolerance (workloads: `sinterc run` of the model, rel L2 to float64 "
             "PyTorch <= 2e-3 TF32 / 1e-5 fp32; 'vs .sir run' is the max abs difference to "
             "`sinterc run` of the .sir on the same data; corpus: `sinterc eval` of the model vs "
             "the float64 twin <= 1e-5).", ""]
    for kind, title in (("workload", "Workloads (full size, GPU)"),
                        ("corpus", "Corpus graphs (small scale, float64 reference)")):
        sel = [r for r in rows if r.get("kind") == kind]
        if not sel:
            continue
        n_ok = sum(r.get("status") == "ok" for r in sel)
        lines += [f"## {title}: {n_ok} of {len(sel)} ok", "",
                  "| graph | exporter | opset | kernels (.sir) | rel L2 | vs .sir run | status |",
                  "|---|---|---|---|---|---|---|"]
        for r in sorted(sel, key=lambda r: (r["graph"], r["exporter"])):
            kern = f"{fmt(r.get('kernels'), 'd')} ({fmt(r.get('sir_kernels'), 'd')})"
            status = r.get("status", "?")
            if r.get("plan_diff"):
                status += "; plan: " + r["plan_diff"]
            vs = r.get("max_abs_vs_sir")
            lines.append(f"| {r['graph']} | {r['exporter']} | {r.get('opset', '-')} | {kern} | "
                         f"{fmt(r.get('rel_l2'), '.2e')} | "
                         f"{'-' if vs is None else ('identical' if vs == 0 else f'{vs:.2e}')} | "
                         f"{status.replace('|', '/')} |")
        lines.append("")
    ops = sorted({op for r in rows for op in r.get("ops", [])})
    lines += ["ONNX op types seen in the exported models: " + ", ".join(ops), ""]
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sinterc", required=True, help="the sinterc binary")
    p.add_argument("--workloads", default=os.path.join(HERE, "..", "..", "shared", "workloads"))
    p.add_argument("--out", required=True, help="folder for onnx.json, onnx.md, explain/")
    p.add_argument("--only", default="", help="comma-separated workloads (s0..s4) and corpus names")
    p.add_argument("--no-corpus", action="store_true")
    p.add_argument("--no-workloads", action="store_true")
    p.add_argument("--budget", type=float, default=270, help="seconds before the rest is skipped")
    p.add_argument("--jobs", type=int, default=max(1, min(12, (os.cpu_count() or 2) - 2)))
    args = p.parse_args(argv)
    args.sinterc = os.path.abspath(args.sinterc)
    start = time.time()
    deadline = start + args.budget
    os.makedirs(os.path.join(args.out, "explain"), exist_ok=True)
    work = tempfile.mkdtemp(prefix="sinter-onnx-")
    only = {s for s in args.only.split(",") if s}
    rows, meta = [], {"when": time.strftime("%Y-%m-%d %H:%M"), "device": "?", "torch": "?",
                      "onnx": "?", "seconds": 0}
    try:
        import torch
        meta["torch"] = torch.__version__
        meta["device"] = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"
        try:
            import onnx
            meta["onnx"] = onnx.__version__
        except Exception:  # noqa: BLE001
            meta["onnx"] = "not installed"
        import corpus
        names = [n for n in corpus.ENTRIES if not only or n in only]
        if not args.no_corpus and names:
            print(f"== corpus: {len(names)} graphs x 2 exporters, {args.jobs} workers", flush=True)
            # The corpus runs on the CPU in worker processes while this process owns the GPU.
            from concurrent.futures import ThreadPoolExecutor
            pool = ThreadPoolExecutor(max_workers=1)
            corpus_future = pool.submit(run_corpus, names, args, work, deadline)
        else:
            corpus_future = None
        if not args.no_workloads:
            items = workload_tensors()
            for name in sorted(items):
                if only and name not in only:
                    continue
                print(f"== workload {name}", flush=True)
                try:
                    got = check_workload(name, items[name], args, work, deadline)
                except Exception as e:  # noqa: BLE001 - recorded, the next workload goes on
                    got = [{"graph": name, "exporter": ex, "kind": "workload",
                            "status": "exception: " + short(e),
                            "traceback": traceback.format_exc()[-2000:]} for ex in EXPORTERS]
                for row in got:
                    rows.append(row)
                    print(f"  {name} {row['exporter']:11s} {row['status'][:100]}", flush=True)
                items[name] = None
                torch.cuda.empty_cache()
        if corpus_future is not None:
            rows += corpus_future.result()
    except Exception as e:  # noqa: BLE001 - whatever happened, the report is written
        rows.append({"graph": "(run)", "exporter": "-", "kind": "workload",
                     "status": "exception: " + short(e), "traceback": traceback.format_exc()})
    finally:
        meta["seconds"] = time.time() - start
        with open(os.path.join(args.out, "onnx.json"), "w") as fh:
            json.dump({"meta": meta, "rows": rows}, fh, indent=1, default=str)
        text = report(rows, meta)
        with open(os.path.join(args.out, "onnx.md"), "w") as fh:
            fh.write(text)
        print(text)
        shutil.rmtree(work, ignore_errors=True)
    bad = [r for r in rows if r.get("status") != "ok"]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
