"""Small fast helpers behind the readable models (blocked BLAS passes).

Each kernel computes exactly what a one-line numpy expression in the model's docstring
says (e.g. ``X.T @ diag(s) @ X``) and is tested equal to that expression on small data
(``tests/test_kernels_*.py``, ``tests/test_logistic.py``). Nothing here is compiled at
import time.
"""
