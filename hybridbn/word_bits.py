"""Bit operations on ``uint64`` words for numba kernels (LLVM intrinsics, one instruction each on x86-64).

Shared by the compiled bit-set code: the counting kernels of ``scores.counts`` and
``scores.identification`` and the kernels of the cops-and-robbers engine (``constraints.cops``).
Imports nothing of the project, so every layer may use it.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic


@intrinsic
def popcount(typingctx, x):
    """Number of set bits of a uint64 (LLVM ``ctpop``)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return sig, codegen


@intrinsic
def trailing_zeros(typingctx, x):
    """Index of the lowest set bit of a non-zero uint64 (LLVM ``cttz``; 64 for zero)."""
    sig = types.uint64(types.uint64)

    def codegen(context, builder, signature, args):
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return sig, codegen
