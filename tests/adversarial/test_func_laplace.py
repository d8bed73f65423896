"""Adversarial cases for ``laplace_approximation`` (and the Newton steps under it) against closed forms.

The energy of a Gamma(k, theta) density, ``E(z) = -(k - 1) log z + z / theta``, has its mode at ``(k - 1) theta``
and the Laplace precision ``(k - 1) / mode^2`` there: the right answer in closed form, at every scale of
``theta``. Two defects gave silent or wrong results (session 27's function fuzz):

* at the exact mode the gradient is 0, Newton's step is 0, and ``g'd < 0`` fails: the direction solver took that
  for "not positive definite" and grew a ridge, so the polishing step that lands on the mode was refused and the
  mode came back ~1e-9 (relative) off, the stopping test's distance, instead of ~1e-16;
* a start where the first trial step leaves the density's support (E = inf) marked the whole Newton run as
  "non-finite": when the line search later stalled at E's rounding next to the mode (E ~ -1.3e7 for k = 1e6,
  its decrease 1e-12 below an ulp), the run was reported as an overflow and ``laplace_approximation`` refused
  with "the gradient or Hessian is not finite ... scale the variables".
"""

from __future__ import annotations

import numpy as np
import pytest

import linbook
from linbook.optim import newton

#: The test energies return inf outside the support, from 1 / 0 in numpy floats.
pytestmark = pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning")


def _gamma_energy(k, theta):
    a = np.float64(k - 1.0)       # numpy floats: 1 / 0 is inf (refused by the search), not a ZeroDivisionError

    def energy(z):
        return -a * np.log(z) + z / theta if z > 0 else np.inf

    return energy, (lambda z: -a / z + 1.0 / theta), (lambda z: (a / z) / z)


@pytest.mark.parametrize("theta", [1e-150, 1e-8, 1.0, 1e8, 1e150], ids=lambda t: f"theta{t:g}")
@pytest.mark.parametrize("k", [1.5, 2.0, 10.0], ids=lambda k: f"k{k:g}")
@pytest.mark.parametrize("start", [0.01, 0.5, 3.0], ids=lambda s: f"x0_{s:g}mode")
def test_gamma_mode_to_rounding(k, theta, start):
    """The mode and log-evidence of the Laplace approximation to a Gamma density: the closed forms to ~1e-15."""
    mode = (k - 1.0) * theta
    E, g, h = _gamma_energy(k, theta)
    res = linbook.laplace_approximation(E, g, h, start * mode)
    assert res.mode.shape == (1,)
    assert res.mode[0] == pytest.approx(mode, rel=1e-14)
    log_z = -E(mode) + 0.5 * np.log(2 * np.pi) - 0.5 * np.log((k - 1.0) / mode ** 2)
    assert res.log_evidence == pytest.approx(log_z, rel=1e-13, abs=1e-13)


@pytest.mark.parametrize("k", [1e4, 1e6, 1e9], ids=lambda k: f"k{k:g}")
@pytest.mark.parametrize("start", [30.0, 100.0], ids=lambda s: f"x0_{s:g}mode")
def test_gamma_from_a_start_whose_first_step_leaves_the_support(k, start):
    """The first full Newton step from far right of the mode lands at z < 0 (E = inf, backtracked); the mode
    itself is flat to E's rounding. Right answer: the mode (k - 1) theta, not a refusal as overflow."""
    mode = k - 1.0
    E, g, h = _gamma_energy(k, 1.0)
    res = linbook.laplace_approximation(E, g, h, start * mode)
    assert res.mode[0] == pytest.approx(mode, rel=1e-12)
    assert res.precision[0, 0] == pytest.approx(1.0 / mode, rel=1e-10)


def test_newton_blames_a_stall_on_rounding_not_on_an_earlier_overflow():
    """newton's own message: a line search that fails at rounding level says so (and converges where the
    gradient is small), even though an earlier trial point of the run was outside the support."""
    k = 1e6
    E, g, h = _gamma_energy(k, 1.0)
    res = newton(lambda z: E(z[0]), np.array([100 * (k - 1.0)]), lambda z: np.array([g(z[0])]),
                 lambda z: np.array([[h(z[0])]]), gtol=1e-14, xtol=0.0, max_iter=200)
    assert "non-finite" not in res.message, res.message
    assert res.x[0] == pytest.approx(k - 1.0, rel=1e-9)
