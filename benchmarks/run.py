"""Benchmark harness: linbook against scikit-learn / statsmodels, measured in one run.

Usage: python benchmarks/run.py [SUBSTRING ...]     (make bench; BENCH="irls lda")

Each ``benchmarks/bench_*.py`` defines ``CASES``, a list of :class:`Case`. For every
case the harness builds the data once (``setup``), times the linbook callable and the
reference callable alternately (``repeat`` >= 5 pairs, the order flipping each pair, so
both see the same machine state), and prints one table: the median times, the median of
the paired ratios (linbook / reference) against the case's target, and the peak extra
memory each allocates (tracemalloc, which numpy reports to; one untimed run each). ``compare`` (optional) returns a short quality note, e.g. the two final
log-losses, so a fast but wrong solver cannot pass. Exit status is 1 when a ratio
misses its target, so the table can gate a release (it is not part of ``make test``:
speed goals live here, not in timed unit tests).
"""

from __future__ import annotations

import gc
import importlib.util
import os
import statistics
import sys
import time
import tracemalloc
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

HERE = Path(__file__).resolve().parent


class FastestPeer:
    """A reference that is the fastest of several peer solvers on the case's data.

    The first call (the harness's untimed warm-up) times every candidate once, in turn, on the
    data and keeps the fastest; later calls run that one. ``name`` then says which won (and
    the one-run times of all, so a close call is visible).
    """

    def __init__(self, candidates):
        self.candidates = dict(candidates)
        self.chosen = None
        self.name = None

    def __call__(self, data):
        if self.chosen is None:
            times, results = {}, {}
            for label, fit in self.candidates.items():
                t = time.perf_counter()
                results[label] = fit(data)
                times[label] = time.perf_counter() - t
            self.chosen = min(times, key=times.get)
            others = ", ".join(f"{k} {v:.2f}s" for k, v in sorted(times.items(), key=lambda kv: kv[1]))
            self.name = f"fastest peer: {self.chosen} ({others})"
            return results[self.chosen]
        return self.candidates[self.chosen](data)


@dataclass
class Case:
    name: str
    setup: Callable[[], Any]
    linbook: Callable[[Any], Any]
    reference: Callable[[Any], Any]
    reference_name: str
    target: Optional[float] = None        # max allowed ratio linbook/reference (None: report only)
    compare: Optional[Callable[[Any, Any, Any], str]] = None   # (data, lin_result, ref_result) -> note
    repeat: int = 5
    kind: str = ""      # "default" (what users get) or "tuned"; else read from the name (see _kind)
    notes: str = ""
    extra: dict = field(default_factory=dict)


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _kind(case):
    """The case's kind, or the word "default" / "tuned" in its name (every case names one)."""
    if case.kind:
        return case.kind
    for word in ("tuned", "default"):
        if word in case.name:
            return word
    raise ValueError(f"benchmark case {case.name!r} must say whether it is a default or a tuned row")


def _time(fn, data):
    gc.collect()
    t = time.perf_counter()
    out = fn(data)
    return time.perf_counter() - t, out


def _peak_mib(fn, data):
    gc.collect()
    tracemalloc.start()
    try:
        fn(data)
        return tracemalloc.get_traced_memory()[1] / 2**20
    finally:
        tracemalloc.stop()


def _blas():
    try:
        from threadpoolctl import threadpool_info
        info = [i for i in threadpool_info() if i.get("user_api") == "blas"]
        return ", ".join(f"{i['internal_api']} {i.get('architecture', '?')} x{i['num_threads']}" for i in info)
    except Exception:  # noqa: BLE001 - the header line is informational
        return "unknown"


def _loadavg():
    """The 1-minute load average (runnable processes), e.g. "3.2"; "?" where the OS has none."""
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:
        return "?"


def main(filters):
    sys.path.insert(0, str(HERE.parent))
    import numpy  # noqa: F401  (load BLAS before reporting it)
    print(f"BLAS: {_blas()}; {os.cpu_count()} CPUs; load average at the start {_loadavg()}; times are medians "
          "of paired alternating runs", file=sys.stderr)
    rows, failed = [], False
    for path in sorted(HERE.glob("bench_*.py")):
        for case in _load(path).CASES:
            if filters and not any(f in case.name for f in filters):
                continue
            data = case.setup()
            t_lin, t_ref, out_lin, out_ref = [], [], None, None
            _time(case.linbook, data), _time(case.reference, data)      # warm-up (JIT, caches)
            # a reference that picks the fastest of several peer solvers names its choice after the warm-up
            reference_name = getattr(case.reference, "name", None) or case.reference_name
            for k in range(max(case.repeat, 5)):
                first, second = (case.linbook, case.reference) if k % 2 == 0 else (case.reference, case.linbook)
                t1, o1 = _time(first, data)
                t2, o2 = _time(second, data)
                (ta, out_lin), (tb, out_ref) = ((t1, o1), (t2, o2)) if k % 2 == 0 else ((t2, o2), (t1, o1))
                t_lin.append(ta)
                t_ref.append(tb)
            a, b = statistics.median(t_lin), statistics.median(t_ref)
            ratio = statistics.median(x / y for x, y in zip(t_lin, t_ref))
            ok = case.target is None or ratio <= case.target
            failed |= not ok
            note = case.compare(data, out_lin, out_ref) if case.compare else ""
            mem = f"{_peak_mib(case.linbook, data):.0f} / {_peak_mib(case.reference, data):.0f}"
            rows.append((case.name, _kind(case), f"{a:.3f}", f"{b:.3f}", reference_name, f"{ratio:.2f}",
                         "-" if case.target is None else f"<= {case.target:g}", "ok" if ok else "MISS",
                         _loadavg(), mem, note))
            print(f"  measured {case.name}: ratio {ratio:.2f}", file=sys.stderr, flush=True)
            del data
    head = ("case", "kind", "linbook s", "ref s", "reference", "ratio", "target", "", "load",
            "peak MiB lin / ref", "quality")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    fmt = " | ".join("{:<%d}" % w for w in widths)
    print(fmt.format(*head))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(fmt.format(*r))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
