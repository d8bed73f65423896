"""Small compiled helpers behind linbook's readable models (numba loops, blocked products).

Each kernel is private, compiled lazily on first use (``numba.njit(cache=True)``; nothing
is compiled when ``import linbook`` runs) and tested equal to the readable reference
it speeds up. Import a kernel module inside the function that needs it.
"""
