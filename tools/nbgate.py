"""The gate where notebook outputs are stored: every numeric configuration prints the same.

A stored output is a promise that a reader's ``pytest --nbval chapters`` reproduces it on
whatever CPU their CI provider gives them. So ``make notebooks`` executes each chapter once
(the reference: this machine as it is) and then runs nbval on the candidate notebook under
every other numeric configuration this machine can emulate:

* each OpenBLAS kernel the CPU can run among SkylakeX, Haswell, Sandybridge and Prescott
  (``OPENBLAS_CORETYPE``; the BLAS kernel decides the order of every sum in a product),
* one BLAS thread and two,
* numba compiled for this CPU, for each kernel's CPU (``haswell``, ``sandybridge``...) and for
  a generic x86-64 / aarch64 CPU (``NUMBA_CPU_NAME``, each with its own cache directory): the
  compiled loops that reassociate sums (``fastmath``) change with the vector width and FMA,
* numpy's own SIMD paths (``NPY_DISABLE_CPU_FEATURES``): numpy picks at run time among
  vectorised ``exp``, ``log``, ``log1p``, ``expm1``, ``power``, ``tanh``... for the widest
  instruction set the CPU has, and these differ from the narrower paths in the last bit
  (on an AVX-512 machine, ``np.exp`` differs from the AVX2 / baseline result on about 5 % of
  inputs, ``log1p`` on 7 %). Each OpenBLAS kernel is paired with numpy's paths of the CPU
  generation it stands for, so the alternative configuration is a whole older CPU.

The number of cores is not a configuration: linbook's results are bit-identical whatever it is
(the row chunks depend on the rows only; ``tests/test_core_count.py`` fakes 1, 3 and 16 cores).

The comparison is nbval itself - the sanitizers of ``tests/nbval_sanitize.cfg`` and the
figure tolerance of ``chapters/conftest.py`` - so what passes here is exactly what passes
in ``make test`` and in a reader's CI. A cell that prints differently anywhere is an error
naming the notebook, the cell (its first source line), both configurations and both texts,
and the notebook is not written.

Usage::

    python tools/nbgate.py --list        # the configurations on this machine
    python tools/nbgate.py --alt-env     # the environment of make test's second nbval run
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: numba's cache for the generic CPU target lives apart from the host's, so neither
#: configuration ever loads code compiled for the other.
GENERIC_NUMBA_CACHE = ROOT / ".venv" / "numba-cache-generic"
#: OpenBLAS x86-64 kernels, widest SIMD first, with the CPU flags each one needs.
X86_KERNELS = [("SkylakeX", {"avx512f"}), ("Haswell", {"avx2", "fma"}),
               ("Sandybridge", {"avx"}), ("Prescott", {"sse3"})]
#: the LLVM CPU numba compiles for in each kernel's configuration (Prescott's SSE3 adds nothing
#: numba's loops use to the generic x86-64 target)
NUMBA_CPUS = {"SkylakeX": "skylake-avx512", "Haswell": "haswell", "Sandybridge": "sandybridge",
              "Prescott": "generic"}


@dataclass(frozen=True)
class Config:
    """One numeric configuration: a name a person reads and the environment that makes it."""

    name: str
    env: dict = field(default_factory=dict)

    def environ(self):
        env = dict(os.environ)
        for key, value in self.env.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env


def _cpu_flags():
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            # /proc/cpuinfo calls SSE3 "pni" (Prescott New Instructions)
            flags = set(line.split(":", 1)[1].split())
            return flags | ({"sse3"} if "pni" in flags else set())
    return set()


def native_kernel():
    """The OpenBLAS kernel numpy uses here (threadpoolctl's ``architecture``), or None."""
    from threadpoolctl import threadpool_info

    import numpy  # noqa: F401 - loads OpenBLAS so threadpoolctl sees it

    for info in threadpool_info():
        if info.get("internal_api") == "openblas":
            return info.get("architecture")
    return None


def _numpy_dispatch_above(level):
    """``NPY_DISABLE_CPU_FEATURES`` that makes numpy use its SIMD paths no wider than ``level``.

    ``level`` is ``"avx2"`` (a Haswell-class CPU: numpy's AVX-512 paths off) or ``"baseline"``
    (every path above numpy's compiled baseline off). The features are the ones numpy can dispatch
    to and finds on this CPU; numpy refuses to disable its baseline, so that is never listed.
    Returns None when nothing is to be disabled (numpy then runs as it is).
    """
    try:
        from numpy._core import _multiarray_umath as umath
    except ImportError:  # numpy 1.x
        from numpy.core import _multiarray_umath as umath
    found = [f for f in umath.__cpu_dispatch__
             if umath.__cpu_features__.get(f) and f not in umath.__cpu_baseline__]
    if level == "avx2":
        found = [f for f in found if "AVX512" in f or f == "X86_V4"]
    return ",".join(found) or None  # commas: make test passes the value through env(1) words


def _numba_for(cpu):
    """numba compiling for the LLVM CPU ``cpu`` (``"generic"``: any x86-64 / aarch64), with a cache of
    its own, so no configuration ever loads machine code compiled for another."""
    return {"NUMBA_CPU_NAME": cpu, "NUMBA_CPU_FEATURES": None,
            "NUMBA_CACHE_DIR": str(GENERIC_NUMBA_CACHE if cpu == "generic" else ROOT / ".venv" / f"numba-cache-{cpu}")}


def _generic_numba():
    return _numba_for("generic")


def _older_cpu(name, threads):
    """The configuration of a whole CPU of kernel ``name``'s generation: that OpenBLAS kernel,
    numpy's SIMD paths of that generation, numba compiling for it (fastmath loops change with
    the vector width and FMA), and ``threads`` BLAS threads."""
    env = {"OPENBLAS_CORETYPE": name, "OPENBLAS_NUM_THREADS": str(threads)}
    if threads == 1:
        env["OMP_NUM_THREADS"] = "1"
    numpy_off = None if name == "SkylakeX" else _numpy_dispatch_above("avx2" if name == "Haswell" else "baseline")
    if numpy_off:
        env["NPY_DISABLE_CPU_FEATURES"] = numpy_off
    cpu = NUMBA_CPUS[name]
    env.update(_numba_for(cpu))
    return Config(f"OpenBLAS {name}, {threads} thread{'s' * (threads > 1)}, numba {cpu}", env)


def configurations():
    """The reference first, then every other configuration this machine can run.

    Each dimension's values appear at least once: every runnable kernel other than the
    native one, each as a whole CPU of its generation (`_older_cpu`), alternating one thread and
    two; then the native kernel with one thread and generic numba. The narrowest kernel always
    gets one thread (and generic numba, numpy's baseline paths): that is `alternative()`.
    """
    configs = [Config("native")]
    if platform.machine() not in ("x86_64", "AMD64"):
        # aarch64 and others: vary what can vary, threads and the numba target
        configs.append(Config("1 thread, numba generic",
                              {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", **_generic_numba()}))
        configs.append(Config("2 threads", {"OPENBLAS_NUM_THREADS": "2"}))
        return configs
    flags, native = _cpu_flags(), (native_kernel() or "").lower()
    runnable = [name for name, need in X86_KERNELS if need <= flags and name.lower() != native]
    narrowest = runnable[-1] if runnable else None
    for i, name in enumerate(runnable):
        configs.append(_older_cpu(name, 1 if name == narrowest or i % 2 == 1 else 2))
    configs.append(Config("native, 1 thread, numba generic",
                          {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", **_generic_numba()}))
    return configs


def alternative():
    """The configuration of make test's second nbval run: the one farthest from the native
    one in SIMD width (the narrowest kernel, one thread, generic numba)."""
    return configurations()[1] if platform.machine() not in ("x86_64", "AMD64") else max(
        configurations()[1:], key=lambda c: ("OPENBLAS_CORETYPE" in c.env, _width_rank(c)))


def _width_rank(config):
    names = [name for name, _ in X86_KERNELS]
    kernel = config.env.get("OPENBLAS_CORETYPE")
    return names.index(kernel) if kernel in names else -1


@dataclass
class Difference:
    notebook: str
    cell: int
    first_line: str
    config: str
    stored: str
    obtained: str
    message: str

    def __str__(self):
        return (f"{self.notebook}: cell {self.cell} ({self.first_line!r}) prints differently under "
                f"[{self.config}] than under [native]:\n"
                f"  --- native (would be stored)\n{_indent(self.stored)}\n"
                f"  --- {self.config}\n{_indent(self.obtained)}"
                + (f"\n  ({self.message})" if self.message else ""))


def _indent(text, pad="    "):
    return "\n".join(pad + line for line in (text or "<no output>").splitlines()) or pad + "<no output>"


def check(candidate: Path, config: Config, label: str) -> list[Difference]:
    """nbval on ``candidate`` under ``config``: the cells whose outputs differ (or that fail)."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp, "report.json")
        env = config.environ()
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "tools"), env.get("PYTHONPATH")]))
        env["LINBOOK_NBGATE_REPORT"] = str(report)
        if "NUMBA_CACHE_DIR" in config.env:
            Path(config.env["NUMBA_CACHE_DIR"]).mkdir(parents=True, exist_ok=True)
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "nbgate_report", "--nbval", str(candidate)],
            cwd=ROOT, env=env, capture_output=True, text=True)
        found = json.loads(report.read_text()) if report.exists() else []
    differences = [Difference(label, d["cell"], d["first_line"], config.name, d["stored"],
                              d["obtained"], d["message"]) for d in found]
    if proc.returncode != 0 and not differences:
        tail = "\n".join((proc.stdout + proc.stderr).splitlines()[-30:])
        differences.append(Difference(label, -1, "(nbval did not run)", config.name, "", tail,
                                      f"pytest exit code {proc.returncode}"))
    return differences


def main(argv=None):
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="print the configurations")
    parser.add_argument("--alt-env", action="store_true",
                        help="print make test's second configuration as VAR=value words for env(1)")
    args = parser.parse_args(argv)
    if args.alt_env:
        alt = alternative()
        # env(1) takes its -u options before the assignments
        print(" ".join([f"-u {k}" for k, v in alt.env.items() if v is None]
                       + [f"{k}={v}" for k, v in alt.env.items() if v is not None]))
        return 0
    for config in configurations():
        print(f"{config.name:45s} {' '.join(f'{k}={v}' for k, v in config.env.items() if v is not None)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
