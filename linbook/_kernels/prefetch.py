"""Software prefetch for the compiled loops that visit rows in a random order.

Shuffled SGD and the perceptron read one row of ``X`` at a random place in memory per
sample; the loop then waits for main memory (about 80 % of a sparse epoch here: the
same epoch in storage order runs 4x faster). ``prefetch_row`` asks the CPU to start
loading a row a couple of samples ahead (LLVM's ``llvm.prefetch``: a hint, with no effect
on any value computed), so the row is in cache when its turn comes. On the text-like
benchmark this makes a sparse SGD epoch 2.5x faster, with bit-identical results.
"""

from . import _cache_load  # noqa: F401  (imports numba: before it, see the module)
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

AHEAD = 2          # samples ahead; 1-8 measured equal on the benchmark, 2 leaves slack
#: Arrays smaller than this are not prefetched: their rows stay in the cache from one epoch to the next,
#: and leaving the prefetch out of such a loop saves its compile time (~0.1 s of a first fit with a cold
#: cache: the loops take it as a compile-time switch, ``worth_prefetching``).
PREFETCH_MIN_BYTES = 1 << 22


def worth_prefetching(X):
    """Whether a loop visiting the rows of ``X`` in random order should prefetch them."""
    return X.nbytes >= PREFETCH_MIN_BYTES


@intrinsic
def prefetch(typingctx, array, index):
    """Hint the CPU to load ``array[index]`` into cache (read, keep in all levels)."""
    sig = types.void(array, index)

    def codegen(context, builder, signature, args):
        array_type = signature.args[0]
        ary = context.make_array(array_type)(context, builder, args[0])
        ptr = cgutils.get_item_pointer(context, builder, array_type, ary, [args[1]], wraparound=False)
        byte_ptr = builder.bitcast(ptr, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [byte_ptr.type, i32, i32, i32]),
                                            "llvm.prefetch.p0")
        builder.call(fn, [byte_ptr, ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@njit(cache=True, inline="always")
def prefetch_csr_row(data, indices, indptr, i):
    """Prefetch every cache line of CSR row ``i`` (its values and its column indices)."""
    lo, hi = indptr[i], indptr[i + 1]
    if hi > lo:
        for q in range(lo, hi, 8):           # 8 float64 (or at least 8 indices) per 64-byte line
            prefetch(data, q)
            prefetch(indices, q)
        prefetch(data, hi - 1)               # the last line, when the row starts mid-line
        prefetch(indices, hi - 1)


@njit(cache=True, inline="always")
def prefetch_dense_row(X, i):
    """Prefetch every cache line of row ``i`` of a C-ordered 2-D array."""
    row = X[i]
    if row.shape[0] > 0:
        for q in range(0, row.shape[0], 8):
            prefetch(row, q)
        prefetch(row, row.shape[0] - 1)
