"""hessian's numpy row scaling (small fits) equals the compiled loop it stands in for."""

import numpy as np
import pytest

from linbook._kernels._rows_nb import scale_rows_into
from linbook._kernels.hessian import _scale_rows_numpy


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("with_col", [False, True])
def test_numpy_scaling_equals_compiled(dtype, with_col):
    rng = np.random.default_rng(0)
    Xb, s = rng.standard_normal((50, 7)), rng.uniform(0.1, 2.0, 50)
    col = rng.uniform(0.5, 3.0, 7) if with_col else np.empty(0)
    a, b = np.empty((50, 7), dtype=dtype), np.empty((50, 7), dtype=dtype)
    scale_rows_into(Xb, s, col, a)
    _scale_rows_numpy(Xb, s, col, b)
    expected = Xb * s[:, None] * (col if with_col else 1.0)
    np.testing.assert_allclose(a, expected, rtol=1e-6 if dtype == np.float32 else 1e-15)
    np.testing.assert_allclose(b, expected, rtol=1e-6 if dtype == np.float32 else 1e-15)
