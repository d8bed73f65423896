"""Old tree vs new tree, measured in a way the machine's load cannot move: instructions and CPU time.

Issue 20 asks that the readable-layer refactor keep ``make bench`` within 5 % of the code before
it. Wall-clock ratios on a shared machine move by +-30 %, so this script measures each linbook fit
of ``make bench`` twice, in two virtual environments (the old tree's and the new one's):

* **instructions** executed by the fit alone, counted by valgrind's callgrind (repeatable: same
  binary, inputs and environment give the same count). The child process starts with callgrind's
  instrumentation off, builds nothing (it loads data saved beforehand), runs the fit once
  uninstrumented (the harness's warm-up: numba cache loads, lazy imports), then switches
  instrumentation and collection on around one more fit only (callgrind's client requests, from a
  ten-line C helper compiled on first use with valgrind's ``callgrind.h``);
* **user CPU time** of the fit (``resource.getrusage`` in the child, one BLAS/numba thread, median
  of ``REPS`` fits after a warm-up), old and new in paired alternating processes; the table gives
  the median of the paired ratios. Less load-sensitive than wall time, not immune (caches, SMT).

Both use the *same* case definitions (the new tree's ``benchmarks/bench_*.py``) and the same saved
data. Where the new API renamed a parameter the old tree does not know (``Perceptron(max_iter=)``
was ``max_epochs``; ``tol=None`` meant "no stop rule", which the old online models did not have),
the old run gets its old spelling; rows whose *defaults* changed meaning since the old tree (a stop
rule added by issue 22) are listed as not comparable instead of measured.

Sizes: valgrind runs ~50x slower, so every case keeps the first ``ROWS`` rows of its data (all of
them when it has fewer); the table states the rows kept per case.

Usage (from the new tree's root; OLD and NEW are the two interpreters)::

    .venv/bin/python benchmarks/ab_instructions.py prepare [SUBSTRING ...]  # build + save the cases' data
    .venv/bin/python benchmarks/ab_instructions.py run OLD NEW [SUBSTRING ...] > table.md

Outputs (callgrind files for ``callgrind_annotate``, data, results.json) go to ``$AB_DIR``
(default ``/tmp/linbook-ab``). Nothing here is package code; ``make bench`` does not run it.
"""

from __future__ import annotations

import ctypes
import dataclasses
import hashlib
import importlib
import inspect
import json
import os
import pickle
import resource
import statistics
import subprocess
import sys
import types
from pathlib import Path

HERE = Path(__file__).resolve().parent
AB_DIR = Path(os.environ.get("AB_DIR", "/tmp/linbook-ab"))
ROWS = int(os.environ.get("AB_ROWS", "20000"))
PAIRS = int(os.environ.get("AB_PAIRS", "3"))
REPS = int(os.environ.get("AB_REPS", "3"))
MODULES = ("bench_logistic", "bench_linear", "bench_discriminant", "bench_online", "bench_perceptron",
           "bench_first_use")
# One thread everywhere, one fixed OpenBLAS kernel (valgrind's CPUID must not change it), and numba's
# on-disk cache in a scratch directory (the old tree's cache is not written to).
ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1",
       "MKL_NUM_THREADS": "1", "OPENBLAS_CORETYPE": "Haswell", "PYTHONHASHSEED": "0"}

# Rows not measured, and why (a substring of the case name -> the reason).
NOT_COMPARABLE = {
    "first fits": "a whole fresh process (import and numba loading), not a fit; see bench_first_use",
    "stop rules": "default stop rule added by issue 22 (old default: fixed 5 epochs)",
    "perceptron default vs default": "default stop rule added by issue 22 (tol=1e-3)",
    "Perceptron": "tiny-loop Perceptron(): default stop rule added by issue 22",
}

# Warm-up fits per case, where one is not enough (a substring of the case name -> fits). The new
# tree's online models run numpy loops until the process has made 20,000 per-sample steps
# (``linbook.online._stream.NUMPY_STEPS``): RLS 1e5 x 10 keeps 20,000 rows, so its first warm-up fit
# spends that budget in numpy and only the second reaches the compiled ``rls_pass`` (compiling or
# loading it), which the counted fit must not include: ``make env`` warms it for users (linbook._warm).
WARMUPS = {"RLS default partial_fit 1e5 x 10": 2}


def _sorted_rows(data):
    """A case's data with its CSR matrix's indices sorted in every row (the same matrix)."""
    return (data[0].sorted_indices(), *data[1:])


# Rows only this script measures: a bench case's fit on its data transformed (bench module, a substring of
# the case's name, what the new row's name adds, the transform). The sparse text matrix of bench_online
# (``diags(s) @ X``) has unsorted rows; its sorted twin shows the cost of the index check on sorted rows.
VARIANTS = [("bench_online", "SGDClassifier() one epoch (tol=None)", ", rows sorted (ab_instructions only)",
             _sorted_rows)]

HELPER_C = r"""
#include <valgrind/callgrind.h>
void ab_collect_on(void)  { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_TOGGLE_COLLECT; }
void ab_collect_off(const char *key) {
    CALLGRIND_TOGGLE_COLLECT; CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT(key);
}
"""


def _fingerprint(obj, seen=()):
    """What a callable does, as comparable data (code, constants, defaults, closure contents; a
    function met again inside its own closure, as ``bench_first_use``'s runs are, by its name)."""
    if isinstance(obj, types.FunctionType):
        if id(obj) in seen:
            return obj.__qualname__
        seen = (*seen, id(obj))
        code = obj.__code__
        cells = tuple(_fingerprint(c.cell_contents, seen) for c in obj.__closure__ or ())
        return repr((code.co_code, code.co_consts, code.co_names, obj.__defaults__, cells))
    if isinstance(obj, dict):
        return repr(sorted((k, _fingerprint(v, seen)) for k, v in obj.items()))
    return repr(obj)


def _import_benchmarks(modules):
    """The new tree's bench modules, imported as the package ``benchmarks`` without putting a tree
    root on ``sys.path`` (that would shadow the interpreter's own linbook)."""
    package = types.ModuleType("benchmarks")
    package.__path__ = [str(HERE)]
    sys.modules["benchmarks"] = package
    return [importlib.import_module(f"benchmarks.{name}") for name in modules]


def cases(modules=MODULES):
    """``{key: (case, module name, reason_or_None)}``: one entry per distinct (data, linbook fit)."""
    out = {}
    for module in _import_benchmarks(modules):
        name = module.__name__.split(".")[-1]
        for case in module.CASES + _variants(name, module.CASES):
            what = name + _fingerprint(case.setup) + _fingerprint(case.linbook)
            key = hashlib.sha1(what.encode()).hexdigest()[:10]
            reason = next((r for s, r in NOT_COMPARABLE.items() if s in case.name), None)
            out.setdefault(key, (case, name, reason))
    return out


def _variants(module_name, module_cases):
    """The ``VARIANTS`` of one bench module as cases (a setup that transforms the base case's data)."""
    def transformed(setup, transform):
        def build():
            return transform(setup())
        return build                          # closure cells, not defaults: _fingerprint stays stable

    return [dataclasses.replace(case, name=case.name + suffix, setup=transformed(case.setup, transform))
            for module, part, suffix, transform in VARIANTS if module == module_name
            for case in module_cases if part in case.name]


def _first_rows(data):
    """The first ``ROWS`` rows of every array of a case's data (X, y, ...)."""
    return tuple(a[:ROWS] if hasattr(a, "shape") and a.shape and a.shape[0] > ROWS else a for a in data)


def prepare(filters=()):
    """Build every measured case's data once (this interpreter) and save it, cut to ``ROWS`` rows
    (only the cases whose name contains a filter, when given)."""
    (AB_DIR / "data").mkdir(parents=True, exist_ok=True)
    for key, (case, _, reason) in cases().items():
        path = AB_DIR / "data" / f"{key}.pkl"
        if reason or path.exists() or (filters and not any(f in case.name for f in filters)):
            continue
        data = case.setup()
        rows = data[0].shape[0] if hasattr(data[0], "shape") else None
        with open(path, "wb") as f:
            pickle.dump({"name": case.name, "rows": rows, "data": _first_rows(data)}, f)
        print(f"saved {key} {case.name}", file=sys.stderr, flush=True)


def _old_spellings():
    """In the old tree, wrap the estimators whose parameters issue 20/22 renamed or added."""
    import linbook
    from linbook import online
    if "max_iter" in inspect.signature(linbook.Perceptron).parameters:
        return                                              # the new tree: nothing to translate

    def translated(cls, renames):
        def make(**kw):
            if kw.get("tol", "absent") is None:             # "no stop rule": the old models' only behaviour
                del kw["tol"]
            return cls(**{renames.get(k, k): v for k, v in kw.items()})
        return make
    linbook.Perceptron = translated(linbook.Perceptron, {"max_iter": "max_epochs"})
    for name in ("SGDClassifier", "SGDRegressor", "LMS"):
        setattr(online, name, translated(getattr(online, name), {}))


def _collector():
    """``(on, off)``: callgrind client requests from a tiny C helper (compiled once, cached);
    ``off(key)`` also writes the counts collected since ``on()`` to a file naming ``key``."""
    lib = AB_DIR / "ab_callgrind_v2.so"
    if not lib.exists():
        src = AB_DIR / "ab_callgrind_v2.c"
        src.write_text(HELPER_C)
        subprocess.run(["cc", "-O1", "-shared", "-fPIC", "-o", str(lib), str(src)], check=True)
    helper = ctypes.CDLL(str(lib))
    return helper.ab_collect_on, lambda key: helper.ab_collect_off(key.encode())


def _load(key):
    with open(AB_DIR / "data" / f"{key}.pkl", "rb") as f:
        return pickle.load(f)


def child(mode, module, *keys):
    """Run inside one interpreter, on the cases ``keys`` of one bench module: per case a warm-up fit,
    then the measured fit(s). ``callgrind``: one instrumented fit per case, dumped under its key
    (one process for many cases: importing under valgrind costs more than most fits); ``cpu``:
    print the median user CPU seconds of ``REPS`` fits of the one case."""
    import warnings
    warnings.simplefilter("ignore")
    _old_spellings()
    known = cases([module])
    if mode == "callgrind":
        on, off = _collector()
    for key in keys:
        case, data = known[key][0], _load(key)["data"]
        for _ in range(next((n for s, n in WARMUPS.items() if s in case.name), 1)):
            case.linbook(data)                               # warm-up, as make bench does
        if mode == "callgrind":
            on()
            case.linbook(data)
            off(key)
            continue
        times = []
        for _ in range(REPS):
            before = resource.getrusage(resource.RUSAGE_SELF).ru_utime
            case.linbook(data)
            times.append(resource.getrusage(resource.RUSAGE_SELF).ru_utime - before)
        print(statistics.median(times))


def _child_env():
    env = dict(os.environ, **ENV, NUMBA_CACHE_DIR=str(AB_DIR / "numba-cache"))
    env.pop("OPENBLAS_L2_SIZE", None)
    return env


def _callgrind(python, module, keys, tag):
    """Start one callgrind child for ``keys`` of ``module``; returns (Popen, output file prefix)."""
    out = AB_DIR / "cg" / f"callgrind.out.{module}.{tag}"
    out.parent.mkdir(parents=True, exist_ok=True)
    for old_part in out.parent.glob(out.name + "*"):
        old_part.unlink()
    cmd = ["valgrind", "--tool=callgrind", "--instr-atstart=no", "--collect-atstart=no",
           f"--callgrind-out-file={out}", python, str(Path(__file__).resolve()), "child", "callgrind",
           module, *keys]
    return subprocess.Popen(cmd, cwd="/tmp", env=_child_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True), out


def _dumps(prefix):
    """``{key: (instructions, file)}`` from the dumps of one callgrind child (one per measured fit,
    each named by its ``desc: Trigger: Client Request: <key>`` line)."""
    found = {}
    for path in prefix.parent.glob(prefix.name + ".*"):
        text = path.read_text(errors="replace")
        trigger = next((ln for ln in text.splitlines() if ln.startswith("desc: Trigger:")), "")
        total = next((ln for ln in text.splitlines() if ln.startswith("totals:")), None)
        if "Client Request:" in trigger and total:
            found[trigger.split("Client Request:")[1].strip()] = (int(total.split()[1]), path.name)
    return found


def instructions(old, new, module, keys):
    """Instructions of each case's fit, old and new (two callgrind children side by side: the
    counts do not depend on the load); ``{key: {"ir_old": .., "ir_new": .., ...}}``."""
    children = {tag: _callgrind(py, module, keys, tag) for tag, py in (("old", old), ("new", new))}
    counts = {}
    for tag, (proc, prefix) in children.items():
        err = proc.communicate()[1]
        if proc.returncode:
            print(f"{module} {tag}: callgrind child failed:\n{err[-1500:]}", file=sys.stderr)
        counts[tag] = _dumps(prefix)
    return {k: {"ir_old": counts["old"][k][0], "ir_new": counts["new"][k][0],
                "cg_old": counts["old"][k][1], "cg_new": counts["new"][k][1]}
            for k in keys if k in counts["old"] and k in counts["new"]}


def _cpu(python, key, module):
    out = subprocess.run([python, str(Path(__file__).resolve()), "child", "cpu", module, key], check=False,
                         cwd="/tmp", env=_child_env(), capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return float(out.stdout.split()[-1])


def cpu_time(old, new, key, module):
    """``PAIRS`` alternating old/new processes: medians of user CPU time and of the paired ratios."""
    old_cpu, new_cpu, ratios = [], [], []
    for k in range(PAIRS):
        order = ((old, old_cpu), (new, new_cpu)) if k % 2 == 0 else ((new, new_cpu), (old, old_cpu))
        for python, acc in order:
            acc.append(_cpu(python, key, module))
        ratios.append(new_cpu[-1] / old_cpu[-1])
    return {"cpu_old": statistics.median(old_cpu), "cpu_new": statistics.median(new_cpu),
            "cpu_ratio": statistics.median(ratios), "load": os.getloadavg()[0]}


def _row(case, meta, res):
    kept = f"{min(ROWS, meta['rows']):,} of {meta['rows']:,}" if meta["rows"] else "all"
    cpu = (f"{res['cpu_old'] * 1e3:.1f} | {res['cpu_new'] * 1e3:.1f} | {res['cpu_ratio']:.3f} | {res['load']:.1f}"
           if "cpu_ratio" in res else "- | - | - | -")
    return (f"| {case.name} | {kept} | {res['ir_old'] / 1e6:,.1f} | {res['ir_new'] / 1e6:,.1f} | "
            f"{res['ir_new'] / res['ir_old']:.3f} | {cpu} |")


def run(old, new, filters, phases=("instructions", "cpu")):
    """Measure every comparable case (or those whose name contains a filter, in the filters' order):
    instructions first (one callgrind child per bench module and tree), then CPU time; print a
    markdown table. Results accumulate in ``$AB_DIR/results.json`` (a rerun measures only what is
    missing)."""
    results_path = AB_DIR / "results.json"
    results = json.loads(results_path.read_text()) if results_path.exists() else {}
    selected = cases()
    if filters:
        selected = {k: v for f in filters for k, v in selected.items() if f in v[0].name}
    todo = {k: v for k, v in selected.items() if not v[2]}
    if "instructions" in phases:
        modules = dict.fromkeys(module for _, module, _ in todo.values())
        for module in modules:
            keys = [k for k, v in todo.items() if v[1] == module and "ir_old" not in results.get(k, {})]
            for key, res in instructions(old, new, module, keys).items():
                results.setdefault(key, {}).update(res)
            results_path.write_text(json.dumps(results, indent=1))
    if "cpu" in phases:
        for key, (case, module, _) in todo.items():
            if "ir_old" in results.get(key, {}) and "cpu_ratio" not in results[key]:
                try:
                    results[key].update(cpu_time(old, new, key, module))
                except RuntimeError as error:
                    print(f"{case.name}: CPU run failed: {error}", file=sys.stderr)
                results_path.write_text(json.dumps(results, indent=1))
    print("| case | rows kept | Minstr old | Minstr new | instr new/old | CPU ms old | CPU ms new | "
          "CPU new/old (median of paired) | load |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key, (case, _, reason) in todo.items():
        if key in results and "ir_old" in results[key]:
            print(_row(case, _load(key), results[key]))
    print("\nNot measured:")
    for key, (case, _, reason) in selected.items():
        if reason or "ir_old" not in results.get(key, {}):
            print(f"- {case.name}: {reason or 'not measured in this run (time)'}")


if __name__ == "__main__":
    command, args = sys.argv[1], sys.argv[2:]
    if command == "prepare":
        prepare(args)
    elif command == "run":
        run(args[0], args[1], args[2:], phases=os.environ.get("AB_PHASES", "instructions,cpu").split(","))
    elif command == "child":
        child(*args)
    else:
        raise SystemExit(__doc__)
