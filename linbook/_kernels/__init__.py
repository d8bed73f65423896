"""Small fast helpers behind linbook's readable models (blocked BLAS passes, numba loops).

Each kernel is private, computes exactly what a one-line numpy expression in its module
docstring says, and is tested equal to that expression on small data. numba kernels are
compiled lazily on first use (``numba.njit(cache=True)``); nothing is compiled or even
imported when ``import linbook`` runs. Import a kernel module inside the function that
needs it.
"""
