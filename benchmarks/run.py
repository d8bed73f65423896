"""Benchmark harness: linbook against scikit-learn / statsmodels, measured in one run.

Usage: python benchmarks/run.py [SUBSTRING ...]     (make bench; BENCH="irls lda")

Each ``benchmarks/bench_*.py`` defines ``CASES``, a list of :class:`Case`. For every
case the harness builds the data once (``setup``), times the linbook callable and the
reference callable alternately (best of ``repeat`` runs each, so both see the same
machine state), and prints one table of time ratios (linbook / reference) against the
case's target. ``compare`` (optional) returns a short quality note, e.g. the two final
log-losses, so a fast but wrong solver cannot pass. Exit status is 1 when a ratio
misses its target, so the table can gate a release (it is not part of ``make test``:
speed goals live here, not in timed unit tests).
"""

from __future__ import annotations

import gc
import importlib.util
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Optional

HERE = Path(__file__).resolve().parent


@dataclass
class Case:
    name: str
    setup: Callable[[], Any]
    linbook: Callable[[Any], Any]
    reference: Callable[[Any], Any]
    reference_name: str
    target: Optional[float] = None        # max allowed ratio linbook/reference (None: report only)
    compare: Optional[Callable[[Any, Any, Any], str]] = None   # (data, lin_result, ref_result) -> note
    repeat: int = 3
    notes: str = ""
    extra: dict = field(default_factory=dict)


def _load(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _time(fn, data):
    gc.collect()
    t = time.perf_counter()
    out = fn(data)
    return time.perf_counter() - t, out


def main(filters):
    sys.path.insert(0, str(HERE.parent))
    rows, failed = [], False
    for path in sorted(HERE.glob("bench_*.py")):
        for case in _load(path).CASES:
            if filters and not any(f in case.name for f in filters):
                continue
            data = case.setup()
            t_lin, t_ref, out_lin, out_ref = [], [], None, None
            for _ in range(case.repeat):
                t, out_lin = _time(case.linbook, data)
                t_lin.append(t)
                t, out_ref = _time(case.reference, data)
                t_ref.append(t)
            a, b = min(t_lin), min(t_ref)
            ratio = a / b
            ok = case.target is None or ratio <= case.target
            failed |= not ok
            note = case.compare(data, out_lin, out_ref) if case.compare else ""
            rows.append((case.name, f"{a:.3f}", f"{b:.3f}", case.reference_name, f"{ratio:.2f}",
                         "-" if case.target is None else f"<= {case.target:g}", "ok" if ok else "MISS", note))
            print(f"  measured {case.name}: ratio {ratio:.2f}", file=sys.stderr, flush=True)
            del data
    head = ("case", "linbook s", "ref s", "reference", "ratio", "target", "", "quality")
    widths = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
    fmt = " | ".join("{:<%d}" % w for w in widths)
    print(fmt.format(*head))
    print("-+-".join("-" * w for w in widths))
    for r in rows:
        print(fmt.format(*r))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
