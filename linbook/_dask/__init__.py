"""linbook's estimators on Dask: each fit is a sum over rows, so a map-reduce over row blocks.

A model's fit needs the data only through sums over samples: a Newton step needs
``g = sum_b X_b'(mu_b - y_b)`` and ``H = sum_b X_b' S_b X_b``; least squares needs the Gram
matrix ``X'X`` and ``X'y``; a discriminant model needs class counts, means and scatter
matrices. Each sum is computed block by block, on the workers, by the *same* functions the
in-memory fit uses (its pass :func:`linbook._kernels.hessian.binary_pass`, equal to the chapter's
:func:`linbook.logistic.logistic_regression.logistic_loss`, for a block's ``(F, g, H)``), the blocks' terms are added in a tree on the workers, and only the total --
``O(D^2 x classes)`` numbers -- reaches the client, which takes the step
(:func:`linbook.optim.newton`, the one Newton driver, with its line search).

This subpackage holds what every model shares, :mod:`linbook._dask.blocks` (aligned row
blocks, one checking pass, tree sums on the workers, predict methods mapped over blocks); each
model's map-reduce lives beside the model, in its package's ``_dask_fit`` module
(``linbook.logistic._dask_fit``, ``linear``, ``discriminant``, ``online``), which ``fit`` imports
only when a dask collection is passed (``linbook.base.is_dask``): ``import linbook`` never
imports dask, and these modules never import a public model (what one needs from it, such as
``logistic_loss``, is passed in). It runs on the
active Dask scheduler: a ``distributed.Client`` when one exists.

Derived in: chapter "Optimizers" § "When the data do not fit: the Newton step as a map-reduce".
"""
