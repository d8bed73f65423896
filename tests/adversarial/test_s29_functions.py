"""Session 29: information sums of close distributions, against mpmath at 100 digits.

``KL(p || q) = sum_k p_k log(p_k / q_k)`` of two close distributions adds terms ~1e-9 of both signs into a KL
~1e-18; in double precision the sum returned their rounding, negative ones included (``kl_divergence`` of two
distributions 1e-10 apart: -1.1e-16 for a KL of 6e-19, 1e8 times off; ``mutual_information`` of a 2 x 2 table of
counts 1e6 +- 1: 4.9994e-13 for 5.0000e-13). Both now sum ``p log(p / q) - p + q = q phi(p / q - 1) >= 0``, with
``phi(u) = (1 + u) log1p(u) - u`` (its series for small ``u``), so nothing cancels; ``u`` comes from ``p - q`` (and,
for the mutual information, from the integer counts), not from a rounded ratio.
"""

from collections import Counter

import mpmath
import numpy as np
import pytest

import linbook


def _kl(p, q):
    """KL of ``p / sum(p)`` and ``q / sum(q)`` (the distributions the vectors stand for) in 100-digit arithmetic."""
    with mpmath.workdps(100):
        P, Q = [mpmath.mpf(float(v)) for v in p], [mpmath.mpf(float(v)) for v in q]
        sp, sq = mpmath.fsum(P), mpmath.fsum(Q)
        return float(mpmath.fsum([a / sp * mpmath.log((a / sp) / (b / sq)) for a, b in zip(P, Q) if a > 0]))


def _mi(x, y):
    with mpmath.workdps(100):
        n, cxy, cx, cy = len(x), Counter(zip(x.tolist(), y.tolist())), Counter(x.tolist()), Counter(y.tolist())
        return float(mpmath.fsum([mpmath.mpf(c) / n * mpmath.log(mpmath.mpf(c) * n / (cx[a] * cy[b]))
                                  for (a, b), c in cxy.items()]))


def _close_pair(seed, k, gap):
    rng = np.random.default_rng(seed)
    p = rng.dirichlet(np.ones(k))
    q = p * (1 + gap * rng.standard_normal(k))
    return p, q / q.sum()


CLOSE = [(seed, k, gap) for seed in range(4) for k in (2, 3, 7) for gap in (1e-12, 1e-9, 1e-6, 1e-3)]


@pytest.mark.parametrize("seed, k, gap", CLOSE)
def test_kl_divergence_of_close_distributions(seed, k, gap):
    p, q = _close_pair(seed, k, gap)
    got = linbook.kl_divergence(p, q)
    assert got >= 0.0
    assert got == pytest.approx(_kl(p, q), rel=1e-10, abs=1e-300)


@pytest.mark.parametrize("tiny", [1e-320, 1e-250, 1e-200])
@pytest.mark.parametrize("where", ["p", "q"])
def test_kl_divergence_with_a_tiny_probability(tiny, where):
    """A probability near the bottom of the doubles, in p (``u`` rounds to -1) or in q (``p / q`` overflows)."""
    p, q = np.array([0.2, 0.3, 0.5]), np.array([0.25, 0.35, 0.4])
    v = p if where == "p" else q
    v[0] = tiny
    v /= v.sum()
    assert linbook.kl_divergence(p, q) == pytest.approx(_kl(p, q), rel=1e-12)


@pytest.mark.parametrize("m", [10 ** 4, 10 ** 5, 10 ** 6])
@pytest.mark.parametrize("excess", [0, 1, 3])
def test_mutual_information_of_nearly_independent_counts(m, excess):
    """Counts ``m + e, m - e, m - e, m + e`` of a 2 x 2 table: MI ~ 2 (e / m)^2 / 4, 5e-13 at ``m = 1e6``."""
    c = [m + excess, m - excess, m - excess, m + excess]
    x, y = np.repeat([0, 0, 1, 1], c), np.repeat([0, 1, 0, 1], c)
    got = linbook.mutual_information(x, y)
    assert got == pytest.approx(_mi(x, y), rel=1e-12, abs=0.0 if excess else 1e-300)


@pytest.mark.parametrize("seed", range(6))
def test_mutual_information_of_random_tables(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.choice([50, 5000, 200000]))
    x = rng.integers(0, 4, n)
    y = (x + (rng.random(n) < 0.5) * rng.integers(0, 3, n)) % 3 if seed % 2 else rng.integers(0, 3, n)
    assert linbook.mutual_information(x, y) == pytest.approx(_mi(x, y), rel=1e-12)
