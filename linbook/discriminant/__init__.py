"""Generative classifiers with Gaussian class-conditional densities, and Fisher's LDA.

All classifiers model ``p(x, y = c) = pi_c N(x | mu_c, Sigma_c)`` and fit it by maximum
likelihood (eqs. (4.52)-(4.53) of note ``003``; MLAPP §4.2); they differ in the covariance:

============================  =====================================================
``QDA``                        one full covariance per class (MLE, ``1/N_c``)
``LDA``                        one shared full covariance (pooled MLE, ``1/N``)
``RDA(shrinkage)``             shared ``shrinkage diag(S) + (1 - shrinkage) S``, S the pooled MLE
``DiagonalLDA``                shared diagonal, pooled variances with ``1/(N - C)``
``GaussianNaiveBayes``         one diagonal per class (MLE + ``var_smoothing``)
``NearestShrunkenCentroids``   DiagonalLDA with soft-thresholded class centroids
============================  =====================================================

Priors ``pi_c`` are the class frequencies ``N_c / N`` unless ``priors`` is given; every
classifier takes ``sample_weight`` in ``fit`` (integer weights equal repeated rows).
``predict_proba`` accepts NaN entries in ``X``: a missing feature is marginalised out
(eqs. (8.94)-(8.97) of note ``000``); the three diagonal models accept NaN in ``fit`` too.
Posteriors do not change when every feature is multiplied by a constant (1e-12 ... 1e300):
the fit works on features standardised by powers of two (``base``).

``log_likelihood(X, y)`` is the *joint* log-likelihood ``sum_i log p(x_i, y_i)`` that
these models maximise (a generative model's likelihood); ``conditional_log_likelihood``
is ``sum_i log p(y_i | x_i)``, the quantity logistic regression maximises;
``predict_joint_log_proba(X)`` gives ``log p(x, y = c)`` row by row.

Modules: ``base`` (shared plumbing), ``qda``, ``lda`` (LDA, RDA), ``naive_bayes``
(DiagonalLDA, GaussianNaiveBayes), ``shrunken`` (NearestShrunkenCentroids), ``fisher``
(FisherLDA). Fast passes over the data live in ``linbook._kernels.scatter`` and
``linbook._kernels.mahalanobis``.

Derived in: chapter "Gaussian models and GDA" § "Gaussian discriminant analysis".
"""

from .fisher import FisherLDA
from .lda import LDA, RDA
from .naive_bayes import DiagonalLDA, GaussianNaiveBayes
from .qda import QDA
from .shrunken import NearestShrunkenCentroids

__all__ = ["QDA", "LDA", "RDA", "DiagonalLDA", "GaussianNaiveBayes", "NearestShrunkenCentroids",
           "FisherLDA"]
