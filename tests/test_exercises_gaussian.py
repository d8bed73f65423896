import numpy as np

import linbook.exercises as ex


def test_reference_solutions_pass():
    def maha(X, mu, S):
        lam, U = np.linalg.eigh(S)
        return (((np.atleast_2d(X) - mu) @ U) ** 2 / lam).sum(1)

    def two(mu0, mu1, S, pi1):
        w = np.linalg.solve(S, mu1 - mu0)
        return w, 0.5 * (mu1 + mu0) - (mu1 - mu0) * np.log(pi1 / (1 - pi1)) / ((mu1 - mu0) @ w)

    soft = lambda d, lam: np.sign(d) * np.maximum(np.abs(d) - lam, 0)
    assert ex.check("gda.mahalanobis-eig", maha, verbose=False)
    assert ex.check("gda.two-class-lda", two, verbose=False)
    assert ex.check("gda.soft-threshold", soft, verbose=False)


def test_wrong_answers_fail():
    def maha_times(X, mu, S):                      # multiplies by the eigenvalues
        lam, U = np.linalg.eigh(S)
        return (((np.atleast_2d(X) - mu) @ U) ** 2 * lam).sum(1)

    def two_note_sign(mu0, mu1, S, pi1):           # the note's (4.49)
        w = np.linalg.solve(S, mu1 - mu0)
        return w, -0.5 * (mu1 + mu0) - (mu1 - mu0) * np.log(pi1 / (1 - pi1)) / ((mu1 - mu0) @ w)

    hard = lambda d, lam: np.where(np.abs(d) > lam, d, 0.0)   # hard thresholding
    assert not ex.check("gda.mahalanobis-eig", maha_times, verbose=False)
    assert not ex.check("gda.two-class-lda", two_note_sign, verbose=False)
    assert not ex.check("gda.soft-threshold", hard, verbose=False)
