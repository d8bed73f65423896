"""Self-checks of chapter 7's exercises: the reference passes, plausible wrong answers fail."""

import numpy as np

import linbook
import linbook.exercises as ex


def _ref_log_evidence(E, grad, hess, x0):
    return linbook.laplace_approximation(E, grad, hess, x0).log_evidence


def test_log_evidence_reference_passes_and_wrong_answers_fail():
    assert ex.check("laplace.log-evidence", _ref_log_evidence, verbose=False)
    # forgets the 1/2 on log|H|
    def no_half(E, grad, hess, x0):
        r = linbook.laplace_approximation(E, grad, hess, x0)
        return -r.energy + 0.5 * r.mode.size * np.log(2 * np.pi) - r.log_det_precision
    assert not ex.check("laplace.log-evidence", no_half, verbose=False)
    # evaluates at the starting point instead of the mode
    def no_mode(E, grad, hess, x0):
        z = np.atleast_1d(np.asarray(x0, float))
        return -E(z) + 0.5 * z.size * np.log(2 * np.pi) - 0.5 * np.linalg.slogdet(np.atleast_2d(hess(z)))[1]
    assert not ex.check("laplace.log-evidence", no_mode, verbose=False)


def test_moderated_output_reference_passes_and_note_kappa_fails():
    assert ex.check("laplace.moderated-output", linbook.moderated_sigmoid, verbose=False)
    note002 = lambda mu, var: linbook.sigmoid(mu * ((1 + np.pi * np.asarray(var)) / 8) ** -0.5)
    assert not ex.check("laplace.moderated-output", note002, verbose=False)
    naive = lambda mu, var: 1 / (1 + np.exp(-np.asarray(mu) / np.sqrt(1 + np.pi * np.asarray(var) / 8)))
    with np.errstate(over="ignore"):
        res = ex.check("laplace.moderated-output", naive, verbose=False)
    assert res.properties[0].passed and res.properties[1].passed


def test_loo_predictive_reference_passes_and_wrong_answers_fail():
    ref = lambda lik: np.exp(np.log(len(lik)) - linbook.logsumexp(-np.log(lik), axis=0))
    assert ex.check("laplace.loo-predictive", ref, verbose=False)
    assert not ex.check("laplace.loo-predictive", lambda lik: np.mean(lik, axis=0), verbose=False)
    with np.errstate(over="ignore", divide="ignore"):
        res = ex.check("laplace.loo-predictive", lambda lik: 1 / np.mean(1 / lik, axis=0), verbose=False)
    assert res.properties[0].passed and not res.passed
